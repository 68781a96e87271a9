"""Figures for ``ensemblekit compare --plot``: critical-difference diagrams and heat maps.

matplotlib is an optional dependency (the ``[plot]`` extra). It is imported only
inside the drawing functions, and only its object API is used
(:class:`matplotlib.figure.Figure` with the Agg canvas), so no global pyplot
state is touched and no display is needed. Every figure is drawn under
matplotlib's default style, whatever the user's ``matplotlibrc`` says, and
saved without dates or version strings, so the same inputs give the same file
byte for byte. Files are written through a temporary file in the target folder
and a rename: a failed call leaves no partial file. ``render_*`` functions
return a figure's bytes without touching a file; :func:`write_plots` then
writes several figures all or none (``compare --plot`` draws one per metric).
"""

from __future__ import annotations

import contextlib
import io
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ensemblekit.errors import InputError

PLOT_SUFFIXES = (".png", ".svg", ".pdf")

_INSTALL_HINT = "plotting needs matplotlib: pip install 'ensemblekit[plot]'"

# Metadata that would otherwise carry a date or the matplotlib version.
_METADATA = {
    "png": {"Software": None},
    "svg": {"Date": None, "Creator": None},
    "pdf": {"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None},
}
# Fixed salt for the ids matplotlib puts in SVG files (otherwise random per run).
_RC = {"svg.hashsalt": "ensemblekit", "svg.fonttype": "path", "pdf.fonttype": 42}
_DPI = 150
#: Smallest half-range of a heat map's colour scale, as a fraction of the score's scale
#: (see :func:`heatmap_limits`).
HEATMAP_MIN_SPREAD = 0.01


class PlotError(InputError):
    """A figure cannot be drawn or written: matplotlib missing, bad suffix, bad path."""


# --------------------------------------------------------------------------- #
# Critical-difference diagram (Demšar 2006)
# --------------------------------------------------------------------------- #
def cd_groups(avg_ranks, cd) -> list[tuple[int, ...]]:
    """Groups of algorithms whose average ranks differ by less than the critical difference.

    These are the thick lines of a critical-difference diagram (Demšar 2006,
    Sect. 3.2.2 and Fig. 1–2): within a group, no pair of algorithms is
    significantly different by the Nemenyi test. Algorithms are sorted by
    average rank (ties keep input order); for each position ``i`` the group is
    ``i..j`` with ``j`` the last position where ``rank[j] - rank[i] < cd``.
    Groups contained in another group and groups of one algorithm are dropped.

    Parameters
    ----------
    avg_ranks : array-like of shape (n_algorithms,)
        Average rank of each algorithm (1 = best); finite.
    cd : float
        Critical difference, ``>= 0``. The test is strict (a pair differing by
        exactly ``cd`` is significantly different), so ``cd = 0`` gives no groups
        even for tied algorithms.

    Returns
    -------
    list of tuple of int
        Each tuple holds indices into ``avg_ranks``, ordered by increasing
        average rank (ties by index); tuples are ordered by their best member.
        Every tuple has at least two members.

    Raises
    ------
    ValueError
        If ``avg_ranks`` is not 1-D or holds non-finite values, or ``cd`` is
        negative or not finite.

    References
    ----------
    J. Demšar, "Statistical comparisons of classifiers over multiple data
    sets", JMLR 7 (2006) 1–30, Sect. 3.2.2.

    Examples
    --------
    >>> cd_groups([1.0, 1.5, 3.0, 3.2], 0.6)
    [(0, 1), (2, 3)]
    >>> cd_groups([1.0, 1.5, 3.0, 3.2], 2.0)
    [(0, 1), (1, 2, 3)]
    """
    ranks = np.asarray(avg_ranks, dtype=float)
    if ranks.ndim != 1:
        raise InputError(f"avg_ranks must be 1-D, got shape {ranks.shape}")
    if not np.isfinite(ranks).all():
        raise InputError("avg_ranks must be finite")
    cd = _check_cd(cd)
    order = np.argsort(ranks, kind="stable")
    sorted_ranks = ranks[order]
    groups: list[tuple[int, ...]] = []
    last_end = -1
    for i in range(len(order)):
        j = i
        while j + 1 < len(order) and sorted_ranks[j + 1] - sorted_ranks[i] < cd:
            j += 1
        # Ends never decrease with i, so a group is contained in an earlier one
        # exactly when it does not reach past the previous end.
        if j > last_end and j > i:
            groups.append(tuple(int(k) for k in order[i : j + 1]))
        last_end = max(last_end, j)
    return groups


def plot_critical_difference(names, avg_ranks, cd, path, *, title=None, alpha=0.05) -> None:
    """Draw a critical-difference diagram and write it to ``path``.

    The layout follows Demšar (2006, Fig. 1–2): a rank axis from 1 (best, at
    the left) to ``k``, each algorithm a dot at its average rank with an elbow
    line to its label (the better half on the left, the rest on the right), a
    bar of length ``cd`` above the axis, and thick lines joining the groups of
    algorithms that are not significantly different (:func:`cd_groups`).
    Labels read ``name (average rank)``. A CD longer than the axis (few data
    sets) is cut at the axis end and drawn as an arrow; its label gives the
    value.

    Parameters
    ----------
    names : sequence of str of length k
        Algorithm names, k >= 2.
    avg_ranks : array-like of shape (k,)
        Average rank of each algorithm over the data sets, each finite and in
        ``[1, k]`` (1 = best; see :func:`ensemblekit.stats.average_ranks`).
    cd : float
        Nemenyi critical difference, ``>= 0``, in rank units.
    path : str or os.PathLike
        Output file; the suffix (``.png``, ``.svg`` or ``.pdf``) picks the
        format. An existing file is replaced.
    title : str, optional
        Title drawn above the diagram.
    alpha : float, default=0.05
        Significance level the CD was computed at, in (0, 1); shown next to the
        CD bar.

    Raises
    ------
    PlotError
        If the suffix is not one of ``.png``, ``.svg``, ``.pdf``, matplotlib is
        not installed, or the file cannot be written (nothing is left behind).
    ValueError
        If ``names`` and ``avg_ranks`` differ in length or have fewer than two
        entries, a rank is not finite or outside ``[1, k]``, ``cd`` is negative,
        or ``alpha`` is not in (0, 1).

    References
    ----------
    J. Demšar, "Statistical comparisons of classifiers over multiple data
    sets", JMLR 7 (2006) 1–30, Sect. 3.2.2, Fig. 1 and 2.
    """
    fmt = plot_format(path)
    _write_bytes_atomic(path, render_critical_difference(names, avg_ranks, cd, fmt, title=title, alpha=alpha))


def render_critical_difference(names, avg_ranks, cd, fmt, *, title=None, alpha=0.05) -> bytes:
    """The bytes of the diagram :func:`plot_critical_difference` writes; no file is touched.

    ``fmt`` is ``"png"``, ``"svg"`` or ``"pdf"`` (see :func:`plot_format`); the
    other parameters, and the errors raised, are those of
    :func:`plot_critical_difference`.
    """
    fmt = _check_format(fmt)
    names = [str(n) for n in names]
    ranks = np.asarray(avg_ranks, dtype=float)
    k = len(names)
    if ranks.ndim != 1 or len(ranks) != k:
        raise InputError(f"names and avg_ranks must have the same length, got {k} and {ranks.size}")
    if k < 2:
        raise InputError(f"a critical-difference diagram needs at least 2 algorithms, got {k}")
    if not np.isfinite(ranks).all():
        raise InputError("avg_ranks must be finite")
    tol = 1e-9
    if ranks.min() < 1 - tol or ranks.max() > k + tol:
        raise InputError(f"average ranks must lie in [1, {k}], got {ranks.min():g}..{ranks.max():g}")
    cd = _check_cd(cd)
    alpha = float(alpha)
    if not 0 < alpha < 1:
        raise InputError(f"alpha must be in (0, 1), got {alpha}")
    mpl = _matplotlib()
    with _style(mpl):
        return _figure_bytes(_draw_cd(mpl, names, ranks, cd, title, alpha), fmt)


def render_pairwise_scatter(x_name, y_name, x, y, labels, fmt, *, title=None,
                            greater_is_better=True) -> bytes:
    """The figure of two algorithms over data sets: one point per data set at (score of
    ``x_name``, score of ``y_name``), with the diagonal of equal scores.

    Demšar (JMLR 7, 2006, Sect. 3.1) compares two classifiers over data sets with the
    Wilcoxon signed-rank test, not with a critical-difference diagram; this plot shows
    what that test judges: how far each data set lies from the diagonal, and on which side.

    Parameters
    ----------
    x_name, y_name : str
        The two algorithms (axes).
    x, y : array-like of shape (n_datasets,)
        Their mean scores per data set; finite.
    labels : sequence of str, length n_datasets
        Data set names, written next to their points.
    fmt : {"png", "svg", "pdf"}
    title : str, optional
    greater_is_better : bool
        Says in a corner which side of the diagonal is better for ``y_name``.

    Returns
    -------
    bytes

    Raises
    ------
    ValueError
        Lengths differ, no data set, or a score is not finite.
    PlotError
        matplotlib is missing.
    """
    fmt = _check_format(fmt)
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    labels = [str(v) for v in labels]
    if x.ndim != 1 or x.shape != y.shape or len(labels) != x.size or x.size == 0:
        raise InputError("x, y and labels must have one equal, non-zero length")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise InputError("the scores must be finite")
    mpl = _matplotlib()
    with _style(mpl):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=(5.0, 5.0), dpi=_DPI, layout="constrained")
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        low, high = float(min(x.min(), y.min())), float(max(x.max(), y.max()))
        pad = max(0.05 * (high - low), 1e-3)
        low, high = low - pad, high + pad
        ax.plot([low, high], [low, high], color="0.6", linewidth=1, zorder=1)
        ax.scatter(x, y, color="tab:blue", zorder=2)
        for xi, yi, text in zip(x, y, labels):
            ax.annotate(text, (xi, yi), xytext=(4, 4), textcoords="offset points", fontsize=8)
        ax.set_xlim(low, high)
        ax.set_ylim(low, high)
        ax.set_aspect("equal")
        ax.set_xlabel(x_name)
        ax.set_ylabel(y_name)
        side = "above" if greater_is_better else "below"
        ax.text(0.02, 0.98, f"{y_name} better {side} the diagonal", transform=ax.transAxes,
                va="top", fontsize=8, color="0.3")
        if title:
            ax.set_title(title, fontsize=10)
        return _figure_bytes(fig, fmt)


def _draw_cd(mpl, names, ranks, cd, title, alpha):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.font_manager import FontProperties

    k = len(names)
    order = np.argsort(ranks, kind="stable")
    n_left = (k + 1) // 2
    labels = [f"{names[i]} ({ranks[i]:.2f})" for i in range(k)]
    cd_label = f"CD = {cd:.2f} (α = {alpha:g})"

    # All geometry is in inches; the single axes maps 1 data unit to 1 inch,
    # with y growing downwards.
    measure_fig = Figure(dpi=72)
    renderer = FigureCanvasAgg(measure_fig).get_renderer()

    def width(text, size):
        w, _, _ = renderer.get_text_width_height_descent(text, FontProperties(size=size), ismath=False)
        return w / 72.0

    name_size, tick_size, cd_size, title_size = 10, 9, 9, 11
    margin, gap, reach = 0.15, 0.06, 0.3
    left_w = max(width(labels[i], name_size) for i in order[:n_left])
    right_w = max(width(labels[i], name_size) for i in order[n_left:])
    axis_w = max(3.6, 0.6 * (k - 1))
    unit = axis_w / (k - 1)
    x1 = max(margin + left_w + gap + reach, margin + width(cd_label, cd_size) / 2 + 0.05)

    def x_of(rank):
        return x1 + (rank - 1.0) * unit

    xk = x_of(k)
    fig_w = xk + reach + gap + right_w + margin
    # A CD longer than the axis (few data sets) is cut at the axis end and drawn
    # as an arrow: every pair is then not significantly different.
    cd_cut = 1 + cd > k
    cd_end = xk if cd_cut else x_of(1 + cd)
    fig_w = max(fig_w, (cd_end + x1) / 2 + width(cd_label, cd_size) / 2 + margin)
    if title:
        fig_w = max(fig_w, width(title, title_size) + 2 * margin)

    # Vertical layout, top to bottom.
    y = margin
    y_title = y
    if title:
        y += 0.3
    y_cd_text = y
    y_cd_bar = y + 0.24
    y_axis = y_cd_bar + 0.45
    groups = cd_groups(ranks, cd)
    group_rows = _pack_rows([(ranks[g[0]], ranks[g[-1]]) for g in groups], min_gap=0.2 / unit)
    n_group_rows = (max(group_rows) + 1) if groups else 0
    y_groups = y_axis + 0.2
    row_gap = 0.11
    y_elbow = y_groups + row_gap * n_group_rows + 0.12
    elbow_gap = 0.25
    n_rows = max(n_left, k - n_left)
    fig_h = y_elbow + elbow_gap * (n_rows - 1) + 0.15 + margin

    fig = Figure(figsize=(fig_w, fig_h), dpi=_DPI)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, fig_w)
    ax.set_ylim(fig_h, 0)
    ax.set_axis_off()
    line = {"color": "black", "linewidth": 1.0, "solid_capstyle": "butt"}

    if title:
        ax.text(fig_w / 2, y_title, title, ha="center", va="top", fontsize=title_size, parse_math=False)

    # CD bar with end ticks, label centred above it.
    ax.plot([x1, cd_end], [y_cd_bar, y_cd_bar], **line)
    for x in (x1,) if cd_cut else (x1, cd_end):
        ax.plot([x, x], [y_cd_bar - 0.05, y_cd_bar + 0.05], **line)
    if cd_cut:
        ax.plot([cd_end - 0.1, cd_end, cd_end - 0.1], [y_cd_bar - 0.05, y_cd_bar, y_cd_bar + 0.05], **line)
    ax.text((x1 + cd_end) / 2, y_cd_text, cd_label, ha="center", va="top", fontsize=cd_size, parse_math=False)

    # Rank axis: integer ticks (labelled) and half ticks, pointing up.
    ax.plot([x1, xk], [y_axis, y_axis], **line)
    for r in range(1, k + 1):
        ax.plot([x_of(r), x_of(r)], [y_axis, y_axis - 0.1], **line)
        ax.text(x_of(r), y_axis - 0.13, str(r), ha="center", va="bottom", fontsize=tick_size)
        if r < k:
            ax.plot([x_of(r + 0.5)] * 2, [y_axis, y_axis - 0.05], **line)

    # Elbow lines: better half to the left (best on the top row), rest to the
    # right (worst on the top row), so no line crosses another.
    for pos, i in enumerate(order):
        x = x_of(ranks[i])
        if pos < n_left:
            row, end, ha, text_x = pos, x1 - reach, "right", x1 - reach - gap
        else:
            row, end, ha, text_x = k - 1 - pos, xk + reach, "left", xk + reach + gap
        y_row = y_elbow + elbow_gap * row
        ax.plot([x, x, end], [y_axis, y_row, y_row], **line)
        ax.text(text_x, y_row, labels[i], ha=ha, va="center", fontsize=name_size, parse_math=False)
    ax.plot(
        [x_of(r) for r in ranks], [y_axis] * k, linestyle="none", marker="o", markersize=4, color="black",
        zorder=3,
    )

    # Groups that are not significantly different.
    for g, row in zip(groups, group_rows):
        y_g = y_groups + row_gap * row
        ax.plot(
            [x_of(ranks[g[0]]) - 0.06, x_of(ranks[g[-1]]) + 0.06],
            [y_g, y_g],
            color="black",
            linewidth=3.0,
            solid_capstyle="round",
            zorder=4,
        )
    return fig


def _pack_rows(intervals, min_gap):
    """Greedy row for each interval (sorted by start) so intervals in one row keep ``min_gap`` apart."""
    row_ends: list[float] = []
    rows = []
    for lo, hi in intervals:
        for r, end in enumerate(row_ends):
            if lo - end > min_gap:
                row_ends[r] = hi
                rows.append(r)
                break
        else:
            row_ends.append(hi)
            rows.append(len(row_ends) - 1)
    return rows


def _check_cd(cd) -> float:
    try:
        value = float(cd)
    except (TypeError, ValueError):
        raise InputError(f"cd must be a number, got {cd!r}") from None
    if not math.isfinite(value) or value < 0:
        raise InputError(f"cd must be finite and >= 0, got {cd!r}")
    return value


# --------------------------------------------------------------------------- #
# Sensitivity heat maps (Abbasian et al. 2013, Tables 1–3)
# --------------------------------------------------------------------------- #
def plot_sensitivity_heatmaps(panels: Sequence[Mapping], path, *, title=None) -> None:
    """Draw one heat map per data set of a metric over a parameter grid; write to ``path``.

    This is the picture behind the sensitivity analysis of Abbasian et al.
    (2013, Tables 1–3): for every grid point of one or two parameters (e.g.
    ensemble size ``n_estimators`` × sample size ``max_samples``) the mean
    score, compared with the baseline algorithm's score. Panels are laid out
    in a grid of up to 4 columns, each with its own colour bar.

    With a baseline, colours diverge from it (white = baseline score, blue =
    better, red = worse; the colour scale is symmetric about the baseline,
    which is also marked on the colour bar, and spans at least ±0.01, so tiny
    differences stay pale: see :func:`heatmap_limits`). Without one, the viridis map
    spans the panel's scores. Each cell is annotated with its value (3
    decimals) when the grid has at most 12 × 12 cells; failed grid points
    (NaN) are grey and read ``n/a``.

    Parameters
    ----------
    panels : sequence of mapping
        One mapping per data set, with keys

        - ``"dataset"`` : str, the panel title.
        - ``"x_name"`` : str, the parameter along the horizontal axis.
        - ``"x_values"`` : sequence of length nx >= 1, its grid values (tick labels).
        - ``"y_name"`` : str or None, the second parameter (None for a
          one-parameter grid, drawn as a single row with the y axis hidden).
        - ``"y_values"`` : sequence of length ny >= 1, or None with ``y_name``.
        - ``"values"`` : array-like of shape (ny, nx) — or (1, nx) / (nx,)
          without a second parameter — the metric's mean at each grid point,
          row ``i`` for ``y_values[i]``; NaN marks a failed point.
        - ``"baseline"`` : float or None, the baseline algorithm's score.
        - ``"metric"`` : str, the colour-bar label.
        - ``"greater_is_better"`` : bool, optional (default True); whether a
          score above the baseline is better (e.g. False for an error rate).
    path : str or os.PathLike
        Output file; the suffix (``.png``, ``.svg`` or ``.pdf``) picks the
        format. An existing file is replaced.
    title : str, optional
        Title above all panels.

    Raises
    ------
    PlotError
        If the suffix is not one of ``.png``, ``.svg``, ``.pdf``, matplotlib is
        not installed, or the file cannot be written (nothing is left behind).
    ValueError
        If ``panels`` is empty, a key is missing, ``values`` does not have the
        shape given by the value lists, or a baseline is not finite.

    References
    ----------
    S. Abbasian, C. Drummond, N. Japkowicz, S. Matwin, "Inner Ensembles: Using
    Ensemble Methods Inside the Learning Algorithm", ECML PKDD 2013, Sect. 5,
    Tables 1–3 (sensitivity to ensemble size and sample size).
    """
    fmt = plot_format(path)
    _write_bytes_atomic(path, render_sensitivity_heatmaps(panels, fmt, title=title))


def render_sensitivity_heatmaps(panels: Sequence[Mapping], fmt, *, title=None) -> bytes:
    """The bytes of the figure :func:`plot_sensitivity_heatmaps` writes; no file is touched.

    ``fmt`` is ``"png"``, ``"svg"`` or ``"pdf"`` (see :func:`plot_format`); the
    other parameters, and the errors raised, are those of
    :func:`plot_sensitivity_heatmaps`.
    """
    fmt = _check_format(fmt)
    checked = [_check_panel(i, p) for i, p in enumerate(panels)]
    if not checked:
        raise InputError("panels is empty; need at least one data set to plot")
    mpl = _matplotlib()
    with _style(mpl):
        return _figure_bytes(_draw_heatmaps(mpl, checked, title), fmt)


def heatmap_limits(values, baseline) -> tuple[float, float]:
    """Colour limits of a heat map centred on the baseline score: ``(vmin, vmax)``.

    The scale is symmetric about the baseline, so the neutral colour means "as
    good as the baseline" and equal colour strength means an equal difference
    either way. Its half-range is the largest difference from the baseline, but
    never less than ``HEATMAP_MIN_SPREAD`` (0.01) times the score's scale,
    ``max(1, |baseline|)``: for scores in [0, 1] (accuracy, NMI, purity, kappa)
    that is one percentage point, for scores in larger units (RMSE, MAE) 1 % of
    the baseline. Without the floor the largest difference always gets the
    darkest colour, so a grid whose points all lie within 0.003 of the baseline
    (noise for most data sets) would look as decisive as one that gains 0.1;
    with it, a difference of 0.003 on a [0, 1] score reaches at most 30 % of the
    way from the neutral colour to the darkest one.

    Parameters
    ----------
    values : array-like of float
        The scores of the grid points, any shape; NaN (failed points) ignored.
    baseline : float
        The baseline algorithm's score; finite.

    Returns
    -------
    (float, float)
        ``(baseline - s, baseline + s)`` with ``s = max(max |values - baseline|,
        HEATMAP_MIN_SPREAD * max(1, |baseline|))``; always ``s > 0``.

    Raises
    ------
    ValueError
        If ``baseline`` is not finite or a value is infinite.

    Examples
    --------
    >>> heatmap_limits([0.902, 0.899], 0.9)   # all within 0.003: the floor decides
    (0.89, 0.91)
    >>> heatmap_limits([0.75, 0.375], 0.5)    # the largest difference decides
    (0.25, 0.75)
    """
    baseline = float(baseline)
    if not math.isfinite(baseline):
        raise InputError(f"baseline must be finite, got {baseline}")
    diffs = np.asarray(values, dtype=float).ravel() - baseline
    if np.isinf(diffs).any():
        raise InputError("values must be finite or NaN")
    diffs = diffs[~np.isnan(diffs)]
    largest = float(np.abs(diffs).max()) if diffs.size else 0.0
    spread = max(largest, HEATMAP_MIN_SPREAD * max(1.0, abs(baseline)))
    return baseline - spread, baseline + spread


def _check_panel(index, panel):
    if not isinstance(panel, Mapping):
        raise InputError(f"panel {index} must be a mapping, got {type(panel).__name__}")
    missing = [key for key in ("dataset", "x_name", "x_values", "values", "metric") if key not in panel]
    if missing:
        raise InputError(f"panel {index} lacks key(s): {', '.join(missing)}")
    where = f"panel {index} ({panel['dataset']})"
    x_values = list(panel["x_values"])
    if not x_values:
        raise InputError(f"{where}: x_values is empty")
    y_name = panel.get("y_name")
    y_values = panel.get("y_values")
    if y_name is None:
        if y_values is not None and len(list(y_values)) > 1:
            raise InputError(f"{where}: y_values given without y_name")
        y_values = None
    else:
        if y_values is None or not list(y_values):
            raise InputError(f"{where}: y_name {y_name!r} needs non-empty y_values")
        y_values = list(y_values)
    try:
        values = np.asarray(panel["values"], dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{where}: values must be numeric") from None
    ny = 1 if y_values is None else len(y_values)
    if values.ndim == 1 and ny == 1:
        values = values.reshape(1, -1)
    if values.shape != (ny, len(x_values)):
        raise InputError(
            f"{where}: values has shape {values.shape}, expected ({ny}, {len(x_values)}) "
            f"= (len(y_values), len(x_values))"
        )
    if np.isinf(values).any():
        raise InputError(f"{where}: values must be finite or NaN")
    baseline = panel.get("baseline")
    if baseline is not None:
        baseline = float(baseline)
        if not math.isfinite(baseline):
            raise InputError(f"{where}: baseline must be finite, got {baseline}")
    return {
        "dataset": str(panel["dataset"]),
        "x_name": str(panel["x_name"]),
        "x_values": x_values,
        "y_name": None if y_name is None else str(y_name),
        "y_values": y_values,
        "values": values,
        "baseline": baseline,
        "metric": str(panel["metric"]),
        "greater_is_better": bool(panel.get("greater_is_better", True)),
    }


def _tick_text(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return str(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return f"{value:g}"
    return str(value)


def _draw_heatmaps(mpl, panels, title):
    from matplotlib import colors
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    n = len(panels)
    # Size every panel for the largest grid so cells and annotations fit.
    def cell_text(v):
        return "n/a" if np.isnan(v) else f"{v:.3f}"

    annotate = [p["values"].shape[0] <= 12 and p["values"].shape[1] <= 12 for p in panels]
    max_chars = max(
        (len(cell_text(v)) for p, a in zip(panels, annotate) if a for v in p["values"].ravel()), default=0
    )
    cell = max(0.5, 0.07 * max_chars + 0.12) if any(annotate) else 0.3
    max_nx = max(p["values"].shape[1] for p in panels)
    max_ny = max(p["values"].shape[0] for p in panels)
    grid_w = min(max(max_nx * cell, 2.0), 8.0)
    grid_h = min(max(max_ny * cell, cell), 6.0)
    panel_w = grid_w + 2.2  # y tick labels and label, colour bar and its label
    panel_h = grid_h + 1.4  # title, x tick labels and label
    ncols = max(1, min(4, n, int(16.0 // panel_w)))  # keep the figure at most ~16 in wide
    nrows = math.ceil(n / ncols)
    fig_w = ncols * panel_w
    fig_h = nrows * panel_h + (0.4 if title else 0.0)

    fig = Figure(figsize=(fig_w, fig_h), dpi=_DPI, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for ax in axes.ravel()[n:]:
        ax.remove()
    if title:
        fig.suptitle(title, fontsize=12, parse_math=False)

    for ax, panel, ann in zip(axes.ravel(), panels, annotate):
        values = panel["values"]
        ny, nx = values.shape
        finite = values[np.isfinite(values)]
        baseline = panel["baseline"]
        if baseline is not None:
            lo, hi = heatmap_limits(finite, baseline)
            norm = colors.TwoSlopeNorm(vcenter=baseline, vmin=lo, vmax=hi)
            cmap = mpl.colormaps["RdBu" if panel["greater_is_better"] else "RdBu_r"]
        else:
            lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
            if hi <= lo:
                pad = max(1e-3 * abs(lo), 1e-6)
                lo, hi = lo - pad, hi + pad
            norm = colors.Normalize(vmin=lo, vmax=hi)
            cmap = mpl.colormaps["viridis"]
        cmap = cmap.with_extremes(bad="#d0d0d0")
        image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, norm=norm, origin="lower", aspect="auto")

        step_x = max(1, math.ceil(nx / 12))
        ax.set_xticks(range(0, nx, step_x))
        x_labels = [_tick_text(v) for v in panel["x_values"][::step_x]]
        rotate = max(len(t) for t in x_labels) * 0.075 + 0.05 > grid_w / len(x_labels)
        ax.set_xticklabels(
            x_labels, rotation=45 if rotate else 0, ha="right" if rotate else "center", rotation_mode="anchor"
        )
        ax.set_xlabel(panel["x_name"], parse_math=False)
        if panel["y_name"] is None:
            ax.set_yticks([])
        else:
            step_y = max(1, math.ceil(ny / 12))
            ax.set_yticks(range(0, ny, step_y))
            ax.set_yticklabels([_tick_text(v) for v in panel["y_values"][::step_y]])
            ax.set_ylabel(panel["y_name"], parse_math=False)
        heading = panel["dataset"]
        if baseline is not None:
            heading += f"\nbaseline {panel['metric']} = {baseline:.3f}"
        ax.set_title(heading, fontsize=10, parse_math=False)
        ax.tick_params(length=2, labelsize=8)
        for spine in ax.spines.values():
            spine.set_visible(False)

        if ann:
            for (r, c), v in np.ndenumerate(values):
                if np.isnan(v):
                    colour = "black"
                else:
                    red, green, blue, _ = cmap(norm(v))
                    colour = "white" if 0.299 * red + 0.587 * green + 0.114 * blue < 0.5 else "black"
                ax.text(c, r, cell_text(v), ha="center", va="center", fontsize=7, color=colour,
                        parse_math=False)

        bar = fig.colorbar(image, ax=ax, fraction=0.08, pad=0.03)
        bar.set_label(panel["metric"], fontsize=9, parse_math=False)
        bar.ax.tick_params(labelsize=7)
        if baseline is not None:
            bar.ax.axhline(baseline, color="black", linewidth=1.2)
    return fig


# --------------------------------------------------------------------------- #
# Shared plumbing
# --------------------------------------------------------------------------- #
def plot_format(path) -> str:
    """The figure format a file name asks for: ``"png"``, ``"svg"`` or ``"pdf"`` (suffix, any case).

    Raises
    ------
    PlotError
        If the suffix is none of ``.png``, ``.svg``, ``.pdf``.
    """
    suffix = Path(os.fspath(path)).suffix.lower()
    if suffix not in PLOT_SUFFIXES:
        shown = suffix or "no suffix"
        raise PlotError(f"cannot plot to {os.fspath(path)}: {shown} is not one of {', '.join(PLOT_SUFFIXES)}")
    return suffix[1:]


def _check_format(fmt) -> str:
    if fmt not in _METADATA:
        raise PlotError(f"unknown figure format {fmt!r}; use one of {', '.join(_METADATA)}")
    return fmt


def write_plots(figures: Sequence[tuple[str | os.PathLike, bytes]]) -> None:
    """Write several figures, each atomically, all or none.

    Meant for the bytes of the ``render_*`` functions: drawing, where most
    failures happen, is over before the first file is touched. If writing one
    file fails, the files this call already wrote are removed again, so a
    failed call never leaves a mix of new and old figures (a file it had
    replaced is then gone rather than stale); devices and pipes are written in
    place and cannot be taken back.

    Parameters
    ----------
    figures : sequence of (path, bytes)
        Destinations, each written with :func:`ensemblekit.atomic.write_atomic`.

    Raises
    ------
    PlotError
        If a file cannot be written; the message names it.
    """
    from ensemblekit.atomic import resolve_destination

    written = []
    try:
        for path, data in figures:
            _write_bytes_atomic(path, data)
            written.append(path)
    except BaseException:
        for path in written:
            with contextlib.suppress(OSError):
                real = resolve_destination(path)
                if real.is_file():
                    real.unlink()
        raise


def _matplotlib():
    try:
        import matplotlib
        import matplotlib.backends.backend_agg  # noqa: F401
        import matplotlib.figure  # noqa: F401
    except ImportError as exc:
        raise PlotError(_INSTALL_HINT) from exc
    return matplotlib


@contextlib.contextmanager
def _style(mpl):
    """Matplotlib's default style plus our fixed settings, whatever matplotlibrc says."""
    import matplotlib.style

    with matplotlib.style.context("default"), mpl.rc_context(_RC):
        yield


def _figure_bytes(fig, fmt) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt, dpi=_DPI, metadata=_METADATA[fmt])
    return buffer.getvalue()


def _write_bytes_atomic(path, data: bytes) -> None:
    from ensemblekit.atomic import write_atomic, write_error_message

    try:
        write_atomic(path, data)
    except OSError as exc:  # one line; a full disk reads "no space left on device writing PATH"
        raise PlotError(write_error_message(path, exc, "plot file")) from exc
