"""Compile the project's numba kernels into numba's on-disk cache once, before xdist's workers.

numba compiles a kernel on its first call in each process and then writes it to its cache
(``cache=True``, the ``__pycache__`` folders beside the kernels). On a fresh checkout both
pytest-xdist workers, and every ``ensemblekit`` process a test starts meanwhile, compiled the
same C4.5 kernels at the same time: about 15-35 s of CPU each. ``conftest.py`` runs
:func:`main` in two processes before the workers start, when the cache is older than the
kernels; the workers then load what they need. The two halves share no expensive kernel
and take about the same CPU: ``j48`` grows and prunes J48's tree (the growth kernel without
a split policy, pruning, reduced-error pruning), walks fitted trees, and compiles IBk's and
Inner k-means' kernels; ``inner`` grows the Inner-Ensemble C4.5 (the growth kernel with a
split policy: a compilation of its own) on rows with missing values, which compiles the
replay of J48's sums too. A signature left out here is still compiled where it is first
used, so this changes what is computed nowhere.

``python tests/ektesting/numba_warmup.py j48|inner`` runs one half.
"""

from __future__ import annotations

import copy
import sys
import tempfile
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "ensemblekit"
#: The modules holding ``@njit(cache=True)`` kernels, relative to the package.
KERNELS = ("classifiers/_c45_kernels.py", "classifiers/_c45_pruning.py",
           "classifiers/_c45_weka_sums.py", "classifiers/_ibk_kernels.py",
           "clustering/_inner_kmeans_kernels.py")
HALVES = ("j48", "inner")


#: Written after both halves succeed: the kernel sources (name, size, time stamp) warmed for.
STAMP = SRC / "classifiers" / "__pycache__" / "numba_warmup.stamp"


def _sources() -> str:
    """The kernel modules' names, sizes and modification times, one line each."""
    lines = []
    for relative in KERNELS:
        stat = (SRC / relative).stat()
        lines.append(f"{relative} {stat.st_size} {stat.st_mtime_ns}")
    return "\n".join(lines) + "\n"


def cache_is_current() -> bool:
    """Whether the last complete warm-up was for the kernel sources as they are now.

    A cheap test that needs no import. (Comparing numba's index files with the sources
    does not work in a checkout that has had kernels edited: an index of a function since
    removed or moved to another line stays behind, older than its module, forever.) numba
    itself still checks each index against its source and recompiles what is stale.
    """
    try:
        return STAMP.read_text() == _sources()
    except OSError:
        return False


def mark_current() -> None:
    """Record that the cache was just filled for the kernel sources as they are now."""
    try:
        STAMP.parent.mkdir(exist_ok=True)
        STAMP.write_text(_sources())
    except OSError:  # a read-only checkout: the next run warms up again
        pass


def _read_only(array):
    array = array.copy()
    array.setflags(write=False)
    return array


def main(half: str) -> None:
    """Fit and predict with the compiled learners of ``half`` (one of :data:`HALVES`)."""
    import numpy as np

    from ensemblekit import api
    from ensemblekit.classifiers.bagging import c45_proba
    from ensemblekit.classifiers.c45 import C45Tree
    from ensemblekit.classifiers.ibk import IBk
    from ensemblekit.classifiers.iec45 import InnerEnsembleC45Tree

    from ektesting.support import data_path, load_coded

    _, X, y, nominal, n_categories = load_coded("labor")  # numeric, nominal, missing values
    if half == "inner":
        # the Inner-Ensemble C4.5 grows with a split policy, a kernel of its own; missing
        # values make it replay J48's sums (the other half's rows have none), unpruned
        # leaves pruning to the other half
        InnerEnsembleC45Tree(nominal_features=nominal, n_categories=n_categories, n_classes=2,
                             random_state=0, unpruned=True).fit(X, y)
        return
    # growth without a split policy and pruning, on rows with no missing value (no replay)
    known = np.nan_to_num(X)
    tree = C45Tree(nominal_features=nominal, n_categories=n_categories, n_classes=2)
    tree.fit(known, y)
    # reduced-error pruning grows on part of the rows and moves cuts to all of them
    C45Tree(reduced_error_pruning=True, nominal_features=nominal,
            n_categories=n_categories, n_classes=2).fit(known, y)
    # the compiled walk over a fitted tree, of writable and read-only rows (scikit-learn's
    # read-only memmap checks), and over read-only tree arrays (the lazy ensembles)
    tree.predict_proba(known)
    tree.predict_proba(_read_only(known))
    frozen = copy.copy(tree)
    for name in ("feature_", "threshold_", "child_start_", "n_children_", "value_",
                 "bag_value_", "is_empty_", "total_", "bag_total_"):
        setattr(frozen, name, _read_only(getattr(tree, name)))
    c45_proba(frozen, known, tree._nominal_mask())
    iris = str(data_path("iris.arff"))
    with tempfile.TemporaryDirectory() as folder:  # a model file's arrays are read-only
        path = Path(folder) / "c45.ekm"
        api.save_model(api.fit("c45", iris, seed=1), path)
        api.predict(str(path), iris, proba=True)
    # all-nominal rows: IBk counts mismatches (k = 1 votes in the same pass)
    _, Xv, yv, nominal_v, _ = load_coded("vote")
    for rows, labels in ((Xv, yv), (_read_only(Xv), _read_only(yv))):
        for k in (1, 3):
            IBk(n_neighbors=k, nominal_features=nominal_v).fit(rows, labels).predict_proba(rows)
    api.predict(api.fit("knn", iris), iris, proba=True)
    api.cluster("iekm", iris, k=3, params={"n_estimators": 5}, seed=1)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    main(sys.argv[1])
