"""Ops whose parameter blocks grow with the rank: slicing many axes at once
(one Slice / SliceUpdate node for any number of axes) and as_strided beyond
seven dimensions, against NumPy, with their transforms."""

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided as np_as_strided

from conftest import cmlx_only, mx


def np_(a):
    return np.array(a)


def test_slice_every_axis_of_a_7d_array():
    x = np.arange(3**7, dtype=np.float32).reshape((3,) * 7)
    key = (slice(1, 3), slice(None, None, -1), slice(0, 3, 2), 1, slice(2, 0, -1), slice(1, 2), slice(None, None, 2))
    a = mx.array(x)
    np.testing.assert_array_equal(np_(a[key]), x[key])
    # the vjp of a slice scatters into zeros; of a slice update, both sides
    g = mx.grad(lambda t: (t[key] * t[key]).sum())(a)
    expect = np.zeros_like(x)
    expect[key] = 2 * x[key]
    np.testing.assert_array_equal(np_(g), expect)


def test_slice_update_many_axes():
    x = np.zeros((4,) * 6, np.float32)
    key = (slice(1, 3), slice(None, None, -2), 2, slice(0, 4, 3), slice(1, None), slice(None, 2))
    a = mx.array(x)
    upd = np.arange(np.zeros((4,) * 6)[key].size, dtype=np.float32).reshape(x[key].shape)
    a[key] = mx.array(upd)
    x[key] = upd
    np.testing.assert_array_equal(np_(a), x)


def test_vmap_of_a_many_axis_slice():
    x = np.arange(2 * 3**5, dtype=np.float32).reshape((2,) + (3,) * 5)
    f = lambda t: t[1:, ::-1, :2, 1:3, ::2]
    np.testing.assert_array_equal(np_(mx.vmap(f)(mx.array(x))), np.stack([f(r) for r in x]))


@pytest.mark.parametrize("ndim", [8, 10, 16])
def test_as_strided_many_dims(ndim):
    x = np.arange(1 << ndim, dtype=np.float32)
    shape = (2,) * ndim
    strides = tuple(1 << (ndim - 1 - i) for i in range(ndim))[::-1]  # a transpose, in elements
    got = mx.as_strided(mx.array(x), shape, strides)
    want = np_as_strided(x, shape, tuple(s * 4 for s in strides))
    np.testing.assert_array_equal(np_(got), want)
    # the vjp adds the cotangent back to every element each view reads
    g = mx.grad(lambda t: (mx.as_strided(t, shape, strides) * 3).sum())(mx.array(x))
    np.testing.assert_array_equal(np_(g), np.full_like(x, 3))


@cmlx_only  # MLX 0.32 accepts the mismatch and reads past its strides
def test_as_strided_bad_input_keeps_the_array():
    a = mx.arange(8)
    with pytest.raises(ValueError):
        mx.as_strided(a, (2,) * 9, (1,) * 8)
    assert a.tolist() == list(range(8))
