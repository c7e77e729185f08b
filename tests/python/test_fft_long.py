"""Long FFT lines, one to three of them: the lengths that the engine runs
spread over the thread pool rather than line by line (four-step
transforms of powers of two and of smooth lengths, Bluestein's
convolution over split lengths for primes, real lines over their
half-length complex signal or, odd, made complex), in every direction,
against NumPy's pocketfft in complex128.  Relative L2 error is held to
float32's (what the line-at-a-time engine reaches, ~2e-7); layouts that
the long path does not take (a strided even real line) must agree too.
Then batches in lanes: Bluestein lengths, rows at odd offsets.
"""

import numpy as np
import pytest

from conftest import mx

F = mx.fft
RNG = np.random.default_rng(23)

# one of each class, all past the lengths where lines split
POW2 = [1 << 16, 1 << 17, 1 << 20]
SMOOTH = [3 ** 10, 5 ** 7, 2 * 3 ** 10, 1024000, 3 ** 12, 7 * 11 * 13 * 64]
PRIME = [40009, 65537, 999983]
EVEN_OVER_PRIME = [2 * 40009]
# single lines from 1024 points split too (their passes run in lanes)
MEDIUM = [1024, 2048, 4096, 8192, 1536, 3000, 6000, 3 ** 7, 1153, 4099, 10007, 2 * 1153]
ALL = POW2 + SMOOTH + PRIME + EVEN_OVER_PRIME + MEDIUM


def cplx(*shape):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(np.complex64)


def real(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def rel_l2(got, want):
    got = np.asarray(got).astype(np.complex128)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-300))


def check(got, want, tol=1e-6):
    err = rel_l2(got, want)
    assert err < tol, err


@pytest.mark.parametrize("n", ALL)
def test_complex_forward_and_inverse(n):
    x = cplx(n)
    check(F.fft(mx.array(x)), np.fft.fft(x.astype(np.complex128)))
    check(F.ifft(mx.array(x)), np.fft.ifft(x.astype(np.complex128)))


@pytest.mark.parametrize("n", ALL)
def test_real_forward_and_inverse(n):
    r = real(n)
    check(F.rfft(mx.array(r)), np.fft.rfft(r.astype(np.float64)))
    h = np.fft.rfft(r.astype(np.float64)).astype(np.complex64)
    got = F.irfft(mx.array(h), n=n)
    assert got.dtype == mx.float32
    check(got, np.fft.irfft(h.astype(np.complex128), n=n))
    # round trip
    check(F.irfft(F.rfft(mx.array(r)), n=n), r.astype(np.float64))


@pytest.mark.parametrize("n", [1 << 16, 3 ** 10, 40009])
def test_inverse_ignores_imaginary_parts_of_dc_and_nyquist(n):
    h = cplx(n // 2 + 1)
    want = np.fft.irfft(h.astype(np.complex128), n=n)
    check(F.irfft(mx.array(h), n=n), want)


@pytest.mark.parametrize("n", [1 << 16, 3 ** 10, 40009, 2 * 40009])
def test_strided_lines(n):
    r = real(n)
    xa = mx.array(cplx(2 * n))
    check(F.fft(xa[::2]), np.fft.fft(np.array(xa)[::2].astype(np.complex128)))
    ra = mx.array(real(3 * n))
    check(F.rfft(ra[1::3]), np.fft.rfft(np.array(ra)[1::3].astype(np.float64)))
    h = np.fft.rfft(r.astype(np.float64)).astype(np.complex64)
    hb = mx.array(np.repeat(h, 2))[::2]  # a strided half spectrum
    check(F.irfft(hb, n=n), np.fft.irfft(h.astype(np.complex128), n=n))


@pytest.mark.parametrize("n", [1 << 16, 3 ** 10, 40009])
def test_few_lines_along_either_axis(n):
    x = cplx(3, n)
    check(F.fft(mx.array(x), axis=-1), np.fft.fft(x.astype(np.complex128), axis=-1))
    xt = np.ascontiguousarray(x.T)  # (n, 3): lines down the columns
    check(F.fft(mx.array(xt), axis=0), np.fft.fft(xt.astype(np.complex128), axis=0))
    check(F.fft(mx.array(x).T, axis=0), np.fft.fft(x.T.astype(np.complex128), axis=0))
    r = real(2, n)
    check(F.rfft(mx.array(r)), np.fft.rfft(r.astype(np.float64)))
    check(F.rfft(mx.array(r).T, axis=0), np.fft.rfft(r.T.astype(np.float64), axis=0))
    h = np.fft.rfft(r.astype(np.float64)).astype(np.complex64)
    check(F.irfft(mx.array(h), n=n), np.fft.irfft(h.astype(np.complex128), n=n))
    check(F.irfft(mx.array(h).T, n=n, axis=0),
          np.fft.irfft(h.T.astype(np.complex128), n=n, axis=0))


@pytest.mark.parametrize("n", [1 << 17, 3 ** 10 * 2, 999983])
def test_padding_and_cropping(n):
    r = real(n - 1000)
    check(F.rfft(mx.array(r), n=n), np.fft.rfft(r.astype(np.float64), n=n))
    r = real(n + 777)
    check(F.rfft(mx.array(r), n=n), np.fft.rfft(r.astype(np.float64), n=n))
    x = cplx(n - 5)
    check(F.fft(mx.array(x), n=n), np.fft.fft(x.astype(np.complex128), n=n))


def test_two_dimensional_with_a_long_axis():
    x = cplx(2, 1 << 16)
    check(F.fft2(mx.array(x)), np.fft.fft2(x.astype(np.complex128)))
    r = real(3, 3 ** 10)
    check(F.rfft2(mx.array(r)), np.fft.rfft2(r.astype(np.float64)))
    h = np.fft.rfft2(r.astype(np.float64)).astype(np.complex64)
    check(F.irfft2(mx.array(h), s=r.shape), np.fft.irfft2(h.astype(np.complex128), s=r.shape))


def test_norms_on_long_lines():
    n = 1 << 16
    r = real(n)
    for norm in ("backward", "ortho", "forward"):
        check(F.rfft(mx.array(r), norm=norm), np.fft.rfft(r.astype(np.float64), norm=norm))
        h = np.fft.rfft(r.astype(np.float64)).astype(np.complex64)
        check(F.irfft(mx.array(h), norm=norm), np.fft.irfft(h.astype(np.complex128), norm=norm))


# ------------------------------------------- batches in lanes (8 at a time)

@pytest.mark.parametrize("n", [10007, 4099, 2 * 10007, 16381, 97 * 101])
@pytest.mark.parametrize("batch", [8, 13])
def test_batched_bluestein_lengths(n, batch):
    """Batched prime-factor lines convolve in lanes over a power of two or
    a shorter 2^a 3^b 5^c length; float32 accuracy either way."""
    x = cplx(batch, n)
    check(F.fft(mx.array(x)), np.fft.fft(x.astype(np.complex128)))
    check(F.ifft(mx.array(x)), np.fft.ifft(x.astype(np.complex128)))
    r = x.real.copy()
    check(F.rfft(mx.array(r)), np.fft.rfft(r.astype(np.float64)))
    h = np.fft.rfft(r.astype(np.float64)).astype(np.complex64)
    check(F.irfft(mx.array(h), n=n), np.fft.irfft(h.astype(np.complex128), n=n))


@pytest.mark.parametrize("n", [4096, 3000, 1024, 10007])
def test_rows_at_odd_offsets(n):
    """Rows that start at any element (a slice one past a row start) go
    through the transposing loads and stores like aligned ones."""
    x = cplx(16, n + 1)
    xa = mx.array(x)[:, 1:]
    check(F.fft(xa), np.fft.fft(x[:, 1:].astype(np.complex128)))
    r = real(16, n + 1)
    ra = mx.array(r)[:, 1:]
    check(F.rfft(ra), np.fft.rfft(r[:, 1:].astype(np.float64)))
    h = np.fft.rfft(r[:, 1:].astype(np.float64)).astype(np.complex64)
    hp = np.concatenate([np.zeros((16, 1), np.complex64), h], axis=1)
    check(F.irfft(mx.array(hp)[:, 1:], n=n), np.fft.irfft(h.astype(np.complex128), n=n))
    # side by side: lines down the columns of a wide array, sliced
    y = cplx(n, 19)
    check(F.fft(mx.array(y)[:, 1:17], axis=0), np.fft.fft(y[:, 1:17].astype(np.complex128), axis=0))


@pytest.mark.parametrize("n", [1 << 17, 3 ** 11, 40009, 2 * 40009])
def test_many_lines_too_long_for_lanes(n):
    """Batches of lines past the lanes' lengths run line by line, each
    spread over the pool."""
    x = cplx(6, n)
    check(F.fft(mx.array(x)), np.fft.fft(x.astype(np.complex128)))
    check(F.ifft(mx.array(x).T, axis=0), np.fft.ifft(x.T.astype(np.complex128), axis=0))
    r = x.real.copy()
    check(F.rfft(mx.array(r)), np.fft.rfft(r.astype(np.float64)))
    check(F.rfft(mx.array(r).T, axis=0), np.fft.rfft(r.T.astype(np.float64), axis=0))
    h = np.fft.rfft(r.astype(np.float64)).astype(np.complex64)
    check(F.irfft(mx.array(h), n=n), np.fft.irfft(h.astype(np.complex128), n=n))


@pytest.mark.parametrize("n", [7, 11, 13, 49, 121, 169, 7 ** 4, 2940, 7 * 11 * 13, 4 * 13 * 11])
@pytest.mark.parametrize("batch", [3, 8, 11])
def test_odd_prime_radices(n, batch):
    """Radices 7, 11 and 13 (their symmetric butterflies) in lanes, alone,
    repeated and mixed, as last stages run in place or not."""
    x = cplx(batch, n)
    check(F.fft(mx.array(x)), np.fft.fft(x.astype(np.complex128)))
    check(F.ifft(mx.array(x)), np.fft.ifft(x.astype(np.complex128)))
    r = real(batch, 2 * n)
    check(F.rfft(mx.array(r)), np.fft.rfft(r.astype(np.float64)))
