"""Draw a comparison, one figure per metric (``compare --plot``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ensemblekit import registry
from ensemblekit.errors import UsageError
from ensemblekit.results import Comparison


def plot_paths(path, metrics: Sequence[str] = (), algorithms: Sequence[str] = ()) -> list[Path]:
    """The files ``compare --plot PATH`` writes: one per metric, named ``STEM-METRIC.SUFFIX``.

    ``cd.png`` with metrics nmi and purity gives ``cd-nmi.png`` and
    ``cd-purity.png``, next to where ``cd.png`` would be. The metric is in the
    name even when there is only one, so a script always knows what to look for.
    ``PATH`` itself is never written. The command line checks each of these
    destinations before any work.

    Parameters
    ----------
    path : str or path-like
        The ``--plot`` argument, e.g. ``out/cd.png``.
    metrics : sequence of str
        The compared metrics, in order (repeats are dropped). When empty, the
        default metrics :func:`compare` uses for the task of the first
        registered name in ``algorithms``.
    algorithms : sequence of str
        Registry names; only read when ``metrics`` is empty.

    Returns
    -------
    list of pathlib.Path
        One path per metric; empty when ``metrics`` is empty and no name in
        ``algorithms`` is registered (:func:`compare` refuses those anyway).
    """
    chosen = list(dict.fromkeys(metrics))
    if not chosen:
        from ensemblekit.metrics import default_metrics

        known = [registry.get(a) for a in algorithms if registry.is_registered(a)]
        chosen = list(default_metrics(known[0].task)) if known else []
    given = Path(path)
    return [given.with_name(f"{given.stem}-{metric}{given.suffix}") for metric in chosen]


def plot_comparison(result: Comparison, path, notify=None) -> list[Path]:
    """Draw a comparison, one figure per metric, in the files :func:`plot_paths` names.

    Each figure is the critical-difference diagram of that metric (two
    algorithms: a scatter plot of their scores per data set, with the diagonal)
    or, for a grid, one sensitivity heat map per data set and gridded algorithm, coloured
    by the difference from the baseline (:func:`ensemblekit.plots.heatmap_limits`).
    Every figure is drawn before the first file is written, and the files are
    written all or none (:func:`ensemblekit.plots.write_plots`).

    A data set on which a metric is undefined (NaN, such as a ROC area over folds
    that lack a class) is left out of the two-algorithm scatter plot, which says
    so in its title and with a note to ``notify``.

    Parameters
    ----------
    result : Comparison
    path : str or path-like
        The ``--plot`` argument (see :func:`plot_paths`).
    notify : callable, optional
        Receives one note per figure that leaves data sets out.

    Returns
    -------
    list of pathlib.Path
        The files written, in the order of ``result.metrics``.

    Raises
    ------
    UsageError
        No diagram can be drawn for some metric (fewer than 3 algorithms or 2
        complete data sets, or a grid over more than two parameters); no file
        is written.
    ensemblekit.plots.PlotError
        The suffix is not .png, .svg or .pdf, matplotlib is missing, or a file
        cannot be written (none is left behind).
    """
    from ensemblekit import plots

    fmt = plots.plot_format(path)
    metrics = list(dict.fromkeys(result.metrics))
    paths = plot_paths(path, metrics)
    say = notify if notify is not None else (lambda message: None)
    figures = [(target, _metric_figure(result, metric, fmt, say))
               for metric, target in zip(metrics, paths)]
    plots.write_plots(figures)
    return paths


def _metric_figure(result: Comparison, metric: str, fmt: str, say) -> bytes:
    """The bytes of one metric's figure for :func:`plot_comparison`."""
    import numpy as np

    from ensemblekit import plots
    from ensemblekit.metrics import metric_spec

    if result.grid:
        panels = []
        for c_alg in dict.fromkeys(c.algorithm for c in result.candidates if c.grid):
            points = [c for c in result.candidates if c.algorithm == c_alg and c.grid]
            keys = list(points[0].grid)
            if len(keys) > 2:
                raise UsageError("--plot draws heat maps for grids over one or two parameters")
            xs = list(dict.fromkeys(c.grid[keys[-1]] for c in points))
            ys = list(dict.fromkeys(c.grid[keys[0]] for c in points)) if len(keys) == 2 else None
            for d in result.datasets:
                values = np.full((len(ys) if ys else 1, len(xs)), np.nan)
                for c in points:
                    cell = result.summary.get((d, c.label, metric))
                    if cell is not None:
                        row = ys.index(c.grid[keys[0]]) if ys else 0
                        values[row, xs.index(c.grid[keys[-1]])] = cell[0]
                base = result.summary.get((d, result.baseline, metric))
                panels.append({"dataset": f"{d}: {c_alg}", "x_name": keys[-1], "x_values": xs,
                               "y_name": keys[0] if ys else None, "y_values": ys,
                               "values": values, "baseline": None if base is None else base[0],
                               "metric": metric,
                               "greater_is_better": metric_spec(metric).greater_is_better})
        return plots.render_sensitivity_heatmaps(
            panels, fmt, title=f"{metric} over the grid (baseline {result.baseline})")
    an = result.analyses[metric]
    if len(result.labels) == 2:
        # Demšar (JMLR 2006, Sect. 3.1): two algorithms are compared with the Wilcoxon
        # signed-rank test, not with a critical difference; the figure shows each data set
        import math

        table = result.table(metric)
        done = [d for d in result.datasets if None not in table[d].values()]
        # a measure undefined in some fold (NaN) has no point to draw
        undefined = [d for d in done if not all(math.isfinite(v) for v in table[d].values())]
        done = [d for d in done if d not in undefined]
        if len(done) < 2:
            raise UsageError(f"--plot needs 2 data sets where {metric} is defined for the "
                             f"scatter plot (it is undefined on {', '.join(undefined) or 'none'})")
        title = f"{metric_spec(metric).display_name}: mean over folds per data set"
        if undefined:
            title += f"\n({len(undefined)} data set with {metric} undefined, not drawn)"
            say(f"note: --plot: {metric} is undefined on {', '.join(undefined)}; the scatter "
                "plot leaves it out")
        a, b = result.labels
        return plots.render_pairwise_scatter(
            a, b, [table[d][a] for d in done], [table[d][b] for d in done], done, fmt,
            title=title, greater_is_better=metric_spec(metric).greater_is_better)
    if an.cd is None:
        raise UsageError(f"--plot needs at least 3 algorithms and 2 complete data sets for a "
                         f"critical-difference diagram (of {metric})")
    return plots.render_critical_difference(an.labels, an.ranks, an.cd, fmt,
                                            title=_cd_title(an, metric, result),
                                            alpha=result.alpha)


def _cd_title(an, metric: str, result: Comparison) -> str:
    """The diagram's title names the test that was made: Nemenyi only after Friedman rejects
    without a baseline; otherwise the critical difference is drawn for reference."""
    alpha = f"alpha {result.alpha:g}"
    if an.posthoc == "nemenyi":
        return f"{metric}: Friedman rejects; Nemenyi CD at {alpha}"
    if an.posthoc == "wilcoxon-holm":
        return (f"{metric}: Friedman rejects; post-hoc Wilcoxon-Holm against {result.baseline} "
                f"(Nemenyi CD at {alpha} for reference)")
    return f"{metric}: Friedman does not reject at {alpha}; no post-hoc test (CD for reference)"
