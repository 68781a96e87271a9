"""Time ``ensemblekit info`` on a wide CSV, as a table and as JSON.

Writes a CSV of ``--columns`` numeric attributes plus a nominal class over ``--rows``
rows to a temporary folder, then runs ``ensemblekit info FILE`` (table on stdout,
redirected to a file) and ``ensemblekit info FILE --format json`` as subprocesses and
prints the wall-clock seconds of each (best of ``--repeat``).

Usage::

    python benchmarks/bench_wide_info.py [--columns 100000] [--rows 5] [--repeat 1]

Before the table was capped at ``report.MAX_SCHEMA_ROWS`` attributes (issue 19),
100,000 columns took 36 s as a table and 2.6 s as JSON on the 2-core development
machine; after, 2.8 s and 3.3 s (most of it reading the file and describing every
attribute; figures taken under load from other jobs, so +-1 s).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def write_wide_csv(path: Path, columns: int, rows: int) -> None:
    """A CSV with ``columns`` numeric attributes ``a0..`` and a class ``yes``/``no``."""
    with open(path, "w") as fh:
        fh.write(",".join(f"a{i}" for i in range(columns)) + ",class\n")
        for r in range(rows):
            fh.write(",".join(str((r * i) % 7 + 0.5) for i in range(columns)))
            fh.write(",yes\n" if r % 2 else ",no\n")


def seconds(args: list[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--columns", type=int, default=100_000)
    parser.add_argument("--rows", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=1)
    options = parser.parse_args()
    script = Path(sys.executable).with_name("ensemblekit")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "ensemblekit.cli"]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "wide.csv"
        write_wide_csv(path, options.columns, options.rows)
        table = seconds([*command, "info", str(path)], options.repeat)
        as_json = seconds([*command, "info", str(path), "--format", "json"], options.repeat)
    print(f"info on {options.columns:,} columns x {options.rows} rows: "
          f"table {table:.2f} s, json {as_json:.2f} s")


if __name__ == "__main__":
    main()
