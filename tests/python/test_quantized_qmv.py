"""quantized_matmul with few rows of x (M <= 8: the decode-once loops of
quantized_qmv.c for x @ W^T, affine 2, 4 and 8 bits; quantized_rows.c for
the rest), checked against dequantize followed by a float64 product and
against real MLX.

The loops sum scale * (q . x) + bias * sum(x) per group in float32, in an
order of their own, so values are compared with a tolerance relative to
the magnitude of the terms: |x| @ (|scale| * q + |bias|)^T."""

import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import mlx_ref, mx, needs_oracle, to_np


def rand(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def codes(wq, bits):
    b = np.ascontiguousarray(np.array(wq)).view(np.uint8)
    bits_ = np.unpackbits(b, axis=-1, bitorder="little").reshape(*b.shape[:-1], -1, bits)
    return (bits_.astype(np.uint32) << np.arange(bits, dtype=np.uint32)).sum(-1)


def dequant(wq, s, b, gs, bits):
    """float64 (scale * q + bias) per group, and the same with |scale|, |bias|."""
    q = codes(wq, bits).astype(np.float64)
    q = q.reshape(*q.shape[:-1], -1, gs)
    s = to_np(s).astype(np.float64)[..., None]
    b = to_np(b).astype(np.float64)[..., None]
    shape = q.shape[:-2] + (-1,)
    return (q * s + b).reshape(shape), (q * np.abs(s) + np.abs(b)).reshape(shape)


def check(y, x, wq, s, b, gs, bits, transpose=True, rtol=1e-5):
    w, wabs = dequant(wq, s, b, gs, bits)
    if transpose:
        w, wabs = np.swapaxes(w, -1, -2), np.swapaxes(wabs, -1, -2)
    x = x.astype(np.float64)
    ref, mag = x @ w, np.abs(x) @ wabs
    y = to_np(y).astype(np.float64)
    assert y.shape == ref.shape
    err = np.abs(y - ref)
    assert np.all(err <= rtol * mag + 1e-30), (err / (mag + 1e-30)).max()


# K, group size pairs: K = group size (one group), odd numbers of groups, 4096
SHAPES = [(K, gs) for K in (64, 192, 320, 4096) for gs in (32, 64, 128) if K % gs == 0]


@pytest.mark.parametrize("bits", [2, 4, 8])
@pytest.mark.parametrize("K,gs", SHAPES)
def test_qmv_values(bits, K, gs):
    for N in (1, 3, 33):
        w = rand((N, K), seed=N + K)
        wq, s, b = mx.quantize(mx.array(w), group_size=gs, bits=bits)
        for M in range(1, 10):
            x = rand((M, K), seed=M)
            y = mx.quantized_matmul(mx.array(x), wq, s, b, True, gs, bits)
            check(y, x, wq, s, b, gs, bits)


@pytest.mark.parametrize("bits", [2, 3, 4, 8])
@pytest.mark.parametrize("gs", [32, 64, 128])
def test_qvm_values(bits, gs):
    """transpose=False (x @ W, W packed along N) with few rows of x."""
    K, N = 33, 3 * 128
    w = rand((K, N), seed=bits)
    wq, s, b = mx.quantize(mx.array(w), group_size=gs, bits=bits)
    for M in (1, 2, 5, 8, 9):
        x = rand((M, K), seed=M)
        y = mx.quantized_matmul(mx.array(x), wq, s, b, False, gs, bits)
        check(y, x, wq, s, b, gs, bits, transpose=False)


@pytest.mark.parametrize("bits", [2, 4, 8])
def test_qmv_layouts(bits):
    """Transposed, sliced and broadcast x; batched W; vectors."""
    K, N, gs = 320, 33, 64
    w = rand((N, K), seed=3)
    wq, s, b = mx.quantize(mx.array(w), group_size=gs, bits=bits)
    xt = rand((K, 5), seed=4)
    x = mx.array(xt).T  # a transposed view
    check(mx.quantized_matmul(x, wq, s, b, True, gs, bits), xt.T, wq, s, b, gs, bits)
    xs = rand((3, 2 * K), seed=5)
    x = mx.array(xs)[:, ::2]  # strided columns
    check(mx.quantized_matmul(x, wq, s, b, True, gs, bits), xs[:, ::2], wq, s, b, gs, bits)
    xv = rand((K,), seed=6)
    y = mx.quantized_matmul(mx.array(xv), wq, s, b, True, gs, bits)
    assert y.shape == (N,)
    check(y, xv, wq, s, b, gs, bits)
    xb = rand((2, 3, K), seed=7)  # 6 rows against one W
    check(mx.quantized_matmul(mx.array(xb), wq, s, b, True, gs, bits), xb, wq, s, b, gs, bits)
    x1 = rand((1, K), seed=8)
    y = mx.quantized_matmul(mx.broadcast_to(mx.array(x1), (4, K)), wq, s, b, True, gs, bits)
    check(y, np.broadcast_to(x1, (4, K)), wq, s, b, gs, bits)
    # a batch of W matrices, each with its own two rows of x
    w3 = rand((3, N, K), seed=9)
    q3 = mx.quantize(mx.array(w3), group_size=gs, bits=bits)
    x3 = rand((3, 2, K), seed=10)
    check(mx.quantized_matmul(mx.array(x3), *q3, True, gs, bits), x3, *q3, gs, bits)
    # rows of a W view: strided packed rows, scales and biases
    view = [a[1::2] for a in (wq, s, b)]
    x = rand((2, K), seed=11)
    check(mx.quantized_matmul(mx.array(x), *view, True, gs, bits), x, *view, gs, bits)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("bits", [2, 4, 8])
def test_qmv_half_x(dtype, bits):
    K, N, gs = 4096, 33, 64
    t = getattr(mx, dtype)
    wq, s, b = mx.quantize(mx.array(rand((N, K), 1)).astype(t), group_size=gs, bits=bits)
    for M in (1, 3, 8):
        x = mx.array(rand((M, K), M)).astype(t)
        y = mx.quantized_matmul(x, wq, s, b, True, gs, bits)
        assert y.dtype == t
        # the float32 result, rounded once to the half type
        y32 = mx.quantized_matmul(x.astype(mx.float32), wq, s.astype(mx.float32),
                                  b.astype(mx.float32), True, gs, bits)
        check(y32, to_np(x), wq, s, b, gs, bits)
        assert np.array_equal(to_np(y), to_np(y32.astype(t)))


def test_gather_qmm_few_rows():
    K, N, gs, bits = 256, 33, 64, 4
    w = rand((4, N, K), 2)
    wq, s, b = mx.quantize(mx.array(w), group_size=gs, bits=bits)
    x = rand((5, 1, K), 3)
    rhs = np.array([3, 0, 0, 2, 1], np.uint32)
    y = mx.gather_qmm(mx.array(x), wq, s, b, rhs_indices=mx.array(rhs), transpose=True,
                      group_size=gs, bits=bits)
    for i, r in enumerate(rhs):
        check(y[i], x[i], wq[int(r)], s[int(r)], b[int(r)], gs, bits)


@needs_oracle
@pytest.mark.parametrize("bits,gs", [(4, 64), (4, 32), (4, 128), (8, 64), (2, 64), (2, 32)])
@pytest.mark.parametrize("K", [320, 4096])
def test_qmv_matches_mlx(bits, gs, K):
    if K % gs:
        pytest.skip("K must be a multiple of the group size")
    N = 33
    w = rand((N, K), 5)
    q = mx.quantize(mx.array(w), group_size=gs, bits=bits)
    qr = mlx_ref.quantize(mlx_ref.array(w), group_size=gs, bits=bits)
    for a, r in zip(q, qr):  # the same packed weights
        assert np.array_equal(np.array(a), np.array(r))
    for M in (1, 2, 5, 8):
        x = rand((M, K), M + 20)
        y = mx.quantized_matmul(mx.array(x), *q, True, gs, bits)
        yr = mlx_ref.quantized_matmul(mlx_ref.array(x), *qr, True, gs, bits)
        _, wabs = dequant(*q, gs, bits)
        mag = np.abs(x.astype(np.float64)) @ wabs.T
        assert np.all(np.abs(np.array(y) - np.array(yr)) <= 2e-5 * mag)


def test_qmv_instruction_sets_agree():
    """AVX-512, AVX2 (CMLX_QUANT_AVX512=0) and portable (CMLX_UNARY_SIMD=0)
    loops give the same products up to float32 rounding."""
    code = (
        "import numpy as np, cmlx.core as mx\n"
        "r = np.random.default_rng(0)\n"
        "out = []\n"
        "for bits in (2, 4, 8):\n"
        "  for gs in (32, 64, 128):\n"
        "    w = mx.array(r.standard_normal((37, 384)).astype(np.float32))\n"
        "    q = mx.quantize(w, group_size=gs, bits=bits)\n"
        "    for M in (1, 2, 3, 4, 5, 8):\n"
        "      x = mx.array(r.standard_normal((M, 384)).astype(np.float32))\n"
        "      out.append(np.array(mx.quantized_matmul(x, *q, True, gs, bits)).ravel())\n"
        "np.save(%r, np.concatenate(out))\n")
    res = []
    for env in ({}, {"CMLX_QUANT_AVX512": "0"}, {"CMLX_UNARY_SIMD": "0"}):
        path = f"/tmp/cmlx_qmv_{os.getpid()}_{len(res)}.npy"
        subprocess.run([sys.executable, "-c", code % path], env=dict(os.environ, **env),
                       check=True)
        res.append(np.load(path))
        os.unlink(path)
    assert res[0].size == 3 * 3 * 23 * 37
    scale = np.abs(res[2]).max()
    for r in res[:2]:
        assert np.allclose(r, res[2], rtol=0, atol=1e-5 * scale)


@pytest.mark.parametrize("sdt,bdt", [("float16", "float32"), ("float32", "bfloat16"),
                                     ("bfloat16", "bfloat16"), ("float16", "float16")])
@pytest.mark.parametrize("M", [1, 5, 12])
def test_scales_and_biases_of_any_float_dtype(sdt, bdt, M):
    # half scales and biases are read in place; mixed dtypes are widened:
    # either way the product is the one of the float32 values they hold
    K, N, gs, bits = 512, 40, 64, 4
    wq, s, b = mx.quantize(mx.array(rand((N, K), 3)), group_size=gs, bits=bits)
    s, b = s.astype(getattr(mx, sdt)), b.astype(getattr(mx, bdt))
    x = rand((M, K), 4)
    y = mx.quantized_matmul(mx.array(x), wq, s, b, True, gs, bits)
    assert y.dtype == mx.float32
    check(y, x, wq, s.astype(mx.float32), b.astype(mx.float32), gs, bits)
    y32 = mx.quantized_matmul(mx.array(x), wq, s.astype(mx.float32), b.astype(mx.float32), True,
                              gs, bits)
    np.testing.assert_allclose(to_np(y), to_np(y32), rtol=1e-5, atol=1e-5)


def run_in_env(code, env):
    """Run code (which saves an array to the path it is given) with env."""
    path = f"/tmp/cmlx_qmv_{os.getpid()}_env.npy"
    subprocess.run([sys.executable, "-c", code % path], env=dict(os.environ, **env), check=True)
    out = np.load(path)
    os.unlink(path)
    return out


def test_qmv_integer_loops_agree_with_float_loops():
    """4 bits with AVX-512 VNNI take integer loops over x in fixed point
    (CMLX_QUANT_VNNI=0 turns them off): the same products as the float
    loops up to float32 rounding, for every group size, rows of x 1-8, W rows
    not a multiple of the tile, and K long enough to be taken in chunks."""
    code = (
        "import numpy as np, cmlx.core as mx\n"
        "r = np.random.default_rng(1)\n"
        "out = []\n"
        "for gs in (32, 64, 128):\n"
        "  for N, K in ((37, 512), (6, 16384)):\n"
        "    w = mx.array(r.standard_normal((N, K)).astype(np.float32))\n"
        "    q = mx.quantize(w, group_size=gs, bits=4)\n"
        "    for M in (1, 2, 3, 4, 5, 8):\n"
        "      x = mx.array(r.standard_normal((M, K)).astype(np.float32))\n"
        "      out.append(np.array(mx.quantized_matmul(x, *q, True, gs, 4)).ravel())\n"
        "np.save(%r, np.concatenate(out))\n")
    fast, plain = run_in_env(code, {}), run_in_env(code, {"CMLX_QUANT_VNNI": "0"})
    assert fast.size == plain.size == 3 * 23 * (37 + 6)
    assert np.allclose(fast, plain, rtol=0, atol=2e-5 * np.abs(plain).max())


@pytest.mark.parametrize("gs", [32, 64, 128])
def test_qmv_fixed_point_keeps_small_elements(gs):
    # x in fixed point is scaled per block of 4 groups: a block whose
    # largest element is 1e4 times the rest still gives every term its
    # float32 accuracy, and blocks of very different sizes do not mix
    K, N = 8 * gs, 24
    w = rand((N, K), 11)
    wq, s, b = mx.quantize(mx.array(w), group_size=gs, bits=4)
    x = rand((3, K), 12)
    x[0, 5] = 1e4
    x[1, : 4 * gs] *= 1e-12
    x[2, 4 * gs:] *= 1e12
    y = mx.quantized_matmul(mx.array(x), wq, s, b, True, gs, 4)
    check(y, x, wq, s, b, gs, 4)


@pytest.mark.parametrize("special", ["nan", "inf", "huge", "tiny"])
def test_qmv_values_fixed_point_cannot_hold(special):
    # NaN, infinities and magnitudes beyond 2^+-100 leave the product to
    # the float loops: the rows without them keep their values, and the
    # others are the float64 reference's (not finite where x is not; with
    # an infinity MLX gives +-inf where the dequantized weight is nonzero,
    # the loops here NaN where scale and bias shares have opposite signs)
    K, N, gs = 512, 20, 64
    w = rand((N, K), 13)
    wq, s, b = mx.quantize(mx.array(w), group_size=gs, bits=4)
    x = rand((2, K), 14)
    if special == "nan":
        x[1, 100] = np.nan
    elif special == "inf":
        x[1, 7] = np.inf
    elif special == "huge":
        x[1] *= 1e34
    else:
        x[1] *= 1e-36
    y = mx.quantized_matmul(mx.array(x), wq, s, b, True, gs, 4)
    check(y[:1], x[:1], wq, s, b, gs, 4)
    if special == "nan":
        assert np.isnan(to_np(y[1])).all()
    elif special == "inf":
        assert not np.isfinite(to_np(y[1])).any()
    else:
        check(y[1:], x[1:], wq, s, b, gs, 4)
