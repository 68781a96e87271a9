"""What ``show`` prints of a saved model: plain blocks, laid out as lines or rich tables.

:func:`model_description` turns what :func:`ensemblekit.api.describe_model` returns into
blocks (:class:`~ensemblekit.report.Fields`, :class:`~ensemblekit.report.Lines`,
:class:`~ensemblekit.report.Columns`). On a terminal they become rich renderables
(:func:`description_renderables`); into a pipe or a file they are written as plain lines
(:func:`description_text`), which import no rich at all: rich's import and rendering were
about a fifth of the time of ``show`` (issue 28), and rich padded every line to the
console's width. Names and values from model files go through
:func:`ensemblekit.report.printable`.
"""

from __future__ import annotations

from ensemblekit.report import (
    Columns,
    Fields,
    Lines,
    block_renderable,
    cluster_sizes_table,
    plain_value,
    printable,
    prototype_columns,
    safe_text,
)


def c45_tree_text(tree, names, class_values, category_names) -> str:
    """A fitted C4.5 tree as Weka's ``J48 -t`` prints it: heading, tree, leaves and size.

    Parameters
    ----------
    tree : ensemblekit.classifiers.c45.C45Tree
    names : list of str
        Attribute names, one per column the tree reads.
    class_values : list of str
        The class values, in code order.
    category_names : list of (list of str or None)
        Each attribute's values (None for a numeric attribute).

    Returns
    -------
    str
        Lines to show whole, never folded; names and values made printable (see
        :func:`printable`). Weka separates ``Number of Leaves  :`` and ``Size of the tree :``
        from their numbers by a tab; here a space.
    """
    text = tree.export_text(
        feature_names=[printable(n) for n in names],
        class_names=[printable(c) for c in class_values],
        category_names=[None if v is None else [printable(x) for x in v] for v in category_names])
    title = "J48 unpruned tree" if tree.unpruned else "J48 pruned tree"
    # J48 starts every branch line on a new line: a blank line under the dashes, except
    # for a tree that is one leaf (": class (n)" right under them)
    body = text if tree.tree_size_ == 1 else "\n" + text
    return (f"{title}\n------------------\n{body}\n\nNumber of Leaves  : {tree.n_leaves_}\n\n"
            f"Size of the tree : {tree.tree_size_}")


def model_description(description: dict) -> list:
    """What ``show`` prints of a saved model: its metadata, then what it learned.

    Parameters
    ----------
    description : dict
        From :func:`ensemblekit.api.describe_model`: the metadata, the registry's
        ``model_summary`` kind, feature and class names, and the fitted estimator.

    Returns
    -------
    list
        A :class:`Fields` block of metadata, then by kind: prototypes ("prototypes",
        :class:`Columns`), the tree as text ("tree": a C4.5 tree as Weka's J48 prints it,
        :class:`Lines`), the parents of each node ("network", :class:`Columns`), the bags
        ("bagged-networks"), the number of stored instances ("stored-instances"), or
        nothing more ("none"). Two kinds add rich renderables instead: cluster sizes and
        rules ("rule-clusters"), the top rules or trees and the variable importances
        ("rule-ensemble"). Render with :func:`description_renderables` or
        :func:`description_text`.
    """
    metadata = description["metadata"]
    train = metadata.get("training_data", {})
    params = ", ".join(f"{k}={plain_value(v)}" for k, v in sorted(metadata.get("params", {}).items()))
    out: list = [Fields(tuple((key, printable(value)) for key, value in (
        ("algorithm", f"{metadata['algorithm']} ({metadata['task']})"),
        ("parameters", params or "-"),
        ("seed", str(metadata.get("seed"))),
        ("trained on", f"{train.get('name')} ({train.get('instances')} instances)"),
        ("data fingerprint", str(train.get("fingerprint"))),
        ("ensemblekit", str(metadata.get("ensemblekit_version"))),
        ("file format", str(metadata.get("format_version"))),
    )))]
    estimator, kind = description["estimator"], description["kind"]
    names = description["feature_names"]
    if kind == "prototypes":
        centers = description["centers"]
        out.append(prototype_columns(centers, names, description["sizes"],
                                     f"{len(centers)} prototypes (training sizes)"))
    elif kind == "tree" and hasattr(estimator, "export_text"):
        out.append(Lines(c45_tree_text(estimator, names, description["class_values"],
                                       description["category_names"]), fold=False))
    elif kind == "tree":
        out.append(Lines(
            f"decision tree: {estimator.get_n_leaves()} leaves, depth {estimator.get_depth()}\n"
            + estimator.tree_text([printable(n) for n in names],
                                  [printable(c) for c in description["class_values"]],
                                  decimals=4)))
    elif kind == "network":
        out.append(Columns(
            "Bayesian network: parents of each node", ("node", "values", "parents", "CPT size"),
            (False, True, False, True),
            tuple((printable(node["name"]), str(node["n_values"]),
                   printable(", ".join(node["parents"]) or "-"),
                   "{} x {}".format(*node["cpt_shape"])) for node in description["nodes"])))
    elif kind == "bagged-networks":
        sizes, arcs = description["bag_sizes"], description["arcs"]
        out.append(Lines(f"bagging of {len(estimator.estimators_)} Bayesian networks; distinct "
                         f"training rows per bag {min(sizes)}-{max(sizes)}; arcs per network "
                         f"{min(arcs)}-{max(arcs)}"))
    elif kind == "rule-clusters":
        from rich.text import Text

        sizes, shown = description["sizes"], description["rules"]
        out.append(cluster_sizes_table(sizes, f"{description['n_rules']} rules from "
                                       f"{estimator.n_stages} stages; {len(sizes)} clusters "
                                       "(training sizes)"))
        out.append(Text(f"first {len(shown)} of {description['n_rules']} rules (stage order):\n"
                        + "\n".join(f"  {k + 1}. {printable(rule)}"
                                    for k, rule in enumerate(shown))))
    elif kind == "rule-ensemble":
        out.extend(_rule_ensemble_description(estimator, names, description["attribute_names"]))
    elif kind == "stored-instances":
        text = (f"stores {estimator.n_samples_fit_} training instances "
                f"({len(names)} encoded features)")
        if getattr(estimator, "window_size", 0):
            text += f"\nusing a maximum of {estimator.window_size} (windowed) training instances"
        if getattr(estimator, "cross_validate", False):
            # the k chosen by hold-one-out, as Weka's IBk model text reports it
            text += (f"\nusing {estimator.n_neighbors_} nearest neighbour(s) for "
                     f"classification (k chosen by hold-one-out in 1 .. {estimator.n_neighbors})")
        out.append(Lines(text))
    return out


def description_renderables(blocks: list) -> list:
    """:func:`model_description`'s blocks as rich renderables, for a terminal."""
    return [block_renderable(block) for block in blocks]


def description_text(blocks: list, render) -> str:
    """:func:`model_description`'s blocks as plain lines, for a pipe or a file.

    A :class:`Fields` block is one ``name  value`` line per row, the names padded to the
    longest plus two spaces (the layout of the terminal's grid); a :class:`Columns` block
    its title, the header, a rule of dashes, the rows (a rule after the lead rows), each
    column as wide as its widest cell and two spaces apart; a :class:`Lines` block its
    text. No line is folded, and none is padded at its end.

    Parameters
    ----------
    blocks : list
        From :func:`model_description`.
    render : callable
        Turns a rich renderable among the blocks (rule ensembles only) into its text.

    Returns
    -------
    str
        Ends with a newline.
    """
    out: list[str] = []
    for block in blocks:
        if isinstance(block, Fields):
            widths = _widths(block.rows)
            out.extend(_line(row, widths, (False, False)) for row in block.rows)
        elif isinstance(block, Lines):
            out.append(block.text)
        elif isinstance(block, Columns):
            widths = _widths([block.headers, *block.rows])
            rule = "  ".join("-" * width for width in widths)
            lines = [_line(row, widths, block.right) for row in block.rows]
            out += [block.title, _line(block.headers, widths, block.right), rule,
                    *lines[:block.lead], *[rule] * (block.lead > 0), *lines[block.lead:]]
        else:
            out.append(render(block).rstrip("\n"))
    return "".join(f"{text}\n" for text in out)


def _cell_width(text: str) -> int:
    """Columns ``text`` takes on a terminal: two for a wide (East Asian) character, none for a
    combining mark."""
    import unicodedata

    if text.isascii():
        return len(text)
    return sum(0 if unicodedata.combining(ch) else
               2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _widths(rows) -> list[int]:
    """The width of each column of ``rows`` (sequences of cells): its widest cell's."""
    return [max(_cell_width(cell) for cell in column) for column in zip(*rows)]


def _line(row, widths, right) -> str:
    """One row of cells on a line: each padded to its column's width, on the left when
    ``right`` says so, else on the right (but for the last, which gets no padding after it),
    two spaces apart."""
    cells = []
    for k, (cell, width, flush_right) in enumerate(zip(row, widths, right)):
        pad = " " * (width - _cell_width(cell))
        cells.append(pad + cell if flush_right else cell if k == len(row) - 1 else cell + pad)
    return "  ".join(cells)


#: Rules (or trees) listed by ``show`` for a rule ensemble.
SHOW_TERMS = 15


def _rule_ensemble_description(estimator, names, attribute_names) -> list:
    """What ``show`` prints for a rule ensemble: its size, top terms and variable importances."""
    import numpy as np
    from rich.table import Table
    from rich.text import Text

    basis = "rules" if estimator.basis == "rules" else "trees"
    size = (f"{estimator.rules_.n_rules} rules (of {estimator.rules_.n_candidates} tree nodes; "
            "duplicates, complements and constant rules dropped)" if basis == "rules" else
            f"{len(estimator.trees_)} tree outputs")
    width = estimator.bandwidth_
    if estimator.method == "lasso":
        tuned = ("no rule to weight" if estimator.alpha_ is None
                 else f"lasso penalty {estimator.alpha_:.4g}")
    elif estimator.method == "pls":
        tuned = (f"{estimator.n_components_} PLS components" if estimator.n_components_
                 else "no rule to weight")
    elif estimator.method == "mean" or (width is not None and np.isinf(width)):
        tuned = "equal weights"
    else:
        tuned = f"kernel width {width:.4g}"
    out: list = [Text(f"{len(estimator.trees_)} ISLE trees -> {size}; {tuned}; "
                      f"intercept {estimator.intercept_:.6g}")]
    terms = estimator.ranked_terms(names, top=SHOW_TERMS)
    if estimator.method == "kernel":
        out.append(Text(f"Nadaraya-Watson smoothing over {estimator.train_target_.size} training "
                        "rows: no weights, so no term or variable importances"))
        return out
    if not terms:
        out.append(Text(f"no {basis[:-1]} has a non-zero weight: the model predicts the "
                        f"intercept, {estimator.intercept_:.6g}, for every row"))
        return out
    nonzero = int(np.count_nonzero(estimator.coef_))
    top = max(t["importance"] for t in terms) or 1.0
    table = Table(title=f"top {len(terms)} of {nonzero} {basis} with a non-zero weight, by importance "
                  + ("|w| sqrt(s(1-s))" if basis == "rules" else "|w| std(T)") + " (largest = 100)",
                  title_justify="left")
    for col in ("#", "rule" if basis == "rules" else "term", "coefficient", "support",
                "importance"):
        table.add_column(col, justify="left" if col in ("rule", "term") else "right")
    for rank, t in enumerate(terms, 1):
        table.add_row(str(rank), safe_text(t["term"]), f"{t['coefficient']:.4g}",
                      "-" if t["support"] is None else f"{t['support']:.3f}",
                      f"{100 * t['importance'] / top:.1f}")
    out.append(table)
    # variable importances: one-hot columns ('attr=value') add up under their attribute
    by_attribute: dict[str, float] = {}
    for name, value in zip(names, estimator.feature_importances_):
        attribute = name.split("=", 1)[0] if name not in set(attribute_names) else name
        by_attribute[attribute] = by_attribute.get(attribute, 0.0) + float(value)
    peak = max(by_attribute.values()) or 1.0
    ranked = sorted(by_attribute.items(), key=lambda kv: (-kv[1], kv[0]))
    table = Table(title="variable importances (largest = 100)", title_justify="left")
    table.add_column("attribute")
    table.add_column("importance", justify="right")
    for name, value in ranked:
        table.add_row(safe_text(name), f"{100 * value / peak:.1f}")
    out.append(table)
    return out
