"""The half-precision paths of the fast ops that a decode step takes.

Attention with a few query rows reads float16/bfloat16 keys and values in
place, widening a row at a time; other layouts widen whole blocks first.
Both must give the same bits, so the same attention is computed from
contiguous keys, from a slice of a longer cache (what mlx-lm's KV cache
hands over), and from a layout the in-place loops do not take (a strided
last axis), and compared exactly; values are checked against a float64
NumPy reference.  rms_norm, layer_norm and rope round to the half type at
MLX's steps; those are compared with a NumPy emulation of the same
roundings."""

import numpy as np
import pytest

from conftest import mx, npv

HALVES = ["float16", "bfloat16"]


def _rand(shape, seed, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def _half(x, name):
    return mx.array(x).astype(getattr(mx, name))


def _round(x, name):
    """float32 values rounded to the half type, as float32."""
    return npv(mx.array(np.asarray(x, np.float32)).astype(getattr(mx, name)).astype(mx.float32))


def _sdpa_ref(q, k, v, scale):
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    rep = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1)
    s = scale * q @ np.swapaxes(k, -1, -2)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


@pytest.mark.parametrize("name", HALVES)
@pytest.mark.parametrize("Hq,Hkv,L,D,qL", [(16, 4, 256, 64, 1), (8, 8, 37, 80, 1),
                                           (32, 8, 600, 128, 1), (4, 1, 300, 64, 2),
                                           (6, 2, 40, 256, 4), (2, 2, 5, 7, 1)])
def test_decode_attention_same_bits_in_every_layout(name, Hq, Hkv, L, D, qL):
    q32, k32, v32 = _rand((1, Hq, qL, D), 1), _rand((1, Hkv, L, D), 2), _rand((1, Hkv, L, D), 3)
    q = _half(q32, name)
    scale = D ** -0.5
    k, v = _half(k32, name), _half(v32, name)
    # a cache with room for more positions, sliced to the ones written
    kc = mx.concatenate([k, _half(_rand((1, Hkv, 9, D), 4), name)], axis=2)[:, :, :L, :]
    vc = mx.concatenate([v, _half(_rand((1, Hkv, 9, D), 5), name)], axis=2)[:, :, :L, :]
    # every other column of a twice-as-wide array: not unit-stride columns
    kw = mx.repeat(k, 2, axis=3)[..., ::2]
    vw = mx.repeat(v, 2, axis=3)[..., ::2]
    f = mx.fast.scaled_dot_product_attention
    outs = [npv(f(q, a, b, scale=scale).astype(mx.float32)) for a, b in ((k, v), (kc, vc), (kw, vw))]
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], outs[2])
    ref = _sdpa_ref(npv(q.astype(mx.float32)), npv(k.astype(mx.float32)),
                    npv(v.astype(mx.float32)), scale)
    tol = 2e-2 if name == "bfloat16" else 3e-3
    np.testing.assert_allclose(outs[0], ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", HALVES)
@pytest.mark.parametrize("D", [1, 7, 64, 2048, 4100])
def test_rms_norm_rounds_at_mlx_steps(name, D):
    x32, w32 = _rand((3, D), 6, 3.0), _rand((D,), 7)
    x, w = _half(x32, name), _half(w32, name)
    got = npv(mx.fast.rms_norm(x, w, 1e-5).astype(mx.float32))
    xs = npv(x.astype(mx.float32)).astype(np.float32)
    ws = npv(w.astype(mx.float32)).astype(np.float32)
    n = (1.0 / np.sqrt((xs.astype(np.float64) ** 2).mean(-1, keepdims=True) + 1e-5)).astype(np.float32)
    want = _round(_round(xs * n, name) * ws, name)
    # the float32 sum of squares may differ from float64's in its last bit,
    # which can move a product across a rounding boundary: one half ulp
    ulp = np.abs(want) * (2.0 ** (-10 if name == "float16" else -7))
    assert np.all(np.abs(got - want) <= ulp + 1e-7)
    assert np.mean(got == want) > 0.97


@pytest.mark.parametrize("name", HALVES)
@pytest.mark.parametrize("traditional", [False, True])
def test_rope_rounds_each_product(name, traditional):
    T, D, off = 5, 64, 11
    x = _half(_rand((1, 2, T, D), 8, 2.0), name)
    got = npv(mx.fast.rope(x, D, traditional=traditional, base=10000.0, scale=1.0,
                           offset=off).astype(mx.float32))
    xs = npv(x.astype(mx.float32))
    half = D // 2
    inv = (10000.0 ** (-np.arange(half, dtype=np.float64) / half)).astype(np.float32)
    th = ((np.arange(T, dtype=np.float32) + off)[:, None] * inv[None, :]).astype(np.float32)
    co, si = _round(np.cos(th), name), _round(np.sin(th), name)
    if traditional:
        x1, x2 = xs[..., 0::2], xs[..., 1::2]
    else:
        x1, x2 = xs[..., :half], xs[..., half:]
    y1 = _round(_round(x1 * co, name) - _round(x2 * si, name), name)
    y2 = _round(_round(x1 * si, name) + _round(x2 * co, name), name)
    want = np.empty_like(xs)
    if traditional:
        want[..., 0::2], want[..., 1::2] = y1, y2
    else:
        want[..., :half], want[..., half:] = y1, y2
    # cos/sin in float32 may differ from libm's in the last bit
    ulp = np.abs(want) * (2.0 ** (-10 if name == "float16" else -7)) + 1e-3
    assert np.all(np.abs(got - want) <= ulp)
    assert np.mean(got == want) > 0.97
