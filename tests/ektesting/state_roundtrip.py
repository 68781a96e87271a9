"""Store a fitted estimator's declared state and rebuild it as its model class, in memory.

What a model file does, without the file: :func:`ensemblekit.state.collect` the
declared state, then :func:`ensemblekit.state.restore` it as ``model_cls`` built
with the estimator's own parameters. Tests compare the rebuilt model's
predictions with the estimator's, and tamper with ``arrays`` / ``scalars`` to
see a damaged state refused.
"""

from __future__ import annotations

import json

from ensemblekit import state


def stored(est):
    """``(params, scalars, arrays)`` as a model file would hold them (scalars through JSON;
    array names without the ``model/`` prefix, e.g. ``"feature_"``, ``"estimators_/0/value_"``)."""
    scalars, arrays = state.collect(est)
    return est.get_params(deep=False), json.loads(json.dumps(scalars)), dict(arrays)


def roundtrip(est, model_cls=None, *, tamper=None):
    """The estimator's state rebuilt as ``model_cls`` (default: the estimator's first base).

    ``tamper(params, scalars, arrays)`` may edit the stored parts first.
    """
    model_cls = model_cls or type(est).__mro__[1]
    params, scalars, arrays = stored(est)
    if tamper is not None:
        tamper(params, scalars, arrays)
    return state.restore(model_cls, params, scalars,
                         {f"model/{key}": value for key, value in arrays.items()})
