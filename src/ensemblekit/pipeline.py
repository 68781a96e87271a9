"""A fitted ``prep -> model`` pair rebuilt from a model file: predicts with numpy alone.

A registered algorithm is fitted as a scikit-learn ``Pipeline`` of its
preprocessing step and its estimator (:func:`ensemblekit.registry.make_estimator`).
A model file stores the two steps' declared state; reading it back gives a
:class:`ModelPipeline` of their *model classes* (:mod:`ensemblekit.state`), which
offers the part of the ``Pipeline`` interface that predicting, showing and
scoring use (``steps``, ``named_steps``, indexing and slicing, ``transform``,
``predict``, ``predict_proba``, ``classes_``, ``set_params(model__...)``)
without importing scikit-learn.
"""

from __future__ import annotations

__all__ = ["ModelPipeline"]


class ModelPipeline:
    """Preprocessing steps then a final model, each already fitted.

    Parameters
    ----------
    steps : list of (str, object)
        ``[("prep", step or "passthrough"), ("model", model)]``: every step but
        the last has ``transform``; the last predicts.
    """

    def __init__(self, steps):
        self.steps = list(steps)

    @property
    def named_steps(self) -> dict:
        """The steps by name."""
        return dict(self.steps)

    def __len__(self) -> int:
        return len(self.steps)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return ModelPipeline(self.steps[index])
        return self.steps[index][1]

    def transform(self, X):
        """Apply every step that transforms (all of them in a slice without the model)."""
        for _, step in self.steps:
            if step != "passthrough" and hasattr(step, "transform"):
                X = step.transform(X)
        return X

    def predict(self, X):
        """The final model's ``predict`` of the prepared rows."""
        return self[-1].predict(self[:-1].transform(X))

    def predict_proba(self, X):
        """The final model's ``predict_proba`` of the prepared rows."""
        return self[-1].predict_proba(self[:-1].transform(X))

    @property
    def classes_(self):
        """The final model's class labels."""
        return self.steps[-1][1].classes_

    def get_params(self, deep: bool = True) -> dict:
        """``model__<name>`` for each constructor parameter the final model holds (and ``deep``)."""
        out = {}
        for name, step in self.steps:
            if step == "passthrough":
                continue
            params = getattr(type(step), "_parameter_constraints", {})
            out.update({f"{name}__{key}": getattr(step, key) for key in params if hasattr(step, key)})
        return out

    def set_params(self, **params) -> ModelPipeline:
        """Set ``<step>__<name>`` parameters on the steps (``model__n_jobs=2``)."""
        steps = self.named_steps
        for key, value in params.items():
            step, _, name = key.partition("__")
            if step not in steps or not name:
                raise ValueError(f"invalid parameter {key!r} for a ModelPipeline")
            setattr(steps[step], name, value)
        return self
