"""Gradients of mx.fast.layer_norm and mx.fast.rms_norm: the fused
LayerNormVJP / RMSNormVJP node (one pass per row on the CPU).

dx, dw and db are checked against float64 NumPy and against the same
norm written as plain ops (differentiated by the engine), for weights and
biases present or absent, many row lengths, empty inputs, strided and
transposed x, broadcast cotangents, half dtypes, rows whose mean is large
against their spread, second derivatives, forward mode over the gradient,
vmap of the gradient, compile, thread-count independence, and against
real MLX where it is importable.
"""

import io
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import mlx_ref, mx, needs_oracle

EPS = 1e-5
TOL = {"float32": 3e-6, "float16": 3e-3, "bfloat16": 2.5e-2, "float64": 1e-6}


def rnd(shape, seed, lo=-1.0, hi=1.0):
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(np.float32)


def npf(a):
    return np.array(a.astype(mx.float32)).astype(np.float64)


def np_grads(x, w, g, layer, eps=EPS):
    """float64 dx, dw, db of sum(norm(x) * w * g), and the size of dx's terms."""
    x, g = np.asarray(x, np.float64), np.asarray(g, np.float64)
    w = np.ones(x.shape[-1]) if w is None else np.asarray(w, np.float64)
    xc = x - x.mean(-1, keepdims=True) if layer else x
    n = 1.0 / np.sqrt((xc**2).mean(-1, keepdims=True) + eps)
    gw = g * w
    a = gw - gw.mean(-1, keepdims=True) if layer else gw
    dx = n * (a - xc * n**2 * (gw * xc).mean(-1, keepdims=True))
    rows = tuple(range(x.ndim - 1))
    mag = float((np.abs(gw) * n).max()) if x.size else 1.0
    return dx, (g * xc * n).sum(rows), g.sum(rows), mag


def mx_norm(x, w, b, layer, eps=EPS):
    """The same norm as plain ops (variance as the mean of squared deviations)."""
    xc = x - mx.mean(x, axis=-1, keepdims=True) if layer else x
    y = xc * mx.rsqrt(mx.mean(mx.square(xc), axis=-1, keepdims=True) + eps)
    if w is not None:
        y = y * w
    return y + b if b is not None else y


def fast_norm(x, w, b, layer, eps=EPS):
    return mx.fast.layer_norm(x, w, b, eps) if layer else mx.fast.rms_norm(x, w, eps)


def grads_of(norm, x, w, b, g, layer):
    """(dx, dw or None, db or None) of sum(norm(x, w, b) * g)."""
    prm = [x] + [p for p in (w, b) if p is not None]

    def loss(*p):
        it = iter(p[1:])
        ww = next(it) if w is not None else None
        bb = next(it) if b is not None else None
        return (norm(p[0], ww, bb, layer) * g).sum()

    out = mx.grad(loss, tuple(range(len(prm))))(*prm)
    out = list(out) if isinstance(out, (tuple, list)) else [out]
    dx = out.pop(0)
    dw = out.pop(0) if w is not None else None
    db = out.pop(0) if b is not None else None
    return dx, dw, db


def check(got, want, mag, dtype="float32", rel=1.0):
    assert tuple(got.shape) == np.shape(want)
    tol = TOL[dtype] * rel
    np.testing.assert_allclose(npf(got), want, rtol=tol, atol=tol * max(mag, 1e-30))


CASES = [(True, True, True), (True, True, False), (True, False, True), (True, False, False),
         (False, True, False), (False, False, False)]


@pytest.mark.parametrize("layer,has_w,has_b", CASES)
@pytest.mark.parametrize("shape", [(1, 1), (1, 7), (1, 256), (3, 5, 1), (3, 5, 7), (3, 5, 256),
                                   (3, 5, 4097), (4097,)])
def test_grads_float32(layer, has_w, has_b, shape):
    D = shape[-1]
    x, g = rnd(shape, 1, -2, 3), rnd(shape, 2)
    w, b = rnd((D,), 3, 0.5, 1.5), rnd((D,), 4)
    xa, ga = mx.array(x), mx.array(g)
    wa, ba = (mx.array(w) if has_w else None), (mx.array(b) if has_b else None)
    dx, dw, db = grads_of(fast_norm, xa, wa, ba, ga, layer)
    rdx, rdw, rdb, mag = np_grads(x, w if has_w else None, g, layer)
    # D = 1 leaves dx as a difference of nearly equal terms of size mag
    check(dx, rdx, mag, rel=50 if D == 1 else 1 + D / 512)
    rows = x.size // D
    if has_w:
        check(dw, rdw, np.abs(rdw).max() + np.sqrt(rows), rel=4)
    if has_b:
        check(db, rdb, np.abs(rdb).max() + np.sqrt(rows), rel=4)
    for a in (dx, dw, db):
        assert a is None or a.dtype == mx.float32
    # the plain-ops composition agrees too
    cdx, cdw, cdb = grads_of(mx_norm, xa, wa, ba, ga, layer)
    check(dx, npf(cdx), mag, rel=100 if D == 1 else 4 + D / 256)
    if has_w:
        check(dw, npf(cdw), np.abs(rdw).max() + 1, rel=10)
    if has_b:
        check(db, npf(cdb), np.abs(rdb).max() + 1, rel=10)


@pytest.mark.parametrize("layer", [True, False])
@pytest.mark.parametrize("argnums", [(0,), (1,), (2,), (1, 2), (0, 2)])
def test_some_grads_only(layer, argnums):
    if not layer and 2 in argnums:
        argnums = tuple(a for a in argnums if a != 2) or (1,)
    x, g, w, b = rnd((6, 33), 5, -1, 2), rnd((6, 33), 6), rnd((33,), 7), rnd((33,), 8)
    rdx, rdw, rdb, mag = np_grads(x, w, g, layer)
    want = {0: (rdx, mag), 1: (rdw, np.abs(rdw).max()), 2: (rdb, np.abs(rdb).max())}
    xs = [mx.array(x), mx.array(w), mx.array(b)][: 3 if layer else 2]

    def loss(*p):
        return (fast_norm(p[0], p[1], p[2] if layer else None, layer) * mx.array(g)).sum()

    got = mx.grad(loss, argnums)(*xs)
    got = got if isinstance(got, (tuple, list)) else [got]
    for a, k in zip(got, argnums):
        check(a, *want[k], rel=4)


@pytest.mark.parametrize("layer", [True, False])
def test_empty(layer):
    for shape in [(0, 8), (2, 0, 8), (0, 1)]:
        D = shape[-1]
        x, g = mx.zeros(shape), mx.ones(shape)
        w, b = mx.ones((D,)), mx.ones((D,))
        dx, dw, db = grads_of(fast_norm, x, w, b if layer else None, g, layer)
        assert dx.shape == shape
        assert dw.shape == (D,) and np.all(np.array(dw) == 0)
        if layer:
            assert db.shape == (D,) and np.all(np.array(db) == 0)


@pytest.mark.parametrize("layer", [True, False])
@pytest.mark.parametrize("layout", ["transposed", "sliced", "strided_rows", "broadcast_g"])
def test_layouts(layer, layout):
    base = rnd((40, 24), 11, -1, 2)
    if layout == "transposed":
        x = mx.array(base).T  # (24, 40), last axis of stride 24
        xn = base.T
    elif layout == "sliced":
        x = mx.array(base)[:, 1::2]
        xn = base[:, 1::2]
    else:
        x = mx.array(base).reshape(4, 10, 24)[:, ::3]
        xn = base.reshape(4, 10, 24)[:, ::3]
    D = xn.shape[-1]
    w, b = rnd((D,), 12, 0.5, 1.5), rnd((D,), 13)
    if layout == "broadcast_g":  # a cotangent with zero strides
        g = mx.broadcast_to(mx.array(rnd((D,), 14)), xn.shape)
        gn = np.broadcast_to(rnd((D,), 14), xn.shape)
    else:
        gn = rnd(xn.shape, 14)
        g = mx.array(gn).T.T if layout != "transposed" else mx.array(np.ascontiguousarray(gn.T)).T
    dx, dw, db = grads_of(fast_norm, x, mx.array(w), mx.array(b) if layer else None, g, layer)
    rdx, rdw, rdb, mag = np_grads(xn, w, gn, layer)
    check(dx, rdx, mag, rel=2)
    check(dw, rdw, np.abs(rdw).max(), rel=4)
    if layer:
        check(db, rdb, np.abs(rdb).max(), rel=4)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
@pytest.mark.parametrize("layer", [True, False])
@pytest.mark.parametrize("D", [7, 256, 1000])
def test_dtypes(dtype, layer, D):
    t = getattr(mx, dtype)
    x, g = mx.array(rnd((5, D), 21, -1, 2)).astype(t), mx.array(rnd((5, D), 22)).astype(t)
    w, b = mx.array(rnd((D,), 23, 0.5, 1.5)).astype(t), mx.array(rnd((D,), 24)).astype(t)
    dx, dw, db = grads_of(fast_norm, x, w, b if layer else None, g, layer)
    for a in (dx, dw) + ((db,) if layer else ()):
        assert a.dtype == t
    rdx, rdw, rdb, mag = np_grads(npf(x), npf(w), npf(g), layer)
    check(dx, rdx, mag, dtype, rel=2)
    check(dw, rdw, np.abs(rdw).max(), dtype, rel=2)
    if layer:
        check(db, rdb, np.abs(rdb).max(), dtype, rel=2)


@pytest.mark.parametrize("layer", [True, False])
def test_mean_large_against_spread(layer):
    # x = 300 + u(0, 1): mean(x^2) - mean^2 would lose about 17 bits here.
    x = (rnd((8, 64), 31, 0.0, 1.0) + 300.0).astype(np.float32)
    g = rnd((8, 64), 32)
    w = rnd((64,), 33, 0.5, 1.5)
    dx, dw, _ = grads_of(fast_norm, mx.array(x), mx.array(w), None, mx.array(g), layer)
    rdx, rdw, _, mag = np_grads(x, w, g, layer)
    # the float32 mean of the row is only good to ~300 * 2^-24 per element
    check(dx, rdx, mag, rel=20)
    check(dw, rdw, np.abs(rdw).max(), rel=20)


@pytest.mark.parametrize("layer", [True, False])
def test_second_order(layer):
    x, w, b = (mx.array(rnd(s, 40 + i, -1, 2)) for i, s in enumerate([(3, 4, 20), (20,), (20,)]))
    g = mx.array(rnd((3, 4, 20), 44))
    bb = b if layer else None

    def first(norm):
        def loss(x, w, b):
            return (norm(x, w, b if layer else None, layer) * g).sum()
        return mx.grad(loss, (0, 1, 2) if layer else (0, 1))

    for k in range(2 if not layer else 3):  # d/d(everything) of |k-th gradient|^2
        h1 = lambda x, w, b: mx.grad(lambda *p: first(fast_norm)(*p)[k].square().sum(),
                                     (0, 1, 2))(x, w, b)
        h2 = lambda x, w, b: mx.grad(lambda *p: first(mx_norm)(*p)[k].square().sum(),
                                     (0, 1, 2))(x, w, b)
        for u, v in zip(h1(x, w, b), h2(x, w, b)):
            np.testing.assert_allclose(npf(u), npf(v), rtol=2e-4, atol=2e-4 * (npf(v).std() + 1))
    # forward mode over the gradient (the node's jvp)
    tans = [mx.array(rnd(a.shape, 50 + i)) for i, a in enumerate((x, w, b))]
    _, j1 = mx.jvp(lambda *p: list(first(fast_norm)(*p)), [x, w, b], tans)
    _, j2 = mx.jvp(lambda *p: list(first(mx_norm)(*p)), [x, w, b], tans)
    for u, v in zip(j1, j2):
        np.testing.assert_allclose(npf(u), npf(v), rtol=2e-4, atol=2e-4 * (npf(v).std() + 1))
    del bb


@pytest.mark.parametrize("layer", [True, False])
def test_vmap_of_grad(layer):
    V, D = 3, 12
    x, g = mx.array(rnd((V, 4, D), 60, -1, 2)), mx.array(rnd((V, 4, D), 61))
    w, b = mx.array(rnd((V, D), 62, 0.5, 1.5)), mx.array(rnd((V, D), 63))

    def gradf(norm):
        def loss(x, w, b, g):
            return (norm(x, w, b if layer else None, layer) * g).sum()
        return mx.grad(loss, (0, 1, 2) if layer else (0, 1))

    n = 3 if layer else 2
    for axes in [(0, None, None, 0), (0, 0, 0, 0), (None, 0, None, 0), (1, None, None, 1),
                 (0, None, None, None)]:
        args = [x, w[0] if axes[1] is None else w, b[0] if axes[2] is None else b, g]
        if axes[0] == 1:
            args[0] = x.swapaxes(0, 1)
        if axes[3] == 1:
            args[3] = g.swapaxes(0, 1)
        if axes[0] is None:
            args[0] = x[0]
        if axes[3] is None:
            args[3] = g[0]
        got = mx.vmap(gradf(fast_norm), in_axes=axes)(*args)
        for i in range(V):
            sl = [a if ax is None else (a[i] if ax == 0 else a[:, i]) for a, ax in zip(args, axes)]
            want = gradf(mx_norm)(*sl)
            for k in range(n):
                np.testing.assert_allclose(npf(got[k][i]), npf(want[k]), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("layer", [True, False])
def test_graph_uses_fused_node_and_compiles(layer):
    x, w, g = mx.array(rnd((6, 16), 70)), mx.array(rnd((16,), 71)), mx.array(rnd((6, 16), 72))

    def loss(x, w):
        return (fast_norm(x, w, None, layer) * g).sum()

    gr = mx.grad(loss, (0, 1))(x, w)
    f = io.StringIO()
    mx.export_to_dot(f, *gr)
    assert ("LayerNormVJP" if layer else "RMSNormVJP") in f.getvalue()
    c = mx.compile(mx.grad(loss, (0, 1)))
    for _ in range(2):
        for u, v in zip(c(x, w), gr):
            np.testing.assert_allclose(np.array(u), np.array(v), rtol=1e-6, atol=1e-6)


def test_one_output_dropped_keeps_the_other():
    x, w, b, g = (mx.array(rnd(s, 80 + i)) for i, s in enumerate([(9, 10), (10,), (10,), (9, 10)]))
    dx, dw, db = grads_of(fast_norm, x, w, b, g, True)
    del dx, db
    rdx, rdw, rdb, mag = np_grads(np.array(x), np.array(w), np.array(g), True)
    check(dw, rdw, np.abs(rdw).max(), rel=4)


_DET = r"""
import sys, numpy as np, cmlx.core as mx
rng = np.random.default_rng(0)
x = mx.array(rng.standard_normal((2048, 256)).astype(np.float32))
g = mx.array(rng.standard_normal((2048, 256)).astype(np.float32))
w, b = mx.ones((256,)), mx.zeros((256,))
f = lambda x, w, b: (mx.fast.layer_norm(x, w, b, 1e-5) * g).sum()
dx, dw, db = mx.grad(f, (0, 1, 2))(x, w, b)
sys.stdout.write(np.array(dw).tobytes().hex() + np.array(db).tobytes().hex()
                 + np.array(dx).tobytes()[:4096].hex())
"""


def test_thread_count_independent():
    outs = []
    for n in ("1", "2", "3"):
        env = dict(os.environ, CMLX_NUM_THREADS=n)
        r = subprocess.run([sys.executable, "-c", _DET], env=env, capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout)
    assert outs[0] == outs[1] == outs[2]


@needs_oracle
@pytest.mark.parametrize("layer", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_against_mlx(layer, dtype):
    x, g = rnd((4, 9, 64), 90, -1, 2), rnd((4, 9, 64), 91)
    w, b = rnd((64,), 92, 0.5, 1.5), rnd((64,), 93)
    res = []
    for m in (mx, mlx_ref):
        t = getattr(m, dtype)
        xa, ga, wa, ba = (m.array(a).astype(t) for a in (x, g, w, b))

        def loss(x, w, b):
            y = m.fast.layer_norm(x, w, b, EPS) if layer else m.fast.rms_norm(x, w, EPS)
            return (y * ga).sum()

        res.append([np.array(a.astype(m.float32)) for a in
                    m.grad(loss, (0, 1, 2) if layer else (0, 1))(xa, wa, ba)])
    for u, v in zip(*res):
        scale = np.abs(v).max() + 1e-6
        np.testing.assert_allclose(u, v, rtol=0, atol=scale * (1e-5 if dtype == "float32" else 4 * TOL[dtype]))


def test_export_of_a_gradient(tmp_path):
    # exports record the composition (there is no LayerNormVJP to import)
    x, w = mx.array(rnd((4, 8), 100)), mx.array(rnd((8,), 101, 0.5, 1.5))

    def f(x, w):
        return mx.grad(lambda x, w: (mx.fast.layer_norm(x, w, None, EPS) ** 2).sum(), (0, 1))(x, w)

    path = str(tmp_path / "g.mlxfn")
    mx.export_function(path, f, x, w)
    got, want = mx.import_function(path)(x, w), f(x, w)
    for u, v in zip(got, want):
        np.testing.assert_allclose(np.array(u), np.array(v), rtol=1e-5, atol=1e-6)
