"""Dtype objects, the category hierarchy, the 14x14 promotion table,
result_type / can_cast / issubdtype / isdtype, finfo / iinfo."""

import numpy as np
import pytest

from conftest import (
    BOOL, COMPLEX, DTYPES, FLOATS, INTS, PROMOTE, SIGNED, UNSIGNED, cast_like, dt,
    dtype_name, mlx_ref, mx, needs_oracle, sample, to_mx, to_np,
)

SIZES = {"bool_": 1, "uint8": 1, "uint16": 2, "uint32": 4, "uint64": 8, "int8": 1,
         "int16": 2, "int32": 4, "int64": 8, "float16": 2, "bfloat16": 2, "float32": 4,
         "float64": 8, "complex64": 8}

CATEGORIES = ["generic", "number", "integer", "signedinteger", "unsignedinteger",
              "inexact", "floating", "complexfloating"]

# category -> its parent (MLX's hierarchy, as NumPy's but bool under generic)
PARENT = {"number": "generic", "integer": "number", "signedinteger": "integer",
          "unsignedinteger": "integer", "inexact": "number", "floating": "inexact",
          "complexfloating": "inexact", "generic": None}


def category_of(name):
    if name == "bool_":
        return "generic"
    if name in SIGNED:
        return "signedinteger"
    if name in UNSIGNED:
        return "unsignedinteger"
    if name in FLOATS:
        return "floating"
    return "complexfloating"


def ancestors(cat):
    out = []
    while cat is not None:
        out.append(cat)
        cat = PARENT[cat]
    return out


# ------------------------------------------------------------ Dtype objects

@pytest.mark.parametrize("name", DTYPES)
def test_dtype_objects(name):
    d = dt(name)
    assert isinstance(d, mx.Dtype)
    assert d.size == SIZES[name]
    assert d == dt(name) and hash(d) == hash(dt(name))
    others = [dt(n) for n in DTYPES if n != name]
    assert all(d != o for o in others)
    assert name.rstrip("_") in repr(d) and name.rstrip("_") in str(d)
    assert {d: 1}[dt(name)] == 1
    a = mx.zeros((3,), dtype=d)
    assert a.dtype == d and a.itemsize == SIZES[name] and a.nbytes == 3 * SIZES[name]


def test_dtype_is_not_a_string_or_numpy_type():
    assert mx.float32 != "float32"
    with pytest.raises(TypeError):
        mx.zeros((2,), dtype="float32")
    with pytest.raises(TypeError):
        mx.zeros((2,), dtype=np.float32)


def test_categories_exist():
    for c in CATEGORIES:
        assert isinstance(getattr(mx, c), mx.DtypeCategory), c
        assert getattr(mx.DtypeCategory, c) == getattr(mx, c)


# ------------------------------------------------------------ promotion

@pytest.mark.parametrize("b", DTYPES)
@pytest.mark.parametrize("a", DTYPES)
def test_promotion_table(a, b):
    want = PROMOTE[(a, b)]
    assert dtype_name(mx.result_type(dt(a), dt(b))) == want
    xa, xb = to_mx(sample(a, (2,), 1, 3), a), to_mx(sample(b, (2,), 1, 3), b)
    assert dtype_name(mx.result_type(xa, xb)) == want
    assert dtype_name(mx.result_type(xa, dt(b))) == want
    assert dtype_name((xa + xb).dtype) == want
    assert dtype_name(mx.add(xa, xb).dtype) == want
    assert PROMOTE[(b, a)] == want  # symmetric


@needs_oracle
def test_promotion_table_is_mlx():
    """The static table in conftest agrees with real MLX (guards the tests)."""
    for a in DTYPES:
        for b in DTYPES:
            got = dtype_name(mlx_ref.result_type(dt(a, mlx_ref), dt(b, mlx_ref)))
            assert got == PROMOTE[(a, b)], (a, b, got)


def test_result_type_many_and_errors():
    assert dtype_name(mx.result_type(mx.array([1], mx.int8), mx.array([1], mx.uint8), mx.float16)) == "float16"
    assert dtype_name(mx.result_type(mx.int8, mx.int16, mx.uint32)) == "int64"
    assert dtype_name(mx.result_type(mx.float32)) == "float32"
    with pytest.raises(ValueError):
        mx.result_type()
    with pytest.raises(ValueError, match=r"\[result_type\] Inputs must be arrays or dtypes"):
        mx.result_type(1, mx.int8)


@pytest.mark.parametrize("b", DTYPES)
@pytest.mark.parametrize("a", DTYPES)
def test_can_cast(a, b):
    # MLX: safe iff promoting a with b gives b.
    want = PROMOTE[(a, b)] == b
    assert mx.can_cast(dt(a), dt(b)) is want
    assert mx.can_cast(to_mx(sample(a, (1,), 1, 2), a), dt(b)) is want


@needs_oracle
def test_can_cast_is_mlx():
    for a in DTYPES:
        for b in DTYPES:
            assert mx.can_cast(dt(a), dt(b)) == mlx_ref.can_cast(dt(a, mlx_ref), dt(b, mlx_ref)), (a, b)


def test_can_cast_errors():
    with pytest.raises(TypeError):
        mx.can_cast(mx.int8, "int16")
    with pytest.raises(ValueError):  # MLX: "`from_` must be an array or a dtype"
        mx.can_cast("int8", mx.int16)


# ------------------------------------------------------------ issubdtype

@pytest.mark.parametrize("cat", CATEGORIES)
@pytest.mark.parametrize("name", DTYPES)
def test_issubdtype_dtype_category(name, cat):
    want = cat in ancestors(category_of(name))
    assert mx.issubdtype(dt(name), getattr(mx, cat)) is want


@pytest.mark.parametrize("c2", CATEGORIES)
@pytest.mark.parametrize("c1", CATEGORIES)
def test_issubdtype_category_category(c1, c2):
    assert mx.issubdtype(getattr(mx, c1), getattr(mx, c2)) is (c2 in ancestors(c1))


def test_issubdtype_dtypes():
    for a in DTYPES:
        for b in DTYPES:
            assert mx.issubdtype(dt(a), dt(b)) is (a == b)
    assert mx.issubdtype(mx.floating, mx.float32) is False
    with pytest.raises(ValueError):
        mx.issubdtype(mx.int8, "integer")


@needs_oracle
def test_issubdtype_is_mlx():
    items = DTYPES + CATEGORIES
    for a in items:
        for b in items:
            assert mx.issubdtype(getattr(mx, a), getattr(mx, b)) == \
                mlx_ref.issubdtype(getattr(mlx_ref, a), getattr(mlx_ref, b)), (a, b)


# ------------------------------------------------------------ isdtype

KINDS = {
    "bool": BOOL,
    "signed integer": SIGNED,
    "unsigned integer": UNSIGNED,
    "integral": INTS,
    "real floating": FLOATS,
    "complex floating": COMPLEX,
    "numeric": INTS + FLOATS + COMPLEX,
}


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("name", DTYPES)
def test_isdtype_kinds(name, kind):
    assert mx.isdtype(dt(name), kind) is (name in KINDS[kind])


def test_isdtype_dtypes_tuples_errors():
    assert mx.isdtype(mx.int8, mx.int8) is True
    assert mx.isdtype(mx.int8, mx.int16) is False
    assert mx.isdtype(mx.int8, (mx.int16, "bool")) is False
    assert mx.isdtype(mx.int8, (mx.int16, "integral")) is True
    assert mx.isdtype(mx.float16, ("bool", mx.float16)) is True
    with pytest.raises(ValueError):
        mx.isdtype(mx.int8, "foo")
    with pytest.raises(ValueError, match=r"\[isdtype\] `kind` must be a dtype, a string, or a tuple"):
        mx.isdtype(mx.int8, 3)


@needs_oracle
def test_isdtype_is_mlx():
    for name in DTYPES:
        for kind in list(KINDS) + [(mx_k, "bool") for mx_k in ("int8", "float32")]:
            if isinstance(kind, tuple):
                k_sub, k_ref = (dt(kind[0]), kind[1]), (dt(kind[0], mlx_ref), kind[1])
            else:
                k_sub = k_ref = kind
            assert mx.isdtype(dt(name), k_sub) == mlx_ref.isdtype(dt(name, mlx_ref), k_ref), (name, kind)


# ------------------------------------------------------------ finfo / iinfo

FINFO = {
    # name: (min, max, eps, bits, smallest_normal, dtype of the info)
    "float16": (-65504.0, 65504.0, 2.0 ** -10, 16, 2.0 ** -14, "float16"),
    "bfloat16": (-3.3895313892515355e38, 3.3895313892515355e38, 2.0 ** -7, 16, 2.0 ** -126, "bfloat16"),
    "float32": (float(np.finfo(np.float32).min), float(np.finfo(np.float32).max), 2.0 ** -23, 32,
                2.0 ** -126, "float32"),
    "float64": (float(np.finfo(np.float64).min), float(np.finfo(np.float64).max), 2.0 ** -52, 64,
                2.0 ** -1022, "float64"),
    "complex64": (float(np.finfo(np.float32).min), float(np.finfo(np.float32).max), 2.0 ** -23, 32,
                  2.0 ** -126, "float32"),
}


@pytest.mark.parametrize("name", list(FINFO))
def test_finfo(name):
    fi = mx.finfo(dt(name))
    mn, mxv, eps, bits, tiny, d = FINFO[name]
    assert fi.min == mn and fi.max == mxv and fi.eps == eps
    assert fi.bits == bits and fi.smallest_normal == tiny
    assert dtype_name(fi.dtype) == d
    assert "finfo(" in repr(fi)
    # max is representable: casting it does not overflow to inf.
    assert np.isfinite(to_np(mx.array(fi.max, dt(name)).astype(mx.float64 if name != "bfloat16" else mx.float32)))


@pytest.mark.parametrize("name", INTS)
def test_iinfo(name):
    ii = mx.iinfo(dt(name))
    ni = np.iinfo(np.dtype(name))
    assert ii.min == int(ni.min) and ii.max == int(ni.max)
    assert isinstance(ii.min, int) and isinstance(ii.max, int)
    assert dtype_name(ii.dtype) == name
    assert "iinfo(" in repr(ii)


@pytest.mark.parametrize("name", BOOL + INTS)
def test_finfo_rejects_non_inexact(name):
    with pytest.raises(ValueError):
        mx.finfo(dt(name))


@pytest.mark.parametrize("name", BOOL + FLOATS + COMPLEX)
def test_iinfo_rejects_non_integer(name):
    with pytest.raises(ValueError):
        mx.iinfo(dt(name))


def test_info_bad_argument_type():
    with pytest.raises(TypeError):
        mx.finfo("float32")
    with pytest.raises(TypeError):
        mx.iinfo("int32")


@needs_oracle
@pytest.mark.parametrize("name", FLOATS + COMPLEX)
def test_finfo_is_mlx(name):
    a, b = mx.finfo(dt(name)), mlx_ref.finfo(dt(name, mlx_ref))
    for attr in ("min", "max", "eps", "bits", "smallest_normal"):
        assert getattr(a, attr) == getattr(b, attr), attr
    assert dtype_name(a.dtype) == dtype_name(b.dtype)


# ------------------------------------------------------------ dtype inference

INFER = [
    ("True", "bool_"), ("3", "int32"), ("2**40", "int64"), ("1.5", "float32"), ("1j", "complex64"),
    ("[1, 2]", "int32"), ("[1, 2.5]", "float32"), ("[True, 2]", "int32"), ("[True, False]", "bool_"),
    ("[1, 2j]", "complex64"), ("[[1, 2], [3, 4]]", "int32"), ("[]", "float32"), ("(1, 2)", "int32"),
    ("[2**40]", "int64"), ("[1.5, True]", "float32"),
    ("np.arange(3, dtype=np.int64)", "int64"), ("np.arange(3, dtype=np.uint16)", "uint16"),
    ("np.arange(3, dtype=np.float64)", "float32"), ("np.ones(2, np.float16)", "float16"),
    ("np.ones(2, np.complex128)", "complex64"), ("np.ones(2, np.bool_)", "bool_"),
    ("np.float32(1.5)", "float32"), ("np.int8(3)", "int8"), ("np.ones(2, np.int8)", "int8"),
    ("np.ones(2, np.uint64)", "uint64"),
]


@pytest.mark.parametrize("expr,want", INFER, ids=[e for e, _ in INFER])
def test_array_dtype_inference(expr, want):
    a = mx.array(eval(expr))
    assert dtype_name(a.dtype) == want


@needs_oracle
@pytest.mark.parametrize("expr,want", INFER, ids=[e for e, _ in INFER])
def test_array_dtype_inference_is_mlx(expr, want):
    assert dtype_name(mlx_ref.array(eval(expr)).dtype) == want


@pytest.mark.parametrize("name", DTYPES)
def test_array_with_dtype_converts(name):
    vals = [0, 1, 2, 3]
    a = mx.array(vals, dtype=dt(name))
    assert dtype_name(a.dtype) == name
    exp = np.array(vals).astype(np.bool_ if name == "bool_" else np.float32 if name == "bfloat16"
                                else np.dtype(name))
    got = to_np(a)
    assert np.array_equal(got, exp), (got, exp)


def test_float_to_f16_bf16_rounding_on_construction():
    a = mx.array([1e-3, 65519.0, 1e5], mx.float16)
    assert np.array_equal(to_np(a), np.array([1e-3, 65519.0, 1e5]).astype(np.float16))
    b = mx.array([1.0 + 2 ** -8, 1 / 3], mx.bfloat16)
    assert np.array_equal(to_np(b), cast_like(np.array([1.0 + 2 ** -8, 1 / 3]), "bfloat16"))
