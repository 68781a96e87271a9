"""The numpy-only folds of cross-validation equal scikit-learn's, index for index (issue 30)."""

import subprocess
import sys
import warnings

import numpy as np
import pytest
from sklearn.model_selection import RepeatedKFold, RepeatedStratifiedKFold

from ensemblekit.experiment.folds import kfold_test_folds, stratified_test_folds


def _sklearn_stratified(y, folds, repeats, seed):
    splitter = RepeatedStratifiedKFold(n_splits=folds, n_repeats=repeats, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return [test for _, test in splitter.split(np.zeros((y.size, 1)), y)]


def _class_vectors():
    """Class vectors of many shapes: balanced, skewed, classes smaller than the folds,
    codes that skip values, classes first met out of code order."""
    rng = np.random.RandomState(0)
    yield np.repeat([0, 1], [50, 50])
    yield np.array([1, 0] * 7 + [2])                      # one row of class 2
    yield np.array([3, 3, 3, 0, 0, 7, 3, 3, 0, 3, 3, 7])  # codes skip values
    for n, k, skew in [(10, 2, 1.0), (37, 3, 0.3), (150, 3, 1.0), (205, 6, 0.2),
                       (898, 5, 0.05), (23, 7, 0.5), (61, 12, 0.1), (500, 2, 0.02)]:
        weights = skew ** np.arange(k)
        yield rng.choice(k, size=n, p=weights / weights.sum())


#: every class vector with every protocol that some class of it has rows enough for (the
#: others are refused by the plan, and by scikit-learn)
_CASES = [(y, folds, repeats, seed) for y in _class_vectors()
          for folds, repeats, seed in [(2, 1, 0), (3, 4, 1), (5, 2, 42), (10, 3, 7), (10, 10, 1),
                                       (4, 2, 2**32 - 1)]
          if np.bincount(y).max() >= folds]


@pytest.mark.parametrize("y, folds, repeats, seed", _CASES)
def test_stratified_folds_equal_scikit_learns(y, folds, repeats, seed):
    ours = stratified_test_folds(y, folds, repeats, seed)
    theirs = _sklearn_stratified(y, folds, repeats, seed)
    assert len(ours) == len(theirs) == folds * repeats
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)


def test_a_class_smaller_than_the_folds_is_the_case_scikit_learn_warns_of():
    y = np.array([0] * 30 + [1] * 3 + [2] * 12)
    splitter = RepeatedStratifiedKFold(n_splits=5, n_repeats=2, random_state=3)
    with pytest.warns(UserWarning, match="least populated class"):
        theirs = [test for _, test in splitter.split(np.zeros((45, 1)), y)]
    ours = stratified_test_folds(y, 5, 2, 3)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)
    # two folds of each repeat test no row of class 1
    assert sum(not np.any(y[t] == 1) for t in ours) == 4


@pytest.mark.parametrize("n, folds, repeats, seed", [(2, 2, 1, 0), (10, 3, 2, 1), (21, 4, 3, 11),
                                                     (100, 10, 10, 1), (57, 7, 2, 99)])
def test_plain_folds_equal_scikit_learns(n, folds, repeats, seed):
    splitter = RepeatedKFold(n_splits=folds, n_repeats=repeats, random_state=seed)
    theirs = [test for _, test in splitter.split(np.zeros((n, 1)))]
    ours = kfold_test_folds(n, folds, repeats, seed)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)


def test_folds_of_one_repeat_partition_the_rows():
    y = np.random.RandomState(5).randint(0, 4, size=333)
    for tests in (stratified_test_folds(y, 10, 1, 8), kfold_test_folds(333, 10, 1, 8)):
        np.testing.assert_array_equal(np.sort(np.concatenate(tests)), np.arange(333))
        assert all(np.all(np.diff(t) > 0) for t in tests)


def test_a_seed_out_of_range_is_refused_as_numpy_refuses_it():
    with pytest.raises(ValueError):
        stratified_test_folds(np.array([0, 1] * 5), 2, 1, 2**32)


def test_planning_a_comparison_imports_neither_scikit_learn_nor_scipy(tmp_path):
    data = tmp_path / "d.arff"
    data.write_text("@relation d\n@attribute a numeric\n@attribute c {x,y}\n@data\n"
                    + "".join(f"{i},{'xy'[i % 2]}\n" for i in range(20)))
    code = (
        "import sys\n"
        "from ensemblekit import experiment\n"
        "from ensemblekit.data import load_dataset\n"
        f"ds = load_dataset({str(data)!r})\n"
        "cands = experiment.expand_grid('c45', {}, {})\n"
        "experiment.plan([ds], cands, experiment.Protocol('cv', folds=5, repeats=2))\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'sklearn', 'scipy', 'joblib'}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
