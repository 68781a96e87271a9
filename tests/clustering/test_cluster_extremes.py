"""``cluster`` on data near the float limits (issue 29, item 7).

Near 1e308 the internal indices were 0.0 or null with numpy warnings on stderr, and
isca and rf-cluster, whose trees read float32, ended in a raw error (exit 1). Now the
clusterers that compute in float64 give the labels and indices of the same data in an
ordinary unit, quietly, and those with float32 trees refuse in one line naming the
attribute.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from ektesting.support import centred_iris, run_cli

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


def _csv(path, exponent):
    X, y = centred_iris(2)
    X = np.ldexp(X, exponent)
    lines = ["a,b,c,d,class"] + [",".join([*(repr(float(v)) for v in row), f"k{c}"])
                                 for row, c in zip(X, y)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("algorithm", ["kmeans", "pam", "hac-average"])
def test_clusters_and_indices_near_the_limits_are_those_of_the_ordinary_unit(tmp_path, algorithm):
    runs = {}
    for exponent in (0, 1022):
        result = run_cli("cluster", algorithm, _csv(tmp_path / f"x{exponent}.csv", exponent),
                         "-k", "3", "--format", "json")
        assert result.exit_code == 0 and result.stderr == ""
        runs[exponent] = json.loads(result.stdout)
    assert runs[1022]["sizes"] == runs[0]["sizes"]
    assert runs[1022]["external"] == runs[0]["external"]
    assert runs[1022]["internal"] == runs[0]["internal"]
    assert runs[0]["internal"]["silhouette"] > 0.4


@pytest.mark.parametrize("algorithm", ["isca", "rf-cluster"])
def test_clusterers_with_float32_trees_refuse_naming_the_attribute(tmp_path, algorithm):
    data = _csv(tmp_path / "big.csv", 1021)
    result = run_cli("cluster", algorithm, data, "-k", "3")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"ensemblekit: error: {data}: {algorithm} cannot cluster "
                                    "this data: attribute 'a' holds ")  # the first such column
    assert result.stderr.endswith("a value too large for dtype('float32'), in which "
                                  "scikit-learn's trees read the data (at most about 3.4e38 in "
                                  "magnitude)\n")
    assert result.stderr.count("\n") == 1
