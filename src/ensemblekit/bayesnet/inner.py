"""``iebn``: the Inner-Ensemble Bayesian network (K2 with an ensemble LOO score).

:class:`InnerEnsembleK2Classifier` is the supervised Inner Ensemble of
Abbasian, Drummond, Japkowicz & Matwin (ECML PKDD 2013, Algorithm 4): the K2
structure search of :class:`~ensemblekit.bayesnet.classifier.K2Classifier`,
except that the global score of a candidate structure is the *mean*
leave-one-out score over ``n_estimators`` samples of the training data
instead of the LOO score on the data itself. The ensemble lives only inside
the score: once the structure is chosen, the CPTs are estimated on the whole
training set, so the model is one ordinary, readable network.

Data preparation is K2Classifier's, unchanged and fitted on the full
training data before any sampling: rows with a missing class dropped,
supervised MDL (or equal-frequency) discretisation, training modes for
missing values.

References
----------
.. [1] Abbasian, H., Drummond, C., Japkowicz, N., Matwin, S. (2013). Inner
   Ensembles: Using Ensemble Methods Inside the Learning Algorithm. ECML PKDD
   2013, LNCS 8190, pp. 33-48. Algorithm 4 (ensemble LOO global score for K2).
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from .classifier import K2Classifier
from .inner_model import InnerEnsembleK2Model
from .k2 import k2_search

__all__ = ["InnerEnsembleK2Classifier", "draw_samples", "sample_size"]


def sample_size(n: int, max_samples: float, bootstrap: bool) -> int:
    """Number of rows in every sample: ``max_samples * n`` rounded half up, at least 2.

    Without replacement the size is also capped at ``n`` (so it is 1 when
    ``n == 1``).

    Parameters
    ----------
    n : int
        Number of training rows (>= 1).
    max_samples : float in (0, 1]
        Sample size as a fraction of ``n``.
    bootstrap : bool
        Whether rows are drawn with replacement.

    Returns
    -------
    int
    """
    size = max(2, int(np.floor(max_samples * n + 0.5)))
    return size if bootstrap else min(size, n)


def draw_samples(
    n: int, n_estimators: int, max_samples: float, bootstrap: bool, random_state=None
) -> list[np.ndarray]:
    """The ``n_estimators`` samples of row indices an IEBN fit scores on.

    Sample ``k`` is ``rng.randint(0, n, size)`` with replacement, or the first
    ``size`` entries of ``rng.permutation(n)`` without, drawn in order
    ``k = 0 .. E - 1`` from ``check_random_state(random_state)``;
    ``size = sample_size(n, max_samples, bootstrap)``.

    Parameters
    ----------
    n : int
        Number of training rows (>= 1).
    n_estimators : int >= 1
    max_samples : float in (0, 1]
    bootstrap : bool
    random_state : None, int or numpy.random.RandomState
        A ``RandomState`` instance is advanced by exactly these draws.

    Returns
    -------
    list of n_estimators ndarrays of int64, each of shape (size,)
    """
    rng = check_random_state(random_state)
    size = sample_size(n, max_samples, bootstrap)
    if bootstrap:
        return [rng.randint(0, n, size).astype(np.int64) for _ in range(n_estimators)]
    return [rng.permutation(n)[:size].astype(np.int64) for _ in range(n_estimators)]


class InnerEnsembleK2Classifier(InnerEnsembleK2Model, K2Classifier):
    """Inner-Ensemble Bayesian network: K2 scored by the mean LOO over E samples.

    The structure search is K2Classifier's (Weka's global K2: class first,
    then the attributes in column order; naive-Bayes start; a parent is added
    only on a strict improvement, the first best candidate winning), but the
    score of a structure is Algorithm 4 of Abbasian et al. (2013):

        score = (1 / E) * sum_k LOOScore(D_k),

    where ``D_1 .. D_E`` are samples of the prepared training rows, each of
    ``size = max(2, round(max_samples * n))`` rows (rounded half up; capped
    at ``n`` without replacement), drawn with replacement when ``bootstrap``
    and without otherwise. The samples are drawn **once per fit** from
    ``random_state``, so every candidate structure is scored on the same
    samples. ``LOOScore(D_k)`` is the leave-one-out score of the network
    whose CPTs are counted on ``D_k`` (``scoring``: mean LOO posterior of the
    true class, or LOO 0/1 accuracy), averaged over the ``size`` instances of
    ``D_k``; it is computed in closed form from ``D_k``'s counts.

    **Duplicates.** A bootstrap sample may hold ``m > 1`` copies of a row.
    Its counts are multiplicity-weighted (each copy counts), and each copy is
    one instance of the LOO average (so the row weighs ``m``). Leaving out
    one of those instances removes, from the counts it is scored against,
    one copy when ``loo_duplicates="one"`` (the other ``m - 1`` copies stay
    in the training counts, as Weka's weighted count update does), or all
    ``m`` copies when ``loo_duplicates="all"`` (the held-out row is then
    truly unseen). Samples drawn without replacement hold no duplicates, and
    both settings coincide.

    After the search the CPTs are estimated on the **full** prepared training
    data, as in :class:`K2Classifier`; the fitted model is one network
    (``parents_``, ``cpts_``) and keeps neither the samples nor any
    per-sample table. Discretisation and the training modes are fitted on
    the full training data before sampling (as Weka's BayesNet prepares the
    data before the search).

    With ``n_estimators=1``, ``max_samples=1.0`` and ``bootstrap=False`` the
    one sample is every row once, and the model equals K2Classifier's.

    Parameters
    ----------
    n_estimators : int >= 1, default=10
        Ensemble size ``E``: number of samples the score averages over.
    max_samples : float in (0, 1], default=0.5
        Sample size as a fraction of the number ``n`` of training rows that
        have a class label.
    bootstrap : bool, default=False
        Draw each sample with replacement (True) or without (False; the
        paper's Table 1 protocol).
    loo_duplicates : {"one", "all"}, default="one"
        What leaving out an instance removes when its sample holds several
        copies of its row: one copy, or all of them (see above). Only
        matters with ``bootstrap=True``.
    random_state : None, int or numpy.random.RandomState, default=None
        Seed of the samples (``sklearn.utils.check_random_state``).
    max_parents, init, scoring, alpha, discretize, n_bins, nominal_features, n_categories, n_classes
        As in :class:`~ensemblekit.bayesnet.classifier.K2Classifier`.

    Attributes
    ----------
    sample_size_ : int
        Number of rows in every sample.
    classes_, discretizer_, cardinalities_, modes_, parents_, cpts_, n_features_in_, feature_names_in_
        As in :class:`~ensemblekit.bayesnet.classifier.K2Classifier`; one
        network.

    See Also
    --------
    ensemblekit.bayesnet.classifier.K2Classifier : the single-score K2.
    draw_samples : the samples a fit scores on.
    ensemblekit.bayesnet.k2.k2_search : the search (``samples=``,
        ``loo_duplicates=``).

    References
    ----------
    .. [1] Abbasian, H., Drummond, C., Japkowicz, N., Matwin, S. (2013).
       Inner Ensembles: Using Ensemble Methods Inside the Learning
       Algorithm. ECML PKDD 2013, LNCS 8190, pp. 33-48. Algorithm 4.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randint(0, 3, size=(60, 3)).astype(float)
    >>> y = (X[:, 0] + X[:, 1] > 2).astype(int)
    >>> clf = InnerEnsembleK2Classifier(n_estimators=5, random_state=0,
    ...                                 nominal_features=[0, 1, 2]).fit(X, y)
    >>> len(clf.parents_), clf.sample_size_
    (4, 30)
    """

    def fit(self, X, y, instance_weights=None):
        """Prepare the data as K2Classifier does, search with the ensemble score, fit CPTs.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            As in :meth:`K2Classifier.fit`: numeric columns raw, the columns
            in ``nominal_features`` integer codes, NaN = missing.
        y : array-like of shape (n_samples,)
            Class labels; rows with a missing label are dropped.
        instance_weights : array-like of shape (n_samples,) or None
            Weka's instance weights, as in :meth:`K2Classifier.fit`; within the E
            samples a row counts its weight once per time it was drawn.

        Returns
        -------
        self : InnerEnsembleK2Classifier

        Raises
        ------
        ValueError
            On an invalid parameter (K2Classifier's, or ``n_estimators < 1``,
            ``max_samples`` outside (0, 1], a non-bool ``bootstrap``, an
            unknown ``loo_duplicates``) and on the input errors of
            :meth:`K2Classifier.fit`.
        """
        return super().fit(X, y, instance_weights=instance_weights)

    def _search_structure(self, codes, y_codes, n_classes, weights=None):
        """K2 scored by the mean leave-one-out score over the E samples (Algorithm 4).

        The samples are drawn once here, from ``random_state``, after the data
        were discretised and their gaps filled on the full training set.
        """
        samples = draw_samples(codes.shape[0], self.n_estimators, self.max_samples, self.bootstrap,
                               self.random_state)
        self.sample_size_ = int(samples[0].size)
        return k2_search(codes, y_codes, self.cardinalities_, n_classes,
                         max_parents=self.max_parents, init=self.init, score=self.scoring,
                         alpha=self.alpha, samples=samples, loo_duplicates=self.loo_duplicates,
                         weights=weights)
