"""Exported functions: export an MLP forward pass (three 512x512 layers
with constants) to an .mlxfn file, import it, and call the imported
function on a (64, 512) batch (the call rebuilds the graph through the op
constructors, then evaluates it).  cmlx and MLX only (NumPy and PyTorch
have no .mlxfn)."""

import os
import tempfile

import numpy as np

from harness import workload

_DIR = tempfile.mkdtemp(prefix="cmlx_bench_export_")
_RNG = np.random.default_rng(3)
_W = [_RNG.standard_normal((512, 512)).astype(np.float32) / 23 for _ in range(3)]
_X = _RNG.standard_normal((64, 512)).astype(np.float32)


def _mlp(fw):
    mx = fw.mod
    ws = [fw.from_numpy(w) for w in _W]
    for w in ws:
        fw.run(w)

    def f(x):
        for w in ws:
            x = mx.maximum(x @ w, 0.0)
        return mx.softmax(x, axis=-1).sum(axis=0)

    return f


def _path(fw):
    return os.path.join(_DIR, f"{fw.name}_mlp.mlxfn")


@workload("export mlp to .mlxfn", family="export")
def export_mlp(fw):
    if fw.name not in ("cmlx", "mlx"):
        return None
    f, x = _mlp(fw), fw.from_numpy(_X)
    return lambda: fw.mod.export_function(_path(fw), f, x)


@workload("import mlp .mlxfn", family="export")
def import_mlp(fw):
    if fw.name not in ("cmlx", "mlx"):
        return None
    fw.mod.export_function(_path(fw), _mlp(fw), fw.from_numpy(_X))
    return lambda: fw.mod.import_function(_path(fw))


@workload("call imported mlp (64, 512)", family="export")
def call_mlp(fw):
    if fw.name not in ("cmlx", "mlx"):
        return None
    x = fw.from_numpy(_X)
    fw.mod.export_function(_path(fw), _mlp(fw), x)
    g = fw.mod.import_function(_path(fw))
    return lambda: fw.run(g(x)[0])
