"""mx.fft and mx.hadamard_transform.

Values against NumPy's pocketfft (in complex128, so the tolerances are
float32's) across lengths that take every path of the engine (kissfft's
radices 2-5, its generic radix for 7, 11, 13, Bluestein for large prime
factors, the even real transform and the odd one), sizes cropped and
padded, axes, norms and layouts (transposed, sliced, broadcast); dtypes
and errors against real MLX where importable; gradients against the
explicit DFT matrix and against MLX; jvp and vmap against the direct
computation.  Hadamard against kron(H_m, H_2^k) built here, bit for bit
with MLX for the half types.
"""

import itertools

import numpy as np
import pytest

from conftest import SUBJECT_IS_MLX, cmlx_only, mlx_ref, mx, needs_oracle

F = mx.fft
RNG = np.random.default_rng(7)


def cplx(*shape):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(np.complex64)


def real(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def close(got, want, tol=2e-5):
    """float32 accuracy relative to the size of the result."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(1.0, float(np.abs(want).max(initial=0)))
    err = float(np.abs(got.astype(np.complex128) - want).max(initial=0))
    assert err <= tol * scale * max(1.0, np.log2(max(want.size, 2))), (err, scale)


LENGTHS = [1, 2, 3, 4, 5, 6, 7, 8, 11, 13, 16, 17, 31, 47, 64, 97, 100, 128, 243, 1153,
           1259 * 11, 4004, 10007]


# ---------------------------------------------------------------- 1-d values

@pytest.mark.parametrize("n", LENGTHS)
def test_one_axis_lengths(n):
    batch = 3 if n < 5000 else 1
    x = cplx(batch, n)
    r = x.real.copy()
    close(F.fft(mx.array(x)), np.fft.fft(x))
    close(F.ifft(mx.array(x)), np.fft.ifft(x))
    close(F.rfft(mx.array(r)), np.fft.rfft(r))
    h = np.fft.rfft(r).astype(np.complex64)
    close(F.irfft(mx.array(h), n=n), np.fft.irfft(h, n=n))
    assert F.fft(mx.array(x)).dtype == mx.complex64
    assert F.irfft(mx.array(h), n=n).dtype == mx.float32


@pytest.mark.parametrize("op", ["fft", "ifft", "rfft", "irfft"])
@pytest.mark.parametrize("n", [1, 7, 40, 64, 77, 150])
def test_crop_and_pad(op, n):
    x = cplx(4, 64) if op != "rfft" else real(4, 64)
    close(getattr(F, op)(mx.array(x), n=n), getattr(np.fft, op)(x, n=n))
    close(getattr(F, op)(mx.array(x), n=n, axis=0), getattr(np.fft, op)(x, n=n, axis=0))


def test_irfft_default_length_and_ignored_imaginary_parts():
    h = cplx(5)  # DC and (n = 8) Nyquist bins carry imaginary parts
    out = F.irfft(mx.array(h))
    assert out.shape == (8,)
    close(out, np.fft.irfft(h))  # NumPy ignores them too
    close(F.irfft(mx.array(h), n=9), np.fft.irfft(h, n=9))


@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_norms(norm):
    x = cplx(6, 10)
    for op in ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn"]:
        close(getattr(F, op)(mx.array(x), norm=norm), getattr(np.fft, op)(x, norm=norm))
    r = x.real.copy()
    for op in ["rfft", "rfft2", "rfftn"]:
        close(getattr(F, op)(mx.array(r), norm=norm), getattr(np.fft, op)(r, norm=norm))
    for op in ["irfft", "irfft2", "irfftn"]:
        close(getattr(F, op)(mx.array(x), norm=norm), getattr(np.fft, op)(x, norm=norm))


def test_big_power_of_two_and_threaded_batches():
    x = cplx(1 << 18)
    close(F.fft(mx.array(x)), np.fft.fft(x), tol=1e-5)
    r = x.real.copy()
    close(F.rfft(mx.array(r)), np.fft.rfft(r), tol=1e-5)
    y = cplx(300, 256)  # many lines: the pool splits them
    close(F.fft(mx.array(y), axis=0), np.fft.fft(y, axis=0))
    close(F.fft(mx.array(y)), np.fft.fft(y))


# mixed radix in lanes (fft_mixed_impl.h): radices 4, 2, 3, 5 and the
# generic butterfly of the primes 7, 11, 13, alone and mixed
MIXED = [3, 5, 6, 7, 9, 12, 15, 25, 27, 45, 49, 60, 81, 100, 121, 169, 243, 1000, 1536,
         3000, 2 * 3 * 5 * 7 * 11, 13 * 12, 2940, 3 ** 9, 5 ** 6]


POW2_AND_BLUESTEIN = [4, 8, 16, 32, 256, 1024, 8192, 16384, 32768, 97, 1153, 4099, 2 * 97]


@pytest.mark.parametrize("n", POW2_AND_BLUESTEIN + MIXED)
@pytest.mark.parametrize("batch", [4, 9, 17])
def test_batched_lanes(n, batch):
    """Power-of-two and mixed-radix lines in batches run 8 at a time
    (fft_lanes.c), partial groups included; real lines as half-length
    complex ones; Bluestein lengths convolve in lanes."""
    x = cplx(batch, n)
    r = x.real.copy()
    for axis, xs, rs in [(-1, x, r), (0, x.T.copy(), r.T.copy())]:
        a, ar = mx.array(xs), mx.array(rs)
        close(F.fft(a, axis=axis), np.fft.fft(xs, axis=axis))
        close(F.ifft(a, axis=axis), np.fft.ifft(xs, axis=axis))
        close(F.rfft(ar, axis=axis), np.fft.rfft(rs, axis=axis))
        h = np.fft.rfft(rs, axis=axis).astype(np.complex64)
        close(F.irfft(mx.array(h), n=n, axis=axis), np.fft.irfft(h, n=n, axis=axis))
    close(F.fft(mx.array(x)[::2]), np.fft.fft(x[::2]))
    close(F.rfft(mx.array(np.repeat(r, 2, axis=1))[:, ::2]), np.fft.rfft(r))


@pytest.mark.parametrize("n", [5 ** 7, 3 ** 11, 2 ** 4 * 3 ** 4 * 5 ** 2 * 2, 7 ** 5, 3 * 7 ** 5, 2 ** 14 * 3])
def test_long_mixed_lines(n):
    """Long single lines split in four steps whose passes run in lanes."""
    x = cplx(1, n)[0]
    close(F.fft(mx.array(x)), np.fft.fft(x))
    close(F.ifft(mx.array(x)), np.fft.ifft(x))


@cmlx_only
def test_portable_lanes_agree():
    """CMLX_FFT_SIMD=0 forces the portable lanes loops: same results."""
    import os
    import subprocess
    import sys
    code = ("import numpy as np, cmlx.core as mx\n"
            "x = (np.arange(9 * 512) % 7 - 3.0).reshape(9, 512).astype(np.complex64) * (1 + 2j)\n"
            "r = np.asarray(mx.fft.fft(mx.array(x)))\n"
            "h = np.asarray(mx.fft.irfft(mx.array(x)))\n"
            "assert np.abs(r - np.fft.fft(x)).max() < 1e-2, 'fft'\n"
            "assert np.abs(h - np.fft.irfft(x)).max() < 1e-4, 'irfft'\n"
            "for n in (3000, 2 * 3 * 5 * 7 * 11, 13 * 9):\n"
            "    y = (np.arange(9 * n) % 11 - 5.0).reshape(9, n).astype(np.complex64) * (1 - 1j)\n"
            "    d = np.abs(np.asarray(mx.fft.fft(mx.array(y))) - np.fft.fft(y)).max()\n"
            "    assert d < 1e-3 * np.abs(np.fft.fft(y)).max(), n\n")
    env = dict(os.environ, CMLX_FFT_SIMD="0")
    subprocess.run([sys.executable, "-c", code], env=env, check=True)


# ---------------------------------------------------------------- n-d values

AXES = [None, (0,), (2,), (1, 2), (2, 1), (0, 2), (-1, -3), (0, 1, 2)]


@pytest.mark.parametrize("op", ["fftn", "ifftn", "rfftn", "irfftn"])
@pytest.mark.parametrize("axes", AXES)
def test_nd(op, axes):
    x = cplx(6, 5, 8)
    if op == "rfftn":
        x = x.real.copy()
    close(getattr(F, op)(mx.array(x), axes=axes), getattr(np.fft, op)(x, axes=axes))
    if axes is not None:
        s = [4 + i for i in range(len(axes))]
        close(getattr(F, op)(mx.array(x), s=s, axes=axes),
              getattr(np.fft, op)(x, s=s, axes=axes))


@pytest.mark.parametrize("op", ["fft2", "ifft2", "rfft2", "irfft2"])
def test_2d_defaults(op):
    x = cplx(3, 6, 7)
    if op == "rfft2":
        x = x.real.copy()
    f, g = getattr(F, op), getattr(np.fft, op)
    close(f(mx.array(x)), g(x))
    close(f(mx.array(x), s=(5, 9)), g(x, s=(5, 9)))
    close(f(mx.array(x), axes=(0, 2)), g(x, axes=(0, 2)))
    close(f(mx.array(x), axes=None), getattr(np.fft, op[:-1] + "n")(x))


def test_empty_axes_return_the_input():
    a = mx.array([[1, 2], [3, 4]])
    for op in ["fft2", "fftn", "irfftn"]:
        r = getattr(F, op)(a, axes=[])
        assert r.dtype == mx.int32 and r.tolist() == [[1, 2], [3, 4]]


def test_empty_arrays():
    z = F.fft(mx.zeros((0, 4)))
    assert z.shape == (0, 4) and z.dtype == mx.complex64
    assert F.rfft(mx.zeros((3, 0, 4))).shape == (3, 0, 3)
    assert F.irfft(mx.zeros((0, 5), mx.complex64)).shape == (0, 8)


# ---------------------------------------------------------------- layouts

@pytest.mark.parametrize("layout", ["transposed", "sliced", "broadcast", "reversed"])
@pytest.mark.parametrize("op", ["fft", "rfft", "irfft", "fft2", "rfftn", "irfftn"])
def test_layouts(layout, op):
    base = cplx(12, 10) if op not in ("rfft", "rfftn") else real(12, 10)
    a = mx.array(base)
    if layout == "transposed":
        a, x = a.T, base.T
    elif layout == "sliced":
        a, x = a[1::2, ::3], base[1::2, ::3]
    elif layout == "reversed":
        a, x = a[::-1, ::-2], base[::-1, ::-2]
    else:
        a = mx.broadcast_to(a[:, :1], (12, 10))
        x = np.broadcast_to(base[:, :1], (12, 10))
    close(getattr(F, op)(a), getattr(np.fft, op)(x))
    if op in ("fft", "rfft"):
        close(getattr(F, op)(a, axis=0), getattr(np.fft, op)(x, axis=0))


# ---------------------------------------------------------------- dtypes

DTYPE_NAMES = ["bool_", "uint8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
               "float64", "complex64"]


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_dtypes(name):
    x = np.arange(1, 9).reshape(2, 4) % 3
    a = mx.array(x).astype(getattr(mx, name))
    xs = np.asarray(a.astype(mx.complex64))
    assert F.fft(a).dtype == mx.complex64
    close(F.fft(a), np.fft.fft(xs))
    assert F.rfft(a).dtype == mx.complex64
    close(F.rfft(a), np.fft.rfft(xs.real))  # complex input: its real part
    assert F.irfft(a).dtype == mx.float32
    close(F.irfft(a), np.fft.irfft(xs))
    if mlx_ref is not None:
        b = mlx_ref.array(x).astype(getattr(mlx_ref, name))
        for op in ["fft", "rfft", "irfft", "fft2", "rfftn"]:
            assert str(getattr(F, op)(a).dtype).split(".")[-1] == \
                str(getattr(mlx_ref.fft, op)(b).dtype).split(".")[-1]
            np.testing.assert_allclose(np.asarray(getattr(F, op)(a)),
                                       np.asarray(getattr(mlx_ref.fft, op)(b)), atol=1e-5)


# ---------------------------------------------------------------- errors

def test_errors():
    with pytest.raises(ValueError, match=r"\[fftn\] Requires array with at least one dimension"):
        F.irfftn(mx.array(3.0))
    with pytest.raises(IndexError):
        F.fft(mx.array(3.0))
    with pytest.raises(IndexError):
        F.fft(mx.zeros(4), axis=1)
    with pytest.raises(ValueError, match=r"\[fft\] Invalid norm. Expected one of "
                                         r"\{'backward', 'ortho', 'forward'\}."):
        F.fft(mx.zeros(4), norm="invalid")
    with pytest.raises(ValueError, match=r"\[rfft2\] Invalid norm"):
        F.rfft2(mx.zeros((4, 4)), norm="Ortho")
    with pytest.raises(TypeError):
        F.fft(mx.zeros(4), norm=None)
    with pytest.raises(TypeError):
        F.fft([1.0, 2.0])
    with pytest.raises(ValueError, match=r"\[fftn\] Invalid FFT output size requested \(0\)"):
        F.fft(mx.zeros(4), n=0)
    with pytest.raises(ValueError, match=r"\[fftn\] Invalid FFT output size requested \(0,4\)"):
        F.fftn(mx.zeros((0, 4)))
    with pytest.raises(ValueError, match=r"Invalid FFT output size requested \(0\)"):
        F.irfft(mx.zeros((4, 1)))
    with pytest.raises(ValueError, match=r"\[fftn\] Duplicated axis received \(0,0\)"):
        F.fftn(mx.zeros((4, 4)), axes=[0, 0])
    with pytest.raises(ValueError, match=r"\[fftn\] Duplicated axis received \(1,-1\)"):
        F.fftn(mx.zeros((4, 4)), s=[2, 2], axes=[1, -1])
    with pytest.raises(IndexError, match=r"\[fftn\] Invalid axis received for array with 2"):
        F.fftn(mx.zeros((4, 4)), s=[2, 2], axes=[0, 2])
    with pytest.raises(IndexError):
        F.fftn(mx.zeros((4, 4)), axes=[0, 2])
    with pytest.raises(ValueError, match=r"\[fftn\] `axes` should not be `None` if `s` is not"):
        F.fftn(mx.zeros((4, 4)), s=[2])
    with pytest.raises(ValueError, match=r"\[ifft2\] `axes` should not be `None` if `s`"):
        F.ifft2(mx.zeros((4, 4)), s=[2, 2], axes=None)
    with pytest.raises(ValueError, match=r"\[fftn\] Shape and axes have different sizes."):
        F.fftn(mx.zeros((4, 4)), s=[2], axes=[0, 1])
    with pytest.raises(IndexError):
        F.fft2(mx.zeros(4))


@needs_oracle
@pytest.mark.parametrize("call", [
    lambda m: m.fft.irfftn(m.array(3.0)),
    lambda m: m.fft.fft(m.array(3.0)),
    lambda m: m.fft.fft(m.zeros(4), axis=1),
    lambda m: m.fft.fft(m.zeros(4), n=-2),
    lambda m: m.fft.fftn(m.zeros((4, 4)), axes=[0, 0]),
    lambda m: m.fft.fftn(m.zeros((4, 4)), s=[2, 2], axes=[0, 5]),
    lambda m: m.fft.rfftn(m.zeros((4, 4)), s=[2], axes=[0, 1]),
    lambda m: m.fft.fft2(m.zeros((4, 4)), s=[2, 2], axes=None),
    lambda m: m.fft.fftfreq(0),
    lambda m: m.fft.rfftfreq(3, d=0.0),
    lambda m: m.fft.ifft(m.zeros(3), norm="x"),
])
def test_errors_match_mlx(call):
    def run(m):
        try:
            m.eval(call(m))
        except Exception as e:  # noqa: BLE001 - the type is what is compared
            return type(e)
        return None
    assert run(mx) is run(mlx_ref) is not None


# ---------------------------------------------------------------- freq / shift

@pytest.mark.parametrize("n,d", [(1, 1.0), (4, 0.5), (5, 0.25), (8, -0.5), (6, 1.0), (101, 3.0)])
def test_freqs(n, d):
    # MLX scales in float32 (k * float32(1 / (n d))): NumPy's double product
    # agrees exactly for these sizes, to an ulp in general
    exact = n != 101
    for name in ["fftfreq", "rfftfreq"]:
        out = getattr(F, name)(n, d=d)
        assert out.dtype == mx.float32
        want = getattr(np.fft, name)(n, d=d).astype(np.float32)
        np.testing.assert_allclose(np.asarray(out), want, rtol=0 if exact else 2e-7, atol=0)
        if mlx_ref is not None:
            np.testing.assert_array_equal(np.asarray(out),
                                          np.asarray(getattr(mlx_ref.fft, name)(n, d)))


def test_freq_errors():
    for f, name in [(F.fftfreq, "fftfreq"), (F.rfftfreq, "rfftfreq")]:
        with pytest.raises(ValueError, match=rf"\[{name}\] `n` must be greater than 0."):
            f(0)
        with pytest.raises(ValueError, match=rf"\[{name}\] `n` must be greater than 0."):
            f(-1)
        with pytest.raises(ValueError, match=rf"\[{name}\] `d` must be non-zero."):
            f(4, d=0.0)


@pytest.mark.parametrize("axes", [None, 0, 1, -1, [0], [1], [0, 1], [-1, 0], []])
@pytest.mark.parametrize("shape", [(5, 7), (4, 6), (1, 3)])
def test_shifts(axes, shape):
    x = cplx(*shape)
    for name in ["fftshift", "ifftshift"]:
        got = getattr(F, name)(mx.array(x), axes=axes)
        np.testing.assert_array_equal(np.asarray(got), getattr(np.fft, name)(x, axes=axes))


def test_shift_edges():
    s = F.fftshift(mx.array(2.0))
    assert s.shape == () and s.item() == 2.0
    e = F.fftshift(mx.array([]))
    assert e.shape == (0,)
    assert F.ifftshift(mx.arange(5)).tolist() == [2, 3, 4, 0, 1]


@cmlx_only
def test_shift_errors():
    # MLX's current ValueError (MLX's suite tests it); MLX 0.32.4 raises IndexError
    with pytest.raises(ValueError, match=r"\[fftshift\] Invalid axis 2 for array with 2"):
        F.fftshift(mx.zeros((4, 4)), axes=[2])
    with pytest.raises(ValueError, match=r"\[ifftshift\] Invalid axis -3 for array with 2"):
        F.ifftshift(mx.zeros((4, 4)), axes=-3)


# ---------------------------------------------------------------- transforms

def dft(n):
    return np.fft.fft(np.eye(n))


@pytest.mark.parametrize("n", [4, 7, 47])
def test_vjp_is_the_adjoint(n):
    x, c = cplx(n), cplx(n)
    # MLX's convention for a linear map y = F x: the cotangent pulls back as conj(F)^T c
    _, (g,) = mx.vjp(lambda a: F.fft(a), [mx.array(x)], [mx.array(c)])
    close(g[0] if isinstance(g, list) else g, np.conj(dft(n)).T @ c)
    _, (g,) = mx.vjp(lambda a: F.ifft(a), [mx.array(x)], [mx.array(c)])
    close(g, np.conj(np.linalg.inv(dft(n))).T @ c)
    r = x.real.copy()
    ch = cplx(n // 2 + 1)
    _, (g,) = mx.vjp(lambda a: F.rfft(a), [mx.array(r)], [mx.array(ch)])
    R = dft(n)[: n // 2 + 1]
    close(g, np.real(np.conj(R).T @ ch))


@needs_oracle
@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
@pytest.mark.parametrize("axes", [(-1,), (-2, -1), (0,), (-1, -2)])
@pytest.mark.parametrize("shape", [(4, 4), (2, 7), (7, 7), (3, 5)])
def test_grad_matches_mlx(name, axes, shape):
    x = real(*shape) if name == "rfftn" else cplx(*shape)

    def grad(m):
        fn = getattr(m.fft, name)
        return np.asarray(m.grad(lambda y: (m.abs(fn(y, axes=axes)) ** 2).sum())(m.array(x)))

    a, b = grad(mx), grad(mlx_ref)
    assert np.abs(a - b).max() <= 1e-4 * (np.abs(b).mean() + 1e-6)


def test_second_derivative():
    x = mx.array(real(8))
    g2 = mx.grad(lambda a: mx.grad(lambda b: (mx.abs(F.rfft(b)) ** 2).sum())(a).sum())(x)
    # sum |rfft x|^2 is a quadratic form: its gradient is linear, the second one constant
    g2b = mx.grad(lambda a: mx.grad(lambda b: (mx.abs(F.rfft(b)) ** 2).sum())(a).sum())(x * 3)
    np.testing.assert_allclose(np.asarray(g2), np.asarray(g2b), atol=1e-4)


def ffts_under_test():
    ops = {(True, True): "irfftn", (True, False): "rfftn", (False, True): "ifftn",
           (False, False): "fftn"}
    for (is_real, inverse), op in ops.items():
        x = real(3, 8, 6) if is_real and not inverse else cplx(3, 8, 6)
        for axes in [(-1,), (0,), (-2, -1), (-1, -2), (0, 1)]:
            yield op, x, axes


@pytest.mark.parametrize("op,x,axes", list(ffts_under_test()))
def test_jvp_and_vmap(op, x, axes):
    f = lambda a: getattr(F, op)(a, axes=axes)  # noqa: E731
    t = (x * 0.5 + 1).astype(x.dtype)
    _, (jt,) = mx.jvp(f, [mx.array(x)], [mx.array(t)])
    close(jt, np.asarray(f(mx.array(t))))
    expected = np.stack([np.asarray(f(mx.array(x[i]))) for i in range(x.shape[0])])
    close(mx.vmap(f)(mx.array(x)), expected)
    moved = np.moveaxis(x, 0, 2)
    close(mx.vmap(f, in_axes=2)(mx.array(moved)), expected)


@cmlx_only
def test_vmap_and_jvp_keep_an_odd_irfft_length():
    x = cplx(3, 4)
    f = lambda a: F.irfft(a, n=7)  # noqa: E731
    out = mx.vmap(f)(mx.array(x))
    assert out.shape == (3, 7)
    close(out, np.fft.irfft(x, n=7))
    _, (jt,) = mx.jvp(f, [mx.array(x[0])], [mx.array(x[1])])
    close(jt, np.fft.irfft(x[1], n=7))


# ---------------------------------------------------------------- signatures

MLX_FFT_NAMES = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2",
                 "irfft2", "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def test_namespace():
    assert set(MLX_FFT_NAMES) <= set(dir(F))
    import importlib
    assert importlib.import_module(mx.__name__ + ".fft") is F


@cmlx_only
@needs_oracle
@pytest.mark.parametrize("name", MLX_FFT_NAMES)
def test_displayed_signatures_are_mlx(name):
    ours = getattr(F, name).__doc__.strip().splitlines()[0]
    assert ours == getattr(mlx_ref.fft, name).__doc__.strip().splitlines()[0]


# ---------------------------------------------------------------- hadamard

def sylvester(n):
    h = np.ones((1, 1))
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return h


H28 = """
+------++----++-+--+-+--++-- -+-----+++-----+-+--+-+--++- --+-----+++---+-+-+----+--++
---+-----+++---+-+-+-+--+--+ ----+-----+++---+-+-+++--+-- -----+-----++++--+-+--++--+-
------++----++-+--+-+--++--+ --++++-+-------++--+++-+--+- ---++++-+-----+-++--+-+-+--+
+---+++--+----++-++--+-+-+-- ++---++---+----++-++--+-+-+- +++---+----+----++-++--+-+-+
++++--------+-+--++-++--+-+- -++++--------+++--++--+--+-+ -+-++-++--++--+--------++++-
+-+-++--+--++--+--------++++ -+-+-++--+--++--+----+---+++ +-+-+-++--+--+---+---++---++
++-+-+-++--+------+--+++---+ -++-+-+-++--+------+-++++--- +-++-+---++--+------+-++++--
-++--++-+-++-+++----++------ +-++--++-+-++-+++-----+----- ++-++---+-+-++-+++-----+----
-++-++-+-+-+-+--+++-----+--- --++-++++-+-+----+++-----+-- +--++-+-++-+-+----+++-----+-
++--++-+-++-+-+----++------+
"""


def h28():
    return np.array([[1.0 if c == "+" else -1.0 for c in row] for row in H28.split()])


def hadamard_matrix(m, k):
    """kron(H_m, H_2^k) for m in (1, 28) (the test's own copy of Sloane's H_28)."""
    assert m in (1, 28)
    return sylvester(2 ** k) if m == 1 else np.kron(h28(), sylvester(2 ** k))


def decompose(n):
    m = n // (n & -n)
    return m, (n // m).bit_length() - 1


@pytest.mark.parametrize("m,k", [(1, 1), (1, 2), (1, 5), (1, 10), (28, 0), (28, 1), (28, 3)])
def test_hadamard_values(m, k):
    n = m * 2 ** k
    x = real(4, n)
    y = mx.hadamard_transform(mx.array(x), scale=0.25)
    np.testing.assert_allclose(np.asarray(y), x @ hadamard_matrix(m, k).T * 0.25, atol=2e-4)
    y = mx.hadamard_transform(mx.array(x))
    np.testing.assert_allclose(np.asarray(y), x @ hadamard_matrix(m, k).T / np.sqrt(n), atol=2e-4)


@pytest.mark.parametrize("m", [12, 20, 28])
def test_hadamard_orders_are_orthogonal(m):
    for n in [m, 4 * m]:
        y = np.asarray(mx.hadamard_transform(mx.eye(n)))  # rows: the scaled matrix
        np.testing.assert_allclose(y @ y.T, np.eye(n), atol=1e-5)


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("n", [8, 12, 40, 56, 512, 28 * 8])
def test_hadamard_half_types(name, n):
    x = real(3, n)
    a = mx.hadamard_transform(mx.array(x).astype(getattr(mx, name)), scale=0.3)
    assert a.dtype == getattr(mx, name)
    m, k = decompose(n)
    if m in (1, 28):
        want = x @ hadamard_matrix(m, k).T * 0.3
        np.testing.assert_allclose(np.asarray(a.astype(mx.float32)), want,
                                   atol=0.05 * np.abs(want).max())
    if mlx_ref is not None:
        b = mlx_ref.hadamard_transform(mlx_ref.array(x).astype(getattr(mlx_ref, name)), scale=0.3)
        np.testing.assert_array_equal(np.asarray(a.astype(mx.float32)),
                                      np.asarray(b.astype(mlx_ref.float32)))


def test_hadamard_dtypes_and_edges():
    assert mx.hadamard_transform(mx.array([1, 2, 3, 4])).dtype == mx.float32
    assert mx.hadamard_transform(mx.array([True, False])).tolist() == \
        pytest.approx([2 ** -0.5, 2 ** -0.5])
    assert mx.hadamard_transform(mx.array(5)).item() == 5
    assert mx.hadamard_transform(mx.array(5)).dtype == mx.int32  # n = 1, scale 1: a itself
    assert mx.hadamard_transform(mx.array(5.0), scale=0.2).item() == pytest.approx(1.0)
    x = mx.random.normal((8, 8, 1))
    assert mx.all(mx.hadamard_transform(x) == x).item()


def test_hadamard_layouts():
    x = real(6, 16)
    for a, xs in [(mx.array(x)[::2], x[::2]), (mx.array(x)[:, ::-1], x[:, ::-1]),
                  (mx.array(x.T.copy()).T, x)]:
        np.testing.assert_allclose(np.asarray(mx.hadamard_transform(a)),
                                   xs @ sylvester(16).T / 4, atol=1e-5)


def test_hadamard_errors():
    with pytest.raises(ValueError, match=r"\[hadamard_transform\] Does not support empty"):
        mx.hadamard_transform(mx.array([]))
    for n in [3, 7, 44]:
        with pytest.raises(ValueError, match=r"Only supports n = m\*2\^k where m in"):
            mx.eval(mx.hadamard_transform(mx.zeros((2, n))))
    with pytest.raises(ValueError, match=r"\[hadamard\] Unsupported type."):
        mx.eval(mx.hadamard_transform(mx.zeros(4, mx.float64)))
    with pytest.raises(TypeError):
        mx.hadamard_transform(np.ones(4))


@cmlx_only
def test_hadamard_refuses_what_mlx_computes_wrongly():
    # 36 = 12 * 3 and 60 = 12 * 5: MLX takes m = 12 and runs its radix-2
    # stages on 3 or 5 points (a wrong result); cmlx refuses them
    for n in [36, 60, 240]:
        with pytest.raises(ValueError, match=r"Only supports n = m\*2\^k where m in"):
            mx.hadamard_transform(mx.zeros((2, n)))


@pytest.mark.parametrize("k", [2, 4, 6])
def test_hadamard_grad_and_vmap(k):
    n = 2 ** k
    h = sylvester(n) / np.sqrt(n)
    x, c = real(n), real(n)
    _, (g,) = mx.vjp(mx.hadamard_transform, [mx.array(x)], [mx.array(c)])
    np.testing.assert_allclose(np.asarray(g), h.T @ c, atol=1e-5)
    _, (t,) = mx.jvp(mx.hadamard_transform, [mx.array(x)], [mx.array(c)])
    np.testing.assert_allclose(np.asarray(t), h @ c, atol=1e-5)
    xb = real(n, n, n)
    for axis in (0, 1, 2):
        f = mx.vmap(mx.vmap(mx.hadamard_transform, 0, 0), axis, axis)
        t = 1 if axis == 2 else 2  # the axis left to the transform
        want = np.moveaxis(np.moveaxis(xb, t, -1) @ h.T, -1, t)
        got = np.asarray(f(mx.array(xb)))
        np.testing.assert_allclose(got, want, atol=1e-4)
        if mlx_ref is not None:
            ref = mlx_ref.vmap(mlx_ref.vmap(mlx_ref.hadamard_transform, 0, 0), axis, axis)
            np.testing.assert_allclose(got, np.asarray(ref(mlx_ref.array(xb))), atol=1e-4)


@cmlx_only
@needs_oracle
def test_hadamard_signature():
    assert mx.hadamard_transform.__doc__.strip().splitlines()[0] == \
        mlx_ref.hadamard_transform.__doc__.strip().splitlines()[0]
