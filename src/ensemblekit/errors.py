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

__all__ = ["EnsemblekitError", "InputError", "NotFittedError", "UsageError"]


class EnsemblekitError(Exception):
    """Base of every exception ensemblekit raises on purpose."""


class InputError(EnsemblekitError, ValueError):
    """The input or the options are wrong; ``str(error)`` is one line saying what to change.

    The command line exits with code 2 on it.
    """


class UsageError(InputError):
    """A request that cannot be carried out as asked: the message says what to change."""


class NotFittedError(EnsemblekitError, ValueError, AttributeError):
    """A model was asked to predict before it was fitted (as scikit-learn's ``NotFittedError``)."""
