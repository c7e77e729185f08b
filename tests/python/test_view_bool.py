"""Viewing another dtype's bytes as bool, as MLX does.

MLX keeps the raw bytes (a view, no copy): viewing back gives the original
array, NumPy sees the same bytes, and a nonzero byte reads as True. cmlx
keeps the bytes too; every op that reads the values treats a nonzero byte
as True (the bytes are cleaned before such an op, never read as C bools).
"""

import numpy as np
import pytest

from conftest import SUBJECT_IS_MLX, mlx_ref, mx, needs_oracle

INTS = np.array([[-100, 3, 256, 0], [7, -1, 0, 65536]], dtype=np.int32)


# MLX reads raw bytes as C++ bools in its kernels (undefined: sums give the
# bytes, comparisons differ); cmlx defines every op on them.
cmlx_semantics = pytest.mark.skipif(SUBJECT_IS_MLX, reason="MLX leaves ops on raw bools undefined")


def _layouts():
    a = mx.array(INTS)
    yield "contiguous", a, INTS
    yield "transposed", a.T, INTS.T
    yield "broadcast", mx.broadcast_to(a[:1], (3, 1, 4)), np.broadcast_to(INTS[:1], (3, 1, 4))
    yield "sliced", a[:, ::2], INTS[:, ::2]


@pytest.mark.parametrize("name", ["contiguous", "transposed", "broadcast", "sliced"])
@pytest.mark.parametrize("t", ["int16", "float32", "int64", "uint8"])
def test_bool_view_round_trips(name, t):
    a, ref = next((a, r) for n, a, r in _layouts() if n == name)
    if t == "int64" and a.shape[-1] % 2:
        pytest.skip("odd last axis")
    b = a.view(mx.bool_)
    assert b.dtype == mx.bool_
    assert b.shape == a.shape[:-1] + (a.shape[-1] * 4,)
    # the raw bytes survive a round trip through bool and another dtype
    back = b.view(getattr(mx, t)).view(mx.int32)
    assert mx.array_equal(back, a).item()
    np.testing.assert_array_equal(np.array(back), ref)


def test_numpy_sees_the_raw_bytes():
    b = mx.array(INTS).view(mx.bool_)
    got = np.array(b)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got.view(np.uint8), INTS.view(np.uint8))


@cmlx_semantics
def test_values_read_nonzero_as_true():
    b = mx.array(INTS).view(mx.bool_)
    clean = INTS.view(np.uint8) != 0
    assert b.tolist() == clean.tolist()
    assert b[0, 0].item() is True and b[0, 5].item() is False
    assert bool(b[1, 4]) is True  # byte 7
    np.testing.assert_array_equal(np.array(mx.logical_not(b)), ~clean)
    np.testing.assert_array_equal(np.array(b.astype(mx.int32)), clean.astype(np.int32))
    assert mx.sum(b).item() == int(clean.sum())
    assert mx.all(b[0, :4]).item() and not mx.any(b[0, 12:]).item()
    np.testing.assert_array_equal(np.array(mx.where(b, 1, 2)), np.where(clean, 1, 2))
    np.testing.assert_array_equal(np.array(mx.sort(b, axis=-1)), np.sort(clean, axis=-1))
    np.testing.assert_array_equal(np.array(b == mx.array(clean)), np.ones_like(clean))
    np.testing.assert_array_equal(np.array(b[:, mx.array([0, 4, 5])]), clean[:, [0, 4, 5]])
    np.testing.assert_array_equal(np.array(mx.logical_and(b, b.T.T)), clean)


def test_views_of_raw_bools_stay_raw():
    b = mx.array(INTS).view(mx.bool_)
    r = b.reshape(4, 8).T.reshape(-1)  # views and a copy, bytes unchanged
    u = np.array(r.view(mx.uint8))
    np.testing.assert_array_equal(u, INTS.view(np.uint8).reshape(4, 8).T.reshape(-1))


@cmlx_semantics
def test_vmap_and_grad_paths():
    b = mx.array(INTS).view(mx.bool_).reshape(8, 4)
    clean = (INTS.view(np.uint8) != 0).reshape(8, 4)
    out = mx.vmap(lambda x: mx.sort(x))(b)
    np.testing.assert_array_equal(np.array(out), np.sort(clean, axis=-1))
    out = mx.vmap(lambda x: mx.cumsum(x))(b)
    np.testing.assert_array_equal(np.array(out), np.cumsum(clean, axis=-1))
    # a raw bool as a constant inside a differentiated function
    g = mx.grad(lambda x: (x * b.astype(mx.float32)).sum())(mx.ones((8, 4)))
    np.testing.assert_array_equal(np.array(g), clean.astype(np.float32))


def test_printed_form():
    b = mx.array(np.array([256, 1], dtype=np.int16)).view(mx.bool_)
    assert repr(b) == "array([False, True, True, False], dtype=bool)"


@needs_oracle
def test_matches_mlx():
    for name, a, ref in _layouts():
        ours = np.array(a.view(mx.bool_).view(mx.int32))
        theirs = np.array(mlx_ref.array(np.ascontiguousarray(ref)).view(mlx_ref.bool_)
                          .view(mlx_ref.int32))
        np.testing.assert_array_equal(ours, theirs)
    ours = mx.array(np.array([256, 1], dtype=np.int16)).view(mx.bool_)
    theirs = mlx_ref.array(np.array([256, 1], dtype=np.int16)).view(mlx_ref.bool_)
    assert repr(ours) == repr(theirs)
    np.testing.assert_array_equal(np.array(ours).view(np.uint8), np.array(theirs).view(np.uint8))
