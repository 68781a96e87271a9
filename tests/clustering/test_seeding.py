"""The one seeded start shared by K-means, IEK-m and the cluster-ensemble members.

Inner Ensembles (Abbasian et al., ECML PKDD 2013, Sect. 3.2) compares K-means, IEK-m and
cluster ensembles run from the same initial centres. ``kmeans._seeded_start`` is where
``random_state`` becomes those centres; these tests check that every estimator starts
from exactly what it returns, and what it returns on data small enough to check by hand.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from ensemblekit.clustering.consensus import (
    CSPA,
    MCLA,
    CoAssociationHAC,
    _encode_members,
    consensus_cspa,
    kmeans_members,
)
from ensemblekit.clustering.inner_kmeans import InnerEnsembleKMeans
from ensemblekit.clustering.kmeans import KMeans, _seeded_start

SEED_DRAW_MAX = np.iinfo(np.int32).max  # the first draw is randint(0, 2**31 - 1)

# Six rows, five distinct: row 4 repeats row 1.
TINY = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [5.0, 5.0], [1.0, 0.0], [6.0, 5.0]])
TINY_DISTINCT_ROWS = [0, 1, 2, 3, 5]  # first occurrences, in file order


def blobs():
    """Three groups in 4-D with a few exact duplicate rows (80 rows, 77 distinct)."""
    rng = np.random.RandomState(5)
    X = np.vstack([rng.normal(loc=c, scale=0.6, size=(25, 4)) for c in (0.0, 3.0, 6.0)])
    return np.vstack([X, X[[0, 1, 2]], rng.normal(loc=3.0, size=(2, 4))])


def one_lloyd_step(Xs, start_scaled):
    """Centres after one assignment + update from ``start_scaled`` (no empty cluster here)."""
    d = ((Xs[:, None, :] - start_scaled[None, :, :]) ** 2).sum(axis=2)
    nearest = d.argmin(axis=1)
    return np.array([Xs[nearest == c].mean(axis=0) for c in range(start_scaled.shape[0])])


# ---------------------------------------------------------------------------
# the helper itself, by hand
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2, 3, 12345])
def test_random_start_is_k_distinct_training_rows_drawn_with_the_first_draw(seed):
    start = _seeded_start(TINY, 3, "random", "none", seed)
    # by hand: the seed's stream draws one integer; that integer seeds a draw of 3 of the
    # 5 distinct rows without replacement
    init_seed = np.random.RandomState(seed).randint(SEED_DRAW_MAX)
    pick = np.random.RandomState(init_seed).choice(5, size=3, replace=False)
    assert_array_equal(start.init_centers, TINY[[TINY_DISTINCT_ROWS[i] for i in pick]])
    # k rows of the training data, pairwise distinct although rows 1 and 4 are equal
    assert start.init_centers.shape == (3, 2)
    assert all(any((c == row).all() for row in TINY) for c in start.init_centers)
    assert np.unique(start.init_centers, axis=0).shape[0] == 3
    # no scaling: the scaled space is the input space
    assert_array_equal(start.Xs, TINY)
    assert_array_equal(start.init_scaled, start.init_centers)


@pytest.mark.parametrize("seed", range(10))
def test_as_many_centres_as_distinct_rows_takes_every_distinct_row(seed):
    start = _seeded_start(TINY, 5, "random", "none", seed)
    got = {tuple(row) for row in start.init_centers}
    assert got == {(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (5.0, 5.0), (6.0, 5.0)}


def test_more_centres_than_distinct_rows_is_refused():
    with pytest.raises(ValueError, match="only 5 distinct rows"):
        _seeded_start(TINY, 6, "random", "none", 0)


def after_one_draw(seed):
    """The stream of ``seed`` after the one draw that seeds the centres."""
    rng = np.random.RandomState(seed)
    rng.randint(SEED_DRAW_MAX)
    return rng


def test_the_stream_is_returned_after_exactly_one_draw():
    for with_centers in (True, False):
        start = _seeded_start(TINY, 2, "random", "none", 7, with_centers=with_centers)
        assert_array_equal(start.rng.random_sample(5), after_one_draw(7).random_sample(5))
    assert start.init_centers is None and start.init_scaled is None  # with_centers=False
    # a RandomState instance is the stream itself: advanced by one draw
    state = np.random.RandomState(7)
    assert _seeded_start(TINY, 2, "random", "none", state).rng is state
    assert_array_equal(state.random_sample(5), after_one_draw(7).random_sample(5))


def test_minmax_start_is_chosen_in_the_scaled_space_and_reported_in_input_units():
    start = _seeded_start(TINY, 3, "random", "minmax", 4)
    # by hand: columns span [0, 6] and [0, 5]
    assert_array_equal(start.offset, [0.0, 0.0])
    assert_array_equal(start.factor, [6.0, 5.0])
    assert_allclose(start.init_scaled, start.init_centers / [6.0, 5.0], rtol=0, atol=0)
    assert np.unique(start.init_centers, axis=0).shape[0] == 3


def test_an_array_start_is_used_as_given_and_still_takes_the_first_draw():
    given = [[0.0, 0.0], [6.0, 5.0]]
    start = _seeded_start(TINY, 2, given, "minmax", 3)
    assert_array_equal(start.init_centers, given)
    assert_array_equal(start.init_scaled, [[0.0, 0.0], [1.0, 1.0]])
    assert_array_equal(start.rng.random_sample(5), after_one_draw(3).random_sample(5))


def test_different_seeds_give_different_starts():
    X = blobs()
    starts = [_seeded_start(X, 3, "random", "none", seed).init_centers for seed in range(6)]
    for a in range(6):
        for b in range(a + 1, 6):
            assert not np.array_equal(starts[a], starts[b])


# ---------------------------------------------------------------------------
# every estimator starts from the helper's centres
# ---------------------------------------------------------------------------
def consensus_estimators(**params):
    return [
        CSPA(partitioner="spectral", **params),
        MCLA(partitioner="spectral", **params),
        CoAssociationHAC(linkage="average", **params),
    ]


@pytest.mark.parametrize("init, scale, seed", [
    ("random", "none", 0), ("random", "zscore", 21),
    ("k-means++", "none", 21), ("k-means++", "zscore", 0),
])
def test_kmeans_iekm_and_members_start_from_the_same_centres(init, scale, seed):
    X = blobs()
    start = _seeded_start(X, 3, init, scale, seed)
    common = dict(init=init, scale=scale, random_state=seed)

    km = KMeans(3, max_iter=1, **common).fit(X)
    assert_array_equal(km.init_centers_, start.init_centers)
    # it really started there: one Lloyd step from the helper's centres
    assert_allclose(km.scaled_centers_, one_lloyd_step(start.Xs, start.init_scaled),
                    rtol=1e-12, atol=1e-12)

    iekm = InnerEnsembleKMeans(3, n_estimators=7, max_iter=1, **common).fit(X)
    assert_array_equal(iekm.init_centers_, start.init_centers)
    # one member on every feature votes as K-means does: the same first step
    single = InnerEnsembleKMeans(3, n_estimators=1, max_features=1.0, max_iter=1,
                                 **common).fit(X)
    assert_allclose(single.scaled_centers_, one_lloyd_step(start.Xs, start.init_scaled),
                    rtol=1e-12, atol=1e-12)

    for model in consensus_estimators(n_clusters=3, n_estimators=5, **common):
        model.fit(X)
        assert_array_equal(model.init_centers_, start.init_centers)
        # the members are K-means runs from exactly those centres on their subsets
        rebuilt = kmeans_members(start.Xs, start.init_scaled, model.feature_weights_)
        assert_array_equal(model.members_, _encode_members(rebuilt)[0])


def test_same_seed_same_start_across_estimators_different_seed_different_start():
    X = blobs()
    for seed, other in ((3, 4), (100, 101)):
        starts = [KMeans(3, random_state=seed).fit(X).init_centers_,
                  InnerEnsembleKMeans(3, random_state=seed).fit(X).init_centers_]
        starts += [m.fit(X).init_centers_
                   for m in consensus_estimators(n_clusters=3, n_estimators=3,
                                                 random_state=seed)]
        for s in starts[1:]:
            assert_array_equal(s, starts[0])
        moved = KMeans(3, random_state=other).fit(X).init_centers_
        assert not np.array_equal(moved, starts[0])
        assert_array_equal(
            InnerEnsembleKMeans(3, random_state=other).fit(X).init_centers_, moved)


def test_given_members_still_use_the_first_draw_for_the_centres_seed():
    # a cluster ensemble given its members chooses no centres, but its consensus function
    # draws from the same place in the stream as when it builds the members
    X = blobs()
    members = np.column_stack([np.arange(X.shape[0]) % 3, np.arange(X.shape[0]) // 27,
                               (np.arange(X.shape[0]) // 9) % 3])
    model = CSPA(n_clusters=3, partitioner="spectral", random_state=9).fit(X, members=members)
    assert model.init_centers_ is None and model.feature_weights_ is None
    expected = consensus_cspa(members, 3, random_state=after_one_draw(9), partitioner="spectral")
    assert_array_equal(model.labels_, expected)
    start = _seeded_start(X, 3, "random", "none", 9, with_centers=False)
    assert start.init_centers is None and start.init_scaled is None
    assert_array_equal(start.Xs, X)
