"""Quantized products: 4-bit affine quantized_matmul (group 64) of x (M, 4096)
with w (4096, 4096) stored packed (8 MiB of weights instead of 64 MiB), for
M = 1, 2, 8, 32, 128 and 512, beside the float32 product of the same shape
(x @ w.T: NumPy, PyTorch, MLX and cmlx call their BLAS) and beside
dequantize followed by that float32 product (what quantized_matmul must not
be slower than).  Also group sizes 32 and 128, 8 bits and 2 bits at M = 1,
2 and 8 (the decode-once loops: they must beat the float32 product, which
reads 4-8x the bytes) and at M = 32 and 512 (dequantized tiles and sgemm).
cmlx and MLX run quantized_matmul; the other frameworks have no such op
(None).  Also quantize itself on the 4096 x 4096 matrix."""

import numpy as np

from harness import workload

K = N = 4096
_DATA = {}


def data():
    if not _DATA:
        rg = np.random.default_rng(7)
        _DATA["w"] = (rg.standard_normal((N, K)) / 64).astype(np.float32)
        for m in (1, 2, 8, 32, 128, 512):
            _DATA[m] = rg.standard_normal((m, K)).astype(np.float32)
    return _DATA


def _qmm(m, gs=64, bits=4, dequant=False):
    def build(fw):
        if fw.name not in ("cmlx", "mlx"):
            return None
        mx, d = fw.mod, data()
        x, w = fw.from_numpy(d[m]), fw.from_numpy(d["w"])
        wq, s, b = mx.quantize(w, group_size=gs, bits=bits)
        mx.eval(wq, s, b)
        if dequant:
            return lambda: fw.run(x @ mx.dequantize(wq, s, b, gs, bits).T)
        return lambda: fw.run(mx.quantized_matmul(x, wq, s, b, True, gs, bits))
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


for _m in (1, 2, 8, 32, 128, 512):
    workload(f"qmm 4bit g64 x({_m},4096) w(4096,4096)", family="quant")(_qmm(_m))
    workload(f"dequantize+matmul 4bit g64 x({_m},4096)", family="quant")(
        _qmm(_m, dequant=True))
    workload(f"matmul f32 x({_m},4096) @ w(4096,4096).T", family="quant")(_f32(_m))
for _m in (1, 2, 8):
    for _gs, _bits in ((32, 4), (128, 4), (64, 8), (64, 2)):
        workload(f"qmm {_bits}bit g{_gs} x({_m},4096) w(4096,4096)", family="quant")(
            _qmm(_m, _gs, _bits))
for _m in (32, 512):
    for _gs, _bits in ((32, 4), (128, 4), (64, 8)):
        workload(f"qmm {_bits}bit g{_gs} x({_m},4096) w(4096,4096)", family="quant")(
            _qmm(_m, _gs, _bits))
        workload(f"dequantize+matmul {_bits}bit g{_gs} x({_m},4096)", family="quant")(
            _qmm(_m, _gs, _bits, dequant=True))


@workload("quantize 4bit g64 (4096,4096)", family="quant")
def quantize_big(fw):
    if fw.name not in ("cmlx", "mlx"):
        return None
    w = fw.from_numpy(data()["w"])
    return lambda: fw.run(fw.mod.quantize(w, group_size=64, bits=4))
