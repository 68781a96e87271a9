"""Start-up speed: adjust a library module while Python first imports it.

A command-line run of ensemblekit spends most of its time importing the
scientific stack, not computing. One piece of that import work builds things
ensemblekit never reads:

* scipy (1.15 and later) rewrites the docstring of every function that its
  private ``xp_capabilities`` decorator marks, parsing the whole docstring
  with ``scipy._lib._docscrape.FunctionDoc`` to append a table of array-API
  backends. ``import scipy.stats`` alone decorates hundreds of functions:
  about 0.2 s of a 1 s ``ensemblekit fit`` (scipy issue #22510 discusses the
  same cost for the distributions' docstrings).

:func:`around_import` runs code just before and just after the body of one
named module executes, the first time it is imported, through a one-shot
finder on :data:`sys.meta_path`; the module is found and loaded by the
finders and loaders Python would have used anyway. If the module is already
imported nothing happens; nor for a module that has no loader (a namespace
package) or that only an old-style finder (``find_module`` without
``find_spec``) knows. If a later library version renames what the hooks
touch, the hooks do nothing and the import runs as usual. The finder list is
replaced, never changed in place, so an import under way in another thread
keeps walking the list it started with.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType

# The finder and loader below follow the protocols of importlib.abc.MetaPathFinder and
# Loader without deriving from them: importing importlib.abc loads importlib.resources,
# about 3 ms of every command's start (sys.meta_path takes any object with find_spec).

__all__ = ["around_import", "plain_scipy_docstrings"]


class _HookedLoader:
    """Delegates to the real loader and runs the hooks around ``exec_module``."""

    def __init__(self, real, before, after):
        self._real, self._before, self._after = real, before, after

    def create_module(self, spec):
        return self._real.create_module(spec)

    def exec_module(self, module):
        # the module keeps its real loader (inspect, reload and pkgutil read it)
        module.__loader__ = self._real
        if module.__spec__ is not None:
            module.__spec__.loader = self._real
        state = self._before() if self._before is not None else None
        try:
            self._real.exec_module(module)
        finally:
            if self._after is not None:
                self._after(module, state)


class _OneShotFinder:
    """Finds module ``name`` with the other finders, then removes itself."""

    def __init__(self, name, before, after):
        self.name, self._before, self._after = name, before, after

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name:
            return None
        self.remove()
        for finder in list(sys.meta_path):
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _HookedLoader(spec.loader, self._before, self._after)
        return spec

    def remove(self) -> None:
        """Take the finder off :data:`sys.meta_path` (no error if it is gone)."""
        sys.meta_path = [finder for finder in sys.meta_path if finder is not self]


def around_import(
    name: str,
    before: Callable[[], object] | None = None,
    after: Callable[[ModuleType, object], None] | None = None,
) -> _OneShotFinder | None:
    """Run ``before()`` and ``after(module, state)`` around the first import of ``name``.

    Parameters
    ----------
    name : str
        Full dotted name of the module, e.g. ``"scipy._lib._array_api"``.
    before : callable, optional
        Called with no argument just before the module's body runs; what it
        returns is passed to ``after`` as ``state``.
    after : callable, optional
        Called with the module and ``state`` just after its body has run,
        also when the body raised.

    Returns
    -------
    finder or None
        The installed finder (its ``remove()`` withdraws the hooks if the
        module was never imported; the same finder when these hooks were
        already waiting for ``name``), or None when ``name`` is already in
        :data:`sys.modules` and nothing was installed.
    """
    if name in sys.modules:
        return None
    for finder in sys.meta_path:  # asked again before the import: one finder is enough
        if (isinstance(finder, _OneShotFinder) and finder.name == name
                and (finder._before, finder._after) == (before, after)):
            return finder
    finder = _OneShotFinder(name, before, after)
    sys.meta_path = [finder, *sys.meta_path]
    return finder


class _DocstringAsIs:
    """Stands in for scipy's ``FunctionDoc`` inside ``xp_capabilities``.

    The decorator appends a note to the parsed docstring's Notes section and
    renders it back, dropping the first (signature) line. Here nothing is
    parsed: sections read as empty lists that nobody renders, and the text
    comes back as the function's own docstring (the decorator then strips
    its leading blank lines; a missing docstring becomes ``""``).
    """

    def __init__(self, func):
        self._text = getattr(func, "__doc__", None) or ""

    def __getitem__(self, section):
        return []

    def __str__(self):
        return "\n" + self._text


def _use_docstring_as_is(module: ModuleType, state: object) -> None:
    if hasattr(module, "FunctionDoc") and hasattr(module, "xp_capabilities"):
        module.FunctionDoc = _DocstringAsIs


def plain_scipy_docstrings() -> None:
    """Let scipy's ``xp_capabilities`` keep docstrings as they are, for this process.

    scipy's functions then lack the appended table of supported array
    backends in their ``__doc__``; everything else (the capability registry
    the decorator fills, the functions themselves) is unchanged. Called by
    the command line and by the worker processes that ``compare`` warms up
    (:meth:`ensemblekit.experiment.Runner.prestart`), which never show scipy
    docstrings; importing the library does not call it. Does nothing when
    scipy is already imported.
    """
    around_import("scipy._lib._array_api", after=_use_docstring_as_is)
