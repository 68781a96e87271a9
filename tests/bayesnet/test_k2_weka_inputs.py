"""K2 against BayesNet on what Weka users pass: instance weights (an ARFF file's ``{w}``:
counts, modes, the leave-one-out score and the CPTs weigh every instance; issue 32,
acceptance 3) and the Markov blanket correction (``-mbc``; issue 33, item 7)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ensemblekit import api
from ensemblekit.bayesnet.classifier import K2Classifier
from ensemblekit.data import load_dataset

from ektesting.support import data_path, run_main, weighted_copy
from ektesting.weka_tools import k2_options, needs_weka, run_weka

CSV_OUT = "weka.classifiers.evaluation.output.prediction.CSV -distribution -decimals 12"


@needs_weka
@pytest.mark.parametrize("name", ["vote", "breast-cancer", "tic-tac-toe", "iris", "credit-a",
                                  "diabetes"])
def test_fit_k2_on_a_weighted_file_gives_bayesnet_s_probabilities(name, tmp_path):
    """vote and breast-cancer have missing values (weighted modes fill them); iris, credit-a
    and diabetes numeric attributes (weighted MDL cuts)."""
    path = weighted_copy(name, tmp_path)
    model = tmp_path / "k2.model"
    run_weka("weka.classifiers.bayes.BayesNet", "-t", str(path), "-no-cv", "-d", str(model),
             *k2_options(2, "loo-probability"))
    out = run_weka("weka.classifiers.bayes.BayesNet", "-l", str(model), "-T", str(path),
                   "-classifications", CSV_OUT)
    weka = np.array([[float(p.lstrip("*")) for p in line.split(",")[4:]]
                     for line in out.splitlines()
                     if len(line.split(",")) > 4 and line.split(",")[0].isdigit()])
    ds = load_dataset(path)
    ours = api.fit("k2", path).pipeline.predict_proba(ds.X)
    np.testing.assert_allclose(ours, weka, rtol=0, atol=1e-11)
    # the weights matter: the same rows unweighted give other probabilities
    plain = api.fit("k2", dataclasses.replace(ds, weights=None)).pipeline.predict_proba(ds.X)
    assert np.abs(plain - ours).max() > 0.1


def test_weights_of_one_change_nothing():
    ds = load_dataset(data_path("vote.arff"))
    X, y = ds.X, ds.y
    nominal = list(range(X.shape[1]))
    cats = [len(a.values) for a in ds.schema.features]
    plain = K2Classifier(nominal_features=nominal, n_categories=cats).fit(X, y)
    ones = K2Classifier(nominal_features=nominal, n_categories=cats).fit(
        X, y, instance_weights=np.ones(y.size))
    assert [list(p) for p in ones.parent_sets_] == [list(p) for p in plain.parent_sets_]
    np.testing.assert_array_equal(ones.predict_proba(X), plain.predict_proba(X))


def test_equal_frequency_bins_refuse_weights(tmp_path, monkeypatch, capsys):
    path = weighted_copy("iris", tmp_path)
    code, out, err = run_main(["fit", "k2", path, "-o", tmp_path / "m", "--set",
                               "discretize=equal-frequency"], monkeypatch, capsys)
    assert (code, out) == (2, "")
    assert "instance weights on numeric attributes (column 0) with discretize='equal-frequency'" \
        in err


def test_iebn_of_one_whole_sample_weighs_as_k2(tmp_path):
    """IEBN with one sample of every row (E = 1, max_samples = 1, no replacement) scores
    structures as K2 does, weights included; bagged-k2 refuses weights."""
    path = weighted_copy("vote", tmp_path)
    ds = load_dataset(path)
    k2 = api.fit("k2", path).pipeline.predict_proba(ds.X)
    one = api.fit("iebn", path, params={"n_estimators": 1, "max_samples": 1.0,
                                        "bootstrap": False}).pipeline.predict_proba(ds.X)
    np.testing.assert_array_equal(one, k2)
    several = api.fit("iebn", path).pipeline.predict_proba(ds.X)
    plain = api.fit("iebn", dataclasses.replace(ds, weights=None)).pipeline.predict_proba(ds.X)
    assert np.abs(several - plain).max() > 0.01  # the weights reach the ensemble score too
    with pytest.raises(api.UsageError, match="bagged-k2 does not take instance weights"):
        api.fit("bagged-k2", path)


# ---------------------------------------------------------------- Weka's -mbc (issue 33, item 7)
def test_markov_blanket_correction_by_hand():
    """Nodes: class 0, attributes 1..4. 1 has the class; 2 and the class are both parents
    of 3, so 2 is inside; 4 is outside and gets the class last. A node made a child of the
    class early counts for the checks after it."""
    from ensemblekit.bayesnet.k2 import markov_blanket_correction

    parents = [(), (0,), (), (2, 0), (1,)]
    assert markov_blanket_correction(parents) == [(), (0,), (), (2, 0), (1, 0)]
    # 1 gets the class first; 2, 1's parent, is then a co-parent of the class in node 1
    assert markov_blanket_correction([(), (2,), ()]) == [(), (2, 0), ()]
    with pytest.raises(ValueError, match="class without parents"):
        markov_blanket_correction([(1,), ()])


@needs_weka
@pytest.mark.parametrize("name", ["breast-cancer", "labor", "hepatitis", "credit-a", "zoo",
                                  "vote", "heart-c"])
def test_markov_blanket_equals_weka_mbc(name):
    """k2 init=empty markov_blanket=true gives BayesNet -N -mbc's probabilities. On vote and
    heart-c Weka's search takes arcs of zero score gain by round-off, which -mbc then makes
    matter: they agree through weka_rounding (issue 33, item 6)."""
    path = data_path(f"{name}.arff")
    opts = k2_options(2, "loo-probability")
    opts[opts.index("LOO-CV") + 1:opts.index("LOO-CV") + 1] = ["-N", "-mbc"]
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        model = str(Path(tmp) / "k2.model")
        run_weka("weka.classifiers.bayes.BayesNet", "-t", str(path), "-no-cv", "-d", model, *opts)
        out = run_weka("weka.classifiers.bayes.BayesNet", "-l", model, "-T", str(path),
                       "-classifications", CSV_OUT)
    weka = np.array([[float(p.lstrip("*")) for p in line.split(",")[4:]]
                     for line in out.splitlines()
                     if len(line.split(",")) > 4 and line.split(",")[0].isdigit()])
    ds = load_dataset(path)
    fitted = api.fit("k2", path, params={"init": "empty", "markov_blanket": True})
    assert weka.shape == (len(ds.y), len(ds.class_values))
    np.testing.assert_allclose(fitted.pipeline.predict_proba(ds.X), weka, rtol=0, atol=1e-11)
