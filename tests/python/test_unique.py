"""mx.unique (MLX 0.32.4): sorted unique elements of the flattened array
with a fixed output size, padded (fill_value, or the smallest element) or
truncated; index of first occurrences (uint32), inverse (uint32, a's shape),
counts (int32).  NumPy's np.unique is the reference for the unique part."""
import numpy as np
import pytest

from conftest import NP_DTYPE, dt, mlx_ref, mx, needs_oracle, sample


def np_unique_padded(x, size, fill=None):
    """What mx.unique gives, from np.unique."""
    flat = x.reshape(-1)
    vals, idx, inv, cnt = np.unique(flat, return_index=True, return_inverse=True,
                                    return_counts=True, equal_nan=False)
    k = len(vals)
    pad = size - k
    f = vals[0] if fill is None else fill
    order = np.argsort(flat, kind="stable")
    if pad >= 0:
        vals = np.concatenate([vals, np.full(pad, f, dtype=flat.dtype)])
        idx = np.concatenate([idx, np.full(pad, order[0])])
        cnt = np.concatenate([cnt, np.zeros(pad, np.int64)])
    else:
        vals, idx, cnt = vals[:size], idx[:size], cnt[:size]
        inv = np.minimum(inv, size - 1)
    return vals, idx, inv.reshape(x.shape), cnt


def outputs(a, size, **kw):
    return mx.unique(a, size, True, True, True, **kw)


@pytest.mark.parametrize("name", ["int32", "uint8", "int64", "float32", "float16", "bool_"])
@pytest.mark.parametrize("shape", [(7,), (3, 4), ()])
def test_against_numpy(name, shape):
    x = sample(name, shape, lo=-3, hi=3, seed=len(shape))
    a = mx.array(x, dtype=dt(name))
    k = len(np.unique(x))
    for size in (k, k + 2, max(k - 1, 1)):
        want = np_unique_padded(x, size)
        got = outputs(a, size, stream=mx.cpu)
        assert [g.dtype for g in got] == [dt(name), mx.uint32, mx.uint32, mx.int32]
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_array_equal(np.array(g), w.astype(np.array(g).dtype))


def test_docstring_example():
    a = mx.array([2, 1, 2, 3, 1])
    assert mx.unique(a, 3).tolist() == [1, 2, 3]
    assert mx.unique(a, 5).tolist() == [1, 2, 3, 1, 1]
    v, i, inv, c = mx.unique(a, 4, True, True, True, fill_value=0)
    assert (v.tolist(), i.tolist(), inv.tolist(), c.tolist()) == (
        [1, 2, 3, 0], [1, 0, 3, 1], [1, 0, 1, 2, 0], [2, 2, 1, 0])
    # only the asked-for arrays, in the order values, index, inverse, counts
    v, c = mx.unique(a, 3, return_counts=True)
    assert c.tolist() == [2, 2, 1]
    v, inv = mx.unique(a, 3, return_inverse=True)
    assert inv.tolist() == [1, 0, 1, 2, 0]


def test_float_special_values():
    nan = float("nan")
    v, i, inv, c = outputs(mx.array([nan, 1.0, nan, -0.0, 0.0]), 5)
    # NaNs are each their own element; -0.0 and 0.0 are one (the first kept)
    np.testing.assert_array_equal(np.array(v), [-0.0, 1.0, nan, nan, -0.0])
    assert np.signbit(np.array(v)[0])
    assert i.tolist() == [3, 1, 0, 2, 3]
    assert inv.tolist() == [2, 1, 3, 0, 0]
    assert c.tolist() == [2, 1, 1, 1, 0]


def test_fill_value_forms():
    a = mx.array([2, 1, 2])
    assert mx.unique(a, 4, fill_value=7.5).tolist() == [1, 2, 7, 7]  # cast to a's dtype
    assert mx.unique(a, 3, fill_value=mx.array(9, mx.int64)).dtype == mx.int32
    assert mx.unique(a, 3, fill_value=mx.array([[5]])).tolist() == [1, 2, 5]
    u8 = mx.array([1, 2], mx.uint8)
    assert mx.unique(u8, 3, fill_value=True).tolist() == [1, 2, 1]
    # a 0-d input: the inverse is 0-d too
    v, i, inv, c = outputs(mx.array(5), 3)
    assert (v.tolist(), i.tolist(), inv.shape, c.tolist()) == ([5, 5, 5], [0, 0, 0], (), [1, 0, 0])


def test_empty_and_zero_size():
    e = mx.array([], mx.float16)
    v, i, inv, c = outputs(e, 3, fill_value=1)
    assert (v.tolist(), i.tolist(), inv.shape, c.tolist()) == ([1, 1, 1], [0, 0, 0], (0,), [0, 0, 0])
    assert v.dtype == mx.float16
    v, i, inv, c = outputs(e, 0)
    assert v.shape == i.shape == inv.shape == c.shape == (0,)
    # a size of 0 on a non-empty input: the inverse is all zeros
    v, i, inv, c = outputs(mx.array([3, 1]), 0)
    assert v.shape == (0,) and inv.tolist() == [0, 0]


def test_complex_orders_by_real_then_imaginary():
    v, c = mx.unique(mx.array([1 + 2j, 1, 1 + 2j, 0 + 5j]), 3, return_counts=True)
    assert v.tolist() == [5j, 1, 1 + 2j] and c.tolist() == [1, 1, 2]


def test_gradient_flows_to_the_chosen_elements():
    x = mx.array([3.0, 1.0, 2.0, 1.0])
    g = mx.grad(lambda x: (mx.unique(x, 2) * mx.array([1.0, 10.0])).sum())(x)
    assert g.tolist() == [0, 1, 10, 0]  # the first of equal elements in sorted order
    # the default fill is the smallest element, so it gets the padding's share
    g = mx.grad(lambda x: mx.unique(x, 5).sum())(x)
    assert g.tolist() == [1, 3, 1, 0]
    g = mx.grad(lambda x: mx.unique(x, 5, fill_value=0.0).sum())(x)
    assert g.tolist() == [1, 1, 1, 0]


def test_vmap_and_compile():
    rows = mx.array([[1, 1, 2], [3, 2, 3]])
    assert mx.vmap(lambda r: mx.unique(r, 2))(rows).tolist() == [[1, 2], [2, 3]]
    f = mx.compile(lambda r: mx.unique(r, 3, return_counts=True))
    v, c = f(mx.array([4, 4, 1, 4]))
    assert v.tolist() == [1, 4, 1] and c.tolist() == [1, 3, 0]


def test_errors():
    a = mx.array([2, 1, 2])
    with pytest.raises(ValueError, match=r"\[unique\] Received negative size -1\."):
        mx.unique(a, -1)
    with pytest.raises(ValueError, match=r"\[unique\] A fill value is required for an empty"):
        mx.unique(mx.array([]), 2)
    with pytest.raises(ValueError, match=r"Fill value must have one element, but got shape \(2\)"):
        mx.unique(a, 4, fill_value=mx.array([1, 2]))
    with pytest.raises(ValueError, match="Converting -1 to uint8 would result in overflow"):
        mx.unique(mx.array([1], mx.uint8), 2, fill_value=-1)
    with pytest.raises(ValueError, match="Invalid type str received in array initialization"):
        mx.unique(a, 4, fill_value="x")
    for bad in [lambda: mx.unique(a), lambda: mx.unique(a, 3.0), lambda: mx.unique([1, 2], 2),
                lambda: mx.unique(3, 1)]:
        with pytest.raises(TypeError, match=r"unique\(\): incompatible function arguments"):
            bad()


@needs_oracle
def test_against_mlx():
    nan = float("nan")
    cases = [([2, 1, 2, 3, 1], "int32", {}), ([[3.0, nan], [1.0, 1.0]], "float32", {}),
             ([5, 5, 5], "uint16", {"fill_value": 9}), ([1.5, -2.0, 1.5], "bfloat16", {}),
             ([True, False, True], "bool_", {})]
    for data, name, kw in cases:
        x = np.array(data, dtype=NP_DTYPE[name])
        for size in (0, 1, 2, 4, 6):
            if size == 0 and "fill_value" in kw:
                continue
            ours = outputs(mx.array(x, dtype=dt(name)), size, stream=mx.cpu, **kw)
            theirs = mlx_ref.unique(mlx_ref.array(x, dtype=dt(name, mlx_ref)), size, True, True,
                                    True, stream=mlx_ref.cpu, **kw)
            for o, t in zip(ours, theirs):
                assert o.shape == tuple(t.shape) and str(o.dtype)[-6:] == str(t.dtype)[-6:]
                np.testing.assert_array_equal(np.array(o.astype(mx.float32)),
                                              np.array(t.astype(mlx_ref.float32)))
    assert mx.unique.__doc__.splitlines()[0] == mlx_ref.unique.__doc__.splitlines()[0]
