"""mx.linalg: the LAPACK factorisations and MLX's compositions over them.

Values are checked against NumPy (reconstructions, eigen equations,
inverses, norms) over float32/float64 (complex64 where MLX takes it),
batches, transposed/sliced/strided layouts and zero-size input; results
that LAPACK fixes only up to sign or order (eigenvectors, LU pivots,
singular vectors) are compared with real MLX where it is importable,
which cmlx matches output for output.  Then MLX's errors (dtypes, ranks,
squareness, singular and indefinite input), the multi-output nodes and
the transforms (vmap rules; no derivatives, as in MLX).
"""

import itertools
import math

import numpy as np
import pytest

from conftest import SUBJECT_IS_MLX, cmlx_only, mlx_ref, mx, needs_oracle, to_np

L = mx.linalg
CPU = mx.cpu
RNG = np.random.default_rng(0)


def A(x):
    """The subject array of x, keeping float64 (mx.array makes NumPy float64
    float32, as MLX does)."""
    if isinstance(x, np.ndarray) and x.dtype == np.float64:
        return mx.array(x, dtype=mx.float64)
    return mx.array(x)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def spd(n, batch=(), dtype=np.float32):
    x = RNG.standard_normal(batch + (n, n))
    return (x @ np.swapaxes(x, -1, -2) + n * np.eye(n)).astype(dtype)


def tol(dtype):
    return dict(rtol=1e-4, atol=1e-4) if dtype in (np.float32, np.complex64) else dict(
        rtol=1e-10, atol=1e-10
    )


def layouts(x):
    """x (a NumPy array with >= 2 dims) as the subject array in several
    layouts holding the same values: contiguous, transposed, sliced with a
    step, and broadcast."""
    t = mx.swapaxes(A(np.ascontiguousarray(np.swapaxes(x, -1, -2))), -1, -2)
    big = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
    big[..., ::2] = x
    st = A(big)[..., ::2]
    return [A(x), t, st]


# ---- factorisations --------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3), (2, 1, 4, 2)])
def test_svd_reconstructs(dtype, shape):
    x = rand(*shape, dtype=np.float64)
    if dtype == np.complex64:
        x = x + 1j * rand(*shape, dtype=np.float64)
    x = x.astype(dtype)
    for a in layouts(x):
        U, S, Vt = L.svd(a, stream=CPU)
        k = min(shape[-2:])
        assert U.shape == shape[:-1] + (shape[-2],) and Vt.shape == shape[:-2] + (shape[-1],) * 2
        assert S.dtype == (mx.float32 if dtype == np.complex64 else U.dtype)
        assert U.dtype == a.dtype == Vt.dtype
        u, s, vt = to_np(U), to_np(S), to_np(Vt)
        rec = (u[..., :k] * s[..., None, :]) @ vt[..., :k, :]
        np.testing.assert_allclose(rec, x, **tol(dtype))
        np.testing.assert_allclose(s, np.linalg.svd(x, compute_uv=False), **tol(dtype))
        S2 = L.svd(a, compute_uv=False, stream=CPU)
        assert isinstance(S2, mx.array)
        np.testing.assert_allclose(to_np(S2), s, **tol(dtype))


@pytest.mark.parametrize("shape", [(0, 4, 4), (3, 0, 0), (2, 5, 0), (2, 0, 5), (5, 0), (0, 5)])
def test_svd_empty_gives_identities(shape):
    a = np.zeros(shape, np.float32)
    U, S, Vt = L.svd(A(a), stream=CPU)
    u, s, vt = np.linalg.svd(a)
    assert U.shape == u.shape and S.shape == s.shape and Vt.shape == vt.shape
    assert np.array_equal(to_np(U), u) and np.array_equal(to_np(Vt), vt)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 3, 4, 4)])
def test_qr(dtype, shape):
    x = rand(*shape, dtype=dtype)
    for a in layouts(x):
        Q, R = L.qr(a, stream=CPU)
        k = min(shape[-2:])
        assert Q.shape == shape[:-1] + (k,) and R.shape == shape[:-2] + (k, shape[-1])
        q, r = to_np(Q), to_np(R)
        np.testing.assert_allclose(q @ r, x, **tol(dtype))
        np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k)), **tol(dtype))
        assert np.all(np.tril(r, -1) == 0)


@pytest.mark.parametrize("shape", [(0, 0), (3, 0, 0), (0, 4, 4), (5, 0), (0, 5)])
def test_qr_empty(shape):
    Q, R = L.qr(mx.zeros(shape), stream=CPU)
    q, r = np.linalg.qr(np.zeros(shape, np.float32))
    assert Q.shape == q.shape and R.shape == r.shape


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_inv_and_tri_inv(dtype):
    x = rand(3, 5, 5, dtype=dtype) + 5 * np.eye(5, dtype=dtype)
    for a in layouts(x):
        np.testing.assert_allclose(to_np(L.inv(a, stream=CPU)), np.linalg.inv(x), **tol(dtype))
    for upper in (False, True):
        t = np.triu(x) if upper else np.tril(x)
        r = to_np(L.tri_inv(A(x), upper=upper, stream=CPU))
        np.testing.assert_allclose(r, np.linalg.inv(t), **tol(dtype))
        # the other triangle of the result is exactly zero
        assert np.all((np.tril(r, -1) if upper else np.triu(r, 1)) == 0)
    assert L.inv(mx.zeros((2, 0, 0)), stream=CPU).shape == (2, 0, 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cholesky_and_inverse(dtype):
    x = spd(6, (2,), dtype)
    for a in layouts(x):
        Lo = to_np(L.cholesky(a, stream=CPU))
        Up = to_np(L.cholesky(a, upper=True, stream=CPU))
        np.testing.assert_allclose(Lo, np.linalg.cholesky(x), **tol(dtype))
        np.testing.assert_allclose(Up, np.swapaxes(Lo, -1, -2), **tol(dtype))
        assert np.all(np.triu(Lo, 1) == 0) and np.all(np.tril(Up, -1) == 0)
    for upper in (False, True):
        f = L.cholesky(A(x), upper=upper, stream=CPU)
        inv = to_np(L.cholesky_inv(f, upper=upper, stream=CPU))
        np.testing.assert_allclose(inv, np.linalg.inv(x), rtol=1e-3, atol=1e-4)
    # one triangle is read: garbage in the other changes nothing
    junk = np.triu(np.full_like(x, 99.0), 1)
    np.testing.assert_allclose(to_np(L.cholesky(A(np.tril(x) + junk), stream=CPU)),
                               np.linalg.cholesky(x), **tol(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (5, 5), (3, 4, 4)])
def test_eig(dtype, shape):
    x = rand(*shape, dtype=np.float64)
    if dtype == np.complex64:
        x = x + 1j * rand(*shape, dtype=np.float64)
    x = x.astype(dtype)
    for a in layouts(x):
        w, v = L.eig(a, stream=CPU)
        assert w.dtype == mx.complex64 == v.dtype and w.shape == shape[:-1] and v.shape == shape
        wn, vn = to_np(w), to_np(v)
        # MLX's eigenvectors of complex input are not eigenvectors (it does
        # not conjugate LAPACK's left eigenvectors); cmlx's are
        if not (SUBJECT_IS_MLX and dtype == np.complex64):
            np.testing.assert_allclose(x @ vn, wn[..., None, :] * vn, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(np.sort_complex(to_np(L.eigvals(a, stream=CPU)).ravel()),
                                   np.sort_complex(wn.ravel()), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np.sort_complex(wn.ravel()),
                                   np.sort_complex(np.linalg.eigvals(x).ravel()), rtol=1e-4, atol=1e-4)


def test_eig_complex_pair():
    w, v = L.eig(mx.array([[0.0, -1.0], [1.0, 0.0]]), stream=CPU)
    assert sorted(to_np(w).tolist(), key=lambda z: z.imag) == [-1j, 1j]
    x = np.array([[0.0, -1.0], [1.0, 0.0]])
    np.testing.assert_allclose(x @ to_np(v), to_np(w)[None] * to_np(v), atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(dtype, uplo):
    x = rand(3, 6, 6, dtype=np.float64)
    if dtype == np.complex64:
        x = x + 1j * rand(3, 6, 6, dtype=np.float64)
    x = (x + np.conj(np.swapaxes(x, -1, -2))).astype(dtype)
    # the unread triangle holds junk
    tri = np.triu(x) if uplo == "U" else np.tril(x)
    junk = (np.tril(np.full_like(x, 7), -1) if uplo == "U" else np.triu(np.full_like(x, 7), 1))
    for a in layouts(tri + junk):
        w, v = L.eigh(a, UPLO=uplo, stream=CPU)
        assert w.dtype == (mx.float32 if dtype == np.complex64 else a.dtype) and v.dtype == a.dtype
        wn, vn = to_np(w), to_np(v)
        np.testing.assert_allclose(wn, np.linalg.eigvalsh(x), **tol(dtype))
        np.testing.assert_allclose(x @ vn, wn[..., None, :] * vn, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(to_np(L.eigvalsh(a, UPLO=uplo, stream=CPU)), wn, **tol(dtype))


@pytest.mark.parametrize("shape", [(0, 4, 4), (3, 0, 0), (0, 0)])
def test_eig_eigh_empty(shape):
    w, v = L.eigh(mx.zeros(shape), stream=CPU)
    wn, vn = np.linalg.eigh(np.zeros(shape, np.float32))
    assert w.shape == wn.shape and v.shape == vn.shape
    w, v = L.eig(mx.zeros(shape), stream=CPU)
    assert w.shape == wn.shape and v.shape == vn.shape
    assert L.eigvals(mx.zeros(shape), stream=CPU).shape == wn.shape


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 3, 4, 4)])
def test_lu(dtype, shape):
    x = rand(*shape, dtype=dtype)
    for a in layouts(x):
        P, Lo, U = L.lu(a, stream=CPU)
        k = min(shape[-2:])
        assert P.dtype == mx.uint32 and P.shape == shape[:-1]
        assert Lo.shape == shape[:-1] + (k,) and U.shape == shape[:-2] + (k, shape[-1])
        p, lo, u = to_np(P), to_np(Lo), to_np(U)
        lp = np.take_along_axis(lo, p[..., None].astype(np.int64), axis=-2)
        np.testing.assert_allclose(lp @ u, x, **tol(dtype))
        LU, piv = L.lu_factor(a, stream=CPU)
        assert piv.dtype == mx.uint32 and piv.shape == shape[:-2] + (k,)
        lu = to_np(LU)
        np.testing.assert_allclose(np.triu(lu)[..., :k, :], u, **tol(dtype))


def test_lu_factor_pivots_are_row_swaps():
    x = rand(6, 6)
    LU, piv = L.lu_factor(A(x), stream=CPU)
    lu, perm = to_np(LU), list(range(6))
    for i, p in enumerate(to_np(piv).tolist()):
        perm[i], perm[p] = perm[p], perm[i]
    lo = np.tril(lu, -1) + np.eye(6)
    np.testing.assert_allclose(lo @ np.triu(lu), x[perm], rtol=1e-4, atol=1e-5)


def test_lu_singular_is_fine():
    a = np.array([[1.0, 2, 3, 4], [2, 4, 6, 8], [0, 1, 1, 0], [1, 0, 0, 1]], np.float32)
    P, Lo, U = L.lu(A(a), stream=CPU)
    lp = np.take_along_axis(to_np(Lo), to_np(P)[:, None].astype(np.int64), axis=0)
    np.testing.assert_allclose(lp @ to_np(U), a, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_solve(dtype):
    a = rand(3, 1, 5, 5, dtype=dtype) + 4 * np.eye(5, dtype=dtype)
    b = rand(3, 2, 5, 3, dtype=dtype)
    for aa in layouts(a):
        r = to_np(L.solve(aa, A(b), stream=CPU))
        np.testing.assert_allclose(r, np.linalg.solve(a, b), **tol(dtype))
    v = rand(5, dtype=dtype)
    np.testing.assert_allclose(to_np(L.solve(A(a[0, 0]), A(v), stream=CPU)),
                               np.linalg.solve(a[0, 0], v), **tol(dtype))
    if not SUBJECT_IS_MLX:
        # MLX fails on these with a take_along_axis error; cmlx broadcasts the
        # batches (a batch of matrices with one vector: the matmul rule)
        r = to_np(L.solve(A(a[:, 0]), A(v), stream=CPU))
        np.testing.assert_allclose(r, np.linalg.solve(a[:, 0], v[None, :, None])[..., 0],
                                   **tol(dtype))
        b3 = rand(2, 5, 3, dtype=dtype)
        np.testing.assert_allclose(to_np(L.solve(A(a), A(b3), stream=CPU)),
                                   np.linalg.solve(a, b3), **tol(dtype))
    # a float32 matrix, an integer right-hand side
    r = L.solve(A(a[0, 0]), mx.array([1, 2, 3, 4, 5]), stream=CPU)
    assert r.dtype == A(a).dtype
    assert L.solve(mx.zeros((0, 0)), mx.zeros((0,)), stream=CPU).shape == (0,)


@pytest.mark.parametrize("upper", [False, True])
def test_solve_triangular(upper):
    a = rand(2, 4, 4) + 4 * np.eye(4, dtype=np.float32)
    t = np.triu(a) if upper else np.tril(a)
    b = rand(2, 4, 3)
    r = to_np(L.solve_triangular(A(a), A(b), upper=upper, stream=CPU))
    np.testing.assert_allclose(r, np.linalg.solve(t, b), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 5), (2, 3, 4)])
def test_pinv(shape):
    x = rand(*shape)
    np.testing.assert_allclose(to_np(L.pinv(A(x), stream=CPU)), np.linalg.pinv(x),
                               rtol=1e-3, atol=1e-4)
    sing = np.array([[4.0, 1.0], [4.0, 1.0]], np.float32)
    np.testing.assert_allclose(to_np(L.pinv(A(sing), stream=CPU)), np.linalg.pinv(sing),
                               rtol=1e-4, atol=1e-5)
    for s in [(0, 0), (0, 3), (3, 0), (2, 0, 4)]:
        assert L.pinv(mx.zeros(s), stream=CPU).shape == np.linalg.pinv(np.zeros(s)).shape


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 7])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_det_slogdet(n, dtype):
    x = rand(2, n, n, dtype=dtype)
    d = to_np(L.det(A(x), stream=CPU))
    np.testing.assert_allclose(d, np.linalg.det(x), rtol=1e-4, atol=1e-5)
    sg, la = L.slogdet(A(x), stream=CPU)
    sn, ln = np.linalg.slogdet(x)
    np.testing.assert_allclose(to_np(sg), sn)
    np.testing.assert_allclose(to_np(la), ln, rtol=1e-4, atol=1e-4)


def test_det_singular_and_integer():
    for a in ([[1.0, 2], [2, 4]], np.ones((5, 5)), np.diag([1.0, 2, 0, 3])):
        a = A(np.array(a, np.float32))
        sg, la = L.slogdet(a, stream=CPU)
        assert float(sg) == 0.0 and float(la) == -math.inf
        assert abs(float(L.det(a, stream=CPU))) < 1e-5
    assert L.det(mx.array([[1, 2], [3, 4]]), stream=CPU).dtype == mx.float32
    assert float(L.det(mx.array([[1, 2], [3, 4]]), stream=CPU)) == -2.0
    sg, la = L.slogdet(0.1 * mx.eye(100), stream=CPU)
    assert float(sg) == 1.0 and abs(float(la) - 100 * math.log(0.1)) < 1e-3


# ---- norm and cross ----------------------------------------------------------

VORDS = [None, 0.5, 0, 1, 2, 3, -1, -2.5, math.inf, -math.inf]
MORDS = [None, "fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_norm_against_numpy(dtype):
    x = rand(2, 3, 4, dtype=dtype)
    a = A(x)
    for ax in [0, 1, 2, -1]:
        for o in VORDS:
            for kd in (False, True):
                r = L.norm(a, ord=o, axis=ax, keepdims=kd)
                e = np.linalg.norm(x, ord=o, axis=ax, keepdims=kd)
                assert r.shape == e.shape
                np.testing.assert_allclose(to_np(r), e, rtol=1e-5, atol=1e-5)
    for ax in itertools.permutations([0, 1, 2, -1], 2):
        if len({d % 3 for d in ax}) < 2:
            continue
        for o in MORDS:
            for kd in (False, True):
                r = L.norm(a, ord=o, axis=ax, keepdims=kd)
                e = np.linalg.norm(x, ord=o, axis=ax, keepdims=kd)
                assert r.shape == e.shape, (o, ax, kd)
                np.testing.assert_allclose(to_np(r), e, rtol=1e-5, atol=1e-5)
    for kd in (False, True):
        r = L.norm(a, keepdims=kd)
        assert r.shape == np.linalg.norm(x, keepdims=kd).shape
        np.testing.assert_allclose(to_np(r), np.linalg.norm(x), rtol=1e-5)


def test_norm_dtypes_and_complex():
    assert L.norm(mx.array([3, 4])).dtype == mx.float32
    assert float(L.norm(mx.array([3, 4]))) == 5.0
    assert L.norm(mx.array([1, 2], mx.float16)).dtype == mx.float16
    z = rand(3, 4) + 1j * rand(3, 4)
    np.testing.assert_allclose(to_np(L.norm(A(z))), np.linalg.norm(z), rtol=1e-5)
    np.testing.assert_allclose(to_np(L.norm(A(z), axis=1)), np.linalg.norm(z, axis=1),
                               rtol=1e-5)
    np.testing.assert_allclose(to_np(L.norm(A(z), "fro")), np.linalg.norm(z, "fro"),
                               rtol=1e-5)
    # transposed and sliced input
    x = rand(4, 6)
    np.testing.assert_allclose(to_np(L.norm(A(x).T, 1)), np.linalg.norm(x.T, 1), rtol=1e-5)
    np.testing.assert_allclose(to_np(L.norm(A(x)[:, ::2], "nuc", stream=CPU)),
                               np.linalg.norm(x[:, ::2], "nuc"), rtol=1e-5)
    assert float(L.norm(mx.zeros((0,)))) == 0.0


def test_norm_errors():
    a = mx.ones((2, 2))
    with pytest.raises(ValueError, match="too many axes"):
        L.norm(mx.ones((2, 2, 2)), axis=(0, 1, 2))
    with pytest.raises(ValueError, match="too many axes"):
        L.norm(mx.ones((2, 2, 2)), 2)
    with pytest.raises(ValueError, match="Invalid ord 3 for matrix norm"):
        L.norm(a, 3)
    with pytest.raises(ValueError, match="Invalid ord value 'abc' for matrix norm"):
        L.norm(a, "abc")
    with pytest.raises(ValueError, match="only supported for matrices, but received 1"):
        L.norm(a, "fro", axis=0)
    with pytest.raises(IndexError):
        L.norm(a, axis=5)
    with pytest.raises(TypeError):
        L.norm(a, ord=[1])
    with pytest.raises(TypeError):
        L.norm(np.ones(3))


def test_cross():
    a, b = rand(2, 1, 3), rand(1, 4, 3)
    np.testing.assert_allclose(to_np(L.cross(A(a), A(b))), np.cross(a, b),
                               rtol=1e-5, atol=1e-6)
    a, b = rand(3, 2), rand(3, 2)
    np.testing.assert_allclose(to_np(L.cross(A(a), A(b), axis=0)),
                               np.cross(a, b, axis=0), rtol=1e-5, atol=1e-6)
    r = L.cross(mx.array([1, 2, 3]), mx.array([4, 5, 6]))
    assert r.dtype == mx.int32 and r.tolist() == [-3, 6, -3]
    assert L.cross(mx.array([1.0, 2]), mx.array([3.0, 4])).tolist() == [0, 0, -2]
    assert L.cross(mx.array([1.0, 2]), mx.array([3.0, 4, 5])).tolist() == [10, -5, -2]
    with pytest.raises(ValueError, match="must have size 2 or 3"):
        L.cross(mx.array([1.0]), mx.array([2.0]))


@cmlx_only
def test_cross_axis_errors():
    # MLX's suite (test_ops::test_cross_invalid_axis) wants ValueError; the
    # installed MLX 0.32.4 still raises IndexError
    for ax in [1, -2, -50]:
        with pytest.raises(ValueError, match="out of bounds"):
            L.cross(mx.array([1.0, 2, 3]), mx.array([4.0, 5, 6]), axis=ax)


# ---- errors ------------------------------------------------------------------

SQUARE_FNS = {
    "inv": lambda a: L.inv(a, stream=CPU),
    "tri_inv": lambda a: L.tri_inv(a, stream=CPU),
    "cholesky": lambda a: L.cholesky(a, stream=CPU),
    "cholesky_inv": lambda a: L.cholesky_inv(a, stream=CPU),
    "eig": lambda a: L.eig(a, stream=CPU),
    "eigvals": lambda a: L.eigvals(a, stream=CPU),
    "eigh": lambda a: L.eigh(a, stream=CPU),
    "eigvalsh": lambda a: L.eigvalsh(a, stream=CPU),
    "det": lambda a: L.det(a, stream=CPU),
    "slogdet": lambda a: L.slogdet(a, stream=CPU),
}
ANY_FNS = {
    "qr": lambda a: L.qr(a, stream=CPU),
    "svd": lambda a: L.svd(a, stream=CPU),
    "lu": lambda a: L.lu(a, stream=CPU),
    "lu_factor": lambda a: L.lu_factor(a, stream=CPU),
    "pinv": lambda a: L.pinv(a, stream=CPU),
}


@pytest.mark.parametrize("name", sorted({**SQUARE_FNS, **ANY_FNS}))
def test_rank_and_dtype_errors(name):
    f = {**SQUARE_FNS, **ANY_FNS}[name]
    with pytest.raises(ValueError, match=">= 2 dimensions"):
        f(mx.array([1.0, 2.0]))
    with pytest.raises(ValueError):
        f(mx.array(1.0))
    if name in SQUARE_FNS:
        with pytest.raises(ValueError, match="square"):
            f(mx.ones((2, 3)))
    if name not in ("det", "slogdet"):
        with pytest.raises(ValueError, match="Arrays must have type float32"):
            f(mx.array([[1, 2], [3, 4]]))
        with pytest.raises(ValueError, match="Received array with type float16"):
            f(mx.ones((2, 2), mx.float16))
    if name in ("svd", "eig", "eigvals", "eigh", "eigvalsh"):
        mx.eval(f(mx.eye(2).astype(mx.complex64)))
    elif name in ("det", "slogdet"):
        with pytest.raises(ValueError, match="Complex inputs are not supported"):
            f(mx.eye(4).astype(mx.complex64))
    else:
        with pytest.raises(ValueError, match="float32 or float64"):
            f(mx.eye(2).astype(mx.complex64))


def test_solve_errors():
    a = mx.eye(3)
    with pytest.raises(ValueError, match="First input must have >= 2"):
        L.solve(mx.ones(3), mx.ones(3), stream=CPU)
    with pytest.raises(ValueError, match="Second input must have >= 1"):
        L.solve(a, mx.array(1.0), stream=CPU)
    with pytest.raises(ValueError, match="must be a square matrix"):
        L.solve(mx.ones((2, 3)), mx.ones(2), stream=CPU)
    with pytest.raises(ValueError, match="must match second to last"):
        L.solve(a, mx.ones(2), stream=CPU)
    with pytest.raises(ValueError, match="must promote to float32 or float64"):
        L.solve(mx.eye(2, dtype=mx.int32), mx.ones(2, mx.int32), stream=CPU)
    with pytest.raises(ValueError, match="must promote"):
        L.solve_triangular(mx.eye(2, dtype=mx.int32), mx.ones(2, mx.int32), stream=CPU)
    with pytest.raises(TypeError):
        L.solve_triangular(a, mx.ones(3), True, stream=CPU)  # upper is keyword-only


def test_singular_and_indefinite_fail_at_eval():
    sing = mx.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(RuntimeError, match="LU factorization failed with error code 2"):
        mx.eval(L.inv(sing, stream=CPU))
    with pytest.raises(RuntimeError, match="triangular inversion failed with error code 2"):
        mx.eval(L.tri_inv(mx.array([[1.0, 0.0], [1.0, 0.0]]), stream=CPU))
    with pytest.raises(RuntimeError, match="triangular inversion failed"):
        mx.eval(L.solve(sing, mx.array([1.0, 2.0]), stream=CPU))
    with pytest.raises(RuntimeError, match="triangular inversion failed"):
        mx.eval(L.solve_triangular(mx.array([[1.0, 0.0], [1.0, 0.0]]), mx.ones(2), stream=CPU))
    # the failure of one matrix of a batch fails the whole result
    with pytest.raises(RuntimeError):
        mx.eval(L.inv(mx.stack([mx.eye(2), sing]), stream=CPU))
    # an input that failed leaves its operand intact
    assert sing.tolist() == [[1.0, 2.0], [2.0, 4.0]]


@cmlx_only
def test_cholesky_not_positive_definite_is_an_error():
    # MLX returns a partial factor here; cmlx reports it
    with pytest.raises(RuntimeError, match="not positive definite"):
        mx.eval(L.cholesky(mx.array([[1.0, 2.0], [2.0, 1.0]]), stream=CPU))


# ---- against real MLX ----------------------------------------------------------


@needs_oracle
def test_outputs_match_mlx():
    """cmlx calls LAPACK as MLX does: the same signs, orders and pivots."""
    x = rand(3, 5, 5)
    s = x + np.swapaxes(x, -1, -2)
    z = (rand(4, 4) + 1j * rand(4, 4)).astype(np.complex64)
    h = (z + z.conj().T).astype(np.complex64)
    cases = [
        ("svd", x[0, :, :3]), ("qr", x), ("lu", x[:, :, :4]), ("lu_factor", x),
        ("eig", x), ("eigvals", x), ("eigh", s), ("eigvalsh", s), ("eigvals", z),
        ("eigh", h), ("inv", x), ("cholesky", spd(4)), ("pinv", x), ("det", x),
        ("slogdet", x), ("svd", z),
    ]
    for name, a in cases:
        ours = getattr(L, name)(A(a), stream=CPU)
        ref = getattr(mlx_ref.linalg, name)(mlx_ref.array(a), stream=mlx_ref.cpu)
        ours = ours if isinstance(ours, (tuple, list)) else (ours,)
        ref = ref if isinstance(ref, (tuple, list)) else (ref,)
        if name == "svd" and a.dtype == np.complex64:  # singular values only
            ours, ref = ours[1:2], ref[1:2]
        assert len(ours) == len(ref)
        for k, (o, r) in enumerate(zip(ours, ref)):
            assert o.shape == r.shape and str(o.dtype)[-7:] == str(r.dtype)[-7:], name
            o, r = np.array(o), np.array(r)
            # Vectors are LAPACK's only up to a sign (real) or phase
            # (complex) per vector: which one comes out depends on the
            # LAPACK build's rounding (Debian's OpenBLAS here, the one inside
            # MLX's wheel there) and on its threading, so vectors are
            # compared after aligning each to the reference's phase.
            if (name, k) in _VECTOR_OUTPUTS and o.ndim >= 2:
                o = _align_phase(o, r, _VECTOR_OUTPUTS[name, k])
            np.testing.assert_allclose(o, r, rtol=2e-4, atol=2e-4, err_msg=name)


# (op, output index) -> the axis along which each vector runs: columns of
# eigenvector matrices, Q and U, rows of R and Vt.
_VECTOR_OUTPUTS = {("eig", 1): -2, ("eigh", 1): -2, ("svd", 0): -2, ("svd", 2): -1,
                   ("qr", 0): -2, ("qr", 1): -1}


def _align_phase(o, r, axis):
    """o with each vector (running along axis) multiplied by the unit
    scalar that best aligns it with r's: the phase of <o, r>.  Vectors
    that agree up to sign or phase then agree exactly; ones that differ
    otherwise still differ."""
    inner = np.sum(np.conj(o) * r, axis=axis, keepdims=True)
    mag = np.abs(inner)
    phase = np.where(mag > 0, inner / np.where(mag > 0, mag, 1), 1)
    return o * (phase if np.iscomplexobj(o) else np.real(phase))


def test_align_phase_is_not_vacuous():
    """Sign-flipped columns align; a genuinely different column does not."""
    v = np.linalg.qr(rand(4, 4))[0]
    flipped = v * np.array([1, -1, 1, -1], dtype=v.dtype)
    np.testing.assert_allclose(_align_phase(flipped, v, -2), v, atol=1e-6)
    other = v.copy()
    other[:, 0] = v[:, 1]
    assert not np.allclose(_align_phase(other, v, -2), v, atol=1e-3)
    z = np.linalg.qr(rand(3, 3) + 1j * rand(3, 3))[0]
    np.testing.assert_allclose(_align_phase(z * np.exp(0.7j), z, -2), z, atol=1e-6)


@needs_oracle
def test_norm_matches_mlx():
    x = np.arange(1, 25, dtype=np.float32).reshape(2, 3, 4)
    for o, ax in itertools.product(VORDS, [0, -1, None]):
        if ax is None and o is not None:
            continue
        r = mlx_ref.linalg.norm(mlx_ref.array(x), ord=o, axis=ax)
        np.testing.assert_allclose(to_np(L.norm(A(x), ord=o, axis=ax)), np.array(r),
                                   rtol=1e-6)


# ---- nodes and transforms -------------------------------------------------------


def test_multi_output_siblings():
    a = A(rand(4, 3))
    U, S, Vt = L.svd(a, stream=CPU)
    mx.eval(S)  # evaluating one output computes all of them
    del U
    u2, s2, vt2 = L.svd(a, stream=CPU)
    np.testing.assert_allclose(to_np(Vt), to_np(vt2))
    q, r = L.qr(a, stream=CPU)
    del q
    np.testing.assert_allclose(np.abs(to_np(r)), np.abs(np.linalg.qr(to_np(a))[1]), rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_vmap_rules(axis):
    x = spd(4, (3,))  # (3, 4, 4): batch over axis 0 only is square for axis 0
    base = np.moveaxis(x, 0, axis)
    a = A(base)
    checks = {
        "inv": (lambda m: L.inv(m, stream=CPU), np.linalg.inv),
        "cholesky": (lambda m: L.cholesky(m, stream=CPU), np.linalg.cholesky),
        "eigvalsh": (lambda m: L.eigvalsh(m, stream=CPU), np.linalg.eigvalsh),
        "svdvals": (lambda m: L.svd(m, compute_uv=False, stream=CPU),
                    lambda m: np.linalg.svd(m, compute_uv=False)),
    }
    for name, (f, ref) in checks.items():
        r = mx.vmap(f, in_axes=axis)(a)
        np.testing.assert_allclose(to_np(r), ref(x), rtol=1e-4, atol=1e-4, err_msg=name)
    w, v = mx.vmap(lambda m: L.eigh(m, stream=CPU), in_axes=axis)(a)
    np.testing.assert_allclose(to_np(w), np.linalg.eigvalsh(x), rtol=1e-4)
    U, S, Vt = mx.vmap(lambda m: L.svd(m, stream=CPU), in_axes=axis)(a)
    rec = (to_np(U) * to_np(S)[:, None, :]) @ to_np(Vt)
    np.testing.assert_allclose(rec, x, rtol=1e-4, atol=1e-4)
    w, v = mx.vmap(lambda m: L.eig(m, stream=CPU), in_axes=axis)(a)
    np.testing.assert_allclose(x @ to_np(v), to_np(w)[:, None, :] * to_np(v), rtol=1e-4,
                               atol=1e-4)
    if not SUBJECT_IS_MLX:  # MLX's Inverse vmap rule forgets tri (a full inverse)
        r = mx.vmap(lambda m: L.tri_inv(m, upper=True, stream=CPU), in_axes=axis)(a)
        np.testing.assert_allclose(to_np(r), np.linalg.inv(np.triu(x)), rtol=1e-4, atol=1e-4)
    # composed functions batch through their parts
    np.testing.assert_allclose(to_np(mx.vmap(lambda m: L.pinv(m, stream=CPU), in_axes=axis)(a)),
                               np.linalg.pinv(x), rtol=1e-3, atol=1e-4)


@cmlx_only
def test_vmap_solve():
    a, b = spd(3, (2,)), rand(2, 3, 2)
    r = mx.vmap(lambda x, y: L.solve(x, y, stream=CPU))(A(a), A(b))
    np.testing.assert_allclose(to_np(r), np.linalg.solve(a, b), rtol=1e-4, atol=1e-5)
    b2 = rand(3, 2, 4)
    r = mx.vmap(lambda x, y: L.solve(x, y, stream=CPU), in_axes=(None, 2))(A(a[0]), A(b2))
    np.testing.assert_allclose(to_np(r), np.linalg.solve(a[0], np.moveaxis(b2, 2, 0)),
                               rtol=1e-4, atol=1e-5)


def test_no_derivatives_as_mlx():
    a = A(spd(3))
    for f in (lambda x: L.inv(x, stream=CPU).sum(), lambda x: L.eigh(x, stream=CPU)[0].sum(),
              lambda x: L.svd(x, stream=CPU)[1].sum(), lambda x: L.qr(x, stream=CPU)[1].sum()):
        with pytest.raises((ValueError, NotImplementedError)):
            mx.grad(f)(a)
    # compositions of differentiable ops keep their derivatives
    x = rand(3, 3)
    g = mx.grad(lambda m: L.norm(m))(A(x))
    np.testing.assert_allclose(to_np(g), x / np.linalg.norm(x), rtol=1e-5)
    g = mx.grad(lambda m: L.det(m, stream=CPU))(A(x))
    np.testing.assert_allclose(to_np(g), np.linalg.det(x) * np.linalg.inv(x).T, rtol=1e-3,
                               atol=1e-4)


def test_default_stream_and_signatures():
    # on this CPU build the default stream works
    x = spd(3)
    np.testing.assert_allclose(to_np(L.inv(A(x))), np.linalg.inv(x), rtol=1e-4)
    names = """norm qr svd inv tri_inv cholesky cholesky_inv pinv cross eig eigvals eigh
    eigvalsh lu lu_factor solve solve_triangular det slogdet""".split()
    for n in names:
        assert callable(getattr(L, n)), n
    assert isinstance(L.svd(mx.eye(2), stream=CPU), tuple)
    assert isinstance(L.lu(mx.eye(2), stream=CPU), tuple)
    with pytest.raises(TypeError):
        L.eigvalsh(mx.eye(2), UPLO=None)
