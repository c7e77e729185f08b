"""The op binding layer of cmlx.core: the signature table, argument parsing
(positional-only / keyword-only rules, defaults, types, stream=), weak
scalars and each op function's conversions (operators and methods are in
test_ops_bindings_array.py).  Values are checked against NumPy; parsing
rules, dtypes and error types against real MLX where it is importable.
(Per-op numerics across dtypes and layouts live in the per-family suites.)"""

import math

import numpy as np
import pytest

from conftest import (SUBJECT_IS_MLX, accepts, assert_same_as_oracle, call, dname, dtype_name, ev,
                      mlx_ref, mx, needs_oracle, npv)


# ------------------------------------------------------------ the table

SIG = {row[0]: row for row in getattr(mx, "_signatures", [])}
# The table is cmlx's own (MLX has no _signatures): skipped when the suite
# runs against real MLX as its subject (a cmlx without it fails).
cmlx_only = pytest.mark.skipif(SUBJECT_IS_MLX, reason="cmlx's signature table")

BOUND = """abs sign positive negative square sqrt rsqrt reciprocal exp expm1 erf erfinv sin
cos tan arcsin arccos arctan sinh cosh tanh arcsinh arccosh arctanh degrees radians log log2
log10 log1p stop_gradient sigmoid floor ceil logical_not isnan isinf isfinite isposinf isneginf
real imag conj conjugate bitwise_invert round nan_to_num astype add subtract multiply divide
divmod floor_divide remainder equal not_equal less less_equal greater greater_equal logical_and
logical_or logical_xor logaddexp arctan2 power minimum maximum bitwise_and bitwise_or
bitwise_xor left_shift right_shift zeros ones full zeros_like ones_like full_like arange
linspace eye identity tri where clip result_type can_cast isdtype""".split()

METHODS = """abs conj cos exp log log10 log1p log2 reciprocal round rsqrt sin sqrt
square all any max min prod sum mean logsumexp argmax argmin var std squeeze swapaxes moveaxis
flatten diagonal diag split view reshape transpose""".split()


@cmlx_only
def test_signature_table_lists_every_binding():
    sigs = mx._signatures
    assert isinstance(sigs, list)
    for row in sigs:
        assert isinstance(row, tuple) and len(row) == 3
        name, sig, spec = row
        # MLX displays einsum_path without a return annotation
        assert sig.startswith("(") and (") -> " in sig or name == "einsum_path"), row
        assert isinstance(spec, str)
    names = {r[0] for r in sigs}
    for n in BOUND:
        assert n in names, n
        assert callable(getattr(mx, n)), n
    for n in METHODS:
        assert "array." + n in names, n
        assert callable(getattr(mx.array, n)), n


@cmlx_only
def test_functions_are_named_module_functions():
    import pickle

    assert mx.add.__name__ == "add" and mx.add.__qualname__ == "add"
    assert mx.add.__module__ == mx.__name__
    assert pickle.loads(pickle.dumps(mx.add)) is mx.add
    assert "add" in repr(mx.add)


@cmlx_only
def test_doc_is_the_signature():
    assert mx.add.__doc__.startswith("add(a: scalar | array, b: scalar | array")
    # both overloads of arange are documented, one line each, before the
    # docstring text (python/docs) that follows a blank line
    assert mx.arange.__doc__.split("\n\n")[0].count("arange(") == 2
    assert mx.array.round.__doc__.startswith("round(self, decimals: int = 0")


# Where the shared signature list (mlx-core-0.32-signatures.txt, MLX's
# binding declarations) and the installed MLX's docstrings disagree on the
# displayed text only, the table follows the list.
FROM_SIGNATURE_LIST = {
    "degrees": "degrees(a: array, /, *, stream: StreamOrDevice = None) -> array",
    "radians": "radians(a: array, /, *, stream: StreamOrDevice = None) -> array",
    "arctan2": "arctan2(a: array, b: array, /, *, stream: StreamOrDevice = None) -> array",
}


@cmlx_only
@needs_oracle
@pytest.mark.parametrize("name", BOUND)
def test_displayed_signature_is_mlx(name):
    """Our displayed signature is MLX's first docstring line(s)."""
    ours = [r[0] + r[1] for r in mx._signatures if r[0] == name]
    if name in FROM_SIGNATURE_LIST:
        assert ours == [FROM_SIGNATURE_LIST[name]]
        return
    doc = getattr(mlx_ref, name).__doc__.strip().splitlines()
    assert ours == doc[: len(ours)], (ours, doc[: len(ours)])


@cmlx_only
@needs_oracle
@pytest.mark.parametrize("name", METHODS)
def test_method_signature_matches_mlx_shape(name):
    """Method signatures: same parameters as MLX's (which spell the stream
    type out in full)."""
    ours = [r[1] for r in mx._signatures if r[0] == "array." + name][0]
    theirs = getattr(mlx_ref.array, name).__doc__.strip().splitlines()[0]
    norm = theirs.replace(
        "mlx.core.Stream | mlx.core.ThreadLocalStream | mlx.core.Device | mlx.core.DeviceType "
        "| None", "StreamOrDevice").replace("mlx.core.", "").replace("collections.abc.", "")
    assert name + ours == norm


# ------------------------------------------------------------ accepted call forms
#
# For each function: its parameters with a valid value (built per module).
# The test tries every "first k by position, the rest by keyword" split and
# a positional stream, and requires the same accept/refuse pattern as MLX.


def _samples(m):
    A = m.array([0.5, 0.25])
    B = m.array([2, 3])
    U = [("a", A)]
    BI = [("a", A), ("b", B)]
    BW = [("a", B), ("b", B)]
    s = {}
    for n in """abs negative positive sign square sqrt rsqrt reciprocal exp expm1 log log2 log10
            log1p sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh arccosh arctanh sigmoid
            erf erfinv floor ceil isnan isinf isfinite isposinf isneginf logical_not real imag
            conj conjugate degrees radians stop_gradient""".split():
        s[n] = U
    for n in """add subtract multiply divide floor_divide remainder divmod power maximum minimum
            arctan2 logaddexp equal not_equal less less_equal greater greater_equal logical_and
            logical_or logical_xor""".split():
        s[n] = BI
    for n in "bitwise_and bitwise_or bitwise_xor left_shift right_shift".split():
        s[n] = BW
    s["bitwise_invert"] = [("a", B)]
    s["round"] = [("a", A), ("decimals", 1)]
    s["nan_to_num"] = [("a", A), ("nan", 1.0), ("posinf", 2.0), ("neginf", 3.0)]
    s["astype"] = [("a", A), ("dtype", m.int32)]
    s["zeros"] = [("shape", (2,)), ("dtype", m.int32)]
    s["ones"] = [("shape", (2,)), ("dtype", m.int32)]
    s["full"] = [("shape", (2,)), ("vals", 3), ("dtype", m.int32)]
    s["zeros_like"] = [("a", A), ("dtype", m.int32)]
    s["ones_like"] = [("a", A), ("dtype", m.int32)]
    s["full_like"] = [("a", A), ("vals", 3), ("dtype", m.int32)]
    s["linspace"] = [("start", 0), ("stop", 1), ("num", 5), ("endpoint", True), ("dtype", m.float32)]
    s["eye"] = [("n", 3), ("m", 2), ("k", 1), ("dtype", m.int32)]
    s["identity"] = [("n", 3), ("dtype", m.int32)]
    s["tri"] = [("n", 3), ("m", 2), ("k", 1), ("dtype", m.int32)]
    s["where"] = [("condition", B), ("x", A), ("y", B)]
    s["clip"] = [("a", A), ("a_min", 0), ("a_max", 1)]
    s["can_cast"] = [("from_", m.int32), ("to", m.float32)]
    s["isdtype"] = [("dtype", m.int32), ("kind", "integral")]
    return s


def _pattern(m, name):
    ps = _samples(m)[name]
    f = getattr(m, name)
    n = len(ps)
    out = []
    for i in range(n + 1):  # first i positional, the rest by keyword
        out.append(accepts(f, [v for _, v in ps[:i]], {p: v for p, v in ps[i:]}))
    has_stream = name not in ("can_cast", "isdtype")
    out.append(accepts(f, [v for _, v in ps] + [None], {}))          # stream by position
    out.append(accepts(f, [v for _, v in ps], {"stream": None}) if has_stream else None)
    out.append(accepts(f, [v for _, v in ps], {"bogus": 1}))         # unknown keyword
    out.append(accepts(f, [v for _, v in ps[:-1]], {}) if n > 1 else None)  # one missing
    return out


@pytest.mark.parametrize("name", sorted(_samples(mx).keys()))
def test_call_forms_parse(name):
    """Every function accepts its full positional form and stream=None."""
    pat = _pattern(mx, name)
    n = len(_samples(mx)[name])
    assert pat[n] is True  # all positional
    assert pat[n + 3] is False  # unknown keyword refused
    if name not in ("can_cast", "isdtype"):
        assert pat[n + 2] is True  # stream=None


@needs_oracle
@pytest.mark.parametrize("name", sorted(_samples(mx).keys()))
def test_call_forms_match_mlx(name):
    assert _pattern(mx, name) == _pattern(mlx_ref, name)


# ------------------------------------------------------------ type errors


def test_type_error_names_the_function():
    with pytest.raises(TypeError) as e:
        mx.add(1)
    msg = str(e.value)
    assert msg.startswith("add(): incompatible function arguments.")
    assert "1. add(a: scalar | array, b: scalar | array, stream: StreamOrDevice = None) -> array" in msg
    assert msg.endswith("Invoked with types: int")


def test_type_error_lists_kwargs_and_overloads():
    with pytest.raises(TypeError) as e:
        mx.round(mx.array(1.5), decimals=1.5)
    assert str(e.value).endswith("Invoked with types: cmlx.core.array, kwargs = { decimals: float }") \
        or "kwargs = { decimals: float }" in str(e.value)
    with pytest.raises(TypeError) as e:
        mx.arange("a")
    msg = str(e.value)
    assert "1. arange(start" in msg and "2. arange(stop" in msg
    with pytest.raises(TypeError) as e:
        mx.add(a=1, b=2)
    assert str(e.value).endswith("Invoked with types: kwargs = { a: int, b: int }")


@pytest.mark.parametrize("call_", [
    lambda m: m.abs(m.array(1), m.cpu),             # stream is keyword-only
    lambda m: m.abs(a=m.array(1)),                   # a is positional-only
    lambda m: m.abs(None),
    lambda m: m.abs(m.array(1), stream=3),
    lambda m: m.abs(m.array(1), stream="cpu"),
    lambda m: m.add(1, 2, None),
    lambda m: m.round(m.array(1.5), 1.5),
    lambda m: m.round(m.array(1.5), 2 ** 40),
    lambda m: m.zeros_like(3),
    lambda m: m.zeros_like([1, 2]),
    lambda m: m.positive(1),
    lambda m: m.stop_gradient(np.ones(2)),
    lambda m: m.astype(1.5, m.int32),
    lambda m: m.astype(m.array(1.5), None),
    lambda m: m.full(3, None),
    lambda m: m.full_like(3, 3),
    lambda m: m.eye(2.0),
    lambda m: m.eye(2 ** 40),
    lambda m: m.linspace(0, 1, 5.0),
    lambda m: m.linspace(0, 1, None),
    lambda m: m.linspace(0, 1, 3, endpoint=0),
    lambda m: m.linspace(0, 1, 3, endpoint=np.bool_(False)),  # nanobind: Python bools only
    lambda m: m.linspace("a", 1),
    lambda m: m.linspace(1 + 1j, 2),
    lambda m: m.nan_to_num(m.array([1.0]), None),
    lambda m: m.nan_to_num(m.array([1.0]), nan="a"),
    lambda m: m.arange(),
    lambda m: m.arange(start=5),
    lambda m: m.arange(5, m.int16),
    lambda m: m.arange(np.int64(5)),
    lambda m: m.arange(None, 5),
    lambda m: m.arange(1, 5, 1, None, None),
    lambda m: m.arange(0, 2 ** 63, 2 ** 62),  # beyond int64
    lambda m: m.clip(m.array([1])),
    lambda m: m.clip(5, 2, 3),
    lambda m: m.where(m.array([True]), 1, None),
    lambda m: m.can_cast(m.int8, m.integer),
    lambda m: m.can_cast(None, m.int8),
    lambda m: m.isdtype(m.array(1), "integral"),
    lambda m: m.isdtype(m.int8, None),
])
def test_wrong_argument_types_are_type_errors(call_):
    with pytest.raises(TypeError):
        call_(mx)
    if mlx_ref is not None:
        with pytest.raises(TypeError):
            call_(mlx_ref)


@pytest.mark.parametrize("call_", [
    lambda m: m.abs("x"),
    lambda m: m.abs([1, -2]),
    lambda m: m.abs((1, 2)),
    lambda m: m.add(1, "x"),
    lambda m: m.add([1], 1),
    lambda m: m.full((2, 2), [1, 2]),
    lambda m: m.full(3, "a"),
    lambda m: m.nan_to_num([1.0]),
    lambda m: m.clip(m.array([1, 5]), [2], 3),
    lambda m: m.clip(m.array([1, 5]), None, "a"),
    lambda m: m.clip(m.array([1, 5]), None, None),
    lambda m: m.where([True], 1, 2),
    lambda m: m.arange(True),
    lambda m: m.arange(0, 5, dtype=m.bool_),
    lambda m: m.arange(0, 10, 0),
    lambda m: m.arange(0, 1e12),
    lambda m: m.linspace(0, 1, -1),
    lambda m: m.eye(-1),
    lambda m: m.zeros((-1,)),
    lambda m: m.result_type(),
    lambda m: m.result_type(m.int8, 1),
    lambda m: m.result_type(np.array([1])),
    lambda m: m.can_cast(1, m.int8),
    lambda m: m.isdtype(m.int32, "foo"),
    lambda m: m.isdtype(m.int32, m.integer),
    lambda m: m.isdtype(m.int8, [m.int8]),
    lambda m: m.isdtype(m.int8, ("real floating", 3)),
    lambda m: m.isdtype(m.int8, ("real floating", "bogus", "integral")),
    lambda m: m.add(m.array([1, 2], m.int8), 1000),
    lambda m: m.add(m.array([1, 2], m.uint8), -1),
    lambda m: m.array([1], m.int8) + 1000,
    lambda m: m.full_like(m.array([1], m.int8), 300),
])
def test_bad_values_are_value_errors(call_):
    with pytest.raises(ValueError):
        ev(call_(mx))
    if mlx_ref is not None:
        with pytest.raises(ValueError):
            r = call_(mlx_ref)
            mlx_ref.eval(r)


def test_value_error_messages():
    with pytest.raises(ValueError, match="Invalid type list received in array initialization"):
        mx.abs([1, 2])
    with pytest.raises(ValueError, match=r"\[result_type\] At least one array or dtype"):
        mx.result_type()
    with pytest.raises(ValueError, match=r"\[result_type\] Inputs must be arrays or dtypes"):
        mx.result_type(mx.int8, 1.0)
    with pytest.raises(ValueError, match=r"\[can_cast\] `from_` must be an array or a dtype"):
        mx.can_cast(1, mx.int8)
    with pytest.raises(ValueError, match=r"\[isdtype\] Unknown data type kind: 'foo'"):
        mx.isdtype(mx.int8, "foo")
    with pytest.raises(ValueError, match="bool not supported for arange"):
        mx.arange(True)


def test_shape_overflow():
    with pytest.raises(OverflowError):
        mx.zeros(2 ** 31)
    with pytest.raises(OverflowError):
        mx.zeros((2, 2 ** 31))


# ------------------------------------------------------------ stream=


def _stream_forms():
    return [None, mx.cpu, mx.Device(mx.cpu), mx.default_stream(mx.cpu), mx.new_stream(mx.cpu)]


@pytest.mark.parametrize("i", range(5))
def test_stream_forms(i):
    s = _stream_forms()[i]
    x = mx.array([1.0, -2.0])
    assert npv(mx.abs(x, stream=s)).tolist() == [1.0, 2.0]
    assert npv(mx.add(x, 1, stream=s)).tolist() == [2.0, -1.0]
    assert npv(mx.zeros((2,), stream=s)).tolist() == [0.0, 0.0]
    assert npv(mx.arange(3, stream=s)).tolist() == [0, 1, 2]
    assert npv(mx.linspace(0, 1, 3, True, mx.float32, s)).tolist() == [0.0, 0.5, 1.0]
    assert npv(mx.where(x > 0, x, 0.0, stream=s)).tolist() == [1.0, 0.0]
    assert npv(x.abs(stream=s)).tolist() == [1.0, 2.0]


def test_gpu_stream_without_gpu_is_value_error():
    if mx.is_available(mx.gpu):
        pytest.skip("a GPU is available")
    with pytest.raises(ValueError):
        mx.abs(mx.array(1), stream=mx.gpu)


# ------------------------------------------------------------ weak scalars


@pytest.mark.parametrize("arr_dtype,scalar,expected", [
    ("int8", 1, "int8"),
    ("uint8", 1, "uint8"),
    ("int16", True, "int16"),
    ("float16", 1.5, "float16"),
    ("bfloat16", 1.5, "bfloat16"),
    ("float16", 1, "float16"),
    ("int32", 1.5, "float32"),
    ("int8", 1.5, "float32"),
    ("int64", 1.5, "float32"),
    ("bool_", 1, "int32"),
    ("bool_", 1.5, "float32"),
    ("bool_", True, "bool_"),
    ("int8", 1 + 1j, "complex64"),
    ("float64", 1.5, "float64"),
    ("uint32", 7, "uint32"),
])
def test_weak_scalars(arr_dtype, scalar, expected):
    a = mx.array([1, 0], dtype=getattr(mx, arr_dtype))
    rs = [a + scalar, scalar + a, mx.add(a, scalar), mx.add(scalar, a), a * scalar]
    if not isinstance(scalar, complex):
        rs.append(mx.maximum(a, scalar))
    for r in rs:
        assert dname(ev(r)) == expected
    if mlx_ref is not None:
        b = mlx_ref.array([1, 0], dtype=getattr(mlx_ref, arr_dtype))
        assert dtype_name((b + scalar).dtype) == expected


@pytest.mark.parametrize("a,b,expected", [
    (1, 2, "int32"), (1.0, 2, "float32"), (True, 2, "int32"), (True, False, "bool_"),
    (1, 2.5, "float32"), (1 + 2j, 1, "complex64"), (2 ** 40, 1, "int64"),
])
def test_two_python_scalars_use_default_dtypes(a, b, expected):
    r = ev(mx.add(a, b))
    assert dname(r) == expected
    assert r.item() == a + b
    if mlx_ref is not None:
        assert dtype_name(mlx_ref.add(a, b).dtype) == expected


def test_weak_scalar_values_and_reflected_forms():
    a = mx.array([1, 2, 3], dtype=mx.int8)
    assert npv(1 - a).tolist() == [0, -1, -2]
    assert dname(1 - a) == "int8"
    assert npv(2 ** a).tolist() == [2, 4, 8]
    assert dname(2 ** a) == "int8"
    assert npv(7 // a).tolist() == [7, 3, 2]
    assert npv(7 % a).tolist() == [0, 1, 1]
    f = mx.array([1.0, 2.0, 4.0], dtype=mx.float16)
    assert npv(1 / f).tolist() == [1.0, 0.5, 0.25]
    assert dname(1 / f) == "float16"
    assert dname(mx.array([1, 2]) / 2) == "float32"


def test_weak_scalars_in_where_and_clip():
    c = mx.array([True, False])
    assert dname(mx.where(c, mx.array([1, 2], mx.int8), 3)) == "int8"
    assert dname(mx.where(c, 3.5, mx.array([1, 2], mx.float16))) == "float16"
    assert dname(mx.where(True, 1, 2.0)) == "float32"
    r = mx.where(c, 1, 2)
    assert dname(r) == "int32" and npv(r).tolist() == [1, 2]
    x = mx.array([1, 5, 9], mx.int8)
    r = mx.clip(x, 2, 8)
    assert dname(r) == "int8" and npv(r).tolist() == [2, 5, 8]
    r = mx.clip(x, 2.5, 8)
    assert dname(r) == "float32" and npv(r).tolist() == [2.5, 5, 8]
    r = mx.clip(x, None, 8)
    assert dname(r) == "int8" and npv(r).tolist() == [1, 5, 8]
    r = mx.clip(x, mx.array([2, 6, 4], mx.int8), None)
    assert npv(r).tolist() == [2, 6, 9]
    r = mx.clip(mx.array([1.0, 5, 9], mx.float16), 2, 8.5)
    assert dname(r) == "float16" and npv(r).tolist() == [2, 5, 8.5]


# ------------------------------------------------------------ creation


def test_zeros_ones_full():
    assert npv(mx.zeros(3)).tolist() == [0, 0, 0] and dname(mx.zeros(3)) == "float32"
    assert npv(mx.zeros((2, 3))).shape == (2, 3)
    assert npv(mx.zeros([2, 3], mx.int32)).dtype == np.int32
    assert mx.zeros(()).shape == ()
    assert mx.zeros(3, None).dtype == mx.float32
    assert mx.zeros(np.array([2, 3])).shape == (2, 3)
    assert mx.zeros((np.int64(2), 3)).shape == (2, 3)
    assert mx.zeros(range(3)).shape == (0, 1, 2)
    assert npv(mx.ones((2,), dtype=mx.int8)).tolist() == [1, 1]
    assert dname(mx.ones(2, dtype=mx.int8)) == "int8"
    r = mx.full(3, 2)
    assert dname(r) == "int32" and npv(r).tolist() == [2, 2, 2]
    assert dname(mx.full(3, 2.0)) == "float32"
    assert dname(mx.full(3, True)) == "bool_"
    assert dname(mx.full(3, 1 + 2j)) == "complex64"
    r = mx.full((2, 2), mx.array([1, 2]))
    assert npv(r).tolist() == [[1, 2], [1, 2]]
    # MLX 0.32: dtype only steers a scalar's conversion (weakly)
    r = mx.full(3, 2.5, mx.int32)
    assert dname(r) == "float32" and npv(r).tolist() == [2.5, 2.5, 2.5]
    r = mx.full(3, 2, mx.float16)
    assert dname(r) == "float16" and npv(r).tolist() == [2, 2, 2]
    assert dname(mx.full(3, mx.array(2.5), mx.int32)) == "float32"
    assert dname(mx.full(3, True, mx.float32)) == "float32"
    assert dname(mx.full(3, np.array([1.5, 2, 3]), mx.float16)) == "float16"
    with pytest.raises(ValueError):
        mx.full(3, 300, mx.int8)
    assert dname(mx.full(3, mx.array(2, mx.int8))) == "int8"
    r = mx.full((2,), 2 ** 40, mx.int64)
    assert npv(r).tolist() == [2 ** 40] * 2
    r = mx.full(shape=(2,), vals=1.5, dtype=mx.float16)
    assert dname(r) == "float16"


def test_like_functions():
    a = mx.array([[1, 2, 3]], mx.int8)
    r = mx.zeros_like(a)
    assert dname(r) == "int8" and npv(r).tolist() == [[0, 0, 0]]
    r = mx.ones_like(a, mx.float16)
    assert dname(r) == "float16" and npv(r).tolist() == [[1, 1, 1]]
    assert dname(mx.ones_like(a, dtype=None)) == "int8"
    r = mx.full_like(a, 3)
    assert dname(r) == "int8" and npv(r).tolist() == [[3, 3, 3]]
    r = mx.full_like(a, 3.5)
    assert dname(r) == "int8" and npv(r).tolist() == [[3, 3, 3]]
    r = mx.full_like(a, 3.5, mx.float32)
    assert dname(r) == "float32" and npv(r).tolist() == [[3.5, 3.5, 3.5]]
    r = mx.full_like(a, vals=mx.array([7, 8, 9]))
    assert npv(r).tolist() == [[7, 8, 9]]
    r = mx.full_like(a, mx.array(2.5))
    assert dname(r) == "int8" and npv(r).tolist() == [[2, 2, 2]]
    with pytest.raises(ValueError):
        mx.full_like(a, 300)


@pytest.mark.parametrize("args,kwargs", [
    ((5,), {}), ((1, 5), {}), ((1, 5, 0.5), {}), ((5.0,), {}), ((0, 5), {"dtype": "float16"}),
    ((), {"stop": 5}), ((), {"start": 1, "stop": 5}), ((5,), {"step": 2}),
    ((1, 5, 1, "int16"), {}), ((5, None, 2), {}), ((5, None), {}), ((1, 5, None), {}),
    ((5, 2), {}), ((1, 2.5), {}), ((0, 1, 0.25), {"dtype": "int32"}), ((5, 1, -1), {}),
    ((True, 5), {}), ((1, 5, True), {}), ((1.5,), {}), ((-3,), {}),
    ((), {"stop": 5, "step": 2, "dtype": "float32"}), ((1,), {"step": 2, "stop": 5}),
    ((0, 5), {"dtype": "int64"}), ((0, 5), {"dtype": "complex64"}),
    ((2 ** 31, 2 ** 31 + 3), {}), ((2 ** 31 - 2, 2 ** 31 - 1), {}), ((-2 ** 31, -2 ** 31 + 2), {}),
    ((0, 3, 2 ** 31), {}), ((True, 2 ** 40, 2 ** 38), {}), ((0.5, 2 ** 40, 2 ** 38), {}),
])
def test_arange(args, kwargs):
    def run(m):
        kw = {k: (getattr(m, v) if k == "dtype" else v) for k, v in kwargs.items()}
        a = tuple(getattr(m, v) if isinstance(v, str) else v for v in args)
        return m.arange(*a, **kw)

    r = ev(run(mx))
    # NumPy with MLX's default dtypes
    allargs = list(args) + [kwargs.get(k) for k in ("start", "stop", "step") if k in kwargs]
    nums = [v for v in allargs if isinstance(v, (int, float)) and not isinstance(v, str)]
    if "dtype" in kwargs:
        exp_dtype = kwargs["dtype"]
    elif any(isinstance(v, str) for v in args):
        exp_dtype = [v for v in args if isinstance(v, str)][0]
    elif any(isinstance(v, float) for v in nums):
        exp_dtype = "float32"
    else:
        exp_dtype = "int64" if any(not -2 ** 31 <= v < 2 ** 31 for v in nums) else "int32"
    assert dname(r) == exp_dtype
    if mlx_ref is not None:
        ref = run(mlx_ref)
        assert_same_as_oracle(r, ref, msg=f"arange{args}{kwargs}")


def test_arange_values_against_numpy():
    assert npv(mx.arange(10)).tolist() == np.arange(10).tolist()
    assert npv(mx.arange(2, 11, 3)).tolist() == np.arange(2, 11, 3).tolist()
    np.testing.assert_allclose(npv(mx.arange(0.0, 1.0, 0.1)), np.arange(0.0, 1.0, 0.1, dtype=np.float32),
                               rtol=1e-6)
    assert npv(mx.arange(5, None, 2)).tolist() == [0, 2, 4]


@pytest.mark.parametrize("args,kwargs", [
    ((0, 1, 5), {}), ((0, 1), {}), ((0, 1, 5, False), {}), ((0, 1, 7), {"endpoint": False}),
    ((0.1, 3.7, 13), {"endpoint": False}), ((-5, 17, 9), {"endpoint": False}),
    ((0, 1, 5), {"dtype": "int32"}), ((0, 10, 5), {"dtype": None}), ((0, 1, 0), {}),
    ((0, 1, 1), {}), ((0, 1, 1), {"endpoint": False}), ((0, 1, 5, True, "float16"), {}),
    ((np.float32(0), 1, 3), {}),
])
def test_linspace(args, kwargs):
    def run(m):
        kw = {k: (getattr(m, v) if isinstance(v, str) else v) for k, v in kwargs.items()}
        a = tuple(getattr(m, v) if isinstance(v, str) else v for v in args)
        return m.linspace(*a, **kw)

    r = ev(run(mx))
    start, stop = float(args[0]), float(args[1])
    num = args[2] if len(args) > 2 else 50
    endpoint = args[3] if len(args) > 3 else kwargs.get("endpoint", True)
    exp = np.linspace(start, stop, num, endpoint=bool(endpoint))
    dt_ = args[4] if len(args) > 4 else kwargs.get("dtype") or "float32"
    assert dname(r) == dt_
    if dt_ == "int32":
        exp = exp.astype(np.float32).astype(np.int32)
    np.testing.assert_allclose(npv(r).astype(np.float64), exp, rtol=2e-3 if dt_ == "float16" else 1e-6,
                               atol=1e-6)
    if mlx_ref is not None:
        assert_same_as_oracle(r, run(mlx_ref), msg=f"linspace{args}{kwargs}")


def test_eye_identity_tri():
    assert npv(mx.eye(2)).tolist() == np.eye(2).tolist() and dname(mx.eye(2)) == "float32"
    assert npv(mx.eye(2, 3, 1)).tolist() == np.eye(2, 3, 1).tolist()
    assert npv(mx.eye(2, None, 0, None)).tolist() == np.eye(2).tolist()
    assert dname(mx.eye(2, dtype=mx.int32)) == "int32"
    assert npv(mx.eye(2, k=5)).tolist() == np.eye(2, k=5).tolist()
    assert npv(mx.eye(3, m=2, k=np.int64(-1))).tolist() == np.eye(3, 2, -1).tolist()
    assert npv(mx.identity(3)).tolist() == np.identity(3).tolist()
    assert dname(mx.identity(2, None)) == "float32"
    assert dname(mx.identity(2, mx.uint8)) == "uint8"
    assert npv(mx.tri(3)).tolist() == np.tri(3).tolist() and dname(mx.tri(3)) == "float32"
    assert npv(mx.tri(3, 2)).tolist() == np.tri(3, 2).tolist()
    r = mx.tri(3, None, -1, mx.int32)
    assert npv(r).tolist() == np.tri(3, k=-1).astype(int).tolist() and dname(r) == "int32"
    assert dname(mx.tri(3, dtype=None)) == "float32"


# ------------------------------------------------------------ unary specials


def test_unary_accepts_scalars_and_numpy():
    r = mx.abs(-2)
    assert dname(r) == "int32" and r.item() == 2
    r = mx.abs(-1.5)
    assert dname(r) == "float32" and r.item() == 1.5
    r = mx.abs(np.array([1, -2]))
    assert npv(r).tolist() == [1, 2]
    assert dname(mx.abs(np.float32(-2))) == "float32"
    assert npv(mx.abs(memoryview(b"ab"))).tolist() == [97, 98]
    r = mx.abs(1 + 2j)
    assert dname(r) == "float32" and abs(r.item() - math.sqrt(5)) < 1e-6
    assert npv(mx.bitwise_invert(5)).tolist() == -6
    assert npv(mx.logical_not(True)).tolist() is False


def test_round_and_nan_to_num():
    x = mx.array([1.26, -2.5, 0.5, 1.5])
    np.testing.assert_allclose(npv(mx.round(x)), np.round(np.array([1.26, -2.5, 0.5, 1.5], np.float32)))
    np.testing.assert_allclose(npv(mx.round(x, 1)), [1.3, -2.5, 0.5, 1.5], rtol=1e-6)
    np.testing.assert_allclose(npv(mx.round(x, decimals=1)), [1.3, -2.5, 0.5, 1.5], rtol=1e-6)
    np.testing.assert_allclose(npv(mx.round(x, decimals=True)), [1.3, -2.5, 0.5, 1.5], rtol=1e-6)
    np.testing.assert_allclose(npv(mx.round(x, np.int64(1))), [1.3, -2.5, 0.5, 1.5], rtol=1e-6)
    assert npv(mx.round(mx.array([1, 2]), 1)).tolist() == [1, 2]
    y = mx.array([float("nan"), float("inf"), -float("inf"), 1.0])
    f32 = np.finfo(np.float32)
    assert npv(mx.nan_to_num(y)).tolist() == [0.0, float(f32.max), float(f32.min), 1.0]
    assert npv(mx.nan_to_num(y, 1, 2, 3)).tolist() == [1, 2, 3, 1]
    assert npv(mx.nan_to_num(y, nan=True, posinf=np.float64(5), neginf=None)).tolist() == \
        [1, 5, float(f32.min), 1]
    h = mx.array([float("nan"), float("inf")], mx.float16)
    r = mx.nan_to_num(h)
    assert dname(r) == "float16" and npv(r).tolist() == [0, 65504]
    assert dname(mx.nan_to_num(mx.array([1, 2]))) == "int32"
    assert npv(mx.nan_to_num(1.0)).tolist() == 1.0


def test_astype_function():
    r = mx.astype(mx.array([1.5, -2.7]), mx.int32)
    assert dname(r) == "int32" and npv(r).tolist() == [1, -2]
    r = mx.astype(mx.array([1.5]), dtype=mx.float16)
    assert dname(r) == "float16"


def test_conj_and_stop_gradient():
    z = mx.array([1 + 2j, 3 - 1j])
    assert npv(mx.conj(z)).tolist() == [1 - 2j, 3 + 1j]
    assert npv(mx.conjugate(z)).tolist() == [1 - 2j, 3 + 1j]
    assert npv(z.conj()).tolist() == [1 - 2j, 3 + 1j]
    x = mx.array([1.0, 2.0])
    assert npv(mx.stop_gradient(x)).tolist() == [1.0, 2.0]


# ------------------------------------------------------------ binary specials


def test_divmod_returns_a_list():
    q = mx.divmod(mx.array([7, -7]), 2)
    assert isinstance(q, list) and len(q) == 2
    assert npv(q[0]).tolist() == [3, -4] and npv(q[1]).tolist() == [1, 1]
    q = mx.divmod(7.5, 2)
    assert dname(q[0]) == "float32" and q[0].item() == 3.0 and q[1].item() == 1.5


@pytest.mark.parametrize("name,npf", [
    ("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
    ("divide", np.true_divide), ("floor_divide", np.floor_divide), ("remainder", np.remainder),
    ("power", np.power), ("maximum", np.maximum), ("minimum", np.minimum),
    ("equal", np.equal), ("not_equal", np.not_equal), ("less", np.less),
    ("less_equal", np.less_equal), ("greater", np.greater), ("greater_equal", np.greater_equal),
    ("logical_and", np.logical_and), ("logical_or", np.logical_or), ("logical_xor", np.logical_xor),
    ("arctan2", np.arctan2), ("logaddexp", np.logaddexp),
])
def test_binary_functions_broadcast_and_values(name, npf):
    xa = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
    xb = np.array([2.0, 1.0, 4.0], np.float32)
    r = getattr(mx, name)(mx.array(xa), mx.array(xb))
    np.testing.assert_allclose(npv(r), npf(xa, xb), rtol=1e-5)
    r = getattr(mx, name)(mx.array(xa), 2.0)
    np.testing.assert_allclose(npv(r), npf(xa, np.float32(2.0)), rtol=1e-5)


@pytest.mark.parametrize("name,npf", [
    ("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
    ("bitwise_xor", np.bitwise_xor), ("left_shift", np.left_shift), ("right_shift", np.right_shift),
])
def test_bitwise_functions(name, npf):
    xa = np.array([1, 6, 12], np.int32)
    r = getattr(mx, name)(mx.array(xa), 2)
    assert npv(r).tolist() == npf(xa, 2).tolist()
    with pytest.raises(RuntimeError, match=rf"\[{name}\] Only allowed on integer or boolean types"):
        ev(getattr(mx, name)(1.5, 2))


# ------------------------------------------------------------ dtype questions


def test_result_type():
    assert mx.result_type(mx.int8, mx.float16) == mx.float16
    assert mx.result_type(mx.array([1], mx.int8), mx.uint8) == mx.int16
    assert mx.result_type(mx.int8, mx.array(1.0)) == mx.float32
    assert mx.result_type(mx.bool_) == mx.bool_
    assert mx.result_type(mx.int8, mx.array(1), mx.uint16) == mx.int32
    many = [mx.int8] * 20 + [mx.float32]
    assert mx.result_type(*many) == mx.float32


@pytest.mark.parametrize("a", ["bool_", "uint8", "uint16", "uint32", "uint64", "int8", "int16",
                               "int32", "int64", "float16", "bfloat16", "float32", "float64",
                               "complex64"])
def test_can_cast_is_promotion_to_target(a):
    for b in ["bool_", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
              "float16", "bfloat16", "float32", "float64", "complex64"]:
        da, db = getattr(mx, a), getattr(mx, b)
        assert mx.can_cast(da, db) == (mx.result_type(da, db) == db), (a, b)
        if mlx_ref is not None:
            assert mx.can_cast(da, db) == mlx_ref.can_cast(getattr(mlx_ref, a), getattr(mlx_ref, b))
    assert mx.can_cast(mx.array(1), mx.float32)
    assert mx.can_cast(from_=mx.int8, to=mx.int16)


def test_isdtype():
    assert mx.isdtype(mx.int32, "integral")
    assert mx.isdtype(mx.int32, mx.int32)
    assert mx.isdtype(mx.int32, ("real floating", mx.int32))
    assert mx.isdtype(mx.bool_, "bool")
    assert not mx.isdtype(mx.bool_, "numeric")
    assert mx.isdtype(mx.bfloat16, "real floating")
    assert mx.isdtype(mx.complex64, "complex floating")
    assert mx.isdtype(mx.uint8, "unsigned integer")
    assert not mx.isdtype(mx.uint8, "signed integer")
    assert not mx.isdtype(mx.int8, ())
    # a tuple stops at its first match, as MLX
    assert mx.isdtype(mx.int8, ("integral", "bogus"))
    assert mx.isdtype(mx.int8, ("integral", 3))
    assert mx.isdtype(dtype=mx.int8, kind="integral")


# ------------------------------------------------------------ against MLX


def _cases():
    return [
        ("add int8+int", lambda m: m.add(m.array([1, 2], m.int8), 3)),
        ("sub float16-float", lambda m: m.subtract(m.array([1, 2], m.float16), 0.5)),
        ("rpow", lambda m: 2 ** m.array([1, 2, 3])),
        ("rsub", lambda m: 1 - m.array([1.5, 2.5])),
        ("rtruediv", lambda m: 1 / m.array([1, 2])),
        ("rfloordiv", lambda m: 7 // m.array([2, 3], m.uint8)),
        ("rmod", lambda m: -7 % m.array([2, 3])),
        ("where", lambda m: m.where(m.array([True, False]), 1.5, m.array([1, 2], m.float16))),
        ("clip", lambda m: m.clip(m.array([1, 5, 9], m.int8), 2.5, 8)),
        ("clip None", lambda m: m.clip(m.array([1, 5, 9], m.int16), None, 4)),
        ("full", lambda m: m.full((2, 2), 1.5)),
        ("full_like", lambda m: m.full_like(m.array([1, 2], m.int8), 3.5)),
        ("nan_to_num f16", lambda m: m.nan_to_num(m.array([float("inf")], m.float16))),
        ("round", lambda m: m.round(m.array([1.25, 2.5]), 1)),
        ("divmod", lambda m: m.divmod(m.array([7, -7]), 2)),
        ("logical_and scalars", lambda m: m.logical_and(True, False)),
        ("maximum mixed", lambda m: m.maximum(1, 2.5)),
        ("power ints", lambda m: m.power(2, 3)),
        ("bool + True", lambda m: m.array([True]) + True),
        ("bool - True", lambda m: m.array([True]) - True),
        ("compare float", lambda m: m.array([1, 2, 3]) >= 2.5),
        ("eq complex", lambda m: m.array([1, 2]) == 1 + 1j),
        ("imul dtype", lambda m: m.array([1, 2], m.int8).__imul__(2.5)),
        ("ifloordiv", lambda m: m.array([1, 2, 4]).__ifloordiv__(2.5)),
        ("numpy operand", lambda m: m.array([1, 2]) + np.array([1, 2])),
        ("eye", lambda m: m.eye(3, 4, -1, m.int16)),
        ("tri", lambda m: m.tri(4, 3, 1)),
        ("zeros bool shape", lambda m: m.zeros(True)),
        ("full weak dtype", lambda m: m.full(3, 2.5, m.int32)),
        ("full int to f16", lambda m: m.full((2,), 2, m.float16)),
        ("full array dtype", lambda m: m.full(3, m.array(2.5), m.int32)),
        ("full complex", lambda m: m.full(3, 1 + 1j, m.float32)),
        ("full_like cast", lambda m: m.full_like(m.array([1.5]), 1 + 1j)),
    ]


@needs_oracle
@pytest.mark.parametrize("i", range(len(_cases())))
def test_same_as_mlx(i):
    label, fn = _cases()[i]
    sub = call(mx, lambda m: fn(m))
    ref = call(mlx_ref, lambda m: fn(m))
    assert_same_as_oracle(sub, ref, msg=label)
