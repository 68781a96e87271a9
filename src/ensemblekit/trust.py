"""What the checks of a loaded model share: the error, the context that names the entry, bounds.

A model file is untrusted input (README, "Model files are untrusted input").
:func:`ensemblekit.state.restore` checks every stored array and number against
the declaration of the model class the registry names, then runs the class's
own ``_check_state(self, ctx)`` for the rules between arrays. Both report
through one :class:`CheckContext`, whose :meth:`~CheckContext.fail` raises
:class:`DamagedModelError` naming the entry (``"model.estimators_.3.feature_:
holds 12, not below 9"``); :mod:`ensemblekit.app.models` turns it into
``"FILE: the model file is damaged: ..."``.

Compiled and vectorised code indexes arrays without bounds checks, so a child
index of ``10**8`` or a cycle in a tree would crash or hang the process: the
checks make sure such arrays are what a fit produces before anything uses them.
"""

from __future__ import annotations

from ensemblekit._workers import worker_count
from ensemblekit.errors import InputError

__all__ = ["COUNT_MAX", "CheckContext", "DamagedModelError", "all_distinct", "n_jobs_attr"]

COUNT_MAX = 2**31 - 1
"""Largest count, size or length a check accepts (numpy's and scikit-learn's compiled code
hold many of them in 32 bits; a fit never produces more)."""


class DamagedModelError(InputError):
    """A stored model's state is not what a fit produces (one line saying what is wrong)."""


class CheckContext:
    """Where a check is in the stored model, to name what is wrong.

    Attributes
    ----------
    path : list of str
        The entries from the model down to the current one
        (``["model", "estimators_", "3"]``).
    """

    def __init__(self):
        self.path: list[str] = []

    def fail(self, what: str) -> None:
        """Raise :class:`DamagedModelError` saying ``"<path>: <what>"``.

        Raises
        ------
        DamagedModelError
            Always.
        """
        where = ".".join(self.path) or "model"
        raise DamagedModelError(f"{where}: {what}")


def n_jobs_attr(ctx: CheckContext, obj, label: str = "n_jobs") -> None:
    """A stored number of prediction workers is None or a count ``--n-jobs`` would accept here.

    Parameters
    ----------
    ctx : CheckContext
    obj : object
        The model holding ``n_jobs``.
    label : str
        How a failure names it.

    Raises
    ------
    DamagedModelError
        Through ``ctx.fail``.
    """
    value = vars(obj).get("n_jobs")
    if value is None:
        return
    try:
        worker_count(value, name=label)
    except ValueError as exc:
        ctx.fail(str(exc))


def all_distinct(values) -> bool:
    """Whether a 1-D array holds no value twice.

    ``np.unique(values).size == values.size`` says the same, but ``np.unique`` imports
    ``numpy.ma`` (about 8 ms of a 0.15 s ``show``); sorting a copy does not.

    Parameters
    ----------
    values : ndarray of shape (n,)
        Integers or floats without NaN.

    Returns
    -------
    bool
    """
    import numpy as np

    ordered = np.sort(np.asarray(values).reshape(-1))
    return not bool(np.any(ordered[1:] == ordered[:-1]))
