"""Quantized products: 4-bit affine quantized_matmul (group 64) of x (M, 4096)
with w (4096, 4096) stored packed (8 MiB of weights instead of 64 MiB), for
M = 1, 32 and 512, beside the float32 product of the same shape (x @ w.T:
NumPy, PyTorch, MLX and cmlx call their BLAS).  cmlx and MLX run
quantized_matmul; the other frameworks have no such op (None).  Also
quantize itself on the 4096 x 4096 matrix."""

import numpy as np

from harness import workload

K = N = 4096
_DATA = {}


def data():
    if not _DATA:
        rg = np.random.default_rng(7)
        _DATA["w"] = (rg.standard_normal((N, K)) / 64).astype(np.float32)
        for m in (1, 32, 512):
            _DATA[m] = rg.standard_normal((m, K)).astype(np.float32)
    return _DATA


def _qmm(m):
    def build(fw):
        if fw.name not in ("cmlx", "mlx"):
            return None
        d = data()
        x, w = fw.from_numpy(d[m]), fw.from_numpy(d["w"])
        wq, s, b = fw.mod.quantize(w, group_size=64, bits=4)
        fw.mod.eval(wq, s, b)
        return lambda: fw.run(fw.mod.quantized_matmul(x, wq, s, b, True, 64, 4))
    return build


def _f32(m):
    def build(fw):
        d = data()
        x, w = fw.from_numpy(d[m]), fw.from_numpy(d["w"])
        if fw.name in ("numpy", "torch"):
            wt = w.T
            return lambda: x @ wt
        wt, _ = fw.transpose(w)
        return lambda: fw.run(x @ wt)
    return build


for _m in (1, 32, 512):
    workload(f"qmm 4bit g64 x({_m},4096) w(4096,4096)", family="quant")(_qmm(_m))
    workload(f"matmul f32 x({_m},4096) @ w(4096,4096).T", family="quant")(_f32(_m))


@workload("quantize 4bit g64 (4096,4096)", family="quant")
def quantize_big(fw):
    if fw.name not in ("cmlx", "mlx"):
        return None
    w = fw.from_numpy(data()["w"])
    return lambda: fw.run(fw.mod.quantize(w, group_size=64, bits=4))
