"""Start-up hook of the staged cmlx package (build/pkg), which sits on
PYTHONPATH rather than in a site directory, where Python would read the
installed wheel's cmlx-as-mlx.pth: with CMLX_AS_MLX set (not 0), `import
mlx...` gives cmlx from the start.  Then it runs the sitecustomize that this
one shadows, if the interpreter has one, so that stays in effect."""

import os
import sys


def _run_shadowed_sitecustomize():
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.getcwd()) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


if os.environ.get("CMLX_AS_MLX", "") not in ("", "0"):
    import cmlx._mlx_alias

    cmlx._mlx_alias.install_from_environment()
_run_shadowed_sitecustomize()
