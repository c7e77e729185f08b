"""FFTs: one 2^20-point complex64 fft and float32 rfft, a prime length
(10007, batch of 64), a batch of 256 rows of 1024 along the last axis,
a 1024 x 1024 fft2, mixed-radix batches, and issue 23's size classes
(long single lines of smooth, power-of-three and prime length, batches
of short and of long rows).

NumPy (pocketfft) computes in complex128/float64 from float32 data, so
its results are more precise and its memory traffic doubled; cmlx, MLX
(pocketfft) and PyTorch in complex64.  Inputs are made before timing;
each call evaluates to completion.
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
    if fw.name == "torch":
        f = getattr(fw.mod.fft, name)
        a = fw.from_numpy(x)
        return lambda: f(a, **kw)
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


# Mixed-radix lengths (factors 2, 3, 5 and 7): batches run in lanes
# (fft_mixed_impl.h), long single lines as four-step transforms over them.
@workload("fft c64 3^10", family="fft")
def fft_3_10(fw):
    return _fft(fw, "fft", _data("c3_10", lambda: _complex(3 ** 10)))


@workload("fft c64 5^7", family="fft")
def fft_5_7(fw):
    return _fft(fw, "fft", _data("c5_7", lambda: _complex(5 ** 7)))


@workload("fft c64 256x1000", family="fft")
def fft_1000(fw):
    return _fft(fw, "fft", _data("c1000", lambda: _complex((256, 1000))))


@workload("fft c64 256x1536", family="fft")
def fft_1536(fw):
    return _fft(fw, "fft", _data("c1536", lambda: _complex((256, 1536))))


@workload("fft c64 64x3000", family="fft")
def fft_3000(fw):
    return _fft(fw, "fft", _data("c3000", lambda: _complex((64, 3000))))


@workload("rfft f32 256x3000", family="fft")
def rfft_3000(fw):
    return _fft(fw, "rfft", _data("r3000", lambda: _rng.standard_normal((256, 3000)).astype(np.float32)))


@workload("fft c64 64x2940 (7^2)", family="fft")
def fft_2940(fw):
    return _fft(fw, "fft", _data("c2940", lambda: _complex((64, 2940))))


# The size classes of cmlx issue 23: long single real and complex lines of
# a power of two, a smooth length, a power of three and a prime, and a
# batch of short real rows.
def _real(shape):
    return _rng.standard_normal(shape).astype(np.float32)


@workload("rfft f32 1024000", family="fft")
def rfft_smooth(fw):
    return _fft(fw, "rfft", _data("r1024000", lambda: _real(1024000)))


@workload("rfft f32 prime 999983", family="fft")
def rfft_prime(fw):
    return _fft(fw, "rfft", _data("r999983", lambda: _real(999983)))


@workload("rfft f32 3^12", family="fft")
def rfft_3_12(fw):
    return _fft(fw, "rfft", _data("r3_12", lambda: _real(3 ** 12)))


@workload("fft c64 prime 999983", family="fft")
def fft_prime_big(fw):
    return _fft(fw, "fft", _data("c999983", lambda: _complex(999983)))


@workload("irfft c64 2^19+1 -> 2^20", family="fft")
def irfft_1m(fw):
    return _fft(fw, "irfft", _data("ch1m", lambda: _complex((1 << 19) + 1)))


@workload("rfft f32 256x4096", family="fft")
def rfft_rows(fw):
    return _fft(fw, "rfft", _data("r256x4096", lambda: _real((256, 4096))))


# Batches of lines too long for lanes: line by line, each over the pool.
@workload("rfft f32 8x2^17", family="fft")
def rfft_8x128k(fw):
    return _fft(fw, "rfft", _data("r8x128k", lambda: _real((8, 1 << 17))))


@workload("fft c64 prime 16x40009", family="fft")
def fft_16x40009(fw):
    return _fft(fw, "fft", _data("c16x40009", lambda: _complex((16, 40009))))
