"""The compiled replay of J48's bookkeeping (issue 30): the recursion's very bits, at any depth.

:mod:`ensemblekit.classifiers._c45_weka_sums` replays J48's tree building, collapse and
pruning on the grown tree to give J48's doubles where instance weights are fractional.
It was plain recursive Python; compiled, it must add the same numbers in the same order,
so its results are compared bit for bit with that recursive form
(:mod:`ektesting.weka_sums_oracle`) on the very trees C4.5 grows. Without recursion it
also replays trees deeper than Python's recursion limit, where the fit used to crash.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from ensemblekit.classifiers import _c45_growth
from ensemblekit.classifiers._c45_weka_sums import weka_sums
from ensemblekit.classifiers.c45 import C45Tree

from ektesting.support import load_coded
from ektesting.weka_sums_oracle import oracle_weka_sums

_OPTIONS = ({}, {"unpruned": True}, {"subtree_raising": False}, {"collapse_tree": False},
            {"confidence_factor": 0.1}, {"min_samples_leaf": 5})


@pytest.fixture
def replays(monkeypatch):
    """The arguments of every replay the fits in a test ask for."""
    seen = []
    take = _c45_growth._take_weka_sums

    def spy(tree, X, y, w, nominal, n_cats, n_classes, grown, **options):
        grown = dict(zip(("feature", "threshold", "child_start", "n_children"), grown[:4]))
        seen.append(((X, y, w, nominal, n_cats, n_classes, grown), options))
        return take(tree, X, y, w, nominal, n_cats, n_classes,
                    tuple(grown[k] for k in ("feature", "threshold", "child_start",
                                             "n_children")), **options)

    monkeypatch.setattr(_c45_growth, "_take_weka_sums", spy)
    return seen


def _assert_same_bits(want, got):
    assert sorted(want) == sorted(got)
    for key in want:
        assert want[key].dtype == got[key].dtype, key
        assert want[key].shape == got[key].shape, key
        assert want[key].tobytes() == got[key].tobytes(), key


def _mixed_data(seed, n=300):
    """Numeric and nominal columns with missing values, three classes that depend on them."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.normal(size=n), rng.integers(0, 4, n), rng.normal(size=n).round(1),
                         rng.integers(0, 3, n)]).astype(float)
    y = ((X[:, 0] > 0).astype(int) + (X[:, 1] >= 2) + (rng.random(n) < 0.2)) % 3
    X[rng.random(X.shape) < 0.15] = np.nan
    return X, y, [1, 3], [4, 3]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["labor", "colic", "hepatitis"])
def test_the_compiled_replay_adds_what_the_recursion_adds(replays, name):
    _, X, y, nominal, n_cats = load_coded(name)
    k = int(y.max()) + 1
    w = np.random.default_rng(0).random(len(y)) + 0.5  # fractional weights as well
    for options in _OPTIONS:
        C45Tree(nominal_features=nominal, n_categories=n_cats, n_classes=k,
                **options).fit(X, y)
    C45Tree(nominal_features=nominal, n_categories=n_cats, n_classes=k).fit(
        X, y, sample_weight=w)
    assert len(replays) == len(_OPTIONS) + 1
    for args, options in replays:
        _assert_same_bits(oracle_weka_sums(*args, **options), weka_sums(*args, **options))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_compiled_replay_agrees_on_mixed_data_with_weights(replays, seed):
    X, y, nominal, n_cats = _mixed_data(seed)
    w = np.where(np.arange(len(y)) % 4 == 0, 0.25, 1.5)
    for options in _OPTIONS[:3]:
        C45Tree(nominal_features=nominal, n_categories=n_cats, n_classes=3,
                min_samples_leaf=1, **options).fit(X, y, sample_weight=w)
    subtrees = 0
    for args, options in replays:
        got = weka_sums(*args, **options)
        _assert_same_bits(oracle_weka_sums(*args, **options), got)
        subtrees += int(np.count_nonzero(got["feature"] >= 0))
    assert subtrees > 10  # the trees split: pruning and raising had work to do


def _chain(n, block=40, every=97):
    """One numeric column whose classes alternate in blocks: J48 peels one block off after
    another, a chain as deep as there are blocks; every ``every``-th value is missing."""
    X = np.arange(n, dtype=float)[:, None]
    X[::every] = np.nan
    return X, (np.arange(n) // block) % 2


@pytest.mark.slow
def test_a_tree_deeper_than_the_recursion_limit_is_replayed(replays):
    X, y = _chain(44_000)
    tree = C45Tree(nominal_features=[], n_classes=2, unpruned=True).fit(X, y)
    depth = int(np.count_nonzero(tree.feature_ >= 0))  # one test per level of the chain
    assert depth > sys.getrecursionlimit()
    # the fit keeps the replay's sums (it used to crash: numba turned the RecursionError
    # of the recursive replay into a SystemError)
    (args, options), = replays
    got = weka_sums(*args, **options)
    assert np.array_equal(got["feature"], tree.feature_)
    assert got["value"].tobytes() == np.asarray(tree.value_).tobytes()
    assert got["bag_value"].tobytes() == np.asarray(tree.bag_value_).tobytes()


@pytest.mark.slow
def test_a_deep_pruned_chain_agrees_with_the_recursion(replays):
    X, y = _chain(6_000)  # deep enough to prune with raising along a chain, still quick
    C45Tree(nominal_features=[], n_classes=2).fit(X, y)
    (args, options), = replays
    _assert_same_bits(oracle_weka_sums(*args, **options), weka_sums(*args, **options))
