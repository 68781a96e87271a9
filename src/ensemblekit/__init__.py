"""ensemblekit: ensemble methods inside and around learners, on ARFF and CSV files.

The package is a scikit-learn compatible library under the ``ensemblekit``
command line. The application layer (:mod:`ensemblekit.api`) and the public
estimators are importable from here::

    from ensemblekit import compare, K2Classifier

They are loaded lazily, on first use (PEP 562), so importing the package is cheap:
no numeric library is imported until a name that needs one is used.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

#: Public name -> module that defines it.
_PUBLIC = {
    **{name: "ensemblekit.api" for name in (
        "fit", "predict", "evaluate", "evaluate_model", "evaluate_split", "split_rows",
        "cluster", "select_k", "compare", "load_model", "save_model", "load_data",
        "describe_data", "describe_model", "plot_comparison", "plot_paths", "reading",
        "predict_chunks", "UsageError")},
    **{name: "ensemblekit.results" for name in (
        "FittedModel", "Prediction", "ModelEvaluation", "Clustering", "KSelection", "Comparison")},
    "K2Classifier": "ensemblekit.bayesnet.classifier",
    "InnerEnsembleK2Classifier": "ensemblekit.bayesnet.inner",
    "BaggedK2Classifier": "ensemblekit.bayesnet.bagging",
    "KMeans": "ensemblekit.clustering.kmeans",
    "InnerEnsembleKMeans": "ensemblekit.clustering.inner_kmeans",
    "CSPA": "ensemblekit.clustering.consensus",
    "HGPA": "ensemblekit.clustering.consensus",
    "MCLA": "ensemblekit.clustering.consensus",
    "CoAssociationHAC": "ensemblekit.clustering.consensus",
    "PAM": "ensemblekit.clustering.baselines",
    "DIANA": "ensemblekit.clustering.baselines",
    "GaussianMixtureBIC": "ensemblekit.clustering.baselines",
    "RandomForestClustering": "ensemblekit.clustering.baselines",
    "CartEntropyTree": "ensemblekit.classifiers.cart",
    "C45Tree": "ensemblekit.classifiers.c45",
    "InnerEnsembleC45Tree": "ensemblekit.classifiers.iec45",
    "IBk": "ensemblekit.classifiers.ibk",
    "BaggedTreeClassifier": "ensemblekit.classifiers.bagging",
    "LazyBaggingClassifier": "ensemblekit.lazy.lazy_bagging",
    "LazyStackingClassifier": "ensemblekit.lazy.lazy_stacking",
    "RuleEnsembleRegressor": "ensemblekit.rules.postprocess",
    "ISCA": "ensemblekit.rules.isca",
    "MDLDiscretizer": "ensemblekit.discretize",
}

__all__ = ["__version__", *_PUBLIC]


def __getattr__(name: str):
    """Import a public name's module on first use (PEP 562)."""
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'ensemblekit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC))
