"""The one family of errors ensemblekit raises on purpose.

Two bases, and every public error class of the package derives from one of them:

- :class:`EnsemblekitError` — anything ensemblekit raises deliberately.
- :class:`InputError` — the caller's input or options are wrong: a file that cannot
  be read, a schema that does not match, an unknown algorithm or parameter, a value
  out of range, a damaged or untrusted model file. It is also a :class:`ValueError`,
  so code written against scikit-learn's convention (``except ValueError``) keeps
  working. The command line maps it to exit code 2 and prints its one-line message.

:class:`UsageError` is the :class:`InputError` the application layer
(:mod:`ensemblekit.api`) raises for a request it cannot carry out as asked: options
that contradict each other, or data that does not suit the algorithm.

Anything else that escapes a command, including a plain :class:`ValueError` raised
inside numpy or an estimator, is an unexpected failure: exit code 1, with the
traceback when ``--debug`` is given or ``ENSEMBLEKIT_DEBUG`` is set. ``compare``
applies the same rule per unit of work: only an :class:`InputError` is recorded as
a fault of the input; any other exception is a failure of the algorithm.

Examples
--------
>>> from ensemblekit.errors import EnsemblekitError, InputError
>>> issubclass(InputError, ValueError) and issubclass(InputError, EnsemblekitError)
True
"""

from __future__ import annotations

__all__ = ["ColumnError", "EnsemblekitError", "InputError", "NotFittedError", "UsageError",
           "interruption"]


class EnsemblekitError(Exception):
    """Base of every exception ensemblekit raises on purpose."""


class InputError(EnsemblekitError, ValueError):
    """The input or the options are wrong; ``str(error)`` is one line saying what to change.

    The command line exits with code 2 on it.
    """


class ColumnError(InputError):
    """The values of one input column, or of the target, are refused.

    An estimator sees columns by position; the application layer, which knows
    their names, words the message with :meth:`naming`. Until then the column
    is called by its index.

    Parameters
    ----------
    column : int or None
        Index of the column among the estimator's input columns; None for the
        target ``y``.
    template : str
        The message, with ``{column}`` where the column's name goes.

    Examples
    --------
    >>> err = ColumnError(1, "{column} holds 1e+300, beyond the largest value 3.4e38")
    >>> str(err)
    'column 1 holds 1e+300, beyond the largest value 3.4e38'
    >>> err.naming(["a", "b"])
    "attribute 'b' holds 1e+300, beyond the largest value 3.4e38"
    """

    def __init__(self, column: int | None, template: str):
        self.column = column
        self.template = template
        super().__init__(template.format(column="the target" if column is None
                                         else f"column {column}"))

    def naming(self, names, target: str | None = None) -> str:
        """The message with the column's (or the target's) name in it.

        Parameters
        ----------
        names : sequence of str
            Names of the estimator's input columns, in order.
        target : str, optional
            Name of the target attribute.

        Returns
        -------
        str
            One line; the unnamed message when ``names`` does not reach the column.
        """
        if self.column is None:
            name = "the target" if target is None else f"target '{target}'"
        elif 0 <= self.column < len(names):
            name = f"attribute '{names[self.column]}'"
        else:
            return str(self)
        return self.template.format(column=name)


class UsageError(InputError):
    """A request that cannot be carried out as asked: the message says what to change."""


class NotFittedError(EnsemblekitError, ValueError, AttributeError):
    """A model was asked to predict before it was fitted (as scikit-learn's ``NotFittedError``)."""


def interruption(exc: BaseException) -> BaseException | None:
    """The interrupt behind ``exc``, if a signal caused it; None otherwise.

    A signal's Python handler runs wherever the main thread happens to be. When that is a
    callback from compiled code (numba calls back into Python, e.g. to build an object), the
    :class:`KeyboardInterrupt` it raises cannot stop the compiled code, which returns as if
    nothing happened, and CPython then raises ``SystemError: ... returned a result with an
    exception set``, caused by the interrupt. Such an error is the interrupt, not a failure.

    Parameters
    ----------
    exc : BaseException
        An exception that escaped some work.

    Returns
    -------
    BaseException or None
        ``exc`` itself when it is no :class:`Exception` (``KeyboardInterrupt``, ``SystemExit``
        or a signal turned into an exception), else the first such exception among its
        causes and contexts (``__cause__``, then ``__context__``, link by link), else None.
        ``GeneratorExit`` does not count.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if not isinstance(current, (Exception, GeneratorExit)):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None
