"""Exporting the primitives test_export.py leaves out: those MLX 0.32.4 reads
(fast sdpa as MLX's CPU composition, BlockMaskedMM, Depends, the
convolution's weight gradient as MLX's Convolution form, the elementwise
ops MLX composes), those saved under cmlx's own names (LUF, solve, ...,
which MLX reports it cannot deserialise), and a sweep that exports a
function of every public op family and imports it back."""
import numpy as np
import pytest

import cmlx.core as mx

try:
    import mlx.core as mlx
except ImportError:  # the oracle is optional
    mlx = None

needs_mlx = pytest.mark.skipif(mlx is None, reason="needs real MLX")

RG = np.random.default_rng(7)


def r(*shape):
    return RG.standard_normal(shape).astype(np.float32)


SPECIAL = np.array([[0.5, np.inf, -np.inf], [np.nan, -2.25, 1.255]], np.float32)
INTS = np.array([1, -3, 7, 0], np.int32)
Q, K, V = r(1, 4, 5, 8), r(1, 2, 6, 8), r(1, 2, 6, 8)
X70, Y80 = r(70, 40), r(40, 80)


def _conv_grad(kw):
    def f(lib, x, w):
        return lib.grad(lambda w: (lib.conv_general(x, w, **kw) ** 2).sum())(w)

    return f


# (name, function of (lib, *arrays), numpy inputs): MLX reads the file
MLX_CASES = [
    ("sdpa", lambda m, q, k, v: m.fast.scaled_dot_product_attention(q, k, v, scale=0.5),
     (Q, K, V)),
    ("sdpa_causal", lambda m, q, k, v: m.fast.scaled_dot_product_attention(
        q, k, v, scale=0.5, mask="causal"), (Q, K, V)),
    ("sdpa_bool_mask", lambda m, q, k, v, b: m.fast.scaled_dot_product_attention(
        q, k, v, scale=0.5, mask=b), (Q, K, V, RG.random((1, 4, 5, 6)) > 0.3)),
    ("sdpa_add_mask", lambda m, q, k, v, b: m.fast.scaled_dot_product_attention(
        q, k, v, scale=0.5, mask=b), (Q, K, V, r(1, 1, 5, 6))),
    ("block_masked_out", lambda m, a, b, mo: m.block_masked_mm(a, b, 32, mo),
     (X70, Y80, RG.random((3, 3)) > 0.4)),
    ("block_masked_operands", lambda m, a, b, ml, mr: m.block_masked_mm(a, b, 32, None, ml, mr),
     (X70, Y80, r(3, 2), r(2, 3))),
    ("block_masked_all", lambda m, a, b, mo, ml, mr: m.block_masked_mm(a, b, 32, mo, ml, mr),
     (X70, Y80, RG.random((3, 3)) > 0.4, RG.random((3, 2)) > 0.3, RG.random((2, 3)) > 0.3)),
    ("depends", lambda m, a, b: m.depends(a, b * 2)[0] + 1, (r(3, 3), r(3, 2))),
    ("conv_wgrad", _conv_grad({}), (r(2, 9, 4), r(6, 3, 4))),
    ("conv_wgrad_groups", _conv_grad({"groups": 2}), (r(2, 9, 4), r(6, 3, 2))),
    ("conv_wgrad_strided", _conv_grad({"stride": 2, "padding": 1}), (r(1, 11, 3), r(4, 3, 3))),
    ("conv_wgrad_dilated", _conv_grad({"kernel_dilation": 2, "padding": 2}),
     (r(1, 11, 3), r(4, 3, 3))),
    ("conv_wgrad_2d", _conv_grad({"stride": (2, 1), "padding": (1, 0), "kernel_dilation": (1, 2),
                                  "groups": 2}), (r(2, 7, 8, 4), r(4, 3, 2, 2))),
    ("conv_wgrad_flip", _conv_grad({"flip": True, "stride": 2}), (r(1, 6, 6, 2), r(3, 2, 2, 2))),
    ("isinf", lambda m, a: (m.isinf(a), m.isfinite(a)), (SPECIAL,)),
    ("isinf_complex", lambda m, a: (m.isinf(a), m.isfinite(a)),
     ((SPECIAL + 1j * np.nan_to_num(SPECIAL[::-1])).astype(np.complex64),)),
    ("int_predicates", lambda m, a: (m.isnan(a), m.isinf(a), m.isposinf(a), m.isneginf(a),
                                     m.isfinite(a)), (INTS,)),
    ("nan_to_num", lambda m, a: (m.nan_to_num(a, nan=3.0), m.nan_to_num(a.astype(m.float16))),
     (SPECIAL,)),
    ("round_decimals", lambda m, a, i: (m.round(a, 2), m.round(i, -1),
                                        m.round(a.astype(m.float16), 1)), (SPECIAL, INTS)),
    ("logical_xor", lambda m, a: m.logical_xor(a > 0, a < 1), (SPECIAL,)),
    ("diagonal", lambda m, a: (m.diagonal(a, 1), m.diagonal(a, -1, 0, 2), m.diagonal(a, 9),
                               m.diag(a[0]), m.trace(a[0])), (r(3, 4, 5),)),
    ("dequantize", lambda m, w: [m.dequantize(*m.quantize(w, group_size=gs, bits=b),
                                              group_size=gs, bits=b)
                                 for gs, b in ((64, 4), (32, 2), (64, 3), (32, 5), (64, 6),
                                               (128, 8))], (r(4, 128),)),
    ("dequantize_half", lambda m, w: m.dequantize(*m.quantize(w.astype(m.float16), bits=3),
                                                  bits=3, dtype=m.float32), (r(2, 3, 64),)),
    ("concatenate_many", lambda m, a: m.concatenate([a * k for k in range(12)], axis=1),
     (r(2, 3),)),
    ("median", lambda m, a, i: (m.median(a, axis=0), m.median(a, axis=(0, 2), keepdims=True),
                                m.median(a), m.median(i)),
     (np.where(RG.random((5, 4, 2)) > 0.9, np.nan, r(5, 4, 2)).astype(np.float32), INTS)),
]

# saved under cmlx's names: cmlx reads them, MLX cannot
CMLX_CASES = [
    ("lu_factor", "CmlxLUF", lambda m, a: m.linalg.lu_factor(a, stream=m.cpu),
     (r(3, 3) + 3 * np.eye(3, dtype=np.float32),)),
    ("lu", "CmlxLUF", lambda m, a: m.linalg.lu(a, stream=m.cpu), (r(4, 4),)),
    ("solve", "CmlxSolve", lambda m, a, b: m.linalg.solve(a, b, stream=m.cpu),
     (r(2, 3, 3) + 3 * np.eye(3, dtype=np.float32), r(3,))),
    ("segmented_mm", "CmlxSegmentedMM", lambda m, a, b, s: m.segmented_mm(a, b, s),
     (r(2, 5), r(5, 3), np.array([[0, 2], [2, 5], [3, 3]], np.uint32))),
    ("fp8", "CmlxConvertFP8", lambda m, a: m.from_fp8(m.to_fp8(a), dtype=m.float32), (r(3, 4),)),
    ("quantize_global", "CmlxQuantize",
     lambda m, w, g: m.quantize(w, mode="nvfp4", global_scale=g), (r(4, 64), np.float32(2.0))),
    ("dequantize_global", "CmlxDequantize",
     lambda m, w, g: m.dequantize(*m.quantize(w, mode="nvfp4")[:2], mode="nvfp4",
                                  global_scale=g), (r(4, 64), np.float32(0.5))),
    ("bitwise_invert", "CmlxUnary", lambda m, a: m.bitwise_invert(a), (INTS,)),
]


def _list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(np.array(g.astype(mx.float32) if g.dtype == mx.bfloat16 else g),
                                   np.array(w.astype(mx.float32) if w.dtype == mx.bfloat16 else w),
                                   rtol=1e-5, atol=1e-5, equal_nan=True)


def _round_trip(tmp_path, fun, args):
    path = str(tmp_path / "f.mlxfn")
    cargs = [mx.array(a) for a in args]
    mx.export_function(path, lambda *xs: fun(mx, *xs), *cargs)
    _same(mx.import_function(path)(*cargs), _list(fun(mx, *cargs)))
    return path


@pytest.mark.parametrize("name,fun,args", MLX_CASES, ids=[c[0] for c in MLX_CASES])
def test_mlx_primitives_round_trip(tmp_path, name, fun, args):
    _round_trip(tmp_path, fun, args)


@needs_mlx
@pytest.mark.parametrize("name,fun,args", MLX_CASES, ids=[c[0] for c in MLX_CASES])
def test_mlx_primitives_import_in_mlx(tmp_path, name, fun, args):
    path = _round_trip(tmp_path, fun, args)
    margs = [mlx.array(a) for a in args]
    got = mlx.import_function(path)(*margs)
    want = _list(fun(mlx, *margs))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(np.array(g), np.array(w), rtol=1e-4, atol=1e-4,
                                   equal_nan=True)
    with open(path, "rb") as f:
        assert b"Cmlx" not in f.read()


@pytest.mark.parametrize("name,prim,fun,args", CMLX_CASES, ids=[c[0] for c in CMLX_CASES])
def test_cmlx_named_primitives(tmp_path, name, prim, fun, args):
    path = _round_trip(tmp_path, fun, args)
    with open(path, "rb") as f:
        assert prim.encode() in f.read()
    if mlx is not None:
        with pytest.raises(ValueError, match="Unable to deserialize primitive " + prim):
            mlx.import_function(path)


def test_sdpa_export_is_the_composition(tmp_path):
    # MLX's CPU build writes the fallback graph: no fused node in the file
    path = _round_trip(tmp_path, MLX_CASES[0][1], MLX_CASES[0][2])
    with open(path, "rb") as f:
        data = f.read()
    assert b"Softmax" in data and b"ScaledDotProductAttention" not in data


def test_cmlx_named_states_are_checked(tmp_path):
    # a CmlxDequantize with a mode that does not exist is an error on import
    path = str(tmp_path / "d.mlxfn")
    w, g = mx.array(r(4, 64)), mx.array(0.5)
    mx.export_function(path, lambda w, g: mx.dequantize(*mx.quantize(w, mode="nvfp4")[:2],
                                                        mode="nvfp4", global_scale=g), w, g)
    with open(path, "rb") as f:
        data = bytearray(f.read())
    i = data.index(b"CmlxDequantize") + len(b"CmlxDequantize")
    assert data[i:i + 12] == b"".join(v.to_bytes(4, "little") for v in (16, 4, 3))
    data[i + 8:i + 12] = (9).to_bytes(4, "little")  # no such mode
    bad = tmp_path / "bad.mlxfn"
    bad.write_bytes(bytes(data))
    with pytest.raises((ValueError, IndexError)):
        mx.import_function(str(bad))


# Every public op family: export, import, same outputs.
X = r(3, 4)
Y = np.abs(r(3, 4)) + 0.5
I = np.array([[3, 1, 2, 0], [1, 1, 0, 2], [2, 3, 3, 1]], np.int32)
IDX = np.array([2, 0, 1], np.int32)

SWEEP = [
    ("arith", lambda m, x, y: (x + y, x - y, x * y, x / y, x ** 2, -x, m.abs(x), x % y,
                               x // y, m.maximum(x, y), m.minimum(x, y))),
    ("transcendental", lambda m, x, y: (m.exp(x), m.expm1(x), m.log(y), m.log2(y), m.log10(y),
                                        m.log1p(y), m.sqrt(y), m.rsqrt(y), m.square(x),
                                        m.sigmoid(x), m.erf(x), m.erfinv(x / 4))),
    ("trig", lambda m, x, y: (m.sin(x), m.cos(x), m.tan(x), m.arcsin(x / 4), m.arccos(x / 4),
                              m.arctan(x), m.sinh(x), m.cosh(x), m.tanh(x), m.arcsinh(x),
                              m.arccosh(y + 1), m.arctanh(x / 4), m.arctan2(x, y))),
    ("rounding", lambda m, x, y: (m.floor(x), m.ceil(x), m.round(x), m.sign(x),
                                  m.reciprocal(y), m.degrees(x), m.radians(x))),
    ("compare", lambda m, x, y: (x == y, x != y, x < y, x <= y, x > y, x >= y,
                                 m.logical_and(x > 0, y > 1), m.logical_or(x > 0, y > 1),
                                 m.logical_not(x > 0), m.isclose(x, y), m.allclose(x, x),
                                 m.array_equal(x, y))),
    ("bitwise", lambda m, x, y: (lambda i: (i & 3, i | 4, i ^ 5, i << 1, i >> 1))(
        (x * 10).astype(m.int32))),
    ("reduce", lambda m, x, y: (m.sum(x, 0), m.prod(x, 1), m.max(x), m.min(x, 0), m.mean(x, 1),
                                m.var(x, 0), m.std(x), m.all(x > 0, 1), m.any(x > 0),
                                m.argmax(x, 1), m.argmin(x, 0), m.logsumexp(x, 1),
                                m.logcumsumexp(x, 1))),
    ("scan", lambda m, x, y: (m.cumsum(x, 1), m.cumprod(x, 0), m.cummax(x, 1),
                              m.cummin(x, 0, reverse=True))),
    ("shape", lambda m, x, y: (m.reshape(x, (4, 3)), m.transpose(x), m.swapaxes(x, 0, 1),
                               m.moveaxis(x, 0, 1), m.expand_dims(x, 1), m.squeeze(x[None]),
                               m.flatten(x), m.unflatten(m.flatten(x), 0, (2, 6)),
                               m.broadcast_to(x[:1], (3, 4)), m.tile(x, (2, 1)),
                               m.repeat(x, 2, 1), m.stack([x, y]), m.concatenate([x, y], 1),
                               m.split(x, 2, 1)[1], m.atleast_3d(x), m.roll(x, 1, 1),
                               m.flip(x, 0) if hasattr(m, "flip") else x[::-1])),
    ("slicing", lambda m, x, y: (x[1:, ::2], x[::-1], x[..., 1], m.take(x, m.array([2, 0]), 1),
                                 m.take_along_axis(x, m.argsort(x, 1), 1),
                                 x.at[m.array([0, 2])].add(1.0), x.at[1, 1:3].multiply(y[0, :2]),
                                 m.put_along_axis(x, m.array([[0], [1], [2]]), y[:, :1], 1))),
    ("pad", lambda m, x, y: (m.pad(x, 1), m.pad(x, [(0, 1), (2, 0)], constant_values=3.0),
                             m.pad(x, 1, mode="edge"))),
    ("sort", lambda m, x, y: (m.sort(x, 1), m.argsort(x, 0), m.partition(x, 1, 1),
                              m.argpartition(x, 2, 1), m.topk(x, 2, 1))),
    ("where", lambda m, x, y: (m.where(x > 0, x, y), m.clip(x, -0.5, 0.5),
                               m.nan_to_num(m.log(x)))),
    ("matmul", lambda m, x, y: (x @ y.T, m.addmm(x, x, m.ones((4, 4)), 0.5, 2.0),
                                m.outer(x[0], y[0]), m.inner(x, y), m.tensordot(x, y.T, 1),
                                m.einsum("ij,kj->ik", x, y), m.kron(x[:2, :2], y[:2, :2]))),
    ("creation", lambda m, x, y: (x + m.eye(3, 4), x * m.tri(3, 4), m.tril(x), m.triu(x, 1),
                                  m.arange(4.0) + x, m.linspace(0, 1, 4) * x,
                                  m.zeros_like(x) + m.ones_like(y), m.full((3, 4), 2.0) + x,
                                  m.identity(4)[:3] + x)),
    ("softmax", lambda m, x, y: (m.softmax(x, 1), m.softmax(x, 0, precise=True),
                                 m.logaddexp(x, y))),
    ("linalg", lambda m, x, y: (
        m.linalg.norm(x), m.linalg.norm(x, axis=1), m.linalg.inv(x[:, :3] + 3 * m.eye(3)),
        m.linalg.qr(x @ x.T + m.eye(3), stream=m.cpu)[1],
        m.linalg.cholesky(x @ x.T + m.eye(3), stream=m.cpu),
        m.linalg.eigvalsh(x @ x.T, stream=m.cpu), m.linalg.pinv(x, stream=m.cpu),
        m.linalg.cross(x[:, :3], y[:, :3]),
        m.linalg.solve_triangular(m.triu(x[:, :3]) + 3 * m.eye(3), y[:, :2], upper=True,
                                  stream=m.cpu))),
    ("fft", lambda m, x, y: (m.abs(m.fft.fft(x)), m.fft.irfft(m.fft.rfft(x)),
                             m.real(m.fft.ifft2(m.fft.fft2(x))))),
    ("conv", lambda m, x, y: (m.conv1d(x.reshape(1, 4, 3), m.ones((2, 2, 3))),
                              m.conv_transpose1d(x.reshape(1, 4, 3), m.ones((2, 2, 3))),
                              m.conv2d(x.reshape(1, 3, 4, 1), m.ones((1, 2, 2, 1)), padding=1))),
    ("nn_fast", lambda m, x, y: (m.fast.rms_norm(x, m.ones((4,)), 1e-5),
                                 m.fast.layer_norm(x, m.ones((4,)), m.zeros((4,)), 1e-5),
                                 m.fast.rope(x.reshape(1, 3, 4), 4, traditional=False, base=1e4,
                                             scale=1.0, offset=0))),
    ("dtypes", lambda m, x, y: (x.astype(m.float16), x.astype(m.int32), x.view(m.uint32),
                                m.stop_gradient(x), m.as_strided(x, (2, 2), (4, 1), 1))),
    ("grad", lambda m, x, y: m.grad(lambda a: (m.tanh(a) * y).sum())(x)),
    ("vjp", lambda m, x, y: m.vjp(lambda a: m.exp(a), [x], [y])[1][0]),
    ("random", lambda m, x, y: (m.random.uniform(shape=(3, 4), key=m.random.key(1)) + x,
                                m.random.normal(shape=(3, 4), key=m.random.key(2)) * x,
                                m.random.bernoulli(0.5, (3, 4), key=m.random.key(3)))),
    ("hadamard_quant", lambda m, x, y: (
        m.hadamard_transform(x),
        m.quantized_matmul(x @ m.ones((4, 64)), *m.quantize(m.ones((32, 64)), 64, 4), True,
                           64, 4))),
    ("gather_mm", lambda m, x, y: m.gather_mm(m.stack([x, y]), y.T[None],
                                              m.array([1, 0], dtype=m.uint32),
                                              m.array([0, 0], dtype=m.uint32))),
]


@pytest.mark.parametrize("name,fun", SWEEP, ids=[c[0] for c in SWEEP])
def test_every_op_family_exports(tmp_path, name, fun):
    _round_trip(tmp_path, fun, (X, Y))


@needs_mlx
@pytest.mark.parametrize("name", ["block_masked_all", "depends", "conv_wgrad_groups",
                                  "sdpa_causal", "diagonal", "median"])
def test_mlx_files_of_these_import_in_cmlx(tmp_path, name):
    fun, args = {c[0]: (c[1], c[2]) for c in MLX_CASES}[name]
    path = str(tmp_path / "m.mlxfn")
    margs = [mlx.array(a) for a in args]
    mlx.export_function(path, lambda *xs: fun(mlx, *xs), *margs)
    want = _list(fun(mlx, *margs))
    got = mx.import_function(path)(*[mx.array(a) for a in args])
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == tuple(w.shape)
        np.testing.assert_allclose(np.array(g), np.array(w), rtol=1e-4, atol=1e-4)
