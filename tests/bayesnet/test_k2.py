"""Tests of the global K2 search with the closed-form leave-one-out score."""

from __future__ import annotations

from pathlib import Path

import arff
import numpy as np
import pytest

from ensemblekit.bayesnet.k2 import (
    fit_cpts,
    k2_search,
    loo_posteriors,
    loo_score,
    predict_proba,
    random_node_order,
)

from ektesting.bn_reference import (
    held_out_rows,
    literal_k2,
    random_data,
    ref_posterior,
    refit_score,
    weka_rounded_score,
)
from ektesting.support import data_path
from ektesting.weka_tools import bayesnet_k2, needs_weka


# --------------------------------------------------------------------------
# slow, literal references (shared ones in bn_reference.py)
# --------------------------------------------------------------------------
def _ref_loo_posteriors(X, y, parents, card_attr, C, alpha):
    """Remove instance i, recount every table, score instance i: for every i."""
    vals = np.column_stack([y, X])
    card = np.concatenate([[C], card_attr])
    out = np.empty((len(y), C))
    for i in range(len(y)):
        train = np.delete(vals, i, axis=0)
        out[i] = ref_posterior(train, card, parents, vals[i], alpha)
    return out


# nodes: 0 = class, 1..5 = columns 0..4
STRUCTURES = [
    [(), (), (), (), (), ()],  # empty: posterior = LOO class prior
    [(), (0,), (0,), (0,), (0,), (0,)],  # naive Bayes
    [
        (),
        (0,),
        (0, 1),
        (1, 0),
        (0, 2, 3),
        (3,),
    ],  # attribute + class parents; node 5 off the class
    [
        (),
        (0,),
        (1,),
        (2, 1),
        (),
        (4, 0),
    ],  # chains not connected to the class, node 5 connected
    [(2,), (0,), (), (0, 2), (3,), (0, 4, 1)],  # the class itself has a parent
]


# --------------------------------------------------------------------------
# (1) closed form == literal remove-one-and-refit
# --------------------------------------------------------------------------
@pytest.mark.parametrize("structure", STRUCTURES)
@pytest.mark.parametrize("alpha", [0.5, 1.0])
def test_loo_posteriors_equal_refit_loop(structure, alpha):
    rng = np.random.default_rng(7)
    X, y, card, C = random_data(rng)
    fast = loo_posteriors(X, y, structure, card, C, alpha=alpha)
    slow = _ref_loo_posteriors(X, y, structure, card, C, alpha)
    assert fast.shape == (len(y), C)
    np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12)
    expected_prob = slow[np.arange(len(y)), y].mean()
    assert loo_score(X, y, structure, card, C, alpha=alpha) == pytest.approx(
        expected_prob, abs=1e-12
    )
    expected_acc = np.mean(np.argmax(slow, axis=1) == y)
    assert (
        loo_score(X, y, structure, card, C, score="loo-accuracy", alpha=alpha)
        == expected_acc
    )


def test_loo_posteriors_with_empty_cells_and_binary_class():
    # small n, many configurations: most cells are empty, some hold one instance
    rng = np.random.default_rng(3)
    X, y, card, C = random_data(rng, n=12, card=(3, 3, 4), C=2)
    structure = [(), (0,), (0, 1), (2, 0, 1)]
    np.testing.assert_allclose(
        loo_posteriors(X, y, structure, card, C),
        _ref_loo_posteriors(X, y, structure, card, C, 0.5),
        rtol=0,
        atol=1e-12,
    )


@pytest.mark.parametrize("structure", STRUCTURES)
def test_fit_cpts_and_predict_proba_equal_direct_counts(structure):
    rng = np.random.default_rng(11)
    X, y, card, C = random_data(rng, n=50)
    cpts = fit_cpts(X, y, structure, card, C, alpha=0.5)
    full_card = np.concatenate([[C], card])
    for v, ps in enumerate(structure):
        assert cpts[v].shape == (int(np.prod(full_card[list(ps)])), full_card[v])
        np.testing.assert_allclose(cpts[v].sum(axis=1), 1.0)
    Xt, _, _, _ = random_data(np.random.default_rng(12), n=15)
    proba = predict_proba(Xt, structure, cpts, card, C)
    vals = np.column_stack([y, X])
    for i in range(len(Xt)):
        ref = ref_posterior(
            vals, full_card, structure, np.concatenate([[0], Xt[i]]), 0.5
        )
        np.testing.assert_allclose(proba[i], ref, rtol=0, atol=1e-12)


def test_cpt_layout_first_parent_most_significant():
    # node 2 (column 1) with parents (class, node 1): row = y * r_1 + x_1
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0], [1, 1]])
    y = np.array([0, 0, 1, 1, 1])
    card = np.array([2, 2])
    cpts = fit_cpts(X, y, [(), (0,), (0, 1)], card, 2, alpha=0.5)
    # y=1, x1=1 -> row 3: x2 values {1, 1} -> (2 + .5) / (2 + 1)
    assert cpts[2][3, 1] == pytest.approx(2.5 / 3)
    # y=0, x1=1 -> row 1: x2 value {0} -> (1 + .5) / (1 + 1)
    assert cpts[2][1, 0] == pytest.approx(1.5 / 2)


# --------------------------------------------------------------------------
# (2) a hand-worked example
# --------------------------------------------------------------------------
def test_hand_computed_naive_bayes_loo_score():
    # Six instances, one binary attribute, naive Bayes, a = 0.5:
    #   y = 0 0 0 1 1 1
    #   x = 0 0 1 1 1 0
    # Full counts: N(y=0) = N(y=1) = 3; given y=0: x=0 twice, x=1 once;
    # given y=1: x=0 once, x=1 twice.
    #
    # Instance (y=0, x=0) left out (instances 0 and 1):
    #   P(y=0) = (2 + .5) / (5 + 1) = 2.5/6      P(y=1) = 3.5/6
    #   P(x=0 | y=0) = (1 + .5) / (2 + 1) = 1/2   P(x=0 | y=1) = (1 + .5) / (3 + 1) = 3/8
    #   joint: 2.5/6 * 1/2 = 1.25/6  vs  3.5/6 * 3/8 = 1.3125/6
    #   P(true y=0 | x) = 1.25 / 2.5625 = 20/41   (arg-max: y=1, wrong)
    # Instance (y=0, x=1) left out (instance 2):
    #   P(x=1 | y=0) = (0 + .5) / (2 + 1) = 1/6   P(x=1 | y=1) = (2 + .5) / 4 = 5/8
    #   joint: 2.5/6 * 1/6 = 2.5/36  vs  3.5/6 * 5/8 = 13.125/36
    #   P(true y=0 | x) = 2.5 / 15.625 = 4/25    (wrong)
    # Instances 3, 4 and 5 mirror 0, 1 and 2 (swap both codes): 20/41, 20/41, 4/25.
    # LOO probability score = (4 * 20/41 + 2 * 4/25) / 6 = 388/1025 = 0.378536...
    # LOO accuracy = 0 (every left-out instance is misclassified).
    X = np.array([[0], [0], [1], [1], [1], [0]])
    y = np.array([0, 0, 0, 1, 1, 1])
    nb = [(), (0,)]
    post = loo_posteriors(X, y, nb, [2], 2)
    np.testing.assert_allclose(
        post[np.arange(6), y], [20 / 41, 20 / 41, 4 / 25, 20 / 41, 20 / 41, 4 / 25]
    )
    assert loo_score(X, y, nb, [2], 2) == pytest.approx(388 / 1025, abs=1e-15)
    assert loo_score(X, y, nb, [2], 2, score="loo-accuracy") == 0.0


def test_accuracy_ties_go_to_the_first_class():
    # empty network, balanced classes: each left-out instance sees the other
    # class in the majority, so LOO is always wrong
    X = np.zeros((4, 1), dtype=int)
    y = np.array([0, 0, 1, 1])
    assert loo_score(X, y, [(), ()], [1], 2, score="loo-accuracy") == 0.0
    # three classes, one instance each: leaving one out ties the other two
    # classes exactly, and the lower class code wins (Weka's first maximum)
    y3 = np.array([0, 1, 2])
    post = loo_posteriors(np.zeros((3, 1), dtype=int), y3, [(), ()], [1], 3)
    assert np.argmax(post, axis=1).tolist() == [1, 0, 0]
    assert (
        loo_score(
            np.zeros((3, 1), dtype=int), y3, [(), ()], [1], 3, score="loo-accuracy"
        )
        == 0.0
    )


# --------------------------------------------------------------------------
# (3) search invariants
# --------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("max_parents", [1, 2, 3])
@pytest.mark.parametrize("init", ["naive-bayes", "empty"])
@pytest.mark.parametrize("score", ["loo-probability", "loo-accuracy"])
def test_search_invariants_and_naive_reference(seed, max_parents, init, score):
    rng = np.random.default_rng(seed)
    X, y, card, C = random_data(rng, n=60)
    ps = k2_search(X, y, card, C, max_parents=max_parents, init=init, score=score)
    assert len(ps) == X.shape[1] + 1
    assert ps[0] == ()
    for v, pv in enumerate(ps):
        assert len(pv) <= max_parents
        assert all(p < v for p in pv), "only predecessors may be parents"
        assert len(set(pv)) == len(pv)
        if init == "naive-bayes" and v:
            assert pv[0] == 0, "the class stays the first parent"
        if init == "empty" and pv:
            # attribute-only parents cannot change the score of a node off the class
            assert 0 in pv
    if max_parents == 1 and init == "naive-bayes":
        assert ps == [()] + [(0,)] * X.shape[1]
    # every accepted arc strictly raised the score, in the order it was added
    trial = [[] for _ in ps]
    if init == "naive-bayes":
        trial = [[] if v == 0 else [0] for v in range(len(ps))]
    prev = loo_score(X, y, trial, card, C, score=score)
    for v, pv in enumerate(ps):
        for p in pv[len(trial[v]) :]:
            trial[v].append(p)
            s = loo_score(X, y, trial, card, C, score=score)
            assert s > prev
            prev = s
    assert ps == literal_k2(X.shape[1], max_parents,
                             lambda t: loo_score(X, y, t, card, C, score=score), init)


def test_empty_init_versus_naive_bayes():
    rng = np.random.default_rng(5)
    X, y, card, C = random_data(rng, n=80)
    X[:, 4] = rng.integers(0, card[4], len(y))  # one pure-noise column
    nb = k2_search(X, y, card, C, max_parents=1, init="naive-bayes")
    assert nb == [()] + [(0,)] * 5
    empty = k2_search(X, y, card, C, max_parents=1, init="empty")
    # node 1 (column 0) depends strongly on the class: it gets the class
    assert empty[1] == (0,)
    assert all(pv in [(), (0,)] for pv in empty)
    # node 5 (the noise column) stays without a parent: the class does not raise the score
    assert empty[5] == ()
    with_class = [list(pv) for pv in empty]
    with_class[5] = [0]
    assert loo_score(X, y, with_class, card, C) <= loo_score(X, y, [list(pv) for pv in empty], card, C)
    assert k2_search(X, y, card, C, max_parents=0, init="empty") == [()] * 6


def test_ties_first_candidate_wins_and_useless_parents_are_never_added():
    rng = np.random.default_rng(9)
    n = 200
    y = rng.integers(0, 2, n)
    a = np.where(rng.random(n) < 0.7, y, rng.integers(0, 2, n))
    const = np.zeros(n, dtype=int)  # one value only: a parent that changes nothing
    copy = a.copy()  # identical to column 0: exactly the same score as a parent
    target = (a ^ y) ^ (rng.random(n) < 0.05)  # depends on a and y jointly
    X = np.column_stack([a, const, copy, target])
    card = np.array([2, 1, 2, 2])
    ps = k2_search(X, y, card, 2, max_parents=3)
    # node 1 (column a) and node 3 (its copy) score exactly the same as
    # parents of the target: the first in the order wins, and once it is in,
    # neither the copy nor the constant (node 2) changes anything
    assert ps[4] == (0, 1)
    assert all(2 not in pv for pv in ps)


def test_search_validation_errors():
    X = np.array([[0, 1], [1, 0]])
    y = np.array([0, 1])
    with pytest.raises(ValueError, match="init"):
        k2_search(X, y, [2, 2], 2, init="random")
    with pytest.raises(ValueError, match="score"):
        k2_search(X, y, [2, 2], 2, score="bdeu")
    with pytest.raises(ValueError, match="max_parents"):
        k2_search(X, y, [2, 2], 2, max_parents=-1)
    with pytest.raises(ValueError, match="alpha"):
        k2_search(X, y, [2, 2], 2, alpha=0)
    with pytest.raises(ValueError, match=r"X\[1, 1\]"):
        k2_search(np.array([[0, 1], [1, 2]]), y, [2, 2], 2)
    with pytest.raises(ValueError, match="y holds"):
        k2_search(X, np.array([0, 2]), [2, 2], 2)
    with pytest.raises(ValueError, match="cardinalities"):
        k2_search(X, y, [2], 2)
    with pytest.raises(ValueError, match="cycle"):
        loo_posteriors(X, y, [(), (2,), (1,)], [2, 2], 2)
    with pytest.raises(ValueError, match="parent set"):
        fit_cpts(X, y, [(), (1,), ()], [2, 2], 2)
    cpts = fit_cpts(X, y, [(), (0,), (0,)], [2, 2], 2)
    with pytest.raises(ValueError, match="shape"):
        predict_proba(X, [(), (0,), ()], cpts, [2, 2], 2)


def test_unlimited_parents_with_compressed_configurations(monkeypatch):
    # force the re-coding path for wide parent sets and check it changes nothing
    from ensemblekit.bayesnet import k2

    rng = np.random.default_rng(4)
    X, y, card, C = random_data(rng, n=60)
    dense = k2_search(X, y, card, C, max_parents=None)
    monkeypatch.setattr(k2, "_DENSE_CELLS", 1)
    assert k2_search(X, y, card, C, max_parents=None) == dense


# --------------------------------------------------------------------------
# (4) agreement with Weka 3.9.7
# --------------------------------------------------------------------------
def _load_nominal(path: Path):
    data = arff.load(path.open())
    names = [a[0] for a in data["attributes"]]
    domains = [a[1] for a in data["attributes"]]
    codes = np.array(
        [[domains[j].index(v) for j, v in enumerate(row)] for row in data["data"]]
    )
    card = np.array([len(dom) for dom in domains[:-1]])
    return names, codes[:, :-1], codes[:, -1], card, len(domains[-1])


@needs_weka
@pytest.mark.parametrize("max_parents", [2, 3])
@pytest.mark.parametrize("score", ["loo-probability", "loo-accuracy"])
def test_weka_agreement_tic_tac_toe(max_parents, score):
    path = data_path("tic-tac-toe.arff")
    names, X, y, card, C = _load_nominal(path)
    weka_network, weka_proba = bayesnet_k2(path, max_parents, score)
    # parent sets: Weka prints "node(r): parent parent ..." in addition order
    weka_parents = {name: ps for name, (_, ps) in weka_network.items()}
    node_names = [names[-1]] + names[:-1]  # class first, then attribute order
    ours = k2_search(X, y, card, C, max_parents=max_parents, score=score)
    assert {
        node_names[v]: tuple(node_names[p] for p in ps) for v, ps in enumerate(ours)
    } == weka_parents
    assert any(len(ps) == max_parents for ps in ours)  # the search did add arcs

    # class probabilities on the training file, to Weka's three printed decimals
    proba = predict_proba(X, ours, fit_cpts(X, y, ours, card, C, alpha=0.5), card, C)
    assert weka_proba.shape == proba.shape == (958, 2)
    np.testing.assert_array_less(np.abs(proba - weka_proba), 0.0005 + 1e-9)


# --------------------------------------------------------------------------
# Weka's other global scores, node orders and rounding (issue 33, items 6 and 7)
# --------------------------------------------------------------------------
@pytest.mark.parametrize("cv_type, n_folds", [("kfold", 10), ("kfold", 7), ("cumulative", 10)])
@pytest.mark.parametrize("init", ["naive-bayes", "empty"])
@pytest.mark.parametrize("accuracy", [False, True])
def test_kfold_and_cumulative_scores_equal_literal_refits(cv_type, n_folds, init, accuracy):
    """41 rows: the folds are uneven (floor(f n / k) boundaries); every score is recounted
    from scratch on the rows that score each row."""
    rng = np.random.default_rng(3)
    X, y, card, C = random_data(rng, n=41)
    score = "loo-accuracy" if accuracy else "loo-probability"
    ours = k2_search(X, y, card, C, init=init, score=score, cv_type=cv_type, n_folds=n_folds)
    ref = literal_k2(X.shape[1], 2, lambda t: refit_score(
        X, y, t, card, C, cv_type=cv_type, n_folds=n_folds, accuracy=accuracy), init)
    assert ours == ref


def test_fold_boundaries_by_hand():
    """7 rows in 3 folds: floor(7 f / 3) = 0, 2, 4, 7; row 5 is scored by rows 0..3."""
    assert held_out_rows(7, 5, "kfold", 3).tolist() == [0, 1, 2, 3]
    assert held_out_rows(7, 1, "kfold", 3).tolist() == [2, 3, 4, 5, 6]
    assert held_out_rows(7, 3, "cumulative").tolist() == [0, 1, 2]


def test_kfold_score_of_a_class_node_by_hand():
    """4 rows y = 0, 0, 1, 1 in 2 folds, alpha 0.5, each row scored by the other fold
    alone. No arcs: every row's class has count 0 there, P = (0 + .5) / (2 + 1) = 1/6.
    With a column x = y as the class's child: for row 0 the class gives 1/6 (c = 0) and
    5/6 (c = 1), x = 0 given c = 0 (no such row) .5 and given c = 1 (two rows, x = 1)
    1/6, so P(0) = (1/12) / (1/12 + 5/36) = 3/8, the same for every row by symmetry."""
    y = np.array([0, 0, 1, 1])
    X = y[:, None].copy()
    assert refit_score(X, y, [(), ()], np.array([2]), 2, cv_type="kfold",
                       n_folds=2) == pytest.approx(1 / 6)
    assert refit_score(X, y, [(), (0,)], np.array([2]), 2, cv_type="kfold",
                       n_folds=2) == pytest.approx(3 / 8)
    assert k2_search(X, y, [2], 2, init="empty", cv_type="kfold", n_folds=2) == [(), (0,)]
    # cumulative, row i from rows 0..i-1: without the arc 1/2, 3/4, 1/6, 3/8; with it
    # 1/2, (9/16) / (9/16 + 1/8) = 9/11, 3/8 and (9/32) / (5/48 + 9/32) = 27/37
    assert refit_score(X, y, [(), ()], np.array([2]), 2,
                       cv_type="cumulative") == pytest.approx(43 / 96)
    assert refit_score(X, y, [(), (0,)], np.array([2]), 2, cv_type="cumulative"
                       ) == pytest.approx((1 / 2 + 9 / 11 + 3 / 8 + 27 / 37) / 4)
    assert k2_search(X, y, [2], 2, init="empty", cv_type="cumulative") == [(), (0,)]


def test_random_node_order_is_java_s():
    """Orders printed by java.util.Random(seed) swapping positions i and nextInt(n) in turn."""
    assert random_node_order(5, "naive-bayes", 42) == [0, 3, 1, 4, 2]
    assert random_node_order(8, "naive-bayes", 33) == [0, 5, 2, 4, 3, 6, 1, 7]
    assert random_node_order(6, "empty", 1) == [3, 2, 1, 0, 5, 4]
    assert random_node_order(6, "empty", 7) == [4, 2, 3, 0, 5, 1]
    assert random_node_order(8, "empty", 3) == [1, 4, 5, 6, 7, 2, 3, 0]


@pytest.mark.parametrize("init, seed", [("naive-bayes", 33), ("empty", 1), ("empty", 3)])
def test_search_in_a_random_order_equals_literal_k2(init, seed):
    """With init="empty" the class may come late: it then takes attribute parents."""
    rng = np.random.default_rng(4)
    X, y, card, C = random_data(rng, n=50, card=(2, 3, 2, 4, 3, 2, 2))
    order = random_node_order(X.shape[1] + 1, init, seed)
    ours = k2_search(X, y, card, C, init=init, order=order)
    ref = literal_k2(X.shape[1], 2, lambda t: refit_score(X, y, t, card, C), init, order=order)
    assert ours == ref
    assert ours != k2_search(X, y, card, C, init=init)
    if seed == 3:
        assert ours[0], "the class, last in the order, has parents"


@pytest.mark.parametrize("seed, cv_type", [(4, "loo"), (6, "cumulative"), (3, "kfold")])
def test_weka_rounding_equals_weka_s_arithmetic(seed, cv_type):
    """Under init="empty" arcs of exactly zero gain are taken when Weka's rounding makes
    their score larger: the search equals K2 over the score computed scalar by scalar in
    Weka's order, compared strictly, and differs from the exact comparison here."""
    rng = np.random.default_rng(seed)
    X, y, card, C = random_data(rng, n=40)
    ours = k2_search(X, y, card, C, init="empty", weka_rounding=True, cv_type=cv_type)
    ref = literal_k2(X.shape[1], 2, lambda t: weka_rounded_score(X, y, t, card, C,
                                                                  cv_type=cv_type), "empty", tol=0)
    assert ours == ref
    assert ours != k2_search(X, y, card, C, init="empty", cv_type=cv_type)


def test_new_search_options_validation_errors():
    X = np.array([[0, 1], [1, 0]])
    y = np.array([0, 1])
    with pytest.raises(ValueError, match="cv_type must be one of"):
        k2_search(X, y, [2, 2], 2, cv_type="bootstrap")
    with pytest.raises(ValueError, match="n_folds must be an integer >= 2"):
        k2_search(X, y, [2, 2], 2, cv_type="kfold", n_folds=1)
    with pytest.raises(ValueError, match="order must be a permutation"):
        k2_search(X, y, [2, 2], 2, order=[0, 1, 1])
    with pytest.raises(ValueError, match="must start with the class"):
        k2_search(X, y, [2, 2], 2, order=[1, 0, 2])
    with pytest.raises(ValueError, match="samples .* take only cv_type='loo'"):
        k2_search(X, y, [2, 2], 2, cv_type="kfold", samples=[np.array([0, 1])])
