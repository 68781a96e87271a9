"""A fitted ISCA / SS-ISCA clustering as plain arrays: its checks, rules and similarity, numpy only.

:class:`ISCAModel` is the part of :class:`ensemblekit.rules.isca.ISCA` that a
saved clustering needs (Akdemir & Jannink, *Ensemble learning with trees and
rules*, Intelligent Data Analysis 18(5), 2014, Sect. 3): the gathered rules as
condition arrays (:mod:`ensemblekit.rules.extract_model`), their stages and
weights, the bit-packed rule matrix of the training rows from which the rule
agreement is computed, the linkage matrix and the training labels. ISCA labels
only the rows it was fitted on, so the model predicts nothing new: ``show``
lists its rules (:meth:`ISCAModel.describe_rules`) and its cluster sizes.
"""

from __future__ import annotations

import numpy as np

from ensemblekit.errors import InputError, NotFittedError
from ensemblekit.state import Array, Scalar

from ..constraints import MAX_TREES, Constraint
from ._agreement import RuleAgreement
from .extract_model import FittedRules, StoredOr, unflatten_rules
from .isle_model import ISLE_CONSTRAINTS

__all__ = ["LINKAGES", "POSTPROCESSORS", "RULE_SELECTIONS", "SIMILARITIES", "ISCAModel"]

#: Linkage criteria of the hierarchical clustering on ``1 - S``.
LINKAGES = ("average", "single", "complete")
#: How two instances' rule vectors are compared (see :func:`ensemblekit.rules.isca.rule_similarity`).
SIMILARITIES = ("agreement", "importance")
#: Post-processing that weights the rules for ``similarity="importance"``.
POSTPROCESSORS = ("pls", "lasso")
#: Which of a stage's rules are kept: all of them, or those the stage's lasso selects.
RULE_SELECTIONS = ("all", "lasso")


def _rules_view(model):
    """The gathered rules, read from the arrays (counts, supports, words, ``transform``)."""
    return FittedRules(model)


def check_linkage(ctx, Z, n: int) -> None:
    """Fail through ``ctx`` unless ``Z`` is a scipy linkage matrix of ``n`` leaves.

    Clusters are numbered ``0 .. n - 1`` (leaves), then ``n + i`` for the
    merge of row ``i``; row ``i`` merges two clusters formed before it, each
    cluster but the last is merged exactly once (``labels_for`` indexes its
    parent table by these numbers), and column 3 counts the leaves.

    Parameters
    ----------
    ctx : ensemblekit.trust.CheckContext
    Z : ndarray of float64, shape (n - 1, 4)
        Non-negative (the declaration says so).
    n : int
        Number of leaves (training rows).
    """
    if Z.shape[0] != max(n - 1, 0):
        ctx.fail(f"linkage_matrix_ has {Z.shape[0]} merges, {max(n - 1, 0)} join {n} rows")
    if n < 2:
        return
    ids = Z[:, :2]
    if np.any(ids != np.floor(ids)) or np.any(ids.max(axis=1) >= n + np.arange(n - 1)):
        ctx.fail("linkage_matrix_ merges a cluster that does not exist yet")
    ids = ids.astype(np.int64)
    if not np.array_equal(np.sort(ids.ravel()), np.arange(2 * n - 2)):
        ctx.fail("linkage_matrix_ merges a cluster twice")
    sizes = np.ones(2 * n - 1, dtype=np.int64)
    for i, (a, b) in enumerate(ids.tolist()):
        sizes[n + i] = sizes[a] + sizes[b]
    if not np.array_equal(sizes[n:], Z[:, 3]):
        ctx.fail("linkage_matrix_ does not count the leaves of each merged cluster")


class ISCAModel:
    """A fitted ISCA or SS-ISCA clustering: its rules, the training rows' rule agreement and labels.

    The model class of :class:`ensemblekit.rules.isca.ISCA` (see that class
    for the algorithm, the parameters and the attributes): the parameters,
    the declaration of the fitted state, the checks a stored state must pass,
    the rules in words and the training rows' similarity, with numpy alone.
    """

    _parameter_constraints = {
        "n_clusters": Constraint("int", "number of clusters k (cluster -k sets it)", low=1),
        "n_stages": Constraint("int", "stages M: random targets, each explained by its own rules",
                               low=1, high=MAX_TREES),
        "n_rules": Constraint("int", "new rules m gathered per stage (ISLE trees grown until m "
                              "rules not seen before)", low=1, high=MAX_TREES),
        "learning_rate": Constraint("float", "memory nu: each new target loses nu times its "
                                    "projection on the rules so far (0: independent stages)",
                                    low=0, high=1),
        "rule_selection": Constraint("choice", "rules kept per stage: all, or those the lasso of "
                                     "the stage's target selects (BIC)", choices=RULE_SELECTIONS),
        "projection_sample": Constraint("float", "share of the rule columns each memory step "
                                        "projects on (with learning_rate > 0)", low=0, high=1,
                                        closed="right"),
        "max_depth": Constraint("int", "depth of the ISLE trees (longest rule)", low=1,
                                none_ok=True),
        "max_samples": ISLE_CONSTRAINTS["max_samples"],
        "linkage": Constraint("choice", "hierarchical clustering of 1 - rule agreement",
                              choices=LINKAGES),
        "similarity": Constraint("choice", "rule agreement, or rules weighted by "
                                 "|w| / sqrt(s (1 - s)) (one target only)", choices=SIMILARITIES),
        "postprocess": Constraint("choice", "similarity=importance: rule weights w by PLS or "
                                  "lasso of the target on the rules", choices=POSTPROCESSORS),
        "supervised": Constraint("bool", "fit the rules to target columns given as y (ss-isca)"),
        "random_state": Constraint("any", "seed of the projections, subsamples, trees and folds"),
    }

    _fitted_state = {
        "n_features_in_": Scalar("int", low=1),
        "n_rules_": Scalar("int", low=0),
        "n_trees_": Scalar("int", low=0),
        # the gathered rules, stage by stage; their conditions rule after rule
        "rule_tree_": Array("int64", ("n_rules_",), low=0, below="n_trees_"),
        "rule_node_": Array("int64", ("n_rules_",), low=1),
        "rule_length_": Array("int64", ("n_rules_",), low=1),
        "condition_feature_": Array("int64", ("n_conditions",), low=0, below="n_features_in_"),
        "condition_greater_": Array("bool", ("n_conditions",)),
        "condition_threshold_": Array("float64", ("n_conditions",)),
        "rule_support_": Array("float64", ("n_rules_",), low=0, high=1),
        "n_candidates_": Scalar("int", low=0),
        "rule_stages_": Array("int64", ("n_rules_",), low=0, below="n_stages"),
        "rule_weights_": Array("float64", ("n_rules_",), low=0),
        "coef_": Array("float64", ("n_rules_",), optional=True),
        # the training rows: their clusters, packed rule matrix and tree
        "labels_": Array("int64", ("n_samples",), low=0, below="n_clusters"),
        "rule_matrix_": Array("uint8", ("n_samples", "*")),
        "linkage_matrix_": Array("float64", ("*", 4), low=0),
        "binary_features_": Array("int64", ("*",), low=0, below="n_features_in_"),
    }

    rules_ = StoredOr(_rules_view)

    def __init__(self, n_clusters=3, *, n_stages=50, n_rules=20, learning_rate=0.0,
                 rule_selection="all", projection_sample=1.0, max_depth=3, max_samples=None,
                 linkage="average", similarity="agreement", postprocess="pls", supervised=False,
                 random_state=None):
        self.n_clusters = n_clusters
        self.n_stages = n_stages
        self.n_rules = n_rules
        self.learning_rate = learning_rate
        self.rule_selection = rule_selection
        self.projection_sample = projection_sample
        self.max_depth = max_depth
        self.max_samples = max_samples
        self.linkage = linkage
        self.similarity = similarity
        self.postprocess = postprocess
        self.supervised = supervised
        self.random_state = random_state

    # ------------------------------------------------------------------ checks
    def _check_state(self, ctx) -> None:
        """The rules between the stored arrays that their declarations cannot state.

        The rules' conditions add up; the packed rule matrix has one bit per
        rule and at least ``n_clusters`` rows; the linkage matrix is a valid
        tree over those rows; weights and coefficients belong to the rules.
        """
        if int(self.rule_length_.sum()) != self.condition_feature_.size:
            ctx.fail(f"rule_length_ adds up to {int(self.rule_length_.sum())} conditions, "
                     f"condition_feature_ holds {self.condition_feature_.size}")
        if self.n_candidates_ < self.n_rules_:
            ctx.fail(f"n_candidates_ = {self.n_candidates_} is fewer than the {self.n_rules_} "
                     "rules kept")
        n, width = self.rule_matrix_.shape
        if width != (self.n_rules_ + 7) // 8 or n < self.n_clusters:
            ctx.fail(f"rule_matrix_ has shape {self.rule_matrix_.shape}, not (rows, "
                     f"{(self.n_rules_ + 7) // 8}) with rows >= n_clusters = {self.n_clusters}")
        check_linkage(ctx, self.linkage_matrix_, n)
        if self.coef_ is not None and self.similarity != "importance":
            ctx.fail("coef_ is stored for a similarity that weights no rule")
        if np.any(np.diff(self.binary_features_) <= 0):
            ctx.fail("binary_features_ is not a set of columns in increasing order")

    # ------------------------------------------------------------------ reading
    def _fitted(self, name: str) -> None:
        if name not in vars(self):
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet. Call "
                                 "'fit' with appropriate arguments before using this estimator.")

    def _agreement(self) -> RuleAgreement:
        return RuleAgreement(self.rule_matrix_, self.n_rules_, self.rule_weights_)

    @property
    def similarity_(self) -> np.ndarray:
        """The rule similarity ``S`` of the training rows, shape (n_samples, n_samples).

        Computed from ``rule_matrix_`` on each access (``8 n^2`` bytes); see
        :meth:`similarity_blocks` for large ``n``.
        """
        self._fitted("rule_matrix_")
        return self._agreement().similarity_matrix()

    def similarity_blocks(self, block_rows=None):
        """Yield the rule similarity a block of rows at a time, without the ``n x n`` matrix.

        Parameters
        ----------
        block_rows : int, optional
            Rows per block; default about 2^21 entries (16 MB) per block.

        Yields
        ------
        start : int
            Index of the block's first row.
        block : ndarray of shape (rows, n_samples), float64
            Rows ``start..start + rows - 1`` of ``similarity_``, the same bits.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        """
        self._fitted("rule_matrix_")
        yield from self._agreement().blocks(block_rows)

    def labels_for(self, n_clusters) -> np.ndarray:
        """Cut the fitted tree into another number of clusters.

        Equal to the ``labels_`` of a fit with that ``n_clusters`` and the
        same other parameters and seed (the similarity does not depend on k),
        without refitting: the first ``n - k`` merges of ``linkage_matrix_``
        are kept, and every row gets the cluster its merges lead it to.

        Parameters
        ----------
        n_clusters : int
            1 <= k <= n_samples.

        Returns
        -------
        ndarray of shape (n_samples,), int
            Clusters 0..k-1 in order of first appearance.

        Raises
        ------
        InputError
            If ``n_clusters`` is not an integer in ``1..n_samples``.
        """
        self._fitted("linkage_matrix_")
        n = self.rule_matrix_.shape[0]
        if (isinstance(n_clusters, (bool, np.bool_))
                or not isinstance(n_clusters, (int, np.integer)) or n_clusters < 1):
            raise InputError(f"n_clusters must be an integer >= 1; got {n_clusters!r}.")
        if n_clusters > n:
            raise InputError(f"n_samples={n} should be >= n_clusters={n_clusters}.")
        k = int(n_clusters)
        if k == n:
            return np.arange(n, dtype=np.intp)
        if k == 1:
            return np.zeros(n, dtype=np.intp)
        kept = self.linkage_matrix_[:n - k, :2].astype(np.int64)
        parent = np.arange(2 * n - 1)
        parent[kept[:, 0]] = parent[kept[:, 1]] = n + np.arange(n - k)
        while True:  # pointer jumping: each pass halves the path to a cluster's top merge
            up = parent[parent]
            if np.array_equal(up, parent):
                break
            parent = up
        _, first, inverse = np.unique(parent[:n], return_index=True, return_inverse=True)
        rank = np.empty(first.size, dtype=np.intp)
        rank[np.argsort(first, kind="stable")] = np.arange(first.size)
        return rank[inverse.ravel()]

    def describe_rules(self, feature_names=None, top=None) -> list[str]:
        """The gathered rules in words, in stage order (see
        :meth:`ensemblekit.rules.extract_model.Rule.describe`).

        Parameters
        ----------
        feature_names : sequence of str, optional
            Names of the input columns (default ``x0, x1, ...``).
        top : int, optional
            Describe only the first ``top`` rules; default all.

        Returns
        -------
        list of str
        """
        self._fitted("rule_length_")
        count = len(range(self.n_rules_)[:top])
        ends = int(self.rule_length_[:count].sum())
        rules = unflatten_rules(self.rule_tree_[:count], self.rule_node_[:count],
                                self.rule_length_[:count], self.condition_feature_[:ends],
                                self.condition_greater_[:ends], self.condition_threshold_[:ends])
        return [rule.describe(feature_names, self.binary_features_) for rule in rules]
