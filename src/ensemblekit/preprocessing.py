"""Turning a :class:`~ensemblekit.data.Dataset` feature matrix into what an estimator needs.

Feature matrices hold numeric attributes as numbers and nominal attributes as integer
codes into their declared values, with ``NaN`` for a missing value (see
:mod:`ensemblekit.data`). Estimators that need numbers get nominal attributes one-hot
encoded over *all declared values* (so the encoding is the same in every fold and on
new data); missing values are replaced by the training mode (nominal) and, where the
estimator cannot route gaps itself, the training mean (numeric). Everything here is
fitted on training data only and is stored in the model file with the estimator.
"""

from __future__ import annotations

import numpy as np

from ensemblekit.errors import InputError


def make_preprocessor(schema, *, impute_numeric: bool = True, scale: str = "none"):
    """Build the unfitted ``prep`` step for a training schema.

    Parameters
    ----------
    schema : ensemblekit.data.Schema
        Training schema; its features fix the column layout of ``X``
        (n_samples, n_features).
    impute_numeric : bool, default=True
        Replace missing numeric values by the training mean. With ``False`` they
        are passed on as ``NaN`` (for estimators that handle gaps, such as trees).
    scale : {"none", "minmax"}, default="none"
        ``"minmax"`` rescales numeric columns to [0, 1] with the training range
        (Weka's default normalisation for IBk); one-hot columns are already in [0, 1].

    Returns
    -------
    sklearn.compose.ColumnTransformer
        Output columns: numeric attributes first (file order), then one indicator
        column per declared value of each nominal attribute (file order). Output
        feature names are ``attr`` and ``attr=value``.

    Raises
    ------
    ValueError
        If ``scale`` is not one of the accepted values.
    """
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import MinMaxScaler, OneHotEncoder

    if scale not in ("none", "minmax"):
        raise InputError(f"scale must be 'none' or 'minmax', got {scale!r}")
    numeric = [i for i, a in enumerate(schema.features) if a.kind == "numeric"]
    nominal = [i for i, a in enumerate(schema.features) if a.kind != "numeric"]
    transformers = []
    if numeric:
        steps = []
        if impute_numeric:
            steps.append(("impute", SimpleImputer(strategy="mean", keep_empty_features=True)))
        if scale == "minmax":
            steps.append(("scale", MinMaxScaler(clip=False)))
        if not steps:
            steps.append(("keep", "passthrough"))
        transformers.append(("numeric", Pipeline(steps), numeric))
    if nominal:
        categories = [
            np.arange(max(len(schema.features[i].values), 1), dtype=float) for i in nominal
        ]
        encoder = Pipeline(
            [
                ("impute", SimpleImputer(strategy="most_frequent", keep_empty_features=True)),
                ("onehot", OneHotEncoder(categories=categories, handle_unknown="ignore",
                                         sparse_output=False, dtype=np.float64)),
            ]
        )
        transformers.append(("nominal", encoder, nominal))
    return ColumnTransformer(
        transformers,
        remainder="drop",
        sparse_threshold=0.0,
        verbose_feature_names_out=False,
    )


def feature_names(schema) -> list[str]:
    """Names of the columns :func:`make_preprocessor` produces, in order.

    Parameters
    ----------
    schema : ensemblekit.data.Schema

    Returns
    -------
    list of str
        ``attr`` for numeric attributes, then ``attr=value`` for each declared
        value of each nominal attribute.
    """
    names = [a.name for a in schema.features if a.kind == "numeric"]
    for a in schema.features:
        if a.kind != "numeric":
            names.extend(f"{a.name}={v}" for v in a.values)
    return names
