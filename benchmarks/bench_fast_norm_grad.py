"""Gradients of mx.fast.layer_norm and mx.fast.rms_norm: dx, dw and db of
sum(norm(x) * g) for a (2048, 256) batch of rows (the transformer step's
shape, 16 x 128 tokens of width 256) and a (4096, 4096) one.

Backward alone: cmlx and MLX evaluate only the vjp's cotangents (the
forward node is not needed for them); PyTorch reuses a recorded forward
(torch.autograd.grad with retain_graph).  "fast" rows time cmlx's fused
LayerNormVJP / RMSNormVJP node; "composed" rows time the same rule built
from ops (CMLX_FAST_NORM_VJP=0, cmlx's previous path) and MLX's (whose
CPU gradient of mx.fast is its composition either way).  NumPy computes
the formulas in float32 in both rows.
"""

import os

import numpy as np

from harness import workload

EPS = 1e-5
_DATA = {}


def data(shape):
    if shape not in _DATA:
        rg = np.random.default_rng(11)
        n = shape[-1]
        _DATA[shape] = (rg.standard_normal(shape).astype(np.float32),
                        rg.uniform(0.5, 1.5, n).astype(np.float32),
                        rg.uniform(-1, 1, n).astype(np.float32),
                        rg.standard_normal(shape).astype(np.float32))
    return _DATA[shape]


def np_grads(x, w, g, layer):
    xc = x - x.mean(-1, keepdims=True) if layer else x
    n = 1 / np.sqrt((xc * xc).mean(-1, keepdims=True) + EPS)
    gw = g * w
    a = gw - gw.mean(-1, keepdims=True) if layer else gw
    dx = n * (a - xc * (n * n) * (gw * xc).mean(-1, keepdims=True))
    return dx, (g * xc * n).sum(0), g.sum(0)


def _make(shape, layer, fused):
    def make(fw):
        xn, wn, bn, gn = data(shape)
        if fw.name == "numpy":
            return lambda: np_grads(xn, wn, gn, layer)
        if fw.name == "torch":
            if not fused:
                return None  # PyTorch's row is the fused one
            torch = fw.mod
            F = torch.nn.functional
            x, w, b, g = (torch.from_numpy(a.copy()) for a in (xn, wn, bn, gn))
            prm = [x, w, b] if layer else [x, w]
            for p in prm:
                p.requires_grad_(True)
            y = F.layer_norm(x, (shape[-1],), w, b, EPS) if layer else \
                F.rms_norm(x, (shape[-1],), w, EPS)
            return lambda: torch.autograd.grad(y, prm, g, retain_graph=True)
        mx = fw.mod
        x, w, b, g = (fw.from_numpy(a) for a in (xn, wn, bn, gn))
        if layer:
            f, prm = (lambda x, w, b: mx.fast.layer_norm(x, w, b, EPS)), [x, w, b]
        else:
            f, prm = (lambda x, w: mx.fast.rms_norm(x, w, EPS)), [x, w]

        def run():
            if fw.name == "cmlx" and not fused:
                os.environ["CMLX_FAST_NORM_VJP"] = "0"
            try:
                _, grads = mx.vjp(f, prm, [g])
            finally:
                os.environ.pop("CMLX_FAST_NORM_VJP", None)
            fw.run(grads)
        return run
    return make


for _shape in ((2048, 256), (4096, 4096)):
    for _layer, _kind in ((True, "layer_norm"), (False, "rms_norm")):
        for _fused, _tag in ((True, "fast"), (False, "composed")):
            workload(f"{_kind} vjp {_shape[0]}x{_shape[1]} f32 {_tag}", family="fast_grad")(
                _make(_shape, _layer, _fused))
