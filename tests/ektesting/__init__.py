"""Helpers of ensemblekit's test suite: paths, Weka runners, reference models, hostile files.

One package with a name no installed distribution uses, so that a ``tests`` or ``support``
module in site-packages cannot shadow the helpers; pytest puts ``tests/`` on the path
(``pythonpath`` in pyproject.toml) and test modules import ``ektesting.<module>``.
"""
