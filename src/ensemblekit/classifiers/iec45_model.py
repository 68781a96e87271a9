"""The fitted ``iec45`` tree, with numpy alone: :class:`InnerEnsembleC45Model`.

The Inner-Ensemble C4.5 differs from ``c45`` only in how a node chooses its split (J48's
gain ratio combined over samples of the node's instances; see
:class:`ensemblekit.classifiers.iec45.InnerEnsembleC45Tree`). The fitted model is one
J48 tree, so it predicts, checks and prints itself as
:class:`~ensemblekit.classifiers.c45_model.C45Model` does and stores the same state.
This class adds the parameters of the inner ensemble, so that a model file is rebuilt
with all of ``iec45``'s parameters, and hands the growth its split policy
(:meth:`_split_policy`).

References
----------
.. [1] Abbasian, H., Drummond, C., Japkowicz, N., Matwin, S. (2013). Inner Ensembles:
   Using Ensemble Methods Inside the Learning Algorithm. ECML PKDD 2013, LNCS 8190,
   pp. 33-48. Algorithm 1.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..constraints import MAX_MEMBERS, Constraint
from ..errors import InputError
from .c45_model import (
    KERNEL_MODULES,  # noqa: F401 - C4.5's, which its fits load
    C45Model,
)

__all__ = ["COMBINE", "InnerEnsembleC45Model"]

#: ``combine`` values, in the order of their codes in the compiled split decision.
COMBINE = ("average", "vote")

#: c45 parameters an iec45 does not take: J48 -B and -R -N -Q.
_J48_ONLY = ("binary_splits", "reduced_error_pruning", "num_folds", "seed")


def _random_state(random_state) -> np.random.RandomState:
    """``sklearn.utils.check_random_state`` with numpy alone: None is numpy's global
    generator, an int seeds a new one, a ``RandomState`` is used (and advanced) as it is."""
    if random_state is None:
        return np.random.mtrand._rand
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return np.random.RandomState(int(random_state))
    if isinstance(random_state, np.random.RandomState):
        return random_state
    raise InputError(f"random_state must be None, an int or a numpy RandomState, "
                     f"got {random_state!r}")


class InnerEnsembleC45Model(C45Model):
    """A fitted Inner-Ensemble C4.5 tree: C45Model's state, prediction and text, iec45's
    parameters.

    The numpy-only part of :class:`~ensemblekit.classifiers.iec45.InnerEnsembleC45Tree`,
    whose documentation gives the parameters and the fit.

    Parameters
    ----------
    n_estimators, max_samples, bootstrap, combine, random_state
        The inner ensemble's parameters.
    confidence_factor, min_samples_leaf, unpruned, subtree_raising, collapse_tree, laplace, \
mdl_correction, split_point_actual_value, nominal_features, n_categories, n_classes
        As in :class:`~ensemblekit.classifiers.c45_model.C45Model` (J48's ``-B`` and ``-R``
        are not taken).

    Attributes
    ----------
    feature_, threshold_, child_start_, n_children_, value_, bag_value_, is_empty_, ...
        As in :class:`~ensemblekit.classifiers.c45_model.C45Model`; one tree.
    """

    _parameter_constraints = {
        "n_estimators": Constraint("int", "ensemble size E: samples of each node's instances",
                                   low=1, high=MAX_MEMBERS),
        "max_samples": Constraint("float", "sample size as a fraction of the node's instances",
                                  low=0, high=1, closed="right"),
        "bootstrap": Constraint("bool", "draw the samples with replacement"),
        "combine": Constraint("choice", "average the gain ratios over the samples, or let "
                              "each sample vote for its best attribute", choices=COMBINE),
        "random_state": Constraint("any", "seed of the samples"),
        **{key: rule for key, rule in C45Model._parameter_constraints.items()
           if key not in _J48_ONLY},
    }

    # J48's binary nominal splits and reduced-error pruning are not inner-ensemble
    # decisions (yet): held fixed at J48's defaults
    binary_splits = False
    reduced_error_pruning = False
    num_folds = 3
    seed = 1

    def __init__(self, n_estimators=10, max_samples=0.5, bootstrap=False, combine="average",
                 random_state=None, confidence_factor=0.25, min_samples_leaf=2, unpruned=False,
                 subtree_raising=True, collapse_tree=True, laplace=False, mdl_correction=True,
                 split_point_actual_value=True, nominal_features=None, n_categories=None,
                 n_classes=None):
        super().__init__(confidence_factor=confidence_factor, min_samples_leaf=min_samples_leaf,
                         unpruned=unpruned, subtree_raising=subtree_raising,
                         collapse_tree=collapse_tree, laplace=laplace,
                         mdl_correction=mdl_correction,
                         split_point_actual_value=split_point_actual_value,
                         nominal_features=nominal_features, n_categories=n_categories,
                         n_classes=n_classes)
        self.n_estimators = n_estimators
        self.max_samples = max_samples
        self.bootstrap = bootstrap
        self.combine = combine
        self.random_state = random_state

    def fit_coded(self, X, y, *, instance_weights=None):
        """Grow the tree on arrays in ensemblekit's coded layout (``ensemblekit fit iec45``).

        :meth:`C45Model.fit_coded <ensemblekit.classifiers.c45_model.C45Model.fit_coded>`
        with Weka's instance weights only: the samples draw rows, so a weight cannot
        stand for copies of a row (no ``sample_weight``).

        Parameters
        ----------
        X : ndarray of float64 of shape (n_samples, n_features)
            Numeric columns as numbers, nominal columns as codes; NaN marks a missing value.
        y : ndarray of shape (n_samples,)
            Class labels.
        instance_weights : array-like of shape (n_samples,) or None
            Weka's instance weights >= 0.

        Returns
        -------
        self

        Raises
        ------
        ensemblekit.errors.InputError
            As ``C45Model.fit_coded``, or for a ``random_state`` that is not None, an int
            or a ``RandomState``.
        """
        return super().fit_coded(X, y, instance_weights=instance_weights)

    def _split_policy(self, n_rows: int):
        """The inner ensemble's split decision, seeded by one draw from ``random_state``
        (as ``iebn`` draws its samples from it, :func:`sklearn.utils.check_random_state`'s
        rules)."""
        from ._c45_kernels import inner_policy

        seed = int(_random_state(self.random_state).randint(np.iinfo(np.int64).max,
                                                            dtype=np.int64))
        return inner_policy(n_rows, self.n_estimators, self.max_samples, self.bootstrap,
                              COMBINE.index(self.combine), seed)
