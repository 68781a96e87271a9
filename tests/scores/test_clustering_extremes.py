"""Internal clustering indices of data near the float limits (issue 29, item 7).

Near 1e308 the squared distances behind the silhouette, Davies-Bouldin,
Calinski-Harabasz and Dunn overflowed: ``cluster`` printed a silhouette of 0.0 and
null for the others, with numpy warnings. Every internal index is a ratio of distances
(or ranks them), so the data is scored in a power-of-two unit: the index of the same
data in an ordinary unit, to the bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from ensemblekit.scores import clustering as indices

from ektesting.support import centred_iris

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


@pytest.mark.parametrize("index", [indices.silhouette, indices.davies_bouldin,
                                   indices.calinski_harabasz, indices.dunn,
                                   indices.connectivity])
@pytest.mark.parametrize("exponent", [1022, -1000])
def test_an_internal_index_near_the_limits_is_that_of_the_ordinary_unit(index, exponent):
    X, y = centred_iris(1)
    ordinary = index(X, y)
    assert np.isfinite(ordinary) and ordinary != 0
    assert index(np.ldexp(X, exponent), y) == ordinary
