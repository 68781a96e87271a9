"""The application layer, one module per command family; :mod:`ensemblekit.api` is its public face.

- :mod:`~ensemblekit.app.common`: the reading context, notes, data preparation, parameters;
- :mod:`~ensemblekit.app.models`: ``fit``, save, load, ``show``;
- :mod:`~ensemblekit.app.predicting`: ``predict``, chunk by chunk, here or on Dask;
- :mod:`~ensemblekit.app.clustering`: ``cluster``, and the choice of the number of clusters;
- :mod:`~ensemblekit.app.evaluating`: ``evaluate`` of an algorithm or a saved model;
- :mod:`~ensemblekit.app.comparing`: ``compare``;
- :mod:`~ensemblekit.app.plotting`: ``compare --plot``.

Each function takes paths (or data sets) and plain values and returns a result object of
:mod:`ensemblekit.results`. Names with a leading underscore are shared between these
modules only.
"""
