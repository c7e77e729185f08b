"""FFTs: one 2^20-point complex64 fft and float32 rfft, a prime length
(10007, batch of 64), a batch of 256 rows of 1024 along the last axis,
and a 1024 x 1024 fft2.

NumPy (pocketfft) computes in complex128/float64 from float32 data, so
its results are more precise and its memory traffic doubled; cmlx (KISS
FFT, Bluestein for the prime) and MLX in complex64.  Inputs are made
before timing; each call evaluates to completion.
"""

import numpy as np

from harness import workload

_rng = np.random.default_rng(0)


def _complex(shape):
    return (_rng.standard_normal(shape) + 1j * _rng.standard_normal(shape)).astype(np.complex64)


_DATA = {}


def _data(key, make):
    if key not in _DATA:
        _DATA[key] = make()
    return _DATA[key]


def _fft(fw, name, x, **kw):
    if fw.name == "numpy":
        f = getattr(np.fft, name)
        return lambda: f(x, **kw)
    if fw.name not in ("cmlx", "mlx"):
        return None
    f = getattr(fw.mod.fft, name)
    a = fw.from_numpy(x)
    return lambda: fw.run(f(a, **kw))


@workload("fft c64 2^20", family="fft")
def fft_1m(fw):
    return _fft(fw, "fft", _data("c1m", lambda: _complex(1 << 20)))


@workload("rfft f32 2^20", family="fft")
def rfft_1m(fw):
    return _fft(fw, "rfft", _data("r1m", lambda: _rng.standard_normal(1 << 20).astype(np.float32)))


@workload("fft c64 prime 64x10007", family="fft")
def fft_prime(fw):
    return _fft(fw, "fft", _data("cprime", lambda: _complex((64, 10007))))


@workload("fft c64 256x1024 axis -1", family="fft")
def fft_rows(fw):
    return _fft(fw, "fft", _data("crows", lambda: _complex((256, 1024))))


@workload("fft2 c64 1024x1024", family="fft")
def fft2_big(fw):
    return _fft(fw, "fft2", _data("c2d", lambda: _complex((1024, 1024))))


@workload("irfft2 c64 1024x513", family="fft")
def irfft2_big(fw):
    return _fft(fw, "irfft2", _data("c2dh", lambda: _complex((1024, 513))))
