"""Numbers printed as Weka prints them: ``Utils.doubleToString`` and Java's ``Double.toString``.

Weka formats a number with ``java.text.DecimalFormat``, which does not start from the
binary value of the double but from the decimal digits of Java's classic binary-to-decimal
conversion (``jdk.internal.math.FloatingDecimal``, the one ``Double.toString`` used up to
Java 18 and ``DecimalFormat`` still uses in Java 25), and rounds those digits. So
``1e25`` prints as ``1`` and 25 zeros, not as the double's exact value
``10000000000000000905969664``; and a J48 split point ``197258974075863.1875`` (exact
binary value) prints as ``197258974075863.2``.

The classic conversion gives the shortest digits that identify the double in nearly every
case; this module follows its steps, so it also differs from the shortest (Python's
``repr``) where Java does:

* an integer-valued double below 2**63 is printed from its exact integer value, with only
  ``floor(log10(2**(b - 54)))`` low digits rounded away (half up) for a binary exponent
  ``b`` of 56 or more: ``2.82879384806159e17`` prints as ``282879384806159008``;
* other doubles get their digits one by one from exact integer ratios, in 32-bit or 64-bit
  words when the ratio's sizes allow (where a decimal lying exactly on the border of the
  double's rounding interval is not taken: ``8.4e22`` prints as
  ``83999999999999990000000``, and where a sum that overflows the word wraps, so that
  ``2.4798487398601095e25`` prints with a last digit 4), and in unbounded integers for the
  rest (where the upper border is taken).

Checked against Weka 3.9.7's ``Utils.doubleToString(x, 6)`` and Java's ``Double.toString``
on Java 17 and Java 25 over 270,000 doubles (short decimals at every magnitude, ties at the
seventh decimal, the doubles on a border of their interval, random bit patterns over the
whole range, subnormals, powers of two, integers up to 2**64, midpoints): they agree, but
for Java 17's rounding of a lone 5 just past the last decimal (``5e-7`` prints
``0.000001`` in Java 17 and ``0`` in Java 25), where this module, like Java 25, rounds by
the double's exact value. (Java 19 and later print ``Double.toString`` with the shortest
digits; :func:`java_double` is Java 17's, as J48's leaf counts are small enough to print
the same in both.)
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction

__all__ = ["java_digits", "java_double", "weka_number"]

#: Bits of a double's fraction field, and its exponent bias.
_FRACTION_BITS, _BIAS = 52, 1023
#: Binary exponents of the integers the classic conversion prints from a 64-bit long.
_SMALLEST_LONG_EXPONENT, _LONG_EXPONENT = -21, 62


def java_digits(x: float) -> tuple[str, int]:
    """The decimal digits the classic Java conversion gives for ``abs(x)``.

    Parameters
    ----------
    x : float
        A finite, non-zero double.

    Returns
    -------
    digits : str
        The significant digits, without leading or trailing zeros (never empty).
    exponent : int
        Decimal exponent of the first digit: ``abs(x)`` reads as ``0.DIGITS * 10**exponent``.

    Raises
    ------
    ValueError
        If ``x`` is zero, infinite or NaN.
    """
    if x == 0 or not math.isfinite(x):
        raise ValueError(f"java_digits needs a finite non-zero number, got {x!r}")
    bits = struct.unpack("<Q", struct.pack("<d", abs(x)))[0]
    biased, significand = bits >> _FRACTION_BITS, bits & ((1 << _FRACTION_BITS) - 1)
    if biased == 0:  # subnormal: normalised, with fewer significant bits
        shift = _FRACTION_BITS + 1 - significand.bit_length()
        significand <<= shift
        binary, precision = 1 - shift - _BIAS, _FRACTION_BITS + 1 - shift
    else:
        significand |= 1 << _FRACTION_BITS
        binary, precision = biased - _BIAS, _FRACTION_BITS + 1
    zeros = (significand & -significand).bit_length() - 1
    used_bits = _FRACTION_BITS + 1 - zeros  # significant bits without the trailing zeros
    tiny = max(0, used_bits - binary - 1)  # bits after the binary point
    if tiny == 0 and _SMALLEST_LONG_EXPONENT <= binary <= _LONG_EXPONENT:
        value = significand << (binary - _FRACTION_BITS) if binary >= _FRACTION_BITS \
            else significand >> (_FRACTION_BITS - binary)
        return _long_digits(value, binary - precision - 1 if binary > precision else 0)
    return _generated_digits(significand >> zeros, binary, used_bits, tiny, precision,
                             _estimated_exponent(significand, binary))


def _long_digits(value: int, beyond: int) -> tuple[str, int]:
    """Digits of an integer double below 2**63, with ``floor(log10(2**beyond))`` low digits
    rounded away half up (none while ``beyond`` is below 2)."""
    drop = int(beyond * math.log10(2)) if beyond > 1 else 0  # exact for beyond <= 8
    if drop:
        unit = 10 ** drop
        value, rest = divmod(value, unit)
        if 2 * rest >= unit:
            value += 1
    text = str(value)
    return text.rstrip("0"), len(text) + drop


def _estimated_exponent(significand: int, binary: int) -> int:
    """The classic conversion's guess of ``floor(log10(x))``: a tangent to ``log10`` at 1.5,
    in double arithmetic; it may be one too large (then the first digit is a dropped 0)."""
    fraction = 1.0 + (significand & ((1 << _FRACTION_BITS) - 1)) / (1 << _FRACTION_BITS)
    return math.floor((fraction - 1.5) * 0.289529654 + 0.176091259 + binary * 0.301029995663981)


def _five_bits(power: int, fallback: int) -> int:
    """Bits of 5**power as the classic conversion counts them (a table up to 5**26)."""
    if power >= 27:
        return fallback
    return (5 ** power).bit_length() if power else 0


def _generated_digits(odd: int, binary: int, used_bits: int, tiny: int, precision: int,
                      exponent: int) -> tuple[str, int]:
    """Digits generated one at a time from exact integers B/S (the value over 10**exponent)
    until the rest is within M (half the gap to the next double) of a neighbouring digit
    string, then the last digit rounded to the nearer.

    The quantities are scaled by powers of 2 and 5 to be integers, and the arithmetic is
    done in 32-bit or 64-bit words when their sizes allow, as the classic conversion does,
    wrapping as Java's integers wrap (so a sum that overflows reads as small); otherwise
    exactly, where the upper border itself counts as within reach.
    """
    b5, s5 = max(0, -exponent), max(0, exponent)
    b2, s2 = b5 + tiny + binary, s5 + tiny
    m5, m2 = b5, b2 - precision
    b2 -= used_bits - 1
    common = min(b2, s2)
    b2, s2, m2 = b2 - common, s2 - common, m2 - common
    if used_bits == 1:  # a power of two: the gap below is half the gap above
        m2 -= 1
    if m2 < 0:
        b2, s2, m2 = b2 - m2, s2 - m2, 0
    b_bits = used_bits + b2 + _five_bits(b5, 3 * b5)
    ten_s_bits = s2 + 1 + _five_bits(s5 + 1, 3 * (s5 + 1))
    big = (odd * 5 ** b5) << b2, (5 ** s5) << s2, (5 ** m5) << m2
    width = None
    if b_bits < 64 and ten_s_bits < 64:
        width = 32 if b_bits < 32 and ten_s_bits < 32 else 64
    digits, exponent, up = _digit_loop(*big, exponent, width)
    if up:
        exponent += _round_up(digits)
    return "".join(map(str, digits)).rstrip("0") or "0", exponent + 1


def _wrap(value: int, width: int) -> int:
    """``value`` as a signed integer of ``width`` bits holds it (two's complement)."""
    half = 1 << (width - 1)
    return (value + half) % (half << 1) - half


def _digit_loop(b: int, s: int, m: int, exponent: int, width: int | None):
    """Digit generation: ``(digits, exponent, round the last up)``.

    ``width`` 32 or 64: in words of that many bits, where the upper border is out of reach
    and sums wrap; None: in exact integers, where the upper border is within reach.
    """
    tens = s * 10
    digits: list[int] = []
    first = True
    while True:
        q, b = divmod(b, s)
        b *= 10
        if width is None:
            m *= 10
            low, high = b < m, b + m >= tens
        else:
            m = _wrap(m * 10, width)
            if first or m > 0:
                low, high = b < m, _wrap(b + m, width) > tens
            else:  # the tolerance overflowed: taken as reaching both sides
                low = high = True
        exponent, low, high = _place(digits, q, exponent, low, high, first)
        first = False
        if low or high:
            break
    difference = 2 * b - tens if width is None else _wrap(_wrap(b << 1, width) - tens, width)
    return digits, exponent, _rounds_up(low, high, difference, digits)


def _place(digits: list[int], q: int, exponent: int, low: bool, high: bool, first: bool):
    """Add digit ``q``; a first digit 0 (the exponent guessed one too large) is dropped
    unless rounding up will make it 1, and a first digit never ends a number printed with
    an exponent (at least two digits, as ``1.0E10``)."""
    if first and q == 0 and not high:
        return exponent - 1, low, high
    digits.append(q)
    if first and (exponent < -3 or exponent >= 8):
        return exponent, False, False
    return exponent, low, high


def _rounds_up(low: bool, high: bool, difference: int, digits: list[int]) -> bool:
    """Whether the last digit goes up: within reach of the upper string only, or of both
    and nearer the upper one (``difference`` > 0), or halfway and odd."""
    if not high:
        return False
    if not low or difference > 0:
        return True
    return difference == 0 and digits[-1] % 2 == 1


def _round_up(digits: list[int]) -> int:
    """Add one to the last digit, carrying; return 1 when the carry adds a leading digit."""
    i = len(digits) - 1
    while i >= 0 and digits[i] == 9:
        digits[i] = 0
        i -= 1
    if i < 0:
        digits[:] = [1] + [0] * (len(digits) - 1)
        return 1
    digits[i] += 1
    return 0


def java_double(x: float) -> str:
    """Java's ``Double.toString`` as J48 prints the counts at its leaves (Java 17).

    Parameters
    ----------
    x : float

    Returns
    -------
    str
        Plain notation with at least one decimal (``7390.0``) for ``1e-3 <= |x| < 1e7``,
        otherwise ``D.DDDE[-]N`` (``1.0E7``); ``NaN``, ``Infinity``, ``-Infinity``,
        ``0.0`` and ``-0.0`` as Java writes them.
    """
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    sign = "-" if math.copysign(1.0, x) < 0 else ""
    if x == 0:
        return sign + "0.0"
    digits, exponent = java_digits(x)
    if 1e-3 <= abs(x) < 1e7:
        if exponent <= 0:
            return f"{sign}0.{'0' * -exponent}{digits}"
        whole = digits[:exponent].ljust(exponent, "0")
        return f"{sign}{whole}.{digits[exponent:] or '0'}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exponent - 1}"


def weka_number(x: float, decimals: int = 6) -> str:
    """Weka's ``Utils.doubleToString(x, decimals)``: a ``DecimalFormat`` rounding half up.

    Parameters
    ----------
    x : float
        Any double; thresholds of any finite size print in full (``1.7e308`` as 309
        digits).
    decimals : int, default=6
        Most digits after the point (0 or more).

    Returns
    -------
    str
        The digits of :func:`java_digits` in plain notation, rounded half up to at most
        ``decimals`` decimals (a lone trailing 5 by the double's exact value), trailing
        zeros and the point dropped, no grouping; a negative value that rounds to zero
        keeps its sign (``-0``); ``NaN``, ``Infinity``, ``-Infinity`` as Java writes them.
    """
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    negative = math.copysign(1.0, x) < 0
    if x == 0:
        return "-0" if negative else "0"
    digits, exponent = java_digits(x)
    kept = exponent + decimals  # how many of the digits fall before the cut
    if kept < len(digits):
        number = 0
        if kept >= 0:
            number = int(digits[:kept] or "0") + _cut_rounds_up(x, digits[kept:], decimals)
        if number == 0:
            return "-0" if negative else "0"
        digits, exponent = str(number).rstrip("0"), len(str(number)) - decimals
    return ("-" if negative else "") + _plain(digits, exponent)


def _cut_rounds_up(x: float, tail: str, decimals: int) -> bool:
    """Whether dropping ``tail`` (the digits past the last decimal) rounds up, half up: a
    tail of exactly ``5`` is a tie only if the double is exactly there, so its exact value
    decides."""
    if tail[0] != "5":
        return tail[0] > "5"
    if len(tail) > 1:
        return True
    exact = Fraction(abs(x)) * 10 ** decimals
    return exact - math.floor(exact) >= Fraction(1, 2)


def _plain(digits: str, exponent: int) -> str:
    """``0.DIGITS * 10**exponent`` in plain notation, without trailing zeros after a point."""
    if exponent <= 0:
        return f"0.{'0' * -exponent}{digits}"
    if exponent >= len(digits):
        return digits + "0" * (exponent - len(digits))
    return f"{digits[:exponent]}.{digits[exponent:]}"
