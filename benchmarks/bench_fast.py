"""mx.fast: rms_norm and layer_norm over a (4096, 4096) float32 array, and
scaled_dot_product_attention of (1, 32, 1024, 128) float32 queries, keys and
values (no mask, and causal), and decode: one query per head against a
4096-long cache (1, 32, 4096, 128).

Each workload has two rows: "fast" times mx.fast in cmlx and MLX, and
"composed" times the same computation written as plain ops (MLX's
reference formulas) in cmlx and MLX.  NumPy computes the composition in
both rows (float32 throughout, matmul through its BLAS), so the numpy
column of a "fast" row compares cmlx's fused kernel with it.
"""

import math

import numpy as np

from harness import workload

N = 4096
B, H, L, D = 1, 32, 1024, 128
KV = 4096
EPS = 1e-5
_DATA = {}


def data():
    if not _DATA:
        rg = np.random.default_rng(7)
        _DATA["x"] = rg.standard_normal((N, N)).astype(np.float32)
        _DATA["w"] = rg.uniform(0.5, 1.5, N).astype(np.float32)
        _DATA["b"] = rg.uniform(-1, 1, N).astype(np.float32)
        _DATA["q"] = (0.5 * rg.standard_normal((B, H, L, D))).astype(np.float32)
        _DATA["k"] = (0.5 * rg.standard_normal((B, H, L, D))).astype(np.float32)
        _DATA["v"] = rg.standard_normal((B, H, L, D)).astype(np.float32)
        _DATA["q1"] = (0.5 * rg.standard_normal((B, H, 1, D))).astype(np.float32)
        _DATA["kc"] = (0.5 * rg.standard_normal((B, H, KV, D))).astype(np.float32)
        _DATA["vc"] = rg.standard_normal((B, H, KV, D)).astype(np.float32)
    return _DATA


# ---- NumPy references (float32) ----

def np_rms(x, w):
    return x * (1 / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + EPS)) * w


def np_ln(x, w, b):
    mu = x.mean(axis=-1, keepdims=True)
    xc = x - mu
    return xc * (1 / np.sqrt((xc * xc).mean(axis=-1, keepdims=True) + EPS)) * w + b


def np_sdpa(q, k, v, causal):
    s = (q * np.float32(1 / math.sqrt(D))) @ np.swapaxes(k, -1, -2)
    if causal:
        ql, kl = s.shape[-2:]
        keep = np.arange(ql)[:, None] + (kl - ql) >= np.arange(kl)[None]
        s = np.where(keep, s, np.float32(np.finfo(np.float32).min))
    s = np.exp(s - s.max(axis=-1, keepdims=True))
    s /= s.sum(axis=-1, keepdims=True)
    return s @ v


# ---- the same compositions in cmlx / MLX ops ----

def mx_rms(mx, x, w):
    return x * mx.rsqrt(mx.mean(mx.square(x), axis=-1, keepdims=True) + EPS) * w


def mx_ln(mx, x, w, b):
    mu = mx.mean(x, axis=-1, keepdims=True)
    var = mx.var(x, axis=-1, keepdims=True)
    return (x - mu) * mx.rsqrt(var + EPS) * w + b


def mx_sdpa(mx, q, k, v, causal):
    s = (q * (1 / math.sqrt(D))) @ mx.swapaxes(k, -1, -2)
    if causal:
        ql, kl = s.shape[-2:]
        keep = (mx.arange(ql)[:, None] + (kl - ql)) >= mx.arange(kl)[None]
        s = mx.where(keep, s, mx.finfo(mx.float32).min)
    return mx.softmax(s, axis=-1, precise=True) @ v


def _norm(kind, fused):
    def make(fw):
        d = data()
        x, w, b = (fw.from_numpy(d[n]) for n in ("x", "w", "b"))
        if fw.name == "torch":
            if not fused:
                return None  # one row per operation: the fused rows carry PyTorch's
            F = fw.mod.nn.functional
            if kind == "rms":
                return lambda: F.rms_norm(x, (x.shape[-1],), w, EPS)
            return lambda: F.layer_norm(x, (x.shape[-1],), w, b, EPS)
        if fw.name == "numpy":
            return (lambda: np_rms(x, w)) if kind == "rms" else (lambda: np_ln(x, w, b))
        mx = fw.mod
        if fused:
            if kind == "rms":
                return lambda: fw.run(mx.fast.rms_norm(x, w, EPS))
            return lambda: fw.run(mx.fast.layer_norm(x, w, b, EPS))
        if kind == "rms":
            return lambda: fw.run(mx_rms(mx, x, w))
        return lambda: fw.run(mx_ln(mx, x, w, b))
    return make


def _attn(names, causal, fused):
    def make(fw):
        d = data()
        q, k, v = (fw.from_numpy(d[n]) for n in names)
        if fw.name == "torch":
            if not fused:
                return None  # one row per operation: the fused rows carry PyTorch's
            F = fw.mod.nn.functional
            # a decode step attends to the whole cache, as mask=None does here
            is_causal = causal and q.shape[-2] > 1
            return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)
        if fw.name == "numpy":
            return lambda: np_sdpa(q, k, v, causal)
        mx = fw.mod
        if fused:
            mask = "causal" if causal else None
            f = mx.fast.scaled_dot_product_attention
            return lambda: fw.run(f(q, k, v, scale=1 / math.sqrt(D), mask=mask))
        return lambda: fw.run(mx_sdpa(mx, q, k, v, causal))
    return make


for _fused, _tag in ((True, "fast"), (False, "composed")):
    workload(f"rms_norm 4096x4096 f32 {_tag}", family="fast")(_norm("rms", _fused))
    workload(f"layer_norm 4096x4096 f32 {_tag}", family="fast")(_norm("ln", _fused))
    workload(f"sdpa 1x32x1024x128 f32 {_tag}", family="fast")(
        _attn(("q", "k", "v"), False, _fused))
    workload(f"sdpa causal 1x32x1024x128 {_tag}", family="fast")(
        _attn(("q", "k", "v"), True, _fused))
    workload(f"sdpa decode 1x32x1 kv4096 {_tag}", family="fast")(
        _attn(("q1", "kc", "vc"), False, _fused))


# ---- the gradient of attention (the training step's shape: batch 16, 4 heads,
# 128 positions, head size 64), d(sum(o * g)) / d(q, k, v) ----

GB, GH, GL, GD = 16, 4, 128, 64


def _attn_grad(fused):
    def make(fw):
        rg = np.random.default_rng(11)
        q, k, v, g = (fw.from_numpy((0.5 * rg.standard_normal((GB, GH, GL, GD))).astype(np.float32))
                      for _ in range(4))
        scale = 1 / math.sqrt(GD)
        if fw.name == "torch":
            if not fused:
                return None
            torch = fw.mod
            F = torch.nn.functional
            qs, ks, vs = (a.clone().requires_grad_(True) for a in (q, k, v))

            def step():
                for a in (qs, ks, vs):
                    a.grad = None
                (F.scaled_dot_product_attention(qs, ks, vs, scale=scale) * g).sum().backward()
            return step
        if fw.name == "numpy":
            return None
        mx = fw.mod
        if fused:
            f = lambda q, k, v: (mx.fast.scaled_dot_product_attention(q, k, v, scale=scale) * g).sum()
        else:
            f = lambda q, k, v: (mx_sdpa(mx, q, k, v, False) * g).sum()
        gf = mx.grad(f, argnums=(0, 1, 2))
        return lambda: fw.run(gf(q, k, v))
    return make


for _fused, _tag in ((True, "fast"), (False, "composed")):
    workload(f"sdpa grad 16x4x128x64 f32 {_tag}", family="fast")(_attn_grad(_fused))
