"""4- and 8-bit affine x @ W^T with many rows of float16/bfloat16 x, which runs on
AMX tiles where the CPU has them (src/backend/cpu/quantized_amx.c) and by
dequantized float32 tiles and sgemm elsewhere (CMLX_MATMUL_AMX=0).

Either way the result is x times the dequantized W, summed in float32 and
rounded once to x's dtype: checked against a float64 reference (a unit in
the last place, plus float32's error where terms cancel), for each group
size, sizes on and off the tiles' multiples, batches, gather_qmm, the
tiles against the float path, and inputs the tiles cannot carry."""
import io
import os
import subprocess
import sys

import numpy as np
import pytest

import cmlx.core as mx

HALVES = {"float16": (mx.float16, 10), "bfloat16": (mx.bfloat16, 7)}


def f64(a):
    return np.array(a.astype(mx.float32)).astype(np.float64)


def make(rng, M, N, K, gs, dt, bits=4):
    x = mx.array(rng.standard_normal((M, K)).astype(np.float32)).astype(dt)
    w = mx.array((rng.standard_normal((N, K)) * 0.05).astype(np.float32)).astype(dt)
    wq, s, b = mx.quantize(w, group_size=gs, bits=bits)
    # W's values in float32, as both paths use them (s q + b, not rounded
    # to x's dtype)
    wd = f64(mx.dequantize(wq, s.astype(mx.float32), b.astype(mx.float32), group_size=gs, bits=bits))
    return x, wq, s, b, wd


def check(got, x64, wd, dt, bits, exact_share=0.98):
    ref = x64 @ wd.T
    mag = np.abs(x64) @ np.abs(wd).T
    exp = f64(mx.array(ref.astype(np.float32)).astype(dt))
    ulp = np.exp2(np.floor(np.log2(np.maximum(np.abs(exp), 1e-30))) - bits)
    off = np.abs(f64(got) - exp)
    # the scale and bias terms of a group are summed apart, so where they
    # cancel float32's error is a few 2^-24 of each term (15 times the
    # codes' share at most): 2^-18 of the magnitudes covers it
    assert np.all(off <= ulp * 1.0001 + mag * 2.0**-18), np.max(off / ulp)
    assert np.mean(off == 0) >= exact_share


@pytest.mark.parametrize("name", sorted(HALVES))
@pytest.mark.parametrize("gs", [32, 64, 128])
@pytest.mark.parametrize("qbits", [4, 8])
@pytest.mark.parametrize("M,N,K", [(64, 256, 512), (9, 64, 2048), (100, 200, 1024), (256, 48, 256)])
def test_qmm_values(name, gs, qbits, M, N, K):
    dt, bits = HALVES[name]
    rng = np.random.default_rng(M + N + K + gs + qbits)
    x, wq, s, b, wd = make(rng, M, N, K, gs, dt, qbits)
    got = mx.quantized_matmul(x, wq, s, b, transpose=True, group_size=gs, bits=qbits)
    assert got.dtype == dt and got.shape == (M, N)
    check(got, f64(x), wd, dt, bits)


@pytest.mark.parametrize("name", sorted(HALVES))
def test_qmm_batched_and_gather(name):
    dt, bits = HALVES[name]
    rng = np.random.default_rng(1)
    x, wq, s, b, wd = make(rng, 96, 128, 512, 64, dt)
    x3 = mx.array(rng.standard_normal((2, 48, 512)).astype(np.float32)).astype(dt)
    got = mx.quantized_matmul(x3, wq, s, b, transpose=True, group_size=64, bits=4)
    check(got.reshape(96, 128), f64(x3).reshape(96, 512), wd, dt, bits)
    # gather_qmm over a stack of two W, sorted indices: runs on one W merge
    # into tall products
    x2, wq2, s2, b2, wd2 = make(rng, 96, 128, 512, 64, dt)
    W, S, B = mx.stack([wq, wq2]), mx.stack([s, s2]), mx.stack([b, b2])
    xs = mx.array(rng.standard_normal((4, 32, 512)).astype(np.float32)).astype(dt)
    rhs = mx.array(np.array([0, 0, 1, 1], np.uint32))
    got = mx.gather_qmm(xs, W, S, B, rhs_indices=rhs, transpose=True, group_size=64, bits=4,
                        sorted_indices=True)
    xs64 = f64(xs)
    for i, wdi in enumerate([wd, wd, wd2, wd2]):
        check(got[i], xs64[i], wdi, dt, bits)


@pytest.mark.parametrize("name", sorted(HALVES))
def test_qmm_non_finite_x_follows_float32(name):
    # a code 0 against an infinite x: x (s 0 + b) is infinite, while the
    # tiles' x . q would be inf x 0 = NaN; such inputs take the float path
    dt, _ = HALVES[name]
    rng = np.random.default_rng(2)
    x, wq, s, b, wd = make(rng, 64, 128, 512, 64, dt)
    xn = np.array(x.astype(mx.float32))
    xn[3, 7] = np.inf
    xn[5, 0] = np.nan
    got = np.array(mx.quantized_matmul(mx.array(xn).astype(dt), wq, s, b, transpose=True,
                                       group_size=64, bits=4).astype(mx.float32))
    ref = xn.astype(np.float64) @ wd.T
    assert np.array_equal(np.isnan(got), np.isnan(ref))
    assert np.array_equal(np.isinf(got), np.isinf(ref))
    assert np.isnan(got[5]).all() and np.isinf(got[3]).mean() > 0.9


def test_tiles_off_gives_the_same_products():
    code = (
        "import numpy as np, sys; import cmlx.core as mx\n"
        "r = np.random.default_rng(4)\n"
        "for dt in (mx.float16, mx.bfloat16):\n"
        "    x = mx.array(r.standard_normal((128, 1024)).astype(np.float32)).astype(dt)\n"
        "    w = mx.array((r.standard_normal((256, 1024)) * 0.05).astype(np.float32)).astype(dt)\n"
        "    q = mx.quantize(w, group_size=64, bits=4)\n"
        "    y = mx.quantized_matmul(x, *q, transpose=True, group_size=64, bits=4)\n"
        "    np.save(sys.stdout.buffer, np.array(y.astype(mx.float32)))\n"
    )

    def run(value):
        env = dict(os.environ, CMLX_MATMUL_AMX=value)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, check=True).stdout
        f = io.BytesIO(out)
        return [np.load(f), np.load(f)]

    for (bits, x, y) in zip([10, 7], run("1"), run("0")):
        ulp = np.exp2(np.floor(np.log2(np.maximum(np.abs(y), 1e-30))) - bits)
        assert np.all(np.abs(x - y) <= ulp * 1.0001 + 1024 * 0.1 * 2.0**-18)
        assert np.mean(x == y) > 0.98
