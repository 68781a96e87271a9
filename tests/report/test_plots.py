import math
import os
import sys

import numpy as np
import pytest

from ensemblekit import plots
from ensemblekit.plots import (
    PlotError,
    cd_groups,
    plot_critical_difference,
    plot_sensitivity_heatmaps,
)

pytest.importorskip("matplotlib")

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# Demšar (2006), Sect. 3.2.4: four C4.5 variants over 14 data sets.
DEMSAR_NAMES = ["C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf"]
DEMSAR_RANKS = [3.143, 2.000, 2.893, 1.964]


def _panels():
    rng = np.random.default_rng(0)
    panels = []
    for name, base in [("iris", 0.93), ("wine", 0.95)]:
        values = base + rng.normal(0, 0.02, size=(3, 4))
        panels.append(
            {
                "dataset": name,
                "x_name": "n_estimators",
                "x_values": [10, 20, 50, 100],
                "y_name": "max_samples",
                "y_values": [0.1, 0.5, 0.9],
                "values": values,
                "baseline": base,
                "metric": "accuracy",
            }
        )
    panels[0]["values"][1, 2] = np.nan  # a failed grid point
    return panels


# --------------------------------------------------------------------------- cd_groups
@pytest.mark.parametrize(
    "ranks, cd, expected",
    [
        # sorted 1.0 1.5 3.0 3.2: 1.5-1.0 < .6, 3.0-1.5 >= .6, 3.2-3.0 < .6
        ([1.0, 1.5, 3.0, 3.2], 0.6, [(0, 1), (2, 3)]),
        # from 1.0: 3.0-1.0 = 2.0 is not < 2.0 -> (0,1); from 1.5: 3.2-1.5 = 1.7 < 2 -> (1,2,3)
        ([1.0, 1.5, 3.0, 3.2], 2.0, [(0, 1), (1, 2, 3)]),
        # 3.2-1.0 = 2.2 < 2.5: everything in one group, the later groups are inside it
        ([1.0, 1.5, 3.0, 3.2], 2.5, [(0, 1, 2, 3)]),
        # nothing within 0.4 of anything else -> only singletons, all dropped
        ([1.0, 1.5, 3.0, 3.5], 0.4, []),
        # input order is not rank order: indices refer to the input, listed best first
        ([3.2, 1.0, 3.0, 1.5], 0.6, [(1, 3), (2, 0)]),
        # ties: the two rank-2 algorithms form a group, 1.0 is 1 away
        ([2.0, 2.0, 1.0], 0.5, [(0, 1)]),
        # the tied pair belongs to both groups
        ([1.0, 2.0, 2.0, 3.0], 1.0, [(1, 2)]),
        ([1.0, 2.0, 2.0, 3.0], 1.5, [(0, 1, 2), (1, 2, 3)]),
        # cd = 0: the test is strict, so even tied algorithms are not grouped
        ([2.0, 2.0, 1.0], 0.0, []),
        # a difference of exactly CD is significant
        ([1.0, 2.0], 1.0, []),
        ([1.0, 2.0], 1.0001, [(0, 1)]),
        ([1.0], 3.0, []),
        ([], 3.0, []),
    ],
)
def test_cd_groups_by_hand(ranks, cd, expected):
    assert cd_groups(ranks, cd) == expected


def test_cd_groups_demsar_example():
    # q_0.05 = 2.569, q_0.10 = 2.291 for k = 4; N = 14 data sets.
    se = math.sqrt(4 * 5 / (6 * 14))
    # CD 1.25: the spread 3.143 - 1.964 = 1.179 is below it -> one group of all four.
    assert cd_groups(DEMSAR_RANKS, 2.569 * se) == [(3, 1, 2, 0)]
    # CD 1.12: C4.5+m+cf vs C4.5 (1.179) is significant, C4.5+m vs C4.5 (1.143) too;
    # the groups are {C4.5+m+cf, C4.5+m, C4.5+cf} and {C4.5+cf, C4.5}.
    assert cd_groups(DEMSAR_RANKS, 2.291 * se) == [(3, 1, 2), (2, 0)]


@pytest.mark.parametrize("cd, message", [(-0.1, "finite and >= 0, got -0.1"),
                                         (float("nan"), "finite and >= 0, got nan"),
                                         (float("inf"), "finite and >= 0, got inf"),
                                         ("x", "cd must be a number, got 'x'")])
def test_cd_groups_rejects_bad_cd(cd, message):
    with pytest.raises(ValueError, match=message):
        cd_groups([1.0, 2.0], cd)


@pytest.mark.parametrize("ranks, message", [([[1.0, 2.0]], r"1-D, got shape \(1, 2\)"),
                                            ([1.0, float("nan")], "avg_ranks must be finite")])
def test_cd_groups_rejects_bad_ranks(ranks, message):
    with pytest.raises(ValueError, match=message):
        cd_groups(ranks, 1.0)


# --------------------------------------------------------------------------- files
@pytest.mark.parametrize("suffix, magic", [(".png", PNG_SIGNATURE), (".svg", b"<?xml"), (".pdf", b"%PDF")])
def test_cd_diagram_written_in_format_of_suffix(tmp_path, suffix, magic):
    path = tmp_path / f"cd{suffix}"
    plot_critical_difference(DEMSAR_NAMES, DEMSAR_RANKS, 1.25, path, title="Demšar example")
    data = path.read_bytes()
    assert data.startswith(magic)
    if suffix == ".svg":
        assert b"<svg" in data
    assert os.listdir(tmp_path) == [path.name]  # no temporary file left


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_cd_diagram_is_byte_identical(tmp_path, suffix):
    first, second = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
    plot_critical_difference(DEMSAR_NAMES, DEMSAR_RANKS, 1.25, first, title="t")
    plot_critical_difference(DEMSAR_NAMES, DEMSAR_RANKS, 1.25, second, title="t")
    assert first.read_bytes() == second.read_bytes()


@pytest.mark.parametrize("suffix", [".png", pytest.param(".svg", marks=pytest.mark.slow)])
def test_heatmaps_written_and_byte_identical(tmp_path, suffix):
    first, second = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
    plot_sensitivity_heatmaps(_panels(), first, title="iebn vs k2")
    plot_sensitivity_heatmaps(_panels(), second, title="iebn vs k2")
    assert first.read_bytes() == second.read_bytes()
    if suffix == ".png":
        assert first.read_bytes().startswith(PNG_SIGNATURE)


def test_png_has_no_software_or_date_stamp(tmp_path):
    path = tmp_path / "cd.png"
    plot_critical_difference(DEMSAR_NAMES, DEMSAR_RANKS, 1.25, path)
    data = path.read_bytes()
    assert b"matplotlib" not in data.lower()
    # no text or time chunk at all (Software, Creation Time, tIME): only image chunks
    chunks, at = [], len(PNG_SIGNATURE)
    while at < len(data):
        length = int.from_bytes(data[at:at + 4], "big")
        chunks.append(data[at + 4:at + 8].decode("ascii"))
        at += 12 + length
    assert chunks[0] == "IHDR" and chunks[-1] == "IEND"
    assert set(chunks) <= {"IHDR", "pHYs", "IDAT", "IEND"}, chunks


def test_plotting_leaves_global_rcparams_alone(tmp_path):
    import matplotlib

    before = dict(matplotlib.rcParams)
    plot_critical_difference(DEMSAR_NAMES, DEMSAR_RANKS, 1.25, tmp_path / "cd.svg")
    plot_sensitivity_heatmaps(_panels(), tmp_path / "h.svg")
    assert dict(matplotlib.rcParams) == before


def test_existing_file_is_replaced(tmp_path):
    path = tmp_path / "cd.png"
    path.write_bytes(b"old")
    plot_critical_difference(DEMSAR_NAMES, DEMSAR_RANKS, 1.25, path)
    assert path.read_bytes().startswith(PNG_SIGNATURE)


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize("name", ["cd.jpg", "cd", "cd.png.txt"])
def test_bad_suffix_names_the_allowed_ones(tmp_path, name):
    with pytest.raises(PlotError, match=r"\.png, \.svg, \.pdf"):
        plot_critical_difference(DEMSAR_NAMES, DEMSAR_RANKS, 1.25, tmp_path / name)
    with pytest.raises(PlotError, match=r"\.png"):
        plot_sensitivity_heatmaps(_panels(), tmp_path / name)
    assert os.listdir(tmp_path) == []


def test_suffix_is_case_insensitive(tmp_path):
    path = tmp_path / "CD.PNG"
    plot_critical_difference(DEMSAR_NAMES, DEMSAR_RANKS, 1.25, path)
    assert path.read_bytes().startswith(PNG_SIGNATURE)


@pytest.mark.parametrize(
    "names, ranks, cd, kwargs, message",
    [
        (["a", "b", "c"], [1.0, 2.0], 1.0, {}, "same length, got 3 and 2"),
        (["a"], [1.0], 1.0, {}, "at least 2 algorithms, got 1"),
        (["a", "b"], [0.5, 2.0], 1.0, {}, r"must lie in \[1, 2\], got 0.5..2"),
        (["a", "b"], [1.0, 2.5], 1.0, {}, r"must lie in \[1, 2\], got 1..2.5"),
        (["a", "b"], [1.0, float("nan")], 1.0, {}, "avg_ranks must be finite"),
        (["a", "b"], [1.0, 2.0], -1.0, {}, "cd must be finite and >= 0, got -1.0"),
        (["a", "b"], [1.0, 2.0], float("nan"), {}, "cd must be finite and >= 0, got nan"),
        (["a", "b"], [1.0, 2.0], 1.0, {"alpha": 0.0}, r"alpha must be in \(0, 1\), got 0.0"),
    ],
)
def test_cd_diagram_rejects_bad_input(tmp_path, names, ranks, cd, kwargs, message):
    with pytest.raises(ValueError, match=message):
        plot_critical_difference(names, ranks, cd, tmp_path / "cd.png", **kwargs)
    assert os.listdir(tmp_path) == []


def _bad_panels():
    base = _panels()[1]
    yield [], "empty"
    yield [{k: v for k, v in base.items() if k != "values"}], "values"
    yield [dict(base, values=np.zeros((4, 3)))], r"shape \(4, 3\)"
    yield [dict(base, x_values=[])], "x_values"
    yield [dict(base, y_values=None)], "y_values"
    yield [dict(base, baseline=float("inf"))], "baseline"
    yield [dict(base, values=np.full((3, 4), np.inf))], "finite"
    yield ["not a mapping"], "mapping"


@pytest.mark.parametrize("panels, message", list(_bad_panels()))
def test_heatmaps_reject_bad_input(tmp_path, panels, message):
    with pytest.raises(ValueError, match=message):
        plot_sensitivity_heatmaps(panels, tmp_path / "h.png")
    assert os.listdir(tmp_path) == []


def test_missing_matplotlib_raises_plot_error_with_install_hint(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` fail
    for call in (
        lambda p: plot_critical_difference(DEMSAR_NAMES, DEMSAR_RANKS, 1.25, p),
        lambda p: plot_sensitivity_heatmaps(_panels(), p),
    ):
        with pytest.raises(PlotError) as info:
            call(tmp_path / "out.png")
        message = str(info.value)
        assert "pip install 'ensemblekit[plot]'" in message
        assert "\n" not in message
    assert isinstance(info.value, ValueError)
    assert os.listdir(tmp_path) == []


def test_missing_directory_raises_and_leaves_nothing(tmp_path):
    path = tmp_path / "missing" / "cd.png"
    with pytest.raises(PlotError, match="cannot write plot file"):
        plot_critical_difference(DEMSAR_NAMES, DEMSAR_RANKS, 1.25, path)
    assert os.listdir(tmp_path) == []


def test_failed_rename_leaves_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "cd.png"
    path.write_bytes(b"old")

    def refuse(src, dst):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(plots.os, "replace", refuse)
    with pytest.raises(PlotError, match="Permission denied"):
        plot_critical_difference(DEMSAR_NAMES, DEMSAR_RANKS, 1.25, path)
    assert path.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["cd.png"]


# --------------------------------------------------------------------------- content
def _texts(fig):
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def test_cd_diagram_content():
    import matplotlib

    ranks = np.asarray(DEMSAR_RANKS)
    fig = plots._draw_cd(matplotlib, DEMSAR_NAMES, ranks, 1.25, "title", 0.05)
    texts = _texts(fig)
    assert "CD = 1.25 (α = 0.05)" in texts
    assert "C4.5+m+cf (1.96)" in texts and "C4.5 (3.14)" in texts
    assert [t for t in texts if t.isdigit()] == ["1", "2", "3", "4"]  # integer rank ticks
    thick = [line for line in fig.axes[0].lines if line.get_linewidth() == 3.0]
    assert len(thick) == len(cd_groups(ranks, 1.25)) == 1


def test_cd_diagram_better_half_on_the_left():
    import matplotlib

    fig = plots._draw_cd(matplotlib, DEMSAR_NAMES, np.asarray(DEMSAR_RANKS), 1.25, None, 0.05)
    sides = {t.get_text().split(" (")[0]: t.get_horizontalalignment() for t in fig.axes[0].texts}
    assert sides["C4.5+m+cf"] == sides["C4.5+m"] == "right"
    assert sides["C4.5+cf"] == sides["C4.5"] == "left"


def test_heatmap_annotates_small_grids_only():
    import matplotlib

    small = plots._check_panel(0, _panels()[0])
    big = dict(small, x_values=list(range(13)), y_values=list(range(13)), values=np.full((13, 13), 0.9))
    fig = plots._draw_heatmaps(matplotlib, [small, big], None)
    heat_axes = [ax for ax in fig.axes if ax.images]
    small_texts = [t.get_text() for t in heat_axes[0].texts]
    assert len(small_texts) == 12
    assert "n/a" in small_texts
    assert f"{_panels()[0]['values'][0, 0]:.3f}" in small_texts
    assert len(heat_axes[1].texts) == 0


def test_heatmap_colours_diverge_at_baseline():
    import matplotlib

    panel = plots._check_panel(0, _panels()[1])
    fig = plots._draw_heatmaps(matplotlib, [panel], None)
    image = fig.axes[0].images[0]
    assert image.norm.vcenter == pytest.approx(panel["baseline"])
    assert image.cmap.name.startswith("RdBu")
    better = image.cmap(image.norm(panel["baseline"] + 0.01))
    worse = image.cmap(image.norm(panel["baseline"] - 0.01))
    assert better[2] > better[0] and worse[0] > worse[2]  # blue above, red below


def test_heatmap_single_parameter_and_no_baseline(tmp_path):
    import matplotlib

    panel = {
        "dataset": "iris",
        "x_name": "n_clusters",
        "x_values": [2, 3, 4, 5, 6],
        "y_name": None,
        "y_values": None,
        "values": [0.5, 0.7, np.nan, 0.6, 0.55],
        "baseline": None,
        "metric": "ARI",
    }
    checked = plots._check_panel(0, panel)
    assert checked["values"].shape == (1, 5)
    fig = plots._draw_heatmaps(matplotlib, [checked], None)
    ax = fig.axes[0]
    assert list(ax.get_yticks()) == [] and ax.get_ylabel() == ""
    assert ax.images[0].cmap.name.startswith("viridis")
    plot_sensitivity_heatmaps([panel], tmp_path / "one.svg")
    assert (tmp_path / "one.svg").read_bytes().startswith(b"<?xml")
