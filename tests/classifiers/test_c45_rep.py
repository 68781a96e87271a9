"""``c45``'s reduced-error pruning (J48 ``-R -N -Q``) on cases small enough to follow by hand.

The agreement with J48 itself on UCI files is in test_c45_weka.py; here: the hold-out
split as Weka draws it, the pruning rule on a hand-made tree, the
cuts moved to values of all the rows, the parameter checks, and the model file.
"""

from __future__ import annotations

import numpy as np
import pytest

from ensemblekit.classifiers._c45_rep import holdout, prune_reduced_error
from ensemblekit.classifiers.c45 import C45Tree
from ensemblekit.constraints import InvalidParameterError
from ensemblekit.errors import InputError

from ektesting.support import run_main

# x = 1 .. 12 and classes a a a b a a b b a b b b: a noisy threshold
X_TINY = np.arange(1, 13, dtype=float)[:, None]
Y_TINY = np.array([0, 0, 0, 1, 0, 0, 1, 1, 0, 1, 1, 1])


def _text(tree):
    return tree.export_text(["x"], ["a", "b"])


def test_holdout_is_weka_s_shuffle_stratification_and_last_fold():
    # Weka 3.9.7 (randomize(new Random(S)), stratify(K), trainCV(K, K-1, same Random),
    # testCV(K, K-1)) on the rows of Y_TINY, each row's weight set to its index to trace it
    grow, prune = holdout(Y_TINY, 3, 1)
    assert grow.tolist() == [5, 6, 3, 0, 11, 7, 8, 2]
    assert prune.tolist() == [4, 1, 10, 9]
    grow, prune = holdout(Y_TINY, 2, 5)
    assert grow.tolist() == [2, 9, 7, 0, 4, 6]
    assert prune.tolist() == [8, 5, 1, 3, 10, 11]


def test_reduced_error_pruning_prunes_what_the_held_out_rows_do_not_support():
    # -N 3 -Q 4: growing rows x = 12b 10b 9a 2a 11b 6a 8b 1a, pruning rows x = 7b 4b 5a 3a.
    # Grown: the cut between 6 and 8 (7) stays at 7, a value of all the rows: x <= 7 gets
    # 3 a, x > 7 gets 4 b and 1 a. On the pruning rows the root as a leaf (training
    # majority a: 4 a, 4 b, the first class wins) misses 2 of 4; the split sends all four
    # left (a leaf of class a: 2 errors) and none right: 2 errors, no fewer, so the root
    # becomes a leaf: a (8/4).
    pruned = C45Tree(reduced_error_pruning=True, num_folds=3, seed=4).fit(X_TINY, Y_TINY)
    assert _text(pruned) == ": a (8.0/4.0)"
    # without the option, J48's error-based pruning keeps a split of all 12 rows
    assert _text(C45Tree().fit(X_TINY, Y_TINY)) == "x <= 6: a (6.0/1.0)\nx > 6: b (6.0/1.0)"


def test_a_cut_moves_to_a_value_of_all_the_rows_not_only_the_growing_ones():
    # -N 2 -Q 2: growing rows x = 11b 8b 9a 3a 2a 10b, the cut between 3 and 8 (5.5) moves
    # to 5, the largest of all the rows' values below it (3 among the growing rows alone).
    # Pruning rows 7b 12b 4b 6a 1a 5a: as a leaf (class a) 3 errors; split: x <= 5 gets
    # 4b 1a 5a (class a, 1 error), x > 5 gets 7b 12b 6a (class b, 1 error): kept.
    tree = C45Tree(reduced_error_pruning=True, num_folds=2, seed=2).fit(X_TINY, Y_TINY)
    assert _text(tree) == "x <= 5: a (2.0)\nx > 5: b (4.0/1.0)"
    # the seed chooses the split: -N 3 -Q 1 grows on x = 6a 7b 4b 1a 12b 8b 9a 3a
    tree = C45Tree(reduced_error_pruning=True, num_folds=3, seed=1).fit(X_TINY, Y_TINY)
    assert _text(tree) == "x <= 3: a (2.0)\nx > 3: b (6.0/2.0)"


def _three_way_tree():
    """A split on nominal x0 (3 values): branch 0 holds 2 a, branch 1 3 b, branch 2 none."""
    value = np.array([[2.0, 3.0], [2.0, 0.0], [0.0, 3.0], [0.0, 0.0]])
    return {"feature": np.array([0, -1, -1, -1]), "threshold": np.full(4, np.nan),
            "child_start": np.array([1, -1, -1, -1]), "n_children": np.array([3, 0, 0, 0]),
            "value": value, "bag_value": value.copy(),
            "is_empty": np.array([False, False, False, True])}


def test_pruning_counts_missing_values_by_share_and_empty_branches_by_the_parent():
    nominal = np.array([True])
    # pruning rows: (0, a), (1, b), (2, b) twice, (missing, a). The missing row goes 2/5
    # into branch 0 and 3/5 into branch 1 (their training weights). As a leaf (majority b)
    # the node misses the a's, 1 + 1 = 2 of 5. The subtree:
    # branch 0 (class a) misses nothing, branch 1 (class b) misses the 0.6 of the missing a,
    # branch 2 has no training weight and counts against the node's majority b: 0 errors.
    # 0.6 < 2: the split stays. (Counted against its own empty majority, class a, branch 2
    # would miss 2 and the subtree 2.6 would lose to the leaf.)
    X = np.array([[0.0], [1.0], [2.0], [2.0], [np.nan]])
    y = np.array([0, 1, 1, 1, 0])
    kept = prune_reduced_error(X, y, np.ones(5), nominal, _three_way_tree())
    assert kept["feature"].tolist() == [0, -1, -1, -1]
    np.testing.assert_array_equal(kept["value"], _three_way_tree()["value"])
    # (0, b), (1, a), (2, b): as a leaf 1 error; the subtree 1 + 1 + 0 = 2: a leaf with the
    # node's training counts
    X = np.array([[0.0], [1.0], [2.0]])
    pruned = prune_reduced_error(X, np.array([1, 0, 1]), np.ones(3), nominal,
                                 _three_way_tree())
    assert pruned["feature"].tolist() == [-1]
    assert pruned["value"].tolist() == [[2.0, 3.0]]


def test_same_seed_same_tree_and_refit_is_deterministic():
    a = C45Tree(reduced_error_pruning=True, seed=4).fit(X_TINY, Y_TINY)
    b = C45Tree(reduced_error_pruning=True, seed=4).fit(X_TINY, Y_TINY)
    assert _text(a) == _text(b)
    np.testing.assert_array_equal(a.predict_proba(X_TINY), b.predict_proba(X_TINY))


@pytest.mark.parametrize("params, message", [
    ({"num_folds": 1}, "'num_folds' parameter of C45Tree must be int >= 2; got 1"),
    ({"num_folds": 2.0}, "'num_folds' parameter"),
    ({"seed": 2**31}, "'seed' parameter"),
    ({"reduced_error_pruning": "yes"}, "'reduced_error_pruning' parameter"),
])
def test_bad_values_are_refused_by_name(params, message):
    with pytest.raises(InvalidParameterError, match=message):
        C45Tree(**{"reduced_error_pruning": True, **params}).fit(X_TINY, Y_TINY)


@pytest.mark.parametrize("params, message", [
    ({"unpruned": True}, "reduced_error_pruning prunes, unpruned does not"),
    ({"confidence_factor": 0.1}, "confidence_factor plays no part in reduced-error pruning"),
    ({"num_folds": 13}, "num_folds=13 needs at least 13 labelled rows, got 12"),
])
def test_settings_j48_refuses_with_reduced_error_pruning_are_refused(params, message):
    with pytest.raises(InputError, match=message):
        C45Tree(reduced_error_pruning=True, **params).fit(X_TINY, Y_TINY)


def test_command_line_sets_the_options_and_the_model_file_keeps_the_tree(tmp_path, monkeypatch,
                                                                          capsys):
    data = tmp_path / "tiny.arff"
    data.write_text("@relation tiny\n@attribute x numeric\n@attribute class {a,b}\n@data\n"
                    + "".join(f"{x},{'ab'[c]}\n" for x, c in zip(range(1, 13), Y_TINY)))
    model = tmp_path / "m.ekm"
    code, _, err = run_main(["fit", "c45", data, "-o", model, "--set",
                             "reduced_error_pruning=true", "--set", "num_folds=2", "--set",
                             "seed=2"], monkeypatch, capsys)
    assert code == 0, err
    code, shown, _ = run_main(["show", model], monkeypatch, capsys)
    assert "num_folds=2, reduced_error_pruning=true, seed=2" in shown
    assert "\nx <= 5: a (2.0)\nx > 5: b (4.0/1.0)\n" in shown
    code, out, _ = run_main(["predict", model, data, "--proba"], monkeypatch, capsys)
    assert code == 0
    assert len(out.strip().splitlines()) == 13  # a header and one row per instance
    code, _, err = run_main(["fit", "c45", data, "-o", tmp_path / "x.ekm", "--set",
                             "num_folds=1"], monkeypatch, capsys)
    assert code == 2
    assert "num_folds" in err and ">= 2" in err and "Traceback" not in err
