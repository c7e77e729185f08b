"""mx.fast.scaled_dot_product_attention's blocked (flash-attention) kernel:
sizes that cut the work into several query blocks, several key blocks (the
online softmax rescales the output as the running max grows) and several
key ranges (few heads: the ranges are combined afterwards), with every kind
of mask, grouped heads, sinks, half types and strided inputs.

Values are checked against a float64 NumPy reference, the composition of
plain ops, and real MLX where it is importable; gradients against the
composed computation's."""

import math

import numpy as np
import pytest

from conftest import mlx_ref, mx, needs_oracle
from test_fast import mx_sdpa as composed
from test_fast import np_sdpa  # float64; rows without a visible key average every value

TOL = {"float32": 2e-5, "float16": 4e-3, "bfloat16": 3e-2}


def rnd(shape, seed=0, lo=-1.0, hi=1.0):
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(np.float32)


def f64(a):
    return np.array(a.astype(mx.float32)).astype(np.float64)


def make_mask(kind, B, Hq, qL, kL, seed=5):
    if kind == "bool":
        return np.random.default_rng(seed).uniform(size=(B, 1, qL, kL)) < 0.6
    if kind == "additive":
        return rnd((Hq, qL, kL), seed, -3, 3)
    return kind


def check(got, want, dtype="float32"):
    tol = TOL[dtype]
    assert tuple(got.shape) == want.shape
    np.testing.assert_allclose(f64(got), want, rtol=tol, atol=tol)


SIZES = [  # (B, Hq, Hkv, qL, kL, D)
    (1, 2, 2, 1, 1000, 64),  # decode, key ranges split over the pool
    (1, 4, 2, 7, 7, 80),
    (1, 1, 1, 300, 2100, 16),  # several query blocks x 5 key blocks
    (2, 8, 2, 129, 700, 128),  # grouped: 4 heads per key head, 3 query x 2 key blocks
    (1, 2, 1, 1000, 1000, 64),
    (1, 2, 2, 1000, 600, 64),  # causal with qL > kL: leading rows see no key
    (1, 1, 1, 3, 9000, 32),  # few queries, long cache: ranges combined
]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("mask", [None, "causal", "bool", "additive"])
def test_values(size, mask):
    B, Hq, Hkv, qL, kL, D = size
    q, k, v = rnd((B, Hq, qL, D), 1), rnd((B, Hkv, kL, D), 2), rnd((B, Hkv, kL, D), 3)
    m = make_mask(mask, B, Hq, qL, kL)
    mm = mx.array(m) if isinstance(m, np.ndarray) else m
    scale = 1 / math.sqrt(D)
    got = mx.fast.scaled_dot_product_attention(mx.array(q), mx.array(k), mx.array(v),
                                               scale=scale, mask=mm)
    want = np_sdpa(q, k, v, scale, m)
    if mask == "causal" and qL > kL:
        want[:, :, : qL - kL] = np.repeat(v.astype(np.float64), Hq // Hkv, 1).mean(-2, keepdims=True)
    check(got, want)
    if mask in (None, "causal", "additive"):  # the composition agrees as well
        want2 = composed(mx.array(q), mx.array(k), mx.array(v), scale, mm)
        np.testing.assert_allclose(f64(got), f64(want2), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("mask", [None, "causal"])
@pytest.mark.parametrize("qL", [1, 150])
def test_half_types(dtype, mask, qL):
    B, Hq, Hkv, kL, D = 1, 4, 1, 1100, 64
    q, k, v = rnd((B, Hq, qL, D), 1), rnd((B, Hkv, kL, D), 2), rnd((B, Hkv, kL, D), 3)
    t = getattr(mx, dtype)
    got = mx.fast.scaled_dot_product_attention(mx.array(q).astype(t), mx.array(k).astype(t),
                                               mx.array(v).astype(t), scale=0.125, mask=mask)
    assert got.dtype == t
    rq, rk, rv = (f64(mx.array(a).astype(t)) for a in (q, k, v))  # the rounded inputs
    check(got, np_sdpa(rq, rk, rv, 0.125, mask), dtype)


def test_strided_inputs():
    # queries (B, L, H, D) seen heads-second; keys a slice of a longer cache;
    # values with a transposed (d-major) layout; several key blocks each
    base = rnd((1, 200, 4, 32), 1)
    q = mx.swapaxes(mx.array(base), 1, 2)
    kc, vc = rnd((1, 2, 3000, 32), 2), rnd((1, 2, 3000, 32), 3)
    k = mx.array(kc)[:, :, 100:1400]
    vt = mx.swapaxes(mx.array(np.ascontiguousarray(np.swapaxes(vc, -1, -2))), -1, -2)[:, :, 100:1400]
    qn = np.swapaxes(base, 1, 2)
    for mask in (None, "causal"):
        got = mx.fast.scaled_dot_product_attention(q, k, vt, scale=0.2, mask=mask)
        check(got, np_sdpa(qn, kc[:, :, 100:1400], vc[:, :, 100:1400], 0.2, mask))
    qs = q[:, :, ::7]  # strided query rows
    got = mx.fast.scaled_dot_product_attention(qs, k, vt, scale=0.2)
    check(got, np_sdpa(qn[:, :, ::7], kc[:, :, 100:1400], vc[:, :, 100:1400], 0.2))


@pytest.mark.parametrize("qL", [1, 3, 200])
def test_sinks_over_key_blocks(qL):
    B, Hq, Hkv, kL, D = 1, 4, 2, 5000, 16
    q, k, v = rnd((B, Hq, qL, D), 1), rnd((B, Hkv, kL, D), 2), rnd((B, Hkv, kL, D), 3)
    sinks = rnd((Hq,), 4, -2, 6)  # large sinks dominate some rows
    for mask in (None, "causal"):
        got = mx.fast.scaled_dot_product_attention(mx.array(q), mx.array(k), mx.array(v),
                                                   scale=0.5, mask=mask, sinks=mx.array(sinks))
        check(got, np_sdpa(q, k, v, 0.5, mask, sinks))


def test_growing_max_and_special_values():
    B, H, qL, kL, D = 1, 1, 130, 1500, 16
    q, k, v = rnd((B, H, qL, D), 1), rnd((B, H, kL, D), 2), rnd((B, H, kL, D), 3)
    # scores that grow along the keys: every key block raises the running max
    m = np.broadcast_to(np.linspace(-40, 40, kL, dtype=np.float32), (qL, kL)).copy()
    m[0, :600] = -np.inf  # row 0: the first key blocks are all -inf, the rest finite
    m[1, :] = -np.inf  # row 1: every score -inf: NaN, as in the composition
    got = mx.fast.scaled_dot_product_attention(mx.array(q), mx.array(k), mx.array(v), scale=1.0,
                                               mask=mx.array(m))
    want = composed(mx.array(q), mx.array(k), mx.array(v), 1.0, mx.array(m))
    g, w = f64(got), f64(want)
    assert np.isnan(w[0, 0, 1]).all() and np.isnan(g[0, 0, 1]).all()
    keep = np.ones(qL, bool)
    keep[1] = False
    np.testing.assert_allclose(g[0, 0, keep], w[0, 0, keep], rtol=2e-5, atol=2e-5)
    with np.errstate(invalid="ignore", over="ignore"):
        ref = np_sdpa(q, k, v, 1.0, np.where(np.isinf(m), -1e300, m))
    np.testing.assert_allclose(g[0, 0, keep], ref[0, 0, keep], rtol=2e-5, atol=2e-5)
    # a NaN query makes its own row NaN and leaves the others alone
    qn = q.copy()
    qn[0, 0, 5, 3] = np.nan
    got = f64(mx.fast.scaled_dot_product_attention(mx.array(qn), mx.array(k), mx.array(v),
                                                   scale=1.0))
    assert np.isnan(got[0, 0, 5]).all()
    rows = np.arange(qL) != 5
    np.testing.assert_allclose(got[0, 0, rows], np_sdpa(q, k, v, 1.0)[0, 0, rows], rtol=2e-5,
                               atol=2e-5)


@pytest.mark.parametrize("mask", [None, "causal", "additive"])
def test_gradients_match_composition(mask):
    B, Hq, Hkv, qL, kL, D = 1, 4, 2, 130, 600, 32
    q, k, v = (mx.array(rnd(s, i)) for i, s in
               enumerate([(B, Hq, qL, D), (B, Hkv, kL, D), (B, Hkv, kL, D)]))
    g = mx.array(rnd((B, Hq, qL, D), 9))
    m = make_mask(mask, B, Hq, qL, kL)
    mm = mx.array(m) if isinstance(m, np.ndarray) else m
    fast = lambda q, k, v: (mx.fast.scaled_dot_product_attention(q, k, v, scale=0.2, mask=mm)
                            * g).sum()
    slow = lambda q, k, v: (composed(q, k, v, 0.2, mm) * g).sum()
    for a, b in zip(mx.grad(fast, (0, 1, 2))(q, k, v), mx.grad(slow, (0, 1, 2))(q, k, v)):
        np.testing.assert_allclose(f64(a), f64(b), rtol=1e-4, atol=1e-4)


def test_bad_input_leaves_no_partial_result():
    q, k = mx.ones((1, 4, 300, 16)), mx.ones((1, 3, 700, 16))  # 4 heads over 3 kv heads
    with pytest.raises(ValueError):
        mx.eval(mx.fast.scaled_dot_product_attention(q, k, k, scale=1.0))


@needs_oracle
@pytest.mark.parametrize("mask", [None, "causal", "bool"])
def test_against_mlx(mask):
    ref = mlx_ref
    B, Hq, Hkv, qL, kL, D = 1, 4, 2, 200, 1300, 64
    q, k, v = rnd((B, Hq, qL, D), 1), rnd((B, Hkv, kL, D), 2), rnd((B, Hkv, kL, D), 3)
    m = make_mask(mask, B, Hq, qL, kL)
    outs = []
    for lib in (mx, ref):
        lm = lib.array(m) if isinstance(m, np.ndarray) else m
        o = lib.fast.scaled_dot_product_attention(lib.array(q), lib.array(k), lib.array(v),
                                                  scale=0.125, mask=lm)
        outs.append(np.array(o.astype(lib.float32)))
    np.testing.assert_allclose(outs[0], outs[1], rtol=2e-5, atol=2e-5)
