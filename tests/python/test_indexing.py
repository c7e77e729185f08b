"""Indexing: a[...] reads and writes (ints, slices, None, Ellipsis, integer
arrays, lists, NumPy arrays and their combinations under NumPy's rules),
boolean-mask assignment, array.at[...] updates that accumulate, take /
take_along_axis / put_along_axis, out-of-range indices (clamped reads,
dropped writes, or IndexError under CMLX_CHECK_INDICES=1), and error types.
NumPy is the value reference; error types are MLX's where MLX has one."""

import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import (DTYPES, assert_values, cmlx_only, dtype_name, ev, mlx_ref, mx, needs_oracle,
                      sample, to_mx, to_np)

SHAPE = (2, 3, 4, 5)


def base(name="int32", shape=SHAPE):
    """(subject array, NumPy array) with distinct values."""
    x = sample(name, shape, lo=-50, hi=50, seed=3) if name != "int32" else \
        np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    return to_mx(x, name), x


def to_subject(idx, keep_numpy=False):
    """An index with its NumPy arrays turned into subject arrays."""
    if isinstance(idx, tuple):
        return tuple(to_subject(i, keep_numpy) for i in idx)
    if isinstance(idx, np.ndarray) and not keep_numpy:
        return mx.array(idx)
    return idx


A = np.array
# Index expressions valid for SHAPE, read and written against NumPy.
CASES = [
    0, -1, (1, 2), (-1, -2, 3), (0, 0, 0, 0), (1, -3, -4, -5),
    slice(None), slice(1, None), slice(None, None, -1), slice(None, None, -2), slice(-5, 10),
    slice(10, 20), slice(3, 0, -1), slice(-1, -4, -1), slice(None, -1),
    (slice(None), slice(1, 3)), (slice(None), slice(None, None, -1), slice(1, None, 2)),
    (Ellipsis, 1), (1, Ellipsis), (Ellipsis,), (None,), (None, Ellipsis, None),
    (0, None, slice(None, None, 2)), (), (slice(None), None, 1, None),
    A([1, 0]), (slice(None), A([2, 0, 1])), (A([[0, 1], [1, 0]]),),
    (A([0, 1]), A([1, 2])), (A([0, 1]), slice(None), A([1, 2])),
    (slice(None), A([0, 1]), A([1, 2])), (0, slice(None), A([0, 1])),
    (slice(None), 0, slice(None), A([0, 1])), (A([1]), None, A([2])),
    (None, slice(None), A([0, 1]), None, A([1, 2])), (Ellipsis, A([4, 0])),
    (A(1),), (A(1), A([0, 2])), (slice(1, None), A([-1, -3])),
    (slice(None, None, -1), A([0, 2]), slice(None, None, 2)),
    (A([[1], [0]]), A([0, 2, 1])), (A([0, 1], dtype=np.uint8), 1, A([3, 3], dtype=np.int64)),
    (Ellipsis, A([0, 2], dtype=np.int16), slice(1, 4)), (A([], dtype=np.int32),),
    (slice(None), A([1, 1, 0])),  # repeated (for writes: the last one wins)
]
IDS = [repr(c).replace("array", "A").replace(" ", "") for c in CASES]


# ------------------------------------------------------------ reading

@pytest.mark.parametrize("idx", CASES, ids=IDS)
@pytest.mark.parametrize("name", ["int32", "float32", "bool_"])
def test_read_matches_numpy(idx, name):
    a, x = base(name)
    got = ev(a[to_subject(idx)])
    assert_values(to_np(got), x[idx], name, msg=repr(idx))
    assert dtype_name(got.dtype) == name


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("idx", [(1, slice(None, None, -1)), (A([1, 0]), slice(None), A([2, 0])),
                                 (Ellipsis, A([[4], [0]]))], ids=["basic", "advanced", "ellipsis"])
def test_read_every_dtype(name, idx):
    a, x = base(name)
    assert_values(to_np(ev(a[to_subject(idx)])), x[idx], name)


def _layouts():
    x = np.arange(2 * 3 * 4 * 5, dtype=np.int32).reshape(5, 4, 3, 2)
    yield "transposed", mx.array(x).T, x.T
    y = np.arange(4 * 7 * 9 * 5, dtype=np.int32).reshape(4, 7, 9, 5)
    yield "sliced", mx.array(y)[::2, 1:7:2, ::-2][:, :, :4], y[::2, 1:7:2, ::-2][:, :, :4]
    z = np.arange(5, dtype=np.int32)
    yield "broadcast", mx.broadcast_to(mx.array(z), SHAPE), np.broadcast_to(z, SHAPE)


@pytest.mark.parametrize("layout", ["transposed", "sliced", "broadcast"])
@pytest.mark.parametrize("idx", CASES[::3], ids=IDS[::3])
def test_read_strided_inputs(layout, idx):
    a, x = {k: (a, x) for k, a, x in _layouts()}[layout]
    assert a.shape == x.shape == SHAPE
    assert_values(to_np(ev(a[to_subject(idx)])), x[idx], "int32", msg=repr(idx))


def test_read_lists_and_numpy_scalars():
    a, x = base()
    assert_values(to_np(ev(a[[1, 0]])), x[[1, 0]], "int32")
    assert_values(to_np(ev(a[:, [[0], [2]], [1, 3]])), x[:, [[0], [2]], [1, 3]], "int32")
    assert_values(to_np(ev(a[np.int64(1), np.int32(-1)])), x[1, -1], "int32")
    assert_values(to_np(ev(a[mx.array(1)])), x[1], "int32")
    assert_values(to_np(ev(a[mx.array([[1]], dtype=mx.uint32)])), x[[[1]]], "int32")


@cmlx_only
def test_read_numpy_index_arrays():
    """MLX refuses NumPy arrays as indices; cmlx takes integer ones."""
    a, x = base()
    for idx in [A([1, 0]), (slice(None), A([2, 2])), (A([0, 1]), 0, A([[1], [2]]))]:
        assert_values(to_np(ev(a[idx])), x[idx], "int32")
    with pytest.raises(ValueError, match="boolean indices are not yet supported"):
        a[A([True, False])]


def test_read_zero_dim_and_empty():
    s = mx.array(5)
    assert s[None].shape == (1,) and s[...].item() == 5 and s[()].item() == 5
    assert s[None, None].shape == (1, 1)
    e = mx.zeros((0, 3))
    assert e[:, 1].shape == (0,) and e[1:].shape == (0, 3)
    assert e[mx.array([], dtype=mx.int32)].shape == (0, 3)


def test_basic_indexing_is_a_view():
    """Ints, slices, None and Ellipsis share the input's buffer."""
    a = mx.arange(1 << 20, dtype=mx.float32).reshape(1 << 10, 1 << 10)
    mx.eval(a)
    before = mx.get_active_memory()
    views = [a[3], a[::2, 1::3], a[None, ..., 5], a[::-1], a[7, None, 2:9]]
    mx.eval(*views)
    assert mx.get_active_memory() - before < (1 << 16)
    assert views[1][2, 3].item() == a[4, 10].item()


# ------------------------------------------------------------ reading: errors

@pytest.mark.parametrize("idx, exc, msg", [
    (1.5, ValueError, "Cannot index mlx array using the given type"),
    ("x", ValueError, "Cannot index mlx array using the given type"),
    (True, ValueError, "Cannot index mlx array using the given type"),
    ((0, 0, 0, 0, 0), ValueError, "Too many indices for array with 4 dimensions"),
    ((Ellipsis, 0, Ellipsis), ValueError, "An index can only have a single ellipsis"),
    (slice(0, 1.5), ValueError, "Slice indices must be integers or None"),
])
def test_read_errors(idx, exc, msg):
    a, _ = base()
    with pytest.raises(exc, match=msg):
        a[idx]


def test_read_error_arrays():
    a, _ = base()
    with pytest.raises(ValueError, match="boolean indices are not yet supported"):
        a[mx.array([True, False])]
    with pytest.raises(ValueError, match="boolean indices are not yet supported"):
        a[a > 3]
    with pytest.raises(ValueError, match="boolean indices are not yet supported"):
        a[[True, False]]
    with pytest.raises(ValueError, match=r"\[gather\] Got indices with invalid dtype"):
        a[mx.array([0.5])]
    with pytest.raises(ValueError, match=r"\[gather\] Got indices with invalid dtype"):
        a[[]]
    with pytest.raises(ValueError, match="too many indices for array: array is 0-dimensional"):
        mx.array(3)[0]
    with pytest.raises(ValueError, match="too many indices for array: array is 0-dimensional"):
        mx.array(3)[:]
    with pytest.raises(ValueError, match="Slice indices must be integers or None"):
        a[mx.array(1):]


@cmlx_only
def test_read_static_errors_cmlx():
    """MLX reads out of bounds for these (or crashes); cmlx raises."""
    a, _ = base()
    for idx in [2, -3, (0, 3), (0, 0, -5)]:
        with pytest.raises(IndexError, match="out of bounds"):
            a[idx]
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        a[::0]


@cmlx_only
def test_read_out_of_range_arrays_clamp():
    """Default mode: array indices past the end are clamped (MLX reads
    whatever memory is there)."""
    a = mx.arange(10)
    assert a[mx.array([3, 12, -1, -11, -30])].tolist() == [3, 9, 9, 0, 0]
    assert mx.take(a, mx.array([100])).tolist() == [9]


# ------------------------------------------------------------ writing

def _value_for(shape, name, seed=1):
    return sample(name, shape, lo=-9, hi=9, seed=seed)


def _int_and_array_apart(idx):
    """An int and an array separated by a slice: NumPy puts the broadcast
    axes first; MLX's __setitem__ (not its __getitem__) does not."""
    if not isinstance(idx, tuple):
        return False
    kinds = ["a" if isinstance(e, (int, np.ndarray)) else "s" if isinstance(e, slice) else "n"
             for e in idx]
    adv = [i for i, k in enumerate(kinds) if k == "a"]
    has_int = any(isinstance(idx[i], int) for i in adv)
    return has_int and len(adv) > 1 and adv[-1] - adv[0] + 1 != len(adv)


WRITE_CASES = [pytest.param(c, marks=cmlx_only) if _int_and_array_apart(c) else c for c in CASES]


@pytest.mark.parametrize("idx", WRITE_CASES, ids=IDS)
@pytest.mark.parametrize("name", ["int32", "float32"])
def test_write_matches_numpy(idx, name):
    a, x = base(name)
    target = x[idx].shape
    v = _value_for(target, name)
    x2 = x.copy()
    x2[idx] = v
    a[to_subject(idx)] = to_mx(v, name)
    assert_values(to_np(ev(a)), x2, name, msg=repr(idx))


@pytest.mark.parametrize("idx", WRITE_CASES[::2], ids=IDS[::2])
def test_write_scalar_and_broadcast(idx):
    a, x = base()
    x2 = x.copy()
    x2[idx] = 7
    a[to_subject(idx)] = 7
    assert_values(to_np(ev(a)), x2, "int32", msg=repr(idx))
    target = x[idx].shape
    if target:  # the last axis only, plus an extra leading 1
        v = np.arange(target[-1], dtype=np.int32) - 100
        a, x = base()
        x2 = x.copy()
        x2[idx] = v
        a[to_subject(idx)] = mx.array(v.reshape((1,) + v.shape))
        assert_values(to_np(ev(a)), x2, "int32", msg=repr(idx))


@pytest.mark.parametrize("name", DTYPES)
def test_write_every_dtype(name):
    a, x = base(name)
    idx = (A([1, 0]), slice(None, None, 2), 1)
    v = _value_for(x[idx].shape, name)
    x2 = x.copy()
    x2[idx] = v
    a[to_subject(idx)] = to_mx(v, name)
    assert_values(to_np(ev(a)), x2, name)
    w = _value_for((2, 1, 5), name, seed=2)
    a[0, 1:3, ::-3] = to_mx(w, name)
    x2[0, 1:3, ::-3] = w
    assert_values(to_np(ev(a)), x2, name)


def test_write_casts_to_the_array_dtype():
    a = mx.arange(6).reshape(2, 3)
    a[0] = 1.5
    assert a.dtype == mx.int32 and a.tolist() == [[1, 1, 1], [3, 4, 5]]
    a[1] = mx.array([2.7, -3.2, 9.9])
    assert a.dtype == mx.int32 and a.tolist()[1] == [2, -3, 9]
    a[:, 0] = np.array([5.5, 6.5])
    assert a.tolist() == [[5, 1, 1], [6, -3, 9]]
    f = mx.zeros((2,), dtype=mx.float16)
    f[0] = 1e-3
    assert f.dtype == mx.float16 and abs(f[0].item() - 1e-3) < 1e-5
    u = mx.zeros((3,), dtype=mx.uint8)
    with pytest.raises(ValueError, match="Converting -1 to uint8 would result in overflow"):
        u[0] = -1
    with pytest.raises(ValueError, match="Converting 300 to uint8 would result in overflow"):
        u[0] = 300


def test_write_rebinds_the_array_object():
    """MLX: the object assigned through is updated; other names for the
    same object see it, views and copies taken earlier do not."""
    a = mx.arange(4)
    b = a
    c = a[:]
    d = mx.array(a)
    e = a[1:3]
    a[1] = 10
    assert a.tolist() == [0, 10, 2, 3] and b.tolist() == [0, 10, 2, 3]
    assert c.tolist() == [0, 1, 2, 3] and d.tolist() == [0, 1, 2, 3] and e.tolist() == [1, 2]
    a[mx.array([0])] = 7
    assert b.tolist() == [7, 10, 2, 3]


def test_write_repeated_indices_last_wins():
    a = mx.zeros((4,), dtype=mx.int32)
    a[mx.array([0, 0, 3, 3, 3])] = mx.array([1, 2, 3, 4, 5])
    assert a.tolist() == [2, 0, 0, 5]
    a = mx.arange(12).reshape(3, 4)
    a[[0, 0, 1]] = mx.array([1, 2, 3])[:, None]
    assert a.tolist() == [[2, 2, 2, 2], [3, 3, 3, 3], [8, 9, 10, 11]]


def test_write_errors():
    a = mx.arange(12).reshape(3, 4)
    with pytest.raises(ValueError):
        a[0] = mx.array([1, 2])
    with pytest.raises(ValueError, match="Cannot broadcast array of shape"):
        a[0] = mx.ones((2, 1, 4))
    with pytest.raises(ValueError, match="Invalid type str received in array initialization"):
        a[0] = "x"
    with pytest.raises(ValueError, match="Invalid type list received in array initialization"):
        a[0] = [1, 2, 3, 4]
    with pytest.raises(ValueError, match="Cannot index mlx array using the given type"):
        a[1.0] = 1
    with pytest.raises(ValueError, match=r"\[scatter\] Got indices with invalid dtype"):
        a[mx.array([0.0])] = 1
    with pytest.raises(ValueError, match="Too many indices"):
        a[0, 0, 0] = 1
    a[0] = mx.ones((1, 1, 4))  # extra leading 1s are fine
    assert a[0].tolist() == [1, 1, 1, 1]
    assert a.tolist()[1:] == [[4, 5, 6, 7], [8, 9, 10, 11]]  # failed writes changed nothing


@cmlx_only
def test_write_out_of_range():
    a = mx.arange(4)
    with pytest.raises(IndexError, match="out of bounds"):
        a[4] = 1
    with pytest.raises(IndexError, match="out of bounds"):
        a[-5] = 1
    a[mx.array([7, -9, 1])] = mx.array([5, 6, 7])  # dropped writes (MLX writes out of bounds)
    assert a.tolist() == [0, 7, 2, 3]


# ------------------------------------------------------------ boolean masks

@pytest.mark.parametrize("kind", ["mlx", "numpy", "list"])
def test_mask_scalar_value(kind):
    a, x = base(shape=(4, 5, 6))
    m = np.arange(20).reshape(4, 5) % 3 == 0
    mask = {"mlx": mx.array(m), "numpy": m, "list": m.tolist()}[kind]
    a[mask] = -1
    x2 = x.copy()
    x2[m] = -1
    assert_values(to_np(ev(a)), x2, "int32")


@pytest.mark.parametrize("mshape", [(4,), (4, 5), (4, 5, 6)])
def test_mask_value_in_order(mshape):
    a, x = base(shape=(4, 5, 6))
    m = (np.arange(int(np.prod(mshape))).reshape(mshape) * 7) % 5 < 2
    window = x.shape[len(mshape):]
    n = int(m.sum())
    v = -np.arange(n * int(np.prod(window)), dtype=np.int32).reshape((n,) + window) - 1
    a[mx.array(m)] = mx.array(v)
    x2 = x.copy()
    x2[m] = v
    assert_values(to_np(ev(a)), x2, "int32")
    # more elements than needed: the first ones are used, in order
    a, _ = base(shape=(4, 5, 6))
    extra = np.concatenate([v, v[:1] * 0 + 99], axis=0)
    a[mx.array(m)] = mx.array(extra)
    assert_values(to_np(ev(a)), x2, "int32")


def test_mask_one_window_broadcast():
    a, x = base(shape=(2, 3, 4))
    m = np.array([[True, False, True], [False, True, False]])
    a[mx.array(m)] = mx.array([100, 101, 102, 103])
    x2 = x.copy()
    x2[m] = [100, 101, 102, 103]
    assert_values(to_np(ev(a)), x2, "int32")


def test_mask_python_bool_and_zero_d():
    a = mx.arange(6).reshape(2, 3)
    a[True] = 7
    assert a.tolist() == [[7] * 3] * 2
    a[False] = 1
    assert a.tolist() == [[7] * 3] * 2
    a[mx.array(True)] = mx.array([1, 2, 3])
    assert a.tolist() == [[1, 2, 3], [1, 2, 3]]


@cmlx_only
def test_mask_numpy_zero_d():
    """MLX refuses a 0-d NumPy bool mask (TypeError); cmlx takes it."""
    a = mx.arange(6).reshape(2, 3)
    a[np.array(False)] = 0
    assert a.tolist() == [[0, 1, 2], [3, 4, 5]]
    a[np.array(True)] = 0
    assert a.tolist() == [[0, 0, 0], [0, 0, 0]]


def test_mask_casts_and_full_shape():
    a = mx.arange(24).reshape(2, 3, 4)
    m = mx.arange(24).reshape(2, 3, 4) > 20
    a[m] = mx.array([1.5, 2.5, 3.5])
    assert a.dtype == mx.int32 and a.reshape(-1).tolist()[-4:] == [20, 1, 2, 3]
    a[m] = 9.7
    assert a.reshape(-1).tolist()[-3:] == [9, 9, 9]


def test_mask_errors():
    a = mx.arange(1000).reshape(10, 10, 10)
    m = mx.arange(100).reshape(10, 10) % 2 == 0
    a[m] = 0  # selects a[i, j, :]
    assert to_np(a)[0, 0].tolist() == [0] * 10 and to_np(a)[0, 1, 0] == 10
    for bad in [m[None], m[..., None], mx.array([True]), mx.zeros((0,), dtype=mx.bool_)]:
        with pytest.raises(ValueError, match="boolean mask should have the same shape"):
            a[bad] = 1
    with pytest.raises(ValueError, match="broadcastable with the last 1 dimensions"):
        a[m] = mx.zeros((2, 5, 10))
    with pytest.raises(ValueError):
        a[m] = mx.zeros((7,))  # does not broadcast with the window
    with pytest.raises(ValueError):
        a[m] = mx.zeros((3, 7))  # a stack of windows that do not fit


@cmlx_only
def test_mask_too_few_elements_is_value_error():
    """Too few elements for the True entries: ValueError (MLX: RuntimeError
    from eval)."""
    a = mx.arange(24).reshape(2, 3, 4)
    m = mx.array([[True, False, True], [False, True, False]])
    with pytest.raises(ValueError, match="Source does not have enough elements"):
        a[m] = mx.arange(8).reshape(2, 4)
        mx.eval(a)
    b = mx.arange(6)
    with pytest.raises(ValueError, match="Source does not have enough elements"):
        b[b > 1] = mx.array([1, 2])
        mx.eval(b)


@cmlx_only
def test_mask_in_tuple_or_at_is_refused():
    """MLX fails with a SystemError here."""
    a = mx.arange(6).reshape(2, 3)
    with pytest.raises(ValueError, match="boolean indices are not yet supported"):
        a[mx.array([True, False]), 0] = 1
    with pytest.raises(ValueError, match="boolean indices are not yet supported"):
        a.at[mx.array([True, False])].add(1)


# ------------------------------------------------------------ array.at

AT_CASES = [
    (10,), A([0, 0, 3, 3, 3, 9]),
    (4, 5), (A([0, 1, 0, 0]), A([2, 2, 2, 4])),
    (4, 5), (slice(None), A([0, 0, 4])),
    (4, 5), (A([[1], [1]]), slice(1, 4)),
    (4, 5), (slice(1, None, 2), slice(None, None, -2)),
    (3, 4, 2), (Ellipsis, A([1, 1])),
    (3, 4, 2), (A([2, 2]), 1),
]
AT_PAIRS = list(zip(AT_CASES[::2], AT_CASES[1::2]))


@pytest.mark.parametrize("shape, idx", AT_PAIRS, ids=[repr(p[1]).replace(" ", "") for p in AT_PAIRS])
@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide", "maximum", "minimum"])
def test_at_accumulates_like_numpy_ufunc_at(shape, idx, op):
    x = sample("float32", shape, lo=0.5, hi=3, seed=5)
    ufunc = getattr(np, op)
    target = x[idx].shape
    # np.ufunc.at applies one value per indexed position
    v = sample("float32", target, lo=0.5, hi=2, seed=6)
    x2 = x.copy()
    ufunc.at(x2, idx, v)
    got = getattr(mx.array(x).at[to_subject(idx)], op)(mx.array(v))
    assert_values(to_np(ev(got)), x2, "float32", rtol=1e-5, msg=f"{op} {idx!r}")


def test_at_scalar_values_and_dtypes():
    a = mx.zeros((4,), dtype=mx.int32)
    idx = mx.array([0, 0, 1, 3, 3, 3])
    assert a.at[idx].add(1).tolist() == [2, 1, 0, 3]
    assert a.at[idx].add(1.5).tolist() == [2, 1, 0, 3]  # 1.5 -> int32 1 first
    assert a.at[idx].subtract(2).tolist() == [-4, -2, 0, -6]
    assert mx.ones(4).at[idx].multiply(2).tolist() == [4, 2, 1, 8]
    assert mx.ones(4).at[idx].divide(2).tolist() == [0.25, 0.5, 1, 0.125]
    assert mx.ones(4, dtype=mx.int32).at[idx].divide(2).tolist() == [0, 0, 1, 0]
    assert (mx.ones((2, 2), dtype=mx.int32) * 5).at[1:].divide(2).tolist() == [[5, 5], [0, 0]]
    assert mx.ones(4).at[idx].maximum(mx.array([5, 1, 2, 3, 4, 9])).tolist() == [5, 2, 1, 9]
    assert mx.ones(4).at[idx].minimum(mx.array([5, 1, 2, 3, 4, -9])).tolist() == [1, 1, 1, -9]
    u = mx.array([3, 5], dtype=mx.uint8)
    assert u.at[mx.array([0, 1, 1])].multiply(mx.array([100, 100, 100], dtype=mx.uint8)).tolist() == [44, 80]
    assert mx.array([1, 2], dtype=mx.uint32).at[0].subtract(1).tolist() == [0, 2]
    b = mx.array([True, False])
    assert b.at[mx.array([0, 1, 1])].add(mx.array([True, True, True])).tolist() == [True, True]
    h = mx.array([1.5, 2.5], dtype=mx.float16).at[mx.array([0, 0, 0])].add(
        mx.array([0.001] * 3, dtype=mx.float16))
    assert h.dtype == mx.float16 and abs(h[0].item() - 1.50293) < 1e-4  # rounded per step


def test_at_returns_new_array_and_keeps_original():
    a = mx.ones(3)
    r = a.at[0].add(5)
    assert r.tolist() == [6, 1, 1] and a.tolist() == [1, 1, 1]
    assert a.at[0][1].add(1).tolist() == [1, 2, 1]  # re-indexing replaces the index
    assert type(a.at).__name__ == "ArrayAt" and type(a.at[0]) is type(a.at)
    x = a.at[0]
    a[1] = 5  # rebinds a; x keeps the array it was taken from (as in MLX)
    assert x.add(1).tolist() == [2, 1, 1] and a.tolist() == [1, 5, 1]


def test_at_nan_and_complex():
    n = float("nan")
    got = mx.zeros(3).at[mx.array([0, 0])].maximum(mx.array([n, 1.0])).tolist()
    assert got == [1, 0, 0]
    got = mx.array([n, 1, 2]).at[mx.array([0, 1])].maximum(mx.array([5.0, n])).tolist()
    assert got[0] == 5 and np.isnan(got[1]) and got[2] == 2
    c = mx.array([1 + 2j, 3 + 0j]).at[mx.array([0, 1])].maximum(mx.array([1 + 3j, 2 + 5j]))
    assert c.tolist() == [1 + 3j, 3 + 0j]
    c = mx.array([1 + 2j, 3 + 0j]).at[mx.array([0, 1])].multiply(mx.array([1 + 3j, 2 + 5j]))
    assert c.tolist() == [-5 + 5j, 6 + 15j]


def test_at_errors():
    a = mx.ones(3)
    with pytest.raises(ValueError, match="Must give indices to array.at"):
        a.at.add(1)
    with pytest.raises(TypeError):
        a.at[0].add()
    with pytest.raises(TypeError):
        type(a.at)(a)
    with pytest.raises(ValueError, match="Invalid type list"):
        a.at[0].add([1, 2])
    with pytest.raises(ValueError):
        mx.array([True, False]).at[0].subtract(True)


def test_at_large_repeated_indices_deterministic():
    """Many repeated indices through the threaded scatter: equal to a
    serial accumulation and identical from run to run."""
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 257, size=300_000)
    v = rng.standard_normal(300_000).astype(np.float32)
    expect = np.zeros(257, dtype=np.float64)
    np.add.at(expect, idx, v.astype(np.float64))
    first = to_np(ev(mx.zeros(257).at[mx.array(idx)].add(mx.array(v))))
    assert np.allclose(first, expect, rtol=1e-4, atol=1e-3)
    for _ in range(3):
        again = to_np(ev(mx.zeros(257).at[mx.array(idx)].add(mx.array(v))))
        assert np.array_equal(first, again)
    # rows: the window-split path
    rows = rng.integers(0, 5, size=40)
    upd = rng.standard_normal((40, 3000)).astype(np.float32)
    e2 = np.zeros((5, 3000), dtype=np.float32)
    np.add.at(e2, rows, upd)
    got = to_np(ev(mx.zeros((5, 3000)).at[mx.array(rows)].add(mx.array(upd))))
    assert np.allclose(got, e2, rtol=1e-5, atol=1e-4)
    # last write wins at scale too
    a = mx.zeros(257, dtype=mx.int32)
    a[mx.array(idx)] = mx.arange(300_000)
    last = np.zeros(257, dtype=np.int64)
    last[idx] = np.arange(300_000)
    assert np.array_equal(to_np(ev(a)), last)


# ------------------------------------------------------------ take & co

@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("name", ["int32", "float32", "bool_", "complex64"])
def test_take(axis, name):
    a, x = base(name, shape=(3, 4, 5))
    for ind in [A([0, 2, -1]), A([[1, 0], [2, 2]]), A(1)]:
        got = mx.take(a, mx.array(ind), axis=axis)
        assert_values(to_np(ev(got)), np.take(x, ind, axis=axis), name, msg=repr(ind))
    assert_values(to_np(ev(mx.take(a, 2, axis=axis))), np.take(x, 2, axis=axis), name)


@cmlx_only
@pytest.mark.parametrize("axis", [None, 0, 2])
def test_take_empty_and_negative_int(axis):
    """MLX fails on these (a squeeze of an empty axis)."""
    a, x = base("float32", shape=(3, 4, 5))
    ind = A([], dtype=np.int32).reshape(0, 2)
    assert_values(to_np(ev(mx.take(a, mx.array(ind), axis=axis))), np.take(x, ind, axis=axis), "float32")
    assert_values(to_np(ev(mx.take(a, -1, axis=axis))), np.take(x, -1, axis=axis), "float32")
    with pytest.raises(IndexError, match="out of bounds"):
        mx.take(a, 60 if axis is None else 5, axis=axis)


def test_take_errors():
    a, _ = base(shape=(3, 4))
    with pytest.raises(IndexError, match=r"\[take\] Received invalid axis 2 for array with 2 dimensions"):
        mx.take(a, mx.array([1]), 2)
    with pytest.raises(TypeError):
        mx.take(a, [1])
    with pytest.raises(TypeError):
        mx.take(a, 1.5)
    with pytest.raises(ValueError, match="Indices must be integral"):
        mx.take(a, mx.array([1.0]))
    with pytest.raises(ValueError, match="Boolean indices not supported"):
        mx.take(a, mx.array([True]))
    with pytest.raises(ValueError, match="non-empty take from an empty axis"):
        mx.take(mx.zeros((0, 3)), mx.array([0]), 0)
    assert mx.take(mx.zeros((0, 3)), mx.array([], dtype=mx.int32), 0).shape == (0, 3)
    assert mx.take(mx.array(5), mx.array([0, 0])).tolist() == [5, 5]


@pytest.mark.parametrize("axis", [0, 1, -1, 2])
def test_take_along_and_put_along(axis):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    ax, axis = axis, axis % 3  # the subject gets the axis as given
    shape = list(x.shape)
    shape[axis] = 6
    ind = rng.integers(-x.shape[axis], x.shape[axis], size=shape)
    got = mx.take_along_axis(mx.array(x), mx.array(ind), ax)
    assert_values(to_np(ev(got)), np.take_along_axis(x, ind, axis), "float32")
    # broadcasting on the other axes
    bshape = [1, 1, 1]
    bshape[axis] = 2
    bind = rng.integers(0, x.shape[axis], size=bshape)
    got = mx.take_along_axis(mx.array(x), mx.array(bind), axis)
    assert_values(to_np(ev(got)), np.take_along_axis(x, bind, axis), "float32")
    # put: unique positions per fibre so NumPy and cmlx agree exactly
    pshape = list(x.shape)
    pshape[axis] = 2
    pind = np.stack([np.zeros(pshape[:axis] + pshape[axis + 1:], dtype=np.int64),
                     np.full(pshape[:axis] + pshape[axis + 1:], -1)], axis=axis)
    vals = rng.standard_normal(pshape).astype(np.float32)
    x2 = x.copy()
    np.put_along_axis(x2, pind, vals, axis)
    got = mx.put_along_axis(mx.array(x), mx.array(pind), mx.array(vals), ax)
    assert_values(to_np(ev(got)), x2, "float32")


def test_along_axis_none_and_defaults():
    a = mx.arange(12).reshape(3, 4)
    assert mx.take_along_axis(a, mx.array([0, 5]), None).tolist() == [0, 5]
    assert mx.take_along_axis(a, mx.array([[1], [0], [3]])).tolist() == [[1], [4], [11]]  # axis=-1
    r = mx.put_along_axis(a, mx.array([0, 3]), mx.array([7, 8]))
    assert r.shape == (3, 4) and r.tolist()[0] == [7, 1, 2, 8]
    r = mx.put_along_axis(a, mx.array([[0, 0]]), mx.array([[5, 6]]), axis=1)
    assert [row[0] for row in r.tolist()] == [6, 6, 6]  # the last write wins
    r = mx.put_along_axis(a, mx.array([[0], [1], [2]]), mx.array(100), axis=1)
    assert r.tolist() == [[100, 1, 2, 3], [4, 100, 6, 7], [8, 9, 100, 11]]


def test_along_axis_errors():
    a = mx.arange(12).reshape(3, 4)
    with pytest.raises(ValueError, match="Indices of dimension 1 does not match array of dimension 2"):
        mx.take_along_axis(a, mx.array([0, 1]), axis=1)
    with pytest.raises(ValueError, match="Indices of dimension 2 does not match array of dimension 1"):
        mx.take_along_axis(a, mx.array([[0, 1]]), None)
    with pytest.raises(IndexError, match="Axis 2 is out of bounds for array with 2 dimensions"):
        mx.take_along_axis(a, mx.array([[0]]), 2)
    with pytest.raises(ValueError, match=r"Shapes \(3\) and \(2\) cannot be broadcast"):
        mx.take_along_axis(a, mx.array([[0], [1]]), axis=1)
    with pytest.raises(IndexError, match="Axis 3 is out of bounds"):
        mx.put_along_axis(a, mx.array([[0]]), mx.array([[5]]), 3)
    with pytest.raises(TypeError):
        mx.put_along_axis(a, mx.array([[0]]), 100, axis=1)
    with pytest.raises(TypeError):
        mx.take_along_axis(a, [[0]], 0)


@cmlx_only
def test_along_axis_float_indices_refused_early():
    a = mx.arange(12).reshape(3, 4)
    with pytest.raises(ValueError, match="Indices must be integral"):
        mx.take_along_axis(a, mx.array([[0.0]]), 0)
    with pytest.raises(ValueError, match="Indices must be integral"):
        mx.put_along_axis(a, mx.array([[0.0]]), mx.array([[1]]), 0)


# ------------------------------------------------------------ CMLX_CHECK_INDICES

CHECKED = r"""
import cmlx.core as mx
def expect(f, what):
    try:
        r = f()
        mx.eval(r)
    except IndexError as e:
        print(what, "IndexError", e)
    else:
        print(what, "no error")
a = mx.arange(10)
expect(lambda: a[mx.array([1, 10])], "read")
expect(lambda: a[mx.array([-11])], "read-neg")
expect(lambda: mx.take_along_axis(a, mx.array([12]), 0), "along")
expect(lambda: a.at[mx.array([3, 99])].add(1), "at")
expect(lambda: mx.put_along_axis(a, mx.array([-20]), mx.array([1]), 0), "put")
b = mx.arange(10)
b[mx.array([50])] = 1
expect(lambda: b, "setitem")
print("ok", a[mx.array([-10, 9])].tolist())
"""


@cmlx_only
@pytest.mark.parametrize("checked", [True, False])
def test_check_indices_env(checked):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    env.pop("CMLX_CHECK_INDICES", None)
    if checked:
        env["CMLX_CHECK_INDICES"] = "1"
    out = subprocess.run([sys.executable, "-c", CHECKED], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[-1] == "ok [0, 9]"
    for line in lines[:-1]:
        if checked:
            assert "IndexError" in line and "out of bounds" in line, line
        else:
            assert line.endswith("no error"), line
    if checked:
        assert "Index 10 is out of bounds for axis 0 with size 10" in out.stdout


# ------------------------------------------------------------ against MLX itself

@needs_oracle
@pytest.mark.parametrize("idx", [c for c in CASES if not isinstance(c, tuple) or
                                 not any(isinstance(e, np.ndarray) and e.dtype == np.uint8 for e in c)],
                         ids=[i for c, i in zip(CASES, IDS) if not isinstance(c, tuple) or
                              not any(isinstance(e, np.ndarray) and e.dtype == np.uint8 for e in c)])
def test_read_shapes_match_mlx(idx):
    a, _ = base()
    ref = mlx_ref.arange(int(np.prod(SHAPE)), dtype=mlx_ref.int32).reshape(SHAPE)
    conv = lambda i: tuple(conv(e) for e in i) if isinstance(i, tuple) else (  # noqa: E731
        mlx_ref.array(i) if isinstance(i, np.ndarray) else i)
    theirs = ref[conv(idx)]
    ours = a[to_subject(idx)]
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert np.array_equal(to_np(ev(ours)), np.array(theirs))


# ------------------------------------------------------------ gradients

def test_gradients_through_indexing():
    """MLX's rules: x[idx] = 0 has a zero gradient at idx and one elsewhere;
    a gather's gradient is a scatter-add (repeated indices accumulate)."""
    def zero_at(x):
        x[mx.array([0, 2])] = 0
        return x.sum()
    assert mx.grad(zero_at)(mx.array([1.0, 2.0, 3.0])).tolist() == [0, 1, 0]

    def gather(x):
        return x[mx.array([0, 0, 2])].sum()
    assert mx.grad(gather)(mx.array([1.0, 2.0, 3.0])).tolist() == [2, 0, 1]

    def along(x):
        return mx.take_along_axis(x, mx.array([[1], [1]]), 1).sum()
    assert mx.grad(along)(mx.ones((2, 3))).tolist() == [[0, 1, 0], [0, 1, 0]]

    def at_add(u):
        return mx.zeros(3).at[mx.array([1, 1])].add(u).sum()
    assert mx.grad(at_add)(mx.array([2.0, 5.0])).tolist() == [1, 1]
