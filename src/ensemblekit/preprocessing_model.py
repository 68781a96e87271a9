"""The fitted preprocessing step: imputation, min-max scaling and one-hot columns, numpy only.

Feature matrices hold numeric attributes as numbers and nominal attributes as
integer codes into their declared values, with ``NaN`` for a missing value (see
:mod:`ensemblekit.dataset`). Estimators that need numbers get, in this order:

* the numeric columns (file order), a missing value replaced by the training
  mean when ``impute_numeric`` (else left as NaN for estimators that route gaps
  themselves), then rescaled to [0, 1] by the training range when
  ``scale="minmax"`` (Weka's normalisation for IBk);
* one indicator column per *declared* value of each nominal attribute (file
  order), a missing value replaced first by the training mode; so the encoding
  is the same in every fold and on new data.

The arithmetic is that of scikit-learn's ``SimpleImputer`` (masked mean; the
smallest of the most frequent values; 0 for a column with no value), of
``MinMaxScaler`` (``scale_ = 1 / range``, a range below ``10 * eps`` counting
as 1, ``min_ = -min * scale_``; ``X * scale_ + min_``) and of
``OneHotEncoder(handle_unknown="ignore")``, which the step replaced, so the
columns are bit for bit what they were (``tests/preprocessing`` compares them).
"""

from __future__ import annotations

import numpy as np

from ensemblekit.constraints import Constraint
from ensemblekit.rows import check_rows
from ensemblekit.state import Array, Scalar

__all__ = ["PreprocessorModel", "feature_names", "layout"]


class PreprocessorModel:
    """The ``prep`` step of a registered algorithm, fitted: it transforms rows with numpy alone.

    Parameters
    ----------
    numeric_features : list of int
        Columns of ``X`` holding numeric attributes, ascending.
    nominal_features : list of int
        Columns holding nominal codes, ascending.
    n_categories : list of int
        Declared values (>= 1) of each nominal column, in the order of ``nominal_features``.
    impute_numeric : bool, default=True
        Replace a missing numeric value by the training mean.
    scale : {"none", "minmax"}, default="none"
        Rescale numeric columns to [0, 1] by the training range.

    Attributes
    ----------
    n_features_in_ : int
    numeric_fill_ : ndarray of float64 of shape (n_numeric,) or None
        Training mean of each numeric column (0 when it had no value); None
        without ``impute_numeric``.
    scale_, min_ : ndarray of float64 of shape (n_numeric,) or None
        ``x * scale_ + min_`` maps the training range to [0, 1]; None without
        ``scale="minmax"``.
    nominal_fill_ : ndarray of float64 of shape (n_nominal,)
        Training mode of each nominal column (its smallest code on ties, 0
        when it had no value).
    """

    _parameter_constraints = {
        "numeric_features": Constraint("any", "columns holding numeric attributes"),
        "nominal_features": Constraint("any", "columns holding nominal codes"),
        "n_categories": Constraint("any", "declared values of each nominal column"),
        "impute_numeric": Constraint("bool", "replace missing numbers by the training mean"),
        "scale": Constraint("choice", "numeric scaling", choices=("none", "minmax")),
    }

    _fitted_state = {
        "n_features_in_": Scalar("int", low=1),
        "numeric_fill_": Array("float64", ("n_numeric",), optional=True),
        "scale_": Array("float64", ("n_numeric",), low=0, optional=True),
        "min_": Array("float64", ("n_numeric",), optional=True),
        "nominal_fill_": Array("float64", ("n_nominal",), low=0),
    }

    def __init__(self, numeric_features=(), nominal_features=(), n_categories=(),
                 impute_numeric=True, scale="none"):
        self.numeric_features = numeric_features
        self.nominal_features = nominal_features
        self.n_categories = n_categories
        self.impute_numeric = impute_numeric
        self.scale = scale

    def _check_state(self, ctx) -> None:
        numeric, nominal = list(self.numeric_features), list(self.nominal_features)
        if self.n_features_in_ != len(numeric) + len(nominal):
            ctx.fail(f"n_features_in_ = {self.n_features_in_} is not the schema's "
                     f"{len(numeric) + len(nominal)} attributes")
        if self.nominal_fill_.shape != (len(nominal),):
            ctx.fail("nominal_fill_ does not have one mode per nominal attribute")
        if np.any(self.nominal_fill_ >= np.asarray(self.n_categories, dtype=float)) or np.any(
                self.nominal_fill_ != np.floor(self.nominal_fill_)):
            ctx.fail("nominal_fill_ holds a value that is not a code of its attribute")
        for name, wanted in (("numeric_fill_", self.impute_numeric),
                             ("scale_", self.scale == "minmax"), ("min_", self.scale == "minmax")):
            value = getattr(self, name)
            if (value is not None) != bool(wanted):
                ctx.fail(f"{name} is {'missing' if value is None else 'stored'}, but the "
                         "algorithm's preprocessing says otherwise")
            if value is not None and value.shape != (len(numeric),):
                ctx.fail(f"{name} does not have one entry per numeric attribute")

    def transform(self, X) -> np.ndarray:
        """Encode rows as the estimator reads them.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Numbers and nominal codes, NaN for a missing value.

        Returns
        -------
        ndarray of float64 of shape (n_samples, n_numeric + sum(n_categories))

        Raises
        ------
        ensemblekit.errors.InputError
            Rows of another width, or holding infinity.
        """
        X = check_rows(self, X)
        numeric = X[:, list(self.numeric_features)]
        if self.numeric_fill_ is not None:
            gaps = np.isnan(numeric)
            if gaps.any():
                numeric[gaps] = np.broadcast_to(self.numeric_fill_, numeric.shape)[gaps]
        if self.scale_ is not None:
            numeric *= self.scale_
            numeric += self.min_
        codes = X[:, list(self.nominal_features)]
        gaps = np.isnan(codes)
        if gaps.any():
            codes[gaps] = np.broadcast_to(self.nominal_fill_, codes.shape)[gaps]
        blocks = [numeric]
        for j, k in enumerate(self.n_categories):
            block = np.zeros((X.shape[0], int(k)), dtype=np.float64)
            column = codes[:, j]
            known = (column >= 0) & (column < k) & (column == np.floor(column))
            rows = np.flatnonzero(known)
            block[rows, column[rows].astype(np.intp)] = 1.0
            blocks.append(block)
        return np.hstack(blocks) if len(blocks) > 1 else numeric


def feature_names(schema) -> list[str]:
    """Names of the columns the preprocessing step produces, in order.

    Parameters
    ----------
    schema : ensemblekit.dataset.Schema

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


def layout(schema, *, impute_numeric: bool = True, scale: str = "none") -> dict:
    """The constructor arguments of the step for a training schema (numeric and nominal columns).

    Parameters
    ----------
    schema : ensemblekit.dataset.Schema
    impute_numeric, scale
        As :class:`PreprocessorModel`.

    Returns
    -------
    dict
    """
    numeric = [i for i, a in enumerate(schema.features) if a.kind == "numeric"]
    nominal = [i for i, a in enumerate(schema.features) if a.kind != "numeric"]
    return {"numeric_features": numeric, "nominal_features": nominal,
            "n_categories": [max(len(schema.features[i].values), 1) for i in nominal],
            "impute_numeric": impute_numeric, "scale": scale}
