"""scikit-learn's estimator checks, run once per estimator class in the fast subset.

scikit-learn's checks test the API contract of a class (clone, fit on lists, read-only
input, sample-order invariance, ...); the same class under other parameter values mostly
repeats them. ``parametrize_with_checks_per_class`` runs every check on one instance of
each class, and every check on the other instances (``variants``) too, but those carry the
``slow`` marker: the whole suite still checks them, ``pytest -m "not slow"`` does not.
"""

from __future__ import annotations

import pytest
from sklearn.utils.estimator_checks import _get_check_estimator_ids, estimator_checks_generator


def _checks(estimator, marks=()):
    """The (estimator, check) cases of one instance, as sklearn's parametrize_with_checks makes them."""
    for case in estimator_checks_generator(estimator, legacy=True, mark="xfail"):
        if marks:
            values, own = (case.values, list(case.marks)) if hasattr(case, "values") else (case, [])
            case = pytest.param(*values, marks=[*own, *marks])
        yield case


def parametrize_with_checks_per_class(estimators, variants=()):
    """``sklearn.utils.estimator_checks.parametrize_with_checks``, one instance per class.

    Parameters
    ----------
    estimators : list of estimator instances
        One instance per class; every check runs on each.
    variants : list of estimator instances, default=()
        Other parameter values of classes in ``estimators``; their checks are marked ``slow``.

    Returns
    -------
    pytest.MarkDecorator
        ``parametrize("estimator, check", ...)`` with scikit-learn's test ids.

    Raises
    ------
    ValueError
        If two of ``estimators`` share a class, or a variant's class is not among them.
    """
    classes = [type(est) for est in estimators]
    if len(set(classes)) != len(classes):
        raise ValueError("give one instance per class; put the others in variants")
    if not {type(est) for est in variants} <= set(classes):
        raise ValueError("a variant's class has no instance in estimators")
    cases = [case for est in estimators for case in _checks(est)]
    cases += [case for est in variants for case in _checks(est, marks=(pytest.mark.slow,))]
    return pytest.mark.parametrize("estimator, check", cases, ids=_get_check_estimator_ids)
