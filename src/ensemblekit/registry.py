"""Algorithm registry: registry name -> estimator, the parameters ``--set`` may change, task.

An entry names its estimator class (``"module:Class"``), the parameters the command line
exposes, the preprocessing and the capabilities. What a parameter accepts, its default and
help are read from the estimator's ``_parameter_constraints`` (:mod:`ensemblekit.constraints`)
and ``__init__`` when :attr:`AlgorithmSpec.params` is first needed: the registry is plain
data, and importing it imports no estimator, numpy or scikit-learn.

Each algorithm is built as a scikit-learn :class:`~sklearn.pipeline.Pipeline` of ``prep``
(the entry's preprocessing, fitted on training data only) and ``model`` (the estimator),
so a saved model carries its own imputation values, encodings and scaling.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ensemblekit.constraints import Constraint, InvalidParameterError
from ensemblekit.errors import ColumnError, InputError
from ensemblekit.names import did_you_mean, resolve

CLASSIFICATION = "classification"
CLUSTERING = "clustering"
REGRESSION = "regression"

#: How ``ensemblekit show`` describes a fitted model (:attr:`AlgorithmSpec.model_summary`):
#: prototypes, tree, network, bag of networks, ISCA's rules and clusters, a rule ensemble's
#: terms, the number of training instances it stores, or nothing.
MODEL_SUMMARIES = ("prototypes", "tree", "network", "bagged-networks", "rule-clusters",
                   "rule-ensemble", "stored-instances", "none")


class ParameterError(InputError):
    """A ``--set key=value`` pair names an unknown parameter or gives a bad value."""


@dataclass(frozen=True)
class Param:
    """One user-settable parameter of a registered algorithm.

    Entries read their parameters from the estimator's declaration
    (:meth:`declared`); a foreign estimator class, which declares nothing, is
    described by ``Param(name, kind, default, help, ...)`` directly (inclusive
    bounds).

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
        Bounds for numbers (None: unbounded); inclusive unless ``constraint`` says not.
    none_ok : bool
        Whether ``none`` is accepted (parsed to ``None``, e.g. an unlimited depth).
    constraint : ensemblekit.constraints.Constraint or None
        The declaration the other fields come from; None builds it from them.
    """

    name: str
    kind: str
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    none_ok: bool = False
    constraint: Constraint | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        if self.constraint is None:
            object.__setattr__(self, "constraint", Constraint(self.kind, self.help, low=self.low,
                high=self.high, choices=tuple(self.choices), none_ok=self.none_ok))

    @classmethod
    def declared(cls, name: str, default: Any, constraint: Constraint) -> Param:
        """The parameter ``name`` as an estimator declares it, with the given default."""
        return cls(name, constraint.kind, default, constraint.help, constraint.choices,
                   constraint.low, constraint.high, constraint.none_ok, constraint)

    def describe_range(self) -> str:
        """Return the allowed values in words, e.g. ``"int >= 1"`` or ``"none|minmax"``."""
        return self.constraint.describe_range(arrays=False)

    def describe_type(self) -> str:
        """Return the value's type in words, e.g. ``"int"`` or ``"int or float"``."""
        return self.constraint.describe_type()

    def parse(self, text: str) -> Any:
        """Parse and check a value given on the command line.

        Raises
        ------
        ParameterError
            If ``text`` is not a valid value for this parameter.
        """
        try:
            return self.constraint.parse(text, self.name)
        except InvalidParameterError as exc:
            raise ParameterError(str(exc)) from None

    def check(self, value: Any) -> Any:
        """Check a Python value against the declaration; return it unchanged.

        Raises
        ------
        ParameterError
            If the value is not allowed (out of range, not finite, of the
            wrong type, not a choice, or None where none is not accepted).
        """
        if not self.constraint.accepts(value):
            if isinstance(value, float) and not math.isfinite(value):
                raise ParameterError(f"bad value {value!r} for {self.name}: must be finite")
            shown = _fmt_number(value) if _is_number(value) else repr(value)
            raise ParameterError(
                f"bad value {shown} for {self.name}: expected {self.describe_range()}"
            )
        return value


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _fmt_number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


class _DeclaredParams(Sequence):
    """An entry's :class:`Param` tuple, read from its estimator class on first use.

    The estimator module (and so scikit-learn) is imported only then.
    """

    def __init__(self, spec: AlgorithmSpec):
        self._spec = spec
        self._items: tuple[Param, ...] | None = None

    def _load(self) -> tuple[Param, ...]:
        if self._items is None:
            self._items = _declared_params(self._spec)
        return self._items

    def __getitem__(self, index):
        return self._load()[index]

    def __len__(self) -> int:
        return len(self._spec.exposed)

    def __iter__(self):
        return iter(self._load())

    def __add__(self, other) -> tuple[Param, ...]:
        return self._load() + tuple(other)

    def __eq__(self, other) -> bool:
        return tuple(self) == tuple(other) if isinstance(other, Sequence) else NotImplemented

    __hash__ = None

    def __repr__(self) -> str:  # no import: a spec's repr stays cheap
        return f"<parameters {', '.join(self._spec.exposed)} declared by {self._spec.estimator}>"


def _declared_params(spec: AlgorithmSpec) -> tuple[Param, ...]:
    """The exposed parameters of ``spec`` from its estimator's declaration and ``__init__``."""
    import inspect

    cls = spec.model_class()
    declared = getattr(cls, "_parameter_constraints", None)
    if declared is None:
        raise TypeError(f"{spec.name}: {cls.__name__} declares no _parameter_constraints; "
                        "give the entry its params")
    signature = inspect.signature(cls.__init__).parameters
    params = []
    for name in spec.exposed:
        if name not in declared or name not in signature:
            raise TypeError(f"{spec.name} exposes {name!r}, which {cls.__name__} does not "
                            "take or declare")
        default = spec.cli_defaults.get(name, signature[name].default)
        params.append(Param.declared(name, default, declared[name]))
    return tuple(params)


@dataclass(frozen=True)
class AlgorithmSpec:
    """A registry entry.

    Parameters
    ----------
    name : str
        Registry name used on the command line.
    task : {"classification", "clustering", "regression"}
        What the estimator does.
    description : str
        One line for ``ensemblekit algorithms``.
    estimator : str
        ``"module:Class"`` of the estimator, imported lazily.
    model : str or None
        ``"module:Class"`` of the estimator's *model class*: the base of the
        estimator that holds its parameters (``__init__`` and
        ``_parameter_constraints``), its fitted-state declaration
        (``_fitted_state``, ``_check_state``; see :mod:`ensemblekit.state`) and
        its prediction, and imports numpy only. ``predict``, ``show`` and
        ``evaluate MODEL`` rebuild a model file as this class, without
        scikit-learn. None (an algorithm that refits at predict time, or one a
        program registers): the estimator class is its own model class.
    preprocessing : str
        One line saying what is done to nominal attributes and missing values.
    exposed : tuple of str
        The estimator parameters users may set with ``--set``, in display
        order. Their kinds, ranges and help lines come from the class's
        ``_parameter_constraints``, their defaults from its ``__init__``.
    cli_defaults : dict
        Defaults of the command line that differ from the estimator's
        ``__init__`` defaults (e.g. ``oob-weighted-top`` keeps 60% of the trees).
    params : tuple of Param or None
        Leave it None: the parameters are then read from the estimator's declaration when
        first needed (a sequence of :class:`Param`, in the order of ``exposed``). Only an
        entry whose estimator class is not ensemblekit's, and so declares nothing, lists its
        :class:`Param`\\ s here (no entry shipped with ensemblekit does).
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
    takes_members : bool
        A cluster ensemble: ``fit`` accepts given member labelings
        (``members=``) instead of building its own.
    exports_similarity : bool
        The fitted model holds an instance similarity matrix (``similarity_``)
        that ``cluster --similarity-out`` writes.
    needs_targets : bool
        ``fit`` needs target columns (``cluster --targets``) as ``y``.
    predicts_new_rows : bool
        The fitted model's ``predict`` labels rows it was not fitted on (always
        true for classification and regression).
    widens_at_predict : bool
        The prediction of a row also depends on the rows predicted before it in
        the same call: ``knn``, whose numeric ranges each test row widens, as
        Weka's IBk. The estimator class then has a ``widened(Xt)`` method giving
        a copy that carries this state over to a later call, and ``predict``
        hands each chunk of a file, and each task on a cluster, what the rows
        before it left, so predictions do not depend on how the rows are cut.
    model_summary : str
        How ``ensemblekit show`` describes a fitted model, one of
        :data:`MODEL_SUMMARIES`.
    aliases : tuple of str
        Other names of the entry (``j48`` for ``c45``): :func:`get` gives the
        same entry for them. Commands accept them and report the entry's own
        name (in model files, result tables and journals: a model fitted as
        ``j48`` is a ``c45`` model); ``ensemblekit algorithms`` lists the entry
        once, under its own name, with its aliases.

    Raises
    ------
    ValueError
        On an unknown task or model summary, a classifier or regressor that
        does not predict new rows, or a default given for a parameter that is
        not exposed.
    """

    name: str
    task: str
    description: str
    estimator: str
    preprocessing: str
    model: str | None = None
    exposed: tuple[str, ...] = ()
    cli_defaults: dict = field(default_factory=dict)
    params: Sequence[Param] | None = None
    encode: str = "onehot"
    impute_numeric: bool = True
    scale: str = "none"
    fixed: dict = field(default_factory=dict)
    shares_initial_centers: bool = False
    requires: tuple[tuple[str, str], ...] = ()
    takes_members: bool = False
    exports_similarity: bool = False
    needs_targets: bool = False
    predicts_new_rows: bool = True
    widens_at_predict: bool = False
    model_summary: str = "none"
    aliases: tuple[str, ...] = ()

    def __post_init__(self):
        if self.task not in (CLASSIFICATION, CLUSTERING, REGRESSION):
            raise InputError(f"{self.name}: unknown task {self.task!r}")
        if self.model_summary not in MODEL_SUMMARIES:
            raise InputError(f"{self.name}: model_summary must be one of "
                             f"{', '.join(MODEL_SUMMARIES)}, got {self.model_summary!r}")
        if self.task != CLUSTERING and not self.predicts_new_rows:
            raise InputError(f"{self.name}: a {self.task} algorithm predicts new rows")
        if set(self.cli_defaults) - set(self.exposed):
            raise InputError(f"{self.name}: cli_defaults for parameters it does not expose: "
                             f"{sorted(set(self.cli_defaults) - set(self.exposed))}")
        if self.params is None:
            object.__setattr__(self, "params", _DeclaredParams(self))
        else:
            object.__setattr__(self, "params", tuple(self.params))
            object.__setattr__(self, "exposed", tuple(p.name for p in self.params))

    def estimator_class(self) -> type:
        """Import and return the estimator class (scikit-learn is imported here)."""
        import importlib

        module_name, class_name = self.estimator.split(":")
        return getattr(importlib.import_module(module_name), class_name)

    def model_class(self) -> type:
        """Import and return the model class (see ``model``); numpy only when ``model`` is set."""
        if self.model is None:
            return self.estimator_class()
        import importlib

        module_name, class_name = self.model.split(":")
        return getattr(importlib.import_module(module_name), class_name)

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
        """Names of the settable parameters, in display order (imports nothing)."""
        return tuple(self.exposed)

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
                raise ParameterError(f"unknown parameter {key!r} for {self.name}"
                                     f"{did_you_mean(key, self.param_names)}; valid keys: {valid}")
            values[key] = by_name[key].parse(text)
        return values


_KMEANS = ("n_clusters", "init", "scale", "max_iter")
_SUBSETS = ("n_estimators", "max_features", "bootstrap_features")
_NUMERIC_PREP = "nominal: one-hot; missing: training mean (numeric) / mode (nominal)"

_K2 = ("max_parents", "init", "scoring", "alpha", "discretize", "n_bins")
_BN_PREP = ("numeric: discretised on the training data (MDL); missing: training mode after "
            "discretisation (as Weka's BayesNet); nominal: used as they are")

_LAZY_PREP = ("nominal: codes (0/1 mismatch in the distance; used as they are by c45 trees, "
              "one-hot with missing: training mode by cart-entropy trees); numeric: raw; missing "
              "values at the largest distance and handled by the trees")

ALGORITHMS: dict[str, AlgorithmSpec] = {
    spec.name: spec
    for spec in (
        AlgorithmSpec(
            name="kmeans",
            task=CLUSTERING,
            description="Lloyd's K-means from seeded initial centres shared with iekm",
            estimator="ensemblekit.clustering.kmeans:KMeans",
            model="ensemblekit.clustering.kmeans_model:KMeansModel",
            exposed=_KMEANS,
            preprocessing=_NUMERIC_PREP,
            shares_initial_centers=True,
            model_summary="prototypes",
        ),
        AlgorithmSpec(
            name="iekm",
            task=CLUSTERING,
            description="Inner-Ensemble K-means: assignment by a vote over random feature subsets "
            "(Abbasian et al. 2013, Alg. 6)",
            estimator="ensemblekit.clustering.inner_kmeans:InnerEnsembleKMeans",
            model="ensemblekit.clustering.inner_kmeans_model:InnerEnsembleKMeansModel",
            exposed=_KMEANS + _SUBSETS + ("resample",),
            preprocessing=_NUMERIC_PREP,
            shares_initial_centers=True,
            model_summary="prototypes",
        ),
        AlgorithmSpec(
            name="knn",
            task=CLASSIFICATION,
            description="k-nearest-neighbour classifier as Weka's IBk (Euclidean distance on "
            "min-max ranges, 0/1 nominal mismatch, IBk's missing-value rules, k-th ties vote)",
            estimator="ensemblekit.classifiers.ibk:IBk",
            model="ensemblekit.classifiers.ibk_model:IBkModel",
            exposed=("n_neighbors", "weights", "range_update", "cross_validate", "mean_squared",
                     "window_size"),
            preprocessing="nominal: codes (0/1 mismatch); numeric: scaled by the training "
            "minimum and maximum (widened by each test row, as Weka); missing: IBk's "
            "distances (none imputed)",
            encode="codes",
            impute_numeric=False,
            widens_at_predict=True,
            model_summary="stored-instances",
        ),
        AlgorithmSpec(
            name="k2",
            task=CLASSIFICATION,
            description="Bayesian network by global K2 search with the leave-one-out score "
            "(Weka BayesNet, global.K2 -S LOO-CV; Abbasian et al. 2013, Alg. 2-3)",
            estimator="ensemblekit.bayesnet.classifier:K2Classifier",
            model="ensemblekit.bayesnet.classifier_model:K2Model",
            exposed=(*_K2, "markov_blanket", "random_order", "cv_type", "n_folds",
                     "weka_rounding"),
            preprocessing=_BN_PREP,
            encode="codes",
            impute_numeric=False,
            model_summary="network",
        ),
        AlgorithmSpec(
            name="iebn",
            task=CLASSIFICATION,
            description="Inner-Ensemble k2: each structure scored by the mean leave-one-out score "
            "over E samples (Abbasian et al. 2013, Alg. 4); one network",
            estimator="ensemblekit.bayesnet.inner:InnerEnsembleK2Classifier",
            model="ensemblekit.bayesnet.inner_model:InnerEnsembleK2Model",
            exposed=("n_estimators", "max_samples", "bootstrap", "loo_duplicates") + _K2,
            preprocessing=_BN_PREP,
            encode="codes",
            impute_numeric=False,
            model_summary="network",
        ),
        AlgorithmSpec(
            name="bagged-k2",
            task=CLASSIFICATION,
            description="bagging of k2 (BGBN): members' class probabilities averaged, as "
            "Weka's Bagging",
            estimator="ensemblekit.bayesnet.bagging:BaggedK2Classifier",
            model="ensemblekit.bayesnet.bagging_model:BaggedK2Model",
            exposed=("n_estimators", "max_samples", "bootstrap") + _K2,
            preprocessing=_BN_PREP + "; each member discretises its own bag",
            encode="codes",
            impute_numeric=False,
            model_summary="bagged-networks",
        ),
        AlgorithmSpec(
            name="cart-entropy",
            task=CLASSIFICATION,
            description="unpruned binary decision tree grown by information gain (scikit-learn's "
            "CART-style tree with the entropy criterion; not C4.5)",
            estimator="ensemblekit.classifiers.cart:CartEntropyTree",
            model="ensemblekit.classifiers.cart_model:CartEntropyModel",
            exposed=("min_samples_leaf", "max_depth"),
            preprocessing="nominal: one-hot (missing: training mode); numeric missing values "
            "kept (the tree routes them)",
            impute_numeric=False,
            model_summary="tree",
        ),
        AlgorithmSpec(
            name="c45",
            task=CLASSIFICATION,
            description="C4.5 release 8 as Weka's J48 (gain ratio, multiway nominal splits, "
            "fractional missing values, error-based pruning with subtree raising)",
            estimator="ensemblekit.classifiers.c45:C45Tree",
            model="ensemblekit.classifiers.c45_model:C45Model",
            exposed=("confidence_factor", "min_samples_leaf", "unpruned", "subtree_raising",
                     "collapse_tree", "laplace", "binary_splits", "mdl_correction",
                     "split_point_actual_value", "reduced_error_pruning", "num_folds", "seed"),
            preprocessing="none: nominal attributes as their values, missing values as "
            "fractional instances (as J48)",
            encode="codes",
            impute_numeric=False,
            model_summary="tree",
            aliases=("j48",),
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
                model=f"ensemblekit.clustering.consensus_model:{class_name}Model",
                exposed=_KMEANS + _SUBSETS + extra,
                preprocessing=_NUMERIC_PREP,
                fixed=fixed,
                shares_initial_centers=True,
                requires=(("kahypar", "pip install 'ensemblekit[hypergraph]'"),)
                if name == "hgpa" else (),
                takes_members=True,
                model_summary="prototypes",
            )
            for name, class_name, description, extra, fixed in (
                ("cspa", "CSPA", "cluster ensemble, CSPA consensus: co-association graph cut by "
                 "METIS (spectral without pymetis); at most 10,000 instances (Strehl & Ghosh 2002)",
                 ("partitioner", "imbalance"), {}),
                ("hgpa", "HGPA", "cluster ensemble, HGPA consensus: balanced hypergraph cut "
                 "(needs kahypar; Strehl & Ghosh 2002)", ("imbalance", "objective"), {}),
                ("mcla", "MCLA", "cluster ensemble, MCLA consensus: meta-clustering of the "
                 "members' clusters by METIS (Strehl & Ghosh 2002)",
                 ("partitioner", "imbalance"), {}),
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
            model="ensemblekit.clustering.baselines_model:PAMModel",
            exposed=("n_clusters", "scale", "max_iter"),
            preprocessing=_NUMERIC_PREP,
            model_summary="prototypes",
        ),
        AlgorithmSpec(
            name="diana",
            task=CLUSTERING,
            description="divisive analysis (Kaufman & Rousseeuw), the tree cut into k clusters",
            estimator="ensemblekit.clustering.baselines:DIANA",
            model="ensemblekit.clustering.baselines_model:DIANAModel",
            exposed=("n_clusters", "scale"),
            preprocessing=_NUMERIC_PREP,
            predicts_new_rows=False,
        ),
        AlgorithmSpec(
            name="gmm",
            task=CLUSTERING,
            description="Gaussian mixture, covariance type (and k) chosen by BIC: a stand-in "
            "for R's Mclust",
            estimator="ensemblekit.clustering.baselines:GaussianMixtureBIC",
            model="ensemblekit.clustering.baselines_model:GaussianMixtureModel",
            exposed=("n_clusters", "covariance_type", "select_k", "n_init", "max_iter", "scale"),
            preprocessing=_NUMERIC_PREP,
            model_summary="prototypes",
        ),
        AlgorithmSpec(
            name="rf-cluster",
            task=CLUSTERING,
            description="random-forest clustering: PAM on 1 - proximity of a forest that tells "
            "the data from column-permuted copies (Breiman; Shi & Horvath 2006)",
            estimator="ensemblekit.clustering.baselines:RandomForestClustering",
            model="ensemblekit.clustering.baselines_model:RandomForestClusteringModel",
            exposed=("n_clusters", "n_estimators", "max_features", "min_samples_leaf",
                     "max_iter"),
            preprocessing=_NUMERIC_PREP,
        ),
        # --- lazy ensembles and their rivals (issue 6) go here ---
        # Lazy ensembles (Zhu & Yang 2008; Homayouni, Hashemi & Hamzeh): the estimators get
        # nominal codes and NaN, so that their distance sees nominal mismatches and missing
        # values; their trees (tree=c45 by default: unpruned J48, as the paper) read them as
        # c45 does, or (tree=cart-entropy) one-hot them as cart-entropy does.
        AlgorithmSpec(
            name="lazy-bagging",
            task=CLASSIFICATION,
            description="lazy bagging (LB): per test instance, L unpruned trees (c45 = J48 -U, "
            "or cart-entropy) on bootstrap bags enriched with its K nearest neighbours "
            "(gain-ratio distance), majority vote (Zhu & Yang 2008)",
            estimator="ensemblekit.lazy.lazy_bagging:LazyBaggingClassifier",
            exposed=("n_estimators", "beta", "n_neighbors", "voting", "tree", "min_samples_leaf",
                     "max_depth"),
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
            exposed=("n_estimators", "base_estimators", "combiner", "beta", "n_neighbors",
                     "knn_neighbors", "meta_rows", "tree", "min_samples_leaf", "max_depth"),
            preprocessing=_LAZY_PREP,
            encode="codes",
            impute_numeric=False,
        ),
        AlgorithmSpec(
            name="bagging",
            task=CLASSIFICATION,
            description="traditional bagging (TB) of unpruned trees (c45 = J48 -U, or "
            "cart-entropy), probabilities averaged as Weka's Bagging",
            estimator="ensemblekit.classifiers.bagging:BaggedTreeClassifier",
            model="ensemblekit.classifiers.bagging_model:BaggedTreesModel",
            exposed=("n_estimators", "voting", "tree", "min_samples_leaf", "max_depth"),
            preprocessing="as the chosen tree's entry: c45 reads nominal codes and missing "
            "values as they are; cart-entropy one-hots nominal attributes (missing: training "
            "mode) and routes numeric missing values",
            encode="codes",
            impute_numeric=False,
        ),
    )
}

ALGORITHMS["iec45"] = replace(ALGORITHMS["c45"], name="iec45", aliases=(), params=None, exposed=(
    "n_estimators", "max_samples", "bootstrap", "combine", *(key for key in ALGORITHMS[
        "c45"].exposed if key not in ("binary_splits", "reduced_error_pruning", "num_folds",
                                      "seed"))),
    description="Inner-Ensemble C4.5: J48 with each split chosen by the gain ratios of E "
    "samples of the node (averaged or voted); one J48 tree",
    estimator="ensemblekit.classifiers.iec45:InnerEnsembleC45Tree",
    model="ensemblekit.classifiers.iec45_model:InnerEnsembleC45Model")

# --- rule ensembles (issue 7) ---
# ISLE trees post-processed into one regression model (Akdemir & Jannink 2014, Sect. 2);
# every entry is RuleEnsembleRegressor with a fixed method and basis.
_ISLE = ("n_estimators", "max_depth", "max_samples", "max_features", "tree_size", "cv")
_RULE_ENSEMBLES = (
    ("rule-lasso", "lasso", "rules", "RuleFit: lasso on the ISLE rules, penalty by inner CV "
     "(Friedman & Popescu 2008)", ("learning_rate", "linear_terms")),
    ("tree-lasso", "lasso", "trees", "lasso on the ISLE tree outputs, penalty by inner CV "
     "(Friedman & Popescu 2003)", ("learning_rate", "linear_terms")),
    ("rule-pls", "pls", "rules", "partial least squares on the ISLE rules, components by inner "
     "CV (Akdemir & Jannink 2014)", ("learning_rate", "linear_terms", "max_components")),
    ("tree-pls", "pls", "trees", "partial least squares on the ISLE tree outputs, components by "
     "inner CV (Akdemir & Jannink 2014)", ("learning_rate", "linear_terms", "max_components")),
    ("oob-weighted", "oob", "trees", "trees weighted by a Gaussian kernel of their out-of-bag "
     "errors, bandwidth by CV (Akdemir & Jannink 2014)", ()),
    ("oob-weighted-top", "oob", "trees", "oob-weighted keeping only the trees with the largest "
     "weights (Akdemir & Jannink 2014)", ("top_fraction",)),
    ("rule-kernel", "kernel", "rules", "Nadaraya-Watson smoothing on the vector of rule "
     "outputs, Gaussian kernel, bandwidth by CV (Akdemir & Jannink 2014)", ("learning_rate",)),
    ("tree-kernel", "kernel", "trees", "Nadaraya-Watson smoothing on the vector of tree "
     "outputs, Gaussian kernel, bandwidth by CV (Akdemir & Jannink 2014)", ("learning_rate",)),
    ("isle-average", "mean", "trees", "the ISLE trees (memory 0, subsamples, depth 3) averaged "
     "with equal weights", ()),
)
ALGORITHMS.update({
    name: AlgorithmSpec(
        name=name,
        task=REGRESSION,
        description=description,
        estimator="ensemblekit.rules.postprocess:RuleEnsembleRegressor",
        model="ensemblekit.rules.postprocess_model:RuleEnsembleModel",
        exposed=_ISLE + extra,
        # oob-weighted-top keeps the best 60% of the trees; the estimator's default keeps all
        cli_defaults={"top_fraction": 0.6} if "top_fraction" in extra else {},
        preprocessing=_NUMERIC_PREP,
        fixed={"method": method, "basis": basis,
               **({} if "learning_rate" in extra else {"learning_rate": 0.0})},
        model_summary="rule-ensemble",
    )
    for name, method, basis, description, extra in _RULE_ENSEMBLES
})
# Breiman's random forest as an ISLE ensemble (memory 0, bootstrap samples, deep trees,
# equal weights): the same trees as scikit-learn's RandomForestRegressor for the same
# seed, its regression defaults included (min_samples_leaf=1, max_features=1.0; Breiman
# suggests a third of the features, max_features=0.33).
ALGORITHMS["random-forest"] = AlgorithmSpec(
    name="random-forest",
    task=REGRESSION,
    description="Breiman's random forest: trees grown deep on bootstrap samples, a random "
    "fraction max_features of the attributes tried at each split, equal weights (as "
    "scikit-learn's RandomForestRegressor)",
    estimator="ensemblekit.rules.postprocess:RuleEnsembleRegressor",
    model="ensemblekit.rules.postprocess_model:RuleEnsembleModel",
    exposed=("n_estimators", "max_features", "min_samples_leaf", "max_depth"),
    cli_defaults={"max_depth": None},
    preprocessing=_NUMERIC_PREP,
    fixed={"method": "mean", "basis": "trees", "learning_rate": 0.0, "bootstrap": True},
    model_summary="rule-ensemble",
)

# --- ISCA / SS-ISCA (issue 7) ---
# Rule-ensemble clustering (Akdemir & Jannink 2014, Sect. 3): one estimator, ISCA; ss-isca
# fixes supervised=True and takes its target matrix from `cluster --targets`.
_ISCA = ("n_clusters", "n_stages", "n_rules", "learning_rate", "rule_selection",
         "projection_sample", "max_depth", "max_samples", "linkage")
ALGORITHMS.update({
    "isca": AlgorithmSpec(
        name="isca",
        task=CLUSTERING,
        description="ISCA: rules of ISLE trees fitted to random projections of the attributes; "
        "average linkage on 1 - rule agreement (Akdemir & Jannink 2014, Alg. 2)",
        estimator="ensemblekit.rules.isca:ISCA",
        model="ensemblekit.rules.isca_model:ISCAModel",
        exposed=_ISCA,
        preprocessing=_NUMERIC_PREP,
        exports_similarity=True,
        predicts_new_rows=False,
        model_summary="rule-clusters",
    ),
    "ss-isca": AlgorithmSpec(
        name="ss-isca",
        task=CLUSTERING,
        description="SS-ISCA: as isca, the rules fitted to random projections of target "
        "attributes (cluster --targets) (Akdemir & Jannink 2014, Sect. 3)",
        estimator="ensemblekit.rules.isca:ISCA",
        model="ensemblekit.rules.isca_model:ISCAModel",
        exposed=_ISCA + ("similarity", "postprocess"),
        preprocessing=_NUMERIC_PREP + "; targets: numeric as they are, nominal one-hot, missing: "
        "column mean",
        fixed={"supervised": True},
        exports_similarity=True,
        needs_targets=True,
        predicts_new_rows=False,
        model_summary="rule-clusters",
    ),
})


class UnknownAlgorithmError(InputError, KeyError):
    """The name is not in :data:`ALGORITHMS`."""

    def __str__(self) -> str:  # KeyError quotes its argument; we want plain text
        return str(self.args[0])


def canonical_name(name: str) -> str:
    """The entry name behind ``name``: itself, the entry it is an alias of, or the entry of the
    one name or alias it equals but for case (``J48`` is c45). Any other name comes back as is.
    """
    if name in ALGORITHMS:
        return name
    entries = {n: n for n in ALGORITHMS} | {a: s.name for s in ALGORITHMS.values() for a in s.aliases}
    found = resolve(name, entries)
    return name if found is None else entries[found]


def is_registered(name: str) -> bool:
    """Whether ``name`` is a registry entry or an alias of one (imports nothing)."""
    return canonical_name(name) in ALGORITHMS


def get(name: str) -> AlgorithmSpec:
    """Return the registry entry for ``name`` (an entry name or an alias of one).

    Raises
    ------
    UnknownAlgorithmError
        If ``name`` is not registered; the message names the closest registered name
        ("did you mean", :func:`ensemblekit.names.suggest`) and lists them all, aliases too.
    """
    try:
        return ALGORITHMS[canonical_name(name)]
    except KeyError:
        names = sorted(set(ALGORITHMS).union(*(spec.aliases for spec in ALGORITHMS.values())))
        raise UnknownAlgorithmError(f"unknown algorithm {name!r}{did_you_mean(name, names)}; "
                                    f"known: {', '.join(names)}") from None


def make_estimator(name: str, schema, params: dict[str, Any] | None = None,
                   random_state: int | None = None):
    """Build the unfitted pipeline ``prep -> model`` for a registered algorithm.

    Parameters
    ----------
    name : str
        Registry name.
    schema : ensemblekit.data.Schema
        Training schema: the nominal columns and their categories (so encodings do not
        depend on the values a fold holds) and the declared classes (``n_classes``, so
        that ``classes_`` cover classes without training rows; :func:`estimator_kwargs`).
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
    return estimator_factory(name, schema, params)(random_state)


def estimator_factory(name: str, schema, params: dict[str, Any] | None = None, *,
                      bare: bool = False) -> Callable[[int | None], Any]:
    """What :func:`make_estimator` builds, as a function of the seed alone: parameters are
    checked and constructor arguments derived once, so that one estimator per fold of a
    cross-validation costs only its construction.

    Parameters
    ----------
    name, schema, params : as for :func:`make_estimator`
    bare : bool, default=False
        For an algorithm without a preprocessing step (``encode="codes"``), the estimator
        alone, not in a pipeline that passes the rows on (the same fit and predictions,
        without its checks), or its model class if it fits on coded rows (``fit_coded``).

    Returns
    -------
    callable
        ``make(random_state)``: a new unfitted pipeline (or bare estimator).

    Raises
    ------
    UnknownAlgorithmError, ParameterError
    """
    spec, unset = get(name), object()
    kwargs = estimator_kwargs(name, schema, params, unset)
    coded = bare and spec.encode == "codes" and hasattr(spec.model_class(), "fit_coded")
    seeded = kwargs.get("random_state") is unset
    cls = spec.model_class() if coded else spec.estimator_class()

    def model(random_state):  # lists of its own (the nominal columns), as when built anew
        fresh = {k: list(v) if isinstance(v, list) else v for k, v in kwargs.items()}
        return cls(**(fresh | {"random_state": random_state} if seeded else fresh))

    if spec.encode == "codes" and bare:
        return model

    from sklearn.pipeline import Pipeline

    from ensemblekit.preprocessing import make_preprocessor

    def pipeline(random_state):
        prep = ("passthrough" if spec.encode == "codes" else
                make_preprocessor(schema, impute_numeric=spec.impute_numeric, scale=spec.scale))
        return Pipeline([("prep", prep), ("model", model(random_state))])

    return pipeline


def estimator_kwargs(name: str, schema, params: dict[str, Any] | None = None,
                     random_state: int | None = None) -> dict[str, Any]:
    """The constructor arguments of a registered algorithm's estimator (and model class).

    What :func:`make_estimator` passes to the estimator, and what a model file's model class is
    built with: the resolved ``params`` over the defaults, the entry's ``fixed`` arguments, the
    seed, and from the schema the declared number of classes, the class's index among the
    attributes (``class_position``, where taken) and for ``encode="codes"`` the nominal columns
    and their numbers of values. Imports numpy and scikit-learn only through the model class.

    Parameters
    ----------
    name : str
        Registry name.
    schema : ensemblekit.dataset.Schema
        Training schema.
    params : dict, optional
        Resolved parameters (each is checked against its declaration).
    random_state : int or None
        Seed, for a class that takes one.

    Returns
    -------
    dict

    Raises
    ------
    UnknownAlgorithmError, ParameterError
    """
    import inspect

    spec = get(name)
    values = spec.defaults()
    values.update(params or {})
    for p in spec.params:
        p.check(values[p.name])
    takes = inspect.signature(spec.model_class().__init__).parameters
    kwargs = dict(spec.fixed)
    kwargs.update(values)
    if "random_state" in takes:
        kwargs["random_state"] = random_state
    if spec.task == CLASSIFICATION and "n_classes" in takes:
        kwargs["n_classes"] = len(schema.class_attribute.values)
    kwargs.update({"class_position": schema.class_index} if "class_position" in takes else {})
    if spec.encode == "codes":
        nominal = [i for i, a in enumerate(schema.features) if a.kind != "numeric"]
        kwargs["nominal_features"] = nominal
        kwargs["n_categories"] = [max(1, len(schema.features[i].values)) for i in nominal]
    return kwargs


def class_probabilities(model, X, n_classes: int):
    """A fitted classifier's class probabilities, one column per declared class.

    A classifier that does not take the declared classes (``n_classes``; e.g.
    the scikit-learn ``knn`` of an older model file) and was trained on data that
    lacks some declared class has no column for it (its ``classes_`` are the codes it saw); here
    that class gets probability 0, so column ``k`` is always class code ``k``.

    Parameters
    ----------
    model : fitted classifier (pipeline) with ``predict_proba`` and ``classes_``
        ``classes_`` are integer class codes in ``0 .. n_classes - 1``.
    X : array-like of shape (n_samples, n_features)
    n_classes : int
        Number of classes the schema declares.

    Returns
    -------
    ndarray of shape (n_samples, n_classes)
        Rows sum to 1 (as the model's do). A classifier without
        ``predict_proba`` puts all the mass on the class it predicts.
    """
    import numpy as np

    if not hasattr(model, "predict_proba"):
        codes = np.asarray(model.predict(X), dtype=np.intp)
        full = np.zeros((codes.shape[0], n_classes))
        full[np.arange(codes.shape[0]), codes] = 1.0
        return full
    from ensemblekit.class_domain import widen_proba

    return widen_proba(np.asarray(model.predict_proba(X), dtype=np.float64), model.classes_,
                       n_classes)


def model_feature_names(name: str, schema) -> list[str]:
    """Names of the columns the estimator of ``name`` sees, for reports.

    One-hot algorithms see ``attr`` and ``attr=value`` columns
    (:func:`ensemblekit.preprocessing.feature_names`); ``codes`` algorithms see
    the attributes themselves.
    """
    if get(name).encode == "codes":
        return [a.name for a in schema.features]
    from ensemblekit.preprocessing_model import feature_names

    return feature_names(schema)


def refusal_text(error: Exception, name: str, schema) -> str:
    """What an estimator's refusal says, naming the attribute it is about.

    A :class:`~ensemblekit.errors.ColumnError` names a column by its position
    among the columns the estimator of ``name`` sees; this gives it the
    attribute's name (:func:`model_feature_names`), or the target's. Any other
    error says what it says.

    Parameters
    ----------
    error : Exception
    name : str
        Registry name of the algorithm that refused.
    schema : ensemblekit.dataset.Schema
        The schema of the data it was given.

    Returns
    -------
    str
        One line.
    """
    if not isinstance(error, ColumnError):
        return str(error)
    target = schema.class_attribute
    return error.naming(model_feature_names(name, schema),
                        None if target is None else target.name)


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
