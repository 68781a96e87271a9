"""The fitted ``iebn`` network, with numpy alone: :class:`InnerEnsembleK2Model`.

The Inner-Ensemble Bayesian network differs from ``k2`` only in how its
structure search scores a candidate (the mean leave-one-out score over
samples, Abbasian et al. 2013, Algorithm 4); the fitted model is one ordinary
network, so it predicts and describes itself as
:class:`~ensemblekit.bayesnet.classifier_model.K2Model` does and stores the
same state. This class adds the parameters of the ensemble score, so that a
model file is rebuilt with all of ``iebn``'s parameters.

References
----------
.. [1] Abbasian, H., Drummond, C., Japkowicz, N., Matwin, S. (2013). Inner
   Ensembles: Using Ensemble Methods Inside the Learning Algorithm. ECML PKDD
   2013, LNCS 8190, pp. 33-48. Algorithm 4.
"""

from __future__ import annotations

from ..constraints import MAX_MEMBERS, Constraint
from .classifier_model import K2_CONSTRAINTS, K2Model

__all__ = ["InnerEnsembleK2Model"]


class InnerEnsembleK2Model(K2Model):
    """A fitted Inner-Ensemble K2 network: K2Model's state and prediction, iebn's parameters.

    The numpy-only part of
    :class:`~ensemblekit.bayesnet.inner.InnerEnsembleK2Classifier`, whose
    documentation gives the parameters and the fit.

    Parameters
    ----------
    n_estimators, max_samples, bootstrap, loo_duplicates, random_state
        The ensemble score's parameters; stored only.
    max_parents, init, scoring, alpha, discretize, n_bins, nominal_features, n_categories, n_classes
        As in :class:`~ensemblekit.bayesnet.classifier_model.K2Model`.

    Attributes
    ----------
    n_features_in_, classes_, cut_points_, modes_, cpts_, parent_sets_, parents_, ...
        As in :class:`~ensemblekit.bayesnet.classifier_model.K2Model`; one network.
    """

    _parameter_constraints = {
        "n_estimators": Constraint("int", "ensemble size E: samples the score averages over",
                                   low=1, high=MAX_MEMBERS),
        "max_samples": Constraint("float", "sample size as a fraction of the training set",
                                  low=0, high=1, closed="right"),
        "bootstrap": Constraint("bool", "draw the samples with replacement"),
        "loo_duplicates": Constraint("choice", "leaving out a duplicated row removes one copy (as "
                                     "Weka's weighted update) or all copies",
                                     choices=("one", "all")),
        "random_state": Constraint("any", "seed of the samples"),
        **K2_CONSTRAINTS,
    }

    def __init__(
        self,
        n_estimators=10,
        max_samples=0.5,
        bootstrap=False,
        loo_duplicates="one",
        random_state=None,
        max_parents=2,
        init="naive-bayes",
        scoring="loo-probability",
        alpha=0.5,
        discretize="mdl",
        n_bins=10,
        nominal_features=None,
        n_categories=None,
        n_classes=None,
    ):
        super().__init__(
            max_parents=max_parents,
            init=init,
            scoring=scoring,
            alpha=alpha,
            discretize=discretize,
            n_bins=n_bins,
            nominal_features=nominal_features,
            n_categories=n_categories,
            n_classes=n_classes,
        )
        self.n_estimators = n_estimators
        self.max_samples = max_samples
        self.bootstrap = bootstrap
        self.loo_duplicates = loo_duplicates
        self.random_state = random_state
