"""One core per unit: BLAS/OpenMP limited to one thread and joblib sequential while a unit runs.

See :class:`OneCore`; the experiment runner (:mod:`ensemblekit.experiment.runner`) and
parallel prediction (:mod:`ensemblekit.app.predicting`) pin the threads that run units.
"""

from __future__ import annotations

import contextlib
import sys
import threading

from ensemblekit._imports import around_import

__all__ = ["OneCore"]


class OneCore:
    """Runs code on one core: BLAS/OpenMP limited to one thread, joblib sequential.

    A unit runs on one core, whatever runs it: BLAS/OpenMP reductions then add
    up in the same order in a serial run, a joblib worker or a Dask worker (so
    results are identical bit for bit), parallelism comes from running units
    side by side, and scikit-learn's own joblib calls stay in the process that
    runs the unit (under the dask backend they would otherwise be sent back to
    the cluster as tiny tasks, several times slower).

    :meth:`pinned` is re-entrant per thread: inside a block pinned by the same
    object in the same thread, it does nothing, so a serial run pins its thread
    once rather than once per unit. The state is this object's own (one per
    :class:`Runner`), and a copy sent to another process (pickled) arrives
    unpinned.
    """

    def __init__(self):
        self._state = threading.local()

    def __reduce__(self):
        return (OneCore, ())

    @property
    def active(self) -> bool:
        """Whether the calling thread is inside a block pinned by this object."""
        return getattr(self._state, "active", False)

    #: Modules whose first import loads a thread pool to limit (scipy's BLAS, scikit-learn's
    #: OpenMP runtime) or sets up joblib, which must run sequentially within a unit.
    _HOOKED = ("scipy.linalg", "sklearn", "joblib")

    @contextlib.contextmanager
    def pinned(self):
        """Limit BLAS/OpenMP to one thread and joblib to sequential in the calling thread.

        threadpoolctl limits only the thread pools of libraries already loaded, and
        scipy and scikit-learn load theirs with their extension modules. So the
        limits are applied again, and joblib set to its sequential backend, when
        scipy's linear algebra, scikit-learn or joblib is first imported, before
        the block or inside it (an import hook,
        :func:`ensemblekit._imports.around_import`, runs in the thread that imports
        it); scikit-learn's OpenMP runtime is loaded first. The units that need none
        of them, such as ``c45`` on coded rows, then never import them (about half
        a second of a run's start, issue 30), and those that do still run on one core.
        """
        if self.active:
            self._cover(self._HOOKED)
            yield
            return
        from threadpoolctl import threadpool_limits

        state = self._state
        state.active, state.covered = True, set()
        try:
            with contextlib.ExitStack() as stack:
                state.stack = stack
                stack.enter_context(threadpool_limits(limits=1))
                self._cover(self._HOOKED)
                for name in self._HOOKED:
                    hook = None if name in state.covered else around_import(name, after=self._imported)
                    if hook is not None:
                        stack.callback(hook.remove)
                yield
        finally:
            state.active, state.stack = False, None

    def _imported(self, module, _state) -> None:
        """After the first import of a hooked module: cover it if this thread is pinned.
        joblib's hook may run while scikit-learn is still being imported (it imports
        joblib): it covers joblib alone."""
        if self.active:
            self._cover((module.__name__,))

    def _cover(self, names) -> None:
        """Limit the thread pools, or set joblib sequential, for those of ``names`` that are
        imported and not covered yet."""
        state = self._state
        new = [n for n in names if n not in state.covered and n in sys.modules]
        if not new:
            return
        state.covered.update(new)
        if "joblib" in new:
            from joblib import parallel_config

            state.stack.enter_context(parallel_config(backend="sequential"))
        if "sklearn" in new:
            import sklearn.utils._openmp_helpers  # noqa: F401 - loads the OpenMP runtime
        if set(new) - {"joblib"}:
            from threadpoolctl import threadpool_limits

            state.stack.enter_context(threadpool_limits(limits=1))  # every library loaded now
