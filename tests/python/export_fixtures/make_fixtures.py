"""Writes the .mlxfn fixtures of cases.py: cmlx/<case>.mlxfn with cmlx,
mlx/<case>.mlxfn with real MLX (where MLX can export it), and
<case>.npz holding the inputs of every call and the outputs cmlx and MLX
compute for them directly.  Run from the repository root:

  PYTHONPATH=build/pkg .venv/bin/python tests/python/export_fixtures/make_fixtures.py

The fixtures pin the bytes cmlx writes (test_export_fixtures.py compares a
fresh export with them, node ids aside) and the files each side must keep
reading; regenerate them only when the format is meant to change."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases  # noqa: E402
import cmlx.core as cm  # noqa: E402

try:
    import mlx.core as mlx
except ImportError:
    mlx = None

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    os.makedirs(os.path.join(HERE, "cmlx"), exist_ok=True)
    os.makedirs(os.path.join(HERE, "mlx"), exist_ok=True)
    for case in cases.CASES:
        name, opts = case[0], case[3]
        cases.export(cm, os.path.join(HERE, "cmlx", name + ".mlxfn"), case)
        data = {}
        for c, (args, kw) in enumerate(cases.calls(case)):
            for k, a in enumerate(args):
                data[f"in_{c}_{k}"] = np.asarray(a)
            for key, v in kw.items():
                data[f"kw_{c}_{key}"] = np.asarray(v)
            for k, o in enumerate(cases.run(cm, case, args, kw)):
                data[f"cm_{c}_{k}"] = o
            if mlx is not None and opts.get("mlx", True):
                for k, o in enumerate(cases.run(mlx, case, args, kw)):
                    data[f"mx_{c}_{k}"] = o
        np.savez_compressed(os.path.join(HERE, name + ".npz"), **data)
        if mlx is not None and opts.get("mlx", True):
            cases.export(mlx, os.path.join(HERE, "mlx", name + ".mlxfn"), case)
        print(name, "ok")


if __name__ == "__main__":
    main()
