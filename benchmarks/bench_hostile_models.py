"""Peak memory of `show` and `predict` on hostile model files (issue 16, acceptance 3).

Builds every hostile file of ``tests/ektesting/hostile_models.py`` from genuine models
(knn on iris, cart-entropy on vote: scikit-learn's tree arrays), then runs ``ensemblekit show FILE`` and
``ensemblekit predict FILE DATA`` on each in a fresh process and reports the
process's peak resident set size (``ru_maxrss`` from ``os.wait4``, taken by a
small launcher so that this script's own memory is not counted), its exit
code and the first line it printed on stderr. Every run must stay under
300 MB and exit 2; the script exits 1 otherwise. A genuine model is measured
too, as the baseline of what importing scikit-learn costs.

Usage::

    python benchmarks/bench_hostile_models.py [--out benchmarks/results/hostile_models.md]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from ektesting import hostile_models as H  # noqa: E402

LIMIT_MB = 300
IRIS = ROOT / "sample_data" / "iris.arff"
VOTE = ROOT / "sample_data" / "vote.arff"


# A measured process must not be forked from this one: Linux counts the memory a
# process had before exec in its peak, and this process holds scikit-learn. A small
# fresh interpreter forks and execs the command and reports the child's wait4 usage.
_LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.dup2(os.open(sys.argv[1], os.O_WRONLY), 2)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    os.execv(sys.executable,
             [sys.executable, "-c", "from ensemblekit.cli import main; main()", *sys.argv[2:]])
_, status, usage = os.wait4(pid, 0)
print(usage.ru_maxrss, os.waitstatus_to_exitcode(status))
"""


def _run(args):
    """(peak RSS in MB, exit code, first stderr line) of one fresh ensemblekit process."""
    with tempfile.NamedTemporaryFile() as err:
        out = subprocess.run([sys.executable, "-S", "-c", _LAUNCHER, err.name, *map(str, args)],
                             capture_output=True, text=True, check=True).stdout.split()
        first = (Path(err.name).read_text(errors="replace").splitlines() or [""])[0]
    return int(out[0]) / 1024, int(out[1]), first


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="also write the table (Markdown) here")
    args = parser.parse_args()
    rows, ok = [], True
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        knn, cart = tmp / "knn.ekm", tmp / "cart.ekm"
        for algo, data, path in (("knn", IRIS, knn), ("cart-entropy", VOTE, cart)):
            subprocess.run([sys.executable, "-c", "from ensemblekit.cli import main; main()", "fit", algo,
                            str(data), "-o", str(path)], check=True, capture_output=True)
        files = {
            "genuine knn model (baseline)": (knn, IRIS),
            "scipy distribution with code": (H.scipy_distribution(knn, tmp / "scipy.ekm", tmp), IRIS),
            "tree: root child 10^8": (H.tree_arrays(cart, tmp / "child.ekm", "left_child", 10**8), VOTE),
            "tree: feature 10^7": (H.tree_arrays(cart, tmp / "feature.ekm", "feature", 10**7), VOTE),
            "tree: child -5": (H.tree_arrays(cart, tmp / "cycle.ekm", "right_child", -5), VOTE),
            "metadata bomb (1 GiB)": (H.metadata_bomb(knn, tmp / "mbomb.ekm"), IRIS),
            "metadata bomb, lying directory": (H.lying_metadata_bomb(knn, tmp / "mlie.ekm"), IRIS),
            "payload bomb (1 GiB), valid digest": (H.payload_bomb(knn, tmp / "pbomb.ekm"), IRIS),
            "edited metadata": (H.edited_metadata(knn, tmp / "edit.ekm"), IRIS),
            "metadata nested 200,000 deep": (H.deep_metadata(knn, tmp / "deepm.ekm"), IRIS),
            "schema nested 200,000 deep": (H.deep_schema(knn, tmp / "deeps.ekm"), IRIS),
            "encrypted metadata member": (H.encrypted_member(knn, tmp / "enc1.ekm", "metadata.json"), IRIS),
            "encrypted payload member": (H.encrypted_member(knn, tmp / "enc2.ekm", "model.skops"), IRIS),
        }
        for label, (path, data) in files.items():
            show = _run(["show", path])
            predict = _run(["predict", path, data])
            genuine = label.startswith("genuine")
            for rss, code, _ in (show, predict):
                ok &= rss < LIMIT_MB and (code == 0 if genuine else code == 2)
            ok &= not (tmp / H.MARKER_NAME).exists()
            message = predict[2].replace(str(tmp) + "/", "").replace("|", "\\|")
            rows.append(f"| {label} | {show[0]:.0f} | {show[1]} | "
                        f"{predict[0]:.0f} | {predict[1]} | {message} |")
    table = "\n".join([
        f"Peak RSS (MB) of one fresh process per command; limit {LIMIT_MB} MB. "
        f"Python {sys.version.split()[0]}, `python benchmarks/bench_hostile_models.py`.",
        "",
        "| file | show MB | show exit | predict MB | predict exit | predict's message |",
        "|---|---|---|---|---|---|",
        *rows,
    ])
    print(table)
    if args.out is not None:
        args.out.write_text(table + "\n")
    print("all refused with exit 2 under the limit" if ok else "FAILED", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
