"""``knn`` (IBk) against Weka 3.9.7's ``IBk`` itself, on a train/test split of 11 UCI files.

Each file is cut in file order: its first 2/3 of the data rows are written, under the
file's own header, to a training ARFF file, the rest to a test file. Weka runs
``IBk -t train -T test`` and prints its class distribution for every test row
(``-classifications CSV -distribution -decimals 40``: enough places for every digit of
Java's shortest form of each double, so the printed number reads back as the same
double); ours, fitted on the same training rows and given the test rows in the same
order, must predict the same class for every row and give the same distributions to the
last bit: Weka adds the neighbours' votes one at a time, nearest first, and so do we.

The split makes test values fall outside the training ranges, which Weka widens row by
row (``range_update="cumulative"``): on colic, credit-a, hepatitis, diabetes and heart-c
fixed training ranges would change some predictions. The files cover nominal attributes
with missing values (vote, colic, credit-a, hepatitis, labor, soybean, breast-cancer,
heart-c), numeric ones (iris, glass, diabetes), ties at the k-th distance (the nominal
files with k = 5) and both distance weightings. Car (all nominal, many exact ties), split
into its odd and even rows, with and without injected missing values, holds rows whose
two best classes differ only by the rounding of the summed votes (issue 33): the order
of the additions decides the prediction there.

IBk's ``-X`` (k chosen by hold-one-out up to ``-K``), ``-E`` and ``-W`` (window) are
checked on files with missing values (colic, credit-a, heart-c, car with injected ones)
and one all numeric (diabetes): the k Weka's model text reports and every distribution.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from ensemblekit import api
from ensemblekit.classifiers.ibk import IBk
from ensemblekit.data import load_dataset

from ektesting.support import data_path
from ektesting.weka_tools import CSV_EXACT, needs_weka, run_weka, split_alternate

FILES = ["vote", "colic", "credit-a", "hepatitis", "labor", "iris", "glass", "diabetes",
         "breast-cancer", "heart-c", "soybean"]

def split_file(name, folder):
    """Write the first 2/3 of the data rows of ``name`` to train.arff, the rest to test.arff."""
    lines = data_path(f"{name}.arff").read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().lower().startswith("@data"))
    header = lines[:at + 1]
    rows = [line for line in lines[at + 1:] if line.strip() and not line.lstrip().startswith("%")]
    cut = 2 * len(rows) // 3
    train, test = folder / "train.arff", folder / "test.arff"
    train.write_text("\n".join(header + rows[:cut]) + "\n", encoding="utf-8")
    test.write_text("\n".join(header + rows[cut:]) + "\n", encoding="utf-8")
    return train, test


def weka_ibk(train, test, options):
    """Weka's predicted class code and class distribution for every test row."""
    out = run_weka("weka.classifiers.lazy.IBk", "-t", str(train), "-T", str(test), *options,
                   "-classifications", CSV_EXACT)
    predicted, dist = [], []
    for line in out.splitlines():
        parts = line.split(",")
        if len(parts) > 4 and parts[0].isdigit():
            predicted.append(int(parts[2].split(":")[0]) - 1)
            dist.append([float(p.lstrip("*")) for p in parts[4:]])
    return np.array(predicted), np.array(dist)


def our_fitted(train, **params):
    tr = load_dataset(train)
    feats = tr.schema.features
    nominal = [i for i, a in enumerate(feats) if a.kind != "numeric"]
    keep = tr.y >= 0  # Weka drops training rows without a class; test rows all count
    clf = IBk(nominal_features=nominal, n_categories=[len(feats[i].values) for i in nominal],
              n_classes=len(tr.schema.class_attribute.values), **params)
    return clf.fit(tr.X[keep], tr.y[keep])


def our_ibk(train, test, **params):
    clf, te = our_fitted(train, **params), load_dataset(test)
    return clf.predict(te.X), clf.predict_proba(te.X)


@needs_weka
@pytest.mark.parametrize("name", FILES)
def test_predictions_equal_weka_ibk(name, tmp_path):
    train, test = split_file(name, tmp_path)
    want, want_dist = weka_ibk(train, test, [])
    got, dist = our_ibk(train, test)
    assert want.size == load_dataset(test).n_instances
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(dist, want_dist)


@needs_weka
@pytest.mark.parametrize("name", ["vote", "colic", "diabetes", "breast-cancer"])
@pytest.mark.parametrize("options, params", [
    (["-K", "5"], {"n_neighbors": 5}),
    (["-K", "3", "-I"], {"n_neighbors": 3, "weights": "inverse"}),
    (["-K", "7", "-F"], {"n_neighbors": 7, "weights": "similarity"}),
])
def test_k_and_weightings_equal_weka_ibk(name, options, params, tmp_path):
    train, test = split_file(name, tmp_path)
    want, want_dist = weka_ibk(train, test, options)
    got, dist = our_ibk(train, test, **params)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(dist, want_dist)


@needs_weka
@pytest.mark.parametrize("missing", [0.0, 0.1])
@pytest.mark.parametrize("options, params", [
    (["-K", "3", "-I"], {"n_neighbors": 3, "weights": "inverse"}),
    (["-K", "7", "-I"], {"n_neighbors": 7, "weights": "inverse"}),
    (["-K", "5"], {"n_neighbors": 5}),
    (["-K", "7", "-F"], {"n_neighbors": 7, "weights": "similarity"}),
])
def test_car_distributions_equal_weka_ibk_bit_for_bit(missing, options, params, tmp_path):
    train, test = split_alternate(data_path("car.arff"), tmp_path, missing=missing, seed=33)
    want, want_dist = weka_ibk(train, test, options)
    got, dist = our_ibk(train, test, **params)
    assert want.size == 864
    np.testing.assert_array_equal(got, want)
    assert dist.tobytes() == want_dist.tobytes()
    if "-I" in options:
        # rows whose best two classes lie within a few ulps: the order of the additions
        # decides them (before issue 33's fix, 1 to 2 of them per case went the other way)
        top = np.sort(want_dist, axis=1)[:, -2:]
        assert np.any(top[:, 1] - top[:, 0] < 1e-14)


@needs_weka
def test_knn_command_path_equals_weka_ibk(tmp_path):
    # the registry entry, fitted and applied through the application layer (as `fit` and
    # `predict` do), on a file with nominal and numeric attributes and missing values
    train, test = split_file("colic", tmp_path)
    want, want_dist = weka_ibk(train, test, [])
    model = api.fit("knn", train)
    result = api.predict(model, test, proba=True)
    classes = list(load_dataset(train).schema.class_attribute.values)
    assert [classes.index(v) for v in result.predictions] == want.tolist()
    np.testing.assert_array_equal(result.probabilities, want_dist)


def weka_chosen_k(train, test, options):
    """The k Weka's IBk model text reports ("using K nearest neighbour(s)")."""
    text = run_weka("weka.classifiers.lazy.IBk", "-t", str(train), "-T", str(test), "-v",
                    *options)
    return int(re.search(r"using (\d+) (?:\S+ )?nearest neighbour", text).group(1))


@needs_weka
@pytest.mark.parametrize("name", ["colic", "credit-a", "heart-c", "diabetes", "car"])
@pytest.mark.parametrize("options, params", [
    (["-K", "10", "-X"], {"n_neighbors": 10, "cross_validate": True}),
    (["-K", "10", "-X", "-I", "-E"],
     {"n_neighbors": 10, "cross_validate": True, "weights": "inverse", "mean_squared": True}),
    (["-K", "5", "-X", "-F", "-W", "150"],
     {"n_neighbors": 5, "cross_validate": True, "weights": "similarity", "window_size": 150}),
    (["-K", "3", "-W", "100"], {"n_neighbors": 3, "window_size": 100}),
])
def test_cross_validate_and_window_equal_weka_ibk(name, options, params, tmp_path):
    if name == "car":  # odd rows to train on, even ones to test, 10 % of values missing
        train, test = split_alternate(data_path("car.arff"), tmp_path, missing=0.1, seed=33)
    else:
        train, test = split_file(name, tmp_path)
    want, want_dist = weka_ibk(train, test, options)
    got, dist = our_ibk(train, test, **params)
    np.testing.assert_array_equal(got, want)
    assert dist.tobytes() == want_dist.tobytes()
    if "-X" in options:
        assert our_fitted(train, **params).n_neighbors_ == weka_chosen_k(train, test, options)


#: Rows 1 and 2 hold the same differences to row 0 in another column order: squared
#: distances one ulp apart, one weighting distance (test_ibk_options.py works it out).
TIED_ARFF = """@relation tied
@attribute a numeric
@attribute b numeric
@attribute c numeric
@attribute class {n,p}
@data
0,0,0,n
0.08,0.3,0.48,p
0.48,0.3,0.08,n
1,1,1,p
1,0.5,0,p
"""


@needs_weka
def test_hold_one_out_ties_are_cut_as_weka_cuts_them(tmp_path):
    # Weka keeps both rows as row 0's nearest neighbour and chooses k = 1
    data = tmp_path / "tied.arff"
    data.write_text(TIED_ARFF, encoding="utf-8")
    assert weka_chosen_k(data, data, ["-K", "2", "-X"]) == 1
    want, want_dist = weka_ibk(data, data, ["-K", "2", "-X"])
    got, dist = our_ibk(data, data, n_neighbors=2, cross_validate=True)
    np.testing.assert_array_equal(got, want)
    assert dist.tobytes() == want_dist.tobytes()
