"""The fused gradient of mx.fast.scaled_dot_product_attention (the SdpaVJP
node and its kernel): the gradients of q, k and v against the gradient of
the composition of plain ops (and real MLX where it is importable), with
every kind of mask (broadcast), causal with qL != kL, grouped heads, sinks,
odd sizes, half types, strided inputs, fully masked rows, and the
transforms of the gradient itself (second order, vmap, jvp), which follow
the composed gradient."""

import io

import numpy as np
import pytest

from conftest import mlx_ref, mx, needs_oracle
from test_fast import mx_sdpa


def rnd(shape, seed=0, lo=-1.0, hi=1.0):
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(np.float32)


def f64(a):
    return np.array(a.astype(mx.float32)).astype(np.float64)


composed = mx_sdpa  # the plain-ops reference, sinks included


def make_mask(kind, B, Hq, qL, kL, seed=5):
    if kind == "bool":  # broadcast over heads
        return mx.array(np.random.default_rng(seed).uniform(size=(B, 1, qL, kL)) < 0.6)
    if kind == "bool_rows":  # some rows see no key at all
        m = np.random.default_rng(seed).uniform(size=(qL, kL)) < 0.5
        m[::3] = False
        return mx.array(m)
    if kind == "additive":  # broadcast over the batch
        return mx.array(rnd((Hq, qL, kL), seed, -3, 3))
    return kind


def inputs(B, Hq, Hkv, qL, kL, D, Dv=None, dtype=mx.float32):
    Dv = Dv or D
    shapes = [(B, Hq, qL, D), (B, Hkv, kL, D), (B, Hkv, kL, Dv), (B, Hq, qL, Dv)]
    return [mx.array(rnd(s, i + 1)).astype(dtype) for i, s in enumerate(shapes)]


def grads(fn, q, k, v, g, argnums=(0, 1, 2)):
    return mx.grad(lambda q, k, v: (fn(q, k, v) * g).sum(), argnums)(q, k, v)


def close(got, want, tol):
    for a, b in zip(got, want):
        assert tuple(a.shape) == tuple(b.shape)
        b = f64(b)
        scale = max(np.abs(b).max(), 1.0)
        np.testing.assert_allclose(f64(a), b, rtol=tol, atol=tol * scale)


def graph_text(arrays):
    buf = io.StringIO()
    mx.export_to_dot(buf, arrays)
    return buf.getvalue()


SIZES = [  # (B, Hq, Hkv, qL, kL, D)
    (2, 4, 4, 1, 1, 64),
    (2, 4, 2, 1, 37, 64),  # one query, grouped heads
    (1, 3, 3, 7, 7, 80),
    (2, 4, 1, 130, 130, 64),  # 4 query heads per kv head, two query blocks
    (1, 2, 2, 130, 7, 80),  # causal: leading rows see no key
    (1, 2, 1, 7, 300, 64),
    (1, 1, 1, 600, 600, 32),  # one unit: query blocks dealt to several tasks
]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("mask", [None, "causal", "bool", "bool_rows", "additive"])
def test_grads_match_composition(size, mask):
    B, Hq, Hkv, qL, kL, D = size
    q, k, v, g = inputs(B, Hq, Hkv, qL, kL, D)
    m = make_mask(mask, B, Hq, qL, kL)
    fast = lambda q, k, v: mx.fast.scaled_dot_product_attention(q, k, v, scale=0.3, mask=m)
    got = grads(fast, q, k, v, g)
    assert "SdpaVJP" in graph_text(got)
    close(got, grads(lambda q, k, v: composed(q, k, v, 0.3, m), q, k, v, g), 2e-5)


@pytest.mark.parametrize("argnums", [0, 1, 2, (2, 0)])
def test_single_arguments(argnums):
    q, k, v, g = inputs(2, 4, 2, 9, 12, 16)
    fast = lambda q, k, v: mx.fast.scaled_dot_product_attention(q, k, v, scale=0.5, mask="causal")
    slow = lambda q, k, v: composed(q, k, v, 0.5, "causal")
    got, want = grads(fast, q, k, v, g, argnums), grads(slow, q, k, v, g, argnums)
    if not isinstance(argnums, tuple):
        got, want = [got], [want]
    close(got, want, 2e-5)


@pytest.mark.parametrize("mask", [None, "causal", "bool"])
def test_sinks(mask):
    B, Hq, Hkv, qL, kL, D = 2, 4, 2, 9, 13, 16
    q, k, v, g = inputs(B, Hq, Hkv, qL, kL, D)
    sk = mx.array(rnd((Hq,), 11, -2, 2))
    m = make_mask(mask, B, Hq, qL, kL)
    fast = lambda q, k, v: mx.fast.scaled_dot_product_attention(q, k, v, scale=0.4, mask=m,
                                                                sinks=sk)
    got = grads(fast, q, k, v, g)
    assert "SdpaVJP" in graph_text(got)
    close(got, grads(lambda q, k, v: composed(q, k, v, 0.4, m, sk), q, k, v, g), 2e-5)


def test_mask_and_sinks_gradients_take_the_composition():
    B, Hq, Hkv, qL, kL, D = 1, 4, 2, 5, 8, 8
    q, k, v, g = inputs(B, Hq, Hkv, qL, kL, D)
    m, sk = mx.array(rnd((qL, kL), 4)), mx.array(rnd((Hq,), 5))

    def loss(fn):
        return lambda q, m, sk: (fn(q, k, v, m, sk) * g).sum()

    fast = loss(lambda q, k, v, m, sk: mx.fast.scaled_dot_product_attention(
        q, k, v, scale=0.5, mask=m, sinks=sk))
    slow = loss(lambda q, k, v, m, sk: composed(q, k, v, 0.5, m, sk))
    got = mx.grad(fast, (0, 1, 2))(q, m, sk)
    assert "SdpaVJP" not in graph_text(got)
    close(got, mx.grad(slow, (0, 1, 2))(q, m, sk), 2e-5)


@pytest.mark.parametrize("dtype,tol", [(mx.float16, 1e-2), (mx.bfloat16, 4e-2)])
@pytest.mark.parametrize("mask", [None, "causal", "bool", "additive"])
def test_half_types(dtype, tol, mask):
    B, Hq, Hkv, qL, kL, D = 1, 4, 2, 33, 40, 64
    q, k, v, g = inputs(B, Hq, Hkv, qL, kL, D, dtype=dtype)
    m32 = make_mask(mask, B, Hq, qL, kL)
    additive = isinstance(m32, mx.array) and m32.dtype != mx.bool_
    m = m32.astype(dtype) if additive else m32
    m32 = m.astype(mx.float32) if additive else m32
    fast = lambda q, k, v: mx.fast.scaled_dot_product_attention(q, k, v, scale=0.125, mask=m)
    got = grads(fast, q, k, v, g)
    assert all(a.dtype == dtype for a in got)
    up = [a.astype(mx.float32) for a in (q, k, v, g)]
    close(got, grads(lambda q, k, v: composed(q, k, v, 0.125, m32), *up), tol)


def test_strided_and_broadcast_inputs():
    # q, k, v as (B, L, H, D) transposed, a sliced value head size and a
    # broadcast cotangent (the gradient of a plain sum)
    x = mx.array(rnd((2, 11, 4, 48), 1))
    q = x.transpose(0, 2, 1, 3)[..., :32]
    k = mx.array(rnd((2, 2, 11, 64), 2))[..., ::2]
    v = mx.array(rnd((2, 13, 2, 24), 3)).transpose(0, 2, 1, 3)[:, :, 2:]
    for m in (None, "causal"):
        fast = lambda q, k, v: mx.fast.scaled_dot_product_attention(q, k, v, scale=0.3,
                                                                    mask=m).sum()
        slow = lambda q, k, v: composed(q, k, v, 0.3, m).sum()
        got = mx.grad(fast, (0, 1, 2))(q, k, v)
        assert "SdpaVJP" in graph_text(got)
        close(got, mx.grad(slow, (0, 1, 2))(q, k, v), 2e-5)


def test_same_array_for_q_k_v():
    x, g = mx.array(rnd((1, 2, 10, 16), 1)), mx.array(rnd((1, 2, 10, 16), 2))
    fast = lambda x: (mx.fast.scaled_dot_product_attention(x, x, x, scale=0.5) * g).sum()
    slow = lambda x: (composed(x, x, x, 0.5) * g).sum()
    close([mx.grad(fast)(x)], [mx.grad(slow)(x)], 2e-5)


def test_empty_inputs():
    for qL, kL in ((0, 5), (4, 0)):
        q, k, v, g = inputs(1, 2, 2, qL, kL, 8)
        fast = lambda q, k, v: mx.fast.scaled_dot_product_attention(q, k, v, scale=1.0)
        got = grads(fast, q, k, v, g)
        for a, b in zip(got, (q, k, v)):
            assert a.shape == b.shape
            assert not np.array(a).any()


def test_deterministic_over_task_splits():
    # one (batch, head) unit: its query blocks go to several tasks whose
    # partial dK, dV are summed in a fixed order
    q, k, v, g = inputs(1, 1, 1, 700, 700, 32)
    fast = lambda q, k, v: mx.fast.scaled_dot_product_attention(q, k, v, scale=0.2, mask="causal")
    a, b = grads(fast, q, k, v, g), grads(fast, q, k, v, g)
    for x, y in zip(a, b):
        assert np.array_equal(np.array(x), np.array(y))


@pytest.mark.parametrize("mask", [None, "causal", "additive"])
def test_second_order(mask):
    B, Hq, Hkv, qL, kL, D = 1, 4, 2, 6, 9, 8
    q, k, v, g = inputs(B, Hq, Hkv, qL, kL, D)
    m = make_mask(mask, B, Hq, qL, kL)
    fast = lambda q, k, v: mx.fast.scaled_dot_product_attention(q, k, v, scale=0.4, mask=m)
    slow = lambda q, k, v: composed(q, k, v, 0.4, m)

    def second(fn):
        def h(q, k, v):
            dq, dk, dv = grads(fn, q, k, v, g)
            return (dq.square().sum() + (dk * dv[..., : dk.shape[-1]]).sum()
                    + dv.square().sum())
        return mx.grad(h, (0, 1, 2))

    close(second(fast)(q, k, v), second(slow)(q, k, v), 1e-4)


def test_vmap_and_jvp_of_the_gradient():
    B, Hq, Hkv, qL, kL, D = 2, 4, 2, 5, 7, 8
    q, k, v, g = inputs(B, Hq, Hkv, qL, kL, D)
    qs = mx.array(rnd((3, B, Hq, qL, D), 8))
    ks = mx.array(rnd((B, Hkv, kL, 3, D), 9))
    for m in (None, "causal"):
        fast = lambda q, k, v: mx.fast.scaled_dot_product_attention(q, k, v, scale=0.4, mask=m)
        slow = lambda q, k, v: composed(q, k, v, 0.4, m)
        gq = lambda fn: (lambda q, k: grads(fn, q, k, v, g, (0, 1, 2)))
        got = mx.vmap(gq(fast), in_axes=(0, 3))(qs, ks)
        want = [mx.stack(t) for t in zip(*[gq(slow)(qs[i], ks[:, :, :, i]) for i in range(3)])]
        close(got, want, 2e-5)
        tq = mx.array(rnd(q.shape, 10))
        jf = mx.jvp(lambda q: grads(fast, q, k, v, g), [q], [tq])[1]
        js = mx.jvp(lambda q: grads(slow, q, k, v, g), [q], [tq])[1]
        close(jf, js, 1e-4)


def test_compiled_gradient():
    q, k, v, g = inputs(2, 4, 2, 9, 9, 16)
    step = lambda q, k, v: grads(lambda q, k, v: mx.fast.scaled_dot_product_attention(
        q, k, v, scale=0.5, mask="causal"), q, k, v, g)
    close(mx.compile(step)(q, k, v), step(q, k, v), 1e-6)


@needs_oracle
@pytest.mark.parametrize("mask", [None, "causal", "bool", "additive"])
def test_against_mlx(mask):
    ref = mlx_ref
    B, Hq, Hkv, qL, kL, D = 2, 4, 2, 70, 130, 64
    arrs = [rnd(s, i + 1) for i, s in enumerate([(B, Hq, qL, D), (B, Hkv, kL, D),
                                                 (B, Hkv, kL, D), (B, Hq, qL, D)])]
    m = make_mask(mask, B, Hq, qL, kL)
    m = np.array(m) if isinstance(m, mx.array) else m
    outs = []
    for lib in (mx, ref):
        q, k, v, g = (lib.array(a) for a in arrs)
        lm = lib.array(m) if isinstance(m, np.ndarray) else m
        fn = lambda q, k, v: (lib.fast.scaled_dot_product_attention(q, k, v, scale=0.125, mask=lm)
                              * g).sum()
        outs.append([np.array(a) for a in lib.grad(fn, (0, 1, 2))(q, k, v)])
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
