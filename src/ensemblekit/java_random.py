"""Java's ``java.util.Random``, for reproducing the shuffles of Weka runs given their seed.

Weka draws every random choice (shuffles before cross-validation, J48's hold-out set for
reduced-error pruning, random orders) from ``java.util.Random``, a 48-bit linear
congruential generator specified in the Java API documentation: the state is
``(seed XOR 0x5DEECE66D) mod 2**48``, each step sets it to ``state * 0x5DEECE66D + 11 mod
2**48`` and yields its top bits. :class:`JavaRandom` is that generator re-expressed from
the specification, so that the same seed gives the same numbers as in Java.
"""

from __future__ import annotations

__all__ = ["JavaRandom"]

_MULTIPLIER = 0x5DEECE66D
_ADDEND = 0xB
_MASK = (1 << 48) - 1
_INT_MAX = 2**31 - 1


def _int32(v: int) -> int:
    """``v`` wrapped to a signed 32-bit integer, as a Java ``int``."""
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


class JavaRandom:
    """``java.util.Random`` seeded with ``seed``: the numbers Java gives for that seed.

    Parameters
    ----------
    seed : int
        Java's ``long`` seed (an ``int`` seed, as Weka's ``-Q`` / ``-S`` options give,
        is the same number); only its low 48 bits matter.

    Examples
    --------
    >>> rng = JavaRandom(1)
    >>> [rng.next_int(10) for _ in range(4)]  # Java: new Random(1).nextInt(10), 4 times
    [5, 8, 7, 3]

    References
    ----------
    .. [1] Java SE API, ``java.util.Random`` (the generator and ``nextInt(int)``,
       ``nextDouble()`` are specified there); D. E. Knuth, *The Art of Computer
       Programming*, vol. 2, Sect. 3.2.1.
    """

    def __init__(self, seed: int):
        self._state = (int(seed) ^ _MULTIPLIER) & _MASK

    def _next(self, bits: int) -> int:
        """The next ``bits`` (1 to 32) random bits, as Java's ``next(bits)`` (a signed int)."""
        self._state = (self._state * _MULTIPLIER + _ADDEND) & _MASK
        return _int32(self._state >> (48 - bits))

    def next_int(self, bound: int) -> int:
        """A number in ``0 .. bound - 1``, as Java's ``nextInt(bound)``.

        Parameters
        ----------
        bound : int in 1 .. 2**31 - 1

        Returns
        -------
        int

        Raises
        ------
        ValueError
            If ``bound`` is not positive or does not fit a Java ``int``.
        """
        if not 0 < bound <= _INT_MAX:
            raise ValueError(f"bound must be in 1 .. {_INT_MAX}, got {bound}")
        r = self._next(31)
        m = bound - 1
        if bound & m == 0:  # a power of two: the high bits
            return (bound * r) >> 31
        u = r
        r = u % bound
        while _int32(u - r + m) < 0:  # Java rejects the draws whose sum overflows an int
            u = self._next(31)
            r = u % bound
        return r

    def next_double(self) -> float:
        """A number in [0, 1) with 53 random bits, as Java's ``nextDouble()``."""
        return ((self._next(26) << 27) + self._next(27)) * 2.0**-53
