"""astype between float32 and float16/bfloat16 over every bit pattern of
the half type and a spread of float32 patterns: the vector loops of
convert_half.c (contiguous rows) and their scalar tails and strided rows
give the rounding of NumPy (float16) or of round-to-nearest-even on the
top 16 bits (bfloat16), NaN stays NaN; and the portable loops
(CMLX_UNARY_SIMD=0) agree with them bit for bit."""

import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import mlx_ref, mx, needs_oracle, to_np


def all_halves():
    return np.arange(65536, dtype=np.uint32).astype(np.uint16)


def f32_patterns(n=1 << 18, seed=0):
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32)
    normal = (rng.standard_normal(n) * 1e3).astype(np.float32).view(np.uint32)
    # values at and around the rounding ties of both half types
    ties = (np.arange(n, dtype=np.uint32) << 12) | 0x1000
    edge = np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001,
                     0x477FF000, 0x477FEFFF, 0x33000000, 0x33000001, 0x387FC000,
                     0x7F7FFFFF, 0x00000001], np.uint32)
    return np.concatenate([raw, normal, ties, edge]).view(np.float32)


def bf16_round(x):
    u = x.view(np.uint32).astype(np.uint64)
    nan = np.isnan(x)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    r[nan] = ((u[nan] >> 16) | 0x40).astype(np.uint16)
    return r


def bits(a, t):
    return np.ascontiguousarray(np.array(a.astype(t) if t != mx.float32 else a)).view(
        np.uint16 if t != mx.float32 else np.uint32)


def same_or_both_nan(got, want):
    g, w = got.astype(np.float32), want.astype(np.float32)
    assert np.array_equal(np.isnan(g), np.isnan(w))
    m = ~np.isnan(w)
    assert np.array_equal(g[m].view(np.uint32), w[m].view(np.uint32))


@pytest.mark.parametrize("layout", ["contiguous", "strided", "odd-length"])
def test_float16_to_float32_every_pattern(layout):
    h = all_halves().view(np.float16)
    want = h.astype(np.float32)
    a = mx.array(h)
    if layout == "strided":
        a, want = a[::3], want[::3]
    elif layout == "odd-length":
        a, want = a[5:5 + 1001], want[5:5 + 1001]
    got = to_np(a.astype(mx.float32))
    same_or_both_nan(got, want)


@pytest.mark.parametrize("layout", ["contiguous", "strided", "odd-length"])
def test_float32_to_float16_rounds_as_numpy(layout):
    x = f32_patterns()
    a = mx.array(x)
    if layout == "strided":
        a, x = a[1::2], x[1::2]
    elif layout == "odd-length":
        a, x = a[3:3 + 1003], x[3:3 + 1003]
    with np.errstate(over="ignore"):
        want = x.astype(np.float16)
    got = to_np(a.astype(mx.float16))
    same_or_both_nan(got, want)


def test_bfloat16_every_pattern_and_rounding():
    h = all_halves()
    a = mx.array(h).view(mx.bfloat16)
    got = to_np(a.astype(mx.float32)).view(np.uint32)
    assert np.array_equal(got, h.astype(np.uint32) << 16)
    x = f32_patterns(seed=1)
    for sl in (slice(None), slice(1, None, 2), slice(3, 3 + 1003)):
        got = np.array(mx.array(x[sl]).astype(mx.bfloat16).view(mx.uint16))
        assert np.array_equal(got, bf16_round(np.ascontiguousarray(x[sl])))


def test_portable_loops_agree():
    code = ("import numpy as np, cmlx.core as mx, sys\n"
            "x = np.random.default_rng(2).integers(0, 2**32, 100003, dtype=np.uint64)"
            ".astype(np.uint32).view(np.float32)\n"
            "h = np.arange(65536, dtype=np.uint32).astype(np.uint16)\n"
            "out = [np.array(mx.array(x).astype(t).view(mx.uint16)) for t in (mx.float16, mx.bfloat16)]\n"
            "out += [np.array(mx.array(h).view(t).astype(mx.float32)) for t in (mx.float16, mx.bfloat16)]\n"
            "np.savez(sys.argv[1], *out)\n")
    res = []
    for simd in ("1", "0"):
        path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"cvt_{os.getpid()}_{simd}.npz")
        env = dict(os.environ, CMLX_UNARY_SIMD=simd)
        subprocess.run([sys.executable, "-c", code, path], check=True, env=env)
        with np.load(path) as z:
            res.append([z[k] for k in sorted(z.files)])
        os.remove(path)
    for a, b in zip(*res):
        if a.dtype == np.float32:  # the portable float16 loop keeps signalling NaNs
            same_or_both_nan(a, b)
        else:
            assert np.array_equal(a, b)


@needs_oracle
def test_matches_mlx():
    x = f32_patterns(1 << 12, seed=3)
    for t in ("float16", "bfloat16"):
        got = np.array(mx.array(x).astype(getattr(mx, t)).view(mx.uint16))
        ref = np.array(mlx_ref.array(x).astype(getattr(mlx_ref, t)).view(mlx_ref.uint16))
        nan = np.isnan(x)
        assert np.array_equal(got[~nan], ref[~nan])
