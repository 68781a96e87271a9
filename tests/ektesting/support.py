"""Shared paths and helpers of the test suite (``ektesting.support``; ``tests/`` is on pytest's path).

Fixtures built on these live in ``conftest.py``; plain names (paths, a loader, the CLI
runner) live here so test modules can use them at import time, in parametrize lists.
"""

from __future__ import annotations

from pathlib import Path

import arff
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
#: Small real UCI files shipped with the project (one copy of each data file).
SAMPLE_DATA = ROOT / "sample_data"
#: Test-only data files (those not shipped in sample_data/).
TEST_DATA = Path(__file__).resolve().parents[1] / "data"


def data_path(name: str) -> Path:
    """A data file by name: shipped sample data first, then test-only data.

    Raises
    ------
    FileNotFoundError
        If neither folder holds ``name``.
    """
    for folder in (SAMPLE_DATA, TEST_DATA):
        if (folder / name).is_file():
            return folder / name
    raise FileNotFoundError(f"no data file {name!r} in sample_data/ or tests/data/")


def load_numeric(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Features (float64, every attribute but the last) and class labels of an ARFF file,
    read with liac-arff, independently of ensemblekit's reader."""
    with open(data_path(name), encoding="utf-8") as fh:
        rows = arff.load(fh)["data"]
    X = np.array([row[:-1] for row in rows], dtype=np.float64)
    y = np.array([row[-1] for row in rows])
    return X, y


def run_cli(*args, input=None):
    """Run ``ensemblekit ARGS`` in-process (typer's CliRunner); paths may be Path objects."""
    from typer.testing import CliRunner

    from ensemblekit.cli import app

    return CliRunner().invoke(app, [str(a) for a in args], input=input)


def run_main(args, monkeypatch, capsys) -> tuple[int, str, str]:
    """Run the console entry point (``cli.main``, exit codes and all) in this process.

    Returns (exit code, stdout, stderr); ``sys.argv`` and the warning hook that
    ``main`` replaces are restored by ``monkeypatch``.
    """
    import sys
    import warnings

    import pytest

    from ensemblekit import cli

    monkeypatch.setattr(sys, "argv", ["ensemblekit", *map(str, args)])
    monkeypatch.setattr(warnings, "showwarning", warnings.showwarning)  # main() replaces it
    with pytest.raises(SystemExit) as stop:
        cli.main()
    out, err = capsys.readouterr()
    code = stop.value.code
    return (0 if code is None else code), out, err


def centred_iris(seed: int):
    """Iris with every column centred on its mid-range (so both signs occur), rows shuffled.

    Scaled by a power of two (``np.ldexp``) it is the same data near the float limits.

    Returns
    -------
    X : ndarray of float64 of shape (150, 4)
    y : ndarray of int of shape (150,)
        Class codes.
    """
    _, X, y, _, _ = load_coded("iris")
    order = np.random.default_rng(seed).permutation(len(y))
    X, y = X[order], y[order]
    return X - (X.max(axis=0) + X.min(axis=0)) / 2, y


def load_coded(name: str):
    """A data file read by ensemblekit with its nominal codes, as the lazy learners take it.

    Returns
    -------
    ds, X, y, nominal, n_categories
        The Dataset; features and class of the rows with a known class; the indices of
        the nominal features and their numbers of values.
    """
    from ensemblekit.data import load_dataset

    ds = load_dataset(data_path(name if name.endswith(".arff") else f"{name}.arff"))
    nominal = [i for i, a in enumerate(ds.schema.features) if a.kind != "numeric"]
    n_categories = [len(ds.schema.features[i].values) for i in nominal]
    keep = ds.y >= 0
    return ds, ds.X[keep], ds.y[keep], nominal, n_categories


def registry_dataset(name: str):
    """The registry entry of ``name`` and a data set every algorithm of its task can fit.

    Regression: housing; ss-isca: iris (a complete numeric target column); otherwise
    labor (numeric and nominal attributes, missing values), with a nominal class for
    classifiers.
    """
    from ensemblekit import registry
    from ensemblekit.data import load_dataset

    spec = registry.get(name)
    if spec.task == registry.REGRESSION:
        ds = load_dataset(data_path("housing.arff"))
    elif spec.needs_targets:
        ds = load_dataset(data_path("iris.arff"))
    else:
        ds = load_dataset(data_path("labor.arff"))
        if spec.task == registry.CLASSIFICATION:
            ds = ds.with_nominal_class()
    return spec, ds


def fit_registered(name: str, params: dict):
    """A registry algorithm's estimator fitted on :func:`registry_dataset`'s data.

    ``params`` are the estimator's resolved parameters; clusterers get 3 clusters (and
    ss-isca its first column as the target), classifiers and regressors the rows whose
    class or target is known. Seed 1.
    """
    import numpy as np

    from ensemblekit import registry

    spec, ds = registry_dataset(name)
    params = dict(params)
    if spec.task == registry.CLUSTERING:
        params["n_clusters"] = 3
    model = registry.make_estimator(name, ds.schema, params, 1)
    if spec.task == registry.CLUSTERING:
        model.fit(ds.X, ds.X[:, :1] if spec.fixed.get("supervised") else None)
    else:
        y = np.asarray(ds.y, dtype=float)
        keep = ~np.isnan(y) & (y >= 0 if spec.task == registry.CLASSIFICATION else True)
        model.fit(ds.X[keep], ds.y[keep])
    return model


#: Instance weights cycled over the rows of a weighted copy of a data file.
WEIGHTS = ("1", "0.5", "2", "3", "1.5", "0.25", "4")


def weighted_copy(name: str, folder: Path) -> Path:
    """A copy of a data file with Weka instance weights (``{w}``, cycling through
    :data:`WEIGHTS`) after every row, written in ``folder``."""
    lines = data_path(f"{name}.arff").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().lower().startswith("@data"))
    rows = [r for r in lines[start + 1:] if r.strip() and not r.lstrip().startswith("%")]
    out = lines[:start + 1] + [f"{r},{{{WEIGHTS[i % len(WEIGHTS)]}}}" for i, r in enumerate(rows)]
    path = folder / f"weighted-{name}.arff"
    path.write_text("\n".join(out) + "\n")
    return path


def added_at_default(algorithm: str, got: dict, want: dict) -> bool:
    """Whether parameters ``got`` are ``want`` plus parameters added to ``algorithm`` since
    ``want`` was recorded, each at its declared default: a golden written before a parameter
    existed still describes the same fit."""
    from ensemblekit import registry

    defaults = registry.get(algorithm).defaults()
    extra = set(got) - set(want)
    return ({k: got[k] for k in want if k in got} == want
            and all(k in defaults and got[k] == defaults[k] for k in extra))
