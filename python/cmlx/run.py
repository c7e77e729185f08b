"""Run a program written for MLX on cmlx, unedited:

    python -m cmlx.run script.py [args...]
    python -m cmlx.run -m package.module [args...]

Inside the program ``import mlx.core as mx`` (and mlx.nn, mlx.optimizers,
mlx.utils, ...) gives cmlx's modules; ``sys.argv`` is what the program
would see run directly. The same routing for any interpreter: set
``CMLX_AS_MLX=1`` (see ``cmlx._mlx_alias``).
"""

import importlib.util
import os
import runpy
import sys

from cmlx import _mlx_alias

USAGE = "usage: python -m cmlx.run script.py [args...] | -m module [args...]"


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    _mlx_alias.install()
    if argv[0] == "-m":
        if len(argv) < 2:
            print(USAGE, file=sys.stderr)
            return 2
        # As python -m does: one line, status 1, for a module not there.
        try:
            found = importlib.util.find_spec(argv[1]) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            print(f"cmlx.run: No module named {argv[1]}", file=sys.stderr)
            return 1
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        # As python does: one line, status 2, for a script it cannot open.
        # (a folder or zip with __main__.py runs too, as there)
        if not os.path.exists(argv[0]):
            print(f"cmlx.run: can't open file {os.path.abspath(argv[0])!r}: "
                  "[Errno 2] No such file or directory", file=sys.stderr)
            return 2
        sys.argv = argv
        # as `python script.py` does: the script's folder comes first
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
