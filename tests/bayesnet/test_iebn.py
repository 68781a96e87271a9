"""Tests of ``iebn``: K2 scored by the mean LOO over samples (bayesnet/inner.py).

(1) the sample-weighted closed-form LOO (``k2.loo_posteriors``/``loo_score``
with ``samples=``) equals a literal remove-the-instance-and-recount loop, with
and without duplicates, for both ``loo_duplicates``; the search with samples
equals a literal greedy K2 over that score; (2) one sample of every row is
exactly K2Classifier; (3) seeds: same seed, same model; the samples are drawn
once per fit; (4) scikit-learn's estimator checks; (5) the model is one
network. Plus parameter and sample validation.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from ensemblekit.bayesnet.classifier import K2Classifier
from ensemblekit.bayesnet.inner import (
    InnerEnsembleK2Classifier,
    draw_samples,
    sample_size,
)
from ensemblekit.bayesnet.k2 import k2_search, loo_posteriors, loo_score
from ensemblekit.data import load_dataset

from ektesting.bn_reference import literal_k2, random_data, ref_posterior
from ektesting.estimator_checks import parametrize_with_checks_per_class
from ektesting.support import data_path


# --------------------------------------------------------------------------
# literal references
# --------------------------------------------------------------------------
def _ref_sample_posteriors(X, y, parents, card_attr, C, alpha, sample, dup):
    """For every instance (copy) t of the sample: drop it (one / all copies), recount, score."""
    vals = np.column_stack([y, X])
    card = np.concatenate([[C], card_attr])
    out = np.empty((len(sample), C))
    for t, i in enumerate(sample):
        if dup == "one":
            rest = np.delete(sample, t)
        else:
            rest = sample[sample != i]
        out[t] = ref_posterior(vals[rest], card, parents, vals[i], alpha)
    return out


def _random_data(rng, n=30, card=(2, 3, 2, 3), C=3):
    return random_data(rng, n=n, card=card, C=C)


# nodes: 0 = class, 1..4 = columns 0..3
STRUCTURES = [
    [(), (), (), (), ()],
    [(), (0,), (0,), (0,), (0,)],
    [(), (0,), (0, 1), (1, 0), (3,)],  # attribute parents; node 4 off the class
    [(2,), (0,), (), (0, 2), (3, 0)],  # the class itself has a parent
]


def _samples(n, kind):
    rng = np.random.RandomState(11)
    if kind == "bootstrap":
        return [rng.randint(0, n, n) for _ in range(3)] + [
            np.array([4, 4, 4, 4, 7, 7, 1]),  # a row four times, another twice
            np.array([5]),  # one instance: LOO trains on nothing
            np.array([2, 2]),  # "all" leaves nothing either
        ]
    return [rng.permutation(n)[: n // 2] for _ in range(3)] + [np.arange(n)]


# --------------------------------------------------------------------------
# (1) closed form == literal loop, per sample and per instance copy
# --------------------------------------------------------------------------
@pytest.mark.parametrize("structure", STRUCTURES)
@pytest.mark.parametrize("kind", ["bootstrap", "no-replacement"])
@pytest.mark.parametrize("dup", ["one", "all"])
def test_sample_loo_equals_literal_loop(structure, kind, dup):
    rng = np.random.default_rng(5)
    X, y, card, C = _random_data(rng)
    samples = _samples(len(y), kind)
    alpha = 0.5
    fast = loo_posteriors(
        X, y, structure, card, C, alpha, samples=samples, loo_duplicates=dup
    )
    assert isinstance(fast, list) and len(fast) == len(samples)
    probs, accs = [], []
    for s, f in zip(samples, fast):
        slow = _ref_sample_posteriors(X, y, structure, card, C, alpha, s, dup)
        assert f.shape == (len(s), C)
        np.testing.assert_allclose(f, slow, rtol=0, atol=1e-12)
        probs.append(slow[np.arange(len(s)), y[s]].mean())
        accs.append(np.mean(np.argmax(slow, axis=1) == y[s]))
    got = loo_score(X, y, structure, card, C, samples=samples, loo_duplicates=dup)
    assert got == pytest.approx(np.mean(probs), abs=1e-12)
    got = loo_score(
        X,
        y,
        structure,
        card,
        C,
        score="loo-accuracy",
        samples=samples,
        loo_duplicates=dup,
    )
    assert got == pytest.approx(np.mean(accs), abs=1e-12)


def test_duplicate_rules_differ_and_coincide_without_duplicates():
    X, y, card, C = _random_data(np.random.default_rng(1))
    st = STRUCTURES[2]
    boot = [np.array([0, 0, 0, 3, 5, 5, 8, 9])]
    one = loo_score(X, y, st, card, C, samples=boot, loo_duplicates="one")
    all_ = loo_score(X, y, st, card, C, samples=boot, loo_duplicates="all")
    assert one != all_  # keeping the other copies helps the held-out row
    assert one > all_
    plain = [np.array([7, 2, 9, 0])]
    assert loo_score(
        X, y, st, card, C, samples=plain, loo_duplicates="one"
    ) == loo_score(X, y, st, card, C, samples=plain, loo_duplicates="all")


def test_sample_of_every_row_is_the_plain_score_bit_for_bit():
    X, y, card, C = _random_data(np.random.default_rng(2))
    perm = np.random.RandomState(0).permutation(len(y))
    for st in STRUCTURES:
        assert loo_score(X, y, st, card, C, samples=[perm]) == loo_score(
            X, y, st, card, C
        )
        np.testing.assert_array_equal(
            loo_posteriors(X, y, st, card, C, samples=[perm])[0],
            loo_posteriors(X, y, st, card, C)[perm],
        )


def _ref_k2(X, y, card, C, max_parents, scoring, samples, dup):
    """Literal greedy K2 over loo_score(samples=...) (strict improvement, first best wins)."""
    return literal_k2(X.shape[1], max_parents, lambda ps: loo_score(
        X, y, ps, card, C, score=scoring, samples=samples, loo_duplicates=dup))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("dup", ["one", "all"])
@pytest.mark.parametrize("scoring", ["loo-probability", "loo-accuracy"])
def test_search_with_samples_equals_literal_greedy(seed, dup, scoring):
    rng = np.random.default_rng(seed)
    X, y, card, C = _random_data(rng, n=60, card=(2, 3, 2, 3, 2))
    X[:, 4] = np.where(rng.random(60) < 0.7, (X[:, 1] + y) % 2, X[:, 4])
    samples = draw_samples(60, 4, 0.6, True, seed)
    got = k2_search(
        X, y, card, C, max_parents=3, score=scoring, samples=samples, loo_duplicates=dup
    )
    assert got == _ref_k2(X, y, card, C, 3, scoring, samples, dup)


def test_search_samples_none_is_one_sample_of_every_row():
    X, y, card, C = _random_data(np.random.default_rng(4), n=80)
    perm = np.random.RandomState(4).permutation(80)
    for mp in (2, 3):
        assert k2_search(X, y, card, C, max_parents=mp) == k2_search(
            X, y, card, C, max_parents=mp, samples=[perm]
        )


@pytest.mark.parametrize(
    "samples, match",
    [
        ([], "at least one sample"),
        ([np.array([], dtype=int)], "non-empty"),
        ([np.array([[0, 1]])], "1-D"),
        ([np.array([0.0, 1.0])], "integer row indices"),
        ([np.array([0, 30])], "outside 0..29"),
        ([np.array([-1])], "outside"),
        (np.arange(5), "sequence of 1-D arrays"),
    ],
)
def test_bad_samples(samples, match):
    X, y, card, C = _random_data(np.random.default_rng(0))
    with pytest.raises(ValueError, match=match):
        k2_search(X, y, card, C, samples=samples)


def test_bad_loo_duplicates():
    X, y, card, C = _random_data(np.random.default_rng(0))
    with pytest.raises(ValueError, match="loo_duplicates"):
        k2_search(X, y, card, C, loo_duplicates="some")
    with pytest.raises(ValueError, match="loo_duplicates"):
        loo_score(
            X, y, STRUCTURES[1], card, C, samples=[np.arange(3)], loo_duplicates=1
        )


# --------------------------------------------------------------------------
# (2) one sample of every row == K2Classifier, exactly
# --------------------------------------------------------------------------
def _load(name):
    d = load_dataset(data_path(f"{name}.arff"))
    feats = d.schema.features
    nominal = [j for j, a in enumerate(feats) if a.kind == "nominal"]
    n_cat = [len(feats[j].values) for j in nominal]
    y = np.where(d.y < 0, np.nan, d.y.astype(float))
    return d.X, y, nominal, n_cat


@pytest.mark.parametrize("name", ["tic-tac-toe", "vote", "diabetes", "labor"])
@pytest.mark.parametrize("max_parents", [2, 3])
@pytest.mark.parametrize("scoring", ["loo-probability", "loo-accuracy"])
def test_one_full_sample_is_k2(name, max_parents, scoring):
    X, y, nominal, n_cat = _load(name)
    common = {
        "max_parents": max_parents,
        "nominal_features": nominal,
        "n_categories": n_cat,
    }
    common["scoring"] = scoring
    k2 = K2Classifier(**common).fit(X, y)
    ie = InnerEnsembleK2Classifier(
        n_estimators=1, max_samples=1.0, bootstrap=False, random_state=3, **common
    ).fit(X, y)
    assert ie.parents_ == k2.parents_
    assert ie.sample_size_ == np.sum(~np.isnan(y))
    for a, b in zip(ie.cpts_, k2.cpts_):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ie.predict_proba(X), k2.predict_proba(X))
    np.testing.assert_array_equal(ie.modes_, k2.modes_)
    np.testing.assert_array_equal(ie.cardinalities_, k2.cardinalities_)


# --------------------------------------------------------------------------
# (3) seeds; samples drawn once per fit
# --------------------------------------------------------------------------
def test_sample_size_rule():
    assert sample_size(100, 0.5, False) == 50
    assert sample_size(5, 0.5, False) == 3  # 2.5 rounds half up
    assert sample_size(10, 0.05, False) == 2  # at least 2
    assert sample_size(1, 0.5, False) == 1  # capped at n without replacement
    assert sample_size(1, 0.5, True) == 2
    s = draw_samples(10, 3, 1.0, False, 0)
    assert len(s) == 3 and all(np.array_equal(np.sort(a), np.arange(10)) for a in s)
    b = draw_samples(10, 4, 0.7, True, 0)
    assert [a.size for a in b] == [7] * 4 and all(a.max() < 10 for a in b)


def _tic():
    X, y, nominal, n_cat = _load("tic-tac-toe")
    return X, y, {"nominal_features": nominal, "n_categories": n_cat}


@pytest.mark.parametrize("bootstrap", [False, True])
def test_same_seed_same_model(bootstrap):
    X, y, common = _tic()
    params = {"n_estimators": 4, "max_samples": 0.3, "bootstrap": bootstrap}
    params["max_parents"] = 3
    a = InnerEnsembleK2Classifier(random_state=7, **params, **common).fit(X, y)
    b = InnerEnsembleK2Classifier(random_state=7, **params, **common).fit(X, y)
    assert a.parents_ == b.parents_
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    # other seeds draw other samples, and here some of them another network
    nets = {
        tuple(
            InnerEnsembleK2Classifier(random_state=s, **params, **common)
            .fit(X, y)
            .parents_
        )
        for s in range(6)
    }
    assert len(nets) > 1


def test_samples_are_drawn_once_and_are_what_the_search_used():
    X, y, common = _tic()
    params = {"n_estimators": 5, "max_samples": 0.2, "bootstrap": True}
    params["loo_duplicates"] = "all"
    rs = np.random.RandomState(42)
    clf = InnerEnsembleK2Classifier(random_state=rs, max_parents=3, **params, **common)
    clf.fit(X, y)
    # the generator advanced by exactly one draw of E samples ...
    ref = np.random.RandomState(42)
    samples = draw_samples(len(y), 5, 0.2, True, ref)
    after, expected = rs.get_state(), ref.get_state()
    assert after[2] == expected[2]
    np.testing.assert_array_equal(after[1], expected[1])
    # ... and those samples are the ones every candidate was scored on
    codes = clf._codes(X)
    y_codes = y.astype(np.int64)
    assert clf.parents_ == k2_search(
        codes, y_codes, clf.cardinalities_, 2, max_parents=3,
        samples=samples, loo_duplicates="all",
    )  # fmt: skip
    assert clf.sample_size_ == samples[0].size


# --------------------------------------------------------------------------
# (4) scikit-learn API
# --------------------------------------------------------------------------
@parametrize_with_checks_per_class(
    [InnerEnsembleK2Classifier(n_estimators=3, random_state=0)],
    variants=[
        InnerEnsembleK2Classifier(
            n_estimators=2, bootstrap=True, loo_duplicates="all", random_state=0
        ),
    ],
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"n_estimators": 0}, "n_estimators"),
        ({"n_estimators": 2.0}, "n_estimators"),
        ({"n_estimators": True}, "n_estimators"),
        ({"max_samples": 0}, "max_samples"),
        ({"max_samples": 1.5}, "max_samples"),
        ({"max_samples": np.nan}, "max_samples"),
        ({"bootstrap": "yes"}, "bootstrap"),
        ({"loo_duplicates": "both"}, "loo_duplicates"),
        ({"max_parents": -1}, "max_parents"),
        ({"scoring": "bdeu"}, "scoring"),
    ],
)
def test_bad_parameters(params, match):
    X, y, common = _tic()
    with pytest.raises(ValueError, match=match):
        InnerEnsembleK2Classifier(**params, **common).fit(X[:20], y[:20])


# --------------------------------------------------------------------------
# (5) one network in the model
# --------------------------------------------------------------------------
def test_model_is_one_network():
    X, y, common = _tic()
    k2 = K2Classifier(max_parents=3, **common).fit(X, y)
    ie = InnerEnsembleK2Classifier(
        n_estimators=20, max_samples=0.5, random_state=0, max_parents=3, **common
    ).fit(X, y)

    def fitted(est):
        return {k for k in vars(est) if k.endswith("_") and not k.startswith("_")}

    assert fitted(ie) == fitted(k2) | {"sample_size_"}
    assert len(ie.parents_) == len(ie.cpts_) == X.shape[1] + 1
    card = [2, *ie.cardinalities_]
    for ps, t, r in zip(ie.parents_, ie.cpts_, card):
        assert t.shape == (int(np.prod([card[p] for p in ps])), r)
    # the model file does not grow with E
    assert len(pickle.dumps(ie)) < 1.5 * len(pickle.dumps(k2)) + 2000
