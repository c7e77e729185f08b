"""Batched matmul with broadcast batch shapes: the CPU kernel folds batch
axes into the rows of a tall product where the strides allow, and runs
batches of small float32 products on the thread pool.  Every layout must
give NumPy's values (float64 reference) and MLX's."""

import numpy as np
import pytest

from conftest import mlx_ref, mx

SHAPES = [
    ((5, 3, 4), (4, 6)),  # one shared b: a single tall product
    ((2, 3, 4, 5), (2, 1, 5, 6)),  # b shared across the inner batch axis
    ((2, 1, 4, 5), (1, 3, 5, 6)),  # both broadcast
    ((3, 1, 5), (3, 5, 7)),  # one row each
    ((7, 1, 1, 5), (1, 4, 5, 2)),  # one row, b shared across the outer axis
    ((1, 3, 4), (6, 4, 2)),  # a broadcast
    ((300, 3, 3), (300, 3, 3)),  # many tiny matrices (the pool)
    ((4, 70, 80), (80, 90)),  # large enough for BLAS after folding
    ((3, 2, 40, 50), (3, 1, 50, 60)),
    ((2, 200, 3), (2, 3, 200)),
]


def rand(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def close(got, want, tol=1e-4):
    np.testing.assert_allclose(np.array(got, dtype=np.float64), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("sa,sb", SHAPES)
def test_values_against_numpy_and_mlx(sa, sb):
    a, b = rand(sa, 1), rand(sb, 2)
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    got = mx.matmul(mx.array(a), mx.array(b))
    assert got.shape == want.shape
    close(got, want)
    if mlx_ref is not None:
        theirs = mlx_ref.matmul(mlx_ref.array(a), mlx_ref.array(b))
        close(got, np.array(theirs, dtype=np.float64))


@pytest.mark.parametrize("sa,sb", SHAPES)
def test_transposed_and_sliced_layouts(sa, sb):
    a, b = rand(sa, 3), rand(sb, 4)
    # a transposed view of a (its last two axes swapped twice) and a
    # strided slice of a larger b
    at = mx.swapaxes(mx.array(np.ascontiguousarray(np.swapaxes(a, -1, -2))), -1, -2)
    big = np.concatenate([b, b], axis=-1)
    bs = mx.array(big)[..., ::2]
    want = np.matmul(a.astype(np.float64), big[..., ::2].astype(np.float64))
    close(mx.matmul(at, bs), want)
    # a batch axis that is itself a broadcast view inside a
    if len(sa) >= 3 and sa[0] > 1:
        a0 = mx.broadcast_to(mx.array(a[:1]), sa)
        want = np.matmul(np.broadcast_to(a[:1], sa).astype(np.float64), b.astype(np.float64))
        close(mx.matmul(a0, mx.array(b)), want)


@pytest.mark.parametrize("sa,sb", SHAPES[:6])
def test_addmm_batched(sa, sb):
    a, b = rand(sa, 5), rand(sb, 6)
    out_shape = np.matmul(a, b).shape
    c = rand(out_shape[-1:], 7)
    want = 0.5 * np.matmul(a.astype(np.float64), b.astype(np.float64)) + 2.0 * c
    close(mx.addmm(mx.array(c), mx.array(a), mx.array(b), alpha=0.5, beta=2.0), want)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
def test_other_dtypes(dtype):
    if dtype == "float64":
        kw = {"stream": mx.cpu}
    else:
        kw = {}
    a, b = rand((6, 2, 3, 4), 8), rand((6, 1, 4, 5), 9)
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    t = getattr(mx, dtype)
    got = mx.matmul(mx.array(a).astype(t), mx.array(b).astype(t), **kw)
    assert got.dtype == t
    close(got.astype(mx.float32), want, tol=5e-2 if dtype != "float64" else 1e-6)


def test_small_batches_are_deterministic_and_exactish():
    # the small path sums in double: each element is the float32 nearest
    # the exact product, whatever thread computes it
    a, b = rand((512, 4, 4), 10), rand((512, 4, 4), 11)
    want = np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    got = np.array(mx.matmul(mx.array(a), mx.array(b)))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.array(mx.matmul(mx.array(a), mx.array(b))), got)


def test_grad_through_broadcast_batches():
    a, b = rand((2, 1, 3, 4), 12), rand((1, 5, 4, 2), 13)
    ga, gb = mx.grad(lambda x, y: (x @ y).sum(), argnums=(0, 1))(mx.array(a), mx.array(b))
    ones = np.ones((2, 5, 3, 2))
    close(ga, (ones @ np.swapaxes(b, -1, -2).astype(np.float64)).sum(1, keepdims=True))
    close(gb, (np.swapaxes(a, -1, -2).astype(np.float64) @ ones).sum(0, keepdims=True))


def test_shape_errors():
    with pytest.raises(ValueError):
        mx.matmul(mx.zeros((2, 3, 4)), mx.zeros((3, 5, 2)))
    with pytest.raises(ValueError):
        mx.matmul(mx.zeros((2, 3, 4)), mx.zeros((4, 3, 2)))


# Every tile shape of the small kernels (4 x 8 / 8 x 8 tiles, the wide
# one-, two- and three-row tiles, masked last columns), B with and without
# contiguous rows (packed), A with a column stride, AddMM's beta.
_KERNEL_SCRIPT = r"""
import sys
import numpy as np
import cmlx.core as mx

rg = np.random.default_rng(21)
outs = []
for M in (1, 2, 3, 4, 5, 7, 8, 9, 12, 13):
    for N in (1, 3, 8, 9, 16, 17, 32, 33, 64, 65, 100):
        for K in (1, 2, 7, 8, 33):
            if M * N * K > 16384:
                continue
            a = rg.standard_normal((2, M, K)).astype(np.float32)
            b = rg.standard_normal((2, K, N)).astype(np.float32)
            c = rg.standard_normal((2, M, N)).astype(np.float32)
            A, B, C = mx.array(a), mx.array(b), mx.array(c)
            bt = mx.swapaxes(mx.array(np.ascontiguousarray(np.swapaxes(b, 1, 2))), 1, 2)
            at = mx.swapaxes(mx.array(np.ascontiguousarray(np.swapaxes(a, 1, 2))), 1, 2)
            outs += [A @ B, A @ bt, at @ B, A[1] @ B[0],
                     mx.addmm(C, A, B, alpha=0.75, beta=-1.25), mx.addmm(C[0], at[0], bt[0])]
np.save(sys.argv[1], np.concatenate([np.array(o).ravel() for o in outs]))
"""


def test_small_kernels_agree_bit_for_bit(tmp_path):
    # the AVX-512, AVX2 and portable kernels sum the same exact products in
    # the same order in double: the same bits (whichever the CPU has)
    import os
    import subprocess
    import sys

    script = tmp_path / "k.py"
    script.write_text(_KERNEL_SCRIPT)
    results = []
    for env in ({}, {"CMLX_MATMUL_AVX512": "0"}, {"CMLX_MATMUL_SIMD": "0"}):
        out = tmp_path / f"out{len(results)}.npy"
        e = dict(os.environ, **env)
        subprocess.run([sys.executable, str(script), str(out)], check=True, env=e)
        results.append(np.load(out).view(np.uint32))
    assert results[0].size > 100000
    np.testing.assert_array_equal(results[0], results[2])
    np.testing.assert_array_equal(results[1], results[2])


@pytest.mark.parametrize("M,N,K", [(1, 256, 64), (8, 8, 8), (5, 37, 11), (9, 1, 40), (3, 70, 2)])
def test_small_kernel_tiles_against_float64(M, N, K):
    a, b = rand((7, M, K), 14), rand((7, K, N), 15)
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    got = np.array(mx.matmul(mx.array(a), mx.array(b)))
    # one rounding of a double sum: within one float32 ulp of the exact
    # product, and almost always its nearest float32
    np.testing.assert_allclose(got, want, rtol=1.2e-7, atol=1e-30)
    assert np.mean(got == want.astype(np.float32)) > 0.999
    if mlx_ref is not None:
        theirs = np.array(mlx_ref.matmul(mlx_ref.array(a), mlx_ref.array(b)))
        close(got, theirs.astype(np.float64))


def assert_same_rounded_product(got, want, dtype, mag):
    """got and want round the same float32 products once, summed in other
    orders where the AMX tiles run (gemm_amx.c): a unit in the last place
    apart at most, plus float32's accumulation error where terms cancel
    (2^-20 of mag, the sum of their magnitudes), and nearly always equal."""
    ulp = np.exp2(np.floor(np.log2(np.maximum(np.abs(want), 1e-30))) - (10 if dtype == "float16" else 7))
    assert np.all(np.abs(got - want) <= ulp + mag * 2.0**-20)
    assert np.mean(got == want) > 0.99


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("layout", ["rows", "transposed", "sliced", "transposed-slice"])
def test_half_operands_are_the_float32_product_rounded_once(dtype, layout):
    # a half operand BLAS can read as it lies (a transposed weight, x @ w.T)
    # is widened in its own orientation; any layout gives the float32
    # product of the same values, rounded once
    t = getattr(mx, dtype)
    rng = np.random.default_rng(7)
    M, K, N = 48, 256, 320
    x = mx.array(rng.standard_normal((M, K)).astype(np.float32)).astype(t)
    w = mx.array(rng.standard_normal((N + 8, K + 16)).astype(np.float32)).astype(t)
    if layout == "rows":
        b = mx.contiguous(mx.contiguous(w[:N, :K]).T)  # dense row-major (K, N)
    elif layout == "transposed":
        b = mx.contiguous(w[:N, :K]).T  # (K, N), a transposed view of a dense (N, K)
    elif layout == "sliced":
        b = w[:N, :K].T  # a transposed view with gaps (ld = K + 16): packed
    else:
        b = mx.contiguous(w.T)[:K, :N]  # row-major with gaps
    got = x @ b
    want = (x.astype(mx.float32) @ b.astype(mx.float32)).astype(t)
    assert got.dtype == t
    g, w32 = np.array(got.astype(mx.float32)), np.array(want.astype(mx.float32))
    mag = np.abs(np.array(x.astype(mx.float32))) @ np.abs(np.array(b.astype(mx.float32)))
    assert_same_rounded_product(g, w32, dtype, mag)
    if mlx_ref is not None:
        xr = mlx_ref.array(np.array(x.astype(mx.float32))).astype(getattr(mlx_ref, dtype))
        br = mlx_ref.array(np.array(b.astype(mx.float32))).astype(getattr(mlx_ref, dtype))
        ref = np.array((xr @ br).astype(mlx_ref.float32))
        np.testing.assert_allclose(np.array(got.astype(mx.float32)), ref, rtol=2e-2, atol=2e-1)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_large_half_product_scratch_is_reused_and_returned(dtype):
    # a half product whose widened scratch (several MB) comes from the
    # buffer cache: the same shape again (the next layer) gives the same
    # result, and once nothing holds a result the active memory is back
    # where it was (the scratch went back to the cache, not kept active)
    t = getattr(mx, dtype)
    rng = np.random.default_rng(11)
    M, K, N = 256, 512, 1024
    x = mx.array(rng.standard_normal((M, K)).astype(np.float32)).astype(t)
    w = mx.array(rng.standard_normal((N, K)).astype(np.float32)).astype(t)
    want = np.array((x.astype(mx.float32) @ w.astype(mx.float32).T).astype(t).astype(mx.float32))
    mx.eval(x, w)
    before = mx.get_active_memory()
    mag = np.abs(np.array(x.astype(mx.float32))) @ np.abs(np.array(w.astype(mx.float32))).T
    first = None
    for _ in range(3):
        got = np.array((x @ w.T).astype(mx.float32))
        assert_same_rounded_product(got, want, dtype, mag)
        if first is None:
            first = got
        assert np.array_equal(got, first)  # the same bits every time
        del got
    assert mx.get_active_memory() == before
