"""IBk's ``-X`` (``cross_validate``), ``-E`` (``mean_squared``) and ``-W`` (``window_size``)
worked out by hand, their model-file state, ``show``, and the refusal of bad values.

The hold-one-out cases are small enough to count every error on paper; the comments
give the counts. The agreement with Weka itself is in ``test_ibk_weka.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from ensemblekit import cli
from ensemblekit.classifiers.ibk import IBk
from ensemblekit.classifiers.ibk_model import IBkModel
from ensemblekit.constraints import InvalidParameterError
from ensemblekit.trust import DamagedModelError

from ektesting.state_roundtrip import roundtrip
from ektesting.support import data_path, load_coded

# One numeric attribute (all rows scale by the same range, so the order of the distances
# is that of |x - x'|). Class 0 at 0, 1.5, 2.7; class 1 at 3.5 (inside class 0's group)
# and 10, 11.2, 12.6.
X7 = np.array([[0.0], [1.5], [2.7], [3.5], [10.0], [11.2], [12.6]])
Y7 = np.array([0, 0, 0, 1, 1, 1, 1])
# Hold-one-out errors, each row classified by the other six:
#   k = 1: 2.7 -> 3.5 (class 1), 3.5 -> 2.7 (class 0): 2 errors;
#   k = 2: 2.7 -> {3.5, 1.5}, one vote each, the first class (0) wins: right;
#          3.5 -> {2.7, 1.5}: wrong: 1 error;
#   k = 3: 3.5 -> {2.7, 1.5, 0}: wrong, every other row right: 1 error.
# Fewest errors: k = 2 and k = 3; the lowest wins.


def test_cross_validate_chooses_the_lowest_k_of_fewest_hold_one_out_errors():
    clf = IBk(n_neighbors=3, cross_validate=True).fit(X7, Y7)
    assert clf.n_neighbors_ == 2
    # at 3.0 the nearest are 2.7 (0), 3.5 (1), 1.5 (0): with k = 2 one vote each,
    # (1/7 + 1) / (2/7 + 2) = 1/2; with k = 3, (1/7 + 2) / (2/7 + 3) = 15/23
    np.testing.assert_allclose(clf.predict_proba([[3.0]]), [[0.5, 0.5]], rtol=0, atol=1e-15)
    fixed = IBk(n_neighbors=3).fit(X7, Y7)
    assert fixed.n_neighbors_ == 3
    np.testing.assert_allclose(fixed.predict_proba([[3.0]]), [[15 / 23, 8 / 23]], atol=1e-15)


def test_a_row_is_not_its_own_hold_one_out_neighbour():
    # were a row its own nearest neighbour (distance 0), k = 1 would make no error and win
    assert IBk(n_neighbors=2, cross_validate=True).fit(X7, Y7).n_neighbors_ == 2
    # but a copy of it is another row: with each row doubled, k = 1 makes no error
    doubled = IBk(n_neighbors=3, cross_validate=True).fit(np.repeat(X7, 2, axis=0),
                                                          np.repeat(Y7, 2))
    assert doubled.n_neighbors_ == 1


def test_cross_validate_with_upper_bound_one_and_with_one_row():
    assert IBk(n_neighbors=1, cross_validate=True).fit(X7, Y7).n_neighbors_ == 1
    assert IBk(n_neighbors=4, cross_validate=True).fit([[1.0]], [0]).n_neighbors_ == 1


def test_k_above_the_other_rows_takes_them_all():
    # three rows, upper bound 5: every k >= 2 holds both other rows; 0 -> {1 (0), 2 (1)}:
    # one vote each, class 0 first: right; 1 -> {0, 2}: right; 2 -> {0, 1}: class 0, wrong.
    # k = 1: 0 -> 1: right; 1 -> 0: right; 2 -> 1: wrong. One error for every k: k = 1.
    clf = IBk(n_neighbors=5, cross_validate=True).fit([[0.0], [1.0], [3.0]], [0, 0, 1])
    assert clf.n_neighbors_ == 1


# Three numeric attributes, each with the range [0, 1] (so scaled values are the raw ones).
# Rows 1 and 2 hold the same differences to row 0 in another column order: their squared
# distances to it, summed in column order, differ in the last bit (0.3268 and the next
# double up), but IBk's weighting distance sqrt(s / 3) is the same double for both.
TIED = np.array([[0.0, 0.0, 0.0], [0.08, 0.3, 0.48], [0.48, 0.3, 0.08], [1.0, 1.0, 1.0],
                 [1.0, 0.5, 0.0]])
Y_TIED = np.array([0, 1, 0, 1, 1])


def test_hold_one_out_cuts_the_neighbour_list_at_ties_of_the_weighting_distance():
    s1, s2 = (np.sum(np.square(TIED[1])), np.sum(np.square(TIED[2])))
    assert s1 != s2 and np.sqrt(np.sqrt(s1) ** 2 / 3) == np.sqrt(np.sqrt(s2) ** 2 / 3)
    # hold-one-out, k = 1 and 2 (nearest first; squared distances):
    #   row 0 (class 0): rows 1 (1) and 2 (0), tied as weighed: k = 1 keeps both (as Weka's
    #     pruneToK), one vote each, class 0 first: right; k = 2: the same two: right;
    #   row 1 (1): row 2 (0.32, class 0), row 0 (0.3268, 0): wrong for k = 1 and 2;
    #   row 2 (0): row 4 (0.3172, 1), row 1 (0.32, 1): wrong for both;
    #   row 3 (1): row 4 (1.25, 1), then rows 1 and 2 (1.6068): right for both;
    #   row 4 (1): row 2 (0.3172, 0), row 1 (1.1168, 1): wrong for both.
    # 3 errors each: k = 1. Cut at the squared distances, k = 1 would give row 0 row 1's
    # class alone (4 errors), and k = 2 would be chosen. Weka 3.9.7 says k = 1 (test_ibk_weka).
    assert IBk(n_neighbors=2, cross_validate=True).fit(TIED, Y_TIED).n_neighbors_ == 1


def test_mean_squared_changes_nothing_for_a_nominal_class():
    a = IBk(n_neighbors=3, cross_validate=True, mean_squared=True).fit(X7, Y7)
    b = IBk(n_neighbors=3, cross_validate=True).fit(X7, Y7)
    assert a.n_neighbors_ == b.n_neighbors_ == 2
    rows = np.linspace(-1, 14, 31)[:, None]
    assert a.predict_proba(rows).tobytes() == b.predict_proba(rows).tobytes()


def test_window_keeps_the_last_rows_and_their_ranges():
    X, y = np.array([[0.0], [1.0], [10.0]]), np.array([1, 0, 1])
    # all rows: 0.2 is nearest to 0.0 (class 1)
    assert IBk().fit(X, y).predict([[0.2]]).tolist() == [1]
    clf = IBk(window_size=2).fit(X, y)
    assert clf.X_train_.tolist() == [[1.0], [10.0]] and clf.y_train_.tolist() == [0, 1]
    assert clf.n_samples_fit_ == 2 and clf.feature_min_.tolist() == [1.0]
    # only 1.0 (class 0) and 10.0 remain: (1/2 + 1) / (2/2 + 1) = 3/4 for class 0
    np.testing.assert_allclose(clf.predict_proba([[0.2]]), [[0.75, 0.25]], atol=1e-15)
    assert IBk(window_size=3).fit(X, y).n_samples_fit_ == 3  # a window as large as the data
    assert IBk(window_size=0).fit(X, y).n_samples_fit_ == 3  # 0: no window


def test_window_keeps_every_class_of_y():
    clf = IBk(window_size=2).fit([[0.0], [1.0], [2.0]], [2, 0, 1])
    assert clf.classes_.tolist() == [0, 1, 2] and clf.y_train_.tolist() == [0, 1]
    # n = 2 stored rows: 1/2 per class, 3/2 in the total; the nearest (1.0) is class 0
    np.testing.assert_allclose(clf.predict_proba([[1.1]]), [[0.6, 0.2, 0.2]], atol=1e-15)


def test_window_then_cross_validate_on_the_stored_rows():
    # the first row (far away, class 1) is dropped; the rest are X7, whose k is 2
    X = np.vstack([[[-50.0]], X7])
    clf = IBk(n_neighbors=3, cross_validate=True, window_size=7).fit(X, np.r_[1, Y7])
    assert clf.n_samples_fit_ == 7 and clf.n_neighbors_ == 2


@pytest.mark.parametrize("params, name", [
    ({"window_size": -1}, "window_size"),
    ({"window_size": 2.5}, "window_size"),
    ({"window_size": True}, "window_size"),
    ({"cross_validate": "yes"}, "cross_validate"),
    ({"cross_validate": 1}, "cross_validate"),
    ({"mean_squared": None}, "mean_squared"),
])
def test_bad_values_are_refused_by_name(params, name):
    with pytest.raises(InvalidParameterError, match=name):
        IBk(**params).fit(X7, Y7)
    with pytest.raises(InvalidParameterError, match=name):
        IBkModel(**params).fit_coded(X7, Y7)


@pytest.mark.parametrize("setting, message", [
    ("window_size=-1", "bad value -1 for window_size: expected int >= 0"),
    ("cross_validate=maybe", "bad value 'maybe' for cross_validate: expected true or false"),
    ("mean_squared=2", "bad value '2' for mean_squared: expected true or false"),
])
def test_the_command_line_refuses_bad_values_with_one_line(setting, message, tmp_path):
    result = CliRunner().invoke(cli.app, ["fit", "knn", str(data_path("labor.arff")), "-o",
                                          str(tmp_path / "m.ekm"), "--set", setting])
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output
    assert not (tmp_path / "m.ekm").exists()


def _labor(**params):
    _, X, y, nominal, n_cat = load_coded("labor")
    return IBk(nominal_features=nominal, n_categories=n_cat, n_classes=2, **params).fit(X, y), X


def test_the_model_file_keeps_the_chosen_k_and_the_window():
    est, X = _labor(n_neighbors=9, cross_validate=True, window_size=40)
    model = roundtrip(est, IBkModel)
    assert model.n_neighbors_ == est.n_neighbors_ and model.n_samples_fit_ == 40
    assert model.predict_proba(X).tobytes() == est.predict_proba(X).tobytes()


def _scalar(**values):
    def tamper(params, scalars, arrays):
        scalars.update(values)
    return tamper


def _drop_k(params, scalars, arrays):
    del scalars["n_neighbors_"]


@pytest.mark.parametrize("params, tamper, message", [
    ({"n_neighbors": 3}, _scalar(n_neighbors_=2), "n_neighbors_ = 2 is not n_neighbors = 3"),
    ({"n_neighbors": 3, "cross_validate": True}, _scalar(n_neighbors_=4),
     "n_neighbors_ = 4 is not one of the k's"),
    ({"n_neighbors": 3, "cross_validate": True}, _scalar(n_neighbors_=0), "n_neighbors_"),
    ({"n_neighbors": 3, "cross_validate": True}, _drop_k, "n_neighbors_ is missing"),
    ({"window_size": 40}, _scalar(n_samples_fit_=41), "n_samples_fit_|X_train_"),
])
def test_a_damaged_chosen_k_or_window_is_refused(params, tamper, message):
    est, _ = _labor(**params)
    with pytest.raises(DamagedModelError, match=message):
        roundtrip(est, IBkModel, tamper=tamper)


def test_a_state_written_before_the_chosen_k_was_stored_uses_n_neighbors():
    est, X = _labor(n_neighbors=3)
    model = roundtrip(est, IBkModel, tamper=_drop_k)
    assert model.n_neighbors_ == 3
    assert model.predict_proba(X).tobytes() == est.predict_proba(X).tobytes()


def test_a_stored_window_larger_than_the_parameter_is_refused():
    est, _ = _labor(window_size=40)

    def widen_less(params, scalars, arrays):
        params["window_size"] = 30
    with pytest.raises(DamagedModelError, match="n_samples_fit_ = 40 is more rows than "
                                                "window_size = 30"):
        roundtrip(est, IBkModel, tamper=widen_less)


def test_show_reports_the_chosen_k_and_the_window(tmp_path):
    model = tmp_path / "m.ekm"
    runner = CliRunner()
    fit = runner.invoke(cli.app, ["fit", "knn", str(data_path("labor.arff")), "-o", str(model),
                                  "--set", "n_neighbors=9", "--set", "cross_validate=true",
                                  "--set", "window_size=40"])
    assert fit.exit_code == 0, fit.output
    shown = runner.invoke(cli.app, ["show", str(model)])
    assert shown.exit_code == 0
    k = _labor(n_neighbors=9, cross_validate=True, window_size=40)[0].n_neighbors_
    assert "using a maximum of 40 (windowed) training instances" in shown.output
    assert (f"using {k} nearest neighbour(s) for classification (k chosen by hold-one-out "
            "in 1 .. 9)") in shown.output
