"""The bounds on data input, declared once: sizes, lines, values, attributes, nominal values.

A data file is read only within these bounds, so that a small file (a gzip
bomb, a header that declares millions of values, a line without an end) cannot
take gigabytes or hours. Each bound has a default far above what a real data
set of the papers' kind needs, and an environment variable that raises it (a
whole number, in the bound's unit). Going past a bound is a
:class:`~ensemblekit.dataset.DataError` whose one line names what was found,
the bound and its variable, for example::

    big.csv.gz: the gzip data decompresses to more than 128 MiB, the bound on
    decompressed data (set ENSEMBLEKIT_MAX_DATA_MB to allow more)
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ensemblekit.dataset import DataError

__all__ = ["ATTRIBUTES", "DATA_MB", "LINE_MB", "NOMINAL_TOTAL", "NOMINAL_VALUES", "SPARSE_VALUES",
           "VALUE_CHARS", "Bound"]


@dataclass(frozen=True)
class Bound:
    """One bound on data input and the environment variable that raises it.

    Parameters
    ----------
    what : str
        What is bounded, as messages name it ("decompressed data", "a line").
    default : int
        The bound when the variable is not set, in ``unit``.
    variable : str
        The environment variable that sets another bound: a whole number >= 1.
    unit : str
        The unit of the bound as messages write it ("MiB", "characters").
    scale : int, default=1
        Units of :meth:`limit` per unit of the variable (``1 << 20`` for MiB
        counted in bytes).
    """

    what: str
    default: int
    variable: str
    unit: str
    scale: int = 1

    def setting(self) -> int:
        """The bound in force, in the bound's own unit (the variable's value, else the default).

        Raises
        ------
        DataError
            The variable is set but is not a whole number >= 1.
        """
        text = os.environ.get(self.variable)
        if text is None:
            return self.default
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value < 1:
            raise DataError(f"{self.variable}={text!r}: expected a whole number of "
                             f"{self.unit} >= 1")
        return value

    def limit(self) -> int:
        """The bound in force, in the counted unit (bytes for a bound in MiB)."""
        return self.setting() * self.scale

    def exceeded(self, found: str) -> str:
        """The one-line message for input past the bound.

        Parameters
        ----------
        found : str
            What holds too much, worded to be followed by "more than N unit"
            (``"line 3 holds"``).

        Returns
        -------
        str
            ``found``, the bound in force, what it bounds, and the variable
            that raises it.
        """
        return (f"{found} more than {self.setting():,} {self.unit}, the bound on {self.what} "
                f"(set {self.variable} to allow more)")


#: Data decompressed from gzip, or read whole from standard input or a FIFO (regular
#: files are read as they are). The whole-file reader holds the text and the data
#: matrix, about five times this much at most (a file of one-digit numbers).
DATA_MB = Bound("decompressed data", 128, "ENSEMBLEKIT_MAX_DATA_MB", "MiB", 1 << 20)
#: One line of a file (a data row, or a header line such as a nominal value list).
LINE_MB = Bound("a line", 16, "ENSEMBLEKIT_MAX_LINE_MB", "MiB", 1 << 20)
#: One value: a cell of a data row, or a declared nominal value.
VALUE_CHARS = Bound("a value", 131_072, "ENSEMBLEKIT_MAX_VALUE_CHARS", "characters")
#: Attributes (columns) of a file.
ATTRIBUTES = Bound("attributes", 100_000, "ENSEMBLEKIT_MAX_ATTRIBUTES", "attributes")
#: Values of one nominal attribute (declared, or distinct values of a CSV column).
NOMINAL_VALUES = Bound("the values of a nominal attribute", 100_000,
                       "ENSEMBLEKIT_MAX_NOMINAL_VALUES", "values")
#: Values of all the nominal attributes of a file together.
NOMINAL_TOTAL = Bound("the nominal values of a file", 1_000_000, "ENSEMBLEKIT_MAX_NOMINAL_TOTAL",
                      "values")
#: Values of the data matrix (rows x attributes) that sparse ARFF rows expand to, beyond one
#: value per character of the file (which dense rows cannot pass): ``{}`` is a whole row
#: of zeros, so a small file could otherwise ask for gigabytes.
SPARSE_VALUES = Bound("the values sparse rows expand to", 1 << 26, "ENSEMBLEKIT_MAX_SPARSE_VALUES",
                      "values")
