"""JSON output is strict JSON (no NaN, no Infinity), values near the float64 limit are
clustered as numbers, and ``info`` on a very wide file lists a bounded number of rows."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from ensemblekit import safejson
from ensemblekit.clustering.kmeans import KMeans, fit_scaling
from ensemblekit.report import MAX_SCHEMA_ROWS
from ensemblekit.writers import scores_text, to_json

from ektesting.support import run_cli


def strict_loads(text: str):
    """json.loads that refuses NaN, Infinity and -Infinity (what jq and JSON.parse do)."""
    def refuse(word):
        raise ValueError(f"not JSON: {word}")

    return json.loads(text, parse_constant=refuse)


# ----------------------------------------------------------------------------- safejson.plain
def test_plain_turns_non_finite_floats_into_none_at_any_depth():
    doc = {"a": float("nan"), "b": [1.5, float("inf"), (float("-inf"), 2)],
           "c": np.array([[0.25, np.nan], [np.inf, 3.0]]), "d": np.float32(0.5),
           "e": np.int64(7), "f": np.bool_(True), "g": "NaN", "h": None}
    assert safejson.plain(doc) == {"a": None, "b": [1.5, None, [None, 2]],
                                   "c": [[0.25, None], [None, 3.0]], "d": 0.5, "e": 7,
                                   "f": True, "g": "NaN", "h": None}
    assert type(safejson.plain(np.float64(0.1))) is float


def test_dumps_and_to_json_write_null_and_keep_finite_floats_exact():
    doc = {"x": [0.1, 1e308, -1e308, 5e-324, float("nan"), np.float64(float("inf"))]}
    for text in (safejson.dumps(doc), to_json(doc)):
        assert strict_loads(text) == {"x": [0.1, 1e308, -1e308, 5e-324, None, None]}
    assert to_json({"b": 1, "a": 2}, sort_keys=True) == '{\n "a": 2,\n "b": 1\n}\n'


def test_scores_json_writes_a_nan_score_as_null():
    from ensemblekit.experiment import Score

    score = Score("d", "knn", "{}", 1, 1, "rrse", float("nan"), 0.5)
    (record,) = strict_loads(scores_text([score], [], "json"))
    assert record["value"] is None and record["metric"] == "rrse"


# ----------------------------------------------------------------------------- extreme values
@pytest.fixture
def extreme_csv(tmp_path):
    """20 rows, class a near 0 and class b near 5, with +-1e308 in column x of some rows."""
    rng = np.random.default_rng(0)
    lines = ["x,y,class"]
    for i in range(20):
        c = "a" if i < 10 else "b"
        x = 1e308 if i % 5 == 0 else -1e308 if i % 7 == 0 else rng.normal(0 if c == "a" else 5)
        lines.append(f"{x!r},{rng.normal(0 if c == 'a' else 5)!r},{c}")
    path = tmp_path / "extreme.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def _json_of(*args):
    result = run_cli(*args)
    assert result.exit_code == 0, result.output
    return strict_loads(result.stdout)


def test_every_json_output_on_a_file_with_1e308_is_strict_json(extreme_csv, tmp_path):
    info = _json_of("info", extreme_csv, "--format", "json")
    x = info["attributes"][0]
    assert (x["min"], x["max"]) == (-1e308, 1e308)
    assert x["mean"] is None  # the sum overflows: no mean, and no bare Infinity

    clustered = _json_of("cluster", "kmeans", extreme_csv, "-k", "2", "--format", "json")
    assert sorted(clustered["sizes"]) != [0, 20]
    for proto in clustered["prototypes"]:
        assert all(v is not None and math.isfinite(v) for v in proto.values())

    _json_of("evaluate", "knn", extreme_csv, "--cv", "2", "--repeats", "1", "--format", "json")
    # cart-entropy's float32 trees refuse 1e308 (exit 2); the table of what did run is still
    # strict JSON
    compared = run_cli("compare", "knn", "cart-entropy", "--data", extreme_csv, "--cv", "2", "--repeats",
                       "1", "--format", "json")
    assert compared.exit_code == 2 and "too large for dtype('float32')" in compared.stderr
    strict_loads(compared.stdout)
    model = tmp_path / "knn.ekm"
    assert run_cli("fit", "knn", extreme_csv, "-o", model).exit_code == 0
    _json_of("show", model, "--format", "json")
    _json_of("evaluate", model, extreme_csv, "--format", "json")
    rows = _json_of("predict", model, extreme_csv, "--proba", "--format", "json")
    assert len(rows) == 20
    lines = run_cli("predict", model, extreme_csv, "--format", "jsonl").stdout.splitlines()
    assert [strict_loads(line)["row"] for line in lines] == list(range(1, 21))


def test_kmeans_on_values_near_the_float_limit_finds_the_two_groups():
    X = np.array([[-1e308, 0.0], [-0.9e308, 1.0], [1e308, 0.0], [0.9e308, 1.0]])
    km = KMeans(n_clusters=2, init=np.array([[-1e308, 0.0], [1e308, 0.0]])).fit(X)
    assert km.labels_.tolist() == [0, 0, 1, 1]
    np.testing.assert_allclose(km.cluster_centers_, [[-0.95e308, 0.5], [0.95e308, 0.5]], rtol=1e-15)
    # a common power of two is exact: the same clustering as on data that does not overflow
    small = KMeans(n_clusters=2, init=np.array([[-1e308, 0.0], [1e308, 0.0]]) * 2.0**-700)
    small.fit(X * 2.0**-700)
    assert small.labels_.tolist() == km.labels_.tolist()
    np.testing.assert_array_equal(small.cluster_centers_ * 2.0**700, km.cluster_centers_)
    assert km.predict(X).tolist() == [0, 0, 1, 1]


def test_ordinary_data_is_not_rescaled():
    offset, factor = fit_scaling(np.array([[1e120, -3.0], [2.0, 4.0]]))
    assert offset.tolist() == [0.0, 0.0] and factor.tolist() == [1.0, 1.0]


def test_minmax_and_zscore_refuse_an_attribute_whose_range_overflows():
    X = np.array([[-1e308, 0.0], [1e308, 1.0]])
    for scale in ("minmax", "zscore"):
        with pytest.raises(ValueError, match="feature 0 holds values too large"):
            fit_scaling(X, scale)
    # a large but representable range is scaled as before
    offset, factor = fit_scaling(np.array([[0.0], [1e308]]), "minmax")
    assert offset.tolist() == [0.0] and factor.tolist() == [1e308]


# ----------------------------------------------------------------------------- resume journal
def test_resume_journal_keeps_a_nan_score_as_strict_json(tmp_path):
    data = tmp_path / "constant.csv"
    data.write_text("x,t\n" + "".join(f"{i},5\n" for i in range(1, 21)))
    journal = tmp_path / "j.jsonl"
    args = ("compare", "random-forest", "--data", data, "--cv", "2", "--repeats", "1",
            "-m", "rrse", "-m", "correlation", "--set", "n_estimators=3", "--resume", journal,
            "--format", "json")
    first = run_cli(*args)
    assert first.exit_code == 0, first.output
    records = [strict_loads(line) for line in journal.read_text().splitlines()]
    assert [r["scores"]["rrse"] for r in records[1:]] == ["nan", "nan"]  # 0/0: constant target
    second = run_cli(*args)
    assert second.exit_code == 0, second.output
    assert "0 of 2 units computed now" in second.stderr
    assert second.stdout == first.stdout
    cell = strict_loads(first.stdout)
    assert "NaN" not in first.stdout and cell is not None


# ----------------------------------------------------------------------------- wide files
def test_info_table_on_a_wide_file_lists_the_first_rows_and_says_how_many_more(tmp_path):
    n = MAX_SCHEMA_ROWS + 700
    path = tmp_path / "wide.csv"
    path.write_text(",".join(f"a{i}" for i in range(n)) + ",class\n"
                    + "".join(",".join(str(r + i % 3) for i in range(n)) + f",c{r % 2}\n"
                              for r in range(4)))
    table = run_cli("info", path)
    assert table.exit_code == 0, table.output
    text = table.stdout
    assert f"a{MAX_SCHEMA_ROWS - 1} " in text and f"a{MAX_SCHEMA_ROWS} " not in text
    note = " ".join(text.split())
    assert (f"the first {MAX_SCHEMA_ROWS} of {n + 1:,} attributes; {n + 1 - MAX_SCHEMA_ROWS} more "
            "not shown (--format json lists them all)") in note
    assert "class 'class'" in text  # the class counts still follow
    assert len(_json_of("info", path, "--format", "json")["attributes"]) == n + 1
