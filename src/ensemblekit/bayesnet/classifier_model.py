"""The fitted ``k2`` Bayesian network and its prediction, with numpy alone: :class:`K2Model`.

A fitted :class:`~ensemblekit.bayesnet.classifier.K2Classifier` (and an
``iebn`` or a ``bagged-k2`` member) is one network over discretised columns:
the cut points of every numeric column, the training mode of every column
(which fills missing values), the parent set of every node and its
conditional probability table. :class:`K2Model` holds exactly that state,
declared in ``_fitted_state`` so that a model file stores it as arrays, and
predicts from it: bin the numeric values (:func:`ensemblekit.discretize_model.bin_codes`),
fill the gaps with the modes, and multiply the CPT entries of the class node
and its children (:func:`network_proba`). The estimator inherits all of it and
adds ``fit``.

Node numbering: node 0 is the class, node ``j`` is column ``j - 1``; the parent
configuration of a node indexes the rows of its table as the mixed-radix
number whose most significant digit is the first parent (Weka's
``ParentSet`` layout).

References
----------
.. [1] Abbasian, H., Drummond, C., Japkowicz, N., Matwin, S. (2013). Inner
   Ensembles: Using Ensemble Methods Inside the Learning Algorithm. ECML PKDD
   2013, LNCS 8190, pp. 33-48. Algorithms 2 and 3.
.. [2] Weka 3.9: ``weka.classifiers.bayes.BayesNet``
   (``distributionForInstance``), ``bayes.net.ParentSet``. University of
   Waikato.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ensemblekit.errors import InputError, NotFittedError

from ..class_domain import N_CLASSES
from ..constraints import Constraint
from ..discretize_model import bin_codes
from ..rows import check_rows
from ..state import Array, ArrayList, Scalar
from ..trust import all_distinct

__all__ = ["K2_CONSTRAINTS", "K2Model", "network_proba", "weka_order"]


#: Parameters of the K2 search and the CPTs, shared by ``k2``, ``iebn`` and ``bagged-k2``.
K2_CONSTRAINTS = {
    "max_parents": Constraint("int", "parent limit, the class included (1 = naive Bayes; "
                              "none = unlimited)", low=0, none_ok=True),
    "init": Constraint("choice", "initial structure", choices=("naive-bayes", "empty")),
    "scoring": Constraint("choice", "LOO score: mean posterior of the true class (Weka's "
                          "default) or 0/1 accuracy", choices=("loo-probability", "loo-accuracy")),
    "alpha": Constraint("float", "Dirichlet pseudo-count of the CPTs (Weka -A)", low=0,
                        closed="right"),
    "discretize": Constraint("choice", "numeric attributes: supervised MDL (Fayyad & Irani, as "
                             "Weka) or equal-frequency bins", choices=("mdl", "equal-frequency")),
    "n_bins": Constraint("int", "bins for equal-frequency discretisation", low=1, high=1000),
    "nominal_features": Constraint("any", "indices of the columns holding nominal codes"),
    "n_categories": Constraint("any", "number of categories of each nominal column"),
    "n_classes": N_CLASSES,
}


# --------------------------------------------------------------------------
# validation of codes and structures (shared with the search in k2.py)
# --------------------------------------------------------------------------
def _check_card(cardinalities, n_classes, d: int) -> np.ndarray:
    card = np.asarray(cardinalities)
    if card.ndim != 1 or card.shape[0] != d:
        raise InputError(
            f"cardinalities must be a 1-D array of length {d} (one per column of X), "
            f"got shape {card.shape}"
        )
    if card.size and (not np.issubdtype(card.dtype, np.integer) or card.min() < 1):
        raise InputError("cardinalities must be integers >= 1")
    if int(n_classes) != n_classes or int(n_classes) < 1:
        raise InputError(f"n_classes must be an integer >= 1, got {n_classes!r}")
    return np.concatenate([[int(n_classes)], card.astype(np.int64)])


def _check_codes(X, card: np.ndarray, name: str = "X") -> np.ndarray:
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[1] != card.shape[0] - 1:
        raise InputError(
            f"{name} must be a 2-D array with {card.shape[0] - 1} columns, got shape {X.shape}"
        )
    if X.size and not np.issubdtype(X.dtype, np.integer):
        raise InputError(f"{name} must hold integer codes, got dtype {X.dtype}")
    X = X.astype(np.int64, copy=False)
    if X.size and ((X < 0).any() or (X >= card[1:]).any()):
        bad = np.argwhere((X < 0) | (X >= card[1:]))[0]
        raise InputError(
            f"{name}[{bad[0]}, {bad[1]}] = {X[bad[0], bad[1]]} is outside 0..{card[bad[1] + 1] - 1}"
        )
    return X


def _check_parents(parents, n_nodes: int) -> list[tuple[int, ...]]:
    if len(parents) != n_nodes:
        raise InputError(
            f"parents must hold {n_nodes} parent sets (class + attributes), got {len(parents)}"
        )
    out = []
    for v, ps in enumerate(parents):
        ps = tuple(int(p) for p in ps)
        if len(set(ps)) != len(ps) or any(p < 0 or p >= n_nodes or p == v for p in ps):
            raise InputError(f"invalid parent set {ps} for node {v}")
        out.append(ps)
    # acyclicity (Kahn's algorithm)
    indeg = [len(ps) for ps in out]
    children: list[list[int]] = [[] for _ in range(n_nodes)]
    for v, ps in enumerate(out):
        for p in ps:
            children[p].append(v)
    stack = [v for v in range(n_nodes) if indeg[v] == 0]
    seen = 0
    while stack:
        u = stack.pop()
        seen += 1
        for w in children[u]:
            indeg[w] -= 1
            if indeg[w] == 0:
                stack.append(w)
    if seen != n_nodes:
        raise InputError("the parent sets contain a directed cycle")
    return out


# --------------------------------------------------------------------------
# configurations and posteriors
# --------------------------------------------------------------------------
def _extend_all(vals, card, ps: Sequence[int], codes) -> tuple[np.ndarray, int, int]:
    """Append the parents ``ps`` in order to the codes ``(base, stride, size)``."""
    for p in ps:
        codes = _extend_codes(vals, card, codes, p)
    return codes


def _extend_codes(vals, card, codes, p: int) -> tuple[np.ndarray, int, int]:
    """Codes of the family after appending parent ``p`` (least significant digit)."""
    base, stride, size = codes
    rp = int(card[p])
    if p == 0:  # the new digit is the substituted class itself
        return base * rp, stride * rp + 1, size * rp
    return base * rp + vals[:, p], stride * rp, size * rp


def _in_family(v: int, ps: Sequence[int]) -> bool:
    return v == 0 or 0 in ps


def _libm(fn, values: np.ndarray) -> np.ndarray:
    """``fn`` (``math.log`` or ``math.exp``) of every element, one C-library call each.

    numpy's own vectorised ``log`` and ``exp`` round differently from the C library in
    about one argument in a hundred; the C library's (nearly always correctly rounded)
    results are the ones Java's ``Math.log`` and ``Math.exp`` give but in rare cases
    (see :func:`network_proba`).
    """
    values = np.asarray(values, dtype=np.float64)
    out = np.frompyfunc(fn, 1, 1)(values.ravel())
    return np.asarray(out, dtype=np.float64).reshape(values.shape)


def _log_entries(table: np.ndarray, flat: np.ndarray) -> np.ndarray:
    """``log(table.ravel()[flat])``, each distinct entry's logarithm taken once."""
    used, back = np.unique(flat, return_inverse=True)
    return _libm(math.log, table.ravel()[used])[back].reshape(flat.shape)


def weka_order(n_features: int, class_position=None) -> list[int]:
    """The nodes in the order of the attributes of Weka's data set.

    Node 0 (the class) sits at ``class_position`` among the attributes, node ``j``
    (column ``j - 1``) in column order around it.

    Parameters
    ----------
    n_features : int >= 0
        Number of columns (feature nodes).
    class_position : int in ``[0, n_features]`` or None, default=None
        Index of the class among the file's attributes; None: last, Weka's default.

    Returns
    -------
    list of n_features + 1 ints

    Raises
    ------
    ValueError
        If ``class_position`` is outside ``[0, n_features]``.
    """
    pos = n_features if class_position is None else class_position
    if (isinstance(pos, bool) or not isinstance(pos, (int, np.integer))
            or not 0 <= pos <= n_features):
        raise InputError(f"class_position must be an integer in 0..{n_features} (the class's "
                         f"index among the attributes) or None, got {class_position!r}")
    pos = int(pos)
    return [*range(1, pos + 1), 0, *range(pos + 1, n_features + 1)]


def network_proba(X, parents, cpts, cardinalities, n_classes, class_position=None
                  ) -> np.ndarray:
    """Class posteriors of a Bayesian-network classifier, in Weka's floating-point order.

    ``P(c | x)`` is proportional to the product over nodes of
    ``cpts[v][J_v(x, c), value of v]``. The computation follows
    ``SimpleEstimator.distributionForInstance`` of Weka's ``BayesNet`` step for step, so
    that the doubles are Weka's: for each class the natural logarithms of every node's
    entry (those that do not depend on the class too) are added one by one, starting
    from 0, in the order of the attributes of Weka's data set (the class at
    ``class_position``); 1 is added to the sum; the largest of these is subtracted
    before ``exp``; the exponentials are added in class order and each divided by their
    sum (``Utils.normalize``). Logarithms and exponentials are the C library's; Java's
    ``Math.log`` and ``Math.exp`` differ from them by one unit in the last place for a
    small share of arguments (about 0.2 % of ``exp``'s, 0.1 % of ``log``'s on random
    arguments), where a probability may differ from Weka's in its last bits.
    (Also :func:`ensemblekit.bayesnet.k2.predict_proba`.)

    Parameters
    ----------
    X : array-like of int, shape (m, d)
        Attribute codes of the instances to classify.
    parents : sequence of d + 1 sequences of int
        The structure.
    cpts : list of d + 1 ndarrays
        Tables from :func:`ensemblekit.bayesnet.k2.fit_cpts` for the same structure.
    cardinalities : array-like of int, shape (d,)
    n_classes : int
    class_position : int in ``[0, d]`` or None, default=None
        Index of the class among the attributes (the columns of ``X`` keep their order
        around it); None: after the last column. It sets only the order of the sum.

    Returns
    -------
    ndarray of float, shape (m, C)
        Rows sum to one.

    Raises
    ------
    ValueError
        Malformed or out-of-range codes, a bad parent set, tables whose shapes do not
        match the structure, or ``class_position`` outside ``[0, d]``.

    References
    ----------
    Weka 3.9: ``bayes.net.estimate.SimpleEstimator.distributionForInstance``,
    ``core.Utils.normalize``. University of Waikato.
    """
    X = np.asarray(X)
    if X.ndim != 2:
        raise InputError(f"X must be a 2-D array, got shape {X.shape}")
    card = _check_card(cardinalities, n_classes, X.shape[1])
    X = _check_codes(X, card)
    parents = _check_parents(parents, card.shape[0])
    if len(cpts) != card.shape[0]:
        raise InputError(f"cpts must hold {card.shape[0]} tables, got {len(cpts)}")
    order = weka_order(X.shape[1], class_position)
    m, C = X.shape[0], int(card[0])
    vals = np.empty((m, X.shape[1] + 1), dtype=np.int64)
    vals[:, 0] = 0
    vals[:, 1:] = X
    classes = np.arange(C)[None, :]
    tables = []
    for v, ps in enumerate(parents):
        size = int(np.prod([int(card[p]) for p in ps])) if ps else 1
        table = np.asarray(cpts[v], dtype=np.float64)
        if table.shape != (size, int(card[v])):
            raise InputError(
                f"cpts[{v}] has shape {table.shape}, expected {(size, int(card[v]))}"
            )
        tables.append(table)
    log_sum = np.zeros((m, C))
    for v in order:
        base, stride, _ = _extend_all(vals, card, parents[v], (np.zeros(m, dtype=np.int64), 0, 1))
        J = base[:, None] + stride * classes  # stride 0 when the class is no parent
        K = classes if v == 0 else vals[:, v, None]
        log_sum += _log_entries(tables[v], J * int(card[v]) + K)
    scores = 1.0 + log_sum
    shifted = _libm(math.exp, scores - scores.max(axis=1, keepdims=True))
    total = np.zeros(m)
    for c in range(C):  # Utils.normalize: one class after the other
        total += shifted[:, c]
    return shifted / total[:, None]


def _quote(s: str) -> str:
    """A DOT identifier: ``s`` in double quotes, backslashes, quotes and newlines escaped."""
    s = s.replace("\\", "\\\\").replace('"', '\\"')
    s = s.replace("\r", "\\r").replace("\n", "\\n")
    return f'"{s}"'


# --------------------------------------------------------------------------
# the model
# --------------------------------------------------------------------------
class K2Model:
    """A fitted K2 Bayesian-network classifier: its state, prediction and description.

    The numpy-only part of :class:`~ensemblekit.bayesnet.classifier.K2Classifier`
    (whose documentation gives the parameters and the fit): the parameters,
    the declaration of the state a fit leaves, and everything that reads that
    state. A model file is rebuilt as this class.

    Parameters
    ----------
    max_parents, init, scoring, alpha, discretize, n_bins : see K2Classifier
        As in :class:`~ensemblekit.bayesnet.classifier.K2Classifier`; stored only.
    nominal_features, n_categories, n_classes, markov_blanket : see K2Classifier
        Likewise.
    random_order, cv_type, n_folds, weka_rounding, random_state : see K2Classifier
        Likewise (the search's options; ``k2`` only).
    class_position : int or None, default=None
        Index of the class among the attributes of the training file (the columns keep
        their order around it; None: last). Prediction adds the nodes'
        log-probabilities in this attribute order, as Weka does, so that the
        probabilities are Weka's to the last bit (:func:`network_proba`); the inner and
        bagged networks do not take it and add them with the class last.

    Attributes
    ----------
    n_features_in_ : int
        Number of columns.
    classes_ : ndarray of int64 of shape (n_classes,)
        Class labels, distinct and ascending (``arange(n_classes)`` when
        ``n_classes`` is given); node 0 takes codes into it.
    nominal_features_ : ndarray of int64 of shape (n_nominal,)
        Ascending indices of the columns that hold nominal codes.
    cut_points_ : list of n_features_in_ ndarrays of float64
        Ascending cut points of every column (empty for a nominal column);
        value ``v`` gets bin ``j`` when ``cut_points_[f][j - 1] < v <=
        cut_points_[f][j]``.
    cardinalities_ : ndarray of int64 of shape (n_features_in_,)
        Number of values of every feature node after discretisation.
    modes_ : ndarray of int64 of shape (n_features_in_,)
        Training mode of every discretised column, which fills missing values.
    cpts_ : list of n_features_in_ + 1 ndarrays of float64
        ``cpts_[v]`` of shape ``(prod(r_p for p in parents_[v]), r_v)``; rows
        sum to one.
    parent_sets_ : list of n_features_in_ + 1 ndarrays of int64
        The parents of every node, in order of addition.
    parents_ : list of tuples of int
        ``parent_sets_`` as tuples (read only).
    """

    # k2's own (the Inner-Ensemble and bagged networks do not take it)
    _parameter_constraints = {
        **K2_CONSTRAINTS,
        "markov_blanket": Constraint(
            "bool", "after the search, make every attribute a member of the class's Markov "
            "blanket (Weka -mbc)"),
        "random_order": Constraint(
            "bool", "K2 node order drawn at random from the seed, as Weka's -R draws it"),
        "cv_type": Constraint(
            "choice", "rows a row is scored without: itself, its fold, or itself and the "
            "later rows (Weka -S LOO-CV, k-Fold-CV, Cumulative-CV)",
            choices=("loo", "kfold", "cumulative")),
        "n_folds": Constraint("int", "folds of cv_type=kfold (Weka: always 10)", low=2,
                              high=1_000_000),
        "weka_rounding": Constraint(
            "bool", "break score ties within round-off as Weka's floating point does (arcs "
            "of zero gain under init=empty)"),
        "random_state": Constraint("any", "seed of the random node order (--seed)"),
        "class_position": Constraint(
            "int", "index of the class among the attributes, which orders the sum of the "
            "nodes' log-probabilities as Weka's (set from the data's schema; none = last)",
            low=0, none_ok=True),
    }

    #: What a fit leaves and prediction, ``network`` and ``to_dot`` read (see ensemblekit.state).
    _fitted_state = {
        "n_features_in_": Scalar("int", low=1),
        "classes_": Array("int64", ("n_classes",), low=0),
        "nominal_features_": Array("int64", ("n_nominal",), low=0, below="n_features_in_"),
        "cut_points_": ArrayList(Array("float64", ("*",)), length="n_features_in_"),
        "cardinalities_": Array("int64", ("n_features_in_",), low=1),
        "modes_": Array("int64", ("n_features_in_",), low=0),
        "cpts_": ArrayList(Array("float64", ("*", "*"), low=0, high=1), length="n_nodes"),
        "parent_sets_": ArrayList(Array("int64", ("*",), low=0, below="n_nodes"),
                                  length="n_nodes"),
    }

    def __init__(
        self,
        max_parents=2,
        init="naive-bayes",
        scoring="loo-probability",
        alpha=0.5,
        discretize="mdl",
        n_bins=10,
        nominal_features=None,
        n_categories=None,
        n_classes=None,
        markov_blanket=False,
        random_order=False,
        cv_type="loo",
        n_folds=10,
        weka_rounding=True,
        random_state=None,
        class_position=None,
    ):
        self.max_parents = max_parents
        self.init = init
        self.scoring = scoring
        self.alpha = alpha
        self.discretize = discretize
        self.n_bins = n_bins
        self.nominal_features = nominal_features
        self.n_categories = n_categories
        self.n_classes = n_classes
        self.markov_blanket = markov_blanket
        self.random_order = random_order
        self.cv_type = cv_type
        self.n_folds = n_folds
        self.weka_rounding = weka_rounding
        self.random_state = random_state
        self.class_position = class_position

    # ------------------------------------------------------------------ state
    @property
    def parents_(self) -> list[tuple[int, ...]]:
        """The parent set of every node as a tuple of node indices, in order of addition."""
        return [tuple(int(p) for p in ps) for ps in self.parent_sets_]

    def model_size(self) -> int:
        """The network's size for ``-m model-size``: its number of arcs, those from the
        class node (the naive-Bayes start) included: the parents of all nodes, counted."""
        return int(sum(ps.size for ps in self.parent_sets_))

    #: What ``-m structure-stability`` compares (see :mod:`ensemblekit.scores.structure`).
    structure_kind = "arcs"

    def structure(self) -> list[tuple[int, int]]:
        """The network's arcs for ``-m structure-stability``: ``(parent, child)`` node pairs,
        those from the class node included, child by child in order of addition."""
        return [(int(p), child) for child, ps in enumerate(self.parent_sets_) for p in ps]

    def _check_state(self, ctx) -> None:
        """What the declaration cannot say: an acyclic network whose tables fit its nodes.

        ``classes_`` distinct and ascending (``arange(n_classes)`` when the
        parameter is set); nominal columns distinct, ascending and without cut
        points; every numeric column ``len(cut_points_[f]) + 1`` values, its cut
        points ascending; every mode one of its column's values; ``class_position``
        (a parameter) an index into the attributes; one node per
        column plus the class; parent sets of other nodes, without repeats or
        directed cycles; ``cpts_[v]`` of shape ``(prod(r_p), r_v)`` with
        probabilities in (0, 1] and rows summing to one (prediction takes their
        logarithms at the rows the parents' values give).
        """
        d = self.n_features_in_
        classes = self.classes_
        if classes.size == 0:
            _fail(ctx, "classes_", "is empty")
        if np.any(classes[1:] <= classes[:-1]):
            _fail(ctx, "classes_", "is not a list of distinct codes in ascending order")
        declared = vars(self).get("n_classes")
        if (isinstance(declared, (int, np.integer)) and not isinstance(declared, bool)
                and not np.array_equal(classes, np.arange(declared))):
            _fail(ctx, "classes_", f"is not the codes 0 .. {declared - 1}")
        nominal = self.nominal_features_
        if np.any(nominal[1:] <= nominal[:-1]):
            _fail(ctx, "nominal_features_", "is not a list of distinct indices in ascending order")
        card = self.cardinalities_
        is_nominal = np.zeros(d, dtype=bool)
        is_nominal[nominal] = True
        for f, cuts in enumerate(self.cut_points_):
            if np.any(cuts[1:] < cuts[:-1]):
                _fail(ctx, f"cut_points_.{f}", "is not in ascending order")
            if is_nominal[f] and cuts.size:
                _fail(ctx, f"cut_points_.{f}", "cuts a nominal column")
            if not is_nominal[f] and card[f] != cuts.size + 1:
                _fail(ctx, "cardinalities_", f"gives column {f} {int(card[f])} values, but its "
                      f"{cuts.size} cut points make {cuts.size + 1} bins")
        if np.any(self.modes_ >= card):
            _fail(ctx, "modes_", "holds a code outside its column's values")
        position = vars(self).get("class_position")
        if position is not None and not 0 <= position <= d:
            _fail(ctx, "class_position", f"= {position} is not an index into the "
                  f"{d + 1} attributes")
        n_nodes = len(self.cpts_)
        if n_nodes != d + 1:
            _fail(ctx, "cpts_", f"has {n_nodes} tables for {d + 1} nodes (the class, then one "
                  "per column)")
        sizes = [int(classes.size), *(int(r) for r in card)]
        for v, ps in enumerate(self.parent_sets_):
            if not all_distinct(ps) or np.any(ps == v):
                _fail(ctx, f"parent_sets_.{v}", f"= {ps.tolist()} is not a set of other nodes")
            table = self.cpts_[v]
            rows = 1
            for p in ps:  # stop once the product exceeds the table (it may be astronomical)
                rows *= sizes[int(p)]
                if rows > table.shape[0]:
                    break
            if table.shape != (rows, sizes[v]):
                want = (f"({rows}, {sizes[v]})" if rows <= table.shape[0]
                        else f"more than {table.shape[0]} rows")
                _fail(ctx, f"cpts_.{v}", f"has shape {table.shape}; its parents' and its own "
                      f"numbers of values give {want}")
            if table.size and table.min() <= 0:
                _fail(ctx, f"cpts_.{v}", "holds a probability of 0, which no fit gives")
            if table.size and np.any(np.abs(table.sum(axis=1) - 1.0) > 1e-6):
                _fail(ctx, f"cpts_.{v}", "has a row that does not sum to one")
        try:
            _check_parents(self.parent_sets_, n_nodes)
        except InputError as exc:
            _fail(ctx, "parent_sets_", str(exc))

    # ------------------------------------------------------------------ prediction
    def _codes(self, X: np.ndarray) -> np.ndarray:
        """Discretise, fill missing values with the modes, check the codes."""
        Xt = bin_codes(X, self.cut_points_, self.nominal_features_)
        missing = np.isnan(Xt)
        if missing.any():
            Xt = np.where(missing, self.modes_[None, :].astype(np.float64), Xt)
        nominal = self.nominal_features_
        if nominal.size:
            sub = Xt[:, nominal]
            bad = (
                (sub < 0)
                | (sub != np.floor(sub))
                | (sub >= self.cardinalities_[nominal])
            )
            if bad.any():
                i, k = np.argwhere(bad)[0]
                f = int(nominal[k])
                raise InputError(
                    f"nominal feature {f} holds code {float(X[i, f]):g} in row {i}, but the model "
                    f"was fitted with codes 0..{int(self.cardinalities_[f]) - 1} for it "
                    "(an unseen category: refit with n_categories covering it)"
                )
        return Xt.astype(np.int64)

    def predict_proba(self, X):
        """Class probabilities of the fitted network.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Numeric columns raw, nominal columns as codes; NaN values are
            replaced by the training modes after discretisation.

        Returns
        -------
        ndarray of float of shape (n_samples, n_classes)
            Columns follow ``classes_``; rows sum to one.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        ValueError
            If ``X`` has the wrong number of columns or infinite values, or a
            nominal column holds a code outside the fitted ``0 .. r - 1``.
        """
        X = check_rows(self, X, allow_nan=True)
        codes = self._codes(X)
        return network_proba(
            codes, self.parents_, self.cpts_, self.cardinalities_, self.classes_.size,
            getattr(self, "class_position", None),
        )

    def predict(self, X):
        """Most probable class of every row (the first class on ties, as Weka).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels from ``classes_``.

        Raises
        ------
        See :meth:`predict_proba`.
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    # ------------------------------------------------------------------ description
    def _node_names(self, feature_names, class_name) -> list[str]:
        if getattr(self, "cpts_", None) is None:
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet. Call "
                                 "'fit' with appropriate arguments before using this estimator.")
        d = self.n_features_in_
        if feature_names is None:
            names = getattr(self, "feature_names_in_", None)
            feature_names = (
                list(names) if names is not None else [f"x{j}" for j in range(d)]
            )
        feature_names = [str(n) for n in feature_names]
        if len(feature_names) != d:
            raise InputError(
                f"feature_names has {len(feature_names)} names for {d} features"
            )
        names = [str(class_name), *feature_names]
        if len(set(names)) != len(names):
            raise InputError(f"node names must be distinct, got {names}")
        return names

    def network(self, feature_names=None, class_name="class") -> list[dict]:
        """The learnt network, one record per node (class first).

        Parameters
        ----------
        feature_names : sequence of str or None, default=None
            One name per feature; default ``feature_names_in_`` when ``fit``
            saw column names, else ``x0, x1, ...``.
        class_name : str, default="class"

        Returns
        -------
        list of n_features_in_ + 1 dicts
            Keys ``name`` (str), ``parents`` (list of names, in order of
            addition), ``n_values`` (int, the node's cardinality) and
            ``cpt_shape`` (tuple ``(n_parent_configurations, n_values)``).

        Raises
        ------
        NotFittedError
            Before ``fit``.
        ValueError
            If ``feature_names`` has the wrong length or names repeat.
        """
        names = self._node_names(feature_names, class_name)
        card = [int(self.classes_.size), *(int(r) for r in self.cardinalities_)]
        return [
            {
                "name": names[v],
                "parents": [names[p] for p in ps],
                "n_values": card[v],
                "cpt_shape": tuple(int(s) for s in self.cpts_[v].shape),
            }
            for v, ps in enumerate(self.parents_)
        ]

    def to_dot(self, feature_names=None, class_name="class") -> str:
        """Graphviz DOT text of the network (arcs parent -> child).

        Node identifiers are the quoted node names (backslashes, double quotes
        and newlines escaped); nodes are listed class first, then features in
        column order, arcs per child in order of addition, so the text is
        deterministic. Parameters and errors: see :meth:`network`.

        Returns
        -------
        str
            A ``digraph`` ending with a newline.
        """
        nodes = self.network(feature_names, class_name)
        lines = ["digraph K2 {"]
        for i, node in enumerate(nodes):
            style = ", shape=doublecircle" if i == 0 else ""
            label = f"{node['name']} ({node['n_values']})"
            lines.append(f"  {_quote(node['name'])} [label={_quote(label)}{style}];")
        for node in nodes:
            for p in node["parents"]:
                lines.append(f"  {_quote(p)} -> {_quote(node['name'])};")
        lines.append("}")
        return "\n".join(lines) + "\n"


def _fail(ctx, entry: str, what: str) -> None:
    """Fail the state check naming ``entry`` (``"cpts_.3"``) below the current path."""
    ctx.path.append(entry)
    ctx.fail(what)
