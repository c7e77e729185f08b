"""Printing options (printoptions, set_printoptions, get_printoptions,
PrintOptions), array.__format__, the array API namespace
(__array_namespace__, __array_namespace_info__, the aliases and the ops MLX
added for it: trunc, flip, matrix_transpose, vecdot, minmax) and depends.

Values against NumPy; printed forms and errors against real MLX where it is
importable (the expected strings were read off MLX 0.32.4).
"""

import math

import numpy as np
import pytest

from conftest import FLOATS, INTS, SUBJECT_IS_MLX, cmlx_only, mlx_ref, mx, needs_oracle


@pytest.fixture(autouse=True)
def default_precision():
    """Every test starts and ends with the default print precision (the
    option is process-wide), for the subject and the oracle."""
    mods = [mx] + ([mlx_ref] if mlx_ref is not None else [])
    for m in mods:
        m.set_printoptions(-1)
    yield
    for m in mods:
        m.set_printoptions(-1)


def both(f):
    """f(mod) for the subject and, where importable, the oracle; the
    results must agree (exception types and messages too)."""
    def run(m):
        try:
            return ("ok", f(m))
        except Exception as e:  # noqa: BLE001 - compared below
            return (type(e).__name__, str(e).replace("cmlx.core.", "mlx.core."))
    got = run(mx)
    if mlx_ref is not None:
        ref = run(mlx_ref)
        assert got == ref, (got, ref)
    return got


# ================================================================ print options

X = [1.123456789, 100000.5, 1e-7, 1e20, -2.5, 0.0]


def test_default_precision_prints_like_cpp_streams():
    assert str(mx.array([1.123456789], dtype=mx.float32)) == "array([1.12346], dtype=float32)"
    assert str(mx.array(X)) == \
        "array([1.12346, 100000, 1e-07, 1e+20, -2.5, 0], dtype=float32)"
    assert mx.get_printoptions().precision == -1


@pytest.mark.parametrize("prec", [0, 1, 2, 4, 6, 9])
@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64", "complex64"])
def test_precision_is_fixed_notation(prec, name):
    vals = [1.123456789, -2.5, 1e-7, 3.0] if name != "complex64" else \
        [1.123456789 + 2j, 1 - 2.25j, -0.5j, 3.0]
    a = mx.array(vals, dtype=getattr(mx, name))
    with mx.printoptions(precision=prec):
        s = repr(a)
    ref = np.array(a.astype(mx.complex64 if name == "complex64" else mx.float64))
    if name == "complex64":
        parts = []
        for z in ref:
            im = z.imag
            sign = "-" if im < 0 else "+"
            parts.append(f"{z.real:.{prec}f}{sign}{abs(im):.{prec}f}j")
    else:
        parts = [f"{v:.{prec}f}" for v in ref]
    assert s == f"array([{', '.join(parts)}], dtype={name})"
    assert repr(a) == str(a) and "e" not in s[:s.index("], dtype")]


@pytest.mark.parametrize("name", ["bool_", "uint8", "int32", "int64", "uint64"])
def test_precision_leaves_integers_and_bools_alone(name):
    a = mx.array([1, 0, 1], dtype=getattr(mx, name))
    before = repr(a)
    with mx.printoptions(precision=3):
        assert repr(a) == before


@needs_oracle
@pytest.mark.parametrize("prec", [-1, 0, 3, -5, 20])
@pytest.mark.parametrize("vals", [X, [math.inf, -math.inf, math.nan], [1e300, -1e-300]])
@pytest.mark.parametrize("name", ["float32", "float64", "float16", "bfloat16"])
def test_printing_matches_mlx(prec, vals, name):
    def f(m):
        m.set_printoptions(prec)
        return repr(m.array(vals, dtype=getattr(m, name)))
    both(f)


@needs_oracle
@pytest.mark.parametrize("prec", [-1, 2, 7])
def test_printing_complex_and_large_arrays_matches_mlx(prec):
    vals = np.array([1.5 + 2j, 1 - 2j, complex(0, -0.0), complex(math.inf, math.nan)],
                    dtype=np.complex64)
    both(lambda m: (m.set_printoptions(prec), repr(m.array(vals)))[1])
    big = np.linspace(-3, 3, 70).reshape(7, 10).astype(np.float32)
    both(lambda m: (m.set_printoptions(prec), repr(m.array(big)))[1])
    both(lambda m: (m.set_printoptions(prec), repr(m.array(big).T[::2]))[1])


def test_negative_precision_other_than_default_is_six_decimals():
    # as std::setprecision(-5) with std::fixed: six decimals
    mx.set_printoptions(precision=-5)
    assert repr(mx.array([1.5])) == "array([1.500000], dtype=float32)"


def test_huge_fixed_values_are_printed_whole():
    mx.set_printoptions(precision=30)
    s = repr(mx.array([1e300], dtype=mx.float64))
    digits = s[len("array(["):s.index(".")]
    assert len(digits) == 301 and digits.startswith("1000000000000000052504760255204420")
    assert s.endswith("." + "0" * 30 + "], dtype=float64)")


def test_printoptions_context_restores_on_exit_and_on_error():
    x = mx.array([1.123456789])
    mx.set_printoptions(precision=2)
    with mx.printoptions(precision=4) as ctx:
        assert str(x) == "array([1.1235], dtype=float32)"
        assert mx.get_printoptions().precision == 4
        assert ctx is not None
    assert str(x) == "array([1.12], dtype=float32)"
    with pytest.raises(KeyError):
        with mx.printoptions(precision=0):
            raise KeyError("inside")
    assert mx.get_printoptions().precision == 2
    # the suite's own sequence (test_array_repr_precision)
    y = mx.sin(x)
    assert str(y) == "array([0.90], dtype=float32)"
    with mx.printoptions(precision=4):
        assert str(y) == "array([0.9016], dtype=float32)"


def test_printoptions_default_and_nesting():
    with mx.printoptions(precision=1):
        with mx.printoptions():  # the default: precision -1
            assert mx.get_printoptions().precision == -1
            assert str(mx.array([0.25])) == "array([0.25], dtype=float32)"
        assert mx.get_printoptions().precision == 1
    assert mx.get_printoptions().precision == -1


def test_set_printoptions_without_arguments_resets():
    mx.set_printoptions(3)
    mx.set_printoptions()
    assert mx.get_printoptions().precision == -1


def test_print_options_objects():
    o = mx.get_printoptions()
    assert type(o) is mx.PrintOptions and o.precision == -1
    o.precision = 5  # a copy: the global option does not change
    assert mx.get_printoptions().precision == -1
    assert mx.PrintOptions().precision == -1 and mx.PrintOptions(3).precision == 3
    assert mx.PrintOptions(precision=7).precision == 7
    with pytest.raises(AttributeError):
        o.other = 1
    c = mx._PrintOptionsContext(mx.PrintOptions(3))
    assert type(c.__enter__()) is mx._PrintOptionsContext
    assert mx.get_printoptions().precision == 3
    assert c.__exit__(None, None, None) is None
    assert mx.get_printoptions().precision == -1


def test_print_option_arguments_are_ints():
    mx.set_printoptions(True)  # nanobind's int caster takes bool and __index__
    assert mx.get_printoptions().precision == 1
    mx.set_printoptions(np.int64(3))
    assert mx.get_printoptions().precision == 3
    for bad in [1.5, "3", None, 2 ** 40]:
        with pytest.raises(TypeError, match="incompatible function arguments"):
            mx.set_printoptions(bad)
        with pytest.raises(TypeError, match="incompatible function arguments"):
            mx.printoptions(precision=bad)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        mx.set_printoptions(1, 2)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        mx.set_printoptions(digits=1)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        mx.PrintOptions(1.5)
    o = mx.PrintOptions()
    with pytest.raises(TypeError, match="incompatible function arguments"):
        o.precision = 1.5
    with pytest.raises(TypeError, match="incompatible function arguments"):
        mx._PrintOptionsContext(3)
    assert mx.get_printoptions().precision == 3


@needs_oracle
def test_print_option_errors_match_mlx():
    for bad in [(1.5,), ("3",), (None,), (2 ** 40,), (1, 2)]:
        both(lambda m: m.set_printoptions(*bad))
    both(lambda m: m.PrintOptions(1.5))


def test_precision_reaches_the_c_api_printer_too():
    # tostring of the C API and repr share the core's formatter; this
    # checks the Python side sees what the core prints
    with mx.printoptions(precision=2):
        assert repr(mx.array(1.0)) == "array(1.00, dtype=float32)"


# ================================================================ __format__


def test_format_of_scalar_arrays_uses_the_python_number():
    loss = mx.array(0.25)
    assert f"{loss}" == "0.25"
    assert f"{loss:.3f}" == "0.250"
    assert f"{mx.array(0.35487):.1f}" == "0.4"
    assert f"{mx.arange(3)[0]:.2f}" == "0.00"
    assert f"{mx.array(3, dtype=mx.uint8):>5}" == "    3"
    assert f"{mx.array(True)}" == "True"
    assert f"{mx.array(1 + 2j)}" == "(1+2j)"
    assert f"{mx.array(12345, dtype=mx.int64):,}" == "12,345"
    assert format(mx.array(0.1, dtype=mx.float16), "") == repr(float(np.float16(0.1)))
    # the number, not its float32 rounding printed short
    assert f"{mx.array(0.1)}" == str(float(np.float32(0.1)))


def test_format_of_arrays_with_dimensions():
    a = mx.array([1, 2, 3])
    assert f"{a}" == "array([1, 2, 3], dtype=int32)" == format(a, "")
    for spec in [".2f", "d", ">10"]:
        with pytest.raises(TypeError, match=r"unsupported format string passed to "
                                            r"mx.array.__format__"):
            format(a, spec)
    with pytest.raises(TypeError):
        format(mx.zeros((0,)), ".1f")
    assert format(mx.zeros((2, 0)), "") == repr(mx.zeros((2, 0)))


@cmlx_only
def test_format_errors_of_the_python_number():
    # MLX crashes here (it does not check PyObject_Format's NULL)
    with pytest.raises(ValueError):
        f"{mx.array(1.5):d}"
    with pytest.raises(TypeError):
        mx.array(1.0).__format__(3)


@needs_oracle
@pytest.mark.parametrize("spec", ["", ".3f", "e", ">8", "+", "%", "d", "x", "10.2g"])
@pytest.mark.parametrize("value,name", [(0.35487, "float32"), (7, "int32"), (True, "bool_"),
                                        (-2.5, "float16"), (1e300, "float64"),
                                        (1 + 2j, "complex64"), (255, "uint8")])
def test_format_matches_mlx(spec, value, name):
    scalar = mx.array(value, dtype=getattr(mx, name)).item()
    try:
        format(scalar, spec)
    except ValueError:
        # MLX crashes when Python refuses the spec for the number (it does
        # not check the NULL PyObject_Format returns); cmlx raises
        if SUBJECT_IS_MLX:
            return
        with pytest.raises(ValueError):
            format(mx.array(value, dtype=getattr(mx, name)), spec)
        return
    both(lambda m: format(m.array(value, dtype=getattr(m, name)), spec))
    both(lambda m: format(m.array([value], dtype=getattr(m, name)), spec))


# ================================================================ array API namespace


def test_array_namespace_is_the_module():
    xp = mx.array(1.0).__array_namespace__()
    assert xp is mx
    for name in ("array", "add", "asarray", "result_type", "can_cast", "isdtype", "vecdot",
                 "trunc", "flip", "matrix_transpose", "minmax", "empty", "empty_like", "pow",
                 "acos", "bitwise_left_shift", "cumulative_sum", "__array_namespace_info__"):
        assert hasattr(xp, name), name
    assert xp.asarray([1, 2, 3]).tolist() == [1, 2, 3]
    assert xp.asarray([1, 2, 3], dtype=mx.float32).dtype == mx.float32
    assert mx.array([[1]]).__array_namespace__(api_version=None) is mx
    with pytest.raises(ValueError, match="Explicitly specifying api_version is not yet "
                                         "implemented."):
        mx.array(1).__array_namespace__(api_version="2023.12")
    with pytest.raises(ValueError):
        mx.array(1).__array_namespace__("2021.12")
    with pytest.raises(TypeError, match="incompatible function arguments"):
        mx.array(1).__array_namespace__(3)


ALIASES = {"acos": "arccos", "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh",
           "atan": "arctan", "atan2": "arctan2", "atanh": "arctanh",
           "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift",
           "cumulative_prod": "cumprod", "cumulative_sum": "cumsum", "pow": "power",
           "empty": "zeros", "empty_like": "zeros_like"}


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_array_api_aliases_are_the_same_functions(alias):
    assert getattr(mx, alias) is getattr(mx, ALIASES[alias])
    if mlx_ref is not None:
        assert getattr(mlx_ref, alias) is getattr(mlx_ref, ALIASES[alias])


def test_empty_and_empty_like():
    assert mx.empty(3).tolist() == [0.0, 0.0, 0.0] and mx.empty(3).dtype == mx.float32
    x = mx.array([1, 2, 3], dtype=mx.int32)
    assert mx.empty_like(x).dtype == mx.int32
    assert mx.empty_like(x, mx.float16).dtype == mx.float16
    assert mx.empty_like(x, dtype=mx.float32).dtype == mx.float32
    assert mx.empty((2, 3), dtype=mx.uint8).shape == (2, 3)


def test_namespace_info():
    info = mx.__array_namespace_info__()
    assert info.capabilities() == {"boolean indexing": False, "data-dependent shapes": False,
                                   "max dimensions": 10}
    assert info.default_device() == mx.default_device()
    assert mx.Device(mx.cpu, 0) in info.devices()
    assert info.default_dtypes() == {"real floating": mx.float32,
                                     "complex floating": mx.complex64,
                                     "integral": mx.int32, "indexing": mx.int32}
    assert info.default_dtypes(device=mx.Device(mx.cpu)) == info.default_dtypes()
    d = info.dtypes()
    assert d["float64"] == mx.float64 and d["bool"] == mx.bool_ and "float16" not in d
    assert set(info.dtypes(kind="integral")) == {"int8", "int16", "int32", "int64", "uint8",
                                                 "uint16", "uint32", "uint64"}
    assert set(info.dtypes(kind=("bool", "complex floating"))) == {"bool", "complex64"}
    assert set(info.dtypes(kind="real floating")) == {"float32", "float64"}
    with pytest.raises(ValueError, match="Unsupported dtype kind"):
        info.dtypes(kind="text")
    with pytest.raises(ValueError):
        info.dtypes(kind=["bool"])
    with pytest.raises(TypeError, match="Expected a mlx Device"):
        info.dtypes(device="cpu")
    with pytest.raises(TypeError, match="Expected a mlx Device"):
        info.default_dtypes(device=0)


@needs_oracle
def test_namespace_info_matches_mlx():
    for call in [lambda i: i.capabilities(), lambda i: sorted(i.dtypes()),
                 lambda i: sorted(i.dtypes(kind="numeric")),
                 lambda i: sorted(i.dtypes(kind=("signed integer", "bool"))),
                 lambda i: sorted(i.default_dtypes()), lambda i: len(i.devices())]:
        assert call(mx.__array_namespace_info__()) == call(mlx_ref.__array_namespace_info__())


# ================================================================ trunc


@pytest.mark.parametrize("name", FLOATS)
def test_trunc_floats(name):
    vals = [-1.5, -0.5, 0.0, 0.5, 2.7, -2.7, 1e6 + 0.5, math.inf, -math.inf, math.nan, -0.0]
    a = mx.array(vals, dtype=getattr(mx, name))
    got = np.array(mx.trunc(a).astype(mx.float64))
    want = np.trunc(np.array(a.astype(mx.float64)))
    np.testing.assert_array_equal(got, want)
    assert mx.trunc(a).dtype == a.dtype
    assert mx.trunc(mx.array([-1.5, -0.5, 0.0, 0.5, 2.7])).tolist() == [-1.0, 0.0, 0.0, 0.0, 2.0]


@pytest.mark.parametrize("name", INTS + ["bool_"])
def test_trunc_integers_are_themselves(name):
    a = mx.array([0, 1, 1], dtype=getattr(mx, name))
    r = mx.trunc(a)
    assert r.dtype == a.dtype and r.tolist() == a.tolist()


def test_trunc_layouts_and_errors():
    x = np.arange(-12, 12, dtype=np.float32).reshape(4, 6) / 5
    a = mx.array(x)
    np.testing.assert_array_equal(np.array(mx.trunc(a.T)), np.trunc(x.T))
    np.testing.assert_array_equal(np.array(mx.trunc(a[::-1, ::2])), np.trunc(x[::-1, ::2]))
    assert mx.trunc(mx.zeros((0, 3))).shape == (0, 3)
    with pytest.raises(ValueError, match=r"\[trunc\] Not supported for complex64."):
        mx.trunc(mx.array([1 + 1j]))
    with pytest.raises(TypeError, match="incompatible function arguments"):
        mx.trunc(2.5)
    # piecewise constant, as floor and ceil
    assert mx.grad(lambda v: mx.trunc(v).sum())(mx.array([1.5, -2.5])).tolist() == [0.0, 0.0]


# ================================================================ flip, matrix_transpose


@pytest.mark.parametrize("axis", [None, 0, 1, -1, 2, (0, 2), [1, -1], (0, 0), ()])
def test_flip(axis):
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    a = mx.array(x)
    want = np.flip(x, axis=axis if axis != (0, 0) else 0)
    if axis == ():
        want = x
    got = mx.flip(a) if axis is None else mx.flip(a, axis=axis)
    np.testing.assert_array_equal(np.array(got), want)
    np.testing.assert_array_equal(np.array(mx.flip(a.T, axis=0)), np.flip(x.T, axis=0))


def test_flip_edges():
    assert mx.flip(mx.array(3)).item() == 3
    assert mx.flip(mx.zeros((0, 2)), axis=0).shape == (0, 2)
    with pytest.raises(IndexError, match=r"\[flip\] Axis 2 is out of bounds for array with 2 "
                                         r"dimensions."):
        mx.flip(mx.zeros((2, 2)), axis=2)
    with pytest.raises(IndexError):
        mx.flip(mx.zeros((2, 2)), axis=-3)
    g = mx.grad(lambda v: (mx.flip(v) * mx.array([1.0, 2.0, 3.0])).sum())(mx.zeros(3))
    assert g.tolist() == [3.0, 2.0, 1.0]


def test_matrix_transpose():
    x = np.arange(24).reshape(2, 3, 4).astype(np.float32)
    assert mx.matrix_transpose(mx.array(x)).shape == (2, 4, 3)
    np.testing.assert_array_equal(np.array(mx.matrix_transpose(mx.array(x))),
                                  np.swapaxes(x, -1, -2))
    assert mx.matrix_transpose(mx.array([[1, 2], [3, 4]])).tolist() == [[1, 3], [2, 4]]
    with pytest.raises(ValueError, match=r"\[matrix_transpose\] Input array must have at least "
                                         r"2 dimensions."):
        mx.matrix_transpose(mx.array([1, 2]))


# ================================================================ vecdot


@pytest.mark.parametrize("name", ["int32", "float32", "float64", "complex64", "float16"])
def test_vecdot_values(name):
    r = np.random.default_rng(3)
    x = r.integers(-5, 6, size=(3, 4)).astype(np.float64)
    y = r.integers(-5, 6, size=(3, 4)).astype(np.float64)
    if name == "complex64":
        x = x + 1j * r.integers(-3, 4, size=(3, 4))
        y = y - 1j * r.integers(-3, 4, size=(3, 4))
    a, b = mx.array(x, dtype=getattr(mx, name)), mx.array(y, dtype=getattr(mx, name))
    for axis in [-1, 0, 1, -2]:
        want = np.sum(np.conj(x) * y, axis=axis)
        got = np.array(mx.vecdot(a, b, axis=axis).astype(
            mx.complex64 if name == "complex64" else mx.float64))
        np.testing.assert_allclose(got, want, rtol=1e-3)
    assert mx.vecdot(mx.array([1, 2]), mx.array([3, 4])).item() == 11


def test_vecdot_errors():
    with pytest.raises(ValueError, match=r"\[vecdot\] inputs must be at least 1D."):
        mx.vecdot(mx.array(1), mx.array([1]))
    with pytest.raises(IndexError, match=r"\[vecdot\] axis is out of bounds."):
        mx.vecdot(mx.array([1, 2]), mx.array([1, 2]), axis=1)
    with pytest.raises(ValueError, match=r"\[vecdot\] a and b must have the same size along "
                                         r"axis."):
        mx.vecdot(mx.array([1, 2]), mx.array([1]))
    # arrays of different ranks do not line up (MLX's rule)
    with pytest.raises(ValueError, match=r"\[vecdot\] axis is out of bounds."):
        mx.vecdot(mx.zeros((2, 3)), mx.zeros((3,)))
    with pytest.raises(TypeError, match="incompatible function arguments"):
        mx.vecdot([1, 2], [3, 4])
    # shown keyword-only, but MLX's binding takes it by position too
    assert mx.vecdot(mx.array([[1, 2]]), mx.array([[3, 4]]), 0).tolist() == [3, 8]


@needs_oracle
def test_vecdot_errors_match_mlx():
    for f in [lambda m: m.vecdot(m.zeros((2, 3)), m.zeros((3,))),
              lambda m: m.vecdot(m.zeros((3,)), m.zeros((2, 3))),
              lambda m: m.vecdot(m.zeros((2, 3)), m.zeros((2, 3)), axis=-3),
              lambda m: m.vecdot(m.zeros((2, 3)), m.zeros((3,)), axis=0).shape,
              lambda m: m.vecdot(m.zeros((2, 3)), m.zeros((2, 3)), axis=0).shape]:
        both(f)


# ================================================================ minmax


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1), -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_minmax(axis, keepdims):
    x = np.random.default_rng(1).normal(size=(4, 5)).astype(np.float32)
    lo, hi = mx.minmax(mx.array(x), axis=axis, keepdims=keepdims)
    np.testing.assert_array_equal(np.array(lo), np.min(x, axis=axis, keepdims=keepdims))
    np.testing.assert_array_equal(np.array(hi), np.max(x, axis=axis, keepdims=keepdims))
    r = mx.minmax(mx.array(x), axis, keepdims)
    assert isinstance(r, tuple) and len(r) == 2


def test_minmax_errors():
    with pytest.raises(ValueError, match=r"\[min\] Cannot min reduce over axis 0 with size 0."):
        mx.minmax(mx.array([]))
    with pytest.raises(TypeError):
        mx.minmax([1, 2])


# ================================================================ depends


def test_depends_values_and_forms():
    a = mx.array([1.0, 2.0, 3.0])
    b, c = mx.exp(a), mx.log(a)
    out = mx.depends([b], [c])
    assert isinstance(out, list) and len(out) == 1
    assert mx.array_equal(out[0], b)
    single = mx.depends(b, c)
    assert isinstance(single, mx.array) and mx.array_equal(single, b)
    two = mx.depends((a, a + 1), (c,))
    assert [t.tolist() for t in two] == [[1.0, 2.0, 3.0], [2.0, 3.0, 4.0]]
    assert mx.depends(a, []).tolist() == a.tolist()
    many = mx.depends([a + i for i in range(20)], [b, c] * 5)
    assert [t[0].item() for t in many] == [1.0 + i for i in range(20)]


def test_depends_evaluates_the_dependencies():
    a = mx.array([1.0, 2.0])
    dep = a * 3
    out = mx.depends(a + 1, dep)
    mx.eval(out)
    # the dependency was computed along the way: evaluating it is free now
    assert dep.tolist() == [3.0, 6.0]
    # dropping one output of several keeps the others valid
    outs = mx.depends([a, a * 2], [dep])
    del outs[0]
    assert outs[0].tolist() == [2.0, 4.0]


def test_depends_gradients():
    g = mx.grad(lambda x, y: mx.depends(x * 2, y).sum(), argnums=(0, 1))(
        mx.array([1.0]), mx.array([3.0]))
    assert [t.tolist() for t in g] == [[2.0], [0.0]]


@cmlx_only
def test_depends_has_no_jvp():
    # a missing rule names the primitive (MLX: a ValueError from
    # Primitive::jvp; cmlx's transforms raise NotImplementedError)
    with pytest.raises(NotImplementedError, match="Depends"):
        mx.jvp(lambda x, y: mx.depends(x * 2, y), [mx.array([1.0]), mx.array([3.0])],
               [mx.array([1.0]), mx.array([1.0])])


@cmlx_only
def test_depends_errors():
    # MLX leaks std::bad_cast as a RuntimeError
    a = mx.array([1])
    with pytest.raises(TypeError, match="incompatible function arguments"):
        mx.depends(a, 3)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        mx.depends(3, a)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        mx.depends([a, 1], a)


@cmlx_only
def test_depends_needs_an_input():
    # MLX crashes on an empty input list
    with pytest.raises(ValueError, match=r"\[depends\] At least one input is required."):
        mx.depends([], [mx.array([1])])
