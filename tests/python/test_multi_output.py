"""Multi-output nodes: divmod and custom functions are one node with sibling
outputs.  Evaluating one output computes all of them once; each output can
be dropped independently; transforms see every output of the node."""

import gc

import numpy as np
import pytest

from conftest import cmlx_only, mlx_ref, mx


def np_(a):
    return np.array(a)


LAYOUTS = {
    "contiguous": lambda x: x,
    "transposed": lambda x: x.T,
    "sliced": lambda x: x[::2, 1:],
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ["int32", "float32", "float16"])
def test_divmod_values_layouts(layout, dtype):
    rng = np.random.default_rng(3)
    xa = rng.integers(-50, 50, (6, 5)).astype(dtype)
    xb = rng.integers(1, 9, (6, 5)).astype(dtype) * np.where(rng.random((6, 5)) < 0.5, -1, 1).astype(dtype)
    a, b = LAYOUTS[layout](mx.array(xa)), LAYOUTS[layout](mx.array(xb))
    na, nb = LAYOUTS[layout](xa), LAYOUTS[layout](xb)
    q, r = mx.divmod(a, b)
    assert q.dtype == r.dtype == a.dtype and q.shape == r.shape == na.shape
    np.testing.assert_array_equal(np_(q), np.floor_divide(na, nb))
    np.testing.assert_array_equal(np_(r), np.remainder(na, nb))


def test_divmod_broadcast_scalar_and_empty():
    q, r = mx.divmod(mx.array([[7], [-7]]), mx.array([2, 3, -4]))
    np.testing.assert_array_equal(np_(q), np.floor_divide([[7], [-7]], [2, 3, -4]))
    np.testing.assert_array_equal(np_(r), np.remainder([[7], [-7]], [2, 3, -4]))
    q, r = mx.divmod(mx.array(7.5), 2)
    assert q.item() == 3.0 and r.item() == 1.5 and q.dtype == mx.float32
    q, r = mx.divmod(mx.zeros((0, 3)), mx.ones((3,)))
    assert q.shape == r.shape == (0, 3)


def test_divmod_outputs_outlive_each_other():
    a = mx.arange(12).reshape(3, 4)
    q, r = mx.divmod(a, 5)
    del a
    mx.eval(r)  # computes q too
    del r
    gc.collect()
    np.testing.assert_array_equal(np_(q), np.arange(12).reshape(3, 4) // 5)
    q, r = mx.divmod(mx.arange(6), 4)
    del q  # dropped before evaluation: r still evaluates
    np.testing.assert_array_equal(np_(r), np.arange(6) % 4)


def test_divmod_memory_released():
    mx.eval(mx.zeros(1))
    base = mx.get_active_memory()
    a = mx.ones((1 << 18,))
    q, r = mx.divmod(a, 3.0)
    del a
    mx.eval(q, r)
    both = mx.get_active_memory()
    del q  # its buffer goes at once; r's stays
    one = mx.get_active_memory()
    assert base < one < both
    np.testing.assert_array_equal(np_(r[:3]), [1.0, 1.0, 1.0])
    del r
    assert mx.get_active_memory() <= base


def test_divmod_transforms():
    x = mx.array([3.0, -4.5, 7.0])
    # piecewise constant, as MLX: zero gradients and tangents for both outputs
    g = mx.grad(lambda t: (mx.divmod(t, 2.0)[0] + mx.divmod(t, 2.0)[1] * t).sum())(x)
    np.testing.assert_array_equal(np_(g), np_(mx.divmod(x, 2.0)[1]))
    _, (tq, tr) = mx.jvp(lambda t: mx.divmod(t, 2.0), [x], [mx.ones(3)])
    np.testing.assert_array_equal(np_(tq), [0, 0, 0])
    np.testing.assert_array_equal(np_(tr), [0, 0, 0])


@cmlx_only  # MLX 0.32's DivMod::vmap gives one batch axis for two outputs
def test_divmod_vmap():
    # vmap matches a loop, for either batched operand and both outputs
    xa = np.arange(-6, 6, dtype=np.int32).reshape(3, 4)
    xb = np.array([2, 3, -5, 7], np.int32)
    q, r = mx.vmap(lambda s, t: mx.divmod(s, t), in_axes=(0, None))(mx.array(xa), mx.array(xb))
    np.testing.assert_array_equal(np_(q), xa // xb)
    np.testing.assert_array_equal(np_(r), xa % xb)
    q, r = mx.vmap(lambda s, t: mx.divmod(s, t), in_axes=(1, 0), out_axes=1)(mx.array(xa), mx.array(xb))
    np.testing.assert_array_equal(np_(q), xa // xb)
    np.testing.assert_array_equal(np_(r), xa % xb)


@pytest.mark.skipif(mlx_ref is None, reason="real MLX (mlx.core) is not importable")
def test_divmod_transforms_match_mlx():
    def f(m):
        return lambda t: (m.divmod(t, 2.0)[1] * t).sum()

    x = [3.0, -4.5, 7.0]
    np.testing.assert_array_equal(np_(mx.grad(f(mx))(mx.array(x))), np.array(mlx_ref.grad(f(mlx_ref))(mlx_ref.array(x))))


def test_divmod_errors_leave_inputs_intact():
    a = mx.array([1 + 2j])
    with pytest.raises(ValueError, match="Complex type not supported"):
        mx.divmod(a, a)
    with pytest.raises(ValueError):
        mx.divmod(mx.ones((2, 3)), mx.ones((4,)))
    assert a.item() == 1 + 2j


def test_custom_function_outputs_are_siblings():
    calls = []

    @mx.custom_function
    def f(x):
        calls.append("f")
        return x + 1, x * 2, x - 3

    @f.vjp
    def f_vjp(primals, cotangents, outputs):
        calls.append("vjp")
        # every output's cotangent arrives, zeros for the unused ones
        c = [np_(t) for t in cotangents]
        assert len(c) == 3 and not c[1].any()
        return cotangents[0] + 10 * cotangents[2]

    x = mx.array([1.0, 2.0])
    def loss(t):
        o = f(t)
        return o[0].sum() + o[2].sum()

    g = mx.grad(loss)(x)
    np.testing.assert_array_equal(np_(g), [11.0, 11.0])
    # one output kept alive alone
    a, b, c = f(x)
    del a, c
    gc.collect()
    np.testing.assert_array_equal(np_(b), [2.0, 4.0])
    assert calls.count("vjp") == 1
