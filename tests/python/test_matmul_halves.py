"""float16 and bfloat16 matrix products, which run on AMX tiles where the CPU
has them (src/backend/cpu/gemm_amx.c) and through float32 sgemm elsewhere.

Either way the result is the exact product rounded once, up to float32's
accumulation error: checked against a float64 reference rounded to the
dtype (at most one unit in the last place off, nearly all exact), across
sizes that are and are not multiples of the tiles, transposed and strided
operands, addmm's alpha and beta, batches, and the values the tiles cannot
carry (float16 infinities and NaNs, bfloat16 values whose products fall
below float32's normal range), which must come out as float32 arithmetic
gives them."""
import os
import subprocess
import sys

import numpy as np
import pytest

import cmlx.core as mx

HALVES = {"float16": (mx.float16, 10), "bfloat16": (mx.bfloat16, 7)}  # dtype, mantissa bits


def as_f64(x):
    return np.array(x.astype(mx.float32)).astype(np.float64)


def rounded(ref, dt):
    """The float64 values rounded to dt (through float32: exact for these sizes)."""
    return as_f64(mx.array(ref.astype(np.float32)).astype(dt))


def check_close(got, ref, dt, bits, exact_share=0.99, mag=None):
    """Within one unit in the last place of the rounded reference, plus
    float32's accumulation error (2^-20 of the sum of the terms' magnitudes,
    mag, which matters where terms cancel)."""
    exp = rounded(ref, dt)
    ulp = np.exp2(np.floor(np.log2(np.maximum(np.abs(exp), 1e-30))) - bits)
    slack = 0 if mag is None else mag * 2.0**-20
    off = np.abs(got - exp)
    assert np.all(off <= ulp * 1.0001 + slack), f"max error {np.max(off / ulp):.2f} ulp"
    assert np.mean(off == 0) >= exact_share


def operand(rng, shape, dt, layout):
    """A (rows, cols) half matrix in the given layout: 'n' contiguous, 't' a
    transposed view, 's' a strided slice of a larger array, 'r' reversed
    along both axes."""
    r, c = shape
    if layout == "n":
        x = mx.array(rng.standard_normal((r, c)).astype(np.float32)).astype(dt)
    elif layout == "t":
        x = mx.array(rng.standard_normal((c, r)).astype(np.float32)).astype(dt).T
    elif layout == "s":
        x = mx.array(rng.standard_normal((2 * r, c + 3)).astype(np.float32)).astype(dt)[::2, 1:c + 1]
    else:
        x = mx.array(rng.standard_normal((r, c)).astype(np.float32)).astype(dt)[::-1, ::-1]
    return x


SHAPES = [(64, 64, 64), (33, 47, 70), (16, 16, 1024), (100, 300, 129), (40, 1000, 96), (256, 96, 512)]


@pytest.mark.parametrize("name", sorted(HALVES))
@pytest.mark.parametrize("M,N,K", SHAPES)
@pytest.mark.parametrize("la,lb", [("n", "n"), ("n", "t"), ("t", "n"), ("t", "t"), ("s", "s"), ("r", "t"), ("n", "r")])
def test_half_product_is_the_rounded_exact_product(name, M, N, K, la, lb):
    dt, bits = HALVES[name]
    rng = np.random.default_rng(M * 1000 + N + K)
    a, b = operand(rng, (M, K), dt, la), operand(rng, (K, N), dt, lb)
    got = a @ b
    assert got.dtype == dt and got.shape == (M, N)
    check_close(as_f64(got), as_f64(a) @ as_f64(b), dt, bits, mag=np.abs(as_f64(a)) @ np.abs(as_f64(b)))


@pytest.mark.parametrize("name", sorted(HALVES))
def test_large_product_with_cancellation(name):
    # a prefill-sized product of a weight's transpose, as x @ w.T
    dt, bits = HALVES[name]
    rng = np.random.default_rng(7)
    x = mx.array(rng.standard_normal((200, 2048)).astype(np.float32)).astype(dt)
    w = mx.array((rng.standard_normal((352, 2048)) * 0.05).astype(np.float32)).astype(dt)
    got = x @ w.T
    check_close(as_f64(got), as_f64(x) @ as_f64(w).T, dt, bits, mag=np.abs(as_f64(x)) @ np.abs(as_f64(w)).T)


@pytest.mark.parametrize("name", sorted(HALVES))
def test_addmm_alpha_beta(name):
    dt, bits = HALVES[name]
    rng = np.random.default_rng(3)
    a = mx.array(rng.standard_normal((48, 96)).astype(np.float32)).astype(dt)
    b = mx.array(rng.standard_normal((96, 80)).astype(np.float32)).astype(dt)
    c = mx.array(rng.standard_normal((48, 80)).astype(np.float32)).astype(dt)
    for alpha, beta in [(1.0, 1.0), (0.5, -2.0), (2.0, 0.0)]:
        got = mx.addmm(c, a, b, alpha=alpha, beta=beta)
        ref = alpha * (as_f64(a) @ as_f64(b)) + beta * as_f64(c)
        check_close(as_f64(got), ref, dt, bits, exact_share=0.97,
                    mag=abs(alpha) * (np.abs(as_f64(a)) @ np.abs(as_f64(b))) + abs(beta) * np.abs(as_f64(c)))
    # broadcast c (a row), as a bias
    got = mx.addmm(c[0], a, b)
    check_close(as_f64(got), as_f64(a) @ as_f64(b) + as_f64(c[0]), dt, bits, exact_share=0.97,
                mag=np.abs(as_f64(a)) @ np.abs(as_f64(b)) + np.abs(as_f64(c[0])))


@pytest.mark.parametrize("name", sorted(HALVES))
def test_batched_and_broadcast(name):
    dt, bits = HALVES[name]
    rng = np.random.default_rng(5)
    a = mx.array(rng.standard_normal((3, 40, 64)).astype(np.float32)).astype(dt)
    b = mx.array(rng.standard_normal((64, 72)).astype(np.float32)).astype(dt)
    check_close(as_f64(a @ b), as_f64(a) @ as_f64(b), dt, bits, mag=np.abs(as_f64(a)) @ np.abs(as_f64(b)))
    bb = mx.array(rng.standard_normal((3, 64, 72)).astype(np.float32)).astype(dt)
    check_close(as_f64(a @ bb), as_f64(a) @ as_f64(bb), dt, bits, mag=np.abs(as_f64(a)) @ np.abs(as_f64(bb)))


def test_float16_infinities_and_nans_follow_float32():
    # inf x 1.0 must stay inf: a split of inf into (inf, 0) parts would
    # give inf x 0 = NaN in the part products
    rng = np.random.default_rng(11)
    # (large enough for the tiles: 2^18 multiply-adds and more)
    a = rng.standard_normal((64, 128)).astype(np.float16)
    b = np.ones((128, 48), np.float16)
    a[0, 0] = np.inf
    a[1, :2] = [np.inf, -np.inf]  # inf - inf: NaN
    a[2, 5] = np.nan
    got = np.array((mx.array(a) @ mx.array(b)).astype(mx.float32))
    ref = a.astype(np.float32) @ b.astype(np.float32)
    assert np.array_equal(np.isnan(got), np.isnan(ref))
    assert np.array_equal(np.isposinf(got), np.isposinf(ref))
    assert np.isposinf(got[0]).all() and np.isnan(got[1]).all() and np.isnan(got[2]).all()
    fin = np.isfinite(ref)
    check_close(got[fin].astype(np.float64), (a.astype(np.float64) @ b.astype(np.float64))[fin],
                mx.float16, 10, mag=(np.abs(a.astype(np.float64)) @ b.astype(np.float64))[fin])


def test_bfloat16_products_below_float32_normals_are_kept():
    # each product, 1e-30 x 1e-10, is under float32's smallest normal
    # (1.2e-38): float32 arithmetic keeps it as a subnormal, and 128 of
    # them sum to about 1.3e-38; the tiles would flush every product to 0
    a = mx.full((64, 128), 1e-30, mx.bfloat16)
    b = mx.full((128, 64), 1e-10, mx.bfloat16)
    got = np.array((a @ b).astype(mx.float32))
    ref = as_f64(a)[0, 0] * as_f64(b)[0, 0] * 128
    assert np.all(got > 0)
    np.testing.assert_allclose(got, ref, rtol=2e-2)


def test_tiles_off_gives_the_same_products():
    # CMLX_MATMUL_AMX=0 takes the float32 sgemm path: both round the same
    # products once, so they agree to a unit in the last place
    code = (
        "import numpy as np, sys; import cmlx.core as mx\n"
        "r = np.random.default_rng(2)\n"
        "for dt in (mx.float16, mx.bfloat16):\n"
        "    a = mx.array(r.standard_normal((96, 160)).astype(np.float32)).astype(dt)\n"
        "    b = mx.array(r.standard_normal((160, 128)).astype(np.float32)).astype(dt)\n"
        "    np.save(sys.stdout.buffer, np.array((a @ b).astype(mx.float32)))\n"
    )

    def run(env_value):
        env = dict(os.environ, CMLX_MATMUL_AMX=env_value)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, check=True).stdout
        import io
        f = io.BytesIO(out)
        return [np.load(f), np.load(f)]

    on, off = run("1"), run("0")
    for (name, x, y) in zip(["float16", "bfloat16"], on, off):
        dt, bits = HALVES[name]
        ulp = np.exp2(np.floor(np.log2(np.maximum(np.abs(y), 1e-30))) - bits)
        assert np.all(np.abs(x - y) <= ulp * 1.0001 + 160 * 4 * 2.0**-20)
        assert np.mean(x == y) > 0.99


def test_mismatched_shapes_still_raise():
    a = mx.zeros((64, 64), mx.float16)
    b = mx.zeros((63, 64), mx.float16)
    with pytest.raises(ValueError):
        a @ b
    assert a.shape == (64, 64) and b.shape == (63, 64)
