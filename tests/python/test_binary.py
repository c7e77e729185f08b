"""Elementwise binary and ternary ops (broadcasting, promotion, weak Python
scalars, operators, errors) against NumPy, and real MLX where importable."""

import numpy as np
import pytest

from conftest import (
    BOOL, COMPLEX, DTYPES, FLOATS, INTS, PROMOTE, SIGNED, UNSIGNED, A, assert_same_as_oracle,
    assert_values, both, cast_like, dt, dtype_name, mx, needs_oracle, sample, to_mx, to_np,
)

NONINT = set(FLOATS + COMPLEX)

# name -> (result-dtype rule, input domain, dtypes MLX rejects)
# rules: "same" (promoted dtype), "float" (bool/int -> float32), "bool",
# "shift" (bool -> uint8).  Domains pick values where NumPy and MLX agree
# (no integer division by zero, no negative integer powers, shifts < 5).
BINARY = {
    "add": ("same", "std", set()),
    "subtract": ("same", "std", set()),
    "multiply": ("same", "std", set()),
    "divide": ("float", "div", set()),
    "floor_divide": ("same", "div", set()),
    "remainder": ("same", "div", set(COMPLEX)),
    "divmod": ("same", "div", set(COMPLEX)),
    "power": ("same", "pow", set()),
    "maximum": ("same", "std", set()),
    "minimum": ("same", "std", set()),
    "arctan2": ("float", "std", set(COMPLEX)),
    "logaddexp": ("float", "std", set()),
    "equal": ("bool", "cmp", set()),
    "not_equal": ("bool", "cmp", set()),
    "less": ("bool", "cmp", set()),
    "less_equal": ("bool", "cmp", set()),
    "greater": ("bool", "cmp", set()),
    "greater_equal": ("bool", "cmp", set()),
    "logical_and": ("bool", "cmp", set()),
    "logical_or": ("bool", "cmp", set()),
    "logical_xor": ("bool", "cmp", set()),
    "bitwise_and": ("same", "bits", NONINT),
    "bitwise_or": ("same", "bits", NONINT),
    "bitwise_xor": ("same", "bits", NONINT),
    "left_shift": ("shift", "shift", NONINT),
    "right_shift": ("shift", "shift", NONINT),
}

# The exception MLX raises for a rejected dtype: ValueError for complex
# remainder/divmod/arctan2, RuntimeError from the bitwise functions on
# floats (the & | ^ << >> operators raise ValueError, see below).
REJECT_TYPE = {
    "remainder": ValueError, "divmod": ValueError, "arctan2": ValueError,
    **{op: RuntimeError for op in ("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift")},
}
assert set(REJECT_TYPE) == {op for op in BINARY if BINARY[op][2]}


def result_dtype(op, name):
    rule = BINARY[op][0]
    if rule == "same":
        return name
    if rule == "bool":
        return "bool_"
    if rule == "float":
        return "float32" if name in BOOL + INTS else name
    if rule == "shift":
        return "uint8" if name == "bool_" else name
    raise AssertionError(rule)


def operands(op, name, sa, sb, seed=0):
    """NumPy operands of dtype `name` and shapes sa, sb inside op's domain."""
    dom = BINARY[op][1]
    uns = name in UNSIGNED
    if dom == "div":
        a = sample(name, sa, 0 if uns else -20, 20, seed=seed)
        b = sample(name, sb, 1 if uns else -5, 5, seed=seed + 1, nonzero=True)
        if name in FLOATS:  # keep |b| >= 0.5 so a/b stays well conditioned
            b = cast_like(np.where(np.abs(b) < 0.5, 0.5, b), name)
        return a, b
    if dom == "pow":
        if name in FLOATS:
            return sample(name, sa, 0.5, 3, seed=seed), sample(name, sb, -2, 2, seed=seed + 1)
        if name == "complex64":
            return sample(name, sa, 0.5, 2, seed=seed), sample(name, sb, -1, 1, seed=seed + 1)
        return sample(name, sa, 0 if uns else -3, 3, seed=seed), sample(name, sb, 0, 4, seed=seed + 1)
    if dom == "shift":
        return sample(name, sa, 0 if uns else -7, 7, seed=seed), sample(name, sb, 0, 4, seed=seed + 1)
    if dom == "bits":
        return sample(name, sa, 0 if uns else -60, 60, seed=seed), \
            sample(name, sb, 0 if uns else -60, 60, seed=seed + 1)
    if dom == "cmp":
        # Few distinct values so that equal/less see ties.
        a = sample(name, sa, 0 if uns else -2, 2, seed=seed)
        b = sample(name, sb, 0 if uns else -2, 2, seed=seed + 1)
        if name in FLOATS + COMPLEX:
            a, b = cast_like(np.round(a), name), cast_like(np.round(b), name)
        return a, b
    lo = 0 if uns else -10
    return sample(name, sa, lo, 10, seed=seed), sample(name, sb, lo, 10, seed=seed + 1)


def _np_op(op, a, b):
    if op == "divmod":
        return np.floor_divide(a, b), np.remainder(a, b)
    if op in ("logical_and", "logical_or", "logical_xor"):
        return getattr(np, op)(a != 0, b != 0)
    if op == "logaddexp" and np.iscomplexobj(a):
        return np.log(np.exp(a) + np.exp(b))
    return getattr(np, {"bitwise_invert": "invert"}.get(op, op))(a, b)


def reference(op, a, b, name):
    """Expected result(s) of op on NumPy operands a, b of dtype `name`."""
    out = result_dtype(op, name)
    if name == "bool_":
        if out == "bool_" and op not in ("logical_and", "logical_or", "logical_xor"):
            if BINARY[op][0] == "bool":
                return _np_op(op, a.astype(np.int64), b.astype(np.int64))
            r = _np_op(op, a.astype(np.int64), b.astype(np.int64))
            return tuple(x != 0 for x in r) if isinstance(r, tuple) else r != 0
        if out == "uint8":  # shifts on bool compute in uint8
            return _np_op(op, a.astype(np.uint8), b.astype(np.uint8))
        if out == "float32":
            return cast_like(_np_op(op, a.astype(np.float64), b.astype(np.float64)), out)
        return _np_op(op, a, b)
    if name in INTS:
        if out == "float32":
            return cast_like(_np_op(op, a.astype(np.float64), b.astype(np.float64)), out)
        return _np_op(op, a, b)  # NumPy wraps like C in the same dtype
    wide = np.complex128 if name == "complex64" else np.float64
    r = _np_op(op, a.astype(wide), b.astype(wide))
    if op in ("floor_divide", "divmod") and name in FLOATS:
        # floor(a / b) of the quotient rounded to the dtype (what MLX does:
        # 10.99 rounds to 11 in float16 and floors to 11)...
        q = np.floor(cast_like(a.astype(wide) / b.astype(wide), name).astype(wide))
        if name in ("float16", "bfloat16"):
            # ...or of the exact quotient (NumPy's answer, 10): both are
            # accepted for the half types, see check().
            q = FloorEither(q, np.floor(a.astype(wide) / b.astype(wide)))
        r = (q, r[1]) if op == "divmod" else q
    if out == "bool_":
        return r
    cast = lambda x: x if isinstance(x, FloorEither) else cast_like(x, out)  # noqa: E731
    return tuple(cast(x) for x in r) if isinstance(r, tuple) else cast(r)


class FloorEither:
    """Expected floor-division values where two roundings are defensible."""

    def __init__(self, a, b):
        self.a, self.b = a, b


def check(op, r, exp, name, msg, operands=None):
    out = result_dtype(op, name)
    if op == "logaddexp" and name == "complex64":
        # Complex log is multivalued (MLX does not pick the principal branch):
        # compare exp(result) with exp(a) + exp(b).
        assert dtype_name(r.dtype) == "complex64", msg
        xa, xb = operands
        got = np.exp(to_np(r).astype(np.complex128))
        want = np.exp(xa.astype(np.complex128)) + np.exp(xb.astype(np.complex128))
        assert_values(got, np.broadcast_to(want, got.shape), "complex64", rtol=1e-4, atol=1e-5, msg=msg)
        return
    rs = list(r) if isinstance(r, (list, tuple)) else [r]
    es = list(exp) if isinstance(exp, tuple) else [exp]
    assert len(rs) == len(es), msg
    for x, e in zip(rs, es):
        assert dtype_name(x.dtype) == out, f"{msg}: dtype {x.dtype}, expected {out}"
        if isinstance(e, FloorEither):
            got = to_np(x).astype(np.float64)
            ok = (got == e.a) | (got == e.b) | (np.isnan(got) & np.isnan(e.a))
            assert ok.all(), f"{msg}: got {got[~ok][:5]}, expected {e.a[~ok][:5]} or {e.b[~ok][:5]}"
            continue
        assert_values(to_np(x), e, out, msg=msg)


# ------------------------------------------------------------ shapes/layouts

def _T(shape):
    return lambda mk: mk(shape[::-1]).T


COMBOS = {
    "same": ((3, 5), (3, 5)),
    "row": ((3, 5), (5,)),
    "col": ((3, 1), (3, 5)),
    "outer": ((3, 1), (1, 5)),
    "scalar_l": ((), (3, 5)),
    "scalar_r": ((3, 5), ()),
    "both0d": ((), ()),
    "empty": ((0, 5), (5,)),
    "empty_b": ((2, 0, 3), (1, 3)),
    "rank3": ((2, 1, 4), (3, 1)),
    "transposed": (_T((3, 5)), (3, 5)),
    "strided": (lambda mk: mk((7, 10))[::2, 1::3], lambda mk: mk((8, 3))[::2]),
    "bcast_view": (lambda mk: np.broadcast_to(mk((1, 5)), (3, 5)), (3, 5)),
    "nativeT": ("T", "T"),
    "native_views": ("V", "V"),   # subject-made slice view + reversed view
    "native_bcast": ("B", "B"),   # broadcast_to view with a transposed view
    "large": (lambda mk: mk((257, 131))[:, 1:], (130,)),
    "large_same": ((40001,), (40001,)),
}


def build_pair(op, name, combo, seed=0, mod=None):
    """(subject a, subject b, numpy a, numpy b) for a shape/layout combo."""
    mod = mod if mod is not None else mx
    sa, sb = COMBOS[combo]
    if sa == "T":
        xa, xb = operands(op, name, (5, 3), (5, 3), seed)
        return to_mx(xa, name, mod).T, to_mx(xb, name, mod).T, xa.T, xb.T
    if sa == "V":
        xa, xb = operands(op, name, (7, 10), (4, 6), seed)
        va = to_mx(xa, name, mod)[::2, 1::3]
        vb = to_mx(xb, name, mod)[::-1, ::-2]
        return va, vb, xa[::2, 1::3], xb[::-1, ::-2]
    if sa == "B":
        xa, xb = operands(op, name, (1, 5), (5, 3), seed)
        va = mod.broadcast_to(to_mx(xa, name, mod), (3, 5))
        return va, to_mx(xb, name, mod).T, np.broadcast_to(xa, (3, 5)), xb.T
    shape_a = sa if isinstance(sa, tuple) else (7, 10)
    shape_b = sb if isinstance(sb, tuple) else (8, 3)
    big_a = (257, 131) if combo == "large" else (5, 3) if combo == "transposed" else (1, 5) \
        if combo == "bcast_view" else shape_a
    xa_full, xb_full = operands(op, name, big_a, shape_b, seed)
    xa = sa(lambda s: xa_full) if callable(sa) else xa_full
    xb = sb(lambda s: xb_full) if callable(sb) else xb_full
    return to_mx(xa, name, mod), to_mx(xb, name, mod), xa, xb


SUPPORTED = [(op, d) for op in BINARY for d in DTYPES if d not in BINARY[op][2]]
REJECTED = [(op, d) for op in BINARY for d in DTYPES if d in BINARY[op][2]]


@pytest.mark.parametrize("combo", list(COMBOS))
@pytest.mark.parametrize("op,name", SUPPORTED, ids=[f"{o}-{d}" for o, d in SUPPORTED])
def test_binary_values(op, name, combo):
    if name == "complex64" and op in ("floor_divide",):
        pytest.skip("complex floor_divide has no NumPy reference (compared with MLX)")
    a, b, xa, xb = build_pair(op, name, combo)
    r = getattr(mx, op)(a, b)
    exp = reference(op, xa, xb, name)
    check(op, r, exp, name, f"{op}({name}, {combo})", operands=(xa, xb))
    # Inputs are intact afterwards (donation must not clobber live arrays).
    assert_values(to_np(a), xa, name, msg="input a changed")
    assert_values(to_np(b), xb, name, msg="input b changed")


@pytest.mark.parametrize("op,name", REJECTED, ids=[f"{o}-{d}" for o, d in REJECTED])
def test_binary_rejected_dtypes(op, name):
    xa, xb = sample(name, (3,), 1, 3), sample(name, (3,), 1, 3)
    a, b = to_mx(xa, name), to_mx(xb, name)
    with pytest.raises(REJECT_TYPE[op]):
        mx.eval(getattr(mx, op)(a, b))
    assert_values(to_np(a), xa, name)


def test_every_binary_op_exists():
    missing = [op for op in list(BINARY) + ["where", "clip"] if not callable(getattr(mx, op, None))]
    assert not missing, f"missing ops: {missing}"


# ------------------------------------------------------------ mixed dtypes

PAIRS = [(a, b) for a in DTYPES for b in DTYPES]


def _pair_operands(op, da, db):
    dom = BINARY[op][1]
    hi = 3 if dom in ("shift", "pow") else 5
    xa = sample(da, (3, 4), 1, hi, seed=11, nonzero=True)
    xb = sample(db, (4,), 1, 3, seed=12, nonzero=True)
    if dom != "shift" and dom != "bits":
        # Small integers, exact in every dtype; floats get a fraction so
        # that float/int mixing is visible.
        if da in FLOATS + COMPLEX:
            xa = cast_like(np.round(xa.real if da == "complex64" else xa) + 0.5, da)
        if db in FLOATS + COMPLEX:
            xb = cast_like(np.round(xb.real if db == "complex64" else xb) + 0.25, db)
    return xa, xb


@pytest.mark.parametrize("op", list(BINARY))
@pytest.mark.parametrize("da,db", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_binary_mixed_dtypes(da, db, op):
    """Every dtype pair: promoted as MLX's table says, then the op's rule."""
    xa, xb = _pair_operands(op, da, db)
    a, b = to_mx(xa, da), to_mx(xb, db)
    p = PROMOTE[(da, db)]
    if p in BINARY[op][2]:
        with pytest.raises(REJECT_TYPE[op]):
            mx.eval(getattr(mx, op)(a, b))
        return
    if p == "complex64" and op == "floor_divide":
        pytest.skip("complex floor_divide: compared with MLX only")
    r = getattr(mx, op)(a, b)
    pa = xa.astype(np.complex128) if p == "complex64" else cast_like(xa.real if da == "complex64" else xa, p)
    pb = xb.astype(np.complex128) if p == "complex64" else cast_like(xb.real if db == "complex64" else xb, p)
    if p == "complex64":
        pa, pb = pa.astype(np.complex64), pb.astype(np.complex64)
    check(op, r, reference(op, pa, pb, p), p, f"{op}({da}, {db})", operands=(pa, pb))


@needs_oracle
@pytest.mark.parametrize("op", list(BINARY))
@pytest.mark.parametrize("da,db", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_binary_matches_mlx(da, db, op):
    """dtype, errors and values identical to real MLX for every dtype pair."""
    xa, xb = _pair_operands(op, da, db)
    sub, ref = both(lambda m, a, b: getattr(m, op)(a, b), A(xa, da), A(xb, db))
    assert_same_as_oracle(sub, ref, msg=f"{op}({da}, {db})")


# ------------------------------------------------------------ weak scalars

# result dtype of `array(dtype) + scalar` (and scalar + array) for a Python
# bool, int, float, complex: the scalar takes the array's kind when it can.
WEAK = {
    "bool_": ("bool_", "int32", "float32", "complex64"),
    **{d: (d, d, "float32", "complex64") for d in INTS},
    **{d: (d, d, d, "complex64") for d in FLOATS},
    "complex64": ("complex64",) * 4,
}
SCALARS = [True, 2, 1.5, 1j]


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("kind", range(4), ids=["bool", "int", "float", "complex"])
@pytest.mark.parametrize("name", DTYPES)
def test_weak_scalar_promotion(name, kind, side):
    x = sample(name, (4,), 1, 5)
    a = to_mx(x, name)
    s = SCALARS[kind]
    r = (a + s) if side == "right" else (s + a)
    r2 = mx.add(a, s) if side == "right" else mx.add(s, a)
    out = WEAK[name][kind]
    assert dtype_name(r.dtype) == out, f"{name} + {s!r}: {r.dtype}, expected {out}"
    assert dtype_name(r2.dtype) == out
    wide = np.complex128 if out == "complex64" else np.float64
    exp = x.astype(wide) + s
    if out == "bool_":
        exp = exp != 0
    assert_values(to_np(r), cast_like(exp, out) if out not in BOOL + INTS else exp, out)
    assert_values(to_np(r2), to_np(r), out)


def test_weak_scalar_examples_from_the_issue():
    r = mx.array([1], mx.float16) + 1.5
    assert dtype_name(r.dtype) == "float16" and to_np(r).tolist() == [2.5]
    r = mx.array([1], mx.int8) + 1
    assert dtype_name(r.dtype) == "int8" and to_np(r).tolist() == [2]
    r = mx.array([1], mx.bfloat16) * 3
    assert dtype_name(r.dtype) == "bfloat16"
    r = mx.array(1.5, mx.float16) * 2.5
    assert dtype_name(r.dtype) == "float16" and to_np(r).item() == 3.75
    r = mx.array([1], mx.int8) + 1.5
    assert dtype_name(r.dtype) == "float32" and to_np(r).tolist() == [2.5]


def test_scalar_scalar_ops():
    r = mx.add(1, 2)
    assert dtype_name(r.dtype) == "int32" and r.item() == 3
    r = mx.add(1.0, 2)
    assert dtype_name(r.dtype) == "float32" and r.item() == 3.0
    r = mx.multiply(True, False)
    assert dtype_name(r.dtype) == "bool_" and r.item() is False
    r = mx.logical_and(1, 2)
    assert dtype_name(r.dtype) == "bool_" and r.item() is True


@pytest.mark.parametrize("name,value", [("uint8", -1), ("int8", 300), ("int8", -129),
                                        ("uint16", 70000), ("int32", 2 ** 40)])
def test_weak_scalar_overflow(name, value):
    """A Python int that does not fit the array's integer dtype is an error
    (MLX: ValueError 'Converting ... would result in overflow')."""
    a = mx.array([1, 2], dt(name))
    with pytest.raises(ValueError):
        mx.eval(a + value)
    assert to_np(a).tolist() == [1, 2]


WEAK_OPS = [op for op in BINARY if op not in ("divmod",)]


@pytest.mark.parametrize("op", WEAK_OPS)
@pytest.mark.parametrize("name", ["bool_", "uint8", "int8", "int32", "float16", "bfloat16",
                                  "float32", "complex64"])
def test_weak_scalars_in_ops(op, name):
    """Weak scalars through every binary function, both sides: dtype as the
    weak table says, followed by the op's rule (or its error, when the
    promoted dtype is one the op rejects)."""
    for kind, s in enumerate(SCALARS):  # bool, int, float, complex
        x = sample(name, (4,), 1, 3, nonzero=True)
        a = to_mx(x, name)
        p = WEAK[name][kind]
        if p in BINARY[op][2]:
            for f in (lambda: getattr(mx, op)(a, s), lambda: getattr(mx, op)(s, a)):
                with pytest.raises(REJECT_TYPE[op]):
                    mx.eval(f())
            continue
        for r in (getattr(mx, op)(a, s), getattr(mx, op)(s, a)):
            assert dtype_name(r.dtype) == result_dtype(op, p), \
                f"{op}({name} array, {s!r}): {r.dtype}, expected {result_dtype(op, p)}"
        if p not in FLOATS + COMPLEX:
            exp = reference(op, x.astype(np.dtype(p) if p != "bool_" else np.bool_),
                            np.full(x.shape, s, np.dtype(p) if p != "bool_" else np.bool_), p)
            check(op, getattr(mx, op)(a, s), exp, p, f"{op}({name}, {s!r})")


@needs_oracle
@pytest.mark.parametrize("op", WEAK_OPS)
@pytest.mark.parametrize("name", DTYPES)
def test_weak_scalars_match_mlx(op, name):
    x = sample(name, (4,), 1, 3, nonzero=True)
    for s in (True, 2, 1.5, 1j):
        for left in (False, True):
            f = (lambda m, a: getattr(m, op)(s, a)) if left else (lambda m, a: getattr(m, op)(a, s))
            sub, ref = both(f, A(x, name))
            assert_same_as_oracle(sub, ref, msg=f"{op}({name}, {s!r}, left={left})")


# ------------------------------------------------------------ semantics

@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_max_min_propagate_nan(op, name):
    nan, inf = np.nan, np.inf
    xa = cast_like(np.array([nan, 1.0, nan, inf, -inf, 2.0, -0.5]), name)
    xb = cast_like(np.array([1.0, nan, nan, nan, 3.0, -inf, -0.75]), name)
    r = to_np(getattr(mx, op)(to_mx(xa, name), to_mx(xb, name)))
    exp = getattr(np, op)(xa.astype(np.float64), xb.astype(np.float64))
    assert np.array_equal(np.isnan(r), [True, True, True, True, False, False, False]), r
    assert_values(r, cast_like(exp, name), name)
    # Scalar and broadcast forms propagate too.
    r = to_np(getattr(mx, op)(to_mx(xa, name), float("nan")))
    assert np.isnan(r).all()


@pytest.mark.parametrize("name", SIGNED + ["float16", "bfloat16", "float32", "float64"])
def test_integer_division_sign_rules(name):
    """floor_divide rounds toward -inf; remainder takes the divisor's sign;
    divmod gives both, and q*b + r == a."""
    xa = cast_like(np.array([7, -7, 7, -7, 6, -6, 0, 1, -1, 9]), name) if name in FLOATS \
        else np.array([7, -7, 7, -7, 6, -6, 0, 1, -1, 9], np.dtype(name))
    xb = cast_like(np.array([2, 2, -2, -2, 3, -3, 5, -4, 4, 9]), name) if name in FLOATS \
        else np.array([2, 2, -2, -2, 3, -3, 5, -4, 4, 9], np.dtype(name))
    a, b = to_mx(xa, name), to_mx(xb, name)
    q, r = to_np(mx.floor_divide(a, b)), to_np(mx.remainder(a, b))
    assert q.astype(np.float64).tolist() == [3, -4, -4, 3, 2, 2, 0, -1, -1, 1]
    assert r.astype(np.float64).tolist() == [1, 1, -1, -1, 0, 0, 0, -3, 3, 0]
    dq, dr = mx.divmod(a, b)
    assert np.array_equal(to_np(dq), q) and np.array_equal(to_np(dr), r)
    assert np.array_equal(q * xb + r, xa)
    # The operators agree with the functions.
    assert np.array_equal(to_np(a // b), q) and np.array_equal(to_np(a % b), r)


def test_float_remainder_fractions():
    xa = np.array([5.5, -5.5, 5.5, -5.5, -1e-30], np.float32)
    xb = np.array([2.0, 2.0, -2.0, -2.0, 3.0], np.float32)
    r = to_np(mx.remainder(mx.array(xa), mx.array(xb)))
    assert_values(r, np.remainder(xa, xb), "float32")


@pytest.mark.parametrize("name", UNSIGNED)
def test_unsigned_division(name):
    xa = np.array([7, 0, 200, 255], np.dtype(name))
    xb = np.array([2, 3, 7, 16], np.dtype(name))
    a, b = to_mx(xa, name), to_mx(xb, name)
    assert to_np(mx.floor_divide(a, b)).tolist() == (xa // xb).tolist()
    assert to_np(mx.remainder(a, b)).tolist() == (xa % xb).tolist()
    assert_values(to_np(mx.divide(a, b)), (xa / xb).astype(np.float32), "float32")


@pytest.mark.parametrize("name", INTS)
def test_integer_overflow_wraps(name):
    info = np.iinfo(np.dtype(name))
    xa = np.array([info.max, info.min, info.max], np.dtype(name))
    xb = np.array([1, 1, 2], np.dtype(name))
    a, b = to_mx(xa, name), to_mx(xb, name)
    assert to_np(mx.add(a, b)).tolist() == (xa + xb).tolist()
    assert to_np(mx.subtract(a, b)).tolist() == (xa - xb).tolist()
    assert to_np(mx.multiply(a, b)).tolist() == (xa * xb).tolist()


@pytest.mark.parametrize("op,f", [("add", np.add), ("subtract", np.subtract),
                                  ("multiply", np.multiply), ("divide", np.divide)])
def test_float64_arithmetic_is_exact(op, f):
    x = np.random.default_rng(5).uniform(-1e3, 1e3, (2, 1000))
    a, b = mx.array(x[0], mx.float64), mx.array(x[1], mx.float64)
    r = to_np(getattr(mx, op)(a, b))
    assert r.dtype == np.float64
    assert np.array_equal(r, f(x[0], x[1])), "float64 arithmetic must be exact (IEEE)"
    s = to_np(mx.sqrt(mx.array(np.abs(x[0]), mx.float64)))
    assert np.array_equal(s, np.sqrt(np.abs(x[0])))


def test_float32_arithmetic_is_exact():
    x = np.random.default_rng(6).uniform(-1e3, 1e3, (2, 5000)).astype(np.float32)
    a, b = mx.array(x[0]), mx.array(x[1])
    for op in ("add", "subtract", "multiply", "divide"):
        assert np.array_equal(to_np(getattr(mx, op)(a, b)), getattr(np, op)(x[0], x[1])), op


def test_bool_arithmetic():
    t = mx.array([False, False, True, True])
    u = mx.array([False, True, False, True])
    assert to_np(mx.add(t, u)).tolist() == [False, True, True, True]
    assert to_np(mx.subtract(t, u)).tolist() == [False, True, True, False]
    assert to_np(mx.multiply(t, u)).tolist() == [False, False, False, True]
    assert to_np(mx.power(t, u)).tolist() == [True, False, True, True]
    r = mx.left_shift(t, u)
    assert dtype_name(r.dtype) == "uint8" and to_np(r).tolist() == [0, 0, 1, 2]


def test_shift_semantics():
    assert to_np(mx.right_shift(mx.array([-16, 16], mx.int8), mx.array([2], mx.int8))).tolist() == [-4, 4]
    assert to_np(mx.left_shift(mx.array([1], mx.int8), mx.array([7], mx.int8))).tolist() == [-128]
    assert to_np(mx.left_shift(mx.array([3], mx.uint16), 4)).tolist() == [48]
    big = mx.array(np.array([2 ** 63], np.uint64))
    assert to_np(mx.right_shift(big, mx.array(np.array([62], np.uint64)))).tolist() == [2]


def test_comparisons_with_nan():
    x = mx.array([np.nan, 1.0, np.nan])
    y = mx.array([np.nan, np.nan, 2.0])
    assert to_np(mx.equal(x, y)).tolist() == [False, False, False]
    assert to_np(mx.not_equal(x, y)).tolist() == [True, True, True]
    for op in ("less", "less_equal", "greater", "greater_equal"):
        assert to_np(getattr(mx, op)(x, y)).tolist() == [False, False, False], op


def test_arctan2_quadrants_and_logaddexp_infs():
    r = to_np(mx.arctan2(mx.array([0.0, -0.0, 1, -1, 1, -1]), mx.array([-1.0, -1.0, 0, 0, 1, -1])))
    exp = np.arctan2(np.array([0.0, -0.0, 1, -1, 1, -1]), np.array([-1.0, -1.0, 0, 0, 1, -1]))
    assert_values(r, exp.astype(np.float32), "float32")
    r = to_np(mx.logaddexp(mx.array([np.inf, -np.inf, np.nan, -np.inf, 1000.0]),
                           mx.array([np.inf, -np.inf, 1.0, 1.0, 1000.0])))
    assert_values(r, np.array([np.inf, -np.inf, np.nan, 1.0, 1000.0 + np.log(2)], np.float32), "float32")


def test_power_special_cases():
    assert_values(to_np(mx.power(mx.array([0.0, 2.0, -2.0]), mx.array([-1.0, 0.0, 3.0]))),
                  np.array([np.inf, 1.0, -8.0], np.float32), "float32")
    assert np.isnan(to_np(mx.power(mx.array([-2.0]), mx.array([0.5])))).all()
    assert to_np(mx.power(mx.array([2], mx.int8), mx.array([7], mx.int8))).tolist() == [-128]
    assert to_np(mx.power(mx.array([-3]), 3)).tolist() == [-27]


# ------------------------------------------------------------ where / clip

@pytest.mark.parametrize("combo", ["same", "bcast", "scalar_cond", "empty", "strided", "nativeT", "large"])
@pytest.mark.parametrize("name", DTYPES)
def test_where(name, combo):
    rg = np.random.default_rng(3)
    if combo == "same":
        c, x, y = rg.integers(0, 2, (3, 5)).astype(bool), sample(name, (3, 5), seed=1), sample(name, (3, 5), seed=2)
    elif combo == "bcast":
        c, x, y = rg.integers(0, 2, (3, 1)).astype(bool), sample(name, (5,), seed=1), sample(name, (2, 1, 1), seed=2)
    elif combo == "scalar_cond":
        c, x, y = np.array(True), sample(name, (4,), seed=1), sample(name, (4,), seed=2)
    elif combo == "empty":
        c, x, y = np.zeros((0, 3), bool), sample(name, (3,), seed=1), sample(name, (0, 1), seed=2)
    elif combo == "strided":
        c = rg.integers(0, 2, (8, 9)).astype(bool)[::2, ::3]
        x, y = sample(name, (4, 6), seed=1)[:, ::2], sample(name, (3, 4), seed=2).T
    elif combo == "nativeT":
        c0, x0, y0 = rg.integers(0, 2, (5, 3)).astype(bool), sample(name, (5, 3), seed=1), sample(name, (5, 3), seed=2)
        r = mx.where(mx.array(c0).T, to_mx(x0, name).T, to_mx(y0, name).T)
        assert dtype_name(r.dtype) == name
        assert_values(to_np(r), np.where(c0.T, x0.T, y0.T), name)
        return
    else:
        c, x, y = rg.integers(0, 2, (300, 200)).astype(bool), sample(name, (300, 200), seed=1), sample(name, (200,), seed=2)
    r = mx.where(mx.array(c), to_mx(x, name), to_mx(y, name))
    assert dtype_name(r.dtype) == name
    assert_values(to_np(r), np.where(c, x, y), name)


@pytest.mark.parametrize("cond_dtype", ["uint8", "int32", "float32", "float16"])
def test_where_nonbool_condition(cond_dtype):
    c = sample(cond_dtype, (6,), -1 if cond_dtype not in ("uint8",) else 0, 2, seed=4)
    r = mx.where(to_mx(c, cond_dtype), mx.array(np.arange(6)), mx.array(-np.arange(6)))
    assert to_np(r).tolist() == np.where(c != 0, np.arange(6), -np.arange(6)).tolist()


def test_where_promotion_and_scalars():
    r = mx.where(mx.array([True, False]), mx.array([1, 2], mx.int8), 1.5)
    assert dtype_name(r.dtype) == "float32" and to_np(r).tolist() == [1.0, 1.5]
    r = mx.where(mx.array([True, False]), mx.array([1, 2], mx.int8), 7)
    assert dtype_name(r.dtype) == "int8" and to_np(r).tolist() == [1, 7]
    r = mx.where(mx.array([True, False]), mx.array([1, 2], mx.float16), mx.array([3, 4], mx.float32))
    assert dtype_name(r.dtype) == "float32"
    r = mx.where(True, 1, 2.0)
    assert dtype_name(r.dtype) == "float32" and r.item() == 1.0
    with pytest.raises(ValueError):
        mx.where(mx.array([True, False]), mx.array([1, 2, 3]), 0)


@pytest.mark.parametrize("name", [d for d in DTYPES if d != "complex64"])
def test_clip(name):
    uns = name in UNSIGNED or name == "bool_"
    x = sample(name, (4, 5), 0 if uns else -10, 10, seed=2)
    lo_v, hi_v = (False, True) if name == "bool_" else (2, 7) if uns else (-3, 4)
    a = to_mx(x, name)
    for lo, hi in ((lo_v, hi_v), (None, hi_v), (lo_v, None)):
        r = mx.clip(a, lo, hi)
        assert dtype_name(r.dtype) == name, (lo, hi, r.dtype)
        exp = np.clip(x.astype(np.float64), lo if lo is not None else -np.inf,
                      hi if hi is not None else np.inf)
        assert_values(to_np(r), cast_like(exp, name) if name in FLOATS else exp.astype(x.dtype), name)
    # Array bounds broadcast.
    lo_a = to_mx(sample(name, (5,), 0 if uns else -5, 0 if uns else 0, seed=3), name)
    r = mx.clip(a, lo_a, hi_v)
    exp = np.minimum(np.maximum(x.astype(np.float64), to_np(lo_a).astype(np.float64)), hi_v)
    assert_values(to_np(r), cast_like(exp, name) if name in FLOATS else exp.astype(x.dtype), name)


def test_clip_semantics():
    with pytest.raises(ValueError):
        mx.clip(mx.array([1.0]), None, None)
    r = mx.clip(mx.array([1, 5, 9], mx.int8), 0.5, 5)
    assert dtype_name(r.dtype) == "float32" and to_np(r).tolist() == [1.0, 5.0, 5.0]
    r = mx.clip(mx.array([np.nan, 1.0, 9.0]), 0.0, 5.0)
    assert np.isnan(to_np(r)[0]) and to_np(r)[1:].tolist() == [1.0, 5.0]
    r = mx.clip(mx.array([1.0, 5.0, 9.0]), a_min=2.0, a_max=6.0)
    assert to_np(r).tolist() == [2.0, 5.0, 6.0]


@needs_oracle
@pytest.mark.parametrize("dc,dx,dy", [(c, x, y) for c in ("bool_", "int32") for x in DTYPES
                                      for y in ("int8", "float16", "float32", "complex64", "bool_")])
def test_where_matches_mlx(dc, dx, dy):
    c = sample(dc, (2, 3), 0, 1, seed=1)
    sub, ref = both(lambda m, c, x, y: m.where(c, x, y), A(c, dc), A(sample(dx, (3,), 1, 4), dx),
                    A(sample(dy, (2, 1), 1, 4), dy))
    assert_same_as_oracle(sub, ref, msg=f"where({dc}, {dx}, {dy})")


@needs_oracle
@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("bounds", [(1, 3), (0.5, 2.5), (None, 2), (1, None), (True, 2), ("arr", "arr")])
def test_clip_matches_mlx(name, bounds):
    x = sample(name, (2, 3), 0, 5, seed=9)
    lo, hi = bounds

    def f(m, a, lo=lo, hi=hi):
        if lo == "arr":
            lo = m.array([0, 1, 2], m.int8)
            hi = m.array([[2.5], [4]], m.float16)
        return m.clip(a, lo, hi)
    sub, ref = both(f, A(x, name))
    assert_same_as_oracle(sub, ref, msg=f"clip({name}, {bounds})")


# ------------------------------------------------------------ operators

OPERATORS = [
    ("+", "add"), ("-", "subtract"), ("*", "multiply"), ("/", "divide"),
    ("//", "floor_divide"), ("%", "remainder"), ("**", "power"), ("==", "equal"),
    ("!=", "not_equal"), ("<", "less"), ("<=", "less_equal"), (">", "greater"),
    (">=", "greater_equal"), ("&", "bitwise_and"), ("|", "bitwise_or"),
    ("^", "bitwise_xor"), ("<<", "left_shift"), (">>", "right_shift"),
]


@pytest.mark.parametrize("sym,op", OPERATORS, ids=[o for _, o in OPERATORS])
@pytest.mark.parametrize("name", ["int32", "uint8", "float32", "float16", "bool_"])
def test_operators(sym, op, name):
    if name in FLOATS and op in ("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"):
        return
    xa, xb = operands(op if op != "power" else "power", name, (3, 4), (4,))
    if name == "bool_" and op in ("floor_divide", "remainder"):
        xb = np.ones_like(xb)
    a, b = to_mx(xa, name), to_mx(xb, name)
    ns = {"a": a, "b": b}
    r = eval(f"a {sym} b", ns)
    check(op, r, reference(op, xa, xb, name), name, f"a {sym} b")
    # Reflected with a Python scalar on the left (arithmetic and comparisons).
    if op not in ("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"):
        s = 2 if name != "bool_" else True
        r = eval(f"s {sym} b", {"s": s, "b": b})
        exp = reference(op, np.full(xb.shape, s, xb.dtype), xb, name)
        check(op, r, exp, name, f"{s} {sym} b")
    # In place: rebinds the same Python object to the new value.
    if op in ("add", "subtract", "multiply", "bitwise_or", "left_shift"):
        c = to_mx(xa, name)
        alias = c
        ns = {"c": c, "b": b}
        exec(f"c {sym}= b", ns)
        check(op, ns["c"], reference(op, xa, xb, name), name, f"c {sym}= b")
        assert ns["c"] is alias, "in-place operators update the array object itself"


def test_inplace_promotes_and_errors_leave_array_intact():
    a = mx.array([1, 2], mx.int8)
    a += 1.5
    assert dtype_name(a.dtype) == "float32" and to_np(a).tolist() == [2.5, 3.5]
    b = mx.array([1, 2])
    with pytest.raises(ValueError):
        b += mx.array([1, 2, 3])
    assert to_np(b).tolist() == [1, 2] and dtype_name(b.dtype) == "int32"


def test_float_bitwise_operator_is_an_error():
    # the operators check the dtype in the binding: ValueError, unlike the
    # functions' RuntimeError
    a = mx.array([1.5])
    with pytest.raises(ValueError, match="Floating point types not allowed with bitwise and"):
        mx.eval(a & 1)
    with pytest.raises(ValueError, match="Floating point types not allowed with left shift"):
        mx.eval(a << 1)


# ------------------------------------------------------------ errors

@pytest.mark.parametrize("op", list(BINARY))
def test_broadcast_error_names_both_shapes(op):
    a, b = mx.zeros((2, 3), mx.int32), mx.ones((4,), mx.int32)
    with pytest.raises(ValueError) as e:
        mx.eval(getattr(mx, op)(a, b))
    msg = str(e.value)
    assert "(2,3)" in msg and "(4)" in msg, msg
    with pytest.raises(ValueError):
        mx.eval(getattr(mx, op)(mx.zeros((2, 3, 4), mx.int32), mx.zeros((3, 1, 5), mx.int32)))
    # The operands are unchanged and still usable.
    assert to_np(a).tolist() == [[0, 0, 0], [0, 0, 0]]
    assert to_np(mx.add(a, 1)).sum() == 6


@pytest.mark.parametrize("op", list(BINARY))
def test_binary_wrong_argument_types(op):
    a = mx.array([1, 2], mx.int32)
    with pytest.raises(TypeError):
        getattr(mx, op)(a, None)
    with pytest.raises(TypeError):
        getattr(mx, op)(a)
    # other objects go through array conversion, which refuses them
    with pytest.raises(ValueError, match="Invalid type str received in array initialization"):
        getattr(mx, op)(a, "abc")
    with pytest.raises(ValueError, match="Invalid type object received in array initialization"):
        getattr(mx, op)(a, object())
    assert to_np(a).tolist() == [1, 2]


@pytest.mark.parametrize("op", list(BINARY))
def test_binary_stream_argument(op):
    a, b = mx.array([1, 2, 3], mx.int32), mx.array([3, 2, 1], mx.int32)
    base = getattr(mx, op)(a, b)
    base = [to_np(x) for x in (base if isinstance(base, (list, tuple)) else [base])]
    s = mx.new_stream(mx.cpu)
    for st in (mx.cpu, s, mx.default_stream(mx.cpu)):
        r = getattr(mx, op)(a, b, stream=st)
        for x, e in zip(r if isinstance(r, (list, tuple)) else [r], base):
            assert np.array_equal(to_np(x), e)
    with pytest.raises(ValueError):
        mx.eval(getattr(mx, op)(a, b, stream=mx.gpu))


def test_errors_do_not_crash_or_corrupt():
    a = mx.array([[1.0, 2.0], [3.0, 4.0]])
    snapshot = to_np(a).copy()
    for exc, bad in ((ValueError, lambda: a + mx.zeros((3,))),
                     (RuntimeError, lambda: mx.bitwise_and(a, a)),
                     (ValueError, lambda: mx.remainder(mx.array([1j]), a)),
                     (ValueError, lambda: mx.where(a, mx.zeros((3,)), a)),
                     (ValueError, lambda: mx.clip(a, None, None)),
                     (TypeError, lambda: mx.add(a, None))):
        with pytest.raises(exc):
            mx.eval(bad())
    assert np.array_equal(to_np(a), snapshot)
    assert to_np(a * 2).tolist() == [[2.0, 4.0], [6.0, 8.0]]
