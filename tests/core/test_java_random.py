"""``JavaRandom`` gives the numbers of Java's ``java.util.Random`` for the same seed."""

from __future__ import annotations

import pytest

from ensemblekit.java_random import JavaRandom


def test_java_random_gives_java_s_numbers():
    # printed by Java 17: new Random(1).nextInt(10) x 6, nextInt(1 << 20), nextInt(1000000007),
    # nextInt(Integer.MAX_VALUE), nextDouble(); new Random(-7): nextInt(3), nextInt(5),
    # nextDouble(), nextInt(1 << 30); new Random(3).nextInt(1500000000) x 8 (which rejects
    # and redraws four times)
    rng = JavaRandom(1)
    assert [rng.next_int(10) for _ in range(6)] == [5, 8, 7, 3, 4, 4]
    assert rng.next_int(1 << 20) == 348879
    assert rng.next_int(1000000007) == 414906599
    assert rng.next_int(2**31 - 1) == 2078239978
    assert rng.next_double() == 0.7107396275716601
    rng = JavaRandom(-7)
    assert (rng.next_int(3), rng.next_int(5)) == (1, 2)
    assert rng.next_double() == 0.6731811902798038
    assert rng.next_int(1 << 30) == 559945239
    rng = JavaRandom(3)
    assert [rng.next_int(1500000000) for _ in range(8)] == [
        1207763660, 152454210, 144139128, 1249547202, 1235116564, 488197459, 1418025585,
        757666882]
    with pytest.raises(ValueError, match="bound"):
        rng.next_int(0)
