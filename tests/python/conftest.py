"""Shared test machinery for the cmlx Python suites.

The *subject* is ``cmlx.core`` (override with ``CMLX_TEST_SUBJECT=mlx.core``
to check the tests themselves against real MLX: every test must pass then).
NumPy is the value reference.  Real MLX, where importable, is the *oracle*:
tests that compare dtypes and edge-case values with MLX use it and are
skipped without it.  Error tests name the exception type MLX raises
themselves, so the type is checked without the oracle too (with it they
also compare with MLX).  The oracle is turned off under sanitizer runs
(``LD_PRELOAD`` holding libasan) or with ``CMLX_TEST_NO_ORACLE=1``, because
MLX's own library is not built for ASan.

Test files import the helpers below with ``from conftest import ...``
(pytest puts this directory on sys.path; it is not a package).
"""

import importlib
import math
import os
import warnings

import numpy as np
import pytest

SUBJECT_NAME = os.environ.get("CMLX_TEST_SUBJECT", "cmlx.core")
mx = importlib.import_module(SUBJECT_NAME)

# CMLX_TEST_DEVICE=gpu runs the whole suite with the GPU as the default
# device (make test-cuda on a machine with one): every test that compares
# values with NumPy then checks the GPU's kernels against the same
# references the CPU meets.
if os.environ.get("CMLX_TEST_DEVICE") == "gpu":
    mx.set_default_device(mx.gpu)


UNDER_ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")


def _load_oracle():
    if os.environ.get("CMLX_TEST_NO_ORACLE"):
        return None
    if UNDER_ASAN:
        return None
    try:
        return importlib.import_module("mlx.core")
    except Exception:  # not installed, or a broken wheel
        return None


mlx_ref = _load_oracle()

needs_oracle = pytest.mark.skipif(mlx_ref is None, reason="real MLX (mlx.core) is not importable")

# Checks where MLX itself misbehaves (crashes, leaks std::bad_cast as a
# RuntimeError): they hold cmlx to the clear error and are skipped when the
# tests are run against real MLX to validate them.
SUBJECT_IS_MLX = SUBJECT_NAME.split(".")[0] == "mlx" or (
    mlx_ref is not None and getattr(mx, "array", None) is mlx_ref.array)
cmlx_only = pytest.mark.skipif(SUBJECT_IS_MLX, reason="MLX deviates here; cmlx must not")

# ---------------------------------------------------------------- dtypes

# MLX's order (mlx-c's enum order): the promotion table below uses it.
DTYPES = [
    "bool_", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32",
    "int64", "float16", "bfloat16", "float32", "float64", "complex64",
]
BOOL = ["bool_"]
UNSIGNED = ["uint8", "uint16", "uint32", "uint64"]
SIGNED = ["int8", "int16", "int32", "int64"]
INTS = UNSIGNED + SIGNED
FLOATS = ["float16", "bfloat16", "float32", "float64"]
REALS = BOOL + INTS + FLOATS
COMPLEX = ["complex64"]

SHORT = {
    "bool_": "b", "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "float16": "f16",
    "bfloat16": "bf16", "float32": "f32", "float64": "f64", "complex64": "c64",
}
FROM_SHORT = {v: k for k, v in SHORT.items()}

# MLX's type-promotion table (result_type of two dtypes), rows and columns
# in DTYPES order.  Checked against real MLX in test_dtypes.py.
_PROMOTE_ROWS = """
b    u8   u16  u32  u64  i8   i16  i32  i64  f16  bf16 f32  f64  c64
u8   u8   u16  u32  u64  i16  i16  i32  i64  f16  bf16 f32  f64  c64
u16  u16  u16  u32  u64  i32  i32  i32  i64  f16  bf16 f32  f64  c64
u32  u32  u32  u32  u64  i64  i64  i64  i64  f16  bf16 f32  f64  c64
u64  u64  u64  u64  u64  f32  f32  f32  f32  f16  bf16 f32  f64  c64
i8   i16  i32  i64  f32  i8   i16  i32  i64  f16  bf16 f32  f64  c64
i16  i16  i32  i64  f32  i16  i16  i32  i64  f16  bf16 f32  f64  c64
i32  i32  i32  i64  f32  i32  i32  i32  i64  f16  bf16 f32  f64  c64
i64  i64  i64  i64  f32  i64  i64  i64  i64  f16  bf16 f32  f64  c64
f16  f16  f16  f16  f16  f16  f16  f16  f16  f16  f32  f32  f64  c64
bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16 f32  bf16 f32  f64  c64
f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f64  c64
f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  c64
c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64
"""
PROMOTE = {}
for _i, _row in enumerate(_PROMOTE_ROWS.split("\n")[1:-1]):
    for _j, _cell in enumerate(_row.split()):
        PROMOTE[(DTYPES[_i], DTYPES[_j])] = FROM_SHORT[_cell]
assert len(PROMOTE) == 196

# NumPy storage for each dtype; bfloat16 values are held in float32 (rounded
# to bfloat16 first), since NumPy has no bfloat16.
NP_DTYPE = {
    "bool_": np.bool_, "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32,
    "uint64": np.uint64, "int8": np.int8, "int16": np.int16, "int32": np.int32,
    "int64": np.int64, "float16": np.float16, "bfloat16": np.float32,
    "float32": np.float32, "float64": np.float64, "complex64": np.complex64,
}


def is_float(name):
    return name in FLOATS


def is_int(name):
    return name in INTS


def dt(name, mod=None):
    """The Dtype object called `name` in `mod` (the subject by default)."""
    return getattr(mod if mod is not None else mx, name)


def dtype_name(d):
    """Name of a Dtype object of the subject or the oracle ("float32", ...)."""
    for mod in (mx, mlx_ref):
        if mod is None:
            continue
        for n in DTYPES:
            if d == getattr(mod, n):
                return n
    raise AssertionError(f"not a known dtype: {d!r}")


# ---------------------------------------------------------------- bfloat16

def round_bf16(x):
    """float32 values rounded to the nearest bfloat16 (ties to even), kept in
    float32.  NaN stays NaN; overflow goes to inf as a real cast would."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    bias = ((bits >> 16) & 1) + 0x7FFF
    out = (((bits + bias) >> 16) << 16).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), out).astype(np.float32)


def cast_like(x, name):
    """NumPy float/complex values cast to what dtype `name` can hold."""
    with np.errstate(all="ignore"):
        if name == "bfloat16":
            return round_bf16(np.asarray(x, np.float64).astype(np.float32))
        return np.asarray(x).astype(NP_DTYPE[name])


# ---------------------------------------------------------------- conversion

def to_mx(x, name, mod=None, infer=False):
    """A NumPy array (any layout) as an array of dtype `name` of `mod`.

    bfloat16 goes through float32.  With infer=True the dtype is not passed
    where NumPy's dtype already says it (exercises MLX's inference)."""
    mod = mod if mod is not None else mx
    if infer and name not in ("bfloat16", "float64"):
        a = mod.array(x)
        assert dtype_name(a.dtype) == name, (a.dtype, name)
        return a
    return mod.array(x, dtype=getattr(mod, name))


def to_np(a):
    """A subject/oracle array as NumPy (bfloat16 read back as float32)."""
    name = dtype_name(a.dtype)
    if name == "bfloat16":
        mod = mx if isinstance(a, mx.array) else mlx_ref
        a = a.astype(mod.float32)
    out = np.array(a)
    assert out.shape == tuple(a.shape), (out.shape, a.shape)
    return out


# ---------------------------------------------------------------- data

def rng(seed=0):
    return np.random.default_rng(seed)


def sample(name, shape, lo=-3.0, hi=3.0, seed=0, nonzero=False):
    """Random NumPy data representable in dtype `name` (bf16 rounded)."""
    r = rng(seed)
    shape = tuple(shape)
    if name == "bool_":
        v = r.integers(0, 2, size=shape).astype(np.bool_)
        if nonzero:
            v[...] = True
        return v
    if name in INTS:
        info = np.iinfo(NP_DTYPE[name])
        a, b = max(math.floor(lo), info.min), min(math.ceil(hi), info.max)
        v = r.integers(a, b + 1, size=shape).astype(NP_DTYPE[name])
        if nonzero:
            v[v == 0] = 1 if b >= 1 else -1
        return v
    if name == "complex64":
        v = np.array(r.uniform(lo, hi, size=shape) + 1j * r.uniform(lo, hi, size=shape))
        if nonzero:
            v[np.abs(v) < 0.1] = 0.5 + 0.5j
        return v.astype(np.complex64)
    v = np.array(r.uniform(lo, hi, size=shape))
    if nonzero:
        v[np.abs(v) < 0.1] = 0.5
    return cast_like(v, name)


# ---------------------------------------------------------------- layouts

# Each layout builds a NumPy array of the requested dtype from a base array
# creator and returns (numpy_view, description).  Non-contiguous views reach
# the subject through mx.array(np_view) (the strided import path); "nativeT"
# uses the subject's own transpose (array.T) on a contiguous import.
# (Negative strides are left out: MLX refuses them on import; see
# test_creation.py::test_array_from_negative_strides.)
# mx.array(np_view) may well copy into a contiguous buffer, so the native_*
# layouts build views with the subject's own ops (transpose, slicing with
# steps and negative steps, broadcast_to): those reach the kernels' strided
# paths.  A subject that cannot build one fails the test.
LAYOUTS = ["contig", "scalar", "empty", "empty3d", "transposed", "strided",
           "bcast_view", "nativeT", "native_slice", "native_rev", "native_bcast", "large"]


def make_layout(layout, make):
    """`make(shape)` returns a contiguous NumPy array; returns the view."""
    if layout == "contig":
        return make((3, 5))
    if layout == "scalar":
        return make(())
    if layout == "empty":
        return make((0,))
    if layout == "empty3d":
        return make((2, 0, 3))
    if layout == "transposed":
        return make((4, 6)).T
    if layout == "strided":
        return make((7, 10))[::2, 1::3]
    if layout == "bcast_view":
        return np.broadcast_to(make((1, 5)), (4, 5))
    if layout == "nativeT":
        return make((5, 3))  # transposed by the caller through array.T
    if layout == "native_slice":
        return make((7, 10))  # sliced by the caller: [::2, 1::3]
    if layout == "native_rev":
        return make((4, 9))  # sliced by the caller: [::-1, ::-2]
    if layout == "native_bcast":
        return make((1, 5))  # broadcast by the caller to (4, 5)
    if layout == "large":
        return make((257, 131))[:, 1:]  # > 32k elements: the threaded path
    raise ValueError(layout)


def layout_input(layout, x, name, mod=None):
    """The subject (or oracle) array for a NumPy view in a given layout,
    plus the NumPy array it must equal."""
    mod = mod if mod is not None else mx
    if layout == "nativeT":
        a = to_mx(np.ascontiguousarray(x), name, mod).T
        return a, np.ascontiguousarray(x).T
    if layout in NATIVE_VIEWS:
        view = NATIVE_VIEWS[layout]
        return view(to_mx(x, name, mod), mod), view(x, np)
    return to_mx(x, name, mod), x


def _bcast(a, mod):
    return mod.broadcast_to(a, (4, 5))


NATIVE_VIEWS = {
    "native_slice": lambda a, mod: a[::2, 1::3],
    "native_rev": lambda a, mod: a[::-1, ::-2],
    "native_bcast": _bcast,
}


# ---------------------------------------------------------------- tolerances

# (rtol, atol) by result dtype.  float16/bfloat16 are looser: the reference
# is computed in float64 and rounded, the subject computes in float32.
# float64 transcendentals in MLX's CPU build are only float32-accurate, so
# the float64 tolerance is too; exact float64 arithmetic is tested apart.
TOL = {
    "float16": (4e-3, 1e-3),
    "bfloat16": (3e-2, 1e-2),
    "float32": (2e-5, 1e-6),
    "float64": (1e-6, 1e-6),
    "complex64": (5e-5, 2e-6),
}


def assert_values(got, expected, name, rtol=None, atol=None, msg=""):
    """`got` (NumPy, read from the subject) against `expected` (NumPy) for a
    result of dtype `name`: exact for bool/int, within tolerance for floats;
    NaN must match NaN and infinities must match in sign."""
    expected = np.asarray(expected)
    assert got.shape == expected.shape, f"{msg} shape {got.shape} != {expected.shape}"
    if name in BOOL + INTS:
        exp = expected.astype(NP_DTYPE[name]) if expected.dtype != NP_DTYPE[name] else expected
        if not np.array_equal(got, exp):
            bad = np.argwhere(got != exp)[:5]
            raise AssertionError(
                f"{msg} {name} values differ at {bad.tolist()}: got {got[tuple(bad.T)]}, "
                f"expected {exp[tuple(bad.T)]}")
        return
    r, a = TOL[name]
    rtol = r if rtol is None else rtol
    atol = a if atol is None else atol
    g = got.astype(np.complex128 if name == "complex64" else np.float64)
    e = expected.astype(np.complex128 if np.iscomplexobj(expected) else np.float64)
    with np.errstate(all="ignore"):
        ok = np.isclose(g, e, rtol=rtol, atol=atol, equal_nan=True) | (g == e)
    if not ok.all():
        bad = np.argwhere(~ok)[:5]
        raise AssertionError(
            f"{msg} {name} values differ at {bad.tolist()}: got {g[tuple(bad.T)]}, "
            f"expected {e[tuple(bad.T)]} (rtol={rtol}, atol={atol})")


# ---------------------------------------------------------------- oracle runs

class Raised:
    """Stands for an exception raised by an op (so results compare)."""

    def __init__(self, exc):
        self.exc = exc
        self.type = type(exc)

    def __repr__(self):
        return f"Raised({self.type.__name__}: {self.exc})"


class A:
    """An array argument: NumPy data plus the dtype to build it with."""

    def __init__(self, x, name):
        self.x = np.asarray(x) if not isinstance(x, np.ndarray) else x
        self.name = name

    def build(self, mod):
        return to_mx(self.x, self.name, mod)


def call(mod, fn, *args, **kwargs):
    """Run `fn(mod, *built_args, **kwargs)` and evaluate the result; returns
    the result or a Raised.  A-arguments are converted first (outside the
    try, so a conversion failure is a test error, not an op error)."""
    built = [a.build(mod) if isinstance(a, A) else a for a in args]
    try:
        r = fn(mod, *built, **kwargs)
        mod.eval(r)
        return r
    except (ValueError, TypeError, RuntimeError, IndexError, OverflowError,
            NotImplementedError, ZeroDivisionError, MemoryError) as e:
        return Raised(e)


def ev(a):
    """Evaluate a subject array and return it."""
    mx.eval(a)
    return a


def npv(a):
    """A subject array's values as NumPy, after evaluating it."""
    return to_np(ev(a))


def dname(a):
    return dtype_name(a.dtype)


def accepts(f, args, kwargs):
    """True unless the call raises TypeError (argument parsing)."""
    try:
        f(*args, **kwargs)
        return True
    except TypeError:
        return False


def call_form_pattern(m, f, ps, kw_only=()):
    """Which call forms f accepts, given its parameters ps = [(name, value)]:
    the first i by position and the rest by keyword (i = 0..len), a
    positional stream, stream=, an unknown keyword, then for each
    keyword-only (name, value) in kw_only: by position, by keyword."""
    vals = [v for _, v in ps]
    out = [accepts(f, vals[:i], {p: v for p, v in ps[i:]}) for i in range(len(ps) + 1)]
    out.append(accepts(f, vals + [m.cpu], {}))
    out.append(accepts(f, vals, {"stream": m.cpu}))
    out.append(accepts(f, vals, {"bogus": 1}))
    for k, v in kw_only:
        out.append(accepts(f, vals + [v], {}))
        out.append(accepts(f, vals, {k: v}))
    return out


def assert_call_forms_parse(pat, n, n_kw_only=0):
    """What every op must accept and refuse in a call_form_pattern of its n
    parameters and n_kw_only keyword-only ones."""
    assert pat[n] is True  # every parameter by position
    assert pat[n + 2] is True  # stream=
    assert pat[n + 3] is False  # unknown keyword
    for j in range(n_kw_only):
        assert pat[n + 4 + 2 * j] is False  # keyword-only, by position
        assert pat[n + 5 + 2 * j] is True  # keyword-only, by keyword


def assert_displayed_signature(name, overrides=None):
    """cmlx's signature table has one row for name, the function's __doc__
    shows it, and it is MLX's first docstring line (or overrides[name])."""
    ours = [r[0] + r[1] for r in mx._signatures if r[0] == name]
    assert len(ours) == 1
    # the docstring text (python/docs) follows the signature after a blank line
    assert getattr(mx, name).__doc__.split("\n\n")[0] == ours[0]
    if overrides and name in overrides:
        assert ours[0] == overrides[name]
    elif mlx_ref is not None:
        assert ours[0] == getattr(mlx_ref, name).__doc__.strip().splitlines()[0]


def _flat(r):
    return list(r) if isinstance(r, (list, tuple)) else [r]


def assert_same_as_oracle(sub, ref, msg="", rtol=None, atol=None):
    """The subject's result matches real MLX's: same exception type, or the
    same dtype, shape and values (within tolerance for inexact dtypes)."""
    if isinstance(ref, Raised) or isinstance(sub, Raised):
        assert isinstance(sub, Raised) and isinstance(ref, Raised), \
            f"{msg}: subject {sub!r} but MLX {ref!r}"
        assert sub.type is ref.type, f"{msg}: subject raised {sub!r}, MLX raised {ref!r}"
        return
    subs, refs = _flat(sub), _flat(ref)
    assert len(subs) == len(refs), f"{msg}: {len(subs)} outputs vs MLX's {len(refs)}"
    for s, r in zip(subs, refs):
        sn, rn = dtype_name(s.dtype), dtype_name(r.dtype)
        assert sn == rn, f"{msg}: dtype {sn}, MLX gives {rn}"
        assert tuple(s.shape) == tuple(r.shape), f"{msg}: shape {tuple(s.shape)}, MLX {tuple(r.shape)}"
        assert_values(to_np(s), to_np(r), sn, rtol=rtol, atol=atol, msg=msg)


def both(fn, *args, **kwargs):
    """(subject result, oracle result) of the same call; oracle None if absent."""
    sub = call(mx, fn, *args, **kwargs)
    ref = call(mlx_ref, fn, *args, **kwargs) if mlx_ref is not None else None
    return sub, ref


# ---------------------------------------------------------------- reference math

def np_erf(x):
    x = np.asarray(x, np.float64)
    return np.vectorize(math.erf, otypes=[np.float64])(x) if x.size else x.copy()


def np_erfinv(y):
    """erf's inverse in float64 by Newton's method (NumPy has none)."""
    y = np.asarray(y, np.float64)
    with np.errstate(all="ignore"):
        inside = np.abs(y) < 1
        x = np.where(inside, np.sign(y) * np.sqrt(-np.log((1 - y) * (1 + y))) * 0.8, 0.0)
        for _ in range(50):
            xs = np.where(inside, x, 0.0)
            x = np.where(inside, xs - (np_erf(xs) - y) / (2 / math.sqrt(math.pi) * np.exp(-xs * xs)), x)
        x = np.where(y == 1, np.inf, np.where(y == -1, -np.inf, x))
        x = np.where((np.abs(y) > 1) | np.isnan(y), np.nan, x)
    return x


def np_sigmoid(x):
    with np.errstate(all="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


# ---------------------------------------------------------------- order

# Each test starts from random state of its own, derived from its id: a test
# that draws from mx.random, np.random or random without seeding them sees the
# same numbers whichever tests ran before it, so the order shuffle below
# cannot change its data.
@pytest.fixture(autouse=True)
def _seed_per_test(request):
    import random
    import zlib

    seed = zlib.crc32(request.node.nodeid.encode())
    random.seed(seed)
    np.random.seed(seed)
    if hasattr(mx, "random"):
        mx.random.seed(seed)
    yield


# CMLX_TEST_SHUFFLE=random (or a number, to repeat a run) runs the test files
# in a shuffled order, and each file's tests in a shuffled order, so that a
# test that depends on what ran before it shows.  The seed is printed in the
# header; .ci/run shuffles make test's run.
def _shuffle_seed():
    value = os.environ.get("CMLX_TEST_SHUFFLE", "")
    if not value:
        return None
    if value == "random":
        return int.from_bytes(os.urandom(4), "little")
    return int(value)


_SHUFFLE_SEED = _shuffle_seed()


def pytest_terminal_summary(terminalreporter):
    # At the end (pytest -q prints no header), next to any failures.
    if _SHUFFLE_SEED is not None:
        terminalreporter.write_line(
            f"test order was shuffled: CMLX_TEST_SHUFFLE={_SHUFFLE_SEED} repeats it")


def pytest_collection_modifyitems(session, config, items):
    if _SHUFFLE_SEED is None:
        return
    import random

    shuffler = random.Random(_SHUFFLE_SEED)
    by_file = {}
    for item in items:
        by_file.setdefault(item.nodeid.split("::")[0], []).append(item)
    files = list(by_file)
    shuffler.shuffle(files)
    items[:] = []
    for name in files:
        group = by_file[name]
        shuffler.shuffle(group)
        items.extend(group)


@pytest.fixture(autouse=True)
def _quiet_numpy():
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def run_in_threads(work, n=4):
    """work(k) for k in range(n), each on its own thread; returns after all
    have finished (work records its own results and errors)."""
    import threading

    threads = [threading.Thread(target=work, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
