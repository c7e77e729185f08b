"""Convolutions of cmlx.core: conv1d/2d/3d, conv_general, conv_transpose1d/2d/3d
and convolve, with their gradients, jvp and vmap.

Values are checked against a float64 NumPy reference of MLX's definition
(channels-last, stride, padding low/high, kernel and input dilation, groups,
flip) across 1-3 spatial axes, dtypes and layouts; gradients through the
adjoint identity <vjp(ct), x'> == <ct, conv(x')> (the convolution is linear
in each operand, so this holds exactly); results, dtypes and errors against
real MLX where it is importable.  The parameter sets of MLX's torch-based
tests (which need PyTorch) are compared with real MLX here."""

import itertools

import numpy as np
import pytest

from conftest import SUBJECT_IS_MLX, cmlx_only, mlx_ref, mx, needs_oracle

RNG = np.random.default_rng(7)


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# ------------------------------------------------------------ NumPy reference


def _per_axis(v, n):
    return list(v) if isinstance(v, (list, tuple)) else [v] * n


def np_conv(x, w, stride=1, lo=0, hi=None, kdil=1, idil=1, groups=1, flip=False):
    """MLX's conv_general in float64: x (N, S..., C), w (O, K..., C/groups)."""
    x = np.asarray(x, np.float64 if not np.iscomplexobj(x) else np.complex128)
    w = np.asarray(w, x.dtype if not np.iscomplexobj(w) else np.complex128)
    d = x.ndim - 2
    stride, kdil, idil = (_per_axis(v, d) for v in (stride, kdil, idil))
    lo = _per_axis(lo, d)
    hi = lo if hi is None else _per_axis(hi, d)
    # negative padding crops input elements (before dilation), as MLX does
    sl = [slice(None)]
    for i in range(d):
        sl.append(slice(max(0, -lo[i]), x.shape[i + 1] + min(0, hi[i])))
    x = x[tuple(sl)]
    lo = [max(0, v) for v in lo]
    hi = [max(0, v) for v in hi]
    S = x.shape[1:-1]
    xd = np.zeros((x.shape[0],) + tuple(1 + idil[i] * (S[i] - 1) for i in range(d)) + (x.shape[-1],),
                  np.result_type(x, w))
    xd[(slice(None),) + tuple(slice(None, None, idil[i]) for i in range(d))] = x
    xp = np.pad(xd, [(0, 0)] + [(lo[i], hi[i]) for i in range(d)] + [(0, 0)])
    if flip:
        w = w[(slice(None),) + (slice(None, None, -1),) * d]
    K = w.shape[1:-1]
    # C's truncating division, as MLX: a kernel longer than the input can
    # still give one output, its taps past the end reading zeros
    Y = [int((xp.shape[i + 1] - (1 + kdil[i] * (K[i] - 1))) / stride[i]) + 1 for i in range(d)]
    need = [stride[i] * (Y[i] - 1) + kdil[i] * (K[i] - 1) + 1 for i in range(d)]
    xp = np.pad(xp, [(0, 0)] + [(0, max(0, need[i] - xp.shape[i + 1])) for i in range(d)]
                + [(0, 0)])
    N, C, O = x.shape[0], x.shape[-1], w.shape[0]
    Cg, Og = C // groups, O // groups
    out = np.zeros((N,) + tuple(Y) + (O,), xd.dtype)
    for k in itertools.product(*[range(v) for v in K]):
        win = xp[(slice(None),) + tuple(
            slice(k[i] * kdil[i], k[i] * kdil[i] + stride[i] * (Y[i] - 1) + 1, stride[i])
            for i in range(d))]
        for g in range(groups):
            wk = w[(slice(g * Og, (g + 1) * Og),) + k]  # (Og, Cg)
            out[..., g * Og:(g + 1) * Og] += win[..., g * Cg:(g + 1) * Cg] @ wk.T
    return out


def np_conv_transpose(x, w, stride, padding, dilation, output_padding, groups=1):
    """Transposed convolution by scattering (PyTorch's definition), MLX's
    weight layout (O, K..., C/groups)."""
    x = np.asarray(x, np.float64)
    w = np.asarray(w, np.float64)
    d = x.ndim - 2
    s, p, dl, op = (_per_axis(v, d) for v in (stride, padding, dilation, output_padding))
    S, K = x.shape[1:-1], w.shape[1:-1]
    L = [(S[i] - 1) * s[i] - 2 * p[i] + dl[i] * (K[i] - 1) + op[i] + 1 for i in range(d)]
    N, C, O = x.shape[0], x.shape[-1], w.shape[0]
    Cg, Og = C // groups, O // groups
    full = np.zeros((N,) + tuple(L[i] + 2 * p[i] + s[i] * 2 + dl[i] * K[i] for i in range(d)) + (O,))
    for i_ in itertools.product(*[range(v) for v in S]):
        for k in itertools.product(*[range(v) for v in K]):
            pos = tuple(i_[a] * s[a] + k[a] * dl[a] for a in range(d))
            for g in range(groups):
                full[(slice(None),) + pos + (slice(g * Og, (g + 1) * Og),)] += \
                    x[(slice(None),) + i_ + (slice(g * Cg, (g + 1) * Cg),)] @ \
                    w[(slice(g * Og, (g + 1) * Og),) + k].T
    return full[(slice(None),) + tuple(slice(p[a], p[a] + L[a]) for a in range(d))]


def close(got, exp, tol=1e-4):
    got = np.array(got)
    assert got.shape == exp.shape, f"shape {got.shape} != {exp.shape}"
    scale = max(1.0, float(np.abs(exp).max())) if exp.size else 1.0
    np.testing.assert_allclose(got, exp, rtol=tol, atol=tol * scale)


# ------------------------------------------------------------ forward

GENERAL = [
    # (input shape, weight shape, kwargs of conv_general)
    ((2, 9, 4), (6, 3, 4), {}),
    ((2, 9, 4), (6, 3, 4), dict(stride=2, padding=1)),
    ((2, 9, 4), (6, 3, 4), dict(kernel_dilation=2, padding=([3], [1]))),
    ((2, 9, 4), (6, 3, 2), dict(groups=2, flip=True)),
    ((1, 5, 3), (2, 2, 3), dict(input_dilation=3, padding=([1], [2]), stride=2)),
    ((2, 9, 4), (6, 3, 4), dict(padding=([-2], [-1]))),  # crops the input
    ((1, 2, 1), (1, 3, 1), dict(stride=2)),  # taps past the end (MLX reads garbage there)
    ((2, 7, 8, 4), (5, 3, 2, 4), dict(stride=[2, 1], padding=([1, 0], [2, 1]))),
    ((2, 7, 8, 6), (4, 3, 3, 3), dict(groups=2, kernel_dilation=[2, 1], flip=True)),
    ((2, 7, 8, 6), (6, 3, 3, 1), dict(groups=6, padding=1)),  # depthwise: direct loops
    ((2, 7, 8, 3), (6, 3, 2, 1), dict(groups=3, stride=2, kernel_dilation=[1, 2], flip=True)),
    ((2, 9, 1), (3, 4, 1), dict(padding=2, input_dilation=2)),
    ((2, 5, 6, 4), (3, 3, 2, 4), dict(input_dilation=[2, 3], padding=1, flip=True)),
    ((1, 5, 6, 4, 3), (2, 2, 3, 2, 3), dict(padding=1, stride=[1, 2, 1])),
    ((1, 4, 5, 3, 2), (3, 2, 2, 2, 2), dict(input_dilation=2, kernel_dilation=[1, 2, 1], flip=True)),
    ((3, 6, 5, 8), (7, 1, 1, 8), {}),  # pointwise: a single GEMM
    ((3, 6, 5, 8), (8, 1, 1, 4), dict(groups=2)),
]


def _np_kwargs(kw):
    p = kw.get("padding", 0)
    lo, hi = (p if isinstance(p, tuple) else (p, p))
    return dict(stride=kw.get("stride", 1), lo=lo, hi=hi, kdil=kw.get("kernel_dilation", 1),
                idil=kw.get("input_dilation", 1), groups=kw.get("groups", 1),
                flip=kw.get("flip", False))


@pytest.mark.parametrize("xs,ws,kw", GENERAL)
def test_conv_general_values(xs, ws, kw):
    if SUBJECT_IS_MLX and xs[1] <= 2:
        pytest.skip("MLX reads past the input for taps beyond its end")
    x, w = randn(*xs), randn(*ws)
    out = mx.conv_general(mx.array(x), mx.array(w), **kw)
    close(out, np_conv(x, w, **_np_kwargs(kw)))
    if mlx_ref is not None and xs[1] > 2:
        ref = mlx_ref.conv_general(mlx_ref.array(x), mlx_ref.array(w), **kw)
        close(out, np.array(ref))


def test_conv1d_2d_3d_forms():
    x1, w1 = randn(2, 11, 3), randn(4, 3, 3)
    close(mx.conv1d(mx.array(x1), mx.array(w1), 2, 1, 2), np_conv(x1, w1, 2, 1, 1, 2))
    x2, w2 = randn(2, 8, 7, 4), randn(6, 3, 2, 2)
    out = mx.conv2d(mx.array(x2), mx.array(w2), stride=(1, 2), padding=(2, 0), dilation=(1, 2),
                    groups=2)
    close(out, np_conv(x2, w2, [1, 2], [2, 0], [2, 0], [1, 2], 1, 2))
    close(mx.conv2d(mx.array(x2), mx.array(w2), [2, 2], 1, groups=2),
          np_conv(x2, w2, 2, 1, groups=2))
    x3, w3 = randn(1, 5, 6, 7, 2), randn(3, 2, 3, 2, 2)
    close(mx.conv3d(mx.array(x3), mx.array(w3), stride=(2, 1, 1), padding=1, dilation=(1, 1, 2)),
          np_conv(x3, w3, [2, 1, 1], 1, 1, [1, 1, 2]))


TRANSPOSE = [
    ((2, 5, 4), (3, 3, 4), dict(stride=2, padding=1, output_padding=1)),
    ((2, 5, 4), (6, 3, 2), dict(stride=3, dilation=2, groups=2)),
    ((2, 4, 5, 4), (3, 3, 3, 4), dict(stride=2, padding=1)),
    ((2, 4, 5, 4), (3, 3, 2, 4), dict(stride=(2, 1), padding=(0, 1), dilation=(1, 2),
                                      output_padding=(1, 0))),
    ((1, 3, 4, 2, 2), (2, 2, 3, 2, 2), dict(stride=2, padding=(1, 0, 0), output_padding=1)),
]


@pytest.mark.parametrize("xs,ws,kw", TRANSPOSE)
def test_conv_transpose_values(xs, ws, kw):
    x, w = randn(*xs), randn(*ws)
    fn = getattr(mx, f"conv_transpose{len(xs) - 2}d")
    out = fn(mx.array(x), mx.array(w), **kw)
    close(out, np_conv_transpose(x, w, kw.get("stride", 1), kw.get("padding", 0),
                                 kw.get("dilation", 1), kw.get("output_padding", 0),
                                 kw.get("groups", 1)))


def test_large_blocks():
    # more rows than one scratch block holds: the work is cut into blocks
    x, w = randn(4, 40, 40, 64), randn(8, 3, 3, 64)
    close(mx.conv2d(mx.array(x), mx.array(w), padding=1), np_conv(x, w, 1, 1), tol=1e-3)
    x, w = randn(16, 20, 20, 16), randn(8, 3, 3, 16)
    close(mx.conv_transpose2d(mx.array(x), mx.array(w), stride=2),
          np_conv_transpose(x, w, 2, 0, 1, 0), tol=1e-3)


# ------------------------------------------------------------ dtypes and layouts


@pytest.mark.parametrize("xt,wt,out,tol", [
    ("float16", "float16", "float16", 2e-2), ("bfloat16", "bfloat16", "bfloat16", 5e-2),
    # MLX computes float64 convolutions in float32; cmlx in float64
    ("float64", "float64", "float64", 1e-5 if SUBJECT_IS_MLX else 1e-10), ("float16", "float32", "float32", 1e-3),
    ("bfloat16", "float16", "float32", 2e-2), ("float32", "int32", "float32", 1e-4),
    pytest.param("float32", "complex64", "complex64", 1e-4, marks=cmlx_only),  # MLX: wrong values
])
@pytest.mark.parametrize("groups", [1, 4])
def test_dtypes(xt, wt, out, tol, groups):
    if SUBJECT_IS_MLX and groups > 1 and out == "float64":
        pytest.skip("MLX has no float64 grouped convolution")
    x, w = randn(2, 6, 5, 4), randn(4, 3, 2, 4 // groups)
    if wt == "int32":
        w = np.round(w * 3)
    if wt == "complex64":
        w = w + 1j * randn(*w.shape)
    a = mx.array(x).astype(getattr(mx, xt))
    b = mx.array(w).astype(getattr(mx, wt))
    r = mx.conv2d(a, b, padding=1, stride=(1, 2), groups=groups)
    assert r.dtype == getattr(mx, out)
    xa = np.array(a.astype(mx.float32)) if xt != "float64" else x
    wa = np.array(b.astype(mx.complex64 if wt == "complex64" else mx.float32)) \
        if wt != "float64" else w
    exp = np_conv(xa, wa, [1, 2], 1, groups=groups)
    got = np.array(r.astype(mx.complex64 if out == "complex64" else mx.float64))
    close(got, exp, tol)


def test_layouts():
    x, w = randn(2, 7, 6, 4), randn(5, 3, 3, 4)
    exp = np_conv(x, w, 1, 1)
    xt = mx.transpose(mx.array(np.ascontiguousarray(x.transpose(0, 3, 1, 2))), (0, 2, 3, 1))
    wt = mx.transpose(mx.array(np.ascontiguousarray(w.transpose(3, 1, 2, 0))), (3, 1, 2, 0))
    close(mx.conv2d(xt, wt, padding=1), exp)
    big = mx.array(randn(2, 14, 6, 8))
    xs = big[:, ::2, :, 1::2]
    close(mx.conv2d(xs, mx.array(w), padding=1), np_conv(np.array(xs), w, 1, 1))
    wb = mx.broadcast_to(mx.array(w[:1]), (5, 3, 3, 4))
    close(mx.conv2d(mx.array(x), wb, padding=1), np_conv(x, np.broadcast_to(w[:1], w.shape), 1, 1))


def test_empty_batch():
    w = mx.ones((2, 3, 4))
    assert mx.conv1d(mx.ones((0, 5, 4)), w).shape == (0, 3, 2)


@cmlx_only
def test_empty_batch_grad():
    # MLX fails reshaping the empty patches
    w = mx.ones((2, 3, 4))
    g = mx.grad(lambda w: mx.conv1d(mx.ones((0, 5, 4)), w).sum())(w)
    assert g.shape == (2, 3, 4) and np.all(np.array(g) == 0)


@cmlx_only
def test_empty_channels():
    # MLX aborts (no output channels) or divides by zero (no input channels)
    assert mx.conv1d(mx.ones((1, 5, 4)), mx.ones((0, 3, 4))).shape == (1, 3, 0)
    # no input channels: an empty sum
    r = mx.conv1d(mx.ones((1, 5, 0)), mx.ones((2, 3, 0)))
    assert r.shape == (1, 3, 2) and np.all(np.array(r) == 0)


# ------------------------------------------------------------ errors

ERRORS = [
    (lambda m: m.conv1d(m.ones((1, 5, 4), m.int32), m.ones((2, 3, 4))), ValueError,
     r"\[conv\] Invalid input array with type int32. Convolution currently only supports"),
    (lambda m: m.conv1d(m.ones((1, 5, 4), m.complex64), m.ones((2, 3, 4))), ValueError,
     "type complex64"),
    (lambda m: m.conv1d(m.ones((1, 5, 4)), m.ones((2, 3, 3))), ValueError,
     r"Expect the input channels in the input and weight array to match but got shapes - "
     r"input: \(1,5,4\) and weight: \(2,3,3\)"),
    (lambda m: m.conv1d(m.ones((1, 5, 4)), m.ones((3, 3, 2)), groups=2), ValueError,
     "output channels must be divisible by the number of groups. Got 3 output channels"),
    (lambda m: m.conv1d(m.ones((1, 5, 4)), m.ones((4, 3, 1)), groups=2), ValueError,
     r"Given groups=2 and weights of shape \(4,3,1\), expected to have 2 input channels"),
    (lambda m: m.conv1d(m.ones((1, 5, 4)), m.ones((2, 3, 4)), groups=3), ValueError,
     "input channels must be divisible by the number of groups"),
    (lambda m: m.conv_general(m.ones((1, 5, 5, 5, 4)), m.ones((4, 3, 2, 1, 2)), groups=2),
     ValueError, r"Can only handle groups != 1 in 1D or 2D convolutions."),
    (lambda m: m.conv_general(m.ones((1, 4)), m.ones((4, 3))), ValueError,
     "Only works for inputs with 1-3 spatial dimensions"),
    (lambda m: m.conv2d(m.ones((1, 5, 4)), m.ones((4, 3, 2, 1))), ValueError,
     "Invalid weight array with 4 dimensions for 1D convolution"),
    (lambda m: m.conv1d(m.ones((1, 5, 4)), m.ones((2, 3, 4)), stride=0), ValueError,
     r"Stride sizes must be positive. Got strides \(0\)."),
    (lambda m: m.conv1d(m.ones((1, 5, 4)), m.ones((2, 3, 4)), dilation=0), ValueError,
     "Kernel dilation sizes must be positive"),
    (lambda m: m.conv_general(m.ones((1, 5, 4)), m.ones((2, 3, 4)), input_dilation=0), ValueError,
     "Input dilation sizes must be positive"),
    (lambda m: m.conv_general(m.ones((1, 5, 4)), m.ones((2, 3, 4)), stride=[1, 2]), ValueError,
     r"Invalid strides \(1,2\) for 1D convolution."),
    (lambda m: m.conv_general(m.ones((1, 5, 4)), m.ones((2, 3, 4)), padding=([1], [1, 2])),
     ValueError, r"Invalid padding \(1\) \| \(1,2\) for 1D convolution."),
    (lambda m: m.conv_general(m.ones((1, 5, 4)), m.ones((2, 3, 4)), padding=(-1, 2)),
     ValueError, r"Invalid padding \(0,2\) \| \(0,2\)"),
    (lambda m: m.conv_general(m.ones((1, 5, 4)), m.ones((2, 3, 4)), kernel_dilation=[1, 1]),
     ValueError, "Invalid kernel dilation"),
    (lambda m: m.conv1d(m.ones((1, 5, 4)), m.ones((2, 7, 4))), ValueError,
     r"Spatial dimensions of input after padding cannot be smaller than weight spatial "
     r"dimensions. Got error at axis 1 for input with shape \(1,5,4\), padding low \(0\), "
     r"padding high \(0\), and weight of shape \(2,7,4\)."),
    (lambda m: m.conv1d(m.ones((1, 5, 4)), m.ones((2, 3, 4)), padding=2**31 - 1), OverflowError,
     r"\[conv\] Shape dimension 4294967297 is outside the supported range"),
    (lambda m: m.conv2d(m.ones((1, 5, 5, 4)), m.ones((2, 3, 3, 4)), stride=(1, 2, 3)), TypeError,
     "incompatible function arguments"),
    (lambda m: m.conv1d(m.ones((1, 5, 4)), m.ones((2, 3, 4)), stride=1.0), TypeError,
     "incompatible function arguments"),
    (lambda m: m.conv1d(m.ones((1, 5, 4)), m.ones((2, 3, 4)), stride=[1]), TypeError,
     "incompatible function arguments"),
    (lambda m: m.conv_general(m.ones((1, 5, 4)), m.ones((2, 3, 4)), padding=([1],)), TypeError,
     "incompatible function arguments"),
    (lambda m: m.conv1d(np.ones((1, 5, 4), np.float32), m.ones((2, 3, 4))), TypeError,
     "incompatible function arguments"),
    (lambda m: m.convolve(m.ones((3,)), m.ones((2,)), mode="x"), ValueError,
     r"\[convolve\] Invalid mode."),
    (lambda m: m.convolve(m.ones((3,)), m.ones((0,))), ValueError,
     r"\[convolve\] Inputs cannot be empty."),
    (lambda m: m.convolve(m.ones((3, 2)), m.ones((2,))), ValueError,
     r"\[convolve\] Inputs must be 1D."),
    (lambda m: m.convolve(m.ones((3,), m.int32), m.ones((2,), m.int32)), ValueError,
     "Invalid input array with type int32"),
    (lambda m: m.convolve(m.ones((3,)), m.ones((2,)), mode=None), TypeError,
     "incompatible function arguments"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i):
    fn, exc, msg = ERRORS[i]
    with pytest.raises(exc, match=msg):
        mx.eval(fn(mx))
    if mlx_ref is not None:
        with pytest.raises(exc):
            mlx_ref.eval(fn(mlx_ref))


@cmlx_only
def test_zero_groups_is_an_error():
    # MLX divides by zero here (SIGFPE)
    with pytest.raises(ValueError, match="groups must be positive"):
        mx.conv1d(mx.ones((1, 5, 4)), mx.ones((2, 3, 4)), groups=0)


def test_accepted_forms():
    x, w = mx.ones((1, 6, 6, 4)), mx.ones((2, 3, 3, 4))
    assert mx.conv2d(x, w, True, [1, 1], (1, 1)).shape == (1, 6, 6, 2)  # bool is an int
    assert mx.conv_general(x, w, padding=[[1, 0], [0, 1]]).shape == (1, 5, 5, 2)
    assert mx.conv_general(x, w, padding=((1,), (1,))).shape == (1, 6, 6, 2)
    assert mx.conv_general(x, w, stride=[], padding=([], [])).shape == (1, 4, 4, 2)
    assert mx.conv_general(x, w, padding=[-1]).shape == (1, 2, 2, 2)
    assert mx.conv_transpose1d(mx.ones((1, 5, 4)), mx.ones((2, 3, 4)),
                               output_padding=-5).shape == (1, 2, 2)


# ------------------------------------------------------------ convolve


@pytest.mark.parametrize("m,n", [(1, 1), (25, 5), (24, 4), (5, 25), (4, 24), (7, 7)])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve(m, n, mode):
    a, v = RNG.random(m).astype(np.float32), RNG.random(n).astype(np.float32)
    got = mx.convolve(mx.array(a), mx.array(v), mode=mode)
    exp = np.convolve(a.astype(np.float64), v.astype(np.float64), mode=mode)
    if mode == "same" and m < n:  # MLX swaps the operands first: the longer one's length
        exp = np.convolve(v.astype(np.float64), a.astype(np.float64), mode=mode)
    close(got, exp, 1e-5)
    if mlx_ref is not None:
        close(got, np.array(mlx_ref.convolve(mlx_ref.array(a), mlx_ref.array(v), mode=mode)), 1e-5)


def test_convolve_dtypes():
    r = mx.convolve(mx.ones((3,), mx.float16), mx.ones((2,)))
    assert r.dtype == mx.float32 and r.tolist() == [1, 2, 2, 1]
    r = mx.convolve(mx.ones((6,)), mx.ones((4,), mx.int32), "same")
    assert r.tolist() == [2, 3, 4, 4, 4, 3]  # NumPy's too


# ------------------------------------------------------------ gradients


def _adjoint_check(f, args, argnum):
    """vjp of a function linear in args[argnum]: <vjp(ct), d> == <ct, f(d)>."""
    out = f(*args)
    ct = mx.array(randn(*out.shape))
    _, (g,) = mx.vjp(lambda a: f(*[a if i == argnum else x for i, x in enumerate(args)]),
                     [args[argnum]], [ct])
    assert g.shape == args[argnum].shape
    d = mx.array(randn(*args[argnum].shape))
    lhs = float(mx.sum(g * d))
    fd = f(*[d if i == argnum else x for i, x in enumerate(args)])
    rhs = float(mx.sum(ct * fd))
    assert abs(lhs - rhs) <= 1e-3 * max(1.0, abs(rhs)), (lhs, rhs)
    return g


GRAD_CASES = GENERAL + [
    ((2, 10, 8, 3), (4, 3, 3, 3), dict(stride=2, padding=([1, 0], [0, 2]))),
    ((2, 6, 6, 4), (4, 3, 3, 2), dict(groups=2, input_dilation=2, stride=2, flip=True)),
    ((1, 9, 2), (3, 4, 2), dict(padding=([5], [-3]))),
]


@pytest.mark.parametrize("xs,ws,kw", GRAD_CASES)
@pytest.mark.parametrize("argnum", [0, 1])
def test_vjp_adjoint(xs, ws, kw, argnum):
    if SUBJECT_IS_MLX and (xs[1] <= 2 or (argnum == 0 and "input_dilation" in kw)):
        pytest.skip("MLX: garbage past the input / a wrong gradient shape")
    x, w = mx.array(randn(*xs)), mx.array(randn(*ws))
    _adjoint_check(lambda a, b: mx.conv_general(a, b, **kw), [x, w], argnum)


@needs_oracle
@pytest.mark.parametrize("xs,ws,kw", [c for c in GRAD_CASES
                                      if "input_dilation" not in c[2] and c[0][1] > 2])
def test_grads_match_mlx(xs, ws, kw):
    # (with input dilation and unequal padding MLX's input gradient has the
    # wrong shape; the adjoint test above covers those)
    x, w = randn(*xs), randn(*ws)
    for m in (mx, mlx_ref):
        def loss(a, b, m=m):
            return (m.conv_general(a, b, **kw) ** 2).sum()
        gx, gw = m.grad(loss, argnums=(0, 1))(m.array(x), m.array(w))
        if m is mx:
            ours = (np.array(gx), np.array(gw))
        else:
            close(ours[0], np.array(gx), 1e-3)
            close(ours[1], np.array(gw), 1e-3)


def test_second_order():
    # the weight gradient is itself differentiable: d/dx <G, dW(x)> equals
    # the input gradient of conv(x, G) with the loss' cotangent
    x, w = mx.array(randn(2, 7, 6, 3)), mx.array(randn(4, 3, 2, 3))
    ct = mx.array(randn(2, 3, 5, 4))
    G = mx.array(randn(4, 3, 2, 3))

    def dw(a):
        return mx.vjp(lambda b: mx.conv2d(a, b, stride=(2, 1)), [w], [ct])[1][0]

    gx = mx.grad(lambda a: (dw(a) * G).sum())(x)
    exp = mx.vjp(lambda a: mx.conv2d(a, G, stride=(2, 1)), [x], [ct])[1][0]
    close(gx, np.array(exp), 1e-4)
    # and the cotangent's gradient is the forward convolution
    gct = mx.grad(lambda c: (mx.vjp(lambda b: mx.conv2d(x, b, stride=(2, 1)), [w], [c])[1][0]
                             * G).sum())(ct)
    close(gct, np.array(mx.conv2d(x, G, stride=(2, 1))), 1e-4)


@cmlx_only  # MLX has no jvp for convolutions
def test_jvp():
    x, w = mx.array(randn(2, 7, 6, 4)), mx.array(randn(6, 3, 3, 2))
    tx, tw = mx.array(randn(2, 7, 6, 4)), mx.array(randn(6, 3, 3, 2))

    def f(a, b):
        return mx.conv2d(a, b, padding=1, groups=2)

    _, (t,) = mx.jvp(f, [x, w], [tx, tw])
    close(t, np.array(f(tx, w) + f(x, tw)))
    _, (t,) = mx.jvp(lambda a: f(a, w), [x], [tx])
    close(t, np.array(f(tx, w)))


# ------------------------------------------------------------ vmap


@pytest.mark.parametrize("groups", [1, pytest.param(2, marks=cmlx_only)])
def test_vmap(groups):
    # (MLX mixes up the groups when only the weight is batched)
    x = mx.array(randn(3, 2, 7, 4))
    w = mx.array(randn(3, 6, 3, 4 // groups))

    def f(a, b):
        return mx.conv1d(a, b, padding=1, groups=groups)

    for axes in [(0, 0), (0, None), (None, 0)]:
        xs = x if axes[0] == 0 else x[0]
        ws = w if axes[1] == 0 else w[0]
        got = mx.vmap(f, in_axes=axes)(xs, ws)
        exp = mx.stack([f(xs[i] if axes[0] == 0 else xs, ws[i] if axes[1] == 0 else ws)
                        for i in range(3)])
        close(got, np.array(exp))
    # batch axes elsewhere
    got = mx.vmap(f, in_axes=(2, 1))(mx.moveaxis(x, 0, 2), mx.moveaxis(w, 0, 1))
    close(got, np.array(mx.stack([f(x[i], w[i]) for i in range(3)])))


@cmlx_only  # MLX cannot vmap the weight gradient's ops
@pytest.mark.parametrize("axes", [(0, 0), (0, None), (None, 0)])
def test_vmap_of_grad(axes):
    x = mx.array(randn(3, 2, 6, 5, 4))
    w = mx.array(randn(3, 5, 3, 2, 4))

    def gw(a, b):
        return mx.grad(lambda b: (mx.conv2d(a, b, stride=(2, 1)) ** 2).sum())(b)

    xs = x if axes[0] == 0 else x[0]
    ws = w if axes[1] == 0 else w[0]
    got = mx.vmap(gw, in_axes=axes)(xs, ws)
    exp = mx.stack([gw(xs[i] if axes[0] == 0 else xs, ws[i] if axes[1] == 0 else ws)
                    for i in range(3)])
    close(got, np.array(exp), 1e-4)


# ------------------------------------------------------------ MLX's torch-based parameter sets


def _torch_sets():
    sets = []
    for N, C, O in ((1, 1, 1), (1, 6, 1), (1, 1, 6), (4, 32, 64)):
        for iH, kH, stride, padding in ((1, 1, 1, 0), (3, 3, 1, 0), (31, 5, 5, 2)):
            sets.append((1, N, C, O, iH, kH, stride, padding, 1, 1))
    for iH, kH, stride, padding in ((1, 1, 1, 0), (3, 3, 1, 0), (31, 5, 5, 2)):
        for g in (1, 2, 4, 8, 16, 32):
            sets.append((1, 4, 32, 64, iH, kH, stride, padding, 1, g))
    for N, C, O in ((1, 1, 1), (1, 6, 1), (4, 32, 64)):
        for (iH, kH, stride, padding, dil) in ((1, 1, 1, 0, 1), (3, 3, 1, 0, 1), (31, 5, 5, 2, 1),
                                               (31, 5, 5, 2, 3), (16, 3, 2, 1, 2)):
            sets.append((2, N, C, O, iH, kH, stride, padding, dil, 1))
            if len(sets) % 3 == 0:
                sets.append((3, N, C, O, min(iH, 9), kH, stride, padding, 1, 1))
    return sets


@needs_oracle
@pytest.mark.parametrize("d,N,C,O,iH,kH,stride,padding,dil,groups", _torch_sets())
def test_torch_parameter_sets(d, N, C, O, iH, kH, stride, padding, dil, groups):
    if kH > iH + 2 * padding:
        pytest.skip("kernel larger than the padded input")
    x = RNG.normal(0, 1.0 / C, (N,) + (iH,) * d + (C,)).astype(np.float32)
    w = RNG.normal(0, 1.0 / C, (O,) + (kH,) * d + (C // groups,)).astype(np.float32)
    fn = f"conv{d}d"
    outs = []
    for m in (mx, mlx_ref):
        a, b = m.array(x), m.array(w)
        f = getattr(m, fn)
        y = f(a, b, stride=stride, padding=padding, dilation=dil, groups=groups)
        ct = m.array(np.ones(y.shape, np.float32) * 0.5)
        _, g = m.vjp(lambda a, b: f(a, b, stride=stride, padding=padding, dilation=dil,
                                    groups=groups), [a, b], [ct])
        outs.append([np.array(v) for v in (y, g[0], g[1])])
        # transposed convolution of the same shapes (groups == 1 as MLX's tests)
        if groups == 1 and d < 3:
            t = getattr(m, f"conv_transpose{d}d")(a, b, stride=stride, padding=padding,
                                                  dilation=dil)
            outs[-1].append(np.array(t))
    for ours, ref in zip(*outs):
        close(ours, ref, 1e-4)
