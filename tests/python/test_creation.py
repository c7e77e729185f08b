"""Array creation: array/asarray (scalars, nested sequences, NumPy arrays of
every dtype and layout, buffer-protocol objects), zeros, ones, full and the
_like forms, arange, linspace, eye, identity, tri; their errors."""

import array as pyarray

import numpy as np
import pytest

from conftest import (
    COMPLEX, DTYPES, FLOATS, INTS, UNDER_ASAN, UNSIGNED, assert_same_as_oracle, assert_values,
    both, cast_like, cmlx_only, dt, dtype_name, mx, needs_oracle, sample, to_np,
)

SHAPES = [(), (0,), (3,), (2, 3), (2, 0, 3), (1, 1, 1, 4)]


def _np_name(name):
    return np.float32 if name == "bfloat16" else np.bool_ if name == "bool_" else np.dtype(name)


# ------------------------------------------------------------ array()

@pytest.mark.parametrize("layout", ["contig", "transposed", "strided", "bcast", "scalar", "empty",
                                    "fortran", "rank4_perm"])
@pytest.mark.parametrize("name", [d for d in DTYPES if d != "bfloat16"])
def test_array_from_numpy(name, layout):
    base = sample(name, (6, 8), 0 if name in UNSIGNED else -50, 50)
    x = {"contig": base, "transposed": base.T, "strided": base[1::2, ::3],
         "bcast": np.broadcast_to(base[:1], (4, 8)), "scalar": base[0, 0].reshape(()),
         "empty": base[:0], "fortran": np.asfortranarray(base),
         "rank4_perm": base.reshape(2, 3, 2, 4).transpose(2, 0, 3, 1)}[layout]
    a = mx.array(x) if name != "float64" else mx.array(x, dtype=mx.float64)
    want = name
    assert dtype_name(a.dtype) == want
    assert tuple(a.shape) == x.shape and a.ndim == x.ndim and a.size == x.size
    assert np.array_equal(to_np(a), x)
    # A copy: later writes to the NumPy array do not show through.
    if x.size and layout != "bcast":
        before = to_np(a).copy()
        base[...] = base[...] * 0 + (1 if name != "bool_" else False)
        assert np.array_equal(to_np(a), before)


def test_array_from_numpy_float64_becomes_float32():
    a = mx.array(np.array([1.5, 2.25], np.float64))
    assert dtype_name(a.dtype) == "float32" and to_np(a).tolist() == [1.5, 2.25]


def test_array_from_negative_strides():
    """MLX refuses negative strides (ValueError); a copy that gets them
    right is fine too, a wrong answer is not."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)[::-1, ::-2]
    try:
        a = mx.array(x)
    except ValueError:
        return
    assert np.array_equal(to_np(a), x)


@pytest.mark.parametrize("obj,want,values", [
    (lambda: bytearray(b"ab"), "uint8", [97, 98]),
    (lambda: b"ab", "uint8", [97, 98]),
    (lambda: pyarray.array("f", [1.5, 2.0]), "float32", [1.5, 2.0]),
    (lambda: pyarray.array("h", [1, -2]), "int16", [1, -2]),
    (lambda: pyarray.array("Q", [2 ** 63]), "uint64", [2 ** 63]),
    (lambda: memoryview(np.arange(4, dtype=np.int16)), "int16", [0, 1, 2, 3]),
])
def test_array_from_buffer_protocol(obj, want, values):
    a = mx.array(obj())
    assert dtype_name(a.dtype) == want
    assert to_np(a).tolist() == values


@pytest.mark.parametrize("name", DTYPES)
def test_array_from_array_and_dtype(name):
    a = mx.array([1, 2, 3], dtype=dt(name))
    b = mx.array(a)
    assert dtype_name(b.dtype) == name and np.array_equal(to_np(b), to_np(a))
    c = mx.array(mx.array([1, 2, 3]), dtype=dt(name))
    assert dtype_name(c.dtype) == name and np.array_equal(to_np(c), to_np(a))
    d = mx.array(np.array([1, 2, 3], np.int32), dtype=dt(name))
    assert dtype_name(d.dtype) == name and np.array_equal(to_np(d), to_np(a))


def test_array_from_nested_sequences():
    a = mx.array([[1, 2, 3], [4, 5, 6]])
    assert tuple(a.shape) == (2, 3) and dtype_name(a.dtype) == "int32"
    assert to_np(a).tolist() == [[1, 2, 3], [4, 5, 6]]
    a = mx.array(((1.5,), (2.5,)))
    assert tuple(a.shape) == (2, 1) and to_np(a).tolist() == [[1.5], [2.5]]
    a = mx.array([mx.array([1, 2]), mx.array([3, 4])])
    assert tuple(a.shape) == (2, 2) and to_np(a).tolist() == [[1, 2], [3, 4]]
    a = mx.array([[]])
    assert tuple(a.shape) == (1, 0) and dtype_name(a.dtype) == "float32"
    a = mx.array([1.5, 2.5], dtype=mx.int8)
    assert to_np(a).tolist() == [1, 2]
    a = mx.array(3.5, mx.int32)
    assert a.item() == 3 and tuple(a.shape) == ()
    a = mx.array(1 + 2j, dtype=mx.float32)
    assert a.item() == 1.0
    a = mx.array(True, mx.float32)
    assert a.item() == 1.0 and dtype_name(a.dtype) == "float32"


@pytest.mark.parametrize("bad", ["[[1, 2], [3]]", "[[1], 2]", "[1, [2]]", "'abc'", "[1, None]",
                                 "{1: 2}", "range(3)"])
def test_array_bad_input_valueerror(bad):
    with pytest.raises(ValueError):
        mx.array(eval(bad))


def test_array_bad_input_typeerror():
    with pytest.raises(TypeError):
        mx.array(None)
    with pytest.raises(TypeError):
        mx.array([1, 2], dtype="float32")
    with pytest.raises(TypeError):
        mx.array()


@cmlx_only
def test_array_huge_python_int_is_an_error():
    # MLX raises RuntimeError(std::bad_cast); cmlx raises the clear error the
    # issue asks for, an OverflowError as Python's int conversions do.
    with pytest.raises(OverflowError, match="does not fit"):
        mx.array(2 ** 70)


def test_asarray():
    assert hasattr(mx, "asarray")
    a = mx.asarray([1, 2])
    assert dtype_name(a.dtype) == "int32" and to_np(a).tolist() == [1, 2]
    a = mx.asarray([1, 2], dtype=mx.int8)
    assert dtype_name(a.dtype) == "int8"
    b = mx.asarray(a)
    assert dtype_name(b.dtype) == "int8" and to_np(b).tolist() == [1, 2]
    b = mx.asarray(a, mx.float32)
    assert dtype_name(b.dtype) == "float32"
    c = mx.asarray(np.arange(3.0))
    assert dtype_name(c.dtype) == "float32" and to_np(c).tolist() == [0, 1, 2]
    assert mx.asarray(3).item() == 3


# ------------------------------------------------------------ zeros / ones / full

@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", DTYPES)
def test_zeros_ones(name, shape):
    for fn, v in ((mx.zeros, 0), (mx.ones, 1)):
        a = fn(shape, dt(name))
        b = fn(shape, dtype=dt(name))
        assert dtype_name(a.dtype) == name and dtype_name(b.dtype) == name
        assert tuple(a.shape) == shape
        exp = np.full(shape, v, _np_name(name))
        assert np.array_equal(to_np(a), exp) and np.array_equal(to_np(b), exp)


def test_zeros_ones_defaults_and_shape_forms():
    for fn in (mx.zeros, mx.ones):
        assert dtype_name(fn((2,)).dtype) == "float32"
        assert dtype_name(fn((2,), dtype=None).dtype) == "float32"
        assert tuple(fn(3).shape) == (3,)
        assert tuple(fn([2, 3]).shape) == (2, 3)
        assert tuple(fn(()).shape) == ()
        assert tuple(fn([]).shape) == ()
        assert tuple(fn(shape=(2,)).shape) == (2,)


@pytest.mark.parametrize("fn", ["zeros", "ones"])
def test_zeros_ones_errors(fn):
    f = getattr(mx, fn)
    with pytest.raises(ValueError):
        f((-1, 2))
    with pytest.raises(ValueError):
        f(-3)
    with pytest.raises(TypeError):
        f(None)
    with pytest.raises(TypeError):
        f((2,), dtype="float32")
    with pytest.raises(TypeError):
        f((2,), dtype=mx.floating)
    with pytest.raises(ValueError):
        mx.eval(f((2,), stream=mx.gpu))


@cmlx_only
@pytest.mark.parametrize("bad", [2.5, "a", (2.5,), [2, None]])
def test_shape_of_wrong_type_is_typeerror(bad):
    # MLX leaks RuntimeError(std::bad_cast) for some of these.
    with pytest.raises(TypeError):
        mx.zeros(bad)


@cmlx_only
@pytest.mark.skipif(UNDER_ASAN, reason="ASan aborts on a 4 TiB malloc instead of returning NULL")
def test_huge_allocation_is_an_error_not_a_crash():
    # MLX segfaults on the first; cmlx must raise, the MemoryError of a
    # failed malloc.  The second is MLX's OverflowError from the shape parser.
    with pytest.raises(MemoryError, match="Unable to allocate"):
        mx.eval(mx.zeros((2 ** 20, 2 ** 20)))
    with pytest.raises(OverflowError, match="outside the supported range"):
        mx.zeros((2 ** 31,))
    assert to_np(mx.ones((2,))).tolist() == [1.0, 1.0]


FULL_SCALARS = [(True, "bool_"), (7, "int32"), (2.5, "float32"), (1 + 2j, "complex64")]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("val,want", FULL_SCALARS, ids=["bool", "int", "float", "complex"])
def test_full_infers_dtype(val, want, shape):
    a = mx.full(shape, val)
    assert dtype_name(a.dtype) == want and tuple(a.shape) == shape
    assert np.array_equal(to_np(a), np.full(shape, val, _np_name(want)))


# dtype given and compatible with the value's kind: the result has it.
FULL_WITH_DTYPE = [(d, 3) for d in INTS + FLOATS + COMPLEX] + [(d, 2.5) for d in FLOATS] + \
    [(d, True) for d in DTYPES]


@pytest.mark.parametrize("name,val", FULL_WITH_DTYPE, ids=[f"{d}-{v}" for d, v in FULL_WITH_DTYPE])
def test_full_with_dtype(name, val):
    a = mx.full((2, 3), val, dtype=dt(name))
    assert dtype_name(a.dtype) == name
    exp = np.full((2, 3), val).astype(_np_name(name))
    assert np.array_equal(to_np(a), exp)


@needs_oracle
@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("val", [True, 3, 2.5, 1j])
def test_full_with_dtype_matches_mlx(name, val):
    """MLX converts the scalar to dtype as a weak scalar (an int with
    dtype=bool gives int32): whatever it does, do the same."""
    if name == "complex64" and val == 2.5:
        pytest.skip("MLX 0.32 returns float32 here (a bug), not to be copied")
    sub, ref = both(lambda m: m.full((2,), val, dtype=getattr(m, name)))
    assert_same_as_oracle(sub, ref, msg=f"full({val!r}, {name})")


def test_full_with_array_values():
    a = mx.full((2, 3), mx.array([1, 2, 3], mx.int8))
    assert dtype_name(a.dtype) == "int8" and to_np(a).tolist() == [[1, 2, 3]] * 2
    a = mx.full((2, 3), mx.array([[1.5], [2.5]]))
    assert to_np(a).tolist() == [[1.5] * 3, [2.5] * 3]
    a = mx.full(3, 7)
    assert to_np(a).tolist() == [7, 7, 7]
    a = mx.full([], 3)
    assert tuple(a.shape) == () and a.item() == 3
    a = mx.full(shape=(2,), vals=3)
    assert to_np(a).tolist() == [3, 3]
    with pytest.raises(ValueError) as e:
        mx.full((2, 3), mx.array([1, 2]))
    assert "(2)" in str(e.value) and "(2,3)" in str(e.value)
    with pytest.raises(ValueError):
        mx.full((-2,), 1)
    with pytest.raises(TypeError):
        mx.full((2,), None)


@pytest.mark.parametrize("name", DTYPES)
def test_like_functions(name):
    src = mx.array(sample(name, (2, 3), 1, 5), dtype=dt(name))
    for fn, v in ((mx.zeros_like, 0), (mx.ones_like, 1)):
        r = fn(src)
        assert dtype_name(r.dtype) == name and tuple(r.shape) == (2, 3)
        assert np.array_equal(to_np(r), np.full((2, 3), v, _np_name(name)))
        r = fn(src, dtype=mx.int16)
        assert dtype_name(r.dtype) == "int16" and np.array_equal(to_np(r), np.full((2, 3), v))
    r = mx.full_like(src, True)
    assert dtype_name(r.dtype) == name
    assert np.array_equal(to_np(r), np.full((2, 3), True).astype(_np_name(name)))
    r = mx.full_like(src, 2, mx.float32)
    assert dtype_name(r.dtype) == "float32" and np.array_equal(to_np(r), np.full((2, 3), 2.0))


def test_like_functions_on_views_and_scalars():
    a = mx.array(np.arange(6, dtype=np.int8).reshape(2, 3).T)
    r = mx.zeros_like(a)
    assert tuple(r.shape) == (3, 2) and dtype_name(r.dtype) == "int8"
    r = mx.ones_like(mx.array(2.5))
    assert tuple(r.shape) == () and r.item() == 1.0
    r = mx.full_like(mx.array([1, 2], mx.int8), 3.7)  # MLX casts to the array's dtype
    assert dtype_name(r.dtype) == "int8" and to_np(r).tolist() == [3, 3]
    r = mx.full_like(mx.array([1, 2], mx.int8), mx.array([5, 6]))
    assert dtype_name(r.dtype) == "int8" and to_np(r).tolist() == [5, 6]
    r = mx.zeros_like(mx.array(np.zeros((2, 0))))
    assert tuple(r.shape) == (2, 0)


def test_like_functions_errors():
    for fn in (mx.zeros_like, mx.ones_like):
        with pytest.raises(TypeError):
            fn([1, 2])
        with pytest.raises(TypeError):
            fn(3)
    with pytest.raises(ValueError):
        mx.full_like(mx.zeros((2, 3)), mx.array([1, 2]))


# ------------------------------------------------------------ arange

ARANGE = [
    ((5,), {}, "int32"), ((5.0,), {}, "float32"), ((1, 5), {}, "int32"), ((0, 1, 0.25), {}, "float32"),
    ((10, 0, -3), {}, "int32"), ((0, 5, 1.5), {}, "float32"), ((0, 10, 3), {"dtype": "float16"}, "float16"),
    ((5,), {"dtype": "int8"}, "int8"), ((), {"start": 1, "stop": 5}, "int32"), ((), {"stop": 5}, "int32"),
    ((5, 1), {}, "int32"), ((0.5, 3), {}, "float32"), ((0, 5), {"step": 2}, "int32"),
    ((3,), {"dtype": "complex64"}, "complex64"), ((3,), {"dtype": "uint64"}, "uint64"),
    ((0, 2 ** 40, 2 ** 38), {}, "int64"), ((0, -5, -1), {}, "int32"), ((0, 5, -1), {}, "int32"),
    ((2, 3, 0.3), {}, "float32"), ((0.1, 0.5, 0.1), {}, "float32"), ((5,), {"dtype": "float64"}, "float64"),
    ((3,), {"dtype": "bfloat16"}, "bfloat16"), ((1.0,), {"dtype": "int8"}, "int8"),
    ((0, 1, 0.3), {"dtype": "int32"}, "int32"), ((-3, 3), {"dtype": "int16"}, "int16"),
    ((1, 2, 0.1), {"dtype": "float16"}, "float16"), ((0, 7, 2), {"dtype": "uint8"}, "uint8"),
    ((-2.5, 2.5, 0.5), {}, "float32"), ((0, 100000), {}, "int32"),
]


def _arange_args(args, kw, mod):
    kw = dict(kw)
    if "dtype" in kw:
        kw["dtype"] = getattr(mod, kw["dtype"])
    return args, kw


@pytest.mark.parametrize("args,kw,want", ARANGE, ids=[f"{a}{k}" for a, k, _ in ARANGE])
def test_arange(args, kw, want):
    a_args, a_kw = _arange_args(args, kw, mx)
    r = mx.arange(*a_args, **a_kw)
    assert dtype_name(r.dtype) == want
    np_kw = {k: v for k, v in kw.items() if k != "dtype"}
    start = np_kw.pop("start", None)
    np_args = ((start,) if start is not None else ()) + tuple(args)
    stop = np_kw.pop("stop", None)
    if stop is not None:
        np_args += (stop,)
    ref = np.arange(*np_args, **np_kw)  # float64 / int64 reference
    assert tuple(r.shape) == ref.shape, (tuple(r.shape), ref.shape)
    if want in INTS:
        # Integer dtypes: start + i*step computed then converted (MLX does the
        # arithmetic in the dtype for ints; fractional steps truncate).
        return
    assert_values(to_np(r), cast_like(ref, want), want)


@needs_oracle
@pytest.mark.parametrize("args,kw,want", ARANGE, ids=[f"{a}{k}" for a, k, _ in ARANGE])
def test_arange_matches_mlx(args, kw, want):
    def f(m):
        a, k = _arange_args(args, kw, m)
        return m.arange(*a, **k)
    sub, ref = both(f)
    assert_same_as_oracle(sub, ref, msg=f"arange{args}{kw}")


def test_arange_integer_values():
    assert to_np(mx.arange(5)).tolist() == [0, 1, 2, 3, 4]
    assert to_np(mx.arange(10, 0, -3)).tolist() == [10, 7, 4, 1]
    assert to_np(mx.arange(0, 7, 2, dtype=mx.uint8)).tolist() == [0, 2, 4, 6]
    assert to_np(mx.arange(-3, 3, dtype=mx.int16)).tolist() == [-3, -2, -1, 0, 1, 2]
    assert to_np(mx.arange(0, 2 ** 40, 2 ** 38)).tolist() == [0, 2 ** 38, 2 ** 39, 3 * 2 ** 38]
    assert to_np(mx.arange(100000))[-1] == 99999


@pytest.mark.parametrize("call,exc", [
    (lambda: mx.arange(0, 10, 0), ValueError),
    (lambda: mx.arange(10, dtype=mx.bool_), ValueError),
    (lambda: mx.arange(True), ValueError),
    (lambda: mx.arange(float("inf")), ValueError),
    (lambda: mx.arange(float("nan")), ValueError),
    (lambda: mx.arange(1e10), ValueError),
    (lambda: mx.arange("a"), TypeError),
    (lambda: mx.arange(), TypeError),
    (lambda: mx.arange(3, stream=mx.gpu), ValueError),
], ids=["step0", "bool", "boolarg", "inf", "nan", "huge", "str", "none", "gpu"])
def test_arange_errors(call, exc):
    with pytest.raises(exc):
        mx.eval(call())


# ------------------------------------------------------------ linspace

LINSPACE = [
    ((0, 1, 5), {}), ((0, 10, 4), {"dtype": "int32"}), ((0, 1, 0), {}), ((0, 1, 1), {}),
    ((0, 1), {}), ((0, 1, 5), {"endpoint": False}), ((0, 1, 3), {"dtype": "float16"}),
    ((1, 0, 3), {}), ((-5, 5, 11), {"dtype": "int32"}), ((0, 1, 3), {"dtype": "bfloat16"}),
    ((2.5, -7.25, 17), {}), ((0, 1, 7), {"dtype": "float64"}), ((0, 1, 3), {"dtype": "complex64"}),
    ((-1, 1, 1001), {}), ((3, 3, 4), {}),
]


def _lin_kw(kw, mod):
    kw = dict(kw)
    if "dtype" in kw:
        kw["dtype"] = getattr(mod, kw["dtype"])
    return kw


@pytest.mark.parametrize("args,kw", LINSPACE, ids=[f"{a}{k}" for a, k in LINSPACE])
def test_linspace(args, kw):
    r = mx.linspace(*args, **_lin_kw(kw, mx))
    want = kw.get("dtype", "float32")
    assert dtype_name(r.dtype) == want
    ref = np.linspace(*args, endpoint=kw.get("endpoint", True))
    assert tuple(r.shape) == ref.shape
    if want in INTS:
        # NumPy floors toward -inf for ints, MLX truncates: compare loosely.
        assert np.all(np.abs(to_np(r).astype(np.float64) - ref) < 1.0)
        return
    assert_values(to_np(r), cast_like(ref, want), want, atol=1e-6)


@needs_oracle
@pytest.mark.parametrize("args,kw", LINSPACE, ids=[f"{a}{k}" for a, k in LINSPACE])
def test_linspace_matches_mlx(args, kw):
    sub, ref = both(lambda m: m.linspace(*args, **_lin_kw(kw, m)))
    assert_same_as_oracle(sub, ref, msg=f"linspace{args}{kw}")


def test_linspace_errors():
    with pytest.raises(ValueError):
        mx.linspace(0, 1, -1)
    with pytest.raises(TypeError):
        mx.linspace(0, 1, 2.5)
    with pytest.raises(TypeError):
        mx.linspace("a", 1, 3)
    assert to_np(mx.linspace(start=0, stop=1, num=3)).tolist() == [0.0, 0.5, 1.0]


# ------------------------------------------------------------ eye / identity / tri

EYE = [(3, None, 0), (2, 3, 0), (3, None, 1), (3, 4, -1), (3, None, 5), (0, None, 0), (3, 2, 1),
       (2, 3, -5), (4, 4, -3), (1, 5, 2)]


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("n,m,k", EYE)
def test_eye(n, m, k, name):
    r = mx.eye(n, m, k, dt(name))
    r2 = mx.eye(n, m=m, k=k, dtype=dt(name))
    assert dtype_name(r.dtype) == name
    exp = np.eye(n, m, k).astype(_np_name(name))
    assert np.array_equal(to_np(r), exp) and np.array_equal(to_np(r2), exp)


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 4])
def test_identity(n, name):
    r = mx.identity(n, dt(name))
    assert dtype_name(r.dtype) == name
    assert np.array_equal(to_np(r), np.identity(n).astype(_np_name(name)))


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("n,m,k", [(3, None, 0), (3, 4, 0), (3, 4, 1), (3, 4, -1), (3, 2, -5),
                                   (3, 2, 10), (0, None, 0), (2, 0, 0), (5, 5, 2)])
def test_tri(n, m, k, name):
    r = mx.tri(n, m, k, dtype=dt(name)) if m is not None else mx.tri(n, k=k, dtype=dt(name))
    assert dtype_name(r.dtype) == name
    assert np.array_equal(to_np(r), np.tri(n, m, k).astype(_np_name(name)))


def test_eye_identity_tri_defaults_and_errors():
    assert dtype_name(mx.eye(2).dtype) == "float32"
    assert dtype_name(mx.identity(2).dtype) == "float32"
    assert dtype_name(mx.tri(2).dtype) == "float32"
    assert to_np(mx.eye(n=2)).tolist() == [[1, 0], [0, 1]]
    assert to_np(mx.tri(n=2, m=3, k=0)).tolist() == [[1, 0, 0], [1, 1, 0]]
    with pytest.raises(ValueError):
        mx.eye(-1)
    with pytest.raises(ValueError):
        mx.eye(2, -1)
    with pytest.raises(ValueError):
        mx.identity(-1)
    with pytest.raises(TypeError):
        mx.eye(2.5)
    with pytest.raises(TypeError):
        mx.identity("a")
    with pytest.raises(ValueError):
        mx.eval(mx.eye(2, stream=mx.gpu))


@needs_oracle
@pytest.mark.parametrize("call", ["eye(3, 4, 1)", "eye(0)", "identity(3)", "tri(3, 4, -1)",
                                  "tri(2, -1, 0)", "tri(3)", "eye(3, k=5)", "tri(0)"])
def test_eye_tri_match_mlx(call):
    sub, ref = both(lambda m: eval("m." + call, {"m": m}))
    assert_same_as_oracle(sub, ref, msg=call)


# ------------------------------------------------------------ laziness of creation

def test_creation_is_lazy_and_independent():
    a = mx.zeros((1000,))
    b = mx.zeros((1000,))
    c = a + 1
    assert to_np(b).sum() == 0 and to_np(c).sum() == 1000
    # Ops on a created array never write into it.
    assert to_np(a).sum() == 0


@pytest.mark.parametrize("name", DTYPES)
def test_scalar_item_round_trip(name):
    a = mx.array(3, dtype=dt(name)) if name != "bool_" else mx.array(True)
    v = a.item()
    want = {"bool_": True}.get(name, 3)
    assert v == want
    assert type(v) is (bool if name == "bool_" else int if name in INTS else
                       complex if name == "complex64" else float)
