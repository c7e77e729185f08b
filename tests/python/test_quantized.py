"""Quantization: quantize / dequantize (affine, mxfp4, mxfp8, nvfp4),
quantized_matmul, gather_qmm, qqmm, to_fp8 / from_fp8.

Values are checked against a NumPy reader of the packed layout (codes in a
little-endian bit stream per row, one scale and bias per group) and
against real MLX where it is importable: packed words, scales and biases
must be MLX's bit for bit, dequantized values and dtypes identical."""

import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import cmlx_only, mlx_ref, mx, needs_oracle, to_np

GROUPS = [32, 64, 128]
BITS = [1, 2, 3, 4, 5, 6, 8]
FP_MODES = ["mxfp4", "mxfp8", "nvfp4"]
FLOATS = ["float32", "float16", "bfloat16"]
FP4 = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6], np.float32)


def rand(shape, seed=0, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def codes(wq, bits):
    """The codes of packed uint32 rows (..., n) -> (..., n * 32 / bits)."""
    b = np.ascontiguousarray(np.array(wq)).view(np.uint8)
    bitsarr = np.unpackbits(b, axis=-1, bitorder="little")
    bitsarr = bitsarr.reshape(*b.shape[:-1], -1, bits).astype(np.uint32)
    return (bitsarr << np.arange(bits, dtype=np.uint32)).sum(-1).astype(np.uint32)


def fp8_values():
    out = np.zeros(256, np.float32)
    for x in range(256):
        e, m = (x >> 3) & 15, x & 7
        v = (m / 8) * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7)
        out[x] = -v if x & 128 else v
    out[127] = out[255] = np.nan
    return out


def np_dequant(wq, scales, biases, gs, bits, mode="affine"):
    """float32 reference of dequantize (float32 scales/biases)."""
    q = codes(wq, bits)
    s = np.array(scales)
    if mode == "affine":
        vals = q.astype(np.float32)
        sc = s.astype(np.float32)
        b = np.array(biases).astype(np.float32)
    else:
        vals = fp8_values()[q] if bits == 8 else FP4[q]
        sc = fp8_values()[s] if gs == 16 else np.ldexp(np.float32(1), s.astype(np.int32) - 127)
        b = np.zeros_like(sc)
    g = vals.reshape(*vals.shape[:-1], -1, gs)
    return (g * sc[..., None] + b[..., None]).reshape(vals.shape).astype(np.float32)


def quant(w, gs=None, bits=None, mode="affine"):
    out = mx.quantize(w, group_size=gs, bits=bits, mode=mode)
    return out[0], out[1], (out[2] if mode == "affine" else None)


# ---------------------------------------------------------------- quantize

@pytest.mark.parametrize("gs", GROUPS)
@pytest.mark.parametrize("bits", BITS)
def test_affine_roundtrip_and_layout(gs, bits):
    w = rand((8, 256), seed=gs + bits)
    wq, s, b = quant(mx.array(w), gs, bits)
    assert wq.dtype == mx.uint32 and wq.shape == (8, 256 * bits // 32)
    assert s.shape == b.shape == (8, 256 // gs) and s.dtype == mx.float32
    w_hat = mx.dequantize(wq, s, b, gs, bits)
    ref = np_dequant(wq, s, b, gs, bits)
    assert np.array_equal(np.array(w_hat), ref)
    err = np.abs(w - ref).reshape(8, -1, gs)
    assert (err <= np.abs(np.array(s))[..., None] + 1e-6).all()
    assert codes(wq, bits).max() <= 2 ** bits - 1


@pytest.mark.parametrize("gs", GROUPS)
def test_affine_zeros_and_constant(gs):
    for bits in BITS:
        wq, s, b = quant(mx.zeros((4, 256)), gs, bits)
        assert np.all(np.array(mx.dequantize(wq, s, b, gs, bits)) == 0)
    w = np.full((2, 128), 0.75, np.float32)
    wq, s, b = quant(mx.array(w), gs, 4)
    assert np.allclose(np.array(mx.dequantize(wq, s, b, gs, 4)), w, atol=1e-6)


@needs_oracle
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("gs", GROUPS)
@pytest.mark.parametrize("bits", BITS)
def test_affine_bit_identical_with_mlx(dtype, gs, bits):
    w = rand((6, 384), seed=bits, scale=2.0)
    w[0, :gs] = 0.0
    w[1, :gs] = -1.5
    ours = mx.quantize(mx.array(w).astype(getattr(mx, dtype)), gs, bits)
    ref = mlx_ref.quantize(mlx_ref.array(w).astype(getattr(mlx_ref, dtype)), gs, bits)
    for a, r in zip(ours, ref):
        assert str(a.dtype).split(".")[-1] == str(r.dtype).split(".")[-1]
        assert np.array_equal(to_np(a), to_np(r))
    d1, d2 = mx.dequantize(*ours, gs, bits), mlx_ref.dequantize(*ref, gs, bits)
    assert str(d1.dtype).split(".")[-1] == str(d2.dtype).split(".")[-1]
    assert np.array_equal(to_np(d1), to_np(d2))


@needs_oracle
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mode", FP_MODES)
def test_fp_bit_identical_with_mlx(dtype, mode):
    w = rand((8, 256), seed=3, scale=3.0)
    w[0, :32] = 0
    w[1, :32] = 1e-3
    w[2, :32] = 7.0 * 2.0 ** np.arange(32)[:32] / 2 ** 16
    ours = mx.quantize(mx.array(w).astype(getattr(mx, dtype)), mode=mode)
    ref = mlx_ref.quantize(mlx_ref.array(w).astype(getattr(mlx_ref, dtype)), mode=mode)
    assert len(ours) == len(ref) == 2 and ours[1].dtype == mx.uint8
    for a, r in zip(ours, ref):
        assert np.array_equal(np.array(a), np.array(r))
    for out in [None, "float32", "float16", "bfloat16"]:
        kw = {} if out is None else {"dtype": getattr(mx, out)}
        kr = {} if out is None else {"dtype": getattr(mlx_ref, out)}
        d1, d2 = mx.dequantize(*ours, mode=mode, **kw), mlx_ref.dequantize(*ref, mode=mode, **kr)
        assert str(d1.dtype).split(".")[-1] == str(d2.dtype).split(".")[-1]
        assert np.array_equal(to_np(d1), to_np(d2), equal_nan=True)
    if mode == "nvfp4":  # global scale: dequantize promotes to float32, as MLX does
        g = np.float32(np.abs(w).max())
        o = mx.quantize(mx.array(w), mode=mode, global_scale=mx.array(g))
        r = mlx_ref.quantize(mlx_ref.array(w), mode=mode, global_scale=mlx_ref.array(g))
        assert all(np.array_equal(np.array(a), np.array(b)) for a, b in zip(o, r))
        d1 = mx.dequantize(*o, mode=mode, global_scale=mx.array(g), dtype=mx.bfloat16)
        d2 = mlx_ref.dequantize(*r, mode=mode, global_scale=mlx_ref.array(g), dtype=mlx_ref.bfloat16)
        assert d1.dtype == mx.float32 and np.array_equal(np.array(d1), np.array(d2))


@pytest.mark.parametrize("mode", FP_MODES)
def test_fp_modes_reference(mode):
    gs = 16 if mode == "nvfp4" else 32
    bits = 8 if mode == "mxfp8" else 4
    idx = np.random.default_rng(1).integers(0, 16, (16, 128))
    w = FP4[idx].reshape(-1, gs)
    w[:, 0] = 6.0  # a representable maximum: every value is exact
    wq, s, _ = quant(mx.array(w.reshape(16, 128)), mode=mode)
    assert wq.shape == (16, 128 * bits // 32) and s.dtype == mx.uint8
    d = mx.dequantize(wq, s, mode=mode, dtype=mx.float32)
    assert np.array_equal(np.array(d), np_dequant(wq, s, None, gs, bits, mode))
    if bits == 4:
        assert np.array_equal(np.array(d), w.reshape(16, 128))
    assert mx.dequantize(wq, s, mode=mode).dtype == mx.bfloat16
    z = quant(mx.zeros((4, 64)), mode=mode)
    assert np.all(to_np(mx.dequantize(z[0], z[1], mode=mode)) == 0)


def test_quantize_views_and_broadcast_scales():
    w = rand((256, 64), seed=4)
    wt = mx.array(w).T  # a transposed view
    a = quant(wt, 64, 4)
    b = quant(mx.array(np.ascontiguousarray(w.T)), 64, 4)
    assert all(np.array_equal(np.array(x), np.array(y)) for x, y in zip(a, b))
    wq, s = mx.quantize(mx.array(rand((64, 64))), mode="nvfp4")
    sb = mx.broadcast_to(mx.array(56, mx.uint8), s.shape)
    assert np.array_equal(to_np(mx.dequantize(wq, sb, mode="nvfp4")),
                          to_np(mx.dequantize(wq, mx.contiguous(sb), mode="nvfp4")))
    # batched weights quantize per matrix
    w3 = rand((3, 8, 128), seed=5)
    q3 = quant(mx.array(w3), 32, 3)
    q1 = quant(mx.array(w3[1]), 32, 3)
    assert np.array_equal(np.array(q3[0][1]), np.array(q1[0]))


# ---------------------------------------------------------------- fp8

def test_fp8_known_codes():
    vals = np.array([448, 1.0, -2.0, 2 ** -9, 0.0, -0.0, 500, 1e9, np.inf, np.nan, 2 ** -10,
                     0.015625, 240], np.float32)
    want = [0x7E, 0x38, 0xC0, 0x01, 0x00, 0x80, 0x7E, 0x7E, 0x7E, 0x7E, 0x00, 0x08, 0x77]
    got = np.array(mx.to_fp8(mx.array(vals)))
    assert got.dtype == np.uint8 and got.tolist() == want
    allc = np.arange(256, dtype=np.uint8)
    back = np.array(mx.from_fp8(mx.array(allc), mx.float32))
    assert np.array_equal(back, fp8_values(), equal_nan=True)
    assert mx.from_fp8(mx.array(allc)).dtype == mx.bfloat16
    v = np.array([448, 256, 192, 128, 96, 64, 48, 32, 24, 16, 12, 8, 6, 4, 3, 2, 0.015625])
    for sign in (1, -1):
        x = mx.array(sign * v)
        assert np.array_equal(np.array(mx.from_fp8(mx.to_fp8(x), mx.float32)), sign * v)
    # strided input, half dtypes
    h = mx.array(np.arange(12, dtype=np.float32).reshape(3, 4)).astype(mx.float16).T
    assert np.array_equal(np.array(mx.to_fp8(h)), np.array(mx.to_fp8(mx.array(np.arange(12.0,
                          dtype=np.float32).reshape(3, 4).T.copy()))))


@needs_oracle
def test_fp8_matches_mlx():
    x = np.concatenate([rand(2000, seed=7, scale=100.0), rand(2000, seed=8, scale=0.01),
                        np.array([np.inf, -np.inf, np.nan, 464, 463.9, 456, 480], np.float32)])
    for dt in FLOATS:
        a = mx.to_fp8(mx.array(x).astype(getattr(mx, dt)))
        r = mlx_ref.to_fp8(mlx_ref.array(x).astype(getattr(mlx_ref, dt)))
        assert np.array_equal(np.array(a), np.array(r))
        c = np.arange(256, dtype=np.uint8)
        assert np.array_equal(to_np(mx.from_fp8(mx.array(c), getattr(mx, dt))),
                              to_np(mlx_ref.from_fp8(mlx_ref.array(c), getattr(mlx_ref, dt))),
                              equal_nan=True)


def test_fp8_errors():
    with pytest.raises(ValueError, match=r"\[to_fp8\] Only real floating"):
        mx.to_fp8(mx.array([1, 2]))
    with pytest.raises(ValueError, match=r"\[from_fp8\] Input must have type uint8"):
        mx.from_fp8(mx.array([1.0]))
    with pytest.raises(ValueError, match=r"\[from_fp8\] Only real floating"):
        mx.from_fp8(mx.array([1], mx.uint8), mx.int32)


# ---------------------------------------------------------------- products

def qmm_ref(x, wq, s, b, transpose, gs, bits, mode="affine"):
    wh = np_dequant(wq, s, b, gs, bits, mode).astype(np.float64)
    wh = np.swapaxes(wh, -1, -2) if transpose else wh
    return np.array(x).astype(np.float64) @ wh


CASES = [("affine", 64, 4), ("affine", 32, 2), ("affine", 128, 3), ("affine", 32, 5),
         ("affine", 64, 6), ("affine", 64, 8), ("mxfp4", 32, 4), ("mxfp8", 32, 8),
         ("nvfp4", 16, 4)]


@pytest.mark.parametrize("mode,gs,bits", CASES)
@pytest.mark.parametrize("transpose", [True, False])
@pytest.mark.parametrize("M", [1, 3, 8, 9, 40])
def test_quantized_matmul_values(mode, gs, bits, transpose, M):
    K, N = 256, 128
    w = rand((N, K) if transpose else (K, N), seed=M)
    wq, s, b = quant(mx.array(w), gs if mode == "affine" else None,
                     bits if mode == "affine" else None, mode)
    x = rand((M, K), seed=M + 1)
    y = mx.quantized_matmul(mx.array(x), wq, s, b, transpose, gs, bits, mode)
    assert y.shape == (M, N) and y.dtype == mx.float32
    assert np.allclose(np.array(y), qmm_ref(x, wq, s, b, transpose, gs, bits, mode),
                       rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_quantized_matmul_dtypes(dtype):
    w = rand((64, 128))
    t = getattr(mx, dtype)
    wq, s, b = quant(mx.array(w).astype(t), 64, 4)
    assert s.dtype == t
    x = mx.array(rand((5, 128), 1)).astype(t)
    y = mx.quantized_matmul(x, wq, s, b)
    assert y.dtype == t
    ref = qmm_ref(to_np(x), wq, to_np(s), to_np(b), True, 64, 4)
    assert np.allclose(to_np(y), ref, rtol=2e-2, atol=2e-2)
    # affine promotes x with the scales; fp modes keep x's dtype
    y32 = mx.quantized_matmul(x, wq, s.astype(mx.float32), b.astype(mx.float32))
    assert y32.dtype == mx.float32
    wq, s = mx.quantize(mx.array(w), mode="mxfp4")
    assert mx.quantized_matmul(x, wq, s, mode="mxfp4").dtype == t


def test_quantized_matmul_batches_and_views():
    K, N = 128, 32
    w = rand((3, N, K))
    wq, s, b = quant(mx.array(w), 64, 4)
    x = rand((2, 3, 4, K), 1)
    y = mx.quantized_matmul(mx.array(x), wq, s, b)  # batch axes broadcast
    assert y.shape == (2, 3, 4, N)
    assert np.allclose(np.array(y), qmm_ref(x, wq, s, b, True, 64, 4), atol=1e-4)
    # a 2-D w serves every row; a 1-D x gives a 1-D result
    w2 = rand((K, N), 2)
    q2 = quant(mx.array(w2), 32, 8)
    x1 = rand((K,), 3)
    y1 = mx.quantized_matmul(mx.array(x1), *q2, False, 32, 8)
    assert y1.shape == (N,)
    assert np.allclose(np.array(y1), qmm_ref(x1, *q2, False, 32, 8), atol=1e-4)
    # a sliced view of packed weights (rows of each matrix) reads in place
    view = [a[:, 8:24] for a in (wq, s, b)]
    cont = [mx.contiguous(a) for a in view]
    xa = mx.array(rand((3, 2, K), 4))
    assert np.array_equal(np.array(mx.quantized_matmul(xa, *view)),
                          np.array(mx.quantized_matmul(xa, *cont)))
    # empty rows
    assert mx.quantized_matmul(mx.zeros((0, K)), wq[0], s[0], b[0]).shape == (0, N)


def test_portable_loops_agree():
    """The AVX2 loops and the portable ones (CMLX_UNARY_SIMD=0) give
    bit-identical quantization and the same products up to float32
    rounding: the two sum in different orders (FMA lanes against a plain
    loop), so a dot product of 128 terms of size ~1 may differ by ~1e-5
    where it cancels to near zero."""
    code = (
        "import numpy as np, cmlx.core as mx\n"
        "r = np.random.default_rng(0)\n"
        "packed, products = [], []\n"
        "for mode, gs, bits in %r:\n"
        "  for tr in (True, False):\n"
        "    w = mx.array(r.standard_normal((64, 128)).astype(np.float32))\n"
        "    q = mx.quantize(w, gs if mode == 'affine' else None, bits if mode == 'affine' else None, mode)\n"
        "    packed.extend(np.frombuffer(np.array(a).tobytes(), np.uint8) for a in q)\n"
        "    for M in (2, 12):\n"
        "      x = mx.array(r.standard_normal((M, 128 if tr else 64)).astype(np.float32))\n"
        "      products.append(np.array(mx.quantized_matmul(x, *q, transpose=tr, group_size=gs, bits=bits, mode=mode)).ravel())\n"
        "np.savez(%r, packed=np.concatenate(packed), products=np.concatenate(products))\n")
    res = []
    for flag in ("1", "0"):
        path = f"/tmp/cmlx_qtest_{os.getpid()}_{flag}.npz"
        env = dict(os.environ, CMLX_UNARY_SIMD=flag)
        subprocess.run([sys.executable, "-c", code % (CASES, path)], env=env, check=True)
        with np.load(path) as f:
            res.append((f["packed"], f["products"]))
        os.unlink(path)
    (packed_simd, prod_simd), (packed_portable, prod_portable) = res
    assert np.array_equal(packed_simd, packed_portable)
    np.testing.assert_allclose(prod_simd, prod_portable, rtol=1e-5, atol=1e-4)


@needs_oracle
@pytest.mark.parametrize("mode,gs,bits", CASES)
def test_quantized_matmul_matches_mlx(mode, gs, bits):
    w = rand((128, 256), 9)
    x = rand((2, 5, 256), 10)
    for tr, ww in ((True, w), (False, w.T.copy())):
        kw = dict(group_size=gs if mode == "affine" else None,
                  bits=bits if mode == "affine" else None, mode=mode)
        q = mx.quantize(mx.array(ww), **kw)
        r = mlx_ref.quantize(mlx_ref.array(ww), **kw)
        xx = x
        a = mx.quantized_matmul(mx.array(xx), *q, transpose=tr, **kw)
        b = mlx_ref.quantized_matmul(mlx_ref.array(xx), *r, transpose=tr, **kw)
        assert a.shape == b.shape
        assert np.allclose(np.array(a), np.array(b), rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------- gather

@pytest.mark.parametrize("mode", ["affine", "mxfp4"])
@pytest.mark.parametrize("transpose", [True, False])
def test_gather_qmm_values(mode, transpose):
    E, M, K, N = 4, 3, 128, 64
    w = rand((E, N, K) if transpose else (E, K, N), 1)
    wq, s, b = quant(mx.array(w), mode=mode)
    gs, bits = (64, 4) if mode == "affine" else (32, 4)
    x = rand((5, M, K), 2)
    lhs = np.array([[0, 4], [2, 2], [1, 3]], np.uint32)
    rhs = np.array([[3], [0], [1]], np.int32)
    y = mx.gather_qmm(mx.array(x), wq, s, b, mx.array(lhs), mx.array(rhs), transpose=transpose,
                      mode=mode)
    assert y.shape == (3, 2, M, N)
    wh = np_dequant(wq, s, b, gs, bits, mode)
    wh = np.swapaxes(wh, -1, -2) if transpose else wh
    ref = x[lhs] @ wh[np.broadcast_to(rhs, lhs.shape)]
    assert np.allclose(np.array(y), ref, atol=1e-4)
    # only rhs: every x batch index; no indices at all: quantized_matmul
    y2 = mx.gather_qmm(mx.array(x[:3]), wq, s, b, rhs_indices=mx.array([1, 0, 3]),
                       transpose=transpose, mode=mode)
    assert np.allclose(np.array(y2), x[:3] @ wh[[1, 0, 3]], atol=1e-4)
    y3 = mx.gather_qmm(mx.array(x[:4]), wq, s, b, transpose=transpose, mode=mode)
    assert np.allclose(np.array(y3), x[:4] @ wh, atol=1e-4)


def test_gather_qmm_sorted_runs():
    E, K, N = 4, 256, 64
    w = rand((E, N, K), 3)
    wq, s, b = quant(mx.array(w))
    idx = np.sort(np.random.default_rng(0).integers(0, E, 24)).astype(np.uint32)
    x = mx.array(rand((24, 1, K), 4))
    a = mx.gather_qmm(x, wq, s, b, rhs_indices=mx.array(idx), sorted_indices=True)
    c = mx.gather_qmm(x, wq, s, b, rhs_indices=mx.array(idx))
    wh = np.swapaxes(np_dequant(wq, s, b, 64, 4), -1, -2)
    ref = np.array(x) @ wh[idx]
    assert np.allclose(np.array(a), ref, atol=1e-4) and np.allclose(np.array(c), ref, atol=1e-4)


@cmlx_only
def test_gather_qmm_index_out_of_range():
    w = quant(mx.array(rand((2, 32, 64))))
    with pytest.raises(IndexError):
        mx.eval(mx.gather_qmm(mx.ones((1, 64)), *w, rhs_indices=mx.array([5])))


def test_gather_qmm_global_scale_argument():
    """mlx-lm's SwitchLinear passes global_scale=None (MLX 0.32.4's
    signature); a given scale is checked as MLX checks it, and MLX's CPU
    has no kernel for it."""
    E, K, N = 3, 64, 16
    w = mx.array(rand((E, N, K), 5))
    x = mx.array(rand((2, 1, K), 6))
    idx = mx.array(np.array([0, 2], np.uint32))
    wq, s, b = quant(w)
    a = mx.gather_qmm(x, wq, s, b, rhs_indices=idx, mode="affine", global_scale=None)
    ref = np.array(x) @ np.swapaxes(np_dequant(wq, s, b, 64, 4), -1, -2)[[0, 2]]
    assert np.allclose(np.array(a), ref, atol=1e-4)
    with pytest.raises(ValueError, match="only supported for 'nvfp4'"):
        mx.gather_qmm(x, wq, s, b, rhs_indices=idx, global_scale=mx.ones((E,)))
    qn = mx.quantize(w, mode="nvfp4")
    with pytest.raises(ValueError, match="dtype float32"):
        mx.gather_qmm(x, *qn, rhs_indices=idx, mode="nvfp4",
                      global_scale=mx.ones((E,), dtype=mx.float16))
    with pytest.raises(ValueError, match=r"one entry per expert with shape \(3\)"):
        mx.gather_qmm(x, *qn, rhs_indices=idx, mode="nvfp4", global_scale=mx.ones((E, 1)))
    with pytest.raises(ValueError, match="only supported on the GPU"):
        mx.gather_qmm(x, *qn, rhs_indices=idx, mode="nvfp4", global_scale=mx.ones((E,)),
                      stream=mx.cpu)


# ---------------------------------------------------------------- transforms

def test_vjp_jvp_x():
    w = rand((128, 256), 1)
    for tr in (True, False):
        ww = w if tr else w.T.copy()
        wq, s, b = quant(mx.array(ww), 64, 8)
        x = mx.array(rand((2, 4, 256), 2))
        f = lambda x: mx.quantized_matmul(x, wq, s, b, tr, 64, 8)
        c = mx.ones((2, 4, 128))
        _, (g,) = mx.vjp(f, [x], [c])
        assert np.allclose(np.array(g), np.array(mx.quantized_matmul(c, wq, s, b, not tr, 64, 8)))
        _, (t,) = mx.jvp(f, [x], [x])
        assert np.allclose(np.array(t), np.array(f(x)))


def test_grad_scales_biases_finite_differences():
    x = mx.array(rand((3, 128), 1))
    wq, s, b = quant(mx.array(rand((16, 128), 2)), 64, 4)

    def f(s, b):
        return mx.quantized_matmul(x, wq, s, b, True, 64, 4).sum()

    ds, db = mx.grad(f, argnums=(0, 1))(s, b)
    assert ds.shape == s.shape and db.shape == b.shape
    sn, bn = np.array(s).astype(np.float64), np.array(b).astype(np.float64)
    q = codes(wq, 4).reshape(16, 2, 64).astype(np.float64)
    xs = np.array(x).astype(np.float64).sum(0).reshape(2, 64)
    assert np.allclose(np.array(db), np.broadcast_to(xs.sum(-1), (16, 2)), rtol=1e-4, atol=1e-4)
    assert np.allclose(np.array(ds), (q * xs).sum(-1), rtol=1e-4, atol=1e-3)
    del sn, bn


@needs_oracle
def test_grads_match_mlx():
    xw = rand((2, 3, 256), 3), rand((64, 256), 4)
    ours = quant(mx.array(xw[1]))
    ref = mlx_ref.quantize(mlx_ref.array(xw[1]))
    for mod, (wq, s, b) in ((mx, ours), (mlx_ref, ref)):
        def f(x, s, b, mod=mod, wq=wq):
            return mod.quantized_matmul(x, wq, s, b).sum()
        g = mod.grad(f, argnums=(0, 1, 2))(mod.array(xw[0]), s, b)
        if mod is mx:
            mine = g
        else:
            for a, r in zip(mine, g):
                assert np.allclose(np.array(a), np.array(r), rtol=1e-4, atol=1e-3)
    # dequantize's gradient with respect to scales and biases
    gm = mx.grad(lambda s, b: (mx.dequantize(ours[0], s, b) ** 2).sum(), (0, 1))(*ours[1:])
    gr = mlx_ref.grad(lambda s, b: (mlx_ref.dequantize(ref[0], s, b) ** 2).sum(), (0, 1))(*ref[1:])
    for a, r in zip(gm, gr):
        assert np.allclose(np.array(a), np.array(r), rtol=1e-4, atol=1e-3)


def test_gather_qmm_grad_matches_quantized_matmul():
    x = mx.array(rand((8, 1, 128), 1))
    w, s, b = quant(mx.array(rand((4, 64, 128), 2)))
    idx = mx.array(np.sort(np.random.default_rng(3).integers(0, 4, 8)).astype(np.uint32))
    c = mx.array(rand((8, 1, 64), 4))

    def ref(x, s, b):
        return mx.quantized_matmul(x, w[idx], s[idx], b[idx])

    def gq(x, s, b):
        return mx.gather_qmm(x, w, s, b, rhs_indices=idx, sorted_indices=True)

    (o1,), g1 = mx.vjp(ref, [x, s, b], [c])
    (o2,), g2 = mx.vjp(gq, [x, s, b], [c])
    assert np.allclose(np.array(o1), np.array(o2), atol=1e-5)
    for a, r in zip(g1, g2):
        assert np.allclose(np.array(a), np.array(r), atol=1e-3)
    # lhs indices with repeats: x's cotangent accumulates
    lhs = mx.array([0, 0, 1], mx.uint32)
    xx = mx.array(rand((2, 1, 128), 5))
    g = mx.grad(lambda x: mx.gather_qmm(x, w, s, b, lhs, mx.array([0, 1, 2])).sum())(xx)
    wh = np_dequant(w, s, b, 64, 4)
    want = np.stack([wh[0].sum(0) + wh[1].sum(0), wh[2].sum(0)])[:, None]
    assert np.allclose(np.array(g), want, atol=1e-3)


def test_transform_errors():
    x = mx.array(rand((2, 128)))
    for mode in FP_MODES:
        wq, s = mx.quantize(mx.array(rand((64, 128))), mode=mode)
        with pytest.raises(ValueError, match="no gradient wrt scales"):
            mx.vjp(lambda s: mx.quantized_matmul(x, wq, s, mode=mode), [s], [mx.ones((2, 64))])
        with pytest.raises(ValueError, match="no gradient wrt scales"):
            mx.vjp(lambda s: mx.gather_qmm(x, wq, s, rhs_indices=mx.array(0), mode=mode), [s],
                   [mx.ones((2, 64))])
    wq, s, b = quant(mx.array(rand((64, 128))))
    with pytest.raises(RuntimeError, match="quantized weights"):
        mx.vjp(lambda w: mx.quantized_matmul(x, w, s, b), [wq], [mx.ones((2, 64))])
    with pytest.raises(RuntimeError, match="QuantizedMatmul"):
        mx.jvp(lambda s: mx.quantized_matmul(x, wq, s, b), [s], [s])


# ---------------------------------------------------------------- qqmm

@needs_oracle
@pytest.mark.parametrize("mode", ["nvfp4", "mxfp8"])
def test_qqmm_matches_mlx(mode):
    x, w = rand((1, 256), 1), rand((64, 256), 2)
    q = mx.quantize(mx.array(w), mode=mode)
    r = mlx_ref.quantize(mlx_ref.array(w), mode=mode)
    a = mx.qqmm(mx.array(x), *q, mode=mode)
    b = mlx_ref.qqmm(mlx_ref.array(x), *r, mode=mode)
    assert a.shape == b.shape == (1, 64)
    assert np.allclose(np.array(a), np.array(b), atol=1e-3)


# ---------------------------------------------------------------- errors

def test_errors():
    w = mx.array(rand((256, 256)))
    x = mx.array(rand((1, 256)))
    wq, s, b = mx.quantize(w, bits=4, group_size=32)
    bad = [
        (lambda: mx.quantize(w, mode="xyz"), r"\[quantize\] Invalid quantization mode 'xyz'."),
        (lambda: mx.quantize(mx.zeros((128, 128), mx.int32)), "Only real floating types can be"),
        (lambda: mx.quantize(mx.zeros((128,))), "at least 2 dimension"),
        (lambda: mx.quantize(w, group_size=48), "needs to be divisible"),
        (lambda: mx.quantize(w, group_size=16), "group size 16 is not supported"),
        (lambda: mx.quantize(w, bits=7), "number of bits 7 is not supported"),
        (lambda: mx.quantize(w, bits=0), "number of bits 0 is not supported"),
        (lambda: mx.quantize(w, bits=3, mode="mxfp4"), "requires bits to be 4"),
        (lambda: mx.quantize(w, group_size=64, mode="nvfp4"), "requires group size 16"),
        (lambda: mx.quantize(w, mode="mxfp4", global_scale=mx.array(1.0)), "only supported"),
        (lambda: mx.quantize(w, mode="nvfp4", global_scale=mx.array([1.0, 2.0])), "scalar"),
        (lambda: mx.quantize(w, mode="nvfp4", global_scale=mx.array(1, mx.int32)), "float32"),
        (lambda: mx.dequantize(wq, s, b, 32, 4, mode="xyz"), "Invalid quantization mode"),
        (lambda: mx.dequantize(wq, s, None, 32, 4), "Biases must be provided"),
        (lambda: mx.dequantize(wq, s, b, 64, 4), "does not match the matrix"),
        (lambda: mx.dequantize(wq.astype(mx.int32), s, b, 32, 4), "should be given as a uint32"),
        (lambda: mx.dequantize(wq, s.astype(mx.int32), b.astype(mx.int32), 32, 4),
         "Only real floating types"),
        (lambda: mx.dequantize(wq, s, b, 32, 4, dtype=mx.int32), "output dtype"),
        (lambda: mx.dequantize(wq, s, b, 32, 4, mode="mxfp4"), "Scale type must be uint8"),
        (lambda: mx.quantized_matmul(x, wq, s, b, bits=4, group_size=32, mode="xyz"),
         "Invalid quantization mode"),
        (lambda: mx.quantized_matmul(x, wq, s, None, bits=4, group_size=32), "Biases must be"),
        (lambda: mx.quantized_matmul(x, wq.T, s, b, bits=4, group_size=32), "same shape|incompat"),
        (lambda: mx.quantized_matmul(x[:, :128], wq, s, b, False, 32, 4), "does not match"),
        (lambda: mx.quantized_matmul(x.astype(mx.int32), wq, s.astype(mx.int32),
                                     b.astype(mx.int32), bits=4, group_size=32),
         "Only real floating types"),
        (lambda: mx.quantized_matmul(x, wq.astype(mx.int32), s, b, True, 32, 4), "uint32"),
        # scales with too few rows, or too few dimensions, never reach the kernel
        (lambda: mx.quantized_matmul(x, wq, s[:8], b[:8], True, 32, 4), "incompatible"),
        (lambda: mx.quantized_matmul(x, wq, s[0], b[0], True, 32, 4), "incompatible"),
        (lambda: mx.gather_qmm(x, wq, s, None, rhs_indices=mx.array(0), bits=4, group_size=32),
         "Biases must be"),
        (lambda: mx.gather_qmm(x[0], wq, s, b, rhs_indices=mx.array(0), bits=4, group_size=32),
         "at least two dimensions"),
        (lambda: mx.gather_qmm(x, wq[None], s[None], b[None], rhs_indices=mx.array([0.5]),
                               bits=4, group_size=32), "Indices must be integral"),
    ]
    for fn, msg in bad:
        with pytest.raises(ValueError, match=msg):
            fn()
    with pytest.raises(NotImplementedError, match="gather_qqmm"):
        mx.gather_qqmm(x, wq)
    with pytest.raises(NotImplementedError, match="qqmm"):  # qqmm needs one row of x on the CPU
        mx.qqmm(mx.ones((2, 256)), *mx.quantize(w, mode="nvfp4"))
    with pytest.raises(TypeError):
        mx.quantize(w, mode=None)
    with pytest.raises(TypeError):
        mx.quantized_matmul(x, wq, s, b, mode=3)


@needs_oracle
def test_error_messages_match_mlx():
    wn = rand((64, 128))
    cases = [
        lambda m, w: m.quantize(w, mode="xyz"),
        lambda m, w: m.quantize(w, group_size=16),
        lambda m, w: m.quantize(w, bits=9),
        lambda m, w: m.quantize(w, group_size=48),
        lambda m, w: m.quantize(w, mode="mxfp8", bits=4),
        lambda m, w: m.dequantize(*m.quantize(w), group_size=32),
        lambda m, w: m.quantized_matmul(m.ones((2, 64)), *m.quantize(w)),
        lambda m, w: m.to_fp8(m.array([1])),
        lambda m, w: m.from_fp8(m.array([1.0])),
    ]
    for f in cases:
        errs = []
        for m in (mx, mlx_ref):
            with pytest.raises(ValueError) as e:
                f(m, m.array(wn))
            errs.append(str(e.value))
        assert errs[0] == errs[1]


def test_dequantize_jvp_vmap():
    wq, s, b = quant(mx.array(rand((3, 8, 128), 1)), 64, 4)
    d = lambda s, b: mx.dequantize(wq[0], s, b, 64, 4)
    _, (t,) = mx.jvp(d, [s[0], b[0]], [mx.ones_like(s[0]), mx.zeros_like(b[0])])
    assert np.array_equal(np.array(t), codes(wq[0], 4).astype(np.float32))
    # vmap over the stacked matrices equals dequantizing each
    v = mx.vmap(lambda w, s, b: mx.dequantize(w, s, b, 64, 4))(wq, s, b)
    assert np.array_equal(np.array(v), np.array(mx.dequantize(wq, s, b, 64, 4)))
    v = mx.vmap(lambda w: mx.dequantize(w, s[1], b[1], 64, 4))(wq)
    ref = np.stack([np.array(mx.dequantize(wq[i], s[1], b[1], 64, 4)) for i in range(3)])
    assert np.array_equal(np.array(v), ref)
    fq, fs = mx.quantize(mx.array(rand((2, 16, 64), 2)), mode="mxfp8")
    v = mx.vmap(lambda w, s: mx.dequantize(w, s, mode="mxfp8"), in_axes=(0, 0))(fq, fs)
    assert np.array_equal(to_np(v), to_np(mx.dequantize(fq, fs, mode="mxfp8")))


def test_shapeless_compile():
    qw, s, b = quant(mx.array(rand((4, 32, 64), 1)))
    idx = mx.array([0, 1, 2, 3])
    f = lambda x: mx.gather_qmm(x, qw, s, b, lhs_indices=idx, rhs_indices=idx)
    g = lambda x: mx.quantized_matmul(x, qw[0], s[0], b[0])
    cf, cg = mx.compile(f, shapeless=True), mx.compile(g, shapeless=True)
    for rows in (4, 8):
        x = mx.array(rand((4, rows, 64), rows))
        assert cf(x).shape == (4, rows, 32)
        assert np.allclose(np.array(cf(x)), np.array(f(x)), atol=1e-5)
        assert np.allclose(np.array(cg(x)), np.array(g(x)), atol=1e-5)
