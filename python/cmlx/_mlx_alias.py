"""Make ``import mlx...`` give cmlx's modules, so code written for MLX runs
on cmlx unedited.

``install()`` puts a finder first on ``sys.meta_path``: ``mlx`` is the
``cmlx`` package and ``mlx.X`` the module ``cmlx.X``, registered under both
names (``mlx.core is cmlx.core``), whether or not real MLX is installed.
An ``mlx.X`` that cmlx has no counterpart for and that another installed
distribution provides in the ``mlx`` namespace (``mlx.data`` from mlx-data,
say) loads from there as it would on MLX; one that only real MLX's own
wheel provides (``mlx.extension``) is a ModuleNotFoundError, since it would
mix the two libraries.  Nothing is copied or renamed on disk. Ways in:

* ``python -m cmlx.run script.py args...`` (or ``-m module``), see
  ``cmlx.run``;
* the environment switch ``CMLX_AS_MLX=1``: an installed cmlx ships a
  ``.pth`` file that calls ``install()`` at interpreter start when the
  switch is set (and does nothing, not even import cmlx, otherwise).
  Python reads ``.pth`` files from site directories only; for the staged
  package on ``PYTHONPATH`` (build/pkg) a ``sitecustomize`` there does the
  same (``python/startup/sitecustomize.py``).
"""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

ENV_SWITCH = "CMLX_AS_MLX"

# The distributions that are real MLX itself: their mlx.* modules are never
# passed through.
_MLX_OWN_DISTRIBUTIONS = ("mlx", "mlx-cpu", "mlx-cuda", "mlx-metal")


def _mlx_own_submodules():
    """The first-level mlx.X names that real MLX's own wheels install."""
    from importlib import metadata

    names = set()
    for dist in _MLX_OWN_DISTRIBUTIONS:
        try:
            files = metadata.files(dist) or []
        except metadata.PackageNotFoundError:
            continue
        for f in files:
            parts = f.parts
            if len(parts) >= 2 and parts[0] == "mlx":
                names.add(parts[1].split(".")[0])
    return names


def _namespace_dirs():
    """The installed mlx namespace folders (site-packages/mlx), cmlx's own
    package folder excluded."""
    own = os.path.dirname(os.path.abspath(__file__))
    dirs = []
    for entry in sys.path:
        d = os.path.join(entry or os.getcwd(), "mlx")
        if os.path.isdir(d) and os.path.abspath(d) != own and d not in dirs:
            dirs.append(d)
    return dirs


class _MlxToCmlx(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self):
        self._mlx_own = None  # computed on the first pass-through lookup

    def find_spec(self, name, path=None, target=None):
        if name == "mlx" or name.startswith("mlx."):
            try:
                counterpart = importlib.util.find_spec("cmlx" + name[3:])
            except ModuleNotFoundError:
                counterpart = None
            if counterpart is None:
                return self._pass_through(name, path)
            return importlib.util.spec_from_loader(name, self)
        return None

    def _pass_through(self, name, path):
        """The spec of another distribution's mlx.X (and its submodules,
        found from its own __path__), or None: the usual ModuleNotFoundError."""
        parts = name.split(".")
        if len(parts) < 2:
            return None
        if len(parts) > 2:
            # a submodule of a passed-through package: its parent's path
            parent = sys.modules.get(".".join(parts[:-1]))
            if parent is None or not getattr(parent, "__name__", "").startswith("mlx."):
                return None
            return importlib.machinery.PathFinder.find_spec(name, path)
        if self._mlx_own is None:
            self._mlx_own = _mlx_own_submodules()
        if parts[1] in self._mlx_own:
            return None  # real MLX's own module: would mix the two libraries
        return importlib.machinery.PathFinder.find_spec(name, _namespace_dirs())

    def create_module(self, spec):
        module = importlib.import_module("cmlx" + spec.name[3:])
        sys.modules[spec.name] = module
        return module

    def exec_module(self, module):
        pass  # already executed as the cmlx module


def installed():
    return any(isinstance(f, _MlxToCmlx) for f in sys.meta_path)


def install():
    """Route ``mlx`` imports to cmlx from now on (idempotent). Raises
    RuntimeError when real MLX modules were imported already, since code
    holding them would mix two libraries."""
    if installed():
        return
    loaded = sorted(n for n, m in sys.modules.items()
                    if (n == "mlx" or n.startswith("mlx.")) and m is not None
                    and not getattr(m, "__name__", "").startswith("cmlx"))
    if loaded:
        raise RuntimeError(
            "cmlx: real MLX modules are already imported (%s); route mlx to cmlx "
            "before anything imports mlx" % ", ".join(loaded[:3]))
    sys.meta_path.insert(0, _MlxToCmlx())


def install_from_environment():
    """Called by the .pth file at start-up."""
    import os

    if os.environ.get(ENV_SWITCH, "") not in ("", "0"):
        install()
