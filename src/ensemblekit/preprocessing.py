"""The preprocessing step an estimator is fitted behind: the scikit-learn face of its model.

:class:`Preprocessor` learns the training means, ranges and modes that
:class:`~ensemblekit.preprocessing_model.PreprocessorModel` (numpy only, what a
model file rebuilds) applies; see that module for the columns it produces.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from ensemblekit.errors import InputError
from ensemblekit.preprocessing_model import PreprocessorModel, feature_names, layout
from ensemblekit.rows import check_rows

__all__ = ["Preprocessor", "feature_names", "make_preprocessor"]


class Preprocessor(PreprocessorModel, TransformerMixin, BaseEstimator):
    """Impute, scale and one-hot encode the attributes of a data set (the ``prep`` step).

    Parameters are those of :class:`~ensemblekit.preprocessing_model.PreprocessorModel`;
    :func:`make_preprocessor` derives them from a training schema.

    Examples
    --------
    >>> import numpy as np
    >>> from ensemblekit.preprocessing import Preprocessor
    >>> step = Preprocessor([0], [1], [3]).fit(np.array([[1.0, 2.0], [np.nan, 0.0], [3.0, 2.0]]))
    >>> step.transform(np.array([[np.nan, np.nan]])).tolist()
    [[2.0, 0.0, 0.0, 1.0]]
    """

    def fit(self, X, y=None):
        """Learn the fill values and ranges from training rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numbers and nominal codes, NaN for a missing value.
        y : ignored

        Returns
        -------
        self

        Raises
        ------
        ensemblekit.errors.InputError
            ``X`` is not 2-d numbers, its width is not the schema's, or it holds infinity.
        """
        numeric, nominal = list(self.numeric_features), list(self.nominal_features)
        if self.scale not in ("none", "minmax"):
            raise InputError(f"scale must be 'none' or 'minmax', got {self.scale!r}")
        self.n_features_in_ = len(numeric) + len(nominal)
        X = check_rows(self, X)
        values = X[:, numeric]
        gaps = np.isnan(values)
        if self.impute_numeric:
            # the masked mean: the sum of the known values (gaps as 0) times 1., over their count
            count = (~gaps).sum(axis=0)
            known = np.where(gaps, 0.0, values)
            with np.errstate(over="ignore", invalid="ignore"):
                total = known.sum(axis=0) * 1.0
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = total / count
            for j in np.flatnonzero(~np.isfinite(total)):
                # values near the float limits overflow the sum: add them up in a power-of-two
                # unit of their own (exact), where the mean has the bits it has on the same
                # data scaled into the ordinary range
                unit = int(np.frexp(np.abs(known[:, j]).max())[1])
                mean[j] = np.ldexp(np.ldexp(known[:, j], -unit).sum() * 1.0 / count[j], unit)
            mean[count == 0] = 0.0
            self.numeric_fill_ = mean
            values = values.copy()
            values[gaps] = np.broadcast_to(mean, values.shape)[gaps]
        else:
            self.numeric_fill_ = None
        if self.scale == "minmax":
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN column
                low, high = np.nanmin(values, axis=0), np.nanmax(values, axis=0)
            span = high - low
            span[span < 10 * np.finfo(np.float64).eps] = 1.0
            self.scale_ = (1.0 - 0.0) / span
            self.min_ = 0.0 - low * self.scale_
        else:
            self.scale_ = self.min_ = None
        modes = np.zeros(len(nominal), dtype=np.float64)
        for j, column in enumerate(nominal):
            known = X[:, column][~np.isnan(X[:, column])]
            if known.size:
                found, counts = np.unique(known, return_counts=True)
                modes[j] = found[np.argmax(counts)]  # the smallest of the most frequent
        self.nominal_fill_ = modes
        return self


def make_preprocessor(schema, *, impute_numeric: bool = True, scale: str = "none") -> Preprocessor:
    """Build the unfitted ``prep`` step for a training schema.

    Parameters
    ----------
    schema : ensemblekit.dataset.Schema
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
    Preprocessor
        Output columns: numeric attributes first (file order), then one indicator
        column per declared value of each nominal attribute (file order); their
        names are :func:`feature_names`.

    Raises
    ------
    ValueError
        If ``scale`` is not one of the accepted values.
    """
    if scale not in ("none", "minmax"):
        raise InputError(f"scale must be 'none' or 'minmax', got {scale!r}")
    return Preprocessor(**layout(schema, impute_numeric=impute_numeric, scale=scale))
