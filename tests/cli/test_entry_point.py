"""The ``ensemblekit`` command's entry point (:mod:`ensemblekit.__main__`)."""

import importlib.metadata
import os
import subprocess
import sys

import pytest

import ensemblekit.__main__ as entry
import ensemblekit.cli


def _seen_by_the_command(monkeypatch) -> list:
    seen = []
    monkeypatch.setattr(ensemblekit.cli, "console_main",
                        lambda: seen.append(os.environ.get("OPENBLAS_THREAD_TIMEOUT")))
    return seen


def test_idle_blas_threads_sleep_at_once_unless_the_user_said_otherwise(monkeypatch):
    monkeypatch.delenv("OPENBLAS_THREAD_TIMEOUT", raising=False)
    seen = _seen_by_the_command(monkeypatch)
    entry.main()
    assert seen == ["4"]  # OpenBLAS's smallest timeout, set before the command runs
    monkeypatch.setenv("OPENBLAS_THREAD_TIMEOUT", "12")
    entry.main()
    assert seen == ["4", "12"]


def test_the_installed_script_and_python_m_run_the_entry_point():
    scripts = importlib.metadata.entry_points(group="console_scripts")
    assert scripts["ensemblekit"].value == "ensemblekit.__main__:main"
    done = subprocess.run([sys.executable, "-m", "ensemblekit", "--version"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("ensemblekit ")


@pytest.mark.slow  # a process that imports numpy
def test_numpy_is_not_imported_before_the_setting():
    # the setting only counts if OpenBLAS has not loaded yet when main() makes it
    code = ("import sys; import ensemblekit.__main__; "
            "print('numpy' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False"
