"""Make ``import mlx...`` give cmlx's modules, so code written for MLX runs
on cmlx unedited.

``install()`` puts a finder first on ``sys.meta_path``: ``mlx`` is the
``cmlx`` package and ``mlx.X`` the module ``cmlx.X``, registered under both
names (``mlx.core is cmlx.core``), whether or not real MLX is installed.
Nothing is copied or renamed on disk. Two ways in:

* ``python -m cmlx.run script.py args...`` (or ``-m module``), see
  ``cmlx.run``;
* the environment switch ``CMLX_AS_MLX=1``: an installed cmlx ships a
  ``.pth`` file that calls ``install()`` at interpreter start when the
  switch is set (and does nothing, not even import cmlx, otherwise).
"""

import importlib
import importlib.abc
import importlib.util
import sys

ENV_SWITCH = "CMLX_AS_MLX"


class _MlxToCmlx(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name == "mlx" or name.startswith("mlx."):
            try:
                counterpart = importlib.util.find_spec("cmlx" + name[3:])
            except ModuleNotFoundError:
                counterpart = None
            if counterpart is None:
                return None  # no cmlx counterpart: the usual ModuleNotFoundError
            return importlib.util.spec_from_loader(name, self)
        return None

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
