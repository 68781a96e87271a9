"""Parameter constraints: the values each estimator parameter accepts, declared once.

Every ensemblekit estimator states, in the class attribute ``_parameter_constraints``,
a dict ``{parameter name: Constraint}`` that covers every argument of its
``__init__``, and calls :func:`validate_params` at the start of ``fit``. The
registry (:mod:`ensemblekit.registry`) reads the same declarations to parse and
check ``--set key=value``, to print the help of each parameter and the allowed
values in ``ensemblekit algorithms``: the command line and the estimator accept
and refuse the same values because both read one declaration.

The idea is scikit-learn's ``_parameter_constraints`` (checked by
``sklearn.utils._param_validation``, a private module), in a small vocabulary of
our own that can also be parsed from and printed for the command line:

* ``kind`` -- ``"int"``, ``"float"``, ``"bool"``, ``"choice"`` (one of a few
  strings) or ``"any"`` (not checked: arrays of column indices, seeds, ...);
* ``low``, ``high`` and ``closed`` -- bounds of a number, each end included or
  not (``closed`` as in scikit-learn's ``Interval``: ``"both"``, ``"left"``,
  ``"right"``, ``"neither"``), so ``> 0`` is ``Constraint("float", low=0,
  closed="right")``;
* ``choices`` -- the strings a ``"choice"`` accepts; with ``multiple=True`` a
  comma-separated list of them (or a sequence of them, repeats allowed);
* ``none_ok`` -- ``None`` is accepted too (``none`` on the command line);
* ``array_ok`` -- an array-like is accepted too (from Python only, e.g. explicit
  starting centres);
* ``alt`` -- another constraint a value may meet instead ("an int >= 1, or a
  fraction in (0, 1)");
* ``help`` -- one line for the command line's help.

Types follow scikit-learn's rules: a bool is not an int; numpy integers are
ints; a float parameter takes ints and numpy floats but not bools, and must be
finite; an int parameter refuses ``3.0``.

This module imports neither numpy nor scikit-learn (the command line's
``--help`` reads the registry without them).
"""

from __future__ import annotations

import math
import numbers
import sys
from dataclasses import dataclass
from typing import Any

from ensemblekit.errors import InputError

__all__ = ["CLOSED", "KINDS", "MAX_ITERATIONS", "MAX_MEMBERS", "MAX_TREES", "Constraint",
           "InvalidParameterError", "validate_params"]

#: Upper bounds that keep an absurd value (a typo such as ``n_estimators=1000000000``)
#: from running for days or exhausting memory; each is far above any setting of the
#: papers' experiments. Iterations of an optimisation (K-means, PAM, EM):
MAX_ITERATIONS = 100_000
#: Members of an inner or outer ensemble, bags, EM restarts (each a full model fit):
MAX_MEMBERS = 1000
#: Trees of a forest or rule ensemble, ISCA stages and rules per stage (each a small tree):
MAX_TREES = 100_000

#: The kinds of value a :class:`Constraint` describes.
KINDS = ("int", "float", "bool", "choice", "any")

#: Which ends of ``[low, high]`` belong to the range (scikit-learn's ``Interval`` names).
CLOSED = ("both", "left", "right", "neither")


class InvalidParameterError(InputError):
    """A parameter value is outside what its estimator declares (a ``ValueError``)."""


def _is_numpy_bool(value) -> bool:
    np = sys.modules.get("numpy")  # a numpy value exists only once numpy is imported
    return np is not None and isinstance(value, np.bool_)


def _is_bool(value) -> bool:
    return isinstance(value, bool) or _is_numpy_bool(value)


def _finite(value) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return False


def _fmt_number(x) -> str:
    x = float(x)
    return str(int(x)) if x.is_integer() else repr(x)


@dataclass(frozen=True)
class Constraint:
    """What one estimator parameter accepts (see the module docstring).

    Parameters
    ----------
    kind : {"int", "float", "bool", "choice", "any"}
        Type of the value.
    help : str, default=""
        One line for the command line (``--set`` help, ``ensemblekit algorithms
        --format json``).
    low, high : float or None, default=None
        Bounds of an ``"int"`` or ``"float"`` (None: unbounded on that side).
    closed : {"both", "left", "right", "neither"}, default="both"
        Which of the bounds are included.
    choices : tuple of str, default=()
        The strings a ``"choice"`` accepts.
    none_ok : bool, default=False
        Also accept ``None`` (``none`` on the command line).
    multiple : bool, default=False
        ``"choice"`` only: the value is a comma-separated list of choices (a
        string), or a non-empty sequence of them; repeats allowed.
    array_ok : bool, default=False
        Also accept an array-like (any non-string object with a length), from
        Python only: the command line cannot give one.
    alt : Constraint or None, default=None
        Another form the value may take instead (its ``help``, ``none_ok`` and
        ``array_ok`` are not used).

    Raises
    ------
    ValueError
        If the declaration itself is inconsistent (an unknown kind or
        ``closed``, a choice without choices, bounds on a non-number).

    Examples
    --------
    >>> alpha = Constraint("float", "Dirichlet pseudo-count", low=0, closed="right")
    >>> alpha.describe_range()
    'float > 0'
    >>> alpha.accepts(0.5), alpha.accepts(0), alpha.accepts(True), alpha.accepts(float("inf"))
    (True, False, False, False)
    >>> alpha.parse("1e-3", "alpha")
    0.001
    >>> leaf = Constraint("int", low=1, alt=Constraint("float", low=0, high=1, closed="neither"))
    >>> leaf.describe_range(), leaf.accepts(2), leaf.accepts(0.25), leaf.accepts(2.0)
    ('int >= 1, or float > 0 and < 1', True, True, False)
    """

    kind: str
    help: str = ""
    low: float | None = None
    high: float | None = None
    closed: str = "both"
    choices: tuple[str, ...] = ()
    none_ok: bool = False
    multiple: bool = False
    array_ok: bool = False
    alt: Constraint | None = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise InputError(f"kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.closed not in CLOSED:
            raise InputError(f"closed must be one of {', '.join(CLOSED)}, got {self.closed!r}")
        if (self.kind == "choice") != bool(self.choices):
            raise InputError("choices are given for, and only for, kind='choice'")
        if self.multiple and self.kind != "choice":
            raise InputError("multiple applies to kind='choice' only")
        if self.kind not in ("int", "float") and (self.low is not None or self.high is not None):
            raise InputError(f"bounds apply to int and float, not {self.kind}")
        object.__setattr__(self, "choices", tuple(self.choices))

    # ------------------------------------------------------------------ values
    def _forms(self) -> tuple[Constraint, ...]:
        """This constraint and its alternatives, in order."""
        forms, c = [], self
        while c is not None:
            forms.append(c)
            c = c.alt
        return tuple(forms)

    def _in_bounds(self, value) -> bool:
        left = self.closed in ("both", "left")
        right = self.closed in ("both", "right")
        if self.low is not None and not (value >= self.low if left else value > self.low):
            return False
        return self.high is None or (value <= self.high if right else value < self.high)

    def _accepts_form(self, value) -> bool:
        """Whether ``value`` meets this form (ignoring None, arrays and alternatives)."""
        if self.kind == "any":
            return True
        if self.kind == "bool":
            return _is_bool(value)
        if self.kind == "int":
            return (isinstance(value, numbers.Integral) and not _is_bool(value)
                    and self._in_bounds(value))
        if self.kind == "float":
            return (isinstance(value, numbers.Real) and not _is_bool(value)
                    and _finite(value) and self._in_bounds(value))
        if not self.multiple:
            return isinstance(value, str) and value in self.choices
        names = _names(value)
        return bool(names) and all(isinstance(n, str) and n in self.choices for n in names)

    def accepts(self, value) -> bool:
        """Whether ``value`` is an allowed value of the parameter.

        Parameters
        ----------
        value : object
            A Python value (what ``get_params`` returns).

        Returns
        -------
        bool
        """
        if value is None:
            return self.none_ok or self.kind == "any"
        if self.array_ok and not isinstance(value, str) and hasattr(value, "__len__"):
            return True
        return any(form._accepts_form(value) for form in self._forms())

    # ------------------------------------------------------------------- words
    def _describe_form(self) -> str:
        if self.kind == "choice":
            listed = "|".join(self.choices)
            if self.multiple:
                return f"comma-separated list of {listed} (repeats allowed)"
            return listed
        if self.kind == "bool":
            return "true|false"
        if self.kind == "any":
            return "any value"
        left = ">=" if self.closed in ("both", "left") else ">"
        right = "<=" if self.closed in ("both", "right") else "<"
        parts = []
        if self.low is not None:
            parts.append(f"{left} {_fmt_number(self.low)}")
        if self.high is not None:
            parts.append(f"{right} {_fmt_number(self.high)}")
        return f"{self.kind} {' and '.join(parts)}".strip()

    def describe_range(self, arrays: bool = True) -> str:
        """The allowed values in words, e.g. ``"int >= 0, or none"``, ``"float > 0"``.

        Parameters
        ----------
        arrays : bool, default=True
            Mention that an array-like is accepted (when it is). The command
            line passes False: it cannot give one.

        Returns
        -------
        str
            Alternatives joined by ``", or "``; choices joined by ``"|"``.
        """
        text = ", or ".join(form._describe_form() for form in self._forms())
        if arrays and self.array_ok:
            text += ", or an array-like"
        return f"{text}, or none" if self.none_ok else text

    def describe_type(self) -> str:
        """The type of the value in a word or two, e.g. ``"int"`` or ``"int or float"``.

        The kinds of this constraint and of its alternatives, each named once,
        in order; a ``multiple`` choice is a ``"choice list"``. Bounds, choices
        and ``none`` are left to :meth:`describe_range`.

        Returns
        -------
        str

        Examples
        --------
        >>> Constraint("int", low=1, alt=Constraint("float", low=0, high=1)).describe_type()
        'int or float'
        >>> Constraint("choice", choices=("a", "b"), multiple=True).describe_type()
        'choice list'
        """
        kinds = ("choice list" if form.multiple else form.kind for form in self._forms())
        return " or ".join(dict.fromkeys(kinds))

    # ------------------------------------------------------------------ checks
    def check(self, value, name: str, owner: str | None = None):
        """Return ``value`` if it is allowed, else raise :class:`InvalidParameterError`.

        Parameters
        ----------
        value : object
        name : str
            The parameter's name, for the message.
        owner : str or None, default=None
            The estimator's class name, for the message.

        Raises
        ------
        InvalidParameterError
            Naming the parameter, the class, the allowed values and ``value``.
        """
        if not self.accepts(value):
            of = f" of {owner}" if owner else ""
            raise InvalidParameterError(
                f"The {name!r} parameter{of} must be {self.describe_range()}; got {value!r}."
            )
        return value

    def parse(self, text: str, name: str):
        """Parse and check a value given on the command line (``--set name=text``).

        ``none`` (any case) gives None where ``none_ok``; a bool is one of
        ``true/yes/1/on`` or ``false/no/0/off``; an int is what Python's
        ``int()`` reads (so ``"2.5"`` and ``"2.0"`` are not ints); a float what
        ``float()`` reads, finite.

        Parameters
        ----------
        text : str
        name : str
            The parameter's name, for the message.

        Returns
        -------
        object
            The parsed value (a str for choices, even with ``multiple``).

        Raises
        ------
        InvalidParameterError
            ``"bad value ... for name: expected ..."``: the text is not of the
            kind, out of range, not finite or not a choice.
        """
        text = text.strip()
        if self.none_ok and text.lower() == "none":
            return None
        converted = []
        for form in self._forms():
            try:
                converted.append(form._convert(text))
            except ValueError:
                continue
        for value in converted:
            if self.accepts(value):
                return value
        if not converted:
            what = " or ".join(form._what() for form in self._forms())
            raise InvalidParameterError(f"bad value {text!r} for {name}: expected {what}")
        value = converted[0]
        if isinstance(value, float) and not math.isfinite(value):
            raise InvalidParameterError(f"bad value {value!r} for {name}: must be finite")
        raise InvalidParameterError(
            f"bad value {_fmt_number(value)} for {name}: expected {self.describe_range(False)}"
        )

    def _convert(self, text: str):
        """``text`` as a value of this form's kind (not range-checked); ValueError if not."""
        if self.kind == "int":
            return int(text)
        if self.kind == "float":
            return float(text)
        if self.kind == "bool":
            lowered = text.lower()
            if lowered in ("true", "yes", "1", "on"):
                return True
            if lowered in ("false", "no", "0", "off"):
                return False
            raise InputError(text)
        if self.kind == "choice" and self._accepts_form(text):
            return text
        raise InputError(text)

    def _what(self) -> str:
        if self.kind == "choice":
            listed = ", ".join(self.choices)
            return f"a comma-separated list of {listed}" if self.multiple else f"one of {listed}"
        if self.kind == "bool":
            return "true or false"
        return self.kind


def _names(value) -> tuple:
    """The names in a ``multiple`` choice: a comma-separated string or a sequence."""
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(","))
    try:
        return tuple(value)
    except TypeError:  # not iterable
        return ()


def validate_params(estimator) -> None:
    """Check an estimator's parameters against its class's declaration.

    Reads ``estimator.get_params(deep=False)`` (for a model class without
    ``get_params``, the declared parameters' attributes) and
    ``type(estimator)._parameter_constraints``; a parameter the declaration
    does not name is not checked (as in scikit-learn). Cross-parameter and
    data-dependent rules (e.g. ``n_neighbors`` at most the number of rows) are
    the estimator's own, checked in ``fit`` after this.

    Parameters
    ----------
    estimator : object
        A scikit-learn style estimator, or a model class instance.

    Raises
    ------
    InvalidParameterError
        On the first parameter (in ``get_params`` order) whose value is not
        allowed; the message names the parameter, the class, the allowed values
        and the value.

    Examples
    --------
    >>> class Toy:
    ...     _parameter_constraints = {"k": Constraint("int", "neighbours", low=1)}
    ...     def __init__(self, k=1):
    ...         self.k = k
    ...     def get_params(self, deep=True):
    ...         return {"k": self.k}
    >>> validate_params(Toy(3))
    >>> validate_params(Toy(0))
    Traceback (most recent call last):
    ...
    ensemblekit.constraints.InvalidParameterError: The 'k' parameter of Toy must be int >= 1; got 0.
    """
    declared: dict[str, Constraint] = getattr(type(estimator), "_parameter_constraints", {})
    owner = type(estimator).__name__
    if hasattr(estimator, "get_params"):
        params: dict[str, Any] = estimator.get_params(deep=False)
    else:  # a model class (numpy only): its declared parameters, in scikit-learn's order
        params = {name: getattr(estimator, name) for name in sorted(declared)}
    for name, value in params.items():
        constraint = declared.get(name)
        if constraint is not None:
            constraint.check(value, name, owner)
