"""The array type's op surface in cmlx.core: Python operators (arithmetic,
reflected, bitwise, comparisons, in-place rebinding) and the methods that
are ops (x.abs(), x.sum(axis), x.reshape(...)).  Values against NumPy; call
forms, dtypes and error types against real MLX where importable.  The
function bindings are in test_ops_bindings.py."""

import numpy as np
import pytest

from conftest import (SUBJECT_IS_MLX, accepts, assert_same_as_oracle, call, dname, ev, mlx_ref, mx,
                      needs_oracle, npv)


UNARY_METHODS = "abs conj cos exp log log10 log1p log2 reciprocal rsqrt sin sqrt square".split()


# ------------------------------------------------------------ operators


OPS = [
    ("+", lambda a, b: a + b, np.add),
    ("-", lambda a, b: a - b, np.subtract),
    ("*", lambda a, b: a * b, np.multiply),
    ("/", lambda a, b: a / b, np.true_divide),
    ("//", lambda a, b: a // b, np.floor_divide),
    ("%", lambda a, b: a % b, np.remainder),
    ("**", lambda a, b: a ** b, np.power),
]

IOPS = {
    "+": lambda a, b: a.__iadd__(b), "-": lambda a, b: a.__isub__(b),
    "*": lambda a, b: a.__imul__(b), "/": lambda a, b: a.__itruediv__(b),
    "//": lambda a, b: a.__ifloordiv__(b), "%": lambda a, b: a.__imod__(b),
    "**": lambda a, b: a.__ipow__(b),
}


@pytest.mark.parametrize("sym,f,npf", OPS)
def test_arithmetic_operators(sym, f, npf):
    xa = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
    xb = np.array([2.0, 0.5, 3.0], np.float32)
    a, b = mx.array(xa), mx.array(xb)
    np.testing.assert_allclose(npv(f(a, b)), npf(xa, xb), rtol=1e-5)
    np.testing.assert_allclose(npv(f(a, 2)), npf(xa, np.float32(2)), rtol=1e-5)
    np.testing.assert_allclose(npv(f(3, a)), npf(np.float32(3), xa), rtol=1e-5)  # reflected
    assert dname(f(a, 2)) == "float32"
    ia = mx.array([1, 2, 3], mx.int8)
    exp = "float32" if sym == "/" else "int8"
    assert dname(f(ia, 2)) == exp and dname(f(2, ia)) == exp


@pytest.mark.parametrize("sym,f,npf", [
    ("&", lambda a, b: a & b, np.bitwise_and), ("|", lambda a, b: a | b, np.bitwise_or),
    ("^", lambda a, b: a ^ b, np.bitwise_xor), ("<<", lambda a, b: a << b, np.left_shift),
    (">>", lambda a, b: a >> b, np.right_shift),
])
def test_bitwise_operators(sym, f, npf):
    x = np.array([1, 6, 12], np.int32)
    a = mx.array(x)
    assert npv(f(a, 1)).tolist() == npf(x, 1).tolist()
    assert npv(f(a, a)).tolist() == npf(x, x).tolist()
    # no reflected form in MLX
    with pytest.raises(TypeError):
        f(1, a)
    with pytest.raises(ValueError, match="Floating point types not allowed"):
        f(a, 1.5)
    with pytest.raises(ValueError, match="Floating point types not allowed"):
        f(mx.array([1.5]), 1)
    if sym in ("&", "|", "^"):
        bb = mx.array([True, False])
        assert npv(f(bb, True)).tolist() == npf(np.array([True, False]), True).tolist()


def test_unary_operators():
    x = mx.array([1, -2, 3])
    assert npv(-x).tolist() == [-1, 2, -3]
    assert npv(+x).tolist() == [1, -2, 3]
    assert npv(abs(x)).tolist() == [1, 2, 3]
    assert npv(~x).tolist() == [-2, 1, -4]
    assert npv(~mx.array([True, False])).tolist() == [False, True]
    assert dname(~mx.array([True, False])) == "bool_"
    with pytest.raises(ValueError, match="bitwise inversion"):
        ~mx.array([1.0])
    with pytest.raises(ValueError):
        ev(-mx.array([True]))


@pytest.mark.parametrize("sym,f,npf", [
    ("<", lambda a, b: a < b, np.less), ("<=", lambda a, b: a <= b, np.less_equal),
    (">", lambda a, b: a > b, np.greater), (">=", lambda a, b: a >= b, np.greater_equal),
    ("==", lambda a, b: a == b, np.equal), ("!=", lambda a, b: a != b, np.not_equal),
])
def test_comparisons(sym, f, npf):
    x = np.array([1, 2, 3], np.int32)
    a = mx.array(x)
    r = f(a, 2)
    assert dname(r) == "bool_" and npv(r).tolist() == npf(x, 2).tolist()
    assert npv(f(2, a)).tolist() == npf(2, x).tolist()  # reflected
    assert npv(f(a, 2.5)).tolist() == npf(x, 2.5).tolist()
    assert npv(f(a, a)).tolist() == npf(x, x).tolist()
    with pytest.raises(ValueError):
        f(a, mx.array([1, 2]))
    with pytest.raises(TypeError):
        f(a, None)  # MLX: TypeError for == None too


def test_equality_with_non_arrays():
    a = mx.array([1, 2, 3])
    assert (a == "a") is False
    assert (a == [1, 2, 3]) is False
    assert (a == (1, 2, 3)) is False
    assert (a == {}) is False
    assert (a != "a") is True
    assert (a != [1, 2, 3]) is True
    assert npv(a == np.array([1, 2, 3])).tolist() == [True, True, True]
    for f in (lambda: a < "a", lambda: a <= [1], lambda: a > {}, lambda: a >= (1,)):
        with pytest.raises(ValueError, match="Cannot perform"):
            f()


@pytest.mark.parametrize("other", ["a", [1, 2], (1,), {}])
def test_operators_with_non_arrays_are_value_errors(other):
    a = mx.array([1, 2])
    for f in (lambda: a + other, lambda: a - other, lambda: a * other, lambda: a / other,
              lambda: a // other, lambda: a ** other, lambda: a & other, lambda: a | other,
              lambda: a ^ other, lambda: a << other, lambda: a >> other):
        with pytest.raises(ValueError, match="Cannot perform"):
            f()
    if not isinstance(other, str):  # str - a is str's business for % only
        for f in (lambda: other + a, lambda: other - a, lambda: other * a):
            with pytest.raises(ValueError, match="Cannot perform"):
                f()


def test_operators_with_none_are_type_errors():
    a = mx.array([1, 2])
    for f in (lambda: a + None, lambda: None + a, lambda: a * None, lambda: a & None,
              lambda: a ** None, lambda: a < None):
        with pytest.raises(TypeError):
            f()


def test_cannot_perform_message_names_the_operation():
    a = mx.array([1, 2])
    with pytest.raises(ValueError, match=r"Cannot perform addition on an .*array and str"):
        a + "x"
    with pytest.raises(ValueError, match=r"Cannot perform inplace multiplication on an .*array and list"):
        a *= [1]


def test_pow_with_modulus_and_divmod_are_type_errors():
    a = mx.array([1, 2])
    with pytest.raises(TypeError):
        pow(a, 2, 3)
    assert npv(pow(a, 2, None)).tolist() == [1, 4]
    with pytest.raises(TypeError):
        divmod(a, 2)  # MLX arrays have no __divmod__
    with pytest.raises(TypeError):
        divmod(7, a)


def test_matmul_operator():
    a = mx.array([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(TypeError):
        a @ 2
    with pytest.raises(TypeError):
        2 @ a
    np.testing.assert_allclose(npv(a @ a), np.array([[7.0, 10.0], [15.0, 22.0]]))


# ------------------------------------------------------------ in-place


@pytest.mark.parametrize("sym", sorted(IOPS))
def test_inplace_operators_rebind(sym):
    xa = np.array([1.0, 2.0, 4.0], np.float32)
    a = mx.array(xa)
    alias = a
    view = a * 1  # computed from the old content, before the update
    r = IOPS[sym](a, 2)
    assert r is a and alias is a
    npf = dict((s, n) for s, _, n in OPS)[sym]
    np.testing.assert_allclose(npv(alias), npf(xa, np.float32(2)), rtol=1e-6)
    assert npv(view).tolist() == xa.tolist()


def test_inplace_statement_semantics():
    a = mx.array([1, 2, 3])
    b = a
    a += 1
    assert b is a
    assert npv(b).tolist() == [2, 3, 4]
    s = a[1:]
    a -= 1
    assert npv(b).tolist() == [1, 2, 3]
    assert npv(s).tolist() == [3, 4]  # the view keeps the old value


def test_inplace_may_change_dtype():
    a = mx.array([1, 2, 3], mx.int8)
    b = a
    a *= 2.5
    assert dname(b) == "float32"
    assert npv(b).tolist() == [2.5, 5.0, 7.5]
    c = mx.array([1, 2, 4])
    c //= 2.5
    assert dname(c) == "float32"


def test_inplace_bitwise_and_shifts():
    a = mx.array([1, 6, 12])
    b = a
    a &= 4
    a |= 1
    a ^= 3
    a <<= 1
    a >>= 1
    exp = np.array([1, 6, 12])
    exp = (((exp & 4) | 1) ^ 3)
    assert npv(b).tolist() == exp.tolist()
    with pytest.raises(ValueError, match="Floating point types not allowed"):
        a &= 1.5


def test_inplace_true_divide_needs_floating():
    a = mx.array([1, 2])
    with pytest.raises(ValueError, match="In place division cannot cast to non-floating point type"):
        a /= 2
    assert npv(a).tolist() == [1, 2] and dname(a) == "int32"  # unchanged
    h = mx.array([1.0, 2.0], mx.float16)
    h /= 2
    assert dname(h) == "float16" and npv(h).tolist() == [0.5, 1.0]
    z = mx.array([1 + 1j])
    z /= 2
    assert npv(z).tolist() == [0.5 + 0.5j]


def test_inplace_errors_leave_the_array_alone():
    a = mx.array([1, 2], mx.int8)
    with pytest.raises(ValueError):
        a += 1000
    with pytest.raises(ValueError):
        a += "x"
    with pytest.raises(TypeError):
        a += None
    assert npv(a).tolist() == [1, 2] and dname(a) == "int8"


# ------------------------------------------------------------ methods


@pytest.mark.parametrize("name", UNARY_METHODS)
def test_op_methods(name):
    x = mx.array([0.5, 1.5, 2.0])
    np.testing.assert_allclose(npv(getattr(x, name)()), npv(getattr(mx, name)(x)), rtol=1e-6)
    np.testing.assert_allclose(npv(getattr(x, name)(stream=mx.cpu)), npv(getattr(mx, name)(x)),
                               rtol=1e-6)
    with pytest.raises(TypeError):
        getattr(x, name)(mx.cpu)  # stream is keyword-only
    with pytest.raises(TypeError):
        getattr(x, name)(1)


def test_round_method():
    x = mx.array([1.26, 2.5])
    np.testing.assert_allclose(npv(x.round()), [1.0, 2.0])
    np.testing.assert_allclose(npv(x.round(1)), [1.3, 2.5], rtol=1e-6)
    np.testing.assert_allclose(npv(x.round(decimals=1)), [1.3, 2.5], rtol=1e-6)
    with pytest.raises(TypeError):
        x.round(1, mx.cpu)
    with pytest.raises(TypeError) as e:
        x.round(1.5)
    assert str(e.value).startswith("round(): incompatible function arguments")


X24 = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 7.5


@pytest.mark.parametrize("name,npf", [
    ("sum", np.sum), ("prod", np.prod), ("max", np.max), ("min", np.min), ("mean", np.mean),
    ("all", np.all), ("any", np.any),
])
@pytest.mark.parametrize("args,kwargs", [
    ((), {}), ((1,), {}), ((-1, True), {}), (((0, 2),), {}), (([0, 1],), {"keepdims": True}),
    ((), {"axis": (2,)}), ((None, True), {}), ((), {"axis": np.int64(1)}),
])
def test_reduction_methods(name, npf, args, kwargs):
    x = mx.array(X24 / 4)
    r = getattr(x, name)(*args, **kwargs)
    axis = kwargs.get("axis", args[0] if args else None)
    if isinstance(axis, list):
        axis = tuple(axis)
    keepdims = kwargs.get("keepdims", args[1] if len(args) > 1 else False)
    exp = npf(X24 / 4, axis=None if axis is None else (int(axis) if not isinstance(axis, tuple)
              else axis), keepdims=keepdims)
    got = npv(r)
    assert got.shape == np.shape(exp)
    np.testing.assert_allclose(got.astype(np.float64), np.asarray(exp, np.float64), rtol=1e-5)


def test_argmax_argmin_var_std_logsumexp_methods():
    x = mx.array(X24)
    assert npv(x.argmax()).tolist() == int(np.argmax(X24))
    assert npv(x.argmin(1)).tolist() == np.argmin(X24, 1).tolist()
    assert npv(x.argmax(axis=2, keepdims=True)).tolist() == np.argmax(X24, 2)[..., None].tolist()
    assert dname(x.argmax()) == "uint32"
    with pytest.raises(TypeError):
        x.argmax((0, 1))
    np.testing.assert_allclose(npv(x.var()), np.var(X24), rtol=1e-5)
    np.testing.assert_allclose(npv(x.var(0, ddof=1)), np.var(X24, 0, ddof=1), rtol=1e-5)
    np.testing.assert_allclose(npv(x.std(correction=1)), np.std(X24, ddof=1), rtol=1e-5)
    np.testing.assert_allclose(npv(x.std(ddof=5, correction=0)), np.std(X24), rtol=1e-5)
    np.testing.assert_allclose(npv(x.std((0, 1), True, 1)), np.std(X24, (0, 1), keepdims=True, ddof=1),
                               rtol=1e-5)
    lse = np.log(np.sum(np.exp(X24.astype(np.float64)), axis=1))
    np.testing.assert_allclose(npv(x.logsumexp(1)), lse, rtol=1e-5)
    with pytest.raises(TypeError):
        x.sum(1.0)
    with pytest.raises(TypeError):
        x.sum(0, True, mx.cpu)  # stream is keyword-only
    assert npv(x.sum(0, True, stream=mx.cpu)).shape == (1, 3, 4)


def test_shape_methods():
    x = mx.array(X24)
    assert npv(x.reshape(4, 6)).tolist() == X24.reshape(4, 6).tolist()
    assert npv(x.reshape((4, 6))).tolist() == X24.reshape(4, 6).tolist()
    assert npv(x.reshape([6, -1])).tolist() == X24.reshape(6, -1).tolist()
    assert x.reshape(24, stream=mx.cpu).shape == (24,)
    with pytest.raises(TypeError):
        x.reshape(shape=(4, 6))
    # MLX leaks C++'s std::bad_cast as a RuntimeError; cmlx raises the TypeError
    with pytest.raises(RuntimeError if SUBJECT_IS_MLX else TypeError):
        x.reshape(4.0, 6)
    assert npv(x.transpose()).tolist() == X24.transpose().tolist()
    assert npv(x.transpose(1, 0, 2)).tolist() == X24.transpose(1, 0, 2).tolist()
    assert npv(x.transpose((2, 0, 1))).tolist() == X24.transpose(2, 0, 1).tolist()
    assert npv(x.transpose([2, 1, 0])).tolist() == X24.transpose(2, 1, 0).tolist()
    with pytest.raises(TypeError):
        x.transpose(axes=(1, 0, 2))
    assert npv(x.swapaxes(0, 2)).tolist() == np.swapaxes(X24, 0, 2).tolist()
    assert npv(x.moveaxis(0, 2)).tolist() == np.moveaxis(X24, 0, 2).tolist()
    assert npv(x.flatten()).tolist() == X24.flatten().tolist()
    assert npv(x.flatten(1)).shape == (2, 12)
    assert npv(x.flatten(start_axis=0, end_axis=1)).shape == (6, 4)
    y = mx.array(X24[:1])
    assert y.squeeze().shape == (3, 4)
    assert y.squeeze(0).shape == (3, 4)
    assert y.squeeze(axis=(0,)).shape == (3, 4)
    with pytest.raises(ValueError):
        x.squeeze(0)
    assert npv(x.diagonal()).tolist() == np.diagonal(X24).tolist()
    assert npv(x.diagonal(1, 1, 2)).tolist() == np.diagonal(X24, 1, 1, 2).tolist()
    assert npv(x.diagonal(0, 0, 1, mx.cpu)).shape == (4, 2)  # stream by position, as MLX
    v = mx.array([1, 2])
    assert npv(v.diag(1)).tolist() == np.diag([1, 2], 1).tolist()
    assert npv(v.diag(k=-1)).tolist() == np.diag([1, 2], -1).tolist()
    parts = x.split(2)
    assert isinstance(parts, list) and [p.shape for p in parts] == [(1, 3, 4), (1, 3, 4)]
    parts = x.split([1, 2], 2)
    assert [npv(p).tolist() for p in parts] == [q.tolist() for q in np.split(X24, [1, 2], 2)]
    parts = x.split(indices_or_sections=3, axis=1)
    assert len(parts) == 3
    w = x.view(mx.int32)
    assert dname(w) == "int32" and npv(w).tolist() == X24.view(np.int32).tolist()


def _method_samples(m):
    x = m.array(X24)
    y = m.array([[1.0, 2.0], [3.0, 4.0]])
    red = [("axis", 1), ("keepdims", True)]
    s = {n: (x, red) for n in "sum prod max min all any mean logsumexp argmax argmin".split()}
    s["var"] = (x, red + [("ddof", 1)])
    s["std"] = (x, red + [("ddof", 1)])
    s["round"] = (x, [("decimals", 1)])
    s["squeeze"] = (m.array(X24[:1]), [("axis", 0)])
    s["swapaxes"] = (x, [("axis1", 0), ("axis2", 1)])
    s["moveaxis"] = (x, [("source", 0), ("destination", 1)])
    s["flatten"] = (x, [("start_axis", 0), ("end_axis", 1)])
    s["diagonal"] = (x, [("offset", 0), ("axis1", 0), ("axis2", 1)])
    s["diag"] = (y, [("k", 0)])
    s["split"] = (x, [("indices_or_sections", 2), ("axis", 2)])
    s["view"] = (x, [("dtype", m.int32)])
    for n in UNARY_METHODS:
        s[n] = (x, [])
    return s


def _method_pattern(m, name):
    x, ps = _method_samples(m)[name]
    f = getattr(x, name)
    out = [accepts(f, [v for _, v in ps[:i]], {p: v for p, v in ps[i:]}) for i in range(len(ps) + 1)]
    out.append(accepts(f, [v for _, v in ps] + [None], {}))
    out.append(accepts(f, [v for _, v in ps], {"stream": None}))
    out.append(accepts(f, [v for _, v in ps], {"bogus": 1}))
    return out


@needs_oracle
@pytest.mark.parametrize("name", sorted(_method_samples(mx).keys()))
def test_method_call_forms_match_mlx(name):
    assert _method_pattern(mx, name) == _method_pattern(mlx_ref, name)


@needs_oracle
@pytest.mark.parametrize("expr", [
    "x.sum()", "x.sum(1)", "x.sum((0, 2), True)", "x.prod(axis=[1])", "x.max(axis=[])",
    "x.min(-1, keepdims=True)", "x.mean(0)", "x.all(1)", "x.any()", "x.argmax()", "x.argmin(2)",
    "x.var(ddof=1)", "x.std(1, correction=1)", "x.logsumexp((1, 2))", "x.reshape(6, 4)",
    "x.transpose(2, 0, 1)", "x.swapaxes(0, 1)", "x.moveaxis(2, 0)", "x.flatten(1, 2)",
    "x.diagonal(1)", "x.view(m.uint32)", "i.sum()", "b.sum()", "b.prod()", "i.mean()",
    "x.squeeze()", "x.split([1, 3], 2)",
])
def test_methods_same_as_mlx(expr):
    def run(m):
        x = m.array(X24)  # noqa: F841 (used by eval)
        i = m.array([[1, 2], [3, 4]], m.int8)  # noqa: F841
        b = m.array([True, False, True])  # noqa: F841
        return eval(expr)

    sub = call(mx, lambda m: run(m))
    ref = call(mlx_ref, lambda m: run(m))
    assert_same_as_oracle(sub, ref, msg=expr)
