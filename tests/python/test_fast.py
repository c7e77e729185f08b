"""mx.fast: rms_norm, layer_norm, rope, scaled_dot_product_attention and the
custom-kernel entry points.

Values are checked against NumPy references (float64) across dtypes,
shapes and layouts (transposed, sliced, broadcast); gradients, jvps and
vmaps against the same computation written as plain ops (differentiated
by the engines); errors by exception type (and message where MLX's
suite reads it); and results against real MLX where it is importable.
"""

import math

import numpy as np
import pytest

from conftest import mlx_ref, mx, needs_oracle

FLOATS = ["float32", "float16", "bfloat16", "float64"]
TOL = {"float32": 2e-5, "float16": 4e-3, "bfloat16": 3e-2, "float64": 1e-5}


def arr(x, dtype="float32"):
    return mx.array(np.asarray(x, np.float32)).astype(getattr(mx, dtype))


def npf(a):
    return np.array(a.astype(mx.float32)).astype(np.float64)


def close(got, want, dtype="float32", scale=1.0):
    want = np.asarray(want, np.float64)
    assert tuple(got.shape) == want.shape
    g = npf(got)
    tol = TOL[dtype] * max(scale, 1.0)
    np.testing.assert_allclose(g, want, rtol=tol, atol=tol)


def rnd(shape, seed=0, lo=-1.0, hi=1.0):
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(np.float32)


# ---------------------------------------------------------------- norms

def np_rms(x, w, eps):
    x = x.astype(np.float64)
    y = x / np.sqrt((x * x).mean(-1, keepdims=True) + eps)
    return y * w if w is not None else y


def np_ln(x, w, b, eps):
    x = x.astype(np.float64)
    mu = x.mean(-1, keepdims=True)
    y = (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(7,), (3, 33), (2, 3, 256), (4, 1), (0, 8), (2, 4099)])
def test_rms_norm_values(dtype, shape):
    x, w = rnd(shape, 1), rnd(shape[-1:], 2, 0.5, 1.5)
    for wt in (w, None):
        got = mx.fast.rms_norm(arr(x, dtype), None if wt is None else arr(wt, dtype), 1e-5)
        assert got.dtype == getattr(mx, dtype)
        close(got, np_rms(x, wt, 1e-5), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(7,), (3, 33), (2, 3, 128), (0, 8), (2, 4099)])
def test_layer_norm_values(dtype, shape):
    x, w, b = rnd(shape, 1, 0, 4), rnd(shape[-1:], 2, 0.5, 1.5), rnd(shape[-1:], 3)
    for wt, bt in ((w, b), (w, None), (None, b), (None, None)):
        got = mx.fast.layer_norm(arr(x, dtype), None if wt is None else arr(wt, dtype),
                                 None if bt is None else arr(bt, dtype), 1e-5)
        assert got.dtype == getattr(mx, dtype)
        close(got, np_ln(x, wt, bt, 1e-5), dtype)


@pytest.mark.parametrize("layout", ["transposed", "sliced", "strided", "broadcast"])
def test_norm_layouts(layout):
    base = rnd((6, 10, 12), 4)
    a = mx.array(base)
    if layout == "transposed":
        a, x = mx.swapaxes(a, 0, 2), np.swapaxes(base, 0, 2)
    elif layout == "sliced":
        a, x = a[:, 3:, 1:9], base[:, 3:, 1:9]
    elif layout == "strided":
        a, x = a[::2, :, ::3], base[::2, :, ::3]
    else:
        a, x = mx.broadcast_to(a[:1, :1], (6, 10, 12)), np.broadcast_to(base[:1, :1], (6, 10, 12))
    w = rnd(x.shape[-1:], 5)
    close(mx.fast.rms_norm(a, mx.array(w), 1e-6), np_rms(x, w, 1e-6))
    close(mx.fast.layer_norm(a, mx.array(w), None, 1e-6), np_ln(x, w, None, 1e-6))


def test_norm_dtype_promotion():
    x = arr(rnd((2, 8)), "float16")
    w = arr(rnd((8,)), "float32")
    assert mx.fast.rms_norm(x, w, 1e-5).dtype == mx.float32
    assert mx.fast.layer_norm(x, w, None, 1e-5).dtype == mx.float32
    assert mx.fast.layer_norm(x, None, w, 1e-5).dtype == mx.float16  # bias alone: x's dtype
    xi = mx.array(np.arange(16, dtype=np.int32).reshape(2, 8))
    got = mx.fast.rms_norm(xi, mx.ones((8,)), 1e-5)
    assert got.dtype == mx.float32
    close(got, np_rms(np.arange(16).reshape(2, 8), np.ones(8), 1e-5))


def test_norm_errors():
    x = mx.ones((4, 8))
    with pytest.raises(ValueError, match="at least 1 dimension"):
        mx.fast.rms_norm(mx.array(1.0), None, 1e-5)
    with pytest.raises(ValueError, match="must have 1 dimension"):
        mx.fast.rms_norm(x, mx.ones((1, 8)), 1e-5)
    with pytest.raises(ValueError, match="same size as the last dimension"):
        mx.fast.rms_norm(x, mx.ones((7,)), 1e-5)
    with pytest.raises(ValueError, match="unsupported type int32"):
        mx.fast.rms_norm(mx.ones((4, 8), dtype=mx.int32), None, 1e-5)
    with pytest.raises(ValueError, match="bias must have the same size"):
        mx.fast.layer_norm(x, None, mx.ones((9,)), 1e-5)
    with pytest.raises(ValueError, match="weight must have 1 dimension"):
        mx.fast.layer_norm(x, mx.ones(()), None, 1e-5)
    with pytest.raises(ValueError, match="unsupported type"):
        mx.fast.layer_norm(mx.ones((2, 3), dtype=mx.int8), None, None, 1e-5)
    with pytest.raises(TypeError):
        mx.fast.rms_norm(x, None)


def mx_rms(x, w, eps):
    y = x * mx.rsqrt(mx.mean(mx.square(x), axis=-1, keepdims=True) + eps)
    return y * w if w is not None else y


def mx_ln(x, w, b, eps):
    mu = mx.mean(x, axis=-1, keepdims=True)
    y = (x - mu) * mx.rsqrt(mx.var(x, axis=-1, keepdims=True) + eps)
    if w is not None:
        y = y * w
    return y + b if b is not None else y


def assert_trees_close(a, b, tol=1e-4):
    a = a if isinstance(a, (list, tuple)) else [a]
    b = b if isinstance(b, (list, tuple)) else [b]
    assert len(a) == len(b)
    for u, v in zip(a, b):
        assert tuple(u.shape) == tuple(v.shape)
        np.testing.assert_allclose(npf(u), npf(v), rtol=tol, atol=tol)


def test_norm_grads_match_composition():
    x, w, b, g = (mx.array(rnd(s, i)) for i, s in enumerate([(3, 5, 16), (16,), (16,), (3, 5, 16)]))
    for fast, slow, n in (
        (lambda x, w, b: mx.fast.rms_norm(x, w, 1e-5), lambda x, w, b: mx_rms(x, w, 1e-5), 2),
        (lambda x, w, b: mx.fast.layer_norm(x, w, b, 1e-5), lambda x, w, b: mx_ln(x, w, b, 1e-5), 3),
        (lambda x, w, b: mx.fast.rms_norm(x, None, 1e-5), lambda x, w, b: mx_rms(x, None, 1e-5), 1),
        (lambda x, w, b: mx.fast.layer_norm(x, None, None, 1e-5),
         lambda x, w, b: mx_ln(x, None, None, 1e-5), 1),
    ):
        argn = tuple(range(n))
        l1 = lambda x, w, b: (fast(x, w, b) * g).sum()
        l2 = lambda x, w, b: (slow(x, w, b) * g).sum()
        assert_trees_close(mx.grad(l1, argn)(x, w, b), mx.grad(l2, argn)(x, w, b))
        # second order, through the rules' own ops
        h1 = lambda x, w, b: mx.grad(l1, argn)(x, w, b)[0].square().sum()
        h2 = lambda x, w, b: mx.grad(l2, argn)(x, w, b)[0].square().sum()
        assert_trees_close(mx.grad(h1)(x, w, b), mx.grad(h2)(x, w, b), 1e-3)
        # forward mode
        tans = [mx.array(rnd(a.shape, 9 + i)) for i, a in enumerate((x, w, b))]
        _, j1 = mx.jvp(lambda *p: fast(*p), [x, w, b], tans)
        _, j2 = mx.jvp(lambda *p: slow(*p), [x, w, b], tans)
        assert_trees_close(j1, j2)


def test_layer_norm_grad_when_mean_dominates():
    # Rows whose mean is large against their spread: the gradient's variance
    # must not come from mean(x^2) - mean^2, which cancels.  Checked against
    # the float64 gradient of the same loss.
    x64 = (rnd((6, 32), 4, 0.0, 1.0) + 3.0).astype(np.float64)  # exact in float32
    g64 = rnd((6, 32), 5).astype(np.float64)
    xc = x64 - x64.mean(-1, keepdims=True)
    n = 1.0 / np.sqrt((xc**2).mean(-1, keepdims=True) + 1e-5)
    gm = g64 - g64.mean(-1, keepdims=True)
    want = n * (gm - xc * n**2 * (g64 * xc).mean(-1, keepdims=True))
    x, g = mx.array(x64.astype(np.float32)), mx.array(g64.astype(np.float32))
    got = mx.grad(lambda x: (mx.fast.layer_norm(x, None, None, 1e-5) * g).sum())(x)
    np.testing.assert_allclose(npf(got), want, rtol=0, atol=4e-6 * np.abs(want).max())


def test_norm_vmap():
    x, w, b = mx.array(rnd((4, 3, 8), 1)), mx.array(rnd((4, 8), 2)), mx.array(rnd((4, 8), 3))
    w1 = w[0]
    got = mx.vmap(lambda x: mx.fast.rms_norm(x, w1, 1e-5), in_axes=1)(x)
    want = mx.stack([mx_rms(x[:, i], w1, 1e-5) for i in range(3)])
    assert_trees_close(got, want)
    got = mx.vmap(lambda x, w, b: mx.fast.layer_norm(x, w, b, 1e-5))(x, w, b)
    want = mx.stack([mx_ln(x[i], w[i], b[i], 1e-5) for i in range(4)])
    assert_trees_close(got, want)
    got = mx.vmap(lambda w: mx.fast.rms_norm(x[0], w, 1e-5))(w)
    want = mx.stack([mx_rms(x[0], w[i], 1e-5) for i in range(4)])
    assert_trees_close(got, want)


# ---------------------------------------------------------------- rope

def np_rope(x, dims, traditional, base, scale, offset, freqs=None, forward=True):
    x = x.astype(np.float64)
    T, half = x.shape[-2], dims // 2
    off = np.asarray(offset, np.float64).reshape(-1)
    pos = np.arange(T)[None, :] + off[:, None]  # (nb, T)
    pos = pos.reshape((-1,) + (1,) * (x.ndim - 3) + (T,)) * scale
    inv = 1 / np.asarray(freqs, np.float64) if freqs is not None else \
        np.exp(-np.arange(half) * (math.log(base) / half))
    th = pos[..., None] * inv
    c, s = np.cos(th), np.sin(th) * (1 if forward else -1)
    out = x.copy()
    if traditional:
        x1, x2 = x[..., 0:dims:2], x[..., 1:dims:2]
        out[..., 0:dims:2] = x1 * c - x2 * s
        out[..., 1:dims:2] = x1 * s + x2 * c
    else:
        x1, x2 = x[..., :half], x[..., half:dims]
        out[..., :half] = x1 * c - x2 * s
        out[..., half:dims] = x1 * s + x2 * c
    return out


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("traditional", [False, True])
@pytest.mark.parametrize("dims,shape", [(8, (2, 4, 8)), (4, (2, 3, 5, 8)), (16, (3, 1, 2, 7, 16))])
def test_rope_values(dtype, traditional, dims, shape):
    x = rnd(shape, 3)
    for base, scale, offset in ((10000.0, 1.0, 0), (500.0, 0.5, 7)):
        got = mx.fast.rope(arr(x, dtype), dims, traditional=traditional, base=base, scale=scale,
                           offset=offset)
        assert got.dtype == getattr(mx, dtype)
        close(got, np_rope(x, dims, traditional, base, scale, offset), dtype, scale=4)


def test_rope_offsets_freqs_layouts():
    x = rnd((3, 2, 5, 8), 1)
    want = np_rope(x, 8, False, 1e4, 1.0, [1, 4, 9])
    close(mx.fast.rope(mx.array(x), 8, traditional=False, base=1e4, scale=1.0,
                       offset=mx.array([1, 4, 9])), want)
    close(mx.fast.rope(mx.array(x), 8, traditional=False, base=1e4, scale=1.0,
                       offset=mx.array(5, dtype=mx.int64)), np_rope(x, 8, False, 1e4, 1.0, 5))
    freqs = rnd((4,), 2, 1.0, 50.0)
    close(mx.fast.rope(mx.array(x), 8, traditional=True, base=None, scale=1.0, offset=2,
                       freqs=mx.array(freqs)), np_rope(x, 8, True, None, 1.0, 2, freqs))
    xt = np.swapaxes(rnd((2, 5, 3, 8), 4), 1, 2)  # (2, 3, 5, 8) transposed view
    at = mx.swapaxes(mx.array(np.swapaxes(xt, 1, 2)), 1, 2)
    close(mx.fast.rope(at, 8, traditional=False, base=1e4, scale=1.0, offset=0),
          np_rope(xt, 8, False, 1e4, 1.0, 0))
    close(mx.fast.rope(mx.array(x)[:, :, 1:4, :], 6, traditional=False, base=1e4, scale=1.0,
                       offset=3), np_rope(x[:, :, 1:4, :], 6, False, 1e4, 1.0, 3))


@needs_oracle
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("traditional", [True, False])
def test_rope_half_rounds_as_mlx(dtype, traditional):
    """MLX rounds the cosines, sines, each product and the sum to the input's
    type; rounding once instead differed in the last bit of about a quarter
    of the values (mlx-lm's afm7 rounds its keys to integers after RoPE, so
    such bits change its logits).  A few values may still differ where
    MLX's float32 cos/sin differ from libm's in the last bit."""
    x = (np.random.default_rng(7).standard_normal((2, 8, 10, 32)) * 2).astype(np.float32)
    kw = dict(traditional=traditional, base=1e4, scale=1.0, offset=3)
    got = mx.fast.rope(mx.array(x).astype(getattr(mx, dtype)), 32, **kw)
    ref = mlx_ref.fast.rope(mlx_ref.array(x).astype(getattr(mlx_ref, dtype)), 32, **kw)
    g = np.array(got.astype(mx.float32))
    r = np.array(ref.astype(mlx_ref.float32))
    assert np.mean(g != r) < 0.01
    # the rest within a rounding of the products (|x| < 10: an ulp of 8)
    assert np.allclose(g, r, rtol=0, atol=2 ** -4 if dtype == "bfloat16" else 2 ** -7)


def test_rope_errors():
    x = mx.ones((1, 4, 8))
    kw = dict(traditional=False, base=1e4, scale=1.0, offset=0)
    for dims, msg in ((0, "positive"), (-2, "positive"), (7, "even"), (16, "must not exceed")):
        with pytest.raises(ValueError, match=msg):
            mx.fast.rope(x, dims, **kw)
    with pytest.raises(ValueError, match="at least 3 dimensions"):
        mx.fast.rope(mx.ones((4, 8)), 8, **kw)
    with pytest.raises(ValueError, match="floating"):
        mx.fast.rope(mx.ones((1, 4, 8), dtype=mx.int32), 8, **kw)
    with pytest.raises(ValueError, match="Neither base nor freqs"):
        mx.fast.rope(x, 8, traditional=False, base=None, scale=1.0, offset=0)
    with pytest.raises(ValueError, match="Only one of base or freqs"):
        mx.fast.rope(x, 8, traditional=False, base=1.0, scale=1.0, offset=0, freqs=mx.ones(4))
    with pytest.raises(ValueError, match="freqs must be one dimensional with size 4"):
        mx.fast.rope(x, 8, traditional=False, base=None, scale=1.0, offset=0, freqs=mx.ones(3))
    with pytest.raises(ValueError, match="offset must be an integer"):
        mx.fast.rope(x, 8, traditional=False, base=1.0, scale=1.0, offset=mx.array(1.5))
    with pytest.raises(ValueError, match="scalar or vector with 1 elements"):
        mx.fast.rope(x, 8, traditional=False, base=1.0, scale=1.0, offset=mx.array([1, 2]))
    with pytest.raises(ValueError, match="at most one dimension"):
        mx.fast.rope(x, 8, traditional=False, base=1.0, scale=1.0, offset=mx.zeros((1, 1), mx.int32))
    with pytest.raises(TypeError):
        mx.fast.rope(x, 8, base=1e4, scale=1.0, offset=0)  # traditional is required


def mx_rope(x, dims, traditional, base, scale, offset, freqs=None):
    T, half = x.shape[-2], dims // 2
    if isinstance(offset, mx.array) and offset.size > 1:
        offset = mx.reshape(offset, (-1,) + (1,) * (x.ndim - 3) + (1,))
    pos = (mx.arange(T) + offset) * scale
    inv = 1 / freqs if freqs is not None else mx.exp(-mx.arange(half) * (math.log(base) / half))
    th = pos[..., None] * inv
    c, s = mx.cos(th), mx.sin(th)
    if traditional:
        x1, x2 = x[..., 0:dims:2], x[..., 1:dims:2]
        r = mx.stack([x1 * c - x2 * s, x1 * s + x2 * c], axis=-1)
        r = mx.reshape(r, x.shape[:-1] + (dims,))
    else:
        x1, x2 = x[..., :half], x[..., half:dims]
        r = mx.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], axis=-1)
    return mx.concatenate([r, x[..., dims:]], axis=-1) if dims < x.shape[-1] else r


@pytest.mark.parametrize("traditional", [False, True])
def test_rope_transforms(traditional):
    x, g = mx.array(rnd((2, 3, 6, 8), 1)), mx.array(rnd((2, 3, 6, 8), 2))
    fast = lambda x: mx.fast.rope(x, 6, traditional=traditional, base=100.0, scale=0.5, offset=3)
    slow = lambda x: mx_rope(x, 6, traditional, 100.0, 0.5, 3)
    assert_trees_close(fast(x), slow(x))
    assert_trees_close(mx.grad(lambda x: (fast(x) * g).sum())(x),
                       mx.grad(lambda x: (slow(x) * g).sum())(x))
    assert_trees_close(mx.jvp(fast, [x], [g])[1], mx.jvp(slow, [x], [g])[1])
    assert_trees_close(mx.vmap(fast, in_axes=2)(x), mx.stack([fast(x[:, :, i]) for i in range(6)]))
    off = mx.array([0, 5])
    fv = lambda x: mx.fast.rope(x, 8, traditional=traditional, base=1e4, scale=1.0, offset=off)
    xs = mx.array(rnd((4, 2, 5, 8), 3))
    assert_trees_close(mx.vmap(fv)(xs), mx.stack([fv(xs[i]) for i in range(4)]))
    # the angles' inputs are differentiated as in MLX's composition (its CPU path)
    freqs = mx.array(rnd((3,), 4, 1.0, 9.0))
    for off in (mx.array(2), mx.array([1, 3])):
        ff = lambda x, f: (mx.fast.rope(x, 6, traditional=traditional, base=None, scale=0.5,
                                        offset=off, freqs=f) * g).sum()
        fs = lambda x, f: (mx_rope(x, 6, traditional, None, 0.5, off, f) * g).sum()
        assert_trees_close(mx.grad(ff, (0, 1))(x, freqs), mx.grad(fs, (0, 1))(x, freqs), 1e-3)
        gf = mx.grad(lambda o: mx.fast.rope(x, 6, traditional=traditional, base=100.0, scale=0.5,
                                            offset=o).sum())(off)
        assert gf.dtype == off.dtype and gf.shape == off.shape


# ---------------------------------------------------------------- attention

def np_sdpa(q, k, v, scale, mask=None, sinks=None):
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    B, Hq, qL, D = q.shape
    Hkv, kL = k.shape[1], k.shape[2]
    R = Hq // Hkv
    k, v = np.repeat(k, R, axis=1), np.repeat(v, R, axis=1)
    s = scale * q @ np.swapaxes(k, -1, -2)
    if isinstance(mask, str):
        mask = np.arange(qL)[:, None] + (kL - qL) >= np.arange(kL)[None]
    if mask is not None:
        mask = np.asarray(mask)
        s = np.where(mask, s, -1e300) if mask.dtype == bool else s + mask
    if sinks is not None:
        sk = np.broadcast_to(np.asarray(sinks, np.float64)[None, :, None, None], s.shape[:-1] + (1,))
        s = np.concatenate([sk, s], axis=-1)
    s = np.exp(s - s.max(-1, keepdims=True))
    p = s / s.sum(-1, keepdims=True)
    if sinks is not None:
        p = p[..., 1:]
    return p @ v


CASES = [  # (B, Hq, Hkv, qL, kL, D)
    (1, 2, 2, 5, 7, 8),
    (2, 4, 1, 1, 43, 16),  # decode, grouped
    (1, 8, 2, 3, 300, 32),  # decode path, few queries
    (2, 6, 3, 37, 37, 16),
    (1, 4, 4, 200, 150, 64),  # query blocks; causal qL > kL
    (1, 2, 1, 130, 260, 8),
    (1, 4, 1, 2, 5000, 16),  # decode over chunks of a long cache, combined
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("mask", [None, "causal", "bool", "additive"])
def test_sdpa_values(case, mask):
    B, Hq, Hkv, qL, kL, D = case
    q, k, v = rnd((B, Hq, qL, D), 1), rnd((B, Hkv, kL, D), 2), rnd((B, Hkv, kL, D), 3)
    m = mask
    if mask == "bool":
        m = np.random.default_rng(4).uniform(size=(B, 1, qL, kL)) < 0.7
    elif mask == "additive":
        m = rnd((qL, kL), 5, -2, 2)
    mm = mx.array(m) if isinstance(m, np.ndarray) else m
    got = mx.fast.scaled_dot_product_attention(mx.array(q), mx.array(k), mx.array(v), scale=0.3,
                                               mask=mm)
    want = np_sdpa(q, k, v, 0.3, m)
    if mask == "causal" and qL > kL:  # rows without a visible key average every value
        want[:, :, : qL - kL] = v.astype(np.float64).repeat(Hq // Hkv, 1).mean(-2, keepdims=True)
    close(got, want)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
@pytest.mark.parametrize("qL", [1, 40])
def test_sdpa_dtypes(dtype, qL):
    q, k, v = rnd((1, 4, qL, 16), 1), rnd((1, 2, 50, 16), 2), rnd((1, 2, 50, 16), 3)
    got = mx.fast.scaled_dot_product_attention(arr(q, dtype), arr(k, dtype), arr(v, dtype),
                                               scale=0.25, mask="causal")
    assert got.dtype == getattr(mx, dtype)
    close(got, np_sdpa(q, k, v, 0.25, "causal"), dtype)
    mixed = mx.fast.scaled_dot_product_attention(arr(q, dtype), mx.array(k), mx.array(v), scale=1.0)
    assert mixed.dtype == mx.promote_types(getattr(mx, dtype), mx.float32) if hasattr(
        mx, "promote_types") else True


def test_sdpa_layouts_and_sinks():
    base = rnd((2, 9, 4, 16), 1)  # (B, L, H, D): the heads-second view is transposed
    q = mx.swapaxes(mx.array(base), 1, 2)
    kc, vc = rnd((2, 2, 64, 16), 2), rnd((2, 2, 64, 16), 3)
    k, v = mx.array(kc)[:, :, :20], mx.array(vc)[:, :, :20]  # a slice of a longer cache
    qn = np.swapaxes(base, 1, 2)
    close(mx.fast.scaled_dot_product_attention(q, k, v, scale=0.5),
          np_sdpa(qn, kc[:, :, :20], vc[:, :, :20], 0.5))
    sinks = rnd((4,), 4, -2, 2)
    for ql in (1, 9):
        close(mx.fast.scaled_dot_product_attention(q[:, :, :ql], k, v, scale=0.5,
                                                   sinks=mx.array(sinks)),
              np_sdpa(qn[:, :, :ql], kc[:, :, :20], vc[:, :, :20], 0.5, sinks=sinks))
    kl, vl = rnd((1, 2, 3000, 16), 6), rnd((1, 2, 3000, 16), 7)  # chunked decode with sinks
    close(mx.fast.scaled_dot_product_attention(q[:1, :, :2], mx.array(kl), mx.array(vl), scale=0.5,
                                               sinks=mx.array(sinks)),
          np_sdpa(qn[:1, :, :2], kl, vl, 0.5, sinks=sinks))
    kt = mx.swapaxes(mx.array(np.swapaxes(kc, -1, -2)), -1, -2)  # d-major keys
    close(mx.fast.scaled_dot_product_attention(q, kt, mx.array(vc), scale=0.5),
          np_sdpa(qn, kc, vc, 0.5))
    # fully masked rows stay finite; no keys at all gives zeros
    out = mx.fast.scaled_dot_product_attention(q, k, v, scale=1.0, mask=mx.array(False))
    assert not np.isnan(np.array(out)).any()
    empty = mx.fast.scaled_dot_product_attention(q, k[:, :, :0], v[:, :, :0], scale=1.0)
    assert tuple(empty.shape) == (2, 4, 9, 16) and not np.array(empty).any()


def test_sdpa_errors():
    q, k = mx.ones((1, 4, 3, 8)), mx.ones((1, 2, 5, 8))
    f = mx.fast.scaled_dot_product_attention
    with pytest.raises(ValueError, match="expected to be rank 4"):
        f(mx.ones((4, 3, 8)), k, k, scale=1.0)
    with pytest.raises(ValueError, match="invalid mask option 'foo'"):
        f(q, k, k, scale=1.0, mask="foo")
    with pytest.raises(ValueError, match="at most rank 4"):
        f(q, k, k, scale=1.0, mask=mx.ones((1, 1, 1, 3, 5)))
    with pytest.raises(ValueError):
        f(q, k, k, scale=1.0, mask=mx.ones((4, 2, 5)))  # does not broadcast
    with pytest.raises(ValueError, match="multiple of n_kv_heads"):
        f(mx.ones((1, 3, 3, 8)), k, k, scale=1.0)
    with pytest.raises(ValueError, match="matching last dimension"):
        f(mx.ones((1, 4, 3, 6)), k, k, scale=1.0)
    with pytest.raises(ValueError, match="matching n_kv_heads"):
        f(q, k, mx.ones((1, 1, 5, 8)), scale=1.0)
    with pytest.raises(ValueError, match="batch dimension"):
        f(q, mx.ones((2, 2, 5, 8)), mx.ones((2, 2, 5, 8)), scale=1.0)
    with pytest.raises(ValueError, match="unsupported type"):
        f(q.astype(mx.int32), k.astype(mx.int32), k.astype(mx.int32), scale=1.0)
    with pytest.raises(ValueError, match="Mask type must promote"):
        f(q.astype(mx.float16), k.astype(mx.float16), k.astype(mx.float16), scale=1.0,
          mask=mx.ones((3, 5)))
    with pytest.raises(ValueError, match="invalid shape for sinks"):
        f(q, k, k, scale=1.0, sinks=mx.ones((3,)))
    with pytest.raises(ValueError, match="no fused kernel is available in CPU backend"):
        f(q, k, k, scale=1.0, force_fused=True)
    with pytest.raises(TypeError):
        f(q, k, k)  # scale is required


def mx_sdpa(q, k, v, scale, mask=None, sinks=None):
    """sdpa in plain ops; sinks add one more logit per head, dropped after the softmax."""
    R = q.shape[1] // k.shape[1]
    k, v = mx.repeat(k, R, axis=1), mx.repeat(v, R, axis=1)
    s = (q * scale) @ mx.swapaxes(k, -1, -2)
    if isinstance(mask, str):
        qL, kL = s.shape[-2:]
        mask = (mx.arange(qL)[:, None] + (kL - qL)) >= mx.arange(kL)[None]
    if mask is not None:
        s = mx.where(mask, s, mx.finfo(s.dtype).min) if mask.dtype == mx.bool_ else s + mask
    if sinks is None:
        return mx.softmax(s, axis=-1, precise=True) @ v
    sb = mx.broadcast_to(sinks[None, :, None, None].astype(s.dtype), s.shape[:-1] + (1,))
    return mx.softmax(mx.concatenate([sb, s], axis=-1), axis=-1, precise=True)[..., 1:] @ v


@pytest.mark.parametrize("mask", [None, "causal", "bool", "additive"])
@pytest.mark.parametrize("qL", [1, 12])
def test_sdpa_transforms(mask, qL):
    B, Hq, Hkv, kL, D = 2, 4, 2, 12, 8
    q, k, v = mx.array(rnd((B, Hq, qL, D), 1)), mx.array(rnd((B, Hkv, kL, D), 2)), \
        mx.array(rnd((B, Hkv, kL, D), 3))
    m = mask
    if mask == "bool":
        m = mx.array(np.random.default_rng(4).uniform(size=(B, Hq, qL, kL)) < 0.6)
    elif mask == "additive":
        m = mx.array(rnd((qL, kL), 5))
    g = mx.array(rnd((B, Hq, qL, D), 6))
    fast = lambda q, k, v: mx.fast.scaled_dot_product_attention(q, k, v, scale=0.4, mask=m)
    slow = lambda q, k, v: mx_sdpa(q, k, v, 0.4, m)
    l1 = lambda q, k, v: (fast(q, k, v) * g).sum()
    l2 = lambda q, k, v: (slow(q, k, v) * g).sum()
    assert_trees_close(mx.grad(l1, (0, 1, 2))(q, k, v), mx.grad(l2, (0, 1, 2))(q, k, v))
    tans = [mx.array(rnd(a.shape, 7 + i)) for i, a in enumerate((q, k, v))]
    assert_trees_close(mx.jvp(fast, [q, k, v], tans)[1], mx.jvp(slow, [q, k, v], tans)[1])
    qs = mx.array(rnd((3, B, Hq, qL, D), 8))
    assert_trees_close(mx.vmap(fast, in_axes=(0, None, None))(qs, k, v),
                       mx.stack([fast(qs[i], k, v) for i in range(3)]))
    h1 = lambda q: mx.grad(l1)(q, k, v).square().sum()
    h2 = lambda q: mx.grad(l2)(q, k, v).square().sum()
    assert_trees_close(mx.grad(h1)(q), mx.grad(h2)(q), 1e-3)


@pytest.mark.parametrize("qL", [1, 7])
def test_sdpa_mask_and_sinks_grads(qL):
    """As in MLX's composition (its CPU path): an additive mask and the
    sinks get gradients."""
    q, k, v = mx.array(rnd((2, 4, qL, 8), 1)), mx.array(rnd((2, 2, 9, 8), 2)), \
        mx.array(rnd((2, 2, 9, 8), 3))
    m, sk, g = mx.array(rnd((qL, 9), 4)), mx.array(rnd((4,), 5)), mx.array(rnd((2, 4, qL, 8), 6))
    fast = lambda m, sk: (mx.fast.scaled_dot_product_attention(q, k, v, scale=0.5, mask=m,
                                                               sinks=sk) * g).sum()

    def slow(m, sk):
        R = 2
        kk, vv = mx.repeat(k, R, axis=1), mx.repeat(v, R, axis=1)
        s = (q * 0.5) @ mx.swapaxes(kk, -1, -2) + m
        sb = mx.broadcast_to(sk[None, :, None, None], s.shape[:-1] + (1,))
        p = mx.softmax(mx.concatenate([sb, s], axis=-1), axis=-1, precise=True)[..., 1:]
        return ((p @ vv) * g).sum()

    assert_trees_close(mx.grad(fast, (0, 1))(m, sk), mx.grad(slow, (0, 1))(m, sk))


# ---------------------------------------------------------------- custom kernels

def test_custom_kernels_need_a_gpu_backend():
    k = mx.fast.metal_kernel(name="k", input_names=["a"], output_names=["o"], source="o[0]=a[0];")
    call = dict(inputs=[mx.ones(2)], output_shapes=[(2,)], output_dtypes=[mx.float32],
                grid=(1, 1, 1), threadgroup=(1, 1, 1))
    with pytest.raises(RuntimeError, match=r"\[metal_kernel\] No Metal back-end."):
        k(**call)
    with pytest.raises(TypeError):
        k(inputs=[mx.ones(2)])  # the launch arguments are required
    with pytest.raises(RuntimeError, match=r"\[cuda_kernel\] No CUDA back-end."):
        mx.fast.cuda_kernel(name="k", input_names=["a"], output_names=["o"], source="")
    with pytest.raises(RuntimeError, match="No CUDA back-end"):
        mx.fast.precompiled_cuda_kernel(name="k", compiled_source=b"", scalars=[], **call)


# ---------------------------------------------------------------- real MLX

@needs_oracle
def test_against_mlx():
    ref = mlx_ref
    x = rnd((3, 5, 64), 1)
    w, b = rnd((64,), 2), rnd((64,), 3)
    pairs = [
        (lambda m: m.fast.rms_norm(m.array(x).astype(m.float16), m.array(w), 1e-5), 1e-3),
        (lambda m: m.fast.layer_norm(m.array(x), m.array(w), m.array(b), 1e-4), 1e-5),
        (lambda m: m.fast.rope(m.array(x).astype(m.bfloat16), 32, traditional=True, base=1e4,
                               scale=2.0, offset=m.array([1, 2, 3])), 2e-2),
        (lambda m: m.fast.scaled_dot_product_attention(
            m.array(x[None, :2]), m.array(x[None, 2:]), m.array(x[None, 2:]), scale=0.1,
            mask="causal"), 1e-5),
        (lambda m: m.fast.scaled_dot_product_attention(
            m.array(x[None]), m.array(x[None, :1]), m.array(x[None, :1]), scale=0.1,
            mask=m.array(np.tri(5, 5) > 0), sinks=m.array([0.5, 1.0, -1.0])), 1e-5),
    ]
    for f, tol in pairs:
        got, want = f(mx), f(ref)
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_allclose(npf(got), np.array(want.astype(ref.float32)), rtol=tol, atol=tol)
    for name in ("rms_norm", "layer_norm", "rope", "scaled_dot_product_attention",
                 "metal_kernel", "cuda_kernel"):
        assert getattr(mx.fast, name).__doc__.split("\n")[0].replace("mlx.core.", "") == \
            getattr(ref.fast, name).__doc__.split("\n")[0].replace("mlx.core.", "")
