"""argmax and argmin over contiguous float runs, which take two vector
passes (the run's extreme, then the first element equal to it) instead of
the element-by-element walk.  The answer must be the walk's: the first of
equal extremes, the first NaN, -0 and +0 equal, pieces of a long row
merged so that an equal extreme later on never wins.  Checked against
NumPy (the same rules) and against the strided walk of the same values."""

import numpy as np
import pytest

from conftest import mx, npv

FLOATS = ["float32", "float16", "bfloat16"]
LENGTHS = [63, 64, 65, 1000, 1024, 1025, 8191, 8192, 8193, 32000, 70001]


def _arr(x, name):
    return mx.array(x.astype(np.float32)).astype(getattr(mx, name))


def _values(a):
    return npv(a.astype(mx.float32))


def _check(a, axis=-1):
    x = _values(a)
    for op, ref in (("argmax", np.argmax), ("argmin", np.argmin)):
        got = npv(getattr(mx, op)(a, axis=axis))
        np.testing.assert_array_equal(got, ref(x, axis=axis), err_msg=op)
        # the same values walked with a stride (every other element of a
        # twice-as-long row) give the same index
        wide = mx.repeat(a, 2, axis=axis)
        sl = [slice(None)] * a.ndim
        sl[axis] = slice(0, None, 2)
        np.testing.assert_array_equal(npv(getattr(mx, op)(wide[tuple(sl)], axis=axis)), got)


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("n", LENGTHS)
def test_random_rows(name, n):
    x = np.random.default_rng(n).standard_normal((2, n))
    _check(_arr(x, name))


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("n", [64, 1500, 9000, 20000])
def test_ties_keep_the_first(name, n):
    x = np.zeros(n)
    for pos in (n - 1, n // 2, 5):  # equal extremes in several pieces
        x[pos] = 7.0
        x[n - 1 - pos] = -7.0
    _check(_arr(x[None], name))
    _check(_arr(np.full((1, n), 3.0), name))  # every element equal


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("n", [64, 2000, 10000])
def test_nan_first_one_wins(name, n):
    x = np.random.default_rng(3).standard_normal(n)
    x[n - 2] = np.nan
    x[n // 3] = np.nan
    x[0] = 100.0
    a = _arr(x[None], name)
    assert int(npv(mx.argmax(a, axis=-1))[0]) == n // 3
    assert int(npv(mx.argmin(a, axis=-1))[0]) == n // 3
    _check(a)


@pytest.mark.parametrize("name", FLOATS)
def test_signed_zeros_and_infinities(name):
    n = 3000
    x = np.full(n, -np.inf)
    _check(_arr(x[None], name))
    x = np.zeros(n)
    x[::2] = -0.0
    x[1500:] = 0.0
    _check(_arr(x[None], name))
    x = np.full(n, -5.0)
    x[2000] = np.inf
    x[2500] = np.inf
    _check(_arr(x[None], name))


@pytest.mark.parametrize("name", FLOATS)
def test_axes_and_keepdims(name):
    x = np.random.default_rng(9).standard_normal((3, 5, 300))
    a = _arr(x, name)
    _check(a, axis=2)
    _check(a, axis=-1)
    got = npv(mx.argmax(a, axis=-1, keepdims=True))
    assert got.shape == (3, 5, 1)
    np.testing.assert_array_equal(got[..., 0], np.argmax(_values(a), axis=-1))
    flat = npv(mx.argmax(a))  # over everything: one long contiguous run
    assert int(flat) == int(np.argmax(_values(a)))
