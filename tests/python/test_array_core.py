"""The core of cmlx.core outside the op bindings: Dtype objects and
categories, the array type (construction, properties, item/tolist, printing,
len/iter/bool, copying, pickling), NumPy interop (buffer protocol,
__array__, DLPack), devices and streams, the memory API, eval over trees,
weak Python scalars and error types.

Expected values were read off real MLX 0.32; where MLX is importable the
printed forms are also compared with it directly.  Runs against MLX itself
with CMLX_TEST_SUBJECT=mlx.core (cmlx_only tests are then skipped).
"""

import copy
import gc
import pickle
import threading

import numpy as np
import pytest

from conftest import (DTYPES, NP_DTYPE, SUBJECT_NAME, cmlx_only, dtype_name, mlx_ref, mx,
                      needs_oracle, run_in_threads)

MOD = SUBJECT_NAME  # "cmlx.core" (or "mlx.core" when validating the tests)


def name_of(a):
    return dtype_name(a.dtype)


# ================================================================ dtypes

SIZES = {"bool_": 1, "uint8": 1, "uint16": 2, "uint32": 4, "uint64": 8, "int8": 1,
         "int16": 2, "int32": 4, "int64": 8, "float16": 2, "bfloat16": 2, "float32": 4,
         "float64": 8, "complex64": 8}


@pytest.mark.parametrize("name", DTYPES)
def test_dtype_singletons(name):
    d = getattr(mx, name)
    assert d.size == SIZES[name]
    printed = "bool" if name == "bool_" else name
    assert repr(d) == f"{MOD}.{printed}" and str(d) == repr(d)
    assert d == getattr(mx, name) and hash(d) == hash(getattr(mx, name))
    assert {d: 1}[getattr(mx, name)] == 1
    others = [getattr(mx, n) for n in DTYPES if n != name]
    assert all(d != o for o in others)
    assert not (d == name) and not (d == 1)


def test_dtype_type():
    assert type(mx.float32) is mx.Dtype
    assert mx.Dtype.__module__ == MOD
    with pytest.raises(TypeError, match="no constructor defined"):
        mx.Dtype()
    with pytest.raises(TypeError):
        mx.float32 < mx.float16
    with pytest.raises(TypeError):
        pickle.dumps(mx.float32)


CATS = ["complexfloating", "floating", "inexact", "signedinteger", "unsignedinteger",
        "integer", "number", "generic"]


def test_categories_are_an_enum():
    assert [c.name for c in mx.DtypeCategory] == CATS
    assert [c.value for c in mx.DtypeCategory] == list(range(8))
    for c in CATS:
        cat = getattr(mx, c)
        assert isinstance(cat, mx.DtypeCategory)
        assert repr(cat) == str(cat) == f"DtypeCategory.{c}"
    assert mx.DtypeCategory(1) is mx.floating


@pytest.mark.parametrize("a,b,want", [
    ("float32", "floating", True), ("float32", "inexact", True), ("float32", "integer", False),
    ("complex64", "inexact", True), ("complex64", "floating", False),
    ("uint8", "unsignedinteger", True), ("uint8", "signedinteger", False),
    ("int8", "integer", True), ("int8", "number", True), ("bool_", "integer", False),
    ("bool_", "number", False), ("bool_", "generic", True), ("bfloat16", "floating", True),
    ("floating", "inexact", True), ("inexact", "floating", False), ("integer", "number", True),
    ("number", "generic", True), ("generic", "number", False),
    ("float32", "float32", True), ("float32", "float16", False), ("inexact", "float32", False),
])
def test_issubdtype(a, b, want):
    assert mx.issubdtype(getattr(mx, a), getattr(mx, b)) is want


def test_issubdtype_errors():
    with pytest.raises(ValueError, match=r"\[issubdtype\] Received invalid type for first input."):
        mx.issubdtype(1, mx.float32)
    with pytest.raises(ValueError, match="second input"):
        mx.issubdtype(mx.float32, "float32")


FINFO = {  # min, max, eps, smallest_normal, bits, printed
    "float16": (-65504.0, 65504.0, 0.0009765625, 6.103515625e-05, 16,
                "finfo(min=-65504, max=65504, dtype=float16)"),
    "bfloat16": (-3.3895313892515355e+38, 3.3895313892515355e+38, 0.0078125, 1.1754943508222875e-38, 16,
                 "finfo(min=-3.38953e+38, max=3.38953e+38, dtype=bfloat16)"),
    "float32": (-3.4028234663852886e+38, 3.4028234663852886e+38, 1.1920928955078125e-07,
                1.1754943508222875e-38, 32, "finfo(min=-3.40282e+38, max=3.40282e+38, dtype=float32)"),
    "float64": (-1.7976931348623157e+308, 1.7976931348623157e+308, 2.220446049250313e-16,
                2.2250738585072014e-308, 64,
                "finfo(min=-1.79769e+308, max=1.79769e+308, dtype=float64)"),
}


@pytest.mark.parametrize("name", list(FINFO))
def test_finfo(name):
    f = mx.finfo(getattr(mx, name))
    lo, hi, eps, tiny, bits, printed = FINFO[name]
    assert (f.min, f.max, f.eps, f.smallest_normal, f.bits) == (lo, hi, eps, tiny, bits)
    assert f.dtype == getattr(mx, name)
    assert repr(f) == printed


def test_finfo_complex_and_errors():
    f = mx.finfo(mx.complex64)
    assert f.dtype == mx.float32 and f.max == FINFO["float32"][1]
    with pytest.raises(ValueError, match=r"\[finfo\] dtype int32 is not inexact."):
        mx.finfo(mx.int32)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        mx.finfo(mx.floating)
    with pytest.raises(TypeError):
        mx.finfo(np.float32)


@pytest.mark.parametrize("name", ["uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64"])
def test_iinfo(name):
    i = mx.iinfo(getattr(mx, name))
    ref = np.iinfo(NP_DTYPE[name])
    assert (i.min, i.max) == (int(ref.min), int(ref.max))
    assert type(i.min) is int and type(i.max) is int
    assert i.dtype == getattr(mx, name)
    assert repr(i) == f"iinfo(min={ref.min}, max={ref.max}, dtype={name})"


@pytest.mark.parametrize("name", ["bool_", "float32", "complex64"])
def test_iinfo_errors(name):
    printed = "bool" if name == "bool_" else name
    with pytest.raises(ValueError, match=rf"\[iinfo\] Only integer types supported but {printed} was provided"):
        mx.iinfo(getattr(mx, name))


# ================================================================ construction

@pytest.mark.parametrize("value,dtype,py", [
    (True, "bool_", True), (1, "int32", 1), (2**31 - 1, "int32", 2**31 - 1), (2**31, "int64", 2**31),
    (-2**31 - 1, "int64", -2**31 - 1), (-2**63, "int64", -2**63), (1.5, "float32", 1.5),
    (1 + 2j, "complex64", 1 + 2j),
])
def test_scalar_inference(value, dtype, py):
    a = mx.array(value)
    assert name_of(a) == dtype and a.shape == () and a.ndim == 0 and a.size == 1
    assert a.item() == py and type(a.item()) is type(py)


@pytest.mark.parametrize("value,dtype,want", [
    (1, "int8", 1), (1.7, "int32", 1), (300, "uint8", 44), (-1, "uint32", 4294967295),
    (2**40, "int32", 0), (1, "bfloat16", 1.0), (1e300, "float64", 1e300), (1, "float64", 1.0),
    (1 + 1j, "float32", 1.0), (0.1, "float64", 0.1), (2**40 + 1, "float64", 2**40 + 1),
    (True, "float32", 1.0), (1.5, "complex64", 1.5 + 0j),
])
def test_scalar_with_dtype(value, dtype, want):
    a = mx.array(value, getattr(mx, dtype))
    assert name_of(a) == dtype and a.item() == want


@pytest.mark.parametrize("value,dtype,want", [
    ([1, 2.5], "float32", [1.0, 2.5]),
    ([True, 2], "int32", [1, 2]),
    ([True, 2.0], "float32", [1.0, 2.0]),
    ([True, False], "bool_", [True, False]),
    ([1, 2**40], "int64", [1, 2**40]),
    ([2**31, 1.0], "float32", [2147483648.0, 1.0]),
    ([-2**31], "int32", [-2**31]),
    ([1 + 1j, 2], "complex64", [1 + 1j, 2 + 0j]),
    ([True, 1.5j], "complex64", [1 + 0j, 1.5j]),
    ([[1], [2.0]], "float32", [[1.0], [2.0]]),
    ([[1], [True]], "int32", [[1], [1]]),
    ([(1, 2), [3, 4]], "int32", [[1, 2], [3, 4]]),
    (((1, 2), (3, 4)), "int32", [[1, 2], [3, 4]]),
    ([np.float64(1.5), 2], "float32", [1.5, 2.0]),
    ([], "float32", []),
    ([[]], "float32", [[]]),
    ([[], []], "float32", [[], []]),
    ((), "float32", []),
])
def test_list_inference(value, dtype, want):
    a = mx.array(value)
    assert name_of(a) == dtype
    assert a.tolist() == want


@pytest.mark.parametrize("value,dtype,want", [
    ([1.5, 2], "int32", [1, 2]), ([1, 2], "complex64", [1 + 0j, 2 + 0j]), ([1 + 1j], "float32", [1.0]),
    ([-1], "uint8", [255]), ([1.5, 2], "bfloat16", [1.5, 2.0]), ([True, 2.5], "bool_", [True, True]),
    ([3.5], "bool_", [True]), ([1 + 2j], "int32", [1]), ([2**40 + 1], "float64", [2**40 + 1]),
    ([0.1], "float64", [0.1]),
])
def test_list_with_dtype(value, dtype, want):
    a = mx.array(value, dtype=getattr(mx, dtype))
    assert name_of(a) == dtype and a.tolist() == want


@pytest.mark.parametrize("value,msg", [
    ([[1, 2], [3]], "Initialization encountered non-uniform length."),
    ([[1, 2], 3], "Initialization encountered non-uniform length."),
    ([[1, 2], []], "Initialization encountered non-uniform length."),
    ([[], [1]], "Initialization encountered non-uniform length."),
    ([1, [2, 3]], "Initialization encountered extra dimension."),
    ([1, "a"], "Invalid type str received in array initialization."),
    ("a", "Invalid type str received in array initialization."),
    ([None], "Invalid type NoneType received in array initialization."),
    ([np.int64(1), 2], "Invalid type int64 received in array initialization."),
    ([np.float32(1)], "Invalid type float32 received in array initialization."),
    (range(3), "Invalid type range received in array initialization."),
    ({}, "Invalid type dict received in array initialization."),
    (object(), "Invalid type object received in array initialization."),
    ([[1, 2], (3, 4)], "Invalid type tuple received in array initialization."),
])
def test_construction_value_errors(value, msg):
    with pytest.raises(ValueError) as e:
        mx.array(value)
    assert str(e.value) == msg


def test_construction_type_errors():
    for args, kw in [((None,), {}), ((), {}), (([1, 2], [3]), {}), ((), {"dtype": mx.float32}),
                     (([1],), {"dtype": "float32"}), (([1],), {"copy": False})]:
        with pytest.raises(TypeError, match="incompatible function arguments"):
            mx.array(*args, **kw)


@cmlx_only
@pytest.mark.parametrize("value", [2**63, 2**70, -2**63 - 1, [1, 2**64]])
def test_huge_python_ints_overflow(value):
    with pytest.raises(OverflowError):
        mx.array(value)


@cmlx_only
def test_list_ints_that_do_not_fit_the_dtype():
    for value, d in [([2**40], mx.int32), ([-1], mx.uint32), ([-1], mx.uint64), ([2**33], mx.uint32)]:
        with pytest.raises(OverflowError):
            mx.array(value, d)


@pytest.mark.parametrize("np_dtype,name", [
    (np.bool_, "bool_"), (np.uint8, "uint8"), (np.uint16, "uint16"), (np.uint32, "uint32"),
    (np.uint64, "uint64"), (np.int8, "int8"), (np.int16, "int16"), (np.int32, "int32"),
    (np.int64, "int64"), (np.float16, "float16"), (np.float32, "float32"),
    (np.float64, "float32"), (np.complex64, "complex64"), (np.complex128, "complex64"),
])
def test_from_numpy(np_dtype, name):
    x = (np.arange(12).reshape(3, 4) % 3).astype(np_dtype)
    a = mx.array(x)
    assert name_of(a) == name and a.shape == (3, 4)
    assert np.array_equal(np.array(a).astype(np_dtype), x)
    # non-contiguous inputs keep their logical order
    for view in (x.T, x[:, ::2], x[1:, 1:3]):
        b = mx.array(view)
        assert b.shape == view.shape and np.array_equal(np.array(b).astype(np_dtype), view)


def test_from_numpy_dtype_argument_and_scalars():
    x = np.array([0.1, 2.0])
    assert name_of(mx.array(x, dtype=mx.float64)) == "float64"
    assert mx.array(x, dtype=mx.float64).tolist() == [0.1, 2.0]
    assert mx.array(np.array([1, 2]), mx.int8).tolist() == [1, 2]
    assert name_of(mx.array(np.array([1, 2]), dtype=mx.bfloat16)) == "bfloat16"
    assert name_of(mx.array(np.zeros(3), dtype=mx.int8)) == "int8"
    assert name_of(mx.array(np.float64(1.5))) == "float32"
    assert mx.array(np.float64(2.5), dtype=mx.float64).item() == 2.5
    assert name_of(mx.array(np.int64(3))) == "int64" and mx.array(np.int64(3)).item() == 3
    assert name_of(mx.array(np.float16(1.5))) == "float16"
    assert name_of(mx.array(np.bool_(True))) == "bool_"
    assert mx.array(np.array(1 + 2j)).item() == 1 + 2j
    assert mx.array(np.array(2**64 - 1, dtype=np.uint64)).item() == 2**64 - 1
    assert mx.array(np.zeros((2, 0, 3))).shape == (2, 0, 3)


def test_from_numpy_copies():
    x = np.ones(3, np.float32)
    a = mx.array(x)
    x[0] = 5
    assert a.tolist() == [1.0, 1.0, 1.0]


@cmlx_only
def test_from_numpy_negative_strides():
    # MLX refuses these ("Cannot convert DLPack arrays with negative strides");
    # cmlx copies them in order.
    assert mx.array(np.arange(6.0)[::-1]).tolist() == [5, 4, 3, 2, 1, 0]


def test_from_numpy_unsupported_formats():
    for x in (np.array(["a"]), np.array([1, 2], dtype=np.longdouble), np.array([1.0], dtype=">f4")):
        with pytest.raises(RuntimeError):
            mx.array(x)


def test_from_buffer_objects():
    for obj in (b"ab", bytearray(b"ab"), memoryview(b"ab")):
        a = mx.array(obj)
        assert name_of(a) == "uint8" and a.tolist() == [97, 98]


class Dl:
    """A DLPack producer with no buffer protocol."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kw):
        return self.a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def test_from_dlpack_producers():
    a = mx.array(Dl(np.arange(6).reshape(2, 3).T))
    assert name_of(a) == "int64" and a.tolist() == [[0, 3], [1, 4], [2, 5]]
    assert name_of(mx.array(Dl(np.array([1.0, 2.0])))) == "float32"
    assert name_of(mx.array(Dl(np.array([1.0, 2.0])), mx.float64)) == "float64"
    assert mx.array(Dl(np.array([1 + 2j]))).tolist() == [1 + 2j]
    assert mx.array(Dl(np.array([True]))).tolist() == [True]
    assert name_of(mx.from_dlpack(np.array([1, 2], np.uint8))) == "uint8"
    assert mx.from_dlpack(mx.array([1, 2])).tolist() == [1, 2]
    with pytest.raises(TypeError):
        mx.from_dlpack([1, 2])


def test_mlx_array_protocol():
    class A:
        def __mlx_array__(self):
            return mx.array([1, 2])

    assert mx.array(A()).tolist() == [1, 2]
    assert name_of(mx.array(A(), mx.float32)) == "float32"


def test_from_arrays():
    a = mx.array([1, 2])
    assert name_of(mx.array(a)) == "int32" and mx.array(a).tolist() == [1, 2]
    assert name_of(mx.array(a, dtype=mx.float32)) == "float32"
    cases = [
        ([mx.array(1), mx.array(2)], "int32", [1, 2]),
        ([mx.array([1, 2]), mx.array([3, 4.0])], "float32", [[1, 2], [3, 4]]),
        ([mx.array([1, 2]), [3, 4]], "int32", [[1, 2], [3, 4]]),
        ([mx.array([1, 2], mx.float16), [3, 4]], "float16", [[1, 2], [3, 4]]),
        ([mx.array([1, 2], mx.float16), [3, 4.5]], "float32", [[1, 2], [3, 4.5]]),
        ([mx.array(1, mx.int64), 2], "int64", [1, 2]),
        ([mx.array(1, mx.int8), 2], "int32", [1, 2]),
        ([mx.array(1, mx.int8), mx.array(2, mx.uint8)], "int16", [1, 2]),
        ([mx.array(1, mx.int8), True], "int8", [1, 1]),
        ([mx.array(1, mx.bool_), True], "bool_", [True, True]),
        ([mx.array(1, mx.int64), 1.5], "float32", [1, 1.5]),
        ([mx.array(1, mx.float64), 1.5], "float64", [1, 1.5]),
        ([[mx.array(1, mx.int8)], [2]], "int32", [[1], [2]]),
        ([mx.array([1 + 1j]), [2]], "complex64", [[1 + 1j], [2 + 0j]]),
        ([1.0, mx.array(2)], "float32", [1, 2]),
    ]
    for value, dtype, want in cases:
        r = mx.array(value)
        assert name_of(r) == dtype and r.tolist() == want, value
    r = mx.array([mx.array(1), mx.array(2)], dtype=mx.float16)
    assert name_of(r) == "float16"
    for bad in ([mx.array([1, 2]), mx.array([3])], [mx.array([1, 2]), 3], [3, mx.array([1, 2])]):
        with pytest.raises(ValueError, match="non-uniform length"):
            mx.array(bad)


def test_asarray():
    a = mx.array([1, 2], mx.int8)
    assert mx.asarray([1, 2]).tolist() == [1, 2]
    assert name_of(mx.asarray(a, dtype=mx.int16)) == "int16"
    assert mx.asarray(a, copy=True).tolist() == [1, 2]
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        mx.asarray([1, 2], copy=False)
    with pytest.raises(ValueError, match="Cannot import a CPU array without a copy"):
        mx.asarray(np.array([1, 2]), copy=False)
    with pytest.raises(ValueError, match="requested dtype without a copy"):
        mx.asarray(np.array([1, 2]), mx.int8, copy=False)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        mx.asarray(None)


# ================================================================ properties and conversions

def test_properties():
    a = mx.array([[1, 2, 3]])
    assert a.shape == (1, 3) and type(a.shape) is tuple
    assert (a.ndim, a.size, a.itemsize, a.nbytes) == (2, 3, 4, 12)
    assert a.dtype == mx.int32
    assert mx.array(1).shape == ()
    assert mx.array(np.zeros((2, 0))).size == 0
    c = mx.array([1 + 2j, 3 - 4j])
    assert c.real.tolist() == [1, 3] and name_of(c.real) == "float32"
    assert c.imag.tolist() == [2, -4]
    assert mx.array([1.5]).imag.tolist() == [0.0]


def test_transpose_property():
    a = mx.array(np.arange(6).reshape(2, 3))
    assert a.T.shape == (3, 2) and a.T.tolist() == [[0, 3], [1, 4], [2, 5]]
    assert mx.array(np.arange(24).reshape(2, 3, 4)).T.shape == (4, 3, 2)
    assert mx.array([1, 2]).T.tolist() == [1, 2]


@pytest.mark.parametrize("name,value,py", [
    ("bool_", True, bool), ("uint8", 7, int), ("uint16", 7, int), ("uint32", 7, int), ("uint64", 7, int),
    ("int8", -7, int), ("int16", -7, int), ("int32", -7, int), ("int64", -7, int),
    ("float16", 1.5, float), ("bfloat16", 1.5, float), ("float32", 1.5, float),
    ("float64", 0.1, float), ("complex64", 1 + 2j, complex),
])
def test_item_and_tolist_types(name, value, py):
    a = mx.array(value, getattr(mx, name))
    assert type(a.item()) is py and a.item() == value
    lst = mx.array([value, value], getattr(mx, name)).tolist()
    assert lst == [value, value] and all(type(v) is py for v in lst)


def test_item_and_tolist_details():
    assert mx.array(1.1).item() == pytest.approx(1.100000023841858, abs=0)
    assert mx.array(1.1, mx.bfloat16).item() == 1.1015625
    assert mx.array([[1]]).item() == 1
    assert mx.array(3).tolist() == 3
    assert mx.array(np.zeros((2, 0))).tolist() == [[], []]
    assert mx.array(np.zeros((0, 2))).tolist() == []
    assert mx.array(np.arange(6).reshape(2, 3).T).tolist() == [[0, 3], [1, 4], [2, 5]]
    assert (mx.array([1, 2, 3]) * 2).tolist() == [2, 4, 6]  # evaluates implicitly
    with pytest.raises(ValueError, match=r"\[convert\] Only length-1 arrays can be converted to Python scalars."):
        mx.array([1, 2]).item()


def test_astype_method():
    a = mx.array([1, 2])
    assert name_of(a.astype(mx.float16)) == "float16"
    assert name_of(a.astype(mx.float16, stream=mx.cpu)) == "float16"
    assert name_of(a.astype(mx.float16, mx.cpu)) == "float16"
    assert name_of(a.astype(dtype=mx.uint8)) == "uint8"
    assert a.astype(mx.float32).tolist() == [1.0, 2.0]
    for bad in ("float16", np.float16):
        with pytest.raises(TypeError, match="incompatible function arguments"):
            a.astype(bad)
    with pytest.raises(ValueError, match="Cannot get gpu stream without gpu backend"):
        a.astype(mx.float16, stream=mx.gpu)


def test_python_number_protocols():
    assert int(mx.array(3.7)) == 3 and float(mx.array(3)) == 3.0 and int(mx.array([3])) == 3
    assert complex(mx.array(1 + 2j)) == 1 + 2j
    assert [1, 2, 3][mx.array(1)] == 2 and range(mx.array(3)) == range(3)
    assert int(mx.array(True)) == 1
    assert int(mx.array(np.array(2**64 - 1, dtype=np.uint64))) == 2**64 - 1
    with pytest.raises(ValueError, match="Only length-1 arrays"):
        int(mx.array([3, 4]))
    with pytest.raises(TypeError):
        float(mx.array(1 + 2j))
    with pytest.raises(TypeError, match="Only 0-dimensional integer arrays can be converted to an index."):
        [1, 2][mx.array(1.0)]
    with pytest.raises(TypeError, match="Only 0-dimensional integer arrays"):
        mx.array([1]).__index__()


def test_len_iter_bool_hash():
    a = mx.array([[1, 2], [3, 4]])
    assert len(a) == 2 and len(mx.array([1, 2, 3])) == 3
    rows = list(a)
    assert [r.tolist() for r in rows] == [[1, 2], [3, 4]] and all(name_of(r) == "int32" for r in rows)
    assert [r.item() for r in mx.array([5, 6])] == [5, 6]
    assert [r.tolist() for r in a.T] == [[1, 3], [2, 4]]
    with pytest.raises(TypeError, match=r"len\(\) 0-dimensional array."):
        len(mx.array(1))
    with pytest.raises(TypeError, match=r"iter\(\) 0-dimensional array."):
        iter(mx.array(1))
    with pytest.raises(TypeError):
        len(iter(a))
    assert bool(mx.array([3])) is True and bool(mx.array(0.0)) is False and bool(mx.array([[0]])) is False
    for bad in (mx.array([1, 2]), mx.array([])):
        with pytest.raises(ValueError, match="Only length-1 arrays"):
            bool(bad)
    x = mx.array(1)
    assert hash(x) == hash(x) and {x: 1}[x] == 1
    assert hash(mx.array(1)) != hash(x) or mx.array(1) is not x


def test_copy_and_pickle():
    a = mx.array([[1.5, 2.5]])
    for b in (copy.copy(a), copy.deepcopy(a)):
        assert b is not a and b.tolist() == a.tolist() and b.dtype == a.dtype
    state = mx.array([1, 2], mx.float16).__getstate__()
    assert isinstance(state[0], np.ndarray) and state[0].dtype == np.float16 and state[1] == 9
    bstate = mx.array([1, 2], mx.bfloat16).__getstate__()
    assert bstate[0].dtype == np.uint16 and bstate[0].tolist() == [16256, 16384] and bstate[1] == 12
    for name in DTYPES:
        if name == "float64":
            continue  # MLX narrows it (test_pickle_keeps_float64_exact)
        x = mx.array([[0, 1], [1, 0]], getattr(mx, name))
        y = pickle.loads(pickle.dumps(x))
        assert type(y) is mx.array and name_of(y) == name and y.tolist() == x.tolist()
    assert pickle.loads(pickle.dumps(mx.array(3))).tolist() == 3
    with pytest.raises(TypeError):
        mx.array([1]).__reduce__()


@cmlx_only
def test_pickle_keeps_float64_exact():
    # MLX's round trip goes through float32 here.
    y = pickle.loads(pickle.dumps(mx.array([0.1, 2.0], mx.float64)))
    assert name_of(y) == "float64" and y.tolist() == [0.1, 2.0]


def test_weakref_and_subclass():
    import weakref

    a = mx.array([1])
    assert weakref.ref(a)() is a


# ================================================================ printing

REPRS = [
    ("mx.array(True)", "array(True, dtype=bool)"),
    ("mx.array(1.5)", "array(1.5, dtype=float32)"),
    ("mx.array(1+2j)", "array(1+2j, dtype=complex64)"),
    ("mx.array([1, 2.5])", "array([1, 2.5], dtype=float32)"),
    ("mx.array([[1, 2], [3, 4]])", "array([[1, 2],\n       [3, 4]], dtype=int32)"),
    ("mx.array([[], []])", "array([[],\n       []], dtype=float32)"),
    ("mx.array([1+1j, 2])", "array([1+1j, 2+0j], dtype=complex64)"),
    ("mx.array([2**31, 1.0])", "array([2.14748e+09, 1], dtype=float32)"),
    ("mx.array([1.123456789, 2.5, 1e-9])", "array([1.12346, 2.5, 1e-09], dtype=float32)"),
    ("mx.array(np.arange(2000).reshape(2, 1000))",
     "array([[0, 1, 2, ..., 997, 998, 999],\n       [1000, 1001, 1002, ..., 1997, 1998, 1999]], dtype=int64)"),
    ("mx.array([float('nan'), float('inf'), -float('inf')])", "array([nan, inf, -inf], dtype=float32)"),
    ("mx.array(1e300, mx.float64)", "array(1e+300, dtype=float64)"),
    ("mx.array([1, 2], mx.bfloat16)", "array([1, 2], dtype=bfloat16)"),
    ("mx.array(np.arange(6).reshape(2, 3)).T", "array([[0, 3],\n       [1, 4],\n       [2, 5]], dtype=int64)"),
]


@pytest.mark.parametrize("expr,want", REPRS)
def test_repr_matches_mlx(expr, want):
    a = eval(expr)
    assert repr(a) == want and str(a) == want


@needs_oracle
@pytest.mark.parametrize("expr", [e for e, _ in REPRS] + [
    "mx.array(np.arange(24.).reshape(2, 3, 4) / 7)", "mx.array([True, False])",
    "mx.array([-0.0, 0.0])", "mx.array(np.zeros((2, 0, 3)))", "mx.array(3, mx.uint8)",
])
def test_repr_against_oracle(expr):
    got = repr(eval(expr, {"mx": mx, "np": np}))
    want = repr(eval(expr, {"mx": mlx_ref, "np": np}))
    assert got == want


# ================================================================ NumPy interop

@pytest.mark.parametrize("name", [n for n in DTYPES if n != "bfloat16"])
def test_numpy_round_trip(name):
    x = (np.arange(6).reshape(2, 3) % 2).astype(NP_DTYPE[name])
    a = mx.array(x, getattr(mx, name))
    y = np.array(a)
    assert y.dtype == NP_DTYPE[name] and np.array_equal(y, x)
    assert np.array_equal(np.asarray(a), x) and np.array_equal(a.__array__(), x)


BUFFER_FORMATS = {"bool_": "?", "uint8": "B", "uint16": "H", "uint32": "I", "uint64": "Q",
                  "int8": "b", "int16": "h", "int32": "i", "int64": "q", "float16": "e",
                  "float32": "f", "float64": "d", "bfloat16": "bfloat16", "complex64": "Zf"}


@pytest.mark.parametrize("name", DTYPES)
def test_buffer_formats(name):
    m = memoryview(mx.array([1, 0], getattr(mx, name)))
    assert m.format == BUFFER_FORMATS[name] and m.itemsize == SIZES[name]
    assert m.shape == (2,) and not m.readonly


def test_buffer_layouts_and_sharing():
    a = mx.array([[1, 2], [3, 4]], mx.float32)
    assert memoryview(a).strides == (8, 4)
    assert memoryview(a.T).strides == (4, 8)  # exported as is, like MLX
    t = np.array(a.T)
    assert t.tolist() == [[1, 3], [2, 4]] and t.strides == (4, 8)
    assert memoryview(mx.array(1)).shape == ()
    view = np.asarray(a)
    assert not view.flags.owndata and view.flags.writeable  # zero-copy
    assert np.array(a).flags.writeable
    assert np.array(mx.array(3)).tolist() == 3
    assert np.array(mx.array([1, 2], mx.bool_)).tolist() == [True, True]
    assert np.asarray(mx.array([[1, 2]]), dtype=np.float64).dtype == np.float64
    assert np.array([mx.array(1), mx.array(2)]).tolist() == [1, 2]
    # a consumer that insists on C-contiguous memory gets a copy of a view
    c = np.ascontiguousarray(a.T)
    assert c.tolist() == [[1, 3], [2, 4]] and c.flags.c_contiguous
    assert bytes(memoryview(a.T)) == np.array([[1, 3], [2, 4]], np.float32).tobytes()


def test_bfloat16_is_not_numpy():
    b = mx.array([1, 2], mx.bfloat16)
    with pytest.raises(ValueError, match="bfloat16"):
        np.array(b)
    with pytest.raises(TypeError, match="bfloat16 arrays cannot be converted to NumPy."):
        b.__array__()


def test_dunder_array():
    a = mx.array([1, 2])
    assert a.__array__().dtype == np.int32
    assert a.__array__(np.float32).dtype == np.int32  # MLX leaves the cast to NumPy
    assert a.__array__(copy=True).tolist() == [1, 2]
    assert np.array(a, copy=False).tolist() == [1, 2]


@cmlx_only
def test_dunder_array_copy_is_a_copy():
    # MLX ignores copy=True and hands out its own memory.
    a = mx.array([1, 2])
    c = a.__array__(copy=True)
    c[0] = 7
    assert a.tolist() == [1, 2]


@pytest.mark.parametrize("name", ["bool_", "uint8", "int16", "int64", "float16", "float32", "float64", "complex64"])
def test_dlpack_export(name):
    a = mx.array([[0, 1], [1, 0]], getattr(mx, name))
    y = np.from_dlpack(a)
    assert y.dtype == NP_DTYPE[name] and y.tolist() == a.tolist()
    assert np.from_dlpack(a.T).tolist() == a.T.tolist()


def test_dlpack_details():
    a = mx.array([1, 2])
    assert a.__dlpack_device__() == (1, 0)
    for kw in ({}, {"stream": None}, {"max_version": (1, 0)}, {"copy": True}, {"dl_device": (1, 0)}):
        cap = a.__dlpack__(**kw)
        assert type(cap).__name__ == "PyCapsule"
        del cap  # never consumed: the capsule frees the tensor
    with pytest.raises(RuntimeError):
        np.from_dlpack(mx.array([1, 2], mx.bfloat16))  # NumPy has no bfloat16
    gc.collect()


# ================================================================ devices and streams

def test_device_types_and_devices():
    assert list(mx.DeviceType) == [mx.cpu, mx.gpu] and mx.cpu.value == 0
    assert repr(mx.cpu) == "DeviceType.cpu"
    d = mx.Device(mx.cpu)
    assert repr(d) == str(d) == "Device(cpu, 0)" and d.type == mx.cpu
    assert repr(mx.Device(mx.gpu, 1)) == "Device(gpu, 1)"
    assert mx.Device(mx.cpu, index=0) == mx.Device(type=mx.cpu) == mx.Device(0)
    assert d == mx.cpu and mx.cpu == d and d != mx.Device(mx.cpu, 1) and not (d == "cpu")
    assert hash(d) == hash(d)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        mx.Device("cpu")
    assert mx.default_device() == mx.Device(mx.cpu)
    assert mx.is_available(mx.cpu) and not mx.is_available(mx.gpu)
    assert not mx.is_available(mx.Device(mx.gpu))
    assert mx.device_count(mx.cpu) == 1 and mx.device_count(mx.gpu) == 0
    with pytest.raises(TypeError):
        mx.device_count(mx.Device(mx.cpu))
    info = mx.device_info()
    assert set(info) == {"architecture", "device_name"} and info == mx.device_info(mx.cpu)
    assert mx.device_info(mx.gpu) == {}
    with pytest.raises(TypeError):
        mx.device_info("cpu")


def test_streams():
    s0 = mx.default_stream(mx.cpu)
    assert repr(s0).startswith("Stream(Device(cpu, 0), ") and s0.device == mx.Device(mx.cpu)
    assert s0 == mx.default_stream(mx.cpu) and {s0: 1}[s0] == 1
    assert s0 != mx.cpu and s0 != 3
    s1 = mx.new_stream(mx.cpu)
    s2 = mx.new_stream(mx.Device(mx.cpu))
    assert s1 != s2 and s1 != s0 and s1 == s1
    assert repr(s2) != repr(s1)
    with pytest.raises(TypeError, match="no constructor defined"):
        mx.Stream(mx.cpu)
    with pytest.raises(TypeError):
        mx.default_stream()
    with pytest.raises(TypeError):
        mx.new_stream()
    assert mx.synchronize() is None and mx.synchronize(s1) is None and mx.synchronize(mx.cpu) is None


def test_stream_context_sets_and_restores():
    before = mx.default_stream(mx.cpu)
    s = mx.new_stream(mx.cpu)
    s2 = mx.new_stream(mx.cpu)
    with mx.stream(s) as entered:
        assert entered is None
        assert mx.default_stream(mx.cpu) == s
        with mx.stream(s2):
            assert mx.default_stream(mx.cpu) == s2
            assert (mx.array([1, 2]) + 1).tolist() == [2, 3]
        assert mx.default_stream(mx.cpu) == s
    assert mx.default_stream(mx.cpu) == before
    with mx.stream(mx.cpu):
        assert mx.default_device() == mx.Device(mx.cpu)
    with pytest.raises(RuntimeError):
        with mx.stream(s):
            raise RuntimeError("inside")
    assert mx.default_stream(mx.cpu) == before
    for bad in (None, 3):
        with pytest.raises(TypeError, match="incompatible function arguments"):
            mx.stream(bad)


def test_set_default_stream():
    before = mx.default_stream(mx.cpu)
    s = mx.new_stream(mx.cpu)
    try:
        mx.set_default_stream(s)
        assert mx.default_stream(mx.cpu) == s
        assert (mx.array([1.0]) * 3).item() == 3.0
    finally:
        mx.set_default_stream(before)
    assert mx.default_stream(mx.cpu) == before
    with pytest.raises(TypeError):
        mx.set_default_stream(mx.new_thread_local_stream(mx.cpu))


def test_thread_local_streams():
    tl = mx.new_thread_local_stream(mx.cpu)
    assert repr(tl).startswith("ThreadLocalStream(Device(cpu, 0), ") and tl.device == mx.Device(mx.cpu)
    with mx.stream(tl):
        mine = mx.default_stream(mx.cpu)
        assert (mx.array([1]) + 1).tolist() == [2]
    with mx.stream(tl):
        assert mx.default_stream(mx.cpu) == mine  # the same stream each time in a thread
    seen = []

    def worker():
        with mx.stream(tl):
            seen.append(mx.default_stream(mx.cpu))

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen and seen[0] != mine
    assert mx.add(mx.array(1), 1, stream=tl).item() == 2
    assert mx.synchronize(tl) is None
    assert mx.new_thread_unsafe_stream(mx.cpu) != mx.new_thread_unsafe_stream(mx.cpu)

    def clearer():  # in its own thread: MLX drops the calling thread's streams
        with mx.stream(tl):
            pass
        seen.append(mx.clear_streams())

    t = threading.Thread(target=clearer)
    t.start()
    t.join()
    assert seen[-1] is None


@cmlx_only
def test_equal_devices_and_streams_hash_equal():
    # MLX hashes these by identity, so equal objects may hash differently.
    assert hash(mx.Device(mx.cpu)) == hash(mx.Device(mx.cpu, 0))
    assert hash(mx.default_stream(mx.cpu)) == hash(mx.default_stream(mx.cpu))


def test_gpu_errors():
    with pytest.raises(ValueError, match=r"\[default_stream\] Cannot get gpu stream without gpu backend."):
        mx.default_stream(mx.gpu)
    with pytest.raises(ValueError, match=r"\[new_stream\] Cannot make gpu stream without gpu backend."):
        mx.new_stream(mx.gpu)
    with pytest.raises(ValueError, match=r"\[set_default_device\] Cannot set gpu device without gpu backend."):
        mx.set_default_device(mx.gpu)
    before = mx.default_stream(mx.cpu)
    ctx = mx.stream(mx.gpu)  # making the context is fine; entering it is not
    with pytest.raises(ValueError, match="Cannot get gpu stream without gpu backend"):
        with ctx:
            pass
    assert mx.default_stream(mx.cpu) == before and mx.default_device() == mx.Device(mx.cpu)
    with pytest.raises(ValueError):
        mx.add(mx.array(1), 1, stream=mx.gpu)


# ================================================================ memory

MB = 1 << 20


def settle():
    gc.collect()
    mx.synchronize()


def test_memory_counters():
    settle()
    mx.clear_cache()
    base = mx.get_active_memory()
    mx.reset_peak_memory()
    big = mx.array(np.ones((1024, 1024), np.float32))
    mx.eval(big)
    assert mx.get_active_memory() - base >= 4 * MB
    assert mx.get_peak_memory() >= base + 4 * MB
    del big
    settle()
    assert mx.get_active_memory() - base < 4 * MB
    assert mx.get_cache_memory() >= 0
    mx.clear_cache()
    assert mx.get_cache_memory() == 0
    mx.reset_peak_memory()
    assert mx.get_peak_memory() <= mx.get_active_memory() + MB


def test_memory_limits():
    old = mx.set_memory_limit(1 << 40)
    assert isinstance(old, int) and old > 0
    assert mx.set_memory_limit(old) == 1 << 40
    old_cache = mx.set_cache_limit(1 << 30)
    assert mx.set_cache_limit(limit=old_cache) == 1 << 30
    assert isinstance(mx.set_wired_limit(0), int)
    for bad in (-1, "a", 1.5):
        with pytest.raises(TypeError):
            mx.set_memory_limit(bad)
    assert mx.clear_cache() is None and mx.reset_peak_memory() is None


# ================================================================ eval

def test_eval_trees():
    a = mx.array([1.0, 2.0]) * 2
    b = mx.array([3.0]) + 1
    c = mx.array(5) - 1
    assert mx.eval({"x": [a, (b, "str")], "y": 3, "z": None}, c, 7) is None
    assert a.tolist() == [2.0, 4.0] and b.tolist() == [4.0] and c.item() == 4
    for args in ((), (1,), (None,), (object(),), ([1, "a"],), ({1: "a"},)):
        assert mx.eval(*args) is None
    d = mx.array([1, 2]) * 3
    assert mx.async_eval([d, 3]) is None
    assert d.tolist() == [3, 6]
    assert mx.async_eval() is None


def test_eval_while_python_threads_run():
    results = []

    def worker(k):
        x = mx.array(np.full((256, 256), k, np.float32))
        for _ in range(10):
            x = x + 1
        mx.eval(x)
        results.append((k, x.tolist()[0][0]))

    run_in_threads(worker)
    assert sorted(results) == [(k, float(k + 10)) for k in range(4)]


# ================================================================ weak scalars and errors

WEAK = {  # array dtype -> result dtype with a bool, int, float, complex scalar
    "bool_": ("bool_", "int32", "float32", "complex64"),
    "uint8": ("uint8", "uint8", "float32", "complex64"),
    "uint64": ("uint64", "uint64", "float32", "complex64"),
    "int8": ("int8", "int8", "float32", "complex64"),
    "int64": ("int64", "int64", "float32", "complex64"),
    "float16": ("float16", "float16", "float16", "complex64"),
    "bfloat16": ("bfloat16", "bfloat16", "bfloat16", "complex64"),
    "float32": ("float32", "float32", "float32", "complex64"),
    "float64": ("float64", "float64", "float64", "complex64"),
    "complex64": ("complex64", "complex64", "complex64", "complex64"),
}


@pytest.mark.parametrize("name", list(WEAK))
def test_weak_scalars(name):
    a = mx.array(1, getattr(mx, name))
    for scalar, want in zip((True, 1, 1.5, 1j), WEAK[name]):
        assert name_of(a + scalar) == want, (name, scalar)
        assert name_of(scalar + a) == want, (name, scalar)
        assert name_of(mx.add(a, scalar)) == want


def test_weak_scalar_values_and_overflow():
    assert (mx.array(0, mx.float64) + 0.1).item() == 0.1  # the scalar keeps float64 precision
    assert (mx.array(1, mx.int8) + 127).item() == -128
    assert (mx.array(1, mx.uint8) + 255).item() == 0
    assert (mx.array(1, mx.uint64) + (-1)).item() == 0
    assert (mx.array(True) + 2**31).item() == -2147483647  # bool arrays take an int32 that wraps
    assert (mx.array(1, mx.float16) + 2**40).item() == float("inf")
    for arr, v, msg in [(mx.array([1], mx.int8), 1000, "Converting 1000 to int8 would result in overflow."),
                        (mx.array([1], mx.uint8), -1, "Converting -1 to uint8 would result in overflow."),
                        (mx.array([1], mx.uint16), 65536, "Converting 65536 to uint16 would result in overflow."),
                        (mx.array(1, mx.int32), 2**40, "Converting 1099511627776 to int32 would result in overflow.")]:
        with pytest.raises(ValueError) as e:
            arr + v
        assert str(e.value) == msg
    # NumPy operands take the array's dtype too; lists are not operands
    assert name_of(mx.array([1], mx.int8) + np.array([1, 2])) == "int8"
    assert name_of(mx.array([1], mx.float16) + np.float64(1.5)) == "float16"
    with pytest.raises(ValueError, match="Invalid type list received in array initialization."):
        mx.add(1, [1, 2])
    assert name_of(mx.add(1, 2.0)) == "float32" and name_of(mx.add(2**40, 1)) == "int64"


@cmlx_only
def test_weak_huge_int_overflows():
    with pytest.raises(OverflowError):
        mx.array(1, mx.int32) + 2**63


def test_module_constants():
    import math

    assert mx.pi == math.pi and mx.e == math.e and mx.inf == math.inf
    assert math.isnan(mx.nan) and mx.newaxis is None
    assert mx.euler_gamma == pytest.approx(0.5772156649015329)


def test_mT_swaps_the_last_two_axes():
    a = mx.array(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    np.testing.assert_array_equal(np.array(a.mT), np.arange(24, dtype=np.float32).reshape(2, 3, 4).swapaxes(-1, -2))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        mx.zeros((3,)).mT
