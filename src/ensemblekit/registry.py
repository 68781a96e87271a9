"""Algorithm registry: registry name -> estimator factory, parameter specs and task.

The registry is plain data so that ``ensemblekit algorithms`` and ``--help`` never
import scikit-learn; the estimator classes are imported only when
:func:`make_estimator` builds one.

Every registered algorithm is built as a scikit-learn :class:`~sklearn.pipeline.Pipeline`
of two steps, ``prep`` (the preprocessing stated in the entry, fitted on training data
only, see :mod:`ensemblekit.preprocessing`) and ``model`` (the estimator itself), so a
saved model carries its own imputation values, encodings and scaling.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

CLASSIFICATION = "classification"
CLUSTERING = "clustering"
REGRESSION = "regression"


class ParameterError(ValueError):
    """A ``--set key=value`` pair names an unknown parameter or gives a bad value."""


@dataclass(frozen=True)
class Param:
    """One user-settable parameter of a registered algorithm.

    Parameters
    ----------
    name : str
        The estimator's own parameter name (scikit-learn convention).
    kind : {"int", "float", "bool", "choice"}
        How a ``--set`` value is parsed.
    default : object
        Value used when the user does not set it.
    help : str
        One-line description.
    choices : tuple of str
        Allowed values when ``kind == "choice"``.
    low, high : float or None
        Inclusive bounds for numbers (``None``: unbounded).
    none_ok : bool
        Whether ``none`` is accepted (parsed to ``None``, e.g. an unlimited depth).
    """

    name: str
    kind: str
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    none_ok: bool = False

    def describe_range(self) -> str:
        """Return the allowed values in words, e.g. ``"int >= 1"`` or ``"none|minmax"``."""
        if self.kind == "choice":
            return "|".join(self.choices)
        if self.kind == "bool":
            return "true|false"
        parts = []
        if self.low is not None:
            parts.append(f">= {_fmt_number(self.low)}")
        if self.high is not None:
            parts.append(f"<= {_fmt_number(self.high)}")
        text = f"{self.kind} {' and '.join(parts)}".strip()
        return f"{text}, or none" if self.none_ok else text

    def parse(self, text: str) -> Any:
        """Parse and check a value given on the command line.

        Raises
        ------
        ParameterError
            If ``text`` is not a valid value for this parameter.
        """
        text = text.strip()
        if self.none_ok and text.lower() == "none":
            return None
        if self.kind == "choice":
            if text not in self.choices:
                raise ParameterError(
                    f"bad value {text!r} for {self.name}: expected one of {', '.join(self.choices)}"
                )
            return text
        if self.kind == "bool":
            lowered = text.lower()
            if lowered in ("true", "yes", "1", "on"):
                return True
            if lowered in ("false", "no", "0", "off"):
                return False
            raise ParameterError(f"bad value {text!r} for {self.name}: expected true or false")
        try:
            value: float | int = int(text) if self.kind == "int" else float(text)
        except ValueError:
            raise ParameterError(f"bad value {text!r} for {self.name}: expected {self.kind}") from None
        return self.check(value)

    def check(self, value: Any) -> Any:
        """Check a number against the bounds; return it unchanged.

        Raises
        ------
        ParameterError
            If the value is not finite or lies outside ``[low, high]``.
        """
        if self.kind in ("int", "float") and value is not None:
            if isinstance(value, float) and not math.isfinite(value):
                raise ParameterError(f"bad value {value!r} for {self.name}: must be finite")
            if (self.low is not None and value < self.low) or (
                self.high is not None and value > self.high
            ):
                raise ParameterError(
                    f"bad value {_fmt_number(value)} for {self.name}: expected {self.describe_range()}"
                )
        return value


def _fmt_number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


@dataclass(frozen=True)
class AlgorithmSpec:
    """A registry entry.

    Parameters
    ----------
    name : str
        Registry name used on the command line.
    task : {"classification", "clustering"}
        What the estimator does.
    description : str
        One line for ``ensemblekit algorithms``.
    estimator : str
        ``"module:Class"`` of the estimator, imported lazily.
    params : tuple of Param
        The parameters users may set with ``--set``.
    preprocessing : str
        One line saying what is done to nominal attributes and missing values.
    encode : {"onehot", "codes"}
        How nominal attributes reach the estimator: one-hot indicator columns,
        or their integer codes as they are (with NaN for missing values; the
        estimator is then told which columns are nominal and how many values
        each has, through its ``nominal_features`` and ``n_categories``).
    impute_numeric : bool
        Replace missing numeric values by the training mean (``False`` when the
        estimator handles gaps itself).
    scale : {"none", "minmax"}
        Scaling applied in the preprocessing step (the estimator may scale again).
    fixed : dict
        Estimator arguments the user cannot change.
    shares_initial_centers : bool
        True when runs with the same seed start from the same initial centres as
        the other algorithms with this flag (``kmeans`` and ``iekm``).
    requires : tuple of (str, str)
        Optional packages the algorithm cannot run without: ``(module, how to
        install it)`` pairs (see :meth:`missing_requirement`).
    """

    name: str
    task: str
    description: str
    estimator: str
    params: tuple[Param, ...]
    preprocessing: str
    encode: str = "onehot"
    impute_numeric: bool = True
    scale: str = "none"
    fixed: dict = field(default_factory=dict)
    shares_initial_centers: bool = False
    requires: tuple[tuple[str, str], ...] = ()

    def missing_requirement(self) -> str | None:
        """Say which optional package is missing, or ``None`` when all are installed.

        Looks the modules up without importing them.
        """
        import importlib.util

        for module, install in self.requires:
            if importlib.util.find_spec(module) is None:
                return f"needs the {module} package ({install})"
        return None

    @property
    def param_names(self) -> tuple[str, ...]:
        """Names of the settable parameters, in declaration order."""
        return tuple(p.name for p in self.params)

    def defaults(self) -> dict[str, Any]:
        """Return ``{name: default}`` for every settable parameter."""
        return {p.name: p.default for p in self.params}

    def resolve(self, settings: dict[str, str] | None = None) -> dict[str, Any]:
        """Merge ``--set`` strings into the defaults, parsing and checking each.

        Raises
        ------
        ParameterError
            On an unknown key (the message lists the valid keys) or a bad value.
        """
        values = self.defaults()
        by_name = {p.name: p for p in self.params}
        for key, text in (settings or {}).items():
            if key not in by_name:
                valid = ", ".join(self.param_names) or "(none)"
                raise ParameterError(f"unknown parameter {key!r} for {self.name}; valid keys: {valid}")
            values[key] = by_name[key].parse(text)
        return values


_SEED_NOTE = "random_state comes from --seed"

_KMEANS_PARAMS = (
    Param("n_clusters", "int", 3, "number of clusters k (cluster -k sets it)", low=1),
    Param("init", "choice", "random", "initial centres: k distinct instances, or k-means++",
          choices=("random", "k-means++")),
    Param("scale", "choice", "none", "attribute scaling fitted on the training data",
          choices=("none", "minmax", "zscore")),
    Param("max_iter", "int", 300, "maximum number of assignment/update iterations", low=1,
          high=100000),
)

_NUMERIC_PREP = "nominal: one-hot; missing: training mean (numeric) / mode (nominal)"

_K2_PARAMS = (
    Param("max_parents", "int", 2, "parent limit, the class included (1 = naive Bayes; "
          "none = unlimited)", low=1, none_ok=True),
    Param("init", "choice", "naive-bayes", "initial structure", choices=("naive-bayes", "empty")),
    Param("scoring", "choice", "loo-probability",
          "LOO score: mean posterior of the true class (Weka's default) or 0/1 accuracy",
          choices=("loo-probability", "loo-accuracy")),
    Param("alpha", "float", 0.5, "Dirichlet pseudo-count of the CPTs (Weka -A)", low=1e-9, high=1e6),
    Param("discretize", "choice", "mdl", "numeric attributes: supervised MDL (Fayyad & Irani, as "
          "Weka) or equal-frequency bins", choices=("mdl", "equal-frequency")),
    Param("n_bins", "int", 10, "bins for equal-frequency discretisation", low=2, high=1000),
)

_BN_PREP = ("numeric: discretised on the training data (MDL); missing: training mode after "
            "discretisation (as Weka's BayesNet); nominal: used as they are")

_LAZY_PREP = ("nominal: codes (0/1 mismatch in the distance; one-hot, missing: training mode, "
              "for the trees); numeric: raw; missing values at the largest distance and routed "
              "by the trees")
_LAZY_NEIGHBOURS = (
    Param("beta", "float", 0.99, "beta-similarity: K = round(N (1 - beta) log4 N)",
          low=1e-6, high=0.999999),
    Param("n_neighbors", "int", None, "K directly (none = from beta)", low=0, none_ok=True),
)

ALGORITHMS: dict[str, AlgorithmSpec] = {
    spec.name: spec
    for spec in (
        AlgorithmSpec(
            name="kmeans",
            task=CLUSTERING,
            description="Lloyd's K-means from seeded initial centres shared with iekm",
            estimator="ensemblekit.clustering.kmeans:KMeans",
            params=_KMEANS_PARAMS,
            preprocessing=_NUMERIC_PREP,
            shares_initial_centers=True,
        ),
        AlgorithmSpec(
            name="iekm",
            task=CLUSTERING,
            description="Inner-Ensemble K-means: assignment by a vote over random feature subsets "
            "(Abbasian et al. 2013, Alg. 6)",
            estimator="ensemblekit.clustering.inner_kmeans:InnerEnsembleKMeans",
            params=_KMEANS_PARAMS
            + (
                Param("n_estimators", "int", 10, "ensemble size E: votes per instance and step",
                      low=1, high=1000),
                Param("max_features", "float", 0.5, "fraction of the features in each subset",
                      low=0.1, high=1.0),
                Param("bootstrap_features", "bool", False,
                      "draw subset features with replacement"),
                Param("resample", "choice", "each-iteration",
                      "redraw the E subsets at every step or once per fit",
                      choices=("each-iteration", "once")),
            ),
            preprocessing=_NUMERIC_PREP,
            shares_initial_centers=True,
        ),
        AlgorithmSpec(
            name="knn",
            task=CLASSIFICATION,
            description="k-nearest-neighbour classifier on min-max scaled attributes (like Weka IBk)",
            estimator="sklearn.neighbors:KNeighborsClassifier",
            params=(
                Param("n_neighbors", "int", 1, "number of neighbours k (Weka IBk default 1)", low=1),
                Param("weights", "choice", "uniform", "vote weighting",
                      choices=("uniform", "distance")),
            ),
            preprocessing="nominal: one-hot; missing: training mean/mode; numeric: min-max to [0, 1]",
            scale="minmax",
        ),
        AlgorithmSpec(
            name="k2",
            task=CLASSIFICATION,
            description="Bayesian network by global K2 search with the leave-one-out score "
            "(Weka BayesNet, global.K2 -S LOO-CV; Abbasian et al. 2013, Alg. 2-3)",
            estimator="ensemblekit.bayesnet.classifier:K2Classifier",
            params=_K2_PARAMS,
            preprocessing=_BN_PREP,
            encode="codes",
            impute_numeric=False,
        ),
        AlgorithmSpec(
            name="iebn",
            task=CLASSIFICATION,
            description="Inner-Ensemble k2: each structure scored by the mean leave-one-out score "
            "over E samples (Abbasian et al. 2013, Alg. 4); one network",
            estimator="ensemblekit.bayesnet.inner:InnerEnsembleK2Classifier",
            params=(
                Param("n_estimators", "int", 10, "ensemble size E: samples the score averages over",
                      low=1, high=1000),
                Param("max_samples", "float", 0.5, "sample size as a fraction of the training set",
                      low=1e-6, high=1.0),
                Param("bootstrap", "bool", False, "draw the samples with replacement"),
                Param("loo_duplicates", "choice", "one", "leaving out a duplicated row removes one "
                      "copy (as Weka's weighted update) or all copies", choices=("one", "all")),
            ) + _K2_PARAMS,
            preprocessing=_BN_PREP,
            encode="codes",
            impute_numeric=False,
        ),
        AlgorithmSpec(
            name="bagged-k2",
            task=CLASSIFICATION,
            description="bagging of k2 (BGBN): members' class probabilities averaged, as Weka's Bagging",
            estimator="ensemblekit.bayesnet.bagging:BaggedK2Classifier",
            params=(
                Param("n_estimators", "int", 10, "number of bagged networks", low=1, high=1000),
                Param("max_samples", "float", 1.0, "bag size as a fraction of the training set",
                      low=1e-6, high=1.0),
                Param("bootstrap", "bool", True, "draw bags with replacement"),
            ) + _K2_PARAMS,
            preprocessing=_BN_PREP + "; each member discretises its own bag",
            encode="codes",
            impute_numeric=False,
        ),
        AlgorithmSpec(
            name="c45",
            task=CLASSIFICATION,
            description="unpruned entropy decision tree (scikit-learn binary tree, not Quinlan's C4.5)",
            estimator="ensemblekit.classifiers.c45:C45Tree",
            params=(
                Param("min_samples_leaf", "int", 2, "minimum instances per leaf (J48 -M)", low=1),
                Param("max_depth", "int", None, "maximum depth (none = unlimited)", low=1,
                      none_ok=True),
            ),
            preprocessing="nominal: one-hot (missing: training mode); numeric missing values "
            "kept (the tree routes them)",
            impute_numeric=False,
        ),
        # --- cluster ensembles and clustering baselines (issue 5) go here ---
        # Cluster ensembles (Strehl & Ghosh 2002): E K-means members on random feature
        # subsets drawn as iekm draws them, from the seeded initial centres shared with
        # kmeans and iekm (so shares_initial_centers), then a consensus function.
        *(
            AlgorithmSpec(
                name=name,
                task=CLUSTERING,
                description=description,
                estimator=f"ensemblekit.clustering.consensus:{class_name}",
                params=_KMEANS_PARAMS + (
                    Param("n_estimators", "int", 10, "ensemble size E: number of K-means members",
                          low=1, high=1000),
                    Param("max_features", "float", 0.5, "fraction of the features in each "
                          "member's subset (as iekm)", low=0.1, high=1.0),
                    Param("bootstrap_features", "bool", False,
                          "draw subset features with replacement"),
                ) + extra,
                preprocessing=_NUMERIC_PREP,
                fixed=fixed,
                shares_initial_centers=True,
                requires=(("kahypar", "pip install 'ensemblekit[hypergraph]'"),)
                if name == "hgpa" else (),
            )
            for name, class_name, description, extra, fixed in (
                ("cspa", "CSPA", "cluster ensemble, CSPA consensus: co-association graph cut by "
                 "METIS (spectral without pymetis); at most 10,000 instances (Strehl & Ghosh 2002)",
                 (Param("partitioner", "choice", "auto", "graph partitioner (auto: METIS when "
                        "pymetis is installed)", choices=("auto", "metis", "spectral")),
                  Param("imbalance", "float", 0.05, "allowed part-size excess", low=0.001,
                        high=1.0)), {}),
                ("hgpa", "HGPA", "cluster ensemble, HGPA consensus: balanced hypergraph cut "
                 "(needs kahypar; Strehl & Ghosh 2002)",
                 (Param("imbalance", "float", 0.05, "allowed part-size excess", low=0.001,
                        high=1.0),
                 Param("objective", "choice", "cut", "hyperedges cut (the paper) or "
                       "connectivity - 1", choices=("cut", "km1"))), {}),
                ("mcla", "MCLA", "cluster ensemble, MCLA consensus: meta-clustering of the "
                 "members' clusters by METIS (Strehl & Ghosh 2002)",
                 (Param("partitioner", "choice", "auto", "meta-graph partitioner (auto: METIS "
                        "when pymetis is installed)", choices=("auto", "metis", "spectral")),
                  Param("imbalance", "float", 0.05, "allowed meta-cluster weight excess",
                        low=0.001, high=1.0)), {}),
                ("hac-single", "CoAssociationHAC", "cluster ensemble, co-association consensus "
                 "by single-linkage clustering", (), {"linkage": "single"}),
                ("hac-average", "CoAssociationHAC", "cluster ensemble, co-association consensus "
                 "by average-linkage clustering", (), {"linkage": "average"}),
                ("hac-complete", "CoAssociationHAC", "cluster ensemble, co-association consensus "
                 "by complete-linkage clustering", (), {"linkage": "complete"}),
            )
        ),
        AlgorithmSpec(
            name="pam",
            task=CLUSTERING,
            description="partitioning around medoids, BUILD + SWAP (kmedoids package; as R "
            "cluster::pam)",
            estimator="ensemblekit.clustering.baselines:PAM",
            params=(
                _KMEANS_PARAMS[0],
                Param("scale", "choice", "none", "attribute scaling fitted on the training data",
                      choices=("none", "minmax", "zscore")),
                Param("max_iter", "int", 300, "maximum SWAP passes", low=1, high=100000),
            ),
            preprocessing=_NUMERIC_PREP,
        ),
        AlgorithmSpec(
            name="diana",
            task=CLUSTERING,
            description="divisive analysis (Kaufman & Rousseeuw), the tree cut into k clusters",
            estimator="ensemblekit.clustering.baselines:DIANA",
            params=(
                _KMEANS_PARAMS[0],
                Param("scale", "choice", "none", "attribute scaling fitted on the training data",
                      choices=("none", "minmax", "zscore")),
            ),
            preprocessing=_NUMERIC_PREP,
        ),
        AlgorithmSpec(
            name="gmm",
            task=CLUSTERING,
            description="Gaussian mixture, covariance type (and k) chosen by BIC: a stand-in "
            "for R's Mclust",
            estimator="ensemblekit.clustering.baselines:GaussianMixtureBIC",
            params=(
                _KMEANS_PARAMS[0],
                Param("covariance_type", "choice", "auto", "covariance structure (auto: lowest "
                      "BIC of the four)", choices=("auto", "full", "tied", "diag", "spherical")),
                Param("select_k", "bool", False, "also choose k in 1..n_clusters by BIC"),
                Param("n_init", "int", 1, "EM restarts per fit", low=1, high=1000),
                Param("max_iter", "int", 100, "EM iterations per restart", low=1, high=100000),
                Param("scale", "choice", "none", "attribute scaling fitted on the training data",
                      choices=("none", "minmax", "zscore")),
            ),
            preprocessing=_NUMERIC_PREP,
        ),
        AlgorithmSpec(
            name="rf-cluster",
            task=CLUSTERING,
            description="random-forest clustering: PAM on 1 - proximity of a forest that tells "
            "the data from column-permuted copies (Breiman; Shi & Horvath 2006)",
            estimator="ensemblekit.clustering.baselines:RandomForestClustering",
            params=(
                _KMEANS_PARAMS[0],
                Param("n_estimators", "int", 500, "trees in the forest", low=1, high=100000),
                Param("max_features", "choice", "sqrt", "attributes tried per split",
                      choices=("sqrt", "log2")),
                Param("min_samples_leaf", "int", 1, "minimum instances per leaf", low=1),
                Param("max_iter", "int", 300, "maximum PAM swap passes", low=1, high=100000),
            ),
            preprocessing=_NUMERIC_PREP,
        ),
        # --- lazy ensembles and their rivals (issue 6) go here ---
        # Lazy ensembles (Zhu & Yang 2008; Homayouni, Hashemi & Hamzeh): the estimators get
        # nominal codes and NaN, so that their distance sees nominal mismatches and missing
        # values; their trees one-hot the nominal codes (missing: training mode) as c45 does.
        AlgorithmSpec(
            name="lazy-bagging",
            task=CLASSIFICATION,
            description="lazy bagging (LB): per test instance, L unpruned trees on bootstrap bags "
            "enriched with its K nearest neighbours (gain-ratio distance), majority vote "
            "(Zhu & Yang 2008)",
            estimator="ensemblekit.lazy.lazy_bagging:LazyBaggingClassifier",
            params=(
                Param("n_estimators", "int", 10, "bags and trees per test instance (L)",
                      low=1, high=1000),
                *_LAZY_NEIGHBOURS,
                Param("voting", "choice", "hard", "majority vote or mean tree probabilities",
                      choices=("hard", "soft")),
                Param("min_samples_leaf", "int", 2, "minimum instances per leaf (J48 -M)", low=1),
                Param("max_depth", "int", None, "maximum tree depth (none = unlimited)", low=1,
                      none_ok=True),
            ),
            preprocessing=_LAZY_PREP,
            encode="codes",
            impute_numeric=False,
        ),
        AlgorithmSpec(
            name="lazy-stacking",
            task=CLASSIFICATION,
            description="lazy stacking (LS): lazy-bagging's bags, the learner type cycling "
            "tree/kNN/naive Bayes over them, majority vote (Homayouni, Hashemi & Hamzeh)",
            estimator="ensemblekit.lazy.lazy_stacking:LazyStackingClassifier",
            params=(
                Param("n_estimators", "int", 10, "bags and members per test instance (L)",
                      low=1, high=1000),
                Param("base_estimators", "choice", "tree,knn,nb",
                      "learner types cycled over the bags",
                      choices=("tree,knn,nb", "tree,nb,knn", "knn,tree,nb", "knn,nb,tree",
                               "nb,tree,knn", "nb,knn,tree", "tree,knn", "knn,tree", "tree,nb",
                               "nb,tree", "knn,nb", "nb,knn", "tree", "knn", "nb")),
                Param("combiner", "choice", "vote", "majority vote (the paper) or a local "
                      "stacked combination of out-of-bag predictions", choices=("vote", "stacking")),
                *_LAZY_NEIGHBOURS,
                Param("knn_neighbors", "int", 1, "k of the kNN members (Weka IBk default 1)",
                      low=1),
                Param("meta_rows", "int", 100, "nearest training instances that train the "
                      "stacked combination", low=1),
                Param("min_samples_leaf", "int", 2, "minimum instances per leaf of the trees",
                      low=1),
                Param("max_depth", "int", None, "maximum tree depth (none = unlimited)", low=1,
                      none_ok=True),
            ),
            preprocessing=_LAZY_PREP,
            encode="codes",
            impute_numeric=False,
        ),
        AlgorithmSpec(
            name="bagging",
            task=CLASSIFICATION,
            description="traditional bagging (TB) of the unpruned c45 tree, probabilities "
            "averaged as Weka's Bagging",
            estimator="ensemblekit.classifiers.bagging:BaggedTreeClassifier",
            params=(
                Param("n_estimators", "int", 10, "number of bagged trees (L)", low=1, high=1000),
                Param("voting", "choice", "soft", "mean tree probabilities (Weka) or majority vote",
                      choices=("soft", "hard")),
                Param("min_samples_leaf", "int", 2, "minimum instances per leaf (J48 -M)", low=1),
                Param("max_depth", "int", None, "maximum tree depth (none = unlimited)", low=1,
                      none_ok=True),
            ),
            preprocessing="nominal: one-hot (missing: training mode); numeric missing values "
            "kept (the trees route them)",
            impute_numeric=False,
        ),
    )
}


# --- rule ensembles (issue 7) ---
# ISLE trees post-processed into one regression model (Akdemir & Jannink 2014, Sect. 2);
# every entry is RuleEnsembleRegressor with a fixed method and basis.
_ISLE_PARAMS = (
    Param("n_estimators", "int", 200, "ISLE trees M", low=1, high=100000),
    Param("max_depth", "int", 3, "tree depth (mean leaves 2**max_depth with tree_size=random)",
          low=1, high=30),
    Param("max_samples", "float", None, "subsample fraction per tree, without replacement "
          "(none: min(N/2, 100 + 6 sqrt N) rows, Friedman & Popescu)", low=1e-6, high=1.0,
          none_ok=True),
    Param("max_features", "float", 1.0, "fraction of the attributes tried per split", low=1e-6,
          high=1.0),
    Param("tree_size", "choice", "fixed", "every tree max_depth deep, or RuleFit's random sizes",
          choices=("fixed", "random")),
    Param("cv", "int", 10, "folds of the inner cross-validation that tunes the weights", low=2,
          high=1000),
)
_MEMORY = Param("learning_rate", "float", 0.01, "ISLE memory nu: 0 fits every tree to y, > 0 to "
                "the residuals of the trees before it", low=0.0, high=1.0)
_MAX_COMPONENTS = Param("max_components", "int", 30, "most PLS components tried", low=1,
                        high=10000)
_LINEAR = Param("linear_terms", "bool", False, "also use the attributes as linear terms, "
                "winsorised and scaled as RuleFit")
_RULE_ENSEMBLES = (
    ("rule-lasso", "lasso", "rules", "RuleFit: lasso on the ISLE rules, penalty by inner CV "
     "(Friedman & Popescu 2008)", (_MEMORY, _LINEAR)),
    ("tree-lasso", "lasso", "trees", "lasso on the ISLE tree outputs, penalty by inner CV "
     "(Friedman & Popescu 2003)", (_MEMORY, _LINEAR)),
    ("rule-pls", "pls", "rules", "partial least squares on the ISLE rules, components by inner "
     "CV (Akdemir & Jannink 2014)", (_MEMORY, _LINEAR, _MAX_COMPONENTS)),
    ("tree-pls", "pls", "trees", "partial least squares on the ISLE tree outputs, components by "
     "inner CV (Akdemir & Jannink 2014)", (_MEMORY, _LINEAR, _MAX_COMPONENTS)),
    ("oob-weighted", "oob", "trees", "trees weighted by a Gaussian kernel of their out-of-bag "
     "errors, bandwidth by CV (Akdemir & Jannink 2014)", ()),
    ("oob-weighted-top", "oob", "trees", "oob-weighted keeping only the trees with the largest "
     "weights (Akdemir & Jannink 2014)", (Param(
         "top_fraction", "float", 0.6, "fraction of the trees kept", low=1e-6, high=1.0),)),
    ("rule-kernel", "kernel", "rules", "Nadaraya-Watson smoothing on the vector of rule "
     "outputs, Gaussian kernel, bandwidth by CV (Akdemir & Jannink 2014)", (_MEMORY,)),
    ("tree-kernel", "kernel", "trees", "Nadaraya-Watson smoothing on the vector of tree "
     "outputs, Gaussian kernel, bandwidth by CV (Akdemir & Jannink 2014)", (_MEMORY,)),
    ("random-forest", "mean", "trees", "the ISLE trees (memory 0) averaged with equal weights, "
     "as bagging and random forests", ()),
)
ALGORITHMS.update({
    name: AlgorithmSpec(
        name=name,
        task=REGRESSION,
        description=description,
        estimator="ensemblekit.rules.postprocess:RuleEnsembleRegressor",
        params=_ISLE_PARAMS + extra,
        preprocessing=_NUMERIC_PREP,
        fixed={"method": method, "basis": basis,
               **({} if any(p.name == "learning_rate" for p in extra) else {"learning_rate": 0.0})},
    )
    for name, method, basis, description, extra in _RULE_ENSEMBLES
})

# --- ISCA / SS-ISCA (issue 7) ---
# Rule-ensemble clustering (Akdemir & Jannink 2014, Sect. 3): one estimator, ISCA; ss-isca
# fixes supervised=True and takes its target matrix from `cluster --targets`.
_ISCA_PARAMS = (
    Param("n_clusters", "int", 3, "number of clusters k (cluster -k sets it)", low=1),
    Param("n_stages", "int", 50, "stages M: random targets, each explained by its own rules",
          low=1, high=100000),
    Param("n_rules", "int", 20, "new rules m gathered per stage (ISLE trees grown until m "
          "rules not seen before)", low=1, high=100000),
    Param("learning_rate", "float", 0.0, "memory nu: each new target loses nu times its "
          "projection on the rules so far (0: independent stages)", low=0.0, high=1.0),
    Param("max_depth", "int", 3, "depth of the ISLE trees (longest rule)", low=1, high=30),
    Param("max_samples", "float", None, "subsample fraction per tree, without replacement "
          "(none: min(N/2, 100 + 6 sqrt N) rows, Friedman & Popescu)", low=1e-6, high=1.0,
          none_ok=True),
    Param("linkage", "choice", "average", "hierarchical clustering of 1 - rule agreement",
          choices=("average", "single", "complete")),
)
ALGORITHMS.update({
    "isca": AlgorithmSpec(
        name="isca",
        task=CLUSTERING,
        description="ISCA: rules of ISLE trees fitted to random projections of the attributes; "
        "average linkage on 1 - rule agreement (Akdemir & Jannink 2014, Alg. 2)",
        estimator="ensemblekit.rules.isca:ISCA",
        params=_ISCA_PARAMS,
        preprocessing=_NUMERIC_PREP,
    ),
    "ss-isca": AlgorithmSpec(
        name="ss-isca",
        task=CLUSTERING,
        description="SS-ISCA: as isca, the rules fitted to random projections of target "
        "attributes (cluster --targets) (Akdemir & Jannink 2014, Sect. 3)",
        estimator="ensemblekit.rules.isca:ISCA",
        params=_ISCA_PARAMS + (
            Param("similarity", "choice", "agreement", "rule agreement, or rules weighted by "
                  "|w| / sqrt(s (1 - s)) (one target only)", choices=("agreement", "importance")),
            Param("postprocess", "choice", "pls", "similarity=importance: rule weights w by PLS "
                  "or lasso of the target on the rules", choices=("pls", "lasso")),
        ),
        preprocessing=_NUMERIC_PREP + "; targets: numeric as they are, nominal one-hot, missing: "
        "column mean",
        fixed={"supervised": True},
    ),
})


class UnknownAlgorithmError(KeyError):
    """The name is not in :data:`ALGORITHMS`."""

    def __str__(self) -> str:  # KeyError quotes its argument; we want plain text
        return str(self.args[0])


def get(name: str) -> AlgorithmSpec:
    """Return the registry entry for ``name``.

    Raises
    ------
    UnknownAlgorithmError
        If ``name`` is not registered; the message lists the registered names.
    """
    try:
        return ALGORITHMS[name]
    except KeyError:
        known = ", ".join(sorted(ALGORITHMS))
        raise UnknownAlgorithmError(f"unknown algorithm {name!r}; known: {known}") from None


def make_estimator(name: str, schema, params: dict[str, Any] | None = None,
                   random_state: int | None = None):
    """Build the unfitted pipeline ``prep -> model`` for a registered algorithm.

    Parameters
    ----------
    name : str
        Registry name.
    schema : ensemblekit.data.Schema
        Training schema; fixes which feature columns are nominal and their
        categories, so encodings do not depend on the values a fold happens to hold.
    params : dict, optional
        Already resolved parameters (see :meth:`AlgorithmSpec.resolve`); defaults
        when omitted.
    random_state : int or None
        Seed passed to estimators that take one.

    Returns
    -------
    sklearn.pipeline.Pipeline
        Unfitted pipeline with steps ``prep`` and ``model``.

    Raises
    ------
    UnknownAlgorithmError, ParameterError
    """
    import importlib

    from sklearn.pipeline import Pipeline

    from ensemblekit.preprocessing import make_preprocessor

    spec = get(name)
    values = spec.defaults()
    values.update(params or {})
    for p in spec.params:
        p.check(values[p.name])
    module_name, class_name = spec.estimator.split(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    kwargs = dict(spec.fixed)
    kwargs.update(values)
    if "random_state" in cls._get_param_names():
        kwargs["random_state"] = random_state
    if spec.encode == "codes":
        nominal = [i for i, a in enumerate(schema.features) if a.kind != "numeric"]
        kwargs["nominal_features"] = nominal
        kwargs["n_categories"] = [max(1, len(schema.features[i].values)) for i in nominal]
        prep = "passthrough"
    else:
        prep = make_preprocessor(schema, impute_numeric=spec.impute_numeric, scale=spec.scale)
    return Pipeline([("prep", prep), ("model", cls(**kwargs))])


def model_feature_names(name: str, schema) -> list[str]:
    """Names of the columns the estimator of ``name`` sees, for reports.

    One-hot algorithms see ``attr`` and ``attr=value`` columns
    (:func:`ensemblekit.preprocessing.feature_names`); ``codes`` algorithms see
    the attributes themselves.
    """
    if get(name).encode == "codes":
        return [a.name for a in schema.features]
    from ensemblekit.preprocessing import feature_names

    return feature_names(schema)


def parse_settings(pairs: list[str] | tuple[str, ...]) -> dict[str, str]:
    """Split ``["key=value", ...]`` from ``--set`` into a dict (later keys win).

    Raises
    ------
    ParameterError
        If an item has no ``=`` or an empty key.
    """
    out: dict[str, str] = {}
    for item in pairs:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ParameterError(f"--set expects key=value, got {item!r}")
        out[key.strip()] = value
    return out
