"""``iec45``, the Inner-Ensemble C4.5: J48's tree when its ensemble is J48, and its combined splits.

* With one sample that is the whole node (``n_estimators=1 max_samples=1.0
  bootstrap=false``), and with any number of such samples, the tree ``show`` prints is
  J48's byte for byte (c45's, which test_c45_weka.py compares with J48 itself; one file is
  compared with J48 here too).
* The split of the root is the one a plain-Python reading of the method picks from the
  same samples (SplitMix64 stream, J48's gain ratio on nominal attributes, the average and
  the vote), and a numeric threshold is the median of the samples' best thresholds, moved
  to a training value.
* scikit-learn's estimator checks, the errors of bad parameters.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from ensemblekit.classifiers.c45 import C45Tree
from ensemblekit.classifiers.iec45 import InnerEnsembleC45Tree
from ensemblekit.classifiers.iec45_model import InnerEnsembleC45Model

from ektesting.estimator_checks import parametrize_with_checks_per_class
from ektesting.support import data_path, load_coded, run_cli, weighted_copy
from ektesting.weka_tools import needs_weka, run_weka

FILES = ["colic", "credit-a", "diabetes", "heart-c", "soybean"]  # missing values, numeric, 19 classes
ONE_FULL_SAMPLE = ("--set", "n_estimators=1", "--set", "max_samples=1.0", "--set", "bootstrap=false")


def _shown_tree(tmp_path, algo, name, *args, data=None):
    """What ``show`` prints from the "J48 ... tree" heading on, for a model fitted by ``fit``."""
    path = tmp_path / f"{algo}-{name}.ekm"
    data = data or data_path(f"{name}.arff")
    fitted = run_cli("fit", algo, data, "-o", path, "--seed", "3", *args)
    assert fitted.exit_code == 0, fitted.output
    shown = run_cli("show", path)
    assert shown.exit_code == 0, shown.output
    return shown.stdout[shown.stdout.index("J48 "):]


@pytest.mark.parametrize("unpruned", ["false", "true"])
@pytest.mark.parametrize("name", FILES)
def test_one_full_sample_shows_j48s_tree_byte_for_byte(tmp_path, name, unpruned):
    # acceptance 1 of issue 34: the ensemble of one whole-node sample is J48
    want = _shown_tree(tmp_path, "c45", name, "--set", f"unpruned={unpruned}")
    got = _shown_tree(tmp_path, "iec45", name, *ONE_FULL_SAMPLE, "--set", f"unpruned={unpruned}")
    assert got == want
    assert ("J48 unpruned tree" if unpruned == "true" else "J48 pruned tree") in got


def test_a_weighted_file_is_fitted_with_its_instance_weights(tmp_path):
    # Weka's {w} weights reach the growth as J48's: one whole-node sample is J48 on them
    data = weighted_copy("labor", tmp_path)
    want = _shown_tree(tmp_path, "c45", "labor", data=data)
    assert want != _shown_tree(tmp_path, "c45", "labor")  # the weights change the tree
    assert _shown_tree(tmp_path, "iec45", "labor", *ONE_FULL_SAMPLE, data=data) == want


@pytest.mark.parametrize("combine", ["average", "vote"])
@pytest.mark.parametrize("name", ["colic", "diabetes"])
def test_many_whole_node_samples_still_grow_j48s_tree(name, combine):
    # without replacement at max_samples=1 every sample is the node itself: every sample's
    # measures are J48's, so both combinations choose J48's split (and its threshold)
    _, X, y, nominal, cats = load_coded(name)
    kw = dict(nominal_features=nominal, n_categories=cats)
    want = C45Tree(**kw).fit(X, y)
    got = InnerEnsembleC45Tree(n_estimators=7, max_samples=1.0, combine=combine,
                               random_state=0, **kw).fit(X, y)
    assert got.export_text() == want.export_text()
    for attr in ("feature_", "threshold_", "value_", "bag_value_"):
        assert getattr(got, attr).tobytes() == getattr(want, attr).tobytes()


@needs_weka
def test_one_full_sample_prints_j48s_own_text():
    # against Weka's J48 itself on one file with missing values and numeric attributes
    path = data_path("colic.arff")
    out = run_weka("weka.classifiers.trees.J48", "-t", str(path), "-no-cv")
    want = out.split("------------------\n", 1)[1].split("\n\nNumber of Leaves", 1)[0].strip("\n")
    ds, X, y, nominal, cats = load_coded("colic")
    feats = ds.schema.features
    classes = list(ds.schema.class_attribute.values)
    tree = InnerEnsembleC45Tree(n_estimators=1, max_samples=1.0, nominal_features=nominal,
                                n_categories=cats, n_classes=len(classes)).fit(X, y)
    got = tree.export_text([a.name for a in feats], classes,
                           {j: list(feats[j].values) for j in nominal})
    assert got == want
    assert tree.n_leaves_ == int(re.search(r"Number of Leaves\s*:\s*(\d+)", out).group(1))


# ---- a plain-Python reading of the split decision at the root, from the same samples
MASK = (1 << 64) - 1


class Stream:
    """The SplitMix64 stream of the compiled kernel, seeded as ``random_state`` seeds it."""

    def __init__(self, random_state):
        self.state = int(np.random.RandomState(random_state).randint(
            np.iinfo(np.int64).max, dtype=np.int64))

    def below(self, m):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z ^= z >> 31
        return min(int(float(z >> 11) * (1.0 / 9007199254740992.0) * m), m - 1)


def samples(random_state, n, n_estimators, max_samples, bootstrap):
    """Times each of the root's ``n`` rows is drawn, per sample."""
    stream = Stream(random_state)
    size = max(2, math.floor(max_samples * n + 0.5))
    size = size if bootstrap else min(size, n)
    out = []
    for _ in range(n_estimators):
        times = np.zeros(n, dtype=int)
        if bootstrap:
            for _ in range(size):
                times[stream.below(n)] += 1
        else:
            perm = list(range(n))
            for s in range(size):
                j = s + stream.below(n - s)
                perm[s], perm[j] = perm[j], perm[s]
                times[perm[s]] = 1
        out.append(times)
    return out


def _xlnx(x):
    return 0.0 if x < 1e-6 else x * math.log(x)


def nominal_measures(X, y, w, n_cats, n_classes, min_obj=2.0):
    """J48's (valid, gain, gain ratio) of each nominal attribute; no missing values."""
    total = w.sum()
    per_class = np.bincount(y, weights=w, minlength=n_classes)
    if 2 * min_obj - total > 1e-6 or abs(total - per_class.max()) < 1e-6:
        return None
    old = (_xlnx(total) - sum(_xlnx(v) for v in per_class)) / math.log(2)
    out = []
    for j, k in enumerate(n_cats):
        bags = np.zeros((k, n_classes))
        np.add.at(bags, (X[:, j].astype(int), y), w)
        per_bag = bags.sum(axis=1)
        valid = int(np.sum(min_obj - per_bag < 1e-6)) > 1
        new = -sum(sum(_xlnx(v) for v in row) - _xlnx(b) for row, b in zip(bags, per_bag)) \
            / math.log(2)
        gain = (old - new) / total
        info = (_xlnx(total) - sum(_xlnx(b) for b in per_bag)) / math.log(2)
        out.append((valid, gain, gain / (info / total) if abs(info) >= 1e-6 else 0.0))
    return out


def j48_pick(measures, allowed):
    valid = [m for m, a in zip(measures, allowed) if m[0]]
    if not valid:
        return -1
    avg = sum(m[1] for m in valid) / len(valid)
    best, best_ratio = -1, 0.0
    for j, (ok, gain, ratio) in enumerate(measures):
        if allowed[j] and ok and gain >= avg - 1e-3 and ratio - best_ratio > 1e-6:
            best, best_ratio = j, ratio
    return best


def reference_root(X, y, n_cats, n_classes, n_estimators, max_samples, bootstrap, combine,
                   random_state):
    full = nominal_measures(X, y, np.ones(len(y)), n_cats, n_classes)
    allowed = [m[0] for m in full]
    d = len(n_cats)
    score, votes, no_split = np.zeros(d), np.zeros(d, dtype=int), 0
    for times in samples(random_state, len(y), n_estimators, max_samples, bootstrap):
        keep = times > 0
        measures = nominal_measures(X[keep], y[keep], times[keep].astype(float), n_cats,
                                    n_classes)
        if measures is None or not any(m[0] for m in measures):
            no_split += 1
            continue
        avg = sum(m[1] for m in measures if m[0]) / sum(m[0] for m in measures)
        for j, (ok, gain, ratio) in enumerate(measures):
            if allowed[j] and ok and gain >= avg - 1e-3:
                score[j] += ratio
        best = j48_pick(measures, allowed)
        if best < 0:
            no_split += 1
        else:
            votes[best] += 1
    mean = score / n_estimators
    if combine == "average":
        best, top = -1, 0.0
        for j in range(d):
            if mean[j] - top > 1e-6:
                best, top = j, mean[j]
        return best
    order = sorted(range(d), key=lambda j: (-votes[j], -mean[j], j))
    best = order[0]
    return -1 if votes[best] == 0 or no_split > votes[best] else best


@pytest.fixture(scope="module")
def noisy_nominal():
    rng = np.random.RandomState(7)
    X = rng.randint(0, 3, size=(60, 4)).astype(float)
    signal = (X[:, 0] == 0) | (X[:, 1] == 2) | (X[:, 2] == 1)
    y = np.where(rng.rand(60) < 0.7, signal, rng.rand(60) < 0.5).astype(int)
    return X, y


@pytest.mark.parametrize("combine, bootstrap", [("average", False), ("average", True),
                                                ("vote", False), ("vote", True)])
def test_the_root_split_is_the_one_the_samples_choose(noisy_nominal, combine, bootstrap):
    X, y = noisy_nominal
    picked = []
    for seed in range(12):
        tree = InnerEnsembleC45Tree(n_estimators=5, max_samples=0.5, bootstrap=bootstrap,
                                    combine=combine, random_state=seed, unpruned=True,
                                    collapse_tree=False, nominal_features=[0, 1, 2, 3],
                                    n_categories=[3, 3, 3, 3]).fit(X, y)
        want = reference_root(X, y, [3, 3, 3, 3], 2, 5, 0.5, bootstrap, combine, seed)
        assert int(tree.feature_[0]) == want, seed
        picked.append(want)
    assert len(set(picked)) > 1  # the samples do change the decision on these data


def test_a_numeric_threshold_is_the_median_of_the_samples_moved_to_a_training_value():
    # x = 1..10 is class 0, 11..20 class 1: on a bootstrap sample the best cut is midway
    # between the largest drawn x of class 0 and the smallest drawn x of class 1
    x = np.arange(1.0, 21.0)
    X, y = x[:, None], (x > 10).astype(int)
    seen = set()
    for n_estimators in (4, 5):
        for seed in range(8):
            cuts = []
            for times in samples(seed, 20, n_estimators, 1.0, True):
                drawn = times > 0
                assert times[:10].sum() >= 2 and times[10:].sum() >= 2
                cuts.append((x[drawn & (y == 0)].max() + x[drawn & (y == 1)].min()) / 2)
            median = float(np.median(cuts))
            want = x[x <= median].max()
            tree = InnerEnsembleC45Tree(n_estimators=n_estimators, max_samples=1.0,
                                        bootstrap=True, random_state=seed, unpruned=True,
                                        collapse_tree=False).fit(X, y)
            assert tree.feature_[0] == 0 and tree.threshold_[0] == want, (n_estimators, seed)
            seen.add(want)
    assert len(seen) > 1


def test_the_same_seed_grows_the_same_tree_and_seeds_differ(noisy_nominal):
    X, y = noisy_nominal
    kw = dict(nominal_features=[0, 1, 2, 3], n_categories=[3, 3, 3, 3], unpruned=True,
              max_samples=0.5)
    texts = {InnerEnsembleC45Tree(random_state=s, **kw).fit(X, y).export_text() for s in range(6)}
    assert len(texts) > 1
    a = InnerEnsembleC45Tree(random_state=3, **kw).fit(X, y)
    b = InnerEnsembleC45Tree(random_state=np.random.RandomState(3), **kw).fit(X, y)
    assert a.export_text() == b.export_text()
    assert a.value_.tobytes() == b.value_.tobytes()


def test_the_model_class_fits_without_scikit_learn_and_equals_the_estimator(noisy_nominal):
    X, y = noisy_nominal
    kw = dict(nominal_features=[0, 1, 2, 3], n_categories=[3, 3, 3, 3], random_state=5,
              combine="vote", bootstrap=True)
    model = InnerEnsembleC45Model(n_classes=2, **kw).fit_coded(X, y)
    tree = InnerEnsembleC45Tree(**kw).fit(X, y)
    assert model.export_text() == tree.export_text()
    assert model.predict_proba(X).tobytes() == tree.predict_proba(X).tobytes()


@pytest.mark.parametrize("params, message", [
    ({"combine": "mean"}, "combine"),
    ({"n_estimators": 0}, "n_estimators"),
    ({"max_samples": 0.0}, "max_samples"),
    ({"max_samples": 1.5}, "max_samples"),
    ({"random_state": "seven"}, "random_state"),
])
def test_bad_parameters_are_refused_naming_them(noisy_nominal, params, message):
    X, y = noisy_nominal
    with pytest.raises(ValueError, match=message):
        InnerEnsembleC45Tree(**params).fit(X, y)


@parametrize_with_checks_per_class(
    [InnerEnsembleC45Tree(random_state=0)],
    variants=[InnerEnsembleC45Tree(random_state=0, combine="vote", bootstrap=True,
                                   unpruned=True, min_samples_leaf=1)])
def test_scikit_learn_contract(estimator, check):
    check(estimator)
