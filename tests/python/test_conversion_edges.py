"""Edge cases MLX's own suite and a new user's first hour found: float to
integer casts out of range (MLX's results, not saturation), Python floats
keeping double precision for float64, sums of empty arrays (+0.0), the NaN
rules of complex max/min/argmax/argmin/cummin, 32-bit index checks,
OverflowError for shape dimensions, dtype names, DLPack imports.

The expected values are MLX 0.32.4's (read off it on this machine kind);
with MLX importable the same grids are compared with it directly.
"""

import math

import numpy as np
import pytest

from conftest import (FLOATS, INTS, SUBJECT_IS_MLX, SUBJECT_NAME, cmlx_only, mlx_ref, mx,
                      needs_oracle)

INT_TARGETS = ["bool_"] + INTS

# ================================================================ float -> int casts

GRID = [math.nan, -math.nan, math.inf, -math.inf, 3e9, -3e9, 1e20, -1e20, 1e10, 300.2, -1.7,
        -1.0, -0.5, 0.5, 0.9, 255.5, 256.0, 65535.7, 65536.0, 2.0 ** 31 - 0.5, 2.0 ** 31,
        2.0 ** 32, 2.0 ** 32 + 5, -2.0 ** 31, -2.0 ** 31 - 1e3, 2.0 ** 63, -2.0 ** 63, 2.0 ** 64,
        1.5e19, -129.0, 128.0, 127.9, 2.0 ** 53, 12345.678, -40000.0, 70000.0, 5e9, -5e9]


def f2i_model(v, target):
    """MLX's float -> integer conversion (x86-64 truncation), in Python."""
    def i32(x):
        return int(x) if not math.isnan(x) and -2.0 ** 31 - 1 < x < 2.0 ** 31 else -2 ** 31

    def i64(x):
        return int(x) if not math.isnan(x) and -2.0 ** 63 <= x < 2.0 ** 63 else -2 ** 63

    if target == "bool_":
        return v != 0
    if target == "int32":
        return i32(v)
    if target == "int64":
        return i64(v)
    if target in ("int8", "int16", "uint8", "uint16"):
        bits = 8 if target.endswith("8") else 16
        low = i32(v) % (1 << bits)
        return low - (1 << bits) if target.startswith("int") and low >= 1 << (bits - 1) else low
    if target == "uint32":
        if v >= 2.0 ** 31:
            return (i32(v - 2.0 ** 31) % 2 ** 32) ^ 2 ** 31
        return i32(v) % 2 ** 32
    if target == "uint64":
        if v >= 2.0 ** 63:
            return (i64(v - 2.0 ** 63) % 2 ** 64) ^ 2 ** 63
        return i64(v) % 2 ** 64
    raise AssertionError(target)


def stored(v, src):
    """v as the float dtype `src` holds it (as a Python float)."""
    a = mx.array([v], dtype=getattr(mx, src))
    return a.astype(mx.float64).item() if src != "complex64" else a.real.item()


@pytest.mark.parametrize("target", INT_TARGETS)
@pytest.mark.parametrize("src", ["bfloat16", "float32", "float64", "complex64"])
def test_astype_float_to_int_follows_mlx(src, target):
    if SUBJECT_IS_MLX and target == "uint32":
        pytest.skip("MLX's uint32 results depend on the element's place in the row")
    a = mx.array(GRID, dtype=getattr(mx, src))
    got = a.astype(getattr(mx, target)).tolist()
    want = [f2i_model(stored(v, src), target) for v in GRID]
    assert got == want
    # every layout converts the same way
    x = mx.array(np.array(GRID, dtype=np.float64).reshape(2, 19), dtype=getattr(mx, src))
    assert x.T.astype(getattr(mx, target)).tolist() == \
        [[f2i_model(stored(v, src), target) for v in col] for col in np.array(GRID).reshape(2, 19).T]


@pytest.mark.parametrize("target", INT_TARGETS)
def test_float16_to_int(target):
    # MLX never vectorises float16 -> uint32, so every element gets the
    # scalar loop's result: the low 32 bits of the int64 conversion
    a = mx.array(GRID, dtype=mx.float16)
    got = a.astype(getattr(mx, target)).tolist()
    vals = [stored(v, "float16") for v in GRID]
    if target == "uint32":
        want = [f2i_model(v, "int64") % 2 ** 32 for v in vals]
    else:
        want = [f2i_model(v, target) for v in vals]
    assert got == want


@pytest.mark.parametrize("target", INT_TARGETS)
def test_constructor_and_astype_agree(target):
    if SUBJECT_IS_MLX and target == "uint32":
        pytest.skip("MLX's uint32 results depend on the element's place in the row")
    t = getattr(mx, target)
    from_list = mx.array(GRID, dtype=t).tolist()
    from_double = mx.array(GRID, dtype=mx.float64).astype(t).tolist()
    assert from_list == from_double
    assert [mx.array(v, dtype=t).item() for v in GRID] == from_double
    assert mx.array([300.0, -1.0], dtype=mx.uint8).tolist() == [44, 255]
    assert mx.array([300.0, -1.0]).astype(mx.uint8).tolist() == [44, 255]
    assert mx.array([-1.7, 300.2]).astype(mx.uint8).tolist() == [255, 44]


def test_specific_values_of_the_issue():
    assert mx.array([math.nan, 3e9]).astype(mx.int32).tolist() == [-2 ** 31, -2 ** 31]
    # a Python float for an integer dtype converts from the double
    assert mx.array(4294967301.0, dtype=mx.int64).item() == 4294967301
    assert mx.array([2.0 ** 31 - 0.5], dtype=mx.int32).item() == 2 ** 31 - 1
    assert mx.full((2,), 300.5, dtype=mx.uint8).dtype == mx.float32  # full keeps vals' dtype
    assert mx.full((2,), mx.array(300.5)).astype(mx.uint8).tolist() == [44, 44]
    assert mx.linspace(-1.5, 300.5, 3, dtype=mx.uint8).tolist() == \
        [f2i_model(v, "uint8") for v in np.linspace(-1.5, 300.5, 3)]


@needs_oracle
@pytest.mark.parametrize("target", INT_TARGETS)
@pytest.mark.parametrize("src", ["float16", "bfloat16", "float32", "float64", "complex64"])
def test_casts_match_mlx(src, target):
    # 64 copies of each value: MLX's vectorised loop, which gives its bulk
    # results (its scalar epilogue differs for uint32, see dtype.h)
    for v in GRID:
        got = mx.array([v] * 64, dtype=getattr(mx, src)).astype(getattr(mx, target)).tolist()
        ref = mlx_ref.array([v] * 64, dtype=getattr(mlx_ref, src)).astype(
            getattr(mlx_ref, target)).tolist()
        # (the last elements of a row may take MLX's scalar epilogue)
        assert got[:32] == ref[:32], (v, got[0], ref[0])
    if target != "uint32":  # the scalar loop agrees with the vector one
        got = [mx.array(v, dtype=getattr(mx, src)).astype(getattr(mx, target)).item()
               for v in GRID]
        ref = [mlx_ref.array(v, dtype=getattr(mlx_ref, src)).astype(
            getattr(mlx_ref, target)).item() for v in GRID]
        assert got == ref


# ================================================================ float64 precision


def test_python_floats_keep_double_precision():
    for v in (0.37, 0.1, math.pi, 1e300, 1e-300):
        assert mx.full((3,), v, dtype=mx.float64).tolist() == [v] * 3
        assert mx.array(v, dtype=mx.float64).item() == v
        assert mx.array([v, 1.0], dtype=mx.float64).tolist() == [v, 1.0]
    a = mx.array([1.0], dtype=mx.float64)
    zero = mx.array([0.0], dtype=mx.float64)
    for v in (0.1, 1e-4, math.pi, 1e300, 1e-300):
        assert (a * v).tolist() == [v] and (a * v).dtype == mx.float64
    assert (a + 0.1).tolist() == [1.0 + 0.1] and (0.1 - a).tolist() == [0.1 - 1.0]
    assert mx.maximum(zero, 0.1).tolist() == [0.1]
    assert mx.minimum(a, 0.1).tolist() == [0.1]
    assert mx.clip(a, None, 0.1).tolist() == [0.1]
    assert mx.where(mx.array([False]), zero, 0.1).tolist() == [0.1]
    assert mx.pad(a, 1, constant_values=0.1).tolist() == [0.1, 1.0, 0.1]
    assert mx.pad(a, [(2, 0)], constant_values=1e300).tolist() == [1e300, 1e300, 1.0]


@pytest.mark.parametrize("name", ["int32", "uint8", "float16", "bfloat16", "float32", "bool_"])
def test_pad_value_is_weak(name):
    x = mx.array([1], dtype=getattr(mx, name))
    for v in (0.5, 1, True):
        p = mx.pad(x, 1, constant_values=v)
        assert p.dtype == x.dtype
    assert mx.pad(mx.array([1.0], dtype=mx.float16), 1, constant_values=0.1).tolist()[0] == \
        float(np.float16(0.1))
    with pytest.raises(ValueError, match="Invalid type list"):
        mx.pad(x, 1, constant_values=[1])


# ================================================================ empty sums


@pytest.mark.parametrize("name", FLOATS + ["complex64"])
def test_sum_of_empty_and_negative_zeros_is_positive_zero(name):
    t = getattr(mx, name)
    cases = [mx.sum(mx.zeros((0,), dtype=t)), mx.sum(mx.zeros((0, 3), dtype=t), axis=0),
             mx.sum(mx.zeros((0, 3), dtype=t).T, axis=1), mx.sum(mx.zeros((3, 0), dtype=t), axis=1),
             mx.sum(mx.zeros((2, 0, 3), dtype=t), axis=(0, 1)),
             mx.sum(mx.array([-0.0] * 2, dtype=t)), mx.sum(mx.array([-0.0] * 5000, dtype=t)),
             mx.sum(mx.array([[-0.0] * 3] * 40, dtype=t), axis=0),
             mx.mean(mx.array([-0.0, -0.0], dtype=t))]
    for r in cases:
        v = np.array(r.astype(mx.complex64) if name == "complex64" else r.astype(mx.float64))
        re = v.real if name == "complex64" else v
        assert np.all(re == 0) and not np.any(np.signbit(re)), (name, v)
        if name != "complex64":
            assert np.all(1 / re == np.inf)
    # a reduction over size-1 axes is the element itself
    assert math.copysign(1.0, mx.sum(mx.array([-0.0], dtype=t)).real.item()
                         if name == "complex64" else mx.sum(mx.array([-0.0], dtype=t)).item()) < 0
    assert mx.prod(mx.zeros((0,), dtype=t)).item() == 1


@needs_oracle
@pytest.mark.parametrize("name", FLOATS + ["complex64"])
def test_zero_sums_match_mlx(name):
    for make in [lambda m: m.sum(m.zeros((0,), dtype=getattr(m, name))),
                 lambda m: m.sum(m.array([-0.0] * 40, dtype=getattr(m, name))),
                 lambda m: m.sum(m.zeros((0, 3), dtype=getattr(m, name)), axis=0),
                 lambda m: m.cumsum(m.array([-0.0, -0.0], dtype=getattr(m, name)))]:
        got, ref = make(mx), make(mlx_ref)
        g = np.array(got.astype(mx.complex64))
        r = np.array(ref.astype(mlx_ref.complex64))
        np.testing.assert_array_equal(np.signbit(g.real), np.signbit(r.real))


# ================================================================ complex max / min

NAN = math.nan
CVALS = [1 + 2j, 3 + 0j, complex(NAN, 0), complex(0, NAN), complex(5, NAN),
         complex(-math.inf, 0), complex(math.inf, 0), complex(NAN, NAN), 1 - 1j]


def cnan(z):
    return math.isnan(z.real) or math.isnan(z.imag)


def cgt(a, b):
    return a.real > b.real or (a.real == b.real and a.imag > b.imag)


def red_model(vals, ismax, canon=True):
    acc = complex(-math.inf, 0) if ismax else complex(math.inf, 0)
    for x in vals:
        if cnan(x) or (cgt(x, acc) if ismax else cgt(acc, x)):
            acc = x
    return complex(NAN, 0) if canon and cnan(acc) else acc


def arg_model(vals, ismax):
    best, ib = vals[0], 0
    for j, x in enumerate(vals):
        if (cgt(x, best) if ismax else cgt(best, x)) or (cnan(x) and not cnan(best)):
            best, ib = x, j
    return ib


def cum_model(vals, ismax):
    out = [vals[0]]
    for x in vals[1:]:
        y = out[-1]
        less = cgt(y, x)
        out.append((y if less else x) if ismax else (x if less else y))
    return out


def same(a, b):
    a, b = complex(a), complex(b)
    return all(x == y or (math.isnan(x) and math.isnan(y))
               for x, y in ((a.real, b.real), (a.imag, b.imag)))


def triples():
    for i in CVALS:
        for j in CVALS:
            yield [i, j]
            for k in CVALS[::2]:
                yield [i, j, k]


def test_complex_reductions_follow_mlx_fold():
    for vals in triples():
        x = mx.array(vals)
        assert same(mx.max(x).item(), red_model(vals, True)), vals
        assert same(mx.min(x).item(), red_model(vals, False)), vals
        assert mx.argmax(x).item() == arg_model(vals, True), vals
        assert mx.argmin(x).item() == arg_model(vals, False), vals
        for got, want in zip(mx.cummax(x).tolist(), cum_model(vals, True)):
            assert same(got, want), vals
        for got, want in zip(mx.cummin(x).tolist(), cum_model(vals, False)):
            assert same(got, want), vals
        # over a leading (strided) axis MLX keeps the element's NaN as it is
        cols = mx.stack([x, x[::-1]], axis=1)
        for k, col in enumerate([vals, vals[::-1]]):
            assert same(mx.max(cols, axis=0).tolist()[k], red_model(col, True, False)), vals
            assert same(mx.min(cols, axis=0).tolist()[k], red_model(col, False, False)), vals
            assert mx.argmax(cols, axis=0).tolist()[k] == arg_model(col, True)


def test_complex_reductions_of_long_rows():
    # longer than a block (4096 elements): the blocks combine as one walk
    r = np.random.default_rng(0)
    for seed in range(4):
        vals = list(r.integers(-3, 4, size=10000) + 1j * r.integers(-3, 4, size=10000))
        for pos, v in [(r.integers(10000), complex(0, NAN)), (r.integers(10000), complex(NAN, 0)),
                       (r.integers(10000), complex(2, NAN))][:seed]:
            vals[pos] = v
        x = mx.array(np.array(vals, dtype=np.complex64))
        vals = [complex(v) for v in np.array(vals, dtype=np.complex64)]
        assert same(mx.max(x).item(), red_model(vals, True))
        assert same(mx.min(x).item(), red_model(vals, False))
        assert mx.argmax(x).item() == arg_model(vals, True)
        assert mx.argmin(x).item() == arg_model(vals, False)
        rows = x.reshape(2, 5000)
        assert same(mx.max(rows, axis=1).tolist()[1], red_model(vals[5000:], True))
        cols = x.reshape(5000, 2)
        assert same(mx.min(cols, axis=0).tolist()[0], red_model(vals[0::2], False, False))


def test_complex_extremes_start_from_mlx_identity():
    inf = math.inf
    assert mx.min(mx.array([complex(inf, 1), complex(inf, 2)])).item() == complex(inf, 0)
    assert mx.max(mx.array([complex(-inf, -1), complex(-inf, -2)])).item() == complex(-inf, 0)
    assert mx.max(mx.array([[complex(-inf, -1)], [complex(-inf, -2)]]), axis=0).tolist() == \
        [complex(-inf, 0)]


@needs_oracle
def test_complex_reductions_match_mlx():
    for vals in triples():
        got, ref = mx.array(vals), mlx_ref.array(vals)
        for f in ["max", "min", "argmax", "argmin"]:
            assert same(getattr(mx, f)(got).item(), getattr(mlx_ref, f)(ref).item()), (f, vals)
        for f in ["cummax", "cummin"]:
            for g, r in zip(getattr(mx, f)(got).tolist(), getattr(mlx_ref, f)(ref).tolist()):
                assert same(g, r), (f, vals)
        g2, r2 = mx.stack([got, got[::-1]], 1), mlx_ref.stack([ref, ref[::-1]], 1)
        for f in ["max", "min"]:
            for ax in [0]:
                for g, r in zip(getattr(mx, f)(g2, axis=ax).tolist(),
                                getattr(mlx_ref, f)(r2, axis=ax).tolist()):
                    assert same(g, r), (f, ax, vals)
            for g, r in zip(getattr(mx, f)(g2.T, axis=1).tolist(),
                            getattr(mlx_ref, f)(r2.T, axis=1).tolist()):
                assert same(g, r), (f, vals)


# ================================================================ 32-bit indices


@pytest.mark.parametrize("key", [slice(None, 2 ** 32), slice(2 ** 31, None),
                                 slice(None, None, 3 * 2 ** 32), slice(None, None, 2 ** 31),
                                 slice(None, None, -2 ** 31 - 1), slice(-2 ** 31 - 1, None),
                                 slice(2 ** 40, None), 2 ** 32, 2 ** 31, -2 ** 31 - 1,
                                 (None, 2 ** 32), (Ellipsis, 2 ** 32)])
def test_indices_beyond_32_bits(key):
    x = mx.array([0, 1, 2])
    with pytest.raises(ValueError, match="Slice indices must be 32-bit integers."):
        x[key]
    with pytest.raises(ValueError, match="Slice indices must be 32-bit integers."):
        x[key] = 1


def test_numpy_integers_as_indices():
    x = mx.array([0, 1, 2])
    assert x[np.int64(1)].item() == 1 and x[np.int32(-1)].item() == 2
    assert x[np.array(1)].item() == 1 and x[np.int64(0):np.int64(2)].tolist() == [0, 1]
    with pytest.raises(ValueError, match="Slice indices must be 32-bit integers."):
        x[np.int64(2 ** 32)]
    with pytest.raises(ValueError, match="Slice indices must be 32-bit integers."):
        x[np.int64(1):np.int64(2 ** 33)]


@cmlx_only
def test_extreme_32_bit_steps_give_numpy_slices():
    # MLX overflows here (x[::-2**31] is empty, x[::2**31-1] has shape
    # (-1,)); cmlx gives NumPy's one element
    n = np.arange(3)
    x = mx.array(n)
    for step in [-2 ** 31, 2 ** 31 - 1, -2 ** 31 + 1]:
        assert x[::step].tolist() == n[::step].tolist()
    assert x[-2 ** 31:].tolist() == [0, 1, 2]
    with pytest.raises(IndexError, match="out of bounds"):
        x[-2 ** 31]
    y = mx.array(np.arange(10))
    assert y[::-2 ** 31].tolist() == [9] and y[8::2 ** 31 - 1].tolist() == [8]


# ================================================================ shape overflow


def test_shape_dimensions_beyond_int32_are_overflow_errors():
    big = mx.zeros(2 ** 30)
    msg = "is outside the supported range [-2147483648, 2147483647]. MLX currently uses " \
          "32-bit integers for shape dimensions."
    for parts in (3, 4, 5):
        with pytest.raises(OverflowError) as e:
            mx.concatenate([big] * parts)
        assert str(e.value) == f"[concatenate] Shape dimension {2 ** 30 * parts} {msg}"
    for parts in (2, 3, 4):
        with pytest.raises(OverflowError, match=f"\\[repeat\\] Shape dimension {2 ** 30 * parts}"):
            mx.repeat(big, parts)
    with pytest.raises(OverflowError, match=r"\[tile\] Shape dimension 3221225472"):
        mx.tile(big, 3)
    with pytest.raises(OverflowError, match=r"\[pad\] Shape dimension 3221225472"):
        mx.pad(big, 2 ** 30)
    with pytest.raises(OverflowError, match=r"\[kron\] Shape dimension 4294967296"):
        mx.kron(mx.zeros(2 ** 16), mx.zeros(2 ** 16))
    sq = mx.zeros((2 ** 16, 2 ** 16))
    with pytest.raises(OverflowError, match=r"\[reshape\] Shape dimension 4294967296"):
        sq.reshape(-1)
    with pytest.raises(OverflowError, match=r"\[flatten\] Shape dimension 4294967296"):
        sq.flatten()
    # fitting shapes are fine
    assert mx.concatenate([mx.zeros((2, 2 ** 20))] * 3).shape == (6, 2 ** 20)
    assert mx.stack([big] * 3).shape == (3, 2 ** 30)


def test_shape_arguments_beyond_int32():
    for f in [lambda: mx.zeros(2 ** 31), lambda: mx.ones([2 ** 31]),
              lambda: mx.full(2 ** 31, 0.0), lambda: mx.zeros([-(2 ** 31) - 1]),
              lambda: mx.reshape(mx.zeros(4), [2 ** 31]),
              lambda: mx.broadcast_to(mx.zeros(4), [2 ** 31, 1])]:
        with pytest.raises(OverflowError, match="outside the supported range"):
            f()


def test_imports_with_dimensions_beyond_int32():
    a = np.empty(2 ** 31, dtype=np.bool_)
    with pytest.raises(OverflowError) as e:
        mx.array(a)
    assert str(e.value) == ("Shape dimension 2147483648 is outside the supported range "
                            "[-2147483648, 2147483647]. MLX currently uses 32-bit integers "
                            "for shape dimensions.")


@needs_oracle
def test_overflow_messages_match_mlx():
    for f in [lambda m: m.concatenate([m.zeros(2 ** 30)] * 3),
              lambda m: m.repeat(m.zeros(2 ** 30), 2),
              lambda m: m.tile(m.zeros(2 ** 30), 3),
              lambda m: m.zeros((2 ** 16, 2 ** 16)).reshape(-1),
              lambda m: m.kron(m.zeros(2 ** 16), m.zeros(2 ** 16))]:
        with pytest.raises(OverflowError) as got:
            f(mx)
        with pytest.raises(OverflowError) as ref:
            f(mlx_ref)
        assert str(got.value) == str(ref.value)


# ================================================================ dtype names


def test_dtypes_print_with_the_package_name():
    assert str(mx.float32) == f"{SUBJECT_NAME}.float32"
    assert repr(mx.bool_) == f"{SUBJECT_NAME}.bool"
    assert mx.Dtype.__module__ == SUBJECT_NAME


@cmlx_only
def test_dtypes_print_mlx_names_when_serving_as_mlx(monkeypatch):
    # an import alias that runs MLX programs on cmlx (sys.modules["mlx.core"]
    # is cmlx.core) makes str(dtype) what those programs compare with
    import sys
    monkeypatch.setitem(sys.modules, "mlx.core", sys.modules["cmlx.core"])
    assert str(mx.bool_) == "mlx.core.bool" and repr(mx.complex64) == "mlx.core.complex64"
    monkeypatch.undo()
    assert str(mx.bool_) == "cmlx.core.bool"


# ================================================================ DLPack


def test_from_dlpack_copies_and_keeps_strides():
    x = np.arange(3, dtype=np.float32)
    y = mx.from_dlpack(x)
    x += 10
    assert y.tolist() == [0.0, 1.0, 2.0]
    y = mx.from_dlpack(x, copy=True)
    x += 10
    assert y.tolist() == [10.0, 11.0, 12.0]
    with pytest.raises(ValueError, match=r"\[convert\] Cannot import a CPU array without a "
                                         r"copy."):
        mx.from_dlpack(x, copy=False)
    with pytest.raises(ValueError):
        mx.from_dlpack(mx.array([1]), copy=False)
    view = np.arange(12, dtype=np.float32).reshape(3, 4).T
    y = mx.from_dlpack(view)
    assert y.tolist() == view.tolist()
    assert not memoryview(y).c_contiguous and memoryview(y).strides == view.strides
    assert (y + 1).tolist() == (view + 1).tolist()
    stepped = np.arange(20, dtype=np.int32)[2:10:2]
    y = mx.from_dlpack(stepped)
    assert y.tolist() == [2, 4, 6, 8] and memoryview(y).strides == stepped.strides
    b = np.broadcast_to(np.array([7], dtype=np.int32), (3,))  # read-only: versioned capsule
    y = mx.from_dlpack(b)
    assert y.tolist() == [7, 7, 7] and memoryview(y).strides == b.strides
    assert mx.from_dlpack(np.zeros((2, 0, 3), np.float32)).shape == (2, 0, 3)
    assert mx.from_dlpack(np.arange(4.0)).dtype == mx.float32
    assert mx.from_dlpack(np.arange(4.0).astype(np.complex128)).dtype == mx.complex64
    with pytest.raises(ValueError, match="Cannot convert DLPack arrays with negative strides"):
        mx.from_dlpack(np.arange(5, dtype=np.float32)[::-1])


def test_from_dlpack_outlives_its_source():
    import gc
    x = np.arange(6, dtype=np.int16).reshape(2, 3)[:, ::2]
    y = mx.from_dlpack(x)
    del x
    gc.collect()
    assert y.tolist() == [[0, 2], [3, 5]]
    assert mx.sum(y).item() == 10


class LegacyProducer:
    """A DLPack producer that knows no max_version (DLPack 0.x)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def test_from_dlpack_of_a_legacy_producer():
    a = np.arange(6, dtype=np.float32).reshape(2, 3).T
    y = mx.from_dlpack(LegacyProducer(a))
    assert y.tolist() == a.tolist()
    assert mx.array(LegacyProducer(a)).tolist() == a.tolist()


def test_dlpack_unsupported_dtype_is_value_error():
    # a DLPack dtype MLX has no counterpart for (torch's complex32): MLX's
    # ValueError, nothing imported
    torch = pytest.importorskip("torch")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        x = torch.ones(3, dtype=torch.complex32)
    with pytest.raises(ValueError, match="Cannot convert array to mlx"):
        mx.from_dlpack(x)
