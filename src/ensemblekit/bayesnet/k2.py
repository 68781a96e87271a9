"""Global K2 structure search with Weka's cross-validated scores, computed from counts.

This is the numeric core of the ``k2`` classifier of the Inner Ensembles paper
(Abbasian, Drummond, Japkowicz & Matwin, ECML PKDD 2013, Algorithms 2 and 3),
made to learn the same network as Weka's
``weka.classifiers.bayes.net.search.global.K2 -S LOO-CV`` with
``SimpleEstimator -A alpha``.

Everything here works on data that is already discrete: every attribute is an
integer code ``0 .. r_j - 1`` and the class is a code ``0 .. C - 1``.
Discretisation and missing-value replacement happen before this module.

Node numbering
--------------
A network over ``d`` attributes has ``d + 1`` nodes. Node ``0`` is the class;
node ``j`` (``1 <= j <= d``) is column ``j - 1`` of ``X``. This is also the K2
node order Weka uses (the class first, then the attributes in file order), so
the predecessors of node ``v`` are exactly the nodes ``0 .. v - 1``.

A structure is a list of ``d + 1`` tuples; ``parents[v]`` holds the parents of
node ``v`` in the order they were added. That order fixes the layout of the
node's conditional probability table: the parent configuration index is the
mixed-radix number whose most significant digit is the first parent (Weka's
``ParentSet`` layout), ``J = (...((x_p1) * r_p2 + x_p2) * r_p3 + x_p3 ...)``.

The leave-one-out score without refits
--------------------------------------
With the Dirichlet estimate ``P(v = k | J) = (N[J, k] + a) / (N[J] + r_v a)``,
removing instance ``i`` from the counts only changes the cells it touched. For
a candidate class ``c`` of instance ``i``, let ``d = [c == y_i]``. For every node
``v`` whose family (the node and its parents) contains the class,

    f_v(i, c) = (N[v, J_v(i,c), K_v(i,c)] - d + a) / (N[v, J_v(i,c)] - d_row + r_v a),

where ``J_v(i, c)`` and ``K_v(i, c)`` are the parent configuration and value
of ``v`` with ``c`` put in place of the class, ``d_row = d`` for an attribute
node and ``d_row = 1`` for the class node (its row is the whole data set,
whatever ``c`` is). Factors of nodes outside the class's families do not
depend on ``c`` and cancel in the posterior, which is proportional over ``c``
to ``prod_v f_v(i, c)``. Keeping one ``C x n`` matrix of factors per family
node, adding a parent to node ``v`` changes only ``v``'s matrix: the product
of the other nodes' factors is formed once per node (through a sum of logs,
rescaled so that its largest class is 1), and each candidate then costs one
table of count quotients, one gather per class and one product, ``O(n C)``
array work. Each factor is one quotient of counts, as Weka evaluates it, so
candidates that change nothing tie exactly with the current structure.

Scoring on samples (the Inner-Ensemble score)
---------------------------------------------
With ``samples=`` (a list of ``E`` arrays of row indices, repeats allowed)
the score of a structure is the mean over the samples of each sample's LOO
score (Abbasian et al. 2013, Algorithm 4). A sample is reduced to its
distinct rows with multiplicities ``w``: the counts are ``w``-weighted, a
row's LOO posterior is the same for all its copies and weighs ``w`` in the
sample's average, and leaving out one copy removes ``drop = 1`` copy
(``loo_duplicates="one"``) or ``drop = w`` copies (``"all"``) in the formula
above (``d`` becomes ``d * drop``). When no sample repeats a row the
unweighted arithmetic runs, so ``samples=None`` and one sample holding every
row once give the same network bit for bit. The samples are stacked into one
array of rows, the sample index acting as one more, most significant, digit
of every configuration, so one array operation scores a candidate on all
``E`` samples at once.

Weka's other scores, orders and rounding
----------------------------------------
Weka's k-fold and cumulative scores (``cv_type``) change only which counts
score a row: ``f_v(i, c) = (T_i[J, K] + a) / (T_i[J] + r_v a)``, ``T_i`` the
counts of the rows outside row ``i``'s fold (``n_folds`` contiguous blocks)
or of the rows before ``i``. The factorisation above, and the cost of a
candidate, stay the same (:class:`_HeldOut` looks the counts up).
The node order may be any permutation (``order``), Weka's ``-R`` order
being :func:`random_node_order`; a node takes parents among the nodes
before it, and the class itself may then get attribute parents.
In exact arithmetic an attribute parent of a node outside the class's
families changes no posterior; Weka, which adds every node's log entry in
floating point, sees a score that moved by round-off and takes the arc when
it moved up. With ``weka_rounding`` two scores within 1e-9 of each other
are compared as Weka computes them (:func:`_weka_order_score`), the rest by
the closed form, which orders them the same way.

References
----------
.. [1] Abbasian, H., Drummond, C., Japkowicz, N., Matwin, S. (2013). Inner
   Ensembles: Using Ensemble Methods Inside the Learning Algorithm. ECML PKDD
   2013, LNCS 8190, pp. 33-48. Algorithm 2 (K2), Algorithm 3 (LOO score) and
   Algorithm 4 (ensemble LOO score).
.. [2] Cooper, G. F., Herskovits, E. (1992). A Bayesian method for the
   induction of probabilistic networks from data. Machine Learning 9(4),
   309-347.
.. [3] Bouckaert, R. R. Weka's ``bayes.net.search.global.K2`` and
   ``GlobalScoreSearchAlgorithm`` (LOO-CV score by subtracting each
   instance's counts), Weka 3.9.
"""

from __future__ import annotations

import decimal
import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from ensemblekit.errors import InputError

from .classifier_model import (
    _check_card,
    _check_codes,
    _check_parents,
    _extend_all,
    _extend_codes,
    _in_family,
)
from .classifier_model import network_proba as predict_proba

__all__ = [
    "fit_cpts",
    "k2_search",
    "loo_posteriors",
    "loo_score",
    "predict_proba",
    "random_node_order",
]

_INITS = ("naive-bayes", "empty")
_SCORES = ("loo-probability", "loo-accuracy")
# Count tables with more cells than this are indexed through compressed
# configuration codes during the search (np.unique), not the full mixed radix.
_DENSE_CELLS = 1 << 22


# --------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------
def _check_alpha(alpha: float) -> float:
    alpha = float(alpha)
    if not np.isfinite(alpha) or alpha <= 0:
        raise InputError(f"alpha must be a finite number > 0, got {alpha!r}")
    return alpha


def _check_data(X, y, cardinalities, n_classes):
    X = np.asarray(X)
    if X.ndim != 2:
        raise InputError(f"X must be a 2-D array, got shape {X.shape}")
    card = _check_card(cardinalities, n_classes, X.shape[1])
    X = _check_codes(X, card)
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise InputError(
            f"y must be a 1-D array of length {X.shape[0]}, got shape {y.shape}"
        )
    if y.size and not np.issubdtype(y.dtype, np.integer):
        raise InputError(f"y must hold integer class codes, got dtype {y.dtype}")
    y = y.astype(np.int64, copy=False)
    if y.size and (y.min() < 0 or y.max() >= card[0]):
        raise InputError(f"y holds codes outside 0..{card[0] - 1}")
    if X.shape[0] < 1:
        raise InputError("at least one instance is needed")
    vals = np.empty((X.shape[0], X.shape[1] + 1), dtype=np.int64)
    vals[:, 0] = y
    vals[:, 1:] = X
    return vals, card


# --------------------------------------------------------------------------
# kernels
# --------------------------------------------------------------------------
# Layout: per-instance, per-class arrays are class-major, shape (C, n), so a
# class's row is contiguous and sums over the classes add whole rows.


def _family_codes(part: _Samples, card: np.ndarray, ps: Sequence[int]) -> tuple[np.ndarray, int, int]:
    """Parent configurations of a node as an affine function of the class.

    The configuration of stacked row ``i`` with class ``c`` put in place of
    its own is ``J(i, c) = base[i] + c * stride`` (``stride = 0`` when the
    class is not a parent): the mixed-radix number whose most significant
    digit is the row's sample, followed by the parents in order. Returns
    ``(base, stride, size)`` with ``size = n_samples * prod(card[ps])``.
    """
    return _extend_all(part.vals, card, ps, (part.sid.astype(np.int64), 0, part.n_samples))


def _compress_codes(codes, n_classes: int) -> tuple[np.ndarray, int, int]:
    """Renumber the configurations that occur, keeping the affine form.

    Different ``(base, c)`` pairs give different configurations, so numbering
    the distinct ``base`` values ``0 .. U - 1`` and writing
    ``J' = base' * C + c`` (or ``J' = base'`` when the class is not a parent)
    keeps every configuration apart while bounding the codes by ``U * C``.
    """
    base, stride, _ = codes
    distinct, inverse = np.unique(base, return_inverse=True)
    inverse = inverse.reshape(-1).astype(np.int64)
    if stride == 0:
        return inverse, 0, int(distinct.shape[0])
    return inverse * n_classes, 1, int(distinct.shape[0]) * n_classes


def _node_factor(part, card: np.ndarray, v: int, codes, alpha: float) -> np.ndarray:
    """LOO factors ``f_v(i, c)`` of a node whose family holds the class; ``(C, n)``.

    ``f_v(i, c)`` is the CPT entry of node ``v`` for instance ``i`` with class
    ``c``, counted on the sample ``part`` without instance ``i``: only the
    cell and the row that ``i`` itself touched (``c = y_i``; for the class
    node, its row for every ``c``) lose ``drop`` counts. Each entry is one
    quotient of counts, as Weka evaluates it.
    """
    vals, w = part.vals, part.w
    drop = 1.0 if w is None else part.drop
    n = vals.shape[0]
    y = vals[:, 0]
    C = int(card[0])
    r = int(card[v])
    ra = r * alpha
    base, stride, size = codes
    if v == 0:  # the class node: its cells are the classes, its row the parents' configuration
        cell0, step = base * r, 1
    else:
        cell0, step = base * r + vals[:, v], stride * r
    cell_t = cell0 + y * step
    counts = np.bincount(cell_t, weights=w, minlength=size * r).astype(np.float64, copy=False)
    row = counts.reshape(size, r).sum(axis=1)
    G = np.empty((C, n))
    if v == 0:
        # the instance's own row loses it whatever c is
        G[:] = (counts.reshape(size, r)[base].T + alpha) / ((row[base] + ra) - drop)
    else:
        # cells the instance did not touch keep their full-data probability
        P = ((counts.reshape(size, r) + alpha) / (row + ra)[:, None]).ravel()
        for c in range(C):
            np.take(P[c * step:], cell0, out=G[c], mode="clip")
    row_t = cell_t // r
    G.reshape(-1)[part.flat_true] = ((counts[cell_t] + alpha) - drop) / (
        (row[row_t] + ra) - drop
    )
    return G


def _log_sum(factors) -> np.ndarray:
    """Sum of the logs of the family nodes' factors, ``(C, n)``."""
    S = None
    for G in factors:
        if G is not None:
            S = np.log(G) if S is None else S + np.log(G)
    return S


def _relative(S: np.ndarray) -> np.ndarray:
    """``exp(S - max_c S)``: per-instance class weights with the largest at 1."""
    return np.exp(S - S.max(axis=0))


def _posterior(factors) -> np.ndarray:
    """LOO posteriors ``(n, C)`` from the family nodes' factors."""
    Q = _relative(_log_sum(factors))
    return (Q / Q.sum(axis=0)).T


def _score(Q: np.ndarray, part: _Samples, score: str) -> float:
    """Mean over the samples of their mean LOO scores, from unnormalised posteriors.

    ``Q`` has shape ``(C, n)`` for the ``n`` stacked rows; a row counts
    ``w[i]`` times in its sample. Accuracies are exact fractions (correct
    instances / instances) averaged exactly (:func:`_mean_score`).
    """
    if score == "loo-accuracy":
        # the prediction is the first class reaching the maximum, as in
        # Weka's classifyInstance
        hits = part.per_sample((Q.argmax(axis=0) == part.vals[:, 0]).astype(np.float64))
        if part.weighted:  # weight of the correct rows over all the weight, per sample
            return _mean_score([float(h / t) for h, t in zip(hits, part.totals)])
        if part.equal_sizes:  # one exact quotient
            return float(Fraction(int(hits.sum()), part.totals[0] * part.n_samples))
        return _mean_score([Fraction(int(h), t) for h, t in zip(hits, part.totals)])
    p = Q.reshape(-1)[part.flat_true] / Q.sum(axis=0)
    sums = part.per_sample(p)
    return _mean_score([float(x / t) for x, t in zip(sums, part.totals)])


def _loo_factors(part, card, parents, alpha) -> list[np.ndarray | None]:
    return [
        _node_factor(part, card, v, _family_codes(part, card, ps), alpha)
        if _in_family(v, ps)
        else None
        for v, ps in enumerate(parents)
    ]


_CV_TYPES = ("loo", "kfold", "cumulative")
# Scores closer than this are compared as Weka rounds them (weka_rounding=True); the
# closed-form and Weka's rounded scores differ by far less (about 1e-13 at most).
_ROUNDING_TIE = 1e-9


class _HeldOut:
    """Which rows the score of row ``i`` is computed without (Weka's three global scores).

    ``"loo"`` holds out row ``i`` alone (``leaveOneOutCV``); ``"kfold"`` holds out the
    block of rows ``floor(f n / k) <= i < floor((f + 1) n / k)`` that holds ``i``
    (``kFoldCV``: ``k`` contiguous blocks in data order, no shuffling); ``"cumulative"``
    holds out row ``i`` and every later row, so row ``i`` is scored from the rows before
    it (``cumulativeCV``: row 0 from the prior alone). The training count of a cell ``q``
    for row ``i`` is then ``N[q]`` minus the held-out rows' count of ``q`` (LOO, k-fold)
    or the count of ``q`` among rows ``0 .. i - 1`` (cumulative); counts are sums of
    instance weights. Lookups go through sorted keys (``searchsorted``), so a query costs
    ``O(log n)`` whatever the number of cells.
    """

    __slots__ = ("fold", "kind", "n", "w")

    def __init__(self, kind: str, n: int, n_folds: int, weights: np.ndarray | None):
        self.kind, self.n = kind, n
        self.w = None if weights is None else np.asarray(weights, dtype=np.float64)
        self.fold = None
        if kind == "kfold":
            bounds = np.arange(n_folds + 1, dtype=np.int64) * n // n_folds
            self.fold = np.searchsorted(bounds, np.arange(n), side="right") - 1

    def _weighted(self, keys: np.ndarray):
        order = np.argsort(keys, kind="stable")
        w = np.ones(keys.shape[0]) if self.w is None else self.w[order]
        return keys[order], np.concatenate([[0.0], np.cumsum(w)])

    @staticmethod
    def _between(sorted_keys, cum, lo, hi):
        """Weight of the keys ``k`` with ``lo <= k < hi`` (elementwise over ``lo``, ``hi``)."""
        return cum[np.searchsorted(sorted_keys, hi)] - cum[np.searchsorted(sorted_keys, lo)]

    def counts(self, keys: np.ndarray, q: np.ndarray, M: int) -> np.ndarray:
        """Training counts of cells ``q`` (shape ``(..., n)``, column ``i`` for row ``i``),
        the rows' own cells being ``keys`` (``(n,)``, codes ``0 .. M - 1``)."""
        i = np.arange(self.n)
        if self.kind == "cumulative":
            sk, cum = self._weighted(keys * self.n + i)
            return self._between(sk, cum, q * self.n, q * self.n + i)
        sk, cum = self._weighted(keys)
        full = self._between(sk, cum, q, q + 1)
        if self.kind == "loo":
            own = 1.0 if self.w is None else self.w
            return full - own * (q == keys)
        fk, fcum = self._weighted(self.fold * M + keys)
        lo = self.fold * M + q
        return full - self._between(fk, fcum, lo, lo + 1)


def _heldout_factor(vals, card: np.ndarray, v: int, codes, alpha: float, held: _HeldOut
                    ) -> np.ndarray:
    """CPT entry of node ``v`` for every row, counted without the row's held-out rows.

    ``(T[cell] + a) / (T[row] + r_v a)``, ``T`` being the training counts of
    :class:`_HeldOut`, evaluated as Weka's ``DiscreteEstimatorBayes`` does after its
    count updates: the counts are whole numbers (sums of weights), so numerator and
    denominator are exact and the entry is one rounded quotient. Shape ``(C, n)`` when
    the family of ``v`` holds the class (row ``c``: the class set to ``c``), else
    ``(n,)``: the entry does not depend on the class.
    """
    base, stride, size = codes
    r = int(card[v])
    C = int(card[0])
    cls = np.arange(C)[:, None]
    if v == 0:
        cell_t = base * r + vals[:, 0]
        q = base * r + cls
    else:
        cell_t = (base + vals[:, 0] * stride) * r + vals[:, v]
        q = cell_t if stride == 0 else (base + cls * stride) * r + vals[:, v]
    t_cell = held.counts(cell_t, q, size * r)
    t_row = held.counts(cell_t // r, q // r, size)
    return (t_cell + alpha) / (t_row + r * alpha)


def _weka_order_score(logs, file_order, y: np.ndarray, score: str) -> float:
    """The global score as Weka's ``calcScore`` rounds it, from every node's log entries.

    Weka's ``SimpleEstimator.distributionForInstance`` adds, for each class, the logs of
    all nodes' entries one by one in the file's attribute order (``file_order``; nodes
    outside the class's families add the same amount to every class), subtracts the
    largest class total, exponentiates, sums the classes in order and divides; the score
    adds the rows' true-class probabilities (or 0/1 hits of the first most probable
    class) one row after the other and divides by the number of rows. In exact
    arithmetic the class-free nodes cancel; in floating point they move the totals by
    round-off, which decides K2's strict comparison when a candidate's gain is exactly
    zero. Every operation here is the same IEEE operation in the same order. Only the
    logarithms (:func:`_exact_logs`) and exponentials (the C library's ``math.exp``)
    can differ from Java's ``Math.log`` and ``Math.exp``, which are specified to one
    unit in the last place and whose last bit depends on the JVM and the processor
    (HotSpot's exponential differs from the C library's on about 1 argument in 400);
    a tie that such a bit decides can then go the other way.
    """
    first = logs[file_order[0]]
    C, n = next(lg.shape for lg in logs if lg.ndim == 2)
    S = np.zeros((C, n)) + first
    for v in file_order[1:]:
        S = S + logs[v]
    D = S - S.max(axis=0)
    E = np.ones_like(D)
    off = D != 0
    E[off] = [math.exp(x) for x in D[off].tolist()]
    total = E[0].copy()
    for c in range(1, C):
        total = total + E[c]
    P = E / total
    if score == "loo-accuracy":
        hits = (P.argmax(axis=0) == y).astype(np.float64)
        return float(np.add.accumulate(hits)[-1] / n)
    return float(np.add.accumulate(P[y, np.arange(n)])[-1] / n)


_LN = decimal.Context(prec=40)


def _exact_logs(G: np.ndarray) -> np.ndarray:
    """Natural logarithm of every entry, correctly rounded to the nearest double.

    Computed with 40 significant digits (``decimal``) and rounded once, for each
    distinct value. Java's ``Math.log`` (which Weka calls) is specified to one unit in
    the last place only, but HotSpot's gives the correctly rounded value on all but
    about 1 in 100,000 arguments, where the C library's ``log`` (and numpy's) differ
    on about 1 in 1,000 to 1 in 700: the correctly rounded logarithm is the closest
    portable stand-in.
    """
    values, inverse = np.unique(G, return_inverse=True)
    logs = [float(_LN.ln(decimal.Decimal(x))) for x in values.tolist()]
    return np.array(logs)[inverse.reshape(G.shape)]


_LOO_DUPLICATES = ("one", "all")


class _Samples:
    """The samples a score averages over, stacked into one array of rows.

    Each sample is reduced to its distinct rows (ascending row index); the
    samples' rows are stacked in sample order in ``vals``, ``sid`` giving the
    sample of every stacked row. ``w`` holds the multiplicities and ``drop``
    the copies one leave-one-out step removes (1, or the multiplicity under
    ``loo_duplicates="all"``); both are ``None`` when no sample repeats a row,
    and the unweighted arithmetic then runs. ``inverse[k]`` maps every
    position of sample ``k`` to its stacked row. ``totals[k]`` is the number
    of instances of sample ``k`` (copies counted).

    Stacking lets one array operation serve all samples: the sample index
    enters every node's configuration code as one more, most significant,
    digit that never depends on the class (:func:`_family_codes`), so the
    counts of different samples fall in different cells.
    """

    __slots__ = ("drop", "equal_sizes", "flat_true", "inverse", "n_samples", "sid", "totals", "vals",
                 "w", "weighted")

    def __init__(self, vals: np.ndarray, samples: list[np.ndarray] | None, loo_duplicates: str,
                 weights: np.ndarray | None = None):
        self.weighted = weights is not None
        if samples is None:  # the full data set, every row once
            samples = [np.arange(vals.shape[0])]
        rows, mults, self.inverse = [], [], []
        offset = 0  # stacked rows before this sample
        for idx in samples:
            distinct, inverse, mult = np.unique(idx, return_inverse=True, return_counts=True)
            rows.append(distinct)
            mults.append(mult)
            self.inverse.append(inverse.reshape(-1) + offset)
            offset += distinct.shape[0]
        self.n_samples = len(rows)
        self.vals = vals[np.concatenate(rows)]
        self.sid = np.repeat(np.arange(self.n_samples), [r.shape[0] for r in rows])
        mult = np.concatenate(mults)
        if self.weighted:
            # Weka's instance weights: a row counts its weight once per copy, and a
            # leave-one-out step takes one copy's weight out (all of them under "all"),
            # as Weka's leaveOneOutCV sets an instance's weight to -w and updates
            own = np.asarray(weights, dtype=np.float64)[np.concatenate(rows)]
            self.w = mult * own
            self.drop = self.w if loo_duplicates == "all" else own
            self.totals = [float(t) for t in np.bincount(self.sid, weights=self.w,
                                                          minlength=self.n_samples)]
        elif mult.max() == 1:
            self.w = self.drop = None
            self.totals = [int(m.sum()) for m in mults]
        else:
            self.w = mult.astype(np.float64)
            self.drop = self.w if loo_duplicates == "all" else np.ones_like(self.w)
            self.totals = [int(m.sum()) for m in mults]
        self.equal_sizes = len(set(self.totals)) == 1
        n = self.vals.shape[0]
        self.flat_true = self.vals[:, 0] * n + np.arange(n)

    def per_sample(self, values: np.ndarray) -> np.ndarray:
        """Sums of ``values`` (one per stacked row, weighted by ``w``) per sample."""
        weights = values if self.w is None else self.w * values
        return np.bincount(self.sid, weights=weights, minlength=self.n_samples)


def _check_samples(samples, vals: np.ndarray, loo_duplicates: str, weights=None) -> _Samples:
    """Validate ``samples`` (or instance ``weights``) against the ``n`` rows of ``vals`` and
    stack them."""
    n = vals.shape[0]
    if loo_duplicates not in _LOO_DUPLICATES:
        raise InputError(
            f"loo_duplicates must be one of {_LOO_DUPLICATES}, got {loo_duplicates!r}"
        )
    if weights is not None:
        weights = np.asarray(weights, dtype=np.float64)
        if weights.shape != (n,) or not np.all(np.isfinite(weights)) or np.any(weights < 0) \
                or not weights.sum() > 0:
            raise InputError(f"weights must be {n} finite numbers >= 0, not all 0")
    if samples is None:
        return _Samples(vals, None, loo_duplicates, weights)
    if isinstance(samples, np.ndarray) and samples.ndim != 2:
        raise InputError(
            "samples must be a sequence of 1-D arrays of row indices (or a 2-D array, "
            f"one sample per row), got an array of shape {samples.shape}"
        )
    out = []
    for k, s in enumerate(samples):
        s = np.asarray(s)
        if s.ndim != 1 or s.size == 0:
            raise InputError(
                f"samples[{k}] must be a non-empty 1-D array of row indices, got shape {s.shape}"
            )
        if not np.issubdtype(s.dtype, np.integer):
            raise InputError(
                f"samples[{k}] must hold integer row indices, got dtype {s.dtype}"
            )
        if s.min() < 0 or s.max() >= n:
            raise InputError(f"samples[{k}] holds row indices outside 0..{n - 1}")
        out.append(s.astype(np.int64))
    if not out:
        raise InputError("samples must hold at least one sample")
    return _Samples(vals, out, loo_duplicates, weights)


def _mean_score(scores: list) -> float:
    """Mean of the samples' scores.

    One float score is returned unchanged (so ``samples=None`` stays
    bit-for-bit). Accuracies come as exact fractions and are averaged
    exactly, so structures whose mean accuracies are equal tie exactly
    (the strict-improvement rule of K2 then keeps the current one) instead
    of differing by the rounding of a float sum.
    """
    if len(scores) == 1:
        return float(scores[0])
    if isinstance(scores[0], Fraction):
        return float(sum(scores, Fraction(0)) / len(scores))
    return float(sum(scores) / len(scores))


def _check_order(order, n_nodes: int, init: str) -> list[int]:
    """A K2 node order: a permutation of the nodes, the class first under naive Bayes."""
    if order is None:
        return list(range(n_nodes))
    out = [int(v) for v in order]
    if sorted(out) != list(range(n_nodes)):
        raise InputError(f"order must be a permutation of the {n_nodes} nodes 0 .. "
                         f"{n_nodes - 1}, got {list(order)!r}")
    if init == "naive-bayes" and out[0] != 0:
        raise InputError("with init='naive-bayes' the order must start with the class (node 0)")
    return out


_JAVA_MULT, _JAVA_MASK = 0x5DEECE66D, (1 << 48) - 1


def random_node_order(n_nodes: int, init: str = "naive-bayes", seed: int = 1) -> list[int]:
    """The K2 node order that Weka's ``-R`` draws, from the generator seeded with ``seed``.

    Weka's global ``K2.search`` starts from the class followed by the attributes in
    file order (here nodes ``0, 1, .., d``) and then, for each position ``i = 0 ..
    n_nodes - 1`` in turn, draws ``j = nextInt(n_nodes)`` from a ``java.util.Random``
    and swaps the nodes at positions ``i`` and ``j``, except when either position is 0
    under naive-Bayes initialisation (the class then stays first). Weka creates that
    generator with ``new Random()``, seeded from the clock, so its ``-R`` order cannot
    be repeated; here the same generator (the 48-bit linear congruential generator of
    the ``java.util.Random`` specification, with its ``nextInt(bound)`` rejection rule)
    is seeded with ``seed``, so an order is reproducible and is the one Weka draws when
    its generator holds that seed.

    Parameters
    ----------
    n_nodes : int >= 1
        Number of nodes, the class included.
    init : {"naive-bayes", "empty"}, default="naive-bayes"
        The search's initial structure; "empty" (Weka's ``-N``) lets the class move.
    seed : int, default=1
        Seed of ``java.util.Random(seed)`` (a Java ``long``).

    Returns
    -------
    list of int
        A permutation of ``0 .. n_nodes - 1``.

    Raises
    ------
    ValueError
        If ``n_nodes < 1`` or ``init`` is unknown.

    Examples
    --------
    >>> random_node_order(5, seed=42)
    [0, 3, 1, 4, 2]
    """
    if init not in _INITS:
        raise InputError(f"init must be one of {_INITS}, got {init!r}")
    if int(n_nodes) != n_nodes or n_nodes < 1:
        raise InputError(f"n_nodes must be an integer >= 1, got {n_nodes!r}")
    state = (int(seed) ^ _JAVA_MULT) & _JAVA_MASK

    def next31() -> int:
        nonlocal state
        state = (state * _JAVA_MULT + 0xB) & _JAVA_MASK
        return state >> 17  # the top 31 of the 48 bits, never negative

    def next_int(bound: int) -> int:
        if bound & -bound == bound:  # a power of two: the high bits
            return (bound * next31()) >> 31
        while True:  # reject the last, incomplete block of the 2**31 values
            bits = next31()
            val = bits % bound
            if bits - val + (bound - 1) < 1 << 31:
                return val

    order = list(range(n_nodes))
    fixed = 0 if init == "naive-bayes" else -1
    for i in range(n_nodes):
        j = next_int(n_nodes)
        if i != fixed and j != fixed:
            order[i], order[j] = order[j], order[i]
    return order


# --------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------
def loo_posteriors(
    X,
    y,
    parents,
    cardinalities,
    n_classes,
    alpha=0.5,
    *,
    samples=None,
    loo_duplicates="one",
):
    """Leave-one-out class posteriors of a fixed network, from counts.

    Row ``i`` is the posterior ``P(c | x_i)`` of the network whose CPTs are
    estimated on all instances but ``i`` (Abbasian et al. 2013, Algorithm 3,
    line 4), computed in closed form from the full-data counts. With
    ``samples``, the same within every sample: position ``t`` of sample ``k``
    gets the posterior of the network counted on sample ``k`` without that
    instance (see ``loo_duplicates``).

    Parameters
    ----------
    X : array-like of int, shape (n, d)
        Attribute codes; column ``j`` takes values ``0 .. cardinalities[j] - 1``.
    y : array-like of int, shape (n,)
        Class codes ``0 .. n_classes - 1``.
    parents : sequence of d + 1 sequences of int
        Parent sets per node (node 0 = class, node j = column j - 1).
    cardinalities : array-like of int, shape (d,)
        Number of values of each attribute (>= 1).
    n_classes : int
        Number of classes ``C`` (>= 1).
    alpha : float, default=0.5
        Dirichlet pseudo-count ``a`` of ``P = (N_jk + a) / (N_j + r a)``; > 0.
    samples : sequence of array-like of int, or None, default=None
        ``E`` samples of the training rows, each a non-empty 1-D array of row
        indices into ``X`` (repeats allowed, as in a bootstrap sample). With
        samples the score is the mean over the samples of each sample's LOO
        score (Abbasian et al. 2013, Algorithm 4): a sample's counts are its
        multiplicity-weighted counts, and its LOO score averages over its
        instances, every copy of a repeated row counting as one instance.
        ``None`` scores the full data set, every row once.
    loo_duplicates : {"one", "all"}, default="one"
        What leaving out one instance of a sample removes when the sample
        holds ``m > 1`` copies of its row: ``"one"`` removes that copy only
        (the other ``m - 1`` stay in the counts, as Weka's weighted count
        update does), ``"all"`` removes all ``m`` copies. Irrelevant for rows
        that occur once, hence for ``samples=None``.

    Returns
    -------
    ndarray of float, shape (n, C), or list of E such arrays
        Rows sum to one. With ``samples``, a list whose array ``k`` has shape
        ``(len(samples[k]), C)``, one row per instance in sample order (copies
        of a row get identical rows).

    Raises
    ------
    ValueError
        Malformed or out-of-range codes, a bad parent set or a cycle,
        ``alpha <= 0``, a malformed sample or an unknown ``loo_duplicates``.
    """
    alpha = _check_alpha(alpha)
    vals, card = _check_data(X, y, cardinalities, n_classes)
    parents = _check_parents(parents, card.shape[0])
    part = _check_samples(samples, vals, loo_duplicates)
    post = _posterior(_loo_factors(part, card, parents, alpha))
    if samples is None:
        return post
    return [post[inverse] for inverse in part.inverse]


def loo_score(
    X,
    y,
    parents,
    cardinalities,
    n_classes,
    *,
    score="loo-probability",
    alpha=0.5,
    samples=None,
    loo_duplicates="one",
) -> float:
    """Global leave-one-out score of a fixed network (Algorithm 3 of [1]_).

    ``"loo-probability"`` is the mean LOO posterior of the true class (Weka's
    default); ``"loo-accuracy"`` the mean 0/1 correctness of the LOO arg-max
    (ties go to the lowest class code, as in Weka). With ``samples``, the
    mean over the samples of each sample's score, every instance (copy) of a
    sample weighing one (the ensemble score, Algorithm 4). Parameters,
    raises: see :func:`loo_posteriors`; ``score`` outside those two names
    raises ``ValueError``.

    Returns
    -------
    float in [0, 1]
    """
    if score not in _SCORES:
        raise InputError(f"score must be one of {_SCORES}, got {score!r}")
    alpha = _check_alpha(alpha)
    vals, card = _check_data(X, y, cardinalities, n_classes)
    parents = _check_parents(parents, card.shape[0])
    part = _check_samples(samples, vals, loo_duplicates)
    return _score(_relative(_log_sum(_loo_factors(part, card, parents, alpha))), part, score)


def k2_search(
    X,
    y,
    cardinalities,
    n_classes,
    *,
    max_parents: int | None = 2,
    init: str = "naive-bayes",
    score: str = "loo-probability",
    alpha: float = 0.5,
    samples=None,
    loo_duplicates: str = "one",
    weights=None,
    cv_type: str = "loo",
    n_folds: int = 10,
    order=None,
    weka_rounding: bool = False,
) -> list[tuple[int, ...]]:
    """K2 structure search with the global leave-one-out score.

    The node order is the class (node 0) followed by the attributes in column
    order. Starting from a naive Bayes network (or no arcs), each attribute
    node in turn repeatedly receives the predecessor whose addition gives the
    highest global LOO score of the whole network, provided that score is
    *strictly* greater than the current one (on equal scores the earliest
    candidate in the order wins); it stops when nothing improves or the node
    has ``max_parents`` parents, the class parent included. This is Algorithm
    2 of Abbasian et al. (2013) with the score of their Algorithm 3, with the
    semantics of Weka's ``bayes.net.search.global.K2 -S LOO-CV`` (Cooper &
    Herskovits 1992 for K2 itself). With ``samples`` the score of a structure
    is the mean LOO score over the given samples (the Inner-Ensemble score,
    Algorithm 4 of Abbasian et al. 2013); every candidate is scored on the
    same samples.

    Parameters
    ----------
    X : array-like of int, shape (n, d)
        Attribute codes, column ``j`` in ``0 .. cardinalities[j] - 1``.
    y : array-like of int, shape (n,)
        Class codes in ``0 .. n_classes - 1``.
    cardinalities : array-like of int, shape (d,)
        Number of values of each attribute (>= 1).
    n_classes : int
        Number of classes ``C`` (>= 1).
    max_parents : int >= 0 or None, default=2
        Upper bound on the number of parents of a node, counting the class
        (Weka's ``-P``; 1 keeps naive Bayes). ``None`` means no bound (Weka's
        command line without ``-P``). The bound limits additions only: with
        ``max_parents=0`` the naive-Bayes arcs stay, as in Weka.
    init : {"naive-bayes", "empty"}, default="naive-bayes"
        Initial structure: the class is a parent of every attribute, or no
        arcs (Weka's ``-N``).
    score : {"loo-probability", "loo-accuracy"}, default="loo-probability"
        Mean LOO posterior of the true class, or mean LOO 0/1 accuracy
        (Weka's ``-Q``).
    alpha : float, default=0.5
        Dirichlet pseudo-count of the CPT estimate (``SimpleEstimator -A``); > 0.
    samples : sequence of array-like of int, or None, default=None
        ``E`` samples of the training rows to score every structure on (the
        Inner-Ensemble score, Algorithm 4); see :func:`loo_posteriors`.
    loo_duplicates : {"one", "all"}, default="one"
        What leaving out a repeated row of a sample removes; see
        :func:`loo_posteriors`.
    weights : array-like of shape (n,), or None
        Weka's instance weights: every count is a sum of weights, a leave-one-out step
        takes the row's own weight out of the counts, and the score is the weighted mean
        over the rows, as ``GlobalScoreSearchAlgorithm.leaveOneOutCV`` computes it with
        weighted instances. With ``samples``, a row drawn twice counts its weight twice.
    cv_type : {"loo", "kfold", "cumulative"}, default="loo"
        Which rows a row's score is computed without (Weka's ``-S LOO-CV``,
        ``k-Fold-CV``, ``Cumulative-CV``): itself; its fold, the ``n_folds`` contiguous
        blocks ``floor(f n / k) <= i < floor((f + 1) n / k)`` of the data in its order
        (no shuffling, as Weka's ``kFoldCV``); or itself and all later rows, so that row
        ``i`` is scored by the network counted on rows ``0 .. i - 1`` (row 0 by the
        prior alone). The score is the mean over the rows either way. Only "loo" takes
        ``samples``.
    n_folds : int >= 2, default=10
        Number of folds of ``cv_type="kfold"``. Weka fixes it at 10 (no option sets it).
    order : sequence of int, or None, default=None
        The K2 node order, a permutation of ``0 .. d``: a node takes parents among the
        nodes before it, tried in this order. None: the class, then the attributes in
        column order. With ``init="naive-bayes"`` it must start with the class. Weka's
        ``-R`` order is :func:`random_node_order`.
    weka_rounding : bool, default=False
        Decide the comparisons of scores that tie up to round-off (within 1e-9) as
        Weka's rounding does, by recomputing both scores in Weka's floating-point order
        (``_weka_order_score``): a candidate that changes nothing in exact arithmetic (an
        attribute parent of a node outside the class's families, under ``init="empty"``)
        is then accepted when rounding makes its score larger, as Weka accepts it. The
        class is taken to be the file's last attribute (Weka adds the nodes' logs in
        file order). False compares the closed-form scores: such candidates are never
        accepted. Only with ``samples=None``.

    Returns
    -------
    list of d + 1 tuples of int
        ``parents[v]`` are the parents of node ``v`` in the order they were
        added (the class first under naive-Bayes initialisation).
        ``parents[0]`` is always empty.

    Raises
    ------
    ValueError
        Malformed or out-of-range codes, unknown ``init``, ``score``, ``cv_type`` or
        ``loo_duplicates``, ``max_parents < 0``, ``n_folds < 2``, ``alpha <= 0``, an
        ``order`` that is not a permutation (or does not start with the class under
        naive Bayes), ``samples`` with another ``cv_type`` or ``weka_rounding``, or a
        malformed sample (not 1-D, empty, non-integer or out of range).

    Notes
    -----
    Each candidate is scored in ``O(n C)`` array operations from the full-data
    counts (see the module docstring), never by refitting; with ``samples``,
    in ``O(E n_u C)``, ``n_u`` being the number of distinct rows of a sample
    (its rows weighted by their multiplicities). ``samples=None`` runs the
    same arithmetic as a single sample holding every row once. Adding an attribute
    parent to a node that has no class parent cannot change the score, so such
    candidates are never accepted unless ``weka_rounding``; Weka evaluates them
    numerically and rounding noise can make it accept one under ``init="empty"``.

    The k-fold and cumulative scores change only the counts each row is scored with
    (:class:`_HeldOut`): row ``i``'s entry of node ``v`` is ``(T[J, k] + a) / (T[J] +
    r_v a)`` with ``T`` the counts of the rows that score ``i``. The factorisation
    over the class's families, and so the cost of a candidate, is the LOO score's.
    """
    if init not in _INITS:
        raise InputError(f"init must be one of {_INITS}, got {init!r}")
    if score not in _SCORES:
        raise InputError(f"score must be one of {_SCORES}, got {score!r}")
    if cv_type not in _CV_TYPES:
        raise InputError(f"cv_type must be one of {_CV_TYPES}, got {cv_type!r}")
    if isinstance(n_folds, bool) or int(n_folds) != n_folds or n_folds < 2:
        raise InputError(f"n_folds must be an integer >= 2, got {n_folds!r}")
    if max_parents is None:
        max_parents = np.iinfo(np.int64).max
    elif int(max_parents) != max_parents or max_parents < 0:
        raise InputError(
            f"max_parents must be an integer >= 0 or None, got {max_parents!r}"
        )
    alpha = _check_alpha(alpha)
    vals, card = _check_data(X, y, cardinalities, n_classes)
    if samples is not None and (cv_type != "loo" or weka_rounding):
        raise InputError("samples (the Inner-Ensemble score) take only cv_type='loo' "
                         "without weka_rounding")
    part = _check_samples(samples, vals, loo_duplicates, weights)
    n_nodes = vals.shape[1]
    order = _check_order(order, n_nodes, init)
    C = int(card[0])
    held = None
    if cv_type != "loo" or weka_rounding:
        held = _HeldOut(cv_type, vals.shape[0], int(n_folds), part.w)

    def factor(v, codes_v):
        """The class-dependent entries of node v (None outside the class's families)."""
        if v != 0 and codes_v[1] == 0:  # the class is not a parent of v
            return None
        if cv_type == "loo":
            return _node_factor(part, card, v, codes_v, alpha)
        return _heldout_factor(vals, card, v, codes_v, alpha, held)

    parents: list[list[int]] = [[] for _ in range(n_nodes)]
    if init == "naive-bayes":
        for v in range(1, n_nodes):
            parents[v].append(0)
    # per node: configuration codes and score factors (None off the class's
    # families); the sum of the factors' logs
    codes = [_family_codes(part, card, ps) for ps in parents]
    factors = [factor(v, codes[v]) for v in range(n_nodes)]
    log_sum = _log_sum(factors)
    # Weka's rounding: every node's log entries, computed when a first tie needs them;
    # Weka adds them in file order (the attributes, then the class)
    file_order = [*range(1, n_nodes), 0]
    logs: list[np.ndarray] = []

    def entries(v, codes_v, G):
        """Node v's entries for Weka's sum: G, or the class-free entries."""
        return _heldout_factor(vals, card, v, codes_v, alpha, held) if G is None else G

    def weka_score(v, state):
        """Weka's rounded score with v's parents those of ``state`` (None: the current)."""
        if not logs:
            logs.extend(_exact_logs(entries(u, codes[u], factors[u])) for u in range(n_nodes))
        lv = logs[v] if state is None else state.setdefault(
            "logs", _exact_logs(entries(v, state["codes"], state["G"])))
        return _weka_order_score([lv if u == v else lg for u, lg in enumerate(logs)],
                                 file_order, vals[:, 0], score)

    for k in range(1, n_nodes):
        v = order[k]
        if len(parents[v]) >= max_parents:
            continue
        # the other nodes' factors stay fixed while v's parents change
        G = factors[v]
        rest_log = log_sum if G is None else log_sum - np.log(G)
        rest = _relative(rest_log)
        current = _score(rest if G is None else rest * G, part, score)
        current_w = None  # its score as Weka rounds it, once a tie needs it
        r = int(card[v])
        while len(parents[v]) < max_parents:
            best, best_w, best_state = current, current_w, None
            for p in order[:k]:
                if p in parents[v]:
                    continue
                if factors[v] is None and p != 0 and not weka_rounding:
                    continue  # v stays outside the class's families: the same score, exactly
                new = _extend_codes(part.vals, card, codes[v], p)
                if new[2] * r > _DENSE_CELLS:
                    new = _compress_codes(new, C)
                G = factor(v, new)
                s = current if G is None and v != 0 else _score(rest * G, part, score)
                state = {"parent": p, "codes": new, "G": G}
                if weka_rounding and abs(s - best) <= _ROUNDING_TIE:
                    # a tie up to round-off: Weka's rounding decides, unless the entries
                    # are the best's own (e.g. a parent with one value): then it ties too
                    held_G = factors[v] if best_state is None else best_state["G"]
                    if G is not None and held_G is not None and np.array_equal(G, held_G):
                        continue
                    if best_w is None:
                        best_w = weka_score(v, best_state)
                    s_w = weka_score(v, state)
                    if s_w > best_w:
                        best, best_w, best_state = s, s_w, state
                elif s > best:
                    best, best_w, best_state = s, None, state
            if best_state is None:
                break
            codes[v], factors[v] = best_state["codes"], best_state["G"]
            if logs:
                logs[v] = best_state.get("logs")
                if logs[v] is None:
                    logs[v] = _exact_logs(entries(v, codes[v], factors[v]))
            parents[v].append(best_state["parent"])
            current, current_w = best, best_w
        G = factors[v]
        log_sum = rest_log if G is None else rest_log + np.log(G)
    return [tuple(ps) for ps in parents]


def markov_blanket_correction(parents) -> list[tuple[int, ...]]:
    """Put every attribute node in the class's Markov blanket (Weka's ``-mbc``).

    After the search, each attribute node ``v`` in turn (in node order) that is not in the
    Markov blanket of the class (node 0) -- the class is not its parent, it is not the
    class's parent, and it shares no child with the class -- gets the class as one more,
    last, parent; the check of a later node sees the arcs added before it. This is
    ``SearchAlgorithm.doMarkovBlanketCorrection`` of Weka's BayesNet for a class with no
    parents, as K2 leaves it (the class comes first in its order), so the arc that Weka
    would point at an ancestor of the class never arises. The bound on parents does not
    apply to these arcs, as in Weka.

    Parameters
    ----------
    parents : sequence of d + 1 sequences of int
        The structure; ``parents[0]`` (the class's) must be empty.

    Returns
    -------
    list of d + 1 tuples of int

    Raises
    ------
    ValueError
        If the class has parents.
    """
    out = [list(ps) for ps in parents]
    if out and out[0]:
        raise InputError("the Markov blanket correction expects a class without parents")
    for v in range(1, len(out)):
        inside = 0 in out[v] or any(v in ps and 0 in ps for ps in out)
        if not inside:
            out[v].append(0)
    return [tuple(ps) for ps in out]


def fit_cpts(X, y, parents, cardinalities, n_classes, alpha=0.5, weights=None
             ) -> list[np.ndarray]:
    """Conditional probability tables of a network, estimated on all the data.

    ``cpts[v][J, k] = (N[J, k] + alpha) / (N[J] + r_v alpha)`` (Weka's
    ``SimpleEstimator -A alpha``), where ``J`` is the mixed-radix index of the
    parent configuration with the first parent most significant. The counts are
    accumulated as Weka's ``DiscreteEstimatorBayes`` does, to the same doubles: a count
    starts at ``alpha`` and a total at ``r_v alpha``, and each row adds its weight to
    both in row order.

    Parameters
    ----------
    X, y, cardinalities, n_classes, alpha
        As in :func:`k2_search`.
    parents : sequence of d + 1 sequences of int
        The structure, e.g. the output of :func:`k2_search`.
    weights : array-like of shape (n,), or None
        Instance weights: ``N`` are sums of weights (Weka's ``SimpleEstimator`` adds each
        instance's weight).

    Returns
    -------
    list of d + 1 ndarrays
        ``cpts[v]`` has shape ``(prod(r_p for p in parents[v]), r_v)``; rows sum
        to one.

    Raises
    ------
    ValueError
        Malformed or out-of-range data, a bad parent set or a cycle,
        ``alpha <= 0``, or a table with more than 2**31 cells.
    """
    alpha = _check_alpha(alpha)
    vals, card = _check_data(X, y, cardinalities, n_classes)
    parents = _check_parents(parents, card.shape[0])
    w = np.ones(vals.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
    cpts = []
    for v, ps in enumerate(parents):
        size = int(np.prod([int(card[p]) for p in ps], dtype=object)) if ps else 1
        r = int(card[v])
        if size * r > 2**31:
            raise InputError(
                f"the table of node {v} would have {size * r} cells (more than 2**31)"
            )
        J = np.zeros(vals.shape[0], dtype=np.int64)
        for p in ps:
            J = J * card[p] + vals[:, p]
        # as Weka's DiscreteEstimatorBayes: every count starts at alpha, every total at
        # r * alpha, and each row adds its weight to both, in row order
        counts = np.full(size * r, alpha)
        totals = np.full(size, alpha * r)
        np.add.at(counts, J * r + vals[:, v], w)
        np.add.at(totals, J, w)
        cpts.append(counts.reshape(size, r) / totals[:, None])
    return cpts
