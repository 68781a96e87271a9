"""``iec45``: the Inner-Ensemble C4.5, J48 whose split decisions are taken by an ensemble.

Abbasian, Drummond, Japkowicz and Matwin's framework (ECML PKDD 2013, Sect. 2,
Algorithm 1) applied to C4.5, where its introduction says the idea began (Geurts &
Wehenkel 2000; Pérez et al. 2004):

1. *the decision point*: the choice of a node's split (Weka's
   ``C45ModelSelection.selectModel``);
2. *its measure*: the gain ratio of each candidate split, among the candidates whose
   information gain reaches the average gain, with release 8's penalty
   ``log2(#thresholds) / N`` on a numeric split's gain;
3. *its input*: the node's training instances; perturbed by drawing E samples of them;
4. *the combination*: the mean gain ratio over the samples (as IEBN averages its
   leave-one-out score), or a majority vote of the samples' best attributes (as
   Pérez et al.'s consolidated trees vote); a numeric threshold is the median of the
   samples' best thresholds (a way to reduce the threshold's variance, Geurts &
   Wehenkel's concern), moved to a training value as J48 moves its own.

Everything else is J48's (:mod:`ensemblekit.classifiers.c45`): the node is split on all
of its instances by the chosen test, missing values go down every branch as fractional
instances, and the grown tree is collapsed and pruned by the pessimistic error
estimate with subtree raising. The model is one tree: it is stored, applied and printed
as ``c45``'s (:class:`~ensemblekit.classifiers.c45_model.C45Model`), so ``show`` prints
it as J48 prints a tree. The split decision is compiled beside J48's growth kernel, which
calls it at each node (``inner_split`` in :mod:`ensemblekit.classifiers._c45_kernels`).
"""

from __future__ import annotations

from .c45 import C45Tree
from .iec45_model import InnerEnsembleC45Model

__all__ = ["InnerEnsembleC45Tree"]


class InnerEnsembleC45Tree(InnerEnsembleC45Model, C45Tree):
    """Inner-Ensemble C4.5 (``iec45``): J48 with each split chosen over E samples of the node.

    At each node with at least ``2 * min_samples_leaf`` weight and more than one class:

    * J48's measures on all ``m`` of the node's instances say which attributes give a
      valid split (two branches with ``min_samples_leaf``, a numeric threshold with
      enough instances on each side); only those can be chosen;
    * ``n_estimators`` samples ``D_1 .. D_E`` of the node's instances are drawn, each of
      ``size = max(2, round(max_samples * m))`` instances (rounded half up; at most ``m``
      without replacement), with replacement when ``bootstrap``, as ``iebn`` sizes its
      samples; an instance drawn ``t`` times counts its weight ``t`` times;
    * on each sample, J48's measures: for every candidate ``j`` its gain ``G_k(j)``
      (release 8's penalty on numeric splits) and gain ratio ``GR_k(j)``; ``j`` is
      *eligible* in ``D_k`` when it gives a split on ``D_k`` and
      ``G_k(j) >= mean gain - 1e-3``;
    * ``combine="average"``: the split attribute maximises
      ``(1 / E) * sum_k GR_k(j) [j eligible in D_k]`` (J48's rule: the first attribute
      beating the best so far by more than 1e-6; a leaf when no mean exceeds 1e-6);
    * ``combine="vote"``: each sample names its best attribute by J48's rule (or no
      split); the attribute named most often wins, ties going to the larger mean gain
      ratio as above and then to the first attribute; the node is a leaf when "no split"
      was named more often than every attribute;
    * a numeric attribute's threshold is the median of its best thresholds on the
      samples where it gives a split (the mean of the two middle ones for an even
      number), moved to the largest training value not above it, as J48 moves its own.

    The node is then split on all of its instances, and the grown tree collapsed and
    pruned exactly as J48 does (``confidence_factor``, ``subtree_raising``,
    ``collapse_tree``, ``unpruned``). With ``n_estimators=1``, ``max_samples=1.0`` and
    ``bootstrap=False`` the one sample is the node's instances in their order, and the
    tree is J48's, bit for bit.

    Parameters
    ----------
    n_estimators : int in [1, 1000], default=10
        Ensemble size E: samples of each node's instances.
    max_samples : float in (0, 1], default=0.5
        Sample size as a fraction of the node's instances.
    bootstrap : bool, default=False
        Draw each sample with replacement (True) or without (False; the paper's
        Table 1 protocol for IEBN).
    combine : {"average", "vote"}, default="average"
        How the samples' measures decide the split (see above).
    random_state : None, int or numpy.random.RandomState, default=None
        Seed of the samples: one number is drawn from it
        (:func:`sklearn.utils.check_random_state`'s rules, as ``iebn``), which seeds the
        SplitMix64 stream the samples of every node are drawn from, node after node in
        the order the tree grows (depth first). The same seed gives the same tree.
    confidence_factor, min_samples_leaf, unpruned, subtree_raising, collapse_tree, laplace, \
mdl_correction, split_point_actual_value, nominal_features, n_categories, n_classes
        As in :class:`~ensemblekit.classifiers.c45.C45Tree` (J48's ``-C``, ``-M``, ``-U``,
        ``-S``, ``-O``, ``-A``, ``-J``, ``-doNotMakeSplitPointActualValue``). J48's ``-B``
        and ``-R`` are not taken: the samples' votes and medians are over multiway nominal
        splits and the error-based pruning.

    Attributes
    ----------
    classes_, n_features_in_, nominal_features_, n_categories_, frame_categories_
        As in :class:`~ensemblekit.classifiers.c45.C45Tree`.
    feature_, threshold_, child_start_, n_children_, value_, bag_value_, is_empty_ : ndarray
        The tree's node arrays, as
        :class:`~ensemblekit.classifiers.c45_model.C45Model` describes them: one tree.

    See Also
    --------
    ensemblekit.classifiers.c45.C45Tree : J48, the base learner.
    ensemblekit.bayesnet.inner.InnerEnsembleK2Classifier : the same framework on K2.

    Notes
    -----
    Weighted instances: a row's weight (``instance_weights``, Weka's meaning) is the
    weight of the instance the samples draw; the samples draw instances, not weight, so
    a weight is not a number of copies and there is no ``sample_weight``. Below a split on a
    missing value an instance is in several
    nodes with a fraction of its weight, and is drawn as one instance in each.

    References
    ----------
    .. [1] H. Abbasian, C. Drummond, N. Japkowicz, S. Matwin, "Inner Ensembles: Using
       Ensemble Methods Inside the Learning Algorithm", ECML PKDD 2013, LNCS 8190,
       pp. 33-48 (Sect. 2, Algorithm 1; Algorithm 4 for the averaged score).
    .. [2] P. Geurts, L. Wehenkel, "Investigation and Reduction of Discretization
       Variance in Decision Tree Induction", ECML 2000, LNCS 1810, pp. 162-170.
    .. [3] J. M. Pérez, J. Muguerza, O. Arbelaitz, I. Gurrutxaga, "A New Algorithm to
       Build Consolidated Trees: Study of the Error Rate and Steadiness", Intelligent
       Information Processing and Web Mining, Advances in Soft Computing, 2004,
       pp. 79-88.
    .. [4] J. R. Quinlan, *C4.5: Programs for Machine Learning*, Morgan Kaufmann, 1993;
       "Improved use of continuous attributes in C4.5", JAIR 4, 1996 (release 8).

    Examples
    --------
    >>> import numpy as np
    >>> from ensemblekit.classifiers.iec45 import InnerEnsembleC45Tree
    >>> X = np.array([[1.0], [2.0], [3.0], [4.0], [5.0], [6.0]])
    >>> y = np.array([0, 0, 0, 1, 1, 1])
    >>> tree = InnerEnsembleC45Tree(n_estimators=1, max_samples=1.0).fit(X, y)
    >>> print(tree.export_text())
    x0 <= 3: 0 (3.0)
    x0 > 3: 1 (3.0)
    """

    def fit(self, X, y, *, instance_weights=None):
        """Grow the tree with the ensemble's split decisions, then collapse and prune as J48.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric columns as numbers, nominal columns as codes; NaN marks a missing
            value (a DataFrame declares its nominal columns as for ``C45Tree.fit``).
        y : array-like of shape (n_samples,)
            Class labels.
        instance_weights : array-like of shape (n_samples,) or None
            Weka's instance weights >= 0 (an ARFF file's ``{w}``), as in
            :meth:`ensemblekit.classifiers.c45.C45Tree.fit`. There is no ``sample_weight``:
            a weight cannot stand for copies of a row here, since the samples draw rows
            (a row of weight 3 is drawn as one instance, three copies as three).

        Returns
        -------
        self : InnerEnsembleC45Tree

        Raises
        ------
        ValueError
            On ``C45Tree.fit``'s input errors, a parameter out of range
            (``n_estimators`` outside [1, 1000], ``max_samples`` outside (0, 1], an
            unknown ``combine``) or a ``random_state`` that is not None, an int or a
            ``RandomState``.
        """
        return super().fit(X, y, instance_weights=instance_weights)
