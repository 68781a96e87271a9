"""Matching typed names against known ones (ensemblekit.names)."""

import difflib

import pytest

from ensemblekit.names import CUTOFF, did_you_mean, resolve, suggest


def test_resolve_takes_the_exact_name_or_its_only_case_insensitive_match():
    assert resolve("species", ["island", "species"]) == "species"
    assert resolve("Species", ["island", "species"]) == "species"
    assert resolve("SPECIES", ["island", "species"]) == "species"
    assert resolve("name", ["Name", "NAME"]) is None  # ambiguous: refused, not guessed
    assert resolve("Name", ["Name", "NAME"]) == "Name"  # exact wins over the case fold
    assert resolve("specie", ["species"]) is None  # a typo is suggested, never resolved


def test_suggest_folds_case_and_punctuation_before_measuring():
    assert suggest("c4.5", ["c45", "knn", "k2"]) == "c45"
    assert suggest("Lazy_Bagging", ["bagging", "lazy-bagging"]) == "lazy-bagging"
    assert suggest("zzz", ["c45", "knn"]) is None
    assert suggest("x", []) is None


@pytest.mark.parametrize("typed", ["kmedoids", "kmean", "min_sample_leaf", "petallenght", "clas"])
def test_suggest_is_difflibs_closest_match_above_the_cutoff(typed):
    known = ["kmeans", "knn", "min_samples_leaf", "petallength", "class", "confidence_factor"]
    # the reference: the standard library's own ranking, with the same cutoff
    expected = (difflib.get_close_matches(typed, known, n=1, cutoff=CUTOFF) or [None])[0]
    assert suggest(typed, known) == expected


def test_did_you_mean_is_empty_when_nothing_is_close():
    assert did_you_mean("clas", ["class", "petalwidth"]) == " (did you mean 'class'?)"
    assert did_you_mean("zzz", ["class"]) == ""
