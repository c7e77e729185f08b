"""The gradient of scaled_dot_product_attention: grad of
(sdpa(q, k, v) * g).sum() with respect to q, k and v, float32, at the
shape of the Transformer training step (16, 4, 128, 64, no mask; bench_fast's
"sdpa grad" rows time PyTorch's forward and backward there) and at
(1, 32, 1024, 128) causal.

"fast" rows differentiate mx.fast.scaled_dot_product_attention (cmlx: the
fused SdpaVJP kernel); "composed" rows differentiate the same attention
written as plain ops.  PyTorch's column (fast rows) is its backward alone:
the forward is recorded once and autograd.grad replays the backward
(retain_graph), since the gradients here do not need the forward's output
either.  NumPy has no autodiff and sits these out.
"""

import math

import numpy as np

from harness import workload

_DATA = {}


def data(shape):
    if shape not in _DATA:
        rg = np.random.default_rng(11)
        _DATA[shape] = [(0.5 * rg.standard_normal(shape)).astype(np.float32) for _ in range(4)]
    return _DATA[shape]


def _composed(mx, q, k, v, scale, causal):
    s = (q * scale) @ mx.swapaxes(k, -1, -2)
    if causal:
        qL, kL = s.shape[-2:]
        keep = (mx.arange(qL)[:, None] + (kL - qL)) >= mx.arange(kL)[None]
        s = mx.where(keep, s, mx.finfo(s.dtype).min)
    return mx.softmax(s, axis=-1, precise=True) @ v


def _grad(shape, causal, fused):
    def make(fw):
        if fw.name == "numpy":
            return None
        q, k, v, g = (fw.from_numpy(a) for a in data(shape))
        scale = 1 / math.sqrt(shape[-1])
        if fw.name == "torch":
            if not fused:
                return None  # the fused rows carry PyTorch's
            torch = fw.mod
            q, k, v = (a.clone().requires_grad_(True) for a in (q, k, v))
            o = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                                 scale=scale)
            loss = (o * g).sum()
            return lambda: torch.autograd.grad(loss, (q, k, v), retain_graph=True)
        mx = fw.mod
        if fused:
            mask = "causal" if causal else None
            f = lambda q, k, v: mx.fast.scaled_dot_product_attention(q, k, v, scale=scale,
                                                                     mask=mask)
        else:
            f = lambda q, k, v: _composed(mx, q, k, v, scale, causal)
        df = mx.grad(lambda q, k, v: (f(q, k, v) * g).sum(), argnums=(0, 1, 2))
        return lambda: fw.run(df(q, k, v))
    return make


for _fused, _tag in ((True, "fast"), (False, "composed")):
    workload(f"sdpa backward 16x4x128x64 f32 {_tag}", family="fast")(
        _grad((16, 4, 128, 64), False, _fused))
    workload(f"sdpa backward causal 1x32x1024x128 {_tag}", family="fast")(
        _grad((1, 32, 1024, 128), True, _fused))
