"""ISCA and SS-ISCA: clustering on a similarity learnt from rule ensembles.

Akdemir & Jannink (*Ensemble learning with trees and rules: supervised,
semi-supervised, unsupervised*, Intelligent Data Analysis 18(5), 2014,
Sect. 3) turn the supervised rule ensembles of ISLE into a clustering method.
Every conjunctive rule splits the instances in two (those it fires for and the
others), so a large collection of rules is a large collection of two-cluster
partitions, and a cluster-ensemble consensus of those partitions (Strehl &
Ghosh's CSPA, which the paper cites) is a clustering of the data.

The rules need targets to be grown against. The paper manufactures them:

* **SS-ISCA** (semi-supervised; Sect. 3, the first algorithm of the section,
  printed as "Algorithm 1: SS-ISCA(X, Y, M, m, nu)"): the user supplies an
  ``n x q`` target matrix ``Y`` whose segregation matters (phenotypes, say);
  stage ``j``'s target ``R_j`` is a random linear combination of the
  columns of ``Y``.
* **ISCA** (unsupervised; Algorithm 2, "ISCA(X, M, m, nu)"): with no
  targets, ``R_j`` is a random linear combination of the inputs ``X``
  themselves.

In both, each of the ``M`` stages gathers ``m`` rules that predict ``R_j``
from ``X`` (ISLE regression trees, every non-root node a rule), and all rules
are stacked into the ``n x r`` 0/1 rule matrix ``T``. A memory ``nu`` pushes
later stages towards directions earlier rules did not explain: the next
target is replaced by ``(I - nu P_T) R_{j+1}``, ``P_T`` the orthogonal
projection on the column span of ``T``.

What this module fixes where the paper leaves room (each choice is stated in
the docstring of :class:`ISCA`):

* targets come from column-standardised ``X`` (ISCA) or ``Y`` (SS-ISCA),
  projected on a vector of independent standard normal weights;
* the ``m`` rules of a stage come from ISLE trees grown one at a time until
  ``m`` new rules (neither a duplicate nor a complement of any rule already
  gathered, in any stage) are collected;
* ``P_T R`` is computed by least squares (LAPACK ``gelsd``), never by
  inverting ``T'T``;
* the similarity is the rule *agreement*, not the paper's ``T T' / r`` (whose
  diagonal is not 1, so ``1 - S`` is not a dissimilarity; see
  :func:`rule_similarity`);
* for tens of thousands of rows (the paper's conclusion) the ``n x n``
  similarity is never held: the model keeps the bit-packed rule matrix, the
  linkage reads the condensed ``1 - S`` filled a block of rows at a time
  (:mod:`ensemblekit.rules._agreement`), and :meth:`ISCA.similarity_blocks`
  yields ``S`` by blocks of rows;
* the paper's two ways of taming the memory step's cost (end of Sect. 3)
  are parameters: ``rule_selection="lasso"`` keeps the rules of each stage
  that a lasso of the stage's target selects, and ``projection_sample``
  projects on a random share of the rule columns.

Numpy arrays in, labels and matrices out; nothing here reads files or prints.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import validate_data
from threadpoolctl import threadpool_limits

from ensemblekit.clustering.consensus import check_n_clusters
from ensemblekit.errors import InputError

from ..constraints import validate_params
from ..rows import quiet_finite_check
from ._agreement import RuleAgreement, pack_rules
from .extract import Rule, RuleSet, extract_rules, flatten_rules
from .extract_model import as_float32
from .isca_model import LINKAGES, POSTPROCESSORS, RULE_SELECTIONS, SIMILARITIES, ISCAModel
from .isle import generate_isle

__all__ = ["ISCA", "LINKAGES", "POSTPROCESSORS", "RULE_SELECTIONS", "SIMILARITIES",
           "project_out", "random_target", "rule_similarity"]

# Folds and largest number of PLS components of the inner cross-validation
# that fits the rule weights of similarity="importance".
_IMPORTANCE_FOLDS = 5
_MAX_PLS_COMPONENTS = 10
# A projected target whose norm falls below this fraction of the fresh one is
# numerical noise (the rules already span it): the memory step is skipped.
_SPANNED = 1e-9


# ---------------------------------------------------------------------------
# numeric kernels
# ---------------------------------------------------------------------------
def standardize_columns(A) -> np.ndarray:
    """Centre each column and divide it by its (population) standard deviation.

    Parameters
    ----------
    A : ndarray of shape (n_samples, n_columns)
        Finite numbers.

    Returns
    -------
    ndarray of shape (n_samples, n_columns), float64
        Mean 0 and variance 1 per column; a constant column becomes all zeros
        (it carries no direction to project on).
    """
    A = np.asarray(A, dtype=np.float64)
    centred = A - A.mean(axis=0)
    scale = centred.std(axis=0)
    return np.divide(centred, scale, out=np.zeros_like(centred), where=scale > 0)


def random_target(Z, rng) -> np.ndarray:
    """One stage's target ``R = Z w``, ``w`` a vector of independent N(0, 1) weights.

    The paper's "random projection" of ``X`` (ISCA) or ``Y`` (SS-ISCA),
    "interpreted as a random linear projection" (Sect. 3).

    Parameters
    ----------
    Z : ndarray of shape (n_samples, n_columns)
        Column-standardised ``X`` or ``Y`` (see :func:`standardize_columns`).
    rng : numpy.random.RandomState
        Draws the ``n_columns`` weights.

    Returns
    -------
    ndarray of shape (n_samples,)
    """
    return Z @ rng.standard_normal(Z.shape[1])


def project_out(R, T, nu) -> np.ndarray:
    """The memory step of ISCA / SS-ISCA: ``(I - nu P_T) R``.

    ``P_T R = T b`` with ``b`` a least-squares solution of ``T b = R``
    (LAPACK ``gelsd`` through :func:`scipy.linalg.lstsq`, singular values
    below ``max(n, r) * eps`` of the largest treated as zero, as
    :func:`numpy.linalg.matrix_rank` does), which is the orthogonal projection
    of ``R`` on the column span of ``T`` whether or not ``T`` has full column
    rank; the paper's ``T (T'T)^{-1} T'`` is never
    formed. With ``nu = 1`` the result is orthogonal to every column of ``T``.

    Parameters
    ----------
    R : ndarray of shape (n_samples,)
        The fresh target.
    T : ndarray of shape (n_samples, n_rules)
        Rule matrix of the rules gathered so far (any real matrix works).
    nu : float in [0, 1]
        Memory. 0 returns ``R`` unchanged (without solving anything).

    Returns
    -------
    ndarray of shape (n_samples,), float64

    References
    ----------
    Akdemir & Jannink 2014, Sect. 3: ``R_{j+1} <- (I - nu P_{T(X)}) R_{j+1}``.
    """
    from scipy.linalg import lstsq

    R = np.asarray(R, dtype=np.float64)
    if nu == 0 or T.shape[1] == 0:
        return R.copy()
    T = np.asarray(T, dtype=np.float64)
    # singular values below this share of the largest are round-off, not directions: a rule
    # matrix is rank-deficient by construction (a parent rule is the sum of its children)
    cond = max(T.shape) * np.finfo(np.float64).eps
    coef = lstsq(T, R, cond=cond, lapack_driver="gelsd")[0]
    return R - nu * (T @ coef)


def rule_similarity(T, weights=None) -> np.ndarray:
    """Similarity of instances from the rules they fire: the weighted rule agreement.

    Each rule is read as the two-cluster partition it defines (the instances
    it fires for, and the others) -- the cluster-ensemble view of CSPA
    (Strehl & Ghosh 2002) that the paper points to. Two instances agree on a
    rule when both fire it or neither does, and

        ``S_ij = sum_k a_k [T_ik == T_jk] / sum_k a_k``.

    In the indicator encoding ``E = [T, 1 - T]`` with column weights
    ``(a, a)`` this is ``E diag(a, a) E' / sum(a)``: the paper's
    ``T diag(.) T' / r`` with each rule's complement added as a column, which
    gives ``S_ii = 1``. ``1 - S`` is then the (weighted) normalised Hamming
    distance between rule vectors, a metric on distinct rule vectors. The
    paper's own ``T T' / r`` counts only co-firing, so ``S_ii`` is the
    fraction of rules firing for ``i`` and ``1 - S`` is not a dissimilarity.

    Parameters
    ----------
    T : array-like or sparse matrix of shape (n_samples, n_rules)
        0/1 rule matrix.
    weights : ndarray of shape (n_rules,), optional
        Non-negative rule weights ``a_k`` (default all 1: ``S_ij`` is the
        fraction of rules on which ``i`` and ``j`` agree). Weights summing to
        0 count as all 1.

    Returns
    -------
    ndarray of shape (n_samples, n_samples), float64
        Symmetric, in [0, 1], unit diagonal; all ones when there are no rules.

    Raises
    ------
    ValueError
        If ``weights`` has the wrong length or a negative or non-finite entry.

    Notes
    -----
    Computed in row blocks from the bit-packed ``T`` on whole numbers
    (:mod:`ensemblekit.rules._agreement`): with equal weights each entry is
    exactly ``1 - c_ij / r``, ``c_ij`` the number of rules on which the rows
    differ (what :func:`scipy.spatial.distance.pdist`'s ``"hamming"`` gives);
    other weights are first rounded to multiples of ``2^-52`` of their total.
    This function returns the dense matrix; :meth:`ISCA.similarity_blocks`
    yields it a block of rows at a time.
    """
    T = T if sp.issparse(T) else np.asarray(T)
    n, r = T.shape
    if weights is not None:
        weights = np.asarray(weights, dtype=np.float64)
        if weights.shape != (r,) or not np.all(np.isfinite(weights)) or np.any(weights < 0):
            raise InputError(f"weights must be {r} finite non-negative numbers")
    return RuleAgreement(pack_rules(T), r, weights).similarity_matrix()


# ---------------------------------------------------------------------------
# rule gathering
# ---------------------------------------------------------------------------
def _partition_key(column: np.ndarray) -> bytes:
    """The two-cluster partition a 0/1 column defines, the same for a rule and its complement."""
    if column[0]:
        column = ~column
    return np.packbits(column).tobytes()


class _RuleCollector:
    """Rules gathered over the stages: their trees, nodes, 0/1 columns and stages.

    A stage's rules wait in a pending list until :meth:`end_stage` keeps all
    of them or those a selection mask names (``rule_selection="lasso"``). A
    rule counts as seen (so neither it nor its complement is gathered again)
    from the moment it is first found, whether or not its stage keeps it.
    """

    def __init__(self, X, capacity: int, dense: bool):
        self.X = X
        self.trees: list = []
        self.rules: list[Rule] = []
        self.nodes: list[list[int]] = []
        self.support: list[float] = []
        self.stage: list[int] = []
        self.seen: set[bytes] = set()
        self.n_candidates = 0
        # this stage's trees, each with its new rules as (rule, support, 0/1 column)
        self.pending: list[tuple] = []
        # dense copy of T kept only when the memory step needs it
        self.T = np.empty((X.shape[0], capacity)) if dense else None

    @property
    def n_rules(self) -> int:
        return len(self.rules)

    def add_tree(self, tree, wanted: int) -> int:
        """Hold up to ``wanted`` new rules of a fitted tree, in node order; return how many."""
        found = extract_rules([tree], self.X)
        self.n_candidates += found.n_candidates
        if not found.rules:
            return 0
        matrix = found.transform(self.X).tocsc()
        n = self.X.shape[0]
        new = []
        for k, rule in enumerate(found.rules):
            if len(new) == wanted:
                break
            column = np.zeros(n, dtype=bool)
            column[matrix.indices[matrix.indptr[k]:matrix.indptr[k + 1]]] = True
            key = _partition_key(column)
            if key in self.seen:
                continue
            self.seen.add(key)
            new.append((rule, float(found.support[k]), column))
        if new:
            self.pending.append((tree, new))
        return len(new)

    def stage_matrix(self) -> np.ndarray:
        """The pending rules' 0/1 columns, shape (n_samples, pending rules), float64."""
        columns = [column for _, new in self.pending for _, _, column in new]
        return np.column_stack(columns).astype(np.float64)

    def end_stage(self, stage: int, keep=None) -> None:
        """Keep the pending rules (all, or where the boolean mask ``keep`` is True)."""
        position = 0
        for tree, new in self.pending:
            kept_nodes = []
            index = len(self.trees)
            for rule, support, column in new:
                if keep is None or keep[position]:
                    if self.T is not None:
                        self.T[:, self.n_rules] = column
                    self.rules.append(Rule(index, rule.node, rule.conditions))
                    self.support.append(support)
                    self.stage.append(stage)
                    kept_nodes.append(rule.node)
                position += 1
            if kept_nodes:
                self.trees.append(tree)
                self.nodes.append(kept_nodes)
        self.pending = []

    def rule_set(self) -> RuleSet:
        nodes = [np.asarray(n, dtype=np.intp) for n in self.nodes]
        return RuleSet(self.rules, nodes, np.asarray(self.support, dtype=np.float64),
                       self.n_candidates, self.trees)


def _memory_step(target, T, nu, sample, rng):
    """The next target after the memory step, on a sample of the rule columns.

    ``(I - nu P_{T_S}) R`` (:func:`project_out`), ``T_S`` the columns of
    ``T`` in ``columns``: all of them when ``sample`` is 1; else
    ``max(1, round(sample * r))`` columns drawn without replacement by ``rng``
    (Akdemir & Jannink 2014, Sect. 3: "sample the columns of T(X) to
    calculate P_T(X) at each stage"). A projected target whose norm falls
    below 1e-9 of the fresh one (the rules already span it) is replaced by
    the fresh target.

    Parameters
    ----------
    target : ndarray of shape (n_samples,)
    T : ndarray of shape (n_samples, r)
        Rule matrix so far, r >= 1.
    nu : float in (0, 1]
    sample : float in (0, 1]
    rng : numpy.random.RandomState
        Used only when fewer than all columns are taken.

    Returns
    -------
    target : ndarray of shape (n_samples,)
    columns : ndarray of int
        The (sorted) columns of ``T`` the projection used.
    """
    r = T.shape[1]
    size = r if sample >= 1 else max(1, round(sample * r))
    if size < r:
        columns = np.sort(rng.choice(r, size=size, replace=False))
        T = T[:, columns]
    else:
        columns = np.arange(r)
    projected = project_out(target, T, nu)
    if np.linalg.norm(projected) > _SPANNED * np.linalg.norm(target):
        return projected, columns
    return target, columns


def _lasso_selection(T, target) -> np.ndarray:
    """Which of a stage's rules the lasso keeps: nonzero coefficients of ``target`` on ``T``.

    scikit-learn's ``LassoLarsIC`` (intercept fitted, penalty chosen by BIC
    along the LARS path: no random folds, so the choice depends on the data
    alone). BIC needs the noise variance from the least-squares fit, so with
    ``n_samples <= n_rules + 1`` every rule is kept.

    Parameters
    ----------
    T : ndarray of shape (n_samples, n_rules)
        The stage's 0/1 rule columns.
    target : ndarray of shape (n_samples,)
        The stage's target ``R_j``.

    Returns
    -------
    ndarray of shape (n_rules,), bool

    References
    ----------
    Akdemir & Jannink 2014, Sect. 3: "apply lasso regression to select rules
    at each stage j and therefore reducing m".
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LassoLarsIC

    n, r = T.shape
    if n <= r + 1:
        return np.ones(r, dtype=bool)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (ConvergenceWarning, RuntimeWarning))
        coef = LassoLarsIC(criterion="bic").fit(T, target).coef_
    return np.asarray(coef) != 0


# ---------------------------------------------------------------------------
# estimator
# ---------------------------------------------------------------------------
class ISCA(ISCAModel, ClusterMixin, BaseEstimator):
    """Importance sampling clustering: ISCA (unsupervised) and SS-ISCA (semi-supervised).

    Fitting runs the ``n_stages`` (``M``) stages of Akdemir & Jannink's
    Algorithm 2 (ISCA) or, with ``supervised=True``, of their SS-ISCA
    algorithm (Sect. 3), builds a similarity of the instances from the rules
    gathered, and cuts a hierarchical clustering of ``1 - similarity`` into
    ``n_clusters`` clusters. Stage ``j``:

    1. *Target.* ``R_j = Z w_j``, ``w_j`` independent N(0, 1) weights, ``Z``
       the column-standardised inputs ``X`` (ISCA) or targets ``Y``
       (SS-ISCA); standardising first gives every column the same chance
       whatever its unit. With ``learning_rate`` (``nu``) > 0 and rules
       already gathered, ``R_j <- (I - nu P_T) R_j`` (:func:`project_out`,
       by least squares), ``P_T`` the projection on the rule columns, or
       with ``projection_sample`` < 1 on a fresh random sample of them. If
       that leaves only numerical noise (norm below 1e-9 of the fresh
       target -- the rules already span it), the fresh target is used.
    2. *Rules.* ISLE regression trees (:func:`~ensemblekit.rules.isle.generate_isle`,
       one tree per call, each on its own subsample of ``max_samples`` rows
       without replacement, ``max_depth`` deep, fitted to ``R_j``) are grown
       one at a time. The rules of each tree (every non-root node,
       :func:`~ensemblekit.rules.extract.extract_rules`) are taken in node
       order, skipping any rule that fires on the same rows as, or on exactly
       the rows left out by, a rule already gathered in this or an earlier
       stage (as a partition it adds nothing), until ``n_rules`` (``m``) new
       rules are gathered; the last tree's surplus is dropped. At most
       ``n_rules`` trees are tried per stage, so on small or coarse data
       (where few distinct partitions exist) a stage may end with fewer
       rules.
    3. *Selection* (``rule_selection="lasso"`` only). The lasso of ``R_j``
       on the stage's rules (penalty by BIC) keeps the rules with a nonzero
       coefficient; the others are dropped (and stay seen: they are not
       gathered again).

    The similarity (:func:`rule_similarity`) is the fraction of rules on
    which two instances agree (both fire or neither does) -- unit diagonal,
    and ``1 - S`` is the normalised Hamming distance of their rule vectors.
    This replaces the paper's ``S = T T' / r``, whose diagonal is not 1. With
    ``similarity="importance"`` (SS-ISCA, one target column) the rules are
    first weighted as the paper proposes, ``a_k = |w_k| / sqrt(s_k (1 - s_k))``
    with ``w`` the PLS or lasso coefficients of the target on the rules and
    ``s_k`` their supports, and ``S_ij = sum_k a_k [T_ik == T_jk] / sum_k a_k``
    (the same agreement encoding, normalised so that ``S_ii = 1``).

    Finally scipy's hierarchical clustering with ``linkage`` on the condensed
    ``1 - S`` (filled a block of rows at a time, never as a square matrix)
    builds the tree, cut into exactly ``n_clusters`` clusters by
    undoing its last ``n_clusters - 1`` merges; clusters are numbered in
    order of first appearance. The similarity does not depend on
    ``n_clusters``, so :meth:`labels_for` cuts the same tree at any other k.

    Parameters
    ----------
    n_clusters : int, default=3
        Clusters k (1 <= k <= n_samples).
    n_stages : int, default=50
        Stages M: random targets, each explained by its own rules. With the
        default ``n_rules`` the ensemble holds up to 1000 rules, so a
        similarity is averaged over many partitions (its standard error, as a
        proportion, is at most 0.5 / sqrt(1000) ~ 0.016). More stages steady
        the clustering further at a proportional cost (on iris, 200 stages
        roughly halved the seed-to-seed spread of the indices; see
        ``benchmarks/results/rule_ensembles_example5.md``).
    n_rules : int, default=20
        New rules m gathered per stage: about two depth-3 trees' worth (a
        depth-3 tree has up to 13 distinct partitions), so each random
        target contributes several trees' views of it.
    learning_rate : float in [0, 1], default=0.0
        Memory nu. 0 (the default) makes the stages independent: no
        projection is computed, the cost stays linear in M and the stages
        could run in parallel, as the paper notes. > 0 steers later targets
        away from what earlier rules already explain, at the cost of a least
        squares solve on the growing rule matrix every stage.
    rule_selection : {"all", "lasso"}, default="all"
        Rules kept from each stage: all ``m`` gathered, or those with a
        nonzero coefficient in the lasso of the stage's target on them
        (scikit-learn ``LassoLarsIC``, penalty by BIC; every rule is kept
        when ``n_samples <= m + 1``). The paper's first strategy against the
        cost of the memory (Sect. 3: "apply lasso regression to select
        rules at each stage j and therefore reducing m"): fewer, less
        redundant columns in the rule matrix the projections solve on and the
        similarity is built from.
    projection_sample : float in (0, 1], default=1.0
        Share of the rule columns the memory step projects on: with
        ``learning_rate`` > 0, each stage draws ``max(1, round(
        projection_sample * r))`` of the ``r`` columns gathered so far,
        without replacement, and solves on those only. The paper's second
        strategy (Sect. 3: "sample the columns of T(X) to calculate P_T(X)
        at each stage, and in this case nu is used as the sampling
        proportion"); the paper reuses ``nu`` for the proportion, here it is
        its own parameter (``learning_rate=1`` with ``projection_sample=nu``
        is the paper's reading). 1 (the default) uses every column and draws
        nothing; without memory it has no effect.
    max_depth : int or None, default=3
        Depth of the ISLE trees, so the longest rule has ``max_depth``
        conditions (the project's ISLE default; short rules stay readable).
        None: unlimited.
    max_samples : float in (0, 1] or None, default=None
        Subsample fraction of each tree, drawn without replacement; None uses
        Friedman & Popescu's ``min(N/2, 100 + 6 sqrt(N))`` rows (the ISLE
        default).
    linkage : {"average", "single", "complete"}, default="average"
        Linkage criterion; the paper uses average linkage throughout.
    similarity : {"agreement", "importance"}, default="agreement"
        Equal rule weights, or the paper's importance weights (needs
        ``supervised=True`` and a single target column).
    postprocess : {"pls", "lasso"}, default="pls"
        ``similarity="importance"`` only: the rule weights ``w`` come from
        partial least squares (components chosen by 5-fold cross-validation,
        at most 10) or the lasso (penalty by 5-fold cross-validation along the
        LARS path) of the target on the rule matrix. PLS is the paper's
        preferred post-processing.
    supervised : bool, default=False
        False: ISCA, ``y`` is ignored. True: SS-ISCA, ``fit`` needs ``y``
        (registry entry ``ss-isca`` fixes this).
    random_state : int, RandomState or None
        Seed of the projections, subsamples, trees and inner folds; the same
        seed gives the same labels and similarity, bit for bit.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,), int
        Cluster of every instance, 0..k-1 in order of first appearance.
    similarity_ : ndarray of shape (n_samples, n_samples), float64
        The rule similarity ``S`` (symmetric, in [0, 1], unit diagonal),
        computed from ``rule_matrix_`` each time it is read (``8 n^2`` bytes:
        for tens of thousands of rows use :meth:`similarity_blocks`).
    rule_matrix_ : ndarray of shape (n_samples, ceil(n_rules_ / 8)), uint8
        The 0/1 rule matrix ``T`` of the training rows, bit-packed along the
        rules (``numpy.packbits``): all the model keeps of the rows, from
        which ``similarity_`` and :meth:`similarity_blocks` are computed.
    rules_ : ensemblekit.rules.extract.RuleSet
        The gathered rules, stage by stage; ``rules_.transform(X)`` is ``T``
        (``n_samples x n_rules_``), ``rules_.support`` their supports. Not
        stored in a model file: a loaded model reads the rules from the
        arrays below (:class:`ensemblekit.rules.extract_model.FittedRules`).
    n_trees_ : int
        Number of ISLE trees that gave at least one kept rule.
    rule_tree_, rule_node_, rule_length_, condition_feature_, condition_greater_, \
condition_threshold_ : ndarray
        Each rule's tree, node and number of conditions, and the conditions
        rule after rule (:func:`ensemblekit.rules.extract_model.flatten_rules`).
    rule_support_ : ndarray of shape (n_rules_,), float64
        Fraction of the training rows each rule fires for.
    n_candidates_ : int
        Tree nodes the rules were taken from, before duplicates were dropped.
    n_rules_ : int
        Number of rules r (at most ``n_stages * n_rules``).
    rule_stages_ : ndarray of shape (n_rules_,), int
        Stage (0-based) that produced each rule.
    rule_weights_ : ndarray of shape (n_rules_,), float64
        Weight ``a_k`` of each rule in the similarity (all 1 for
        ``"agreement"``).
    coef_ : ndarray of shape (n_rules_,) or None
        ``"importance"``: the post-processing coefficients ``w``; else None.
    linkage_matrix_ : ndarray of shape (n_samples - 1, 4)
        scipy linkage matrix of the hierarchical clustering.
    n_features_in_ : int

    Raises
    ------
    ValueError
        From ``fit``: a bad parameter, NaN or infinite data, fewer rows than
        ``n_clusters``, ``supervised=True`` without ``y``, ``y`` of the wrong
        length, or ``similarity="importance"`` without exactly one target
        column.

    Notes
    -----
    Memory: the condensed distances ``1 - S`` in float64 (4 n (n - 1)
    bytes; scipy's linkage reads only float64, so float32 would add a
    converted copy), which scipy's average and complete linkage copy once
    more (single linkage does not): about 8 n^2 bytes at the peak, 3.2 GB for
    20,000 rows. The ``n x n`` similarity is never formed during ``fit``;
    the rule matrix is kept bit-packed (``n r / 8`` bytes) and unpacked once
    for the block products (``4 n r`` bytes). With ``learning_rate > 0``
    also a dense ``n x M m`` float64 rule matrix for the projections.
    Time: about ``M * m / 13`` tree fits, one ``O(n^2 r)`` matrix product
    for the distances, the ``O(n^2)`` linkage, and with memory ``M``
    least-squares solves of up to ``n x M m`` (``rule_selection="lasso"``
    makes ``M m`` smaller, ``projection_sample`` the solves). Measured on
    letter up to 20,000 rows: ``benchmarks/results/isca_scale.md``.

    References
    ----------
    D. Akdemir and J.-L. Jannink, *Ensemble learning with trees and rules:
    supervised, semi-supervised, unsupervised*, Intelligent Data Analysis
    18(5), 2014, Sect. 3 (SS-ISCA, Algorithm 2 ISCA, the similarity and its
    importance-weighted form). J. H. Friedman and B. E. Popescu, *Importance
    sampled learning ensembles*, 2003 (ISLE). A. Strehl and J. Ghosh,
    *Cluster ensembles*, JMLR 3, 2002 (CSPA: a partition as indicator
    columns).

    Examples
    --------
    >>> import numpy as np
    >>> from ensemblekit.rules.isca import ISCA
    >>> X = np.r_[np.zeros((10, 2)), np.full((10, 2), 5.0)] + np.arange(20)[:, None] * 0.01
    >>> model = ISCA(n_clusters=2, n_stages=5, random_state=0).fit(X)
    >>> model.labels_.tolist() == [0] * 10 + [1] * 10
    True
    >>> bool(np.all(np.diag(model.similarity_) == 1.0))
    True
    """

    # ------------------------------------------------------------------ checks
    def _check_input(self, X, y):
        """Validated ``X`` and, for SS-ISCA, the targets as an (n, q) float64 matrix.

        Both C-ordered: the memory layout decides the summation order of the
        projections, and so their last bits, which can tip near-tied splits.
        """
        if not self.supervised:
            with quiet_finite_check():
                X = validate_data(self, X, dtype=np.float64, order="C")
            as_float32(X)  # the ISLE trees read float32: a larger value is refused, named
            return X, None
        if y is None:
            raise InputError("ss-isca needs target columns (--targets NAME,...): "
                             "fit(X, y) with y of shape (n_samples,) or (n_samples, n_targets)")
        with quiet_finite_check():
            X, Y = validate_data(self, X, y, dtype=np.float64, order="C", multi_output=True,
                                 y_numeric=True)
        as_float32(X)
        Y = np.asarray(Y, dtype=np.float64)
        return X, np.ascontiguousarray(Y.reshape(-1, 1) if Y.ndim == 1 else Y)

    # --------------------------------------------------------------------- fit
    def fit(self, X, y=None):
        """Gather the rules, build the similarity and cluster it.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite numeric inputs (the registry's pipeline imputes and one-hot
            encodes before this).
        y : array-like of shape (n_samples,) or (n_samples, n_targets), optional
            SS-ISCA (``supervised=True``): the target matrix ``Y``, finite
            numbers. Ignored by ISCA.

        Returns
        -------
        self : object

        Raises
        ------
        ValueError
            See the class docstring.
        """
        validate_params(self)
        X, Y = self._check_input(X, y)
        self.binary_features_ = np.flatnonzero(np.all((X == 0) | (X == 1), axis=0))
        n = X.shape[0]
        check_n_clusters(self.n_clusters, n)
        if self.similarity == "importance" and (Y is None or Y.shape[1] != 1):
            raise InputError("similarity='importance' weights the rules by how well they predict "
                             "one target: it needs supervised=True (ss-isca) and exactly one "
                             f"target column, got {'none' if Y is None else Y.shape[1]}")
        rng = check_random_state(self.random_state)
        Z = standardize_columns(Y if Y is not None else X)
        # one BLAS thread: the least-squares solves are small (threads only contend on a
        # busy machine) and their last bits must not depend on the number of cores
        with threadpool_limits(limits=1, user_api="blas"):
            collector = self._gather_rules(X, Z, rng)
        self.rules_ = collector.rule_set()
        self.n_rules_ = collector.n_rules
        self.n_trees_ = len(collector.trees)
        for name, value in flatten_rules(self.rules_.rules).items():
            setattr(self, f"{name}_", value)
        self.rule_support_ = np.asarray(self.rules_.support, dtype=np.float64)
        self.n_candidates_ = int(self.rules_.n_candidates)
        self.rule_stages_ = np.asarray(collector.stage, dtype=np.intp)
        del collector
        T = self.rules_.transform(X)
        self.coef_ = None
        self.rule_weights_ = np.ones(self.n_rules_)
        if self.similarity == "importance" and self.n_rules_ > 0:
            seed = int(rng.randint(np.iinfo(np.int32).max))
            with threadpool_limits(limits=1, user_api="blas"):
                self.coef_ = _rule_coefficients(T.toarray(), Y[:, 0], self.postprocess, seed)
            s = self.rules_.support
            weights = np.abs(self.coef_) / np.sqrt(s * (1.0 - s))
            if weights.sum() > 0:  # every coefficient 0: equal weights (see rule_similarity)
                self.rule_weights_ = weights
        self.rule_matrix_ = pack_rules(T)
        del T
        self.linkage_matrix_ = self._tree(self._agreement().condensed_distance())
        self.labels_ = self.labels_for(self.n_clusters)
        return self

    def fit_predict(self, X, y=None):
        """Fit and return ``labels_``.

        scikit-learn's ``ClusterMixin.fit_predict`` does not pass ``y`` on to
        ``fit``; SS-ISCA needs it, so it is passed here.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets), optional
            SS-ISCA's target matrix; ignored by ISCA.

        Returns
        -------
        labels : ndarray of shape (n_samples,), int
        """
        return self.fit(X, y).labels_

    def _gather_rules(self, X, Z, rng) -> _RuleCollector:
        """Run the M stages; the collector holds every rule kept (see the class docstring)."""
        M, m, nu = int(self.n_stages), int(self.n_rules), float(self.learning_rate)
        sample = float(self.projection_sample)
        collector = _RuleCollector(X, M * m, dense=nu > 0)
        for stage in range(M):
            target = random_target(Z, rng)
            if nu > 0 and collector.n_rules > 0:
                target = _memory_step(target, collector.T[:, :collector.n_rules], nu, sample,
                                      rng)[0]
            gathered = 0
            for _ in range(m):
                seed = int(rng.randint(np.iinfo(np.int32).max))
                tree = generate_isle(X, target, n_estimators=1, max_depth=self.max_depth,
                                     max_samples=self.max_samples, learning_rate=0.0,
                                     random_state=seed).trees[0]
                gathered += collector.add_tree(tree, m - gathered)
                if gathered == m:
                    break
            keep = None
            if self.rule_selection == "lasso" and gathered:
                keep = _lasso_selection(collector.stage_matrix(), target)
            collector.end_stage(stage, keep)
        return collector

    def _tree(self, distance) -> np.ndarray:
        """scipy linkage matrix of the hierarchical clustering of the condensed ``1 - S``."""
        from scipy.cluster.hierarchy import linkage

        if distance.size == 0:
            return np.empty((0, 4))
        return linkage(distance, method=self.linkage)


def _rule_coefficients(T, y, method, seed) -> np.ndarray:
    """Coefficients of ``y`` regressed on the rule columns by PLS or the lasso, tuned by k-fold CV.

    PLS (scikit-learn ``PLSRegression``, unscaled columns): the number of
    components in ``1..min(10, n_rules, smallest training fold - 1)`` with the
    lowest cross-validated squared error. Lasso: scikit-learn ``LassoLarsCV``.
    Both use the same shuffled folds (at most 5, at most n).
    """
    from sklearn.cross_decomposition import PLSRegression
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LassoLarsCV
    from sklearn.model_selection import KFold

    n, r = T.shape
    if n < 2 or np.all(y == y[0]):
        return np.zeros(r)
    folds = list(KFold(n_splits=min(_IMPORTANCE_FOLDS, n), shuffle=True,
                       random_state=seed).split(T))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (ConvergenceWarning, UserWarning, RuntimeWarning))
        if method == "lasso":
            return np.asarray(LassoLarsCV(cv=folds).fit(T, y).coef_, dtype=np.float64)
        smallest = min(train.size for train, _ in folds)
        top = max(1, min(_MAX_PLS_COMPONENTS, r, smallest - 1))
        errors = np.zeros(top)
        for train, test in folds:
            for a in range(1, top + 1):
                pls = PLSRegression(n_components=a, scale=False).fit(T[train], y[train])
                errors[a - 1] += float(((pls.predict(T[test]).ravel() - y[test]) ** 2).sum())
        best = int(np.argmin(errors)) + 1
        pls = PLSRegression(n_components=best, scale=False).fit(T, y)
    return np.asarray(pls.coef_, dtype=np.float64).reshape(-1)
