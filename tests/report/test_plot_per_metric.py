"""``compare --plot`` writes one figure per metric; heat-map colours are centred on the baseline.

Issue 18: ``cd.png`` becomes ``cd-nmi.png``, ``cd-purity.png``, ...; a failed plot leaves no
file; a difference of 0.003 from the baseline stays far from the darkest colour.
"""

import os
from pathlib import Path

import numpy as np
import pytest

from ensemblekit import api, plots
from ensemblekit.plots import HEATMAP_MIN_SPREAD, PlotError, heatmap_limits

from ektesting.support import SAMPLE_DATA as SAMPLE
from ektesting.support import run_cli as run

pytest.importorskip("matplotlib")

PNG = b"\x89PNG\r\n\x1a\n"
IRIS, WINE = SAMPLE / "iris.arff", SAMPLE / "wine.arff"
# three clusterers over two data sets: the smallest comparison with a critical difference
CD_RUN = ("compare", "kmeans", "iekm", "hac-average", "--data", IRIS, "--data", WINE, "--runs", "2")


# --------------------------------------------------------------------------- file names
@pytest.mark.parametrize("given, metrics, expected", [
    ("cd.png", ["nmi", "purity"], ["cd-nmi.png", "cd-purity.png"]),
    ("out/cd.svg", ["accuracy"], ["out/cd-accuracy.svg"]),  # one metric: still named after it
    ("a.b.PDF", ["f1-macro", "kappa"], ["a.b-f1-macro.PDF", "a.b-kappa.PDF"]),
    ("cd.png", ["nmi", "nmi", "ari"], ["cd-nmi.png", "cd-ari.png"]),  # a repeat is drawn once
])
def test_plot_paths_put_the_metric_before_the_suffix(given, metrics, expected):
    assert api.plot_paths(given, metrics) == [Path(e) for e in expected]


def test_plot_paths_without_metrics_use_the_tasks_defaults():
    # compare's defaults: nmi and purity for clusterers, accuracy for classifiers
    assert [p.name for p in api.plot_paths("cd.png", (), ["kmeans", "iekm"])] == ["cd-nmi.png",
                                                                                "cd-purity.png"]
    assert [p.name for p in api.plot_paths("cd.png", (), ["knn"])] == ["cd-accuracy.png"]
    assert api.plot_paths("cd.png", (), ["nosuch"]) == []


def test_cli_writes_one_diagram_per_metric_and_names_them(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    result = run(*CD_RUN, "-m", "nmi", "-m", "purity", "--plot", out / "cd.png")
    assert result.exit_code == 0, result.stderr
    assert sorted(os.listdir(out)) == ["cd-nmi.png", "cd-purity.png"]
    for name in ("cd-nmi.png", "cd-purity.png"):
        assert (out / name).read_bytes()[:8] == PNG
        assert f"wrote {out / name}\n" in result.stderr
    # the two metrics rank the algorithms differently or not, but each file is its own figure
    # drawn from its own metric: the titles differ, so the bytes do
    assert (out / "cd-nmi.png").read_bytes() != (out / "cd-purity.png").read_bytes()
    assert result.stdout.count("Friedman") >= 2  # one table (and test) per metric on stdout


def test_cli_grid_writes_one_heat_map_file_per_metric(tmp_path):
    result = run("compare", "kmeans", "iekm", "--data", IRIS, "--runs", "2", "--baseline", "kmeans",
                 "--grid", "n_estimators=5,10", "-m", "nmi", "-m", "ari", "--plot", tmp_path / "heat.svg")
    assert result.exit_code == 0, result.stderr
    assert sorted(os.listdir(tmp_path)) == ["heat-ari.svg", "heat-nmi.svg"]
    nmi, ari = ((tmp_path / f"heat-{m}.svg").read_text() for m in ("nmi", "ari"))
    assert nmi.lstrip().startswith("<?xml") and ari.lstrip().startswith("<?xml")
    assert nmi != ari


def test_every_derived_path_is_checked_before_any_work(tmp_path):
    # cd-purity.png is a folder: refused at once, before any data file is read (the second
    # one does not even exist), and nothing is written
    (tmp_path / "cd-purity.png").mkdir()
    scores = tmp_path / "s.csv"
    result = run("compare", "kmeans", "iekm", "hac-average", "--data", IRIS, "--data",
                 tmp_path / "missing.arff", "--runs", "2", "--plot", tmp_path / "cd.png",
                 "--output", scores)
    assert result.exit_code == 2
    assert result.stderr == f"ensemblekit: error: --plot {tmp_path / 'cd-purity.png'}: is a folder\n"
    assert sorted(os.listdir(tmp_path)) == ["cd-purity.png"] and result.stdout == ""


def test_a_failed_write_leaves_none_of_the_files(tmp_path, monkeypatch):
    result = api.compare(["kmeans", "iekm", "hac-average"], [IRIS, WINE], runs=2, seed=1,
                         metrics=["nmi", "purity", "ari"])
    (tmp_path / "cd-nmi.png").write_bytes(b"old")
    real_write = plots._write_bytes_atomic

    def failing_third(path, data):
        if str(path).endswith("-ari.png"):
            raise PlotError(f"cannot write plot file {path}: no space left on device")
        real_write(path, data)

    monkeypatch.setattr(plots, "_write_bytes_atomic", failing_third)
    with pytest.raises(PlotError, match="ari"):
        api.plot_comparison(result, tmp_path / "cd.png")
    # the two written before the failure are removed again: no mix of new and old figures,
    # and no temporary file
    assert os.listdir(tmp_path) == []


def test_a_figure_that_cannot_be_drawn_writes_nothing(tmp_path):
    # one data set: Friedman/Nemenyi needs two, so no metric has a critical difference;
    # plot_comparison refuses before touching any file
    result = api.compare(["kmeans", "iekm", "hac-average"], [IRIS], runs=2, seed=1)
    with pytest.raises(api.UsageError, match="critical-difference diagram"):
        api.plot_comparison(result, tmp_path / "cd.png")
    assert os.listdir(tmp_path) == []


def test_plot_comparison_returns_the_files_in_metric_order(tmp_path):
    result = api.compare(["kmeans", "iekm", "hac-average"], [IRIS, WINE], runs=2, seed=1,
                         metrics=["purity", "nmi"])
    written = api.plot_comparison(result, tmp_path / "cd.pdf")
    assert written == api.plot_paths(tmp_path / "cd.pdf", ["purity", "nmi"])
    assert [p.name for p in written] == ["cd-purity.pdf", "cd-nmi.pdf"]
    assert all(p.read_bytes().startswith(b"%PDF") for p in written)


# --------------------------------------------------------------------------- colour limits
def _colour_fraction(value, baseline, values):
    """Where ``value`` falls on the colour scale: 0.5 = neutral, 0 or 1 = darkest."""
    lo, hi = heatmap_limits(values, baseline)
    return (value - lo) / (hi - lo)


def test_limits_are_symmetric_about_the_baseline():
    lo, hi = heatmap_limits([0.80, 0.93, np.nan], 0.9)
    assert (lo + hi) / 2 == pytest.approx(0.9)
    assert hi - 0.9 == pytest.approx(0.1)  # the largest difference, 0.8 - 0.9, decides


def test_tiny_differences_stay_near_the_neutral_colour():
    # every grid point within 0.003 of the baseline: without a floor the 0.003 cell would be
    # the darkest colour; with the 0.01 floor it is 30 % of the way from neutral to darkest
    values = [0.903, 0.899, 0.9015]
    fraction = _colour_fraction(0.903, 0.9, values)
    assert fraction == pytest.approx(0.5 + 0.003 / (2 * HEATMAP_MIN_SPREAD))
    assert 0.3 <= fraction <= 0.7
    assert 0.3 <= _colour_fraction(0.897, 0.9, [0.897, 0.9]) <= 0.7
    assert heatmap_limits([0.9, 0.9], 0.9) == pytest.approx((0.89, 0.91))  # all equal: pale


@pytest.mark.parametrize("largest", [0.003, 0.005, 0.02, 0.2])
def test_a_difference_of_0_003_never_reaches_the_darkest_colour(largest):
    baseline = 0.75
    values = [baseline + 0.003, baseline - largest]
    fraction = _colour_fraction(baseline + 0.003, baseline, values)
    assert 0.5 < fraction <= 0.65  # blue side, at most 30 % of the way to the darkest blue
    assert _colour_fraction(baseline - largest, baseline, values) <= 0.35


def test_floor_follows_the_scale_of_large_scores():
    # an RMSE of 50: the floor is 1 % of it (0.5), so a difference of 0.3 is not the darkest
    lo, hi = heatmap_limits([50.3], 50.0)
    assert (lo, hi) == pytest.approx((49.5, 50.5))


def test_limits_reject_a_non_finite_baseline():
    with pytest.raises(ValueError, match="baseline"):
        heatmap_limits([0.5], float("nan"))


def test_drawn_heat_map_uses_the_limits_and_the_direction_of_better():
    import matplotlib

    values = np.array([[0.902, 0.899]])
    for better_up in (True, False):
        panel = plots._check_panel(0, {"dataset": "iris", "x_name": "n", "x_values": [1, 2],
                                       "values": values, "baseline": 0.9, "metric": "m",
                                       "greater_is_better": better_up})
        image = plots._draw_heatmaps(matplotlib, [panel], None).axes[0].images[0]
        assert (image.norm.vmin, image.norm.vmax) == pytest.approx(heatmap_limits(values, 0.9))
        assert image.norm.vcenter == pytest.approx(0.9)
        red, _, blue, _ = image.cmap(image.norm(0.9 + 0.003 if better_up else 0.9 - 0.003))
        assert blue > red  # a better score is blue whichever way "better" points
        # and pale: every channel well above the darkest blue's red channel (about 0.02)
        assert red > 0.5
