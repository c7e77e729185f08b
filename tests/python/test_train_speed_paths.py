"""The graph shapes the training-step speed work introduced must give the
same values and gradients as before: matmul/addmm of a batched a against a
matrix b fold a's batch axes into the rows of one product (MLX's fold), so
the weight gradient is one GEMM rather than a batch of products summed.
Values against NumPy (float64), gradients against finite differences and
real MLX where it is installed."""

import numpy as np
import pytest

from conftest import mlx_ref, mx


def rand(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def close(got, want, tol=1e-4):
    if hasattr(got, "astype") and got.dtype != mx.float64:
        got = got.astype(mx.float32)
    got = np.array(got, dtype=np.float64)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def layouts(a):
    """a itself, a transposed copy viewed back, and a strided slice of a
    bigger array, all holding a's values."""
    yield "contiguous", mx.array(a)
    t = mx.array(np.ascontiguousarray(np.swapaxes(a, -1, -2)))
    yield "transposed", mx.swapaxes(t, -1, -2)
    big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), np.float32)
    big[..., ::2] = a
    yield "strided", mx.array(big)[..., ::2]


FOLD_SHAPES = [
    ((4, 5, 3), (3, 6)),
    ((2, 3, 4, 5), (5, 2)),
    ((2, 3, 4), (4,)),  # 1-D b: the column axis is dropped
    ((0, 3, 4), (4, 5)),  # empty batch
    ((2, 0, 4), (4, 5)),  # empty rows
    ((1, 1, 1), (1, 1)),
    ((3, 2, 0), (0, 4)),  # K == 0: zeros
]


@pytest.mark.parametrize("sa,sb", FOLD_SHAPES)
def test_matmul_batched_a_matrix_b_values(sa, sb):
    a, b = rand(sa, 1), rand(sb, 2)
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    for name, xa in layouts(a):
        got = mx.matmul(xa, mx.array(b))
        assert got.shape == want.shape, name
        close(got, want)


@pytest.mark.parametrize("sa,sb", FOLD_SHAPES)
def test_addmm_batched_a_matrix_b_values(sa, sb):
    a, b = rand(sa, 1), rand(sb, 2)
    n = sb[-1] if len(sb) == 2 else 1
    for c in (rand((n,), 3), rand((), 4)):
        c_b = c if len(sb) == 2 else c.reshape(())
        want = 0.5 * np.matmul(a.astype(np.float64), b.astype(np.float64)) + 2.0 * c_b
        for name, xa in layouts(a):
            got = mx.addmm(mx.array(c_b), xa, mx.array(b), alpha=0.5, beta=2.0)
            assert got.shape == want.shape, name
            close(got, want)


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_fold_half_types_match_mlx(dt):
    a, b, c = rand((3, 4, 8), 1), rand((8, 5), 2), rand((5,), 3)
    d = getattr(mx, dt)
    got = mx.matmul(mx.array(a).astype(d), mx.array(b).astype(d))
    got2 = mx.addmm(mx.array(c).astype(d), mx.array(a).astype(d), mx.array(b).astype(d))
    assert got.dtype == d and got2.dtype == d
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    close(got, want, tol=5e-2)
    close(got2, want + c, tol=5e-2)
    if mlx_ref is not None:
        r = mlx_ref
        rd = getattr(r, dt)
        ref = r.matmul(r.array(a).astype(rd), r.array(b).astype(rd))
        ref2 = r.addmm(r.array(c).astype(rd), r.array(a).astype(rd), r.array(b).astype(rd))
        np.testing.assert_array_equal(np.array(got.astype(mx.float32)),
                                      np.array(ref.astype(r.float32)))
        np.testing.assert_array_equal(np.array(got2.astype(mx.float32)),
                                      np.array(ref2.astype(r.float32)))


def finite_diff(f, x, eps=1e-3):
    g = np.zeros_like(x, dtype=np.float64)
    it = np.nditer(x, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (f(xp) - f(xm)) / (2 * eps)
    return g


def test_fold_grads_against_finite_differences_and_mlx():
    a, w, c = rand((2, 3, 4), 1), rand((4, 5), 2), rand((5,), 3)
    t = rand((2, 3, 5), 4)

    def loss_np(a_, w_, c_):
        y = np.matmul(a_.astype(np.float64), w_) + c_
        return float(np.sum(np.sin(y) * t))

    def loss(fw, a_, w_, c_):
        return fw.sum(fw.sin(fw.addmm(c_, a_, w_)) * fw.array(t)) + fw.sum(
            fw.matmul(a_, w_) * fw.array(t))

    def loss_np_full(a_, w_, c_):
        return loss_np(a_, w_, c_) + float(np.sum(np.matmul(a_.astype(np.float64), w_) * t))

    grads = mx.grad(lambda *xs: loss(mx, *xs), argnums=(0, 1, 2))(
        mx.array(a), mx.array(w), mx.array(c))
    fd = [finite_diff(lambda v: loss_np_full(v, w, c), a),
          finite_diff(lambda v: loss_np_full(a, v, c), w),
          finite_diff(lambda v: loss_np_full(a, w, v), c)]
    for g, want in zip(grads, fd):
        close(g, want, tol=2e-2)
    if mlx_ref is not None:
        r = mlx_ref
        ref = r.grad(lambda *xs: loss(r, *xs), argnums=(0, 1, 2))(
            r.array(a), r.array(w), r.array(c))
        for g, want in zip(grads, ref):
            np.testing.assert_allclose(np.array(g), np.array(want), rtol=1e-5, atol=1e-5)


def test_fold_bad_input():
    with pytest.raises(ValueError):
        mx.matmul(mx.zeros((2, 3, 4)), mx.zeros((5, 6)))
    with pytest.raises(ValueError):
        mx.addmm(mx.zeros((7,)), mx.zeros((2, 3, 4)), mx.zeros((4, 6)))
    with pytest.raises(ValueError):
        mx.matmul(mx.zeros((2, 3, 4), dtype=mx.int32), mx.zeros((4, 6), dtype=mx.int32))


# ---- power with one exponent 2 or 1: computed as x * x and x * 1


def special_floats(n=4096, seed=5):
    x = rand((n,), seed) * 100
    x[:7] = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-30, 3e38]
    return x


@pytest.mark.parametrize("e", [2.0, 1.0, 3.0, 0.5])
def test_power_scalar_exponent_float32_and_float64(e):
    x = special_floats()
    with np.errstate(all="ignore"):
        want32 = (x.astype(np.float64) ** e).astype(np.float32)
        want64 = x.astype(np.float64) ** e
    got = np.array(mx.array(x) ** e)
    if e in (2.0, 1.0):  # x * x is the correctly rounded square
        np.testing.assert_array_equal(got, want32)
        assert np.signbit(got[3]) == np.signbit(want32[3])  # (-0) ** 2 is +0, (-0) ** 1 is -0
    else:  # C's pow(-inf, 0.5) is inf where NumPy's is NaN: compare the rest
        np.testing.assert_allclose(got[3:], want32[3:], rtol=2e-7, equal_nan=True)
    got64 = np.array(mx.power(mx.array(x.astype(np.float64)), mx.array(e, dtype=mx.float64)))
    np.testing.assert_allclose(got64[3:], want64[3:], rtol=1e-15, equal_nan=True)


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
@pytest.mark.parametrize("e", [2.0, 1.0])
def test_power_scalar_exponent_half_types_match_mlx(dt, e):
    x = special_floats(seed=6) / 100
    got = mx.array(x).astype(getattr(mx, dt)) ** e
    assert got.dtype == getattr(mx, dt)
    xh = np.array(mx.array(x).astype(getattr(mx, dt)).astype(mx.float32)).astype(np.float64)
    want = (xh ** e).astype(np.float32)
    np.testing.assert_allclose(np.array(got.astype(mx.float32)), want, rtol=1e-2, atol=1e-6,
                               equal_nan=True)
    if mlx_ref is not None:
        r = mlx_ref
        ref = r.array(x).astype(getattr(r, dt)) ** e
        np.testing.assert_array_equal(np.array(got.astype(mx.float32)),
                                      np.array(ref.astype(r.float32)))


def test_power_exponent_layouts_and_non_scalar():
    x = rand((6, 5), 7)
    base = mx.array(x)
    # transposed, sliced and broadcast bases with a broadcast exponent
    for b, xb in ((base.T, x.T), (base[::2, 1:], x[::2, 1:]), (mx.broadcast_to(base[:1], (6, 5)),
                                                               np.broadcast_to(x[:1], (6, 5)))):
        np.testing.assert_array_equal(np.array(b ** 2), xb * xb)
        np.testing.assert_array_equal(np.array(mx.power(b, mx.array([[1.0]]))), xb)
    # an exponent array that is not one value takes the general pow
    e = np.array([2.0, 1.0, 2.0, 3.0, 0.0], np.float32)
    np.testing.assert_allclose(np.array(base ** mx.array(e)), x ** e, rtol=1e-6)
    # integer powers are unchanged
    i = mx.array(np.arange(-4, 5, dtype=np.int32))
    assert (i ** 2).tolist() == [16, 9, 4, 1, 0, 1, 4, 9, 16]
    assert (i ** 2).dtype == mx.int32
    # empty and 0-d
    assert (mx.zeros((0, 3)) ** 2).shape == (0, 3)
    assert (mx.array(3.0) ** 2).item() == 9.0


def test_power_square_gradient():
    x = rand((3, 4), 8)
    g = mx.grad(lambda a: mx.sum(a ** 2))(mx.array(x))
    np.testing.assert_allclose(np.array(g), 2 * x, rtol=1e-6)
    gg = mx.grad(lambda a: mx.sum(mx.grad(lambda b: mx.sum(b ** 3))(a)))(mx.array(x))
    np.testing.assert_allclose(np.array(gg), 6 * x, rtol=1e-5)


# ---- convolutions with one input channel per group (the direct loop)


def conv_ref(x, w, stride=1, padding=0, groups=1):
    """NHWC x, (O, kh, kw, C/groups) w, in float64."""
    x = np.pad(x.astype(np.float64), ((0, 0), (padding, padding), (padding, padding), (0, 0)))
    N, H, W, C = x.shape
    O, kh, kw, cg = w.shape
    og = O // groups
    Ho, Wo = (H - kh) // stride + 1, (W - kw) // stride + 1
    out = np.zeros((N, Ho, Wo, O))
    for g in range(groups):
        xs = x[..., g * cg:(g + 1) * cg]
        ws = w[g * og:(g + 1) * og].astype(np.float64)
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, i:i + stride * Ho:stride, j:j + stride * Wo:stride, :]
                out[..., g * og:(g + 1) * og] += patch @ ws[:, i, j, :].T
    return out


DIRECT_CASES = [  # (N, H, C, O, k, stride, padding, groups)
    (4, 8, 1, 32, 3, 1, 1, 1),  # the demo CNN's first layer
    (2, 5, 1, 7, 3, 1, 1, 1),  # O not a multiple of the vector width
    (2, 7, 1, 48, 3, 2, 1, 1),  # three register blocks of 16 outputs, strided
    (1, 4, 1, 16, 5, 1, 2, 1),  # most taps in the padding
    (2, 6, 6, 6, 3, 2, 1, 6),  # depthwise
    (2, 6, 5, 15, 3, 1, 0, 5),  # three outputs per input channel
    (1, 1, 1, 3, 1, 1, 0, 1),  # one pixel
    (3, 7, 9, 9, 5, 1, 2, 9),  # depthwise, width not a multiple of 4
]


@pytest.mark.parametrize("case", DIRECT_CASES)
def test_direct_conv_values(case):
    N, H, C, O, k, s, p, g = case
    x, w = rand((N, H, H, C), 1), rand((O, k, k, C // g), 2)
    want = conv_ref(x, w, s, p, g)
    got = mx.conv2d(mx.array(x), mx.array(w), stride=s, padding=p, groups=g)
    close(got, want, tol=1e-4)
    # a transposed (non-contiguous) input gives the same
    xt = mx.swapaxes(mx.array(np.ascontiguousarray(np.swapaxes(x, 1, 2))), 1, 2)
    close(mx.conv2d(xt, mx.array(w), stride=s, padding=p, groups=g), want, tol=1e-4)
    x64, w64 = mx.array(x).astype(mx.float64), mx.array(w).astype(mx.float64)
    got64 = mx.conv2d(x64, w64, stride=s, padding=p, groups=g, stream=mx.cpu)
    assert got64.dtype == mx.float64
    close(got64, want, tol=1e-10)
    if mlx_ref is not None:
        r = mlx_ref
        ref = r.conv2d(r.array(x), r.array(w), stride=s, padding=p, groups=g)
        np.testing.assert_allclose(np.array(got), np.array(ref), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_direct_conv_half_types(dt):
    x, w = rand((2, 6, 6, 1), 3), rand((16, 3, 3, 1), 4)
    d = getattr(mx, dt)
    got = mx.conv2d(mx.array(x).astype(d), mx.array(w).astype(d), padding=1)
    assert got.dtype == d
    close(got, conv_ref(x, w, 1, 1), tol=5e-2)
    if mlx_ref is not None:
        r = mlx_ref
        rd = getattr(r, dt)
        ref = r.conv2d(r.array(x).astype(rd), r.array(w).astype(rd), padding=1)
        np.testing.assert_allclose(np.array(got.astype(mx.float32)),
                                   np.array(ref.astype(r.float32)), rtol=1e-2, atol=1e-2)


def test_direct_conv_grads_match_mlx():
    x, w = rand((2, 6, 6, 1), 5), rand((9, 3, 3, 1), 6)

    def loss(fw, a, b):
        return fw.sum(fw.sin(fw.conv2d(a, b, padding=1)))

    gx, gw = mx.grad(lambda a, b: loss(mx, a, b), argnums=(0, 1))(mx.array(x), mx.array(w))
    eps = 1e-3
    for got, arr, idx in ((gx, x, (1, 2, 3, 0)), (gw, w, (4, 1, 2, 0))):
        xp, xm = arr.copy(), arr.copy()
        xp[idx] += eps
        xm[idx] -= eps
        args_p = (xp, w) if arr is x else (x, xp)
        args_m = (xm, w) if arr is x else (x, xm)
        fd = (np.sum(np.sin(conv_ref(*args_p, 1, 1))) - np.sum(np.sin(conv_ref(*args_m, 1, 1))))
        np.testing.assert_allclose(np.array(got)[idx], fd / (2 * eps), rtol=1e-2, atol=1e-3)
    if mlx_ref is not None:
        r = mlx_ref
        rx, rw = r.grad(lambda a, b: loss(r, a, b), argnums=(0, 1))(r.array(x), r.array(w))
        np.testing.assert_allclose(np.array(gx), np.array(rx), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(np.array(gw), np.array(rw), rtol=1e-4, atol=1e-5)


def test_direct_conv_empty_batch():
    got = mx.conv2d(mx.zeros((0, 5, 5, 1)), mx.zeros((4, 3, 3, 1)))
    assert got.shape == (0, 3, 3, 4)


def weight_grad_ref(x, ct, wshape, stride, padding, groups):
    """dW of sum(conv(x, w) * ct), by linearity: conv_ref of unit weights."""
    O, kh, kw, cg = wshape
    x = np.pad(x.astype(np.float64), ((0, 0), (padding, padding), (padding, padding), (0, 0)))
    og = O // groups
    Ho, Wo = ct.shape[1:3]
    dw = np.zeros(wshape)
    for o in range(O):
        g = o // og
        for i in range(kh):
            for j in range(kw):
                patch = x[:, i:i + stride * Ho:stride, j:j + stride * Wo:stride,
                          g * cg:(g + 1) * cg]
                dw[o, i, j, :] = np.einsum("nhwc,nhw->c", patch, ct[..., o].astype(np.float64))
    return dw


WGRAD_CASES = [  # (N, H, C, O, k, stride, padding, groups): many blocks of rows
    (3, 20, 8, 8, 3, 1, 1, 8),  # depthwise, 1200 rows
    (2, 17, 4, 8, 3, 2, 1, 4),  # two outputs per channel, strided
    (4, 9, 1, 13, 3, 1, 1, 1),  # one input channel
    (1, 6, 3, 3, 5, 1, 0, 3),
]


@pytest.mark.parametrize("case", WGRAD_CASES)
def test_direct_weight_grad(case):
    N, H, C, O, k, s, p, g = case
    x, w = rand((N, H, H, C), 11), rand((O, k, k, C // g), 12)
    y = mx.conv2d(mx.array(x), mx.array(w), stride=s, padding=p, groups=g)
    ct = rand(y.shape, 13)
    want = weight_grad_ref(x, ct, w.shape, s, p, g)

    def f(fw, b, xx=None):
        return fw.conv2d(fw.array(x) if xx is None else xx, b, stride=s, padding=p, groups=g)

    got = mx.vjp(lambda b: f(mx, b), [mx.array(w)], [mx.array(ct)])[1][0]
    close(got, want, tol=1e-3)
    x64, w64, c64 = (mx.array(a).astype(mx.float64) for a in (x, w, ct))
    got64 = mx.vjp(lambda b: f(mx, b, x64), [w64], [c64])[1][0]
    assert got64.dtype == mx.float64
    close(got64, want, tol=1e-9)
    got16 = mx.vjp(lambda b: f(mx, b, mx.array(x).astype(mx.bfloat16)),
                   [mx.array(w).astype(mx.bfloat16)], [mx.array(ct).astype(mx.bfloat16)])[1][0]
    assert got16.dtype == mx.bfloat16
    close(got16, want, tol=0.3)
    if mlx_ref is not None:
        r = mlx_ref
        ref = r.vjp(lambda b: f(r, b), [r.array(w)], [r.array(ct)])[1][0]
        np.testing.assert_allclose(np.array(got), np.array(ref), rtol=1e-4, atol=1e-4)


def test_direct_weight_grad_same_bits_for_any_thread_count():
    import subprocess
    import sys
    code = ("import numpy as np, {m} as mx\n"
            "x = mx.array(np.random.default_rng(0).standard_normal((4, 40, 40, 16)).astype("
            "np.float32))\n"
            "w = mx.ones((16, 3, 3, 1))\n"
            "ct = mx.array(np.random.default_rng(1).standard_normal((4, 40, 40, 16)).astype("
            "np.float32))\n"
            "g = mx.vjp(lambda b: mx.conv2d(x, b, padding=1, groups=16), [w], [ct])[1][0]\n"
            "print(np.array(g).tobytes().hex())\n").format(m=mx.__name__)
    outs = []
    for n in ("1", "2", "3"):
        env = dict(__import__("os").environ, CMLX_NUM_THREADS=n)
        res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=120)
        assert res.returncode == 0, res.stderr
        outs.append(res.stdout)
    assert outs[0] == outs[1] == outs[2]


@pytest.mark.parametrize("dt", ["float32", "float16", "bfloat16", "float64"])
def test_power_exponent_array_of_equal_values(dt):
    """An exponent array that holds 2 (or 1) everywhere takes the multiply;
    one that differs anywhere, even in its last element or in a tail shorter
    than the scan's block, takes pow."""
    d = getattr(mx, dt)
    x = rand((7, 301), 9)
    base = mx.array(x).astype(d)
    xr = np.array(base.astype(mx.float32)).astype(np.float64)
    for e in (2.0, 1.0):
        full = mx.full((7, 301), e).astype(d)
        got = np.array(mx.power(base, full).astype(mx.float32))
        want = np.array(mx.array((xr ** e).astype(np.float32)).astype(d).astype(mx.float32))
        np.testing.assert_array_equal(got, want)
        for k in (0, 7 * 301 - 1, 7 * 301 - 3, 130):
            ev = np.full(7 * 301, e, np.float32)
            ev[k] = 3.0
            got = np.array(mx.power(base, mx.array(ev.reshape(7, 301)).astype(d)).astype(mx.float32))
            wv = xr.reshape(-1) ** ev.astype(np.float64)
            np.testing.assert_allclose(got.reshape(-1), wv, rtol=2e-2 if dt in ("float16", "bfloat16")
                                       else 1e-6)
    # a transposed exponent of equal values
    full_t = mx.full((301, 7), 2.0).astype(d).T
    np.testing.assert_allclose(np.array(mx.power(base, full_t).astype(mx.float32)), xr ** 2,
                               rtol=2e-2)
