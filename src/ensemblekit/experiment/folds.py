"""Test folds of repeated (stratified) k-fold cross-validation, with numpy alone.

The folds are those of scikit-learn's ``RepeatedStratifiedKFold`` and
``RepeatedKFold`` (``n_splits=folds, n_repeats=repeats, random_state=seed``),
index for index: the comparisons made before this module existed keep their
folds, and ``compare`` need not import scikit-learn (and scipy through it,
about half a second of every run) to cut a plan (issue 30).

How scikit-learn draws them (read in ``sklearn/model_selection/_split.py``,
version 1.9: ``_RepeatedSplits.split``, ``StratifiedKFold._make_test_folds``,
``KFold._iter_test_indices`` and ``BaseCrossValidator.split``):

* one ``numpy.random.RandomState(seed)`` serves every repeat in turn; each
  repeat is a shuffled k-fold splitter drawing from it;
* stratified: the classes are numbered by their first appearance in ``y``. The
  number of rows of class *c* that fold *f* tests is how often *c* occurs in
  every k-th element, from the f-th, of the class numbers sorted. Then, class
  by class in that numbering, the list of fold numbers (fold 0 repeated as
  often as it takes rows of the class, then fold 1, ...) is shuffled by the
  state and handed out to the class's rows in row order;
* plain: the row numbers ``0 .. n-1`` are shuffled by the state, and cut into
  consecutive folds, the first ``n % k`` one row longer;
* each fold's test rows are reported ascending.

What scikit-learn refuses is refused before these functions are called
(:func:`ensemblekit.experiment.protocol.plan`: fewer rows than folds, no class
with as many rows as folds); what it only warns of (a class with fewer rows
than folds) is a note of the plan.
"""

from __future__ import annotations

import numpy as np

__all__ = ["kfold_test_folds", "stratified_test_folds"]


def stratified_test_folds(y: np.ndarray, folds: int, repeats: int, seed: int) -> list[np.ndarray]:
    """Test rows of repeated stratified k-fold cross-validation, as scikit-learn draws them.

    Parameters
    ----------
    y : ndarray of shape (n,), int
        Class codes of the rows to split (every one known).
    folds : int
        k, >= 2 and at most the row count of the largest class.
    repeats : int
        Repeats, >= 1.
    seed : int
        Seed of the one ``numpy.random.RandomState`` every repeat draws from,
        in ``[0, 2**32)``.

    Returns
    -------
    list of ndarray of int64
        ``repeats * folds`` arrays, repeat by repeat, fold by fold: the
        positions in ``y`` of each fold's test rows, ascending. Equal to the
        test indices of ``RepeatedStratifiedKFold(n_splits=folds,
        n_repeats=repeats, random_state=seed).split(X, y)``.

    Raises
    ------
    ValueError
        A seed out of range (from numpy).
    """
    y = np.asarray(y)
    rng = np.random.RandomState(seed)
    _, first_row, codes = np.unique(y, return_index=True, return_inverse=True)
    # renumber the classes by where each first occurs
    rank = np.empty(first_row.size, dtype=np.intp)
    rank[np.argsort(first_row)] = np.arange(first_row.size)
    codes = rank[codes.ravel()]
    n_classes = first_row.size
    ordered = np.sort(codes)
    # per_fold[f, c]: rows of class c that fold f tests (the same in every repeat)
    per_fold = np.stack([np.bincount(ordered[f::folds], minlength=n_classes)
                         for f in range(folds)])
    members = [np.flatnonzero(codes == c) for c in range(n_classes)]
    out: list[np.ndarray] = []
    fold_of = np.empty(y.shape[0], dtype=np.intp)
    for _ in range(repeats):
        for c in range(n_classes):
            labels = np.arange(folds).repeat(per_fold[:, c])
            rng.shuffle(labels)
            fold_of[members[c]] = labels
        out.extend(np.flatnonzero(fold_of == f) for f in range(folds))
    return out


def kfold_test_folds(n: int, folds: int, repeats: int, seed: int) -> list[np.ndarray]:
    """Test rows of repeated shuffled k-fold cross-validation, as scikit-learn draws them.

    Parameters
    ----------
    n : int
        Rows to split, >= ``folds``.
    folds, repeats, seed : int
        As for :func:`stratified_test_folds` (k >= 2 here is the only bound on ``folds``).

    Returns
    -------
    list of ndarray of int64
        ``repeats * folds`` arrays of row positions, each ascending: the test
        indices of ``RepeatedKFold(n_splits=folds, n_repeats=repeats,
        random_state=seed).split(X)`` for ``n`` rows.

    Raises
    ------
    ValueError
        A seed out of range (from numpy).
    """
    rng = np.random.RandomState(seed)
    sizes = np.full(folds, n // folds)
    sizes[: n % folds] += 1
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    out: list[np.ndarray] = []
    for _ in range(repeats):
        order = np.arange(n)
        rng.shuffle(order)
        out.extend(np.sort(order[bounds[f]:bounds[f + 1]]) for f in range(folds))
    return out
