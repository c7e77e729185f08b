"""Contractions: tensordot, gather_mm, segmented_mm, block_masked_mm, and
the few-row matmul kernel (x @ w.T, x @ w, matrix @ vector) across dtypes
and layouts.  NumPy gives the values; real MLX (when importable) the
dtypes, shapes and gradients."""

import numpy as np
import pytest

from conftest import SUBJECT_IS_MLX, mlx_ref, mx, needs_oracle

RNG = np.random.default_rng(7)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def close(x, ref, tol=1e-4):
    x = np.array(x.astype(mx.float32)) if x.dtype != mx.float64 else np.array(x)
    return np.allclose(x, ref, rtol=tol, atol=tol)


# ------------------------------------------------------------ tensordot


@pytest.mark.parametrize("sa,sb,axes", [
    ((2, 3, 4), (4, 3, 2), 1),
    ((2, 3, 4), (3, 4, 5), 2),
    ((2, 3), (4, 5), 0),
    ((3, 4), (4, 3), [[0, 1], [1, 0]]),
    ((2, 3, 4), (4, 3, 2), [[-1, 1], [0, -2]]),
    ((5,), (5,), 1),
    ((), (), 0),
    ((0, 3), (3, 2), 1),
])
def test_tensordot_values(sa, sb, axes):
    a, b = rand(*sa), rand(*sb)
    got = mx.tensordot(mx.array(a), mx.array(b), axes=axes)
    ref = np.tensordot(a, b, axes=axes)
    assert got.shape == ref.shape
    assert close(got, ref)


def test_tensordot_default_and_layouts():
    a, b = rand(4, 3, 2), rand(3, 2, 5)
    A = mx.array(a.transpose(2, 1, 0).copy()).transpose(2, 1, 0)  # a strided view
    assert close(mx.tensordot(A, mx.array(b)), np.tensordot(a, b))
    assert close(mx.tensordot(A[::2], mx.array(b), axes=([2, 1], (1, 0))),
                 np.tensordot(a[::2], b, axes=([2, 1], [1, 0])))


def test_tensordot_dtypes():
    a16 = mx.ones((2, 3), mx.float16)
    assert mx.tensordot(a16, mx.ones((3,), mx.float16), 1).dtype == mx.float16
    assert mx.tensordot(mx.ones((2, 3), mx.int32), mx.ones((3,)), 1).dtype == mx.float32
    with pytest.raises(ValueError, match="Only inexact types"):
        mx.tensordot(mx.ones((2, 3), mx.int32), mx.ones((3,), mx.int32), 1)


def test_tensordot_errors():
    a, b = mx.ones((2, 3, 4)), mx.ones((4, 3, 2))
    with pytest.raises(ValueError, match="greater or equal to 0"):
        mx.tensordot(a, b, -1)
    with pytest.raises(ValueError, match="less than the number of dimensions"):
        mx.tensordot(a, b, 4)
    with pytest.raises(ValueError, match="list of two lists"):
        mx.tensordot(a, b, [[2], [0], [1]])
    with pytest.raises(ValueError, match="same size"):
        mx.tensordot(a, b, [[2, 1], [0]])
    with pytest.raises(ValueError, match="same shape on the contracted"):
        mx.tensordot(a, b, [[0], [0]])
    with pytest.raises(ValueError, match="transpose"):
        mx.tensordot(a, b, [[2, 2], [0, 0]])
    with pytest.raises(IndexError):
        mx.tensordot(a, b, [[5], [0]])
    with pytest.raises(TypeError):
        mx.tensordot(a, b, [2, 0])
    with pytest.raises(TypeError):
        mx.tensordot(a, b, None)


def test_tensordot_grad():
    a, b = rand(2, 3, 4), rand(4, 3, 5)
    f = lambda x, y: mx.tensordot(x, y, [[2, 1], [0, 1]]).sum()
    ga, gb = mx.grad(f, argnums=(0, 1))(mx.array(a), mx.array(b))
    assert close(ga, np.broadcast_to(b.sum(axis=2).T[None], (2, 3, 4)))
    assert close(gb, np.broadcast_to(a.sum(axis=0).T[:, :, None], (4, 3, 5)))


@needs_oracle
def test_tensordot_matches_mlx():
    for sb, axes in (((5, 2), 1), ((4, 5, 2), 2), ((5, 4, 2), [[1, 2], [1, 0]]),
                     ((5, 3), [[-1], [0]])):
        a, b = rand(3, 4, 5), rand(*sb)
        got = mx.tensordot(mx.array(a), mx.array(b), axes)
        ref = mlx_ref.tensordot(mlx_ref.array(a), mlx_ref.array(b), axes)
        assert got.shape == ref.shape and np.allclose(got, ref, atol=1e-5)


# ------------------------------------------------------------ few-row products


@pytest.mark.parametrize("dt", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("rows", [1, 3, 8])
@pytest.mark.parametrize("transposed", [True, False])
def test_gemv_kernel(dt, rows, transposed):
    K, N = 333, 517  # past the small-product threshold, odd sizes for the tails
    d = getattr(mx, dt)
    X = mx.array(rand(rows, K)).astype(d)
    W = mx.array(rand(N, K) if transposed else rand(K, N)).astype(d)
    x, w = np.array(X.astype(mx.float32)), np.array(W.astype(mx.float32))
    Wop = W.T if transposed else W
    ref = x @ (w.T if transposed else w)
    out = X @ Wop
    assert out.dtype == d and out.shape == (rows, N)
    tol = 1e-4 if dt == "float32" else 3e-2
    assert np.allclose(np.array(out.astype(mx.float32)), ref, rtol=tol, atol=tol * 20)
    # the few-column form (matrix @ vector) and addmm's beta
    assert close(Wop.T @ X.T, ref.T, tol * 20)
    C = mx.array(rand(rows, N)).astype(d)
    c = np.array(C.astype(mx.float32))
    assert close(mx.addmm(C, X, Wop, 0.5, 2.0), 0.5 * ref + 2.0 * c, tol * 20)
    # a 1-D vector and a strided (sliced) matrix
    assert close(X[0] @ Wop, ref[0], tol * 20)
    assert close(X @ Wop[:, ::2], ref[:, ::2], tol * 20)


def test_gemv_batched_and_exact():
    a, b = rand(4, 2, 600), rand(4, 600, 300)
    assert close(mx.array(a) @ mx.array(b), a @ b, 1e-3)
    # integers in float32: exact whatever the summation order
    x = RNG.integers(-3, 4, (2, 4096)).astype(np.float32)
    w = RNG.integers(-3, 4, (512, 4096)).astype(np.float32)
    assert np.array_equal(np.array(mx.array(x) @ mx.array(w).T), x @ w.T)


@needs_oracle
def test_gemv_matches_mlx_dtype_and_shape():
    x, w = rand(600), rand(200, 600)
    for dt in ("float32", "float16", "bfloat16"):
        got = mx.array(w).astype(getattr(mx, dt)) @ mx.array(x).astype(getattr(mx, dt))
        ref = mlx_ref.array(w).astype(getattr(mlx_ref, dt)) @ mlx_ref.array(x).astype(
            getattr(mlx_ref, dt))
        assert got.shape == ref.shape and str(got.dtype)[-8:] == str(ref.dtype)[-8:]
        assert np.allclose(np.array(got.astype(mx.float32)),
                           np.array(ref.astype(mlx_ref.float32)), rtol=2e-2, atol=0.5)


# ------------------------------------------------------------ gather_mm


def np_gather_mm(a, b, li, ri):
    a = a.reshape((-1,) + a.shape[-2:])
    b = b.reshape((-1,) + b.shape[-2:])
    li, ri = np.broadcast_arrays(li, ri)
    return a[li] @ b[ri]


@pytest.mark.parametrize("dt", ["float32", "float16", "float64"])
def test_gather_mm_values(dt):
    if SUBJECT_IS_MLX and dt != "float32":
        pytest.skip("MLX's CPU GatherMM is float32 only; cmlx computes the others")
    a, b = rand(5, 3, 8), rand(4, 8, 6)
    li = np.array([[0, 4], [2, 2], [1, 3]], np.int32)
    ri = np.array([[3], [0], [1]], np.int64)
    d = getattr(mx, dt)
    got = mx.gather_mm(mx.array(a).astype(d), mx.array(b).astype(d), mx.array(li), mx.array(ri))
    assert got.dtype == d and got.shape == (3, 2, 3, 6)
    assert close(got, np_gather_mm(a, b, li, ri), 1e-4 if dt != "float16" else 2e-2)


def test_gather_mm_defaults_and_layouts():
    a, b = rand(3, 4, 8), rand(3, 8, 5)
    A, B = mx.array(a), mx.array(b)
    ri = np.array([2, 0, 1])
    assert close(mx.gather_mm(A, B, None, mx.array(ri)), a @ b[ri])
    assert close(mx.gather_mm(A, B, rhs_indices=mx.array(np.sort(ri)), sorted_indices=True),
                 a @ b[np.sort(ri)])
    # transposed b, broadcast index shapes, a 1-D lhs operand
    bt = mx.array(b.transpose(0, 2, 1).copy()).swapaxes(-1, -2)
    assert close(mx.gather_mm(A, bt, mx.array([0, 1, 2]), mx.array(ri)), a @ b[ri])
    v = mx.gather_mm(A[0, 0], B, None, mx.array([1, 2]))
    assert v.shape == (2, 5) and close(v, np.stack([a[0, 0] @ b[1], a[0, 0] @ b[2]]))
    assert mx.gather_mm(A, B).shape == (3, 4, 5)  # no indices: matmul


def test_gather_mm_errors():
    a, b = mx.ones((2, 3, 4)), mx.ones((2, 4, 5))
    with pytest.raises(ValueError, match="must be integral"):
        mx.gather_mm(a, b, mx.array([0.0]), None)
    with pytest.raises(ValueError, match="real floating point"):
        mx.gather_mm(a.astype(mx.int32), b.astype(mx.int32), mx.array([0]), None)
    with pytest.raises(ValueError, match="Last dimension"):
        mx.gather_mm(a, a, mx.array([0]), None)
    with pytest.raises(ValueError, match="0 dimension"):
        mx.gather_mm(mx.array(1.0), b, mx.array([0]), None)
    with pytest.raises(ValueError):
        mx.gather_mm(a, b, mx.array([0, 1]), mx.array([0, 1, 1]))


def test_gather_mm_grads():
    a, b = rand(4, 3, 6), rand(3, 6, 5)
    li, ri = np.array([3, 3, 0]), np.array([2, 0, 0])

    def f_ref(x, y):
        return (mx.take(x, mx.array(li), 0) @ mx.take(y, mx.array(ri), 0)).sum()

    def f(x, y):
        return mx.gather_mm(x, y, mx.array(li), mx.array(ri)).sum()

    g = mx.grad(f, argnums=(0, 1))(mx.array(a), mx.array(b))
    r = mx.grad(f_ref, argnums=(0, 1))(mx.array(a), mx.array(b))
    for x, y in zip(g, r):
        assert x.shape == y.shape and np.allclose(x, y, atol=1e-4)
    # sorted rhs, lhs absent: the segmented path
    rs = np.array([0, 0, 2, 2])
    a2 = rand(4, 2, 6)
    fs = lambda x, y: mx.gather_mm(x, y, rhs_indices=mx.array(rs), sorted_indices=True).sum()
    fr = lambda x, y: (x @ mx.take(y, mx.array(rs), 0)).sum()
    g = mx.grad(fs, argnums=(0, 1))(mx.array(a2), mx.array(b))
    r = mx.grad(fr, argnums=(0, 1))(mx.array(a2), mx.array(b))
    for x, y in zip(g, r):
        assert np.allclose(x, y, atol=1e-4)


def test_gather_mm_index_grad_needs_stop_gradient():
    a = mx.ones((4, 1, 2, 2))

    def fun(w):
        idx = mx.reshape(mx.argsort(w)[:2], (1, 2))
        return mx.gather_mm(a, a, idx, idx).sum()

    with pytest.raises(ValueError, match="stop_gradient"):
        mx.grad(fun)(mx.array([3.0, 1.0, 2.0, 0.0]))
    with pytest.raises((ValueError, NotImplementedError)):  # no jvp, as in MLX
        mx.jvp(lambda x: mx.gather_mm(x, x, mx.array([0]), None), [a], [a])


@needs_oracle
def test_gather_mm_matches_mlx():
    a, b = rand(5, 3, 8), rand(4, 8, 6)
    li, ri = np.array([0, 4, 2], np.uint32), np.array([3, 3, 1], np.uint32)
    got = mx.gather_mm(mx.array(a), mx.array(b), mx.array(li), mx.array(ri))
    ref = mlx_ref.gather_mm(mlx_ref.array(a), mlx_ref.array(b), mlx_ref.array(li),
                            mlx_ref.array(ri))
    assert got.shape == ref.shape and np.allclose(got, ref, atol=1e-5)


# ------------------------------------------------------------ segmented_mm


def test_segmented_mm_values():
    a, b = rand(3, 10), rand(10, 4)
    segs = np.array([[0, 4], [4, 10], [2, 2], [7, 3], [0, 10]], np.int32)
    got = mx.segmented_mm(mx.array(a), mx.array(b), mx.array(segs))
    ref = np.stack([a[:, s:e] @ b[s:e] if e > s else np.zeros((3, 4)) for s, e in segs])
    assert got.shape == (5, 3, 4) and close(got, ref)
    # transposed operands, batched segment shapes
    at = mx.array(a.T.copy()).T
    got = mx.segmented_mm(at, mx.array(b), mx.array(segs[:4].reshape(2, 2, 2)))
    assert got.shape == (2, 2, 3, 4) and close(got, ref[:4].reshape(2, 2, 3, 4))


def test_segmented_mm_errors():
    a = mx.ones((2, 10, 10))
    with pytest.raises(ValueError, match="Batched matmul"):
        mx.segmented_mm(a, a, mx.array([[0, 5]]))
    with pytest.raises(ValueError, match=r"shape \(..., 2\)"):
        mx.segmented_mm(a[0], a[0], mx.array([0, 5, 6]))
    with pytest.raises(ValueError, match="Segments must be integral"):
        mx.segmented_mm(a[0], a[0], mx.array([[0.0, 5.0]]))
    with pytest.raises(ValueError, match="real floating point"):
        mx.segmented_mm(a[0].astype(mx.int32), a[0].astype(mx.int32), mx.array([[0, 5]]))


# ------------------------------------------------------------ block_masked_mm


def expand(mask, bs, rows, cols):
    return np.kron(mask, np.ones((bs, bs)))[..., :rows, :cols]


@pytest.mark.parametrize("bs", [32, 64])
def test_block_masked_mm_values(bs):
    M, K, N = 70, 40, 90
    a, b = rand(2, M, K), rand(K, N)
    tm, tk, tn = -(-M // bs), -(-K // bs), -(-N // bs)
    mo = RNG.random((tm, tn)) > 0.4
    ml = RNG.random((2, tm, tk)).astype(np.float32)
    mr = RNG.random((tk, tn)) > 0.3
    got = mx.block_masked_mm(mx.array(a), mx.array(b), bs, mx.array(mo), mx.array(ml),
                             mx.array(mr))
    ref = ((a * np.stack([expand(m, bs, M, K) for m in ml])) @ (b * expand(mr, bs, K, N)))
    ref = ref * expand(mo, bs, M, N)
    assert got.shape == (2, M, N) and close(got, ref)
    # no masks: matmul
    assert close(mx.block_masked_mm(mx.array(a), mx.array(b), bs), a @ b)


def test_block_masked_mm_grads_and_errors():
    M = K = N = 64
    a, b = rand(M, K), rand(K, N)
    ml = (RNG.random((2, 2)) + 0.5).astype(np.float32)
    mr = (RNG.random((2, 2)) + 0.5).astype(np.float32)
    big = lambda m: mx.array(expand(m, 32, 64, 64).astype(np.float32))

    def f(x, y, p, q):
        return mx.block_masked_mm(x, y, 32, None, p, q).sum()

    def f_ref(x, y, p, q):
        ep = mx.repeat(mx.repeat(p, 32, 0), 32, 1)
        eq = mx.repeat(mx.repeat(q, 32, 0), 32, 1)
        return ((x * ep) @ (y * eq)).sum()

    args = [mx.array(a), mx.array(b), mx.array(ml), mx.array(mr)]
    g = mx.grad(f, argnums=(0, 1, 2, 3))(*args)
    r = mx.grad(f_ref, argnums=(0, 1, 2, 3))(*args)
    for x, y in zip(g, r):
        assert x.shape == y.shape and np.allclose(x, y, atol=1e-3)
    assert big(ml).shape == (64, 64)
    bm = mx.array(np.ones((2, 2), bool))
    with pytest.raises(ValueError, match="boolean masks"):
        mx.grad(lambda m: mx.block_masked_mm(args[0], args[1], 32, None, m, bm).sum())(bm)
    with pytest.raises(ValueError, match="block_sizes 32, 64"):
        mx.block_masked_mm(args[0], args[1], 16, bm)
    with pytest.raises(ValueError, match="real floating point"):
        mx.block_masked_mm(mx.ones((4, 4), mx.int32), mx.ones((4, 4), mx.int32), 32, bm)


@needs_oracle
def test_block_masked_mm_matches_mlx():
    a, b = rand(40, 40), rand(40, 70)
    mo = np.array([[True, False, True], [False, True, True]])
    got = mx.block_masked_mm(mx.array(a), mx.array(b), 32, mx.array(mo))
    ref = mlx_ref.block_masked_mm(mlx_ref.array(a), mlx_ref.array(b), 32, mlx_ref.array(mo))
    assert got.shape == ref.shape and np.allclose(got, ref, atol=1e-4)
