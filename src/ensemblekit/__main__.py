"""The ``ensemblekit`` command's entry point (also ``python -m ensemblekit``).

It settles, before numpy is first imported, how the process's BLAS threads wait, then runs
the command line (:func:`ensemblekit.cli.console_main`).

OpenBLAS, the BLAS that numpy and scipy load, starts its helper threads when it loads and
again in every process forked after that, and a helper with nothing to do spins for
2**28 processor cycles (about a tenth of a second) before it sleeps. ensemblekit never
hands them work in a run of units (each unit runs BLAS on one thread, see
:class:`ensemblekit.experiment.onecore.OneCore`), so in ``compare --n-jobs 2`` the
spinning of the command's, the zygote's and the two workers' helpers took about half a
second of processor time from the run on a 2-core machine (``perf`` showed
``blas_thread_server`` in 7 % of the samples). ``OPENBLAS_THREAD_TIMEOUT=4``, the
smallest value OpenBLAS accepts (2**4 cycles), sends idle helpers to sleep at once; a
helper that gets work is woken as before, so nothing is computed differently. A value
already in the environment is kept, as is any other BLAS, which ignores the variable.
"""

from __future__ import annotations

import os


def main() -> None:
    """Run ``ensemblekit`` with the process settings above."""
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
    from ensemblekit.cli import console_main

    console_main()


if __name__ == "__main__":
    main()
