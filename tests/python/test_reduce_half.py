"""Sum, max and min of float16 and bfloat16 arrays, which have vector
kernels of their own (reduce_x86.c widens eight halves at a time into
float accumulators): every length around the vector widths, rows, columns
(one row, four rows at a time, and the rest), strided inputs, and NaN and
infinity in the vector body, in the tail and in the accumulators.

max and min are exact, so they are compared bit for bit with NumPy.  A sum
accumulates in float32 and is rounded to the half type once, so it must
lie within one unit in the last place of the half type of the exact sum
(computed in float64), plus the float32 accumulation error bound."""

import numpy as np
import pytest

from conftest import mlx_ref, mx, needs_oracle, npv

HALVES = ["float16", "bfloat16"]
# vector widths are 8 and 32 elements; 4096 is a row block
LENGTHS = [1, 2, 7, 8, 9, 31, 32, 33, 40, 63, 64, 65, 100, 4095, 4096, 4097, 10007]


def _values(name, shape, seed, lo=-4.0, hi=4.0):
    rng = np.random.default_rng(seed)
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def _as_half(name, x32):
    """The float32 values rounded to the half type, as a cmlx array and as
    float64 (exact: every half value is a float64)."""
    a = mx.array(x32).astype(getattr(mx, name))
    return a, npv(a.astype(mx.float32)).astype(np.float64)


def _ulp(name, v):
    mant = 10 if name == "float16" else 7
    v = np.maximum(np.abs(v), 2.0 ** -14)
    return 2.0 ** (np.floor(np.log2(v)) - mant)


def _check_sum(name, got, x64, axis):
    exact = x64.sum(axis=axis)
    bound = _ulp(name, exact) + 1e-6 * np.abs(x64).sum(axis=axis)
    got64 = np.asarray(got, dtype=np.float64)
    assert np.all(np.abs(got64 - exact) <= bound), (np.max(np.abs(got64 - exact) - bound))


def _check_ext(got, x64, axis, which):
    ref = (np.max if which == "max" else np.min)(x64, axis=axis)
    np.testing.assert_array_equal(np.asarray(got, dtype=np.float64), ref)


@pytest.mark.parametrize("name", HALVES)
@pytest.mark.parametrize("n", LENGTHS)
def test_full_reductions_every_length(name, n):
    a, x64 = _as_half(name, _values(name, (n,), seed=n))
    s = mx.sum(a)
    assert s.dtype == a.dtype
    _check_sum(name, npv(s.astype(mx.float32)), x64, None)
    for which in ("max", "min"):
        r = getattr(mx, which)(a)
        assert r.dtype == a.dtype
        _check_ext(npv(r.astype(mx.float32)), x64, None, which)


@pytest.mark.parametrize("name", HALVES)
@pytest.mark.parametrize("shape,axis", [((5, 33), 1), ((3, 4100), 1), ((1, 9), 0), ((2, 40), 0),
                                        ((4, 40), 0), ((7, 70), 0), ((9, 3), 0), ((300, 17), 0),
                                        ((6, 5, 12), (0, 1)), ((4, 6, 40), 1)])
def test_rows_and_columns(name, shape, axis):
    a, x64 = _as_half(name, _values(name, shape, seed=sum(shape)))
    _check_sum(name, npv(mx.sum(a, axis=axis).astype(mx.float32)), x64, axis)
    for which in ("max", "min"):
        _check_ext(npv(getattr(mx, which)(a, axis=axis).astype(mx.float32)), x64, axis, which)


@pytest.mark.parametrize("name", HALVES)
@pytest.mark.parametrize("layout", ["transposed", "sliced", "reversed"])
def test_strided_inputs(name, layout):
    base, b64 = _as_half(name, _values(name, (24, 66), seed=3))
    if layout == "transposed":
        a, x64 = base.T, b64.T
    elif layout == "sliced":
        a, x64 = base[1::2, 3:61:3], b64[1::2, 3:61:3]
    else:
        a, x64 = base[::-1, ::-1], b64[::-1, ::-1]
    for axis in (None, 0, 1):
        _check_sum(name, npv(mx.sum(a, axis=axis).astype(mx.float32)), x64, axis)
        for which in ("max", "min"):
            _check_ext(npv(getattr(mx, which)(a, axis=axis).astype(mx.float32)), x64, axis, which)


@pytest.mark.parametrize("name", HALVES)
@pytest.mark.parametrize("n", [8, 33, 64, 100, 4097])
def test_nan_and_infinity_anywhere(name, n):
    x = _values(name, (n,), seed=7)
    for pos in sorted({0, n // 2, n - 1}):
        for special in (np.nan, np.inf, -np.inf):
            y = x.copy()
            y[pos] = special
            a, y64 = _as_half(name, y)
            got = {w: float(npv(getattr(mx, w)(a).astype(mx.float32))) for w in ("sum", "max", "min")}
            if np.isnan(special):
                assert all(np.isnan(v) for v in got.values()), (pos, got)
            else:
                assert got["sum"] == special
                assert got["max" if special > 0 else "min"] == special
                other = "min" if special > 0 else "max"
                _check_ext(got[other], np.delete(y64, pos), None, other)


@pytest.mark.parametrize("name", HALVES)
@pytest.mark.parametrize("rows", [1, 4, 5, 8, 11])
def test_nan_in_columns_reaches_only_its_column(name, rows):
    """A NaN in one row of a column reduction (the accumulators, then the
    four-rows-at-a-time path) poisons its own column and no other."""
    x = _values(name, (rows, 37), seed=rows)
    for r, c in ((0, 0), (rows - 1, 36), (rows // 2, 9)):
        y = x.copy()
        y[r, c] = np.nan
        a, y64 = _as_half(name, y)
        for which in ("sum", "max", "min"):
            got = npv(getattr(mx, which)(a, axis=0).astype(mx.float32))
            assert np.isnan(got[c])
            keep = np.arange(37) != c
            assert not np.isnan(got[keep]).any()
            if which == "sum":
                _check_sum(name, got[keep], y64[:, keep], 0)
            else:
                _check_ext(got[keep], y64[:, keep], 0, which)


@pytest.mark.parametrize("name", HALVES)
def test_large_sum_keeps_float32_accuracy(name):
    """1e6 ones: a half accumulator would stop at 2048 (float16) or 256
    (bfloat16); float32 accumulation gives the exact count, rounded once."""
    a = mx.ones((1_000_000,), dtype=getattr(mx, name))
    got = float(npv(mx.sum(a).astype(mx.float32)))
    want = float(npv(mx.array(1_000_000.0).astype(getattr(mx, name)).astype(mx.float32)))
    assert got == want


@needs_oracle
@pytest.mark.parametrize("name", HALVES)
def test_matches_mlx(name):
    mlx = mlx_ref
    x = _values(name, (6, 4100), seed=11)
    x[2, 17] = np.nan
    for which in ("sum", "max", "min"):
        for axis in (None, 0, 1):
            ours = getattr(mx, which)(mx.array(x).astype(getattr(mx, name)), axis=axis)
            theirs = getattr(mlx, which)(mlx.array(x).astype(getattr(mlx, name)), axis=axis)
            o = np.array(ours.astype(mx.float32))
            t = np.array(theirs.astype(mlx.float32))
            assert ours.dtype == getattr(mx, name) and o.shape == t.shape
            if which == "sum":
                np.testing.assert_allclose(o, t, rtol=1e-2 if name == "bfloat16" else 2e-3,
                                           atol=0.05, equal_nan=True)
            else:
                np.testing.assert_array_equal(o, t)
