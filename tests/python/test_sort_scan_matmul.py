"""Sorting, scans and matrix products of cmlx.core as Python functions, array
methods and the @ operator: sort, argsort, partition, argpartition, topk,
searchsorted, cumsum, cumprod, cummax, cummin, logcumsumexp, matmul, addmm.

Values are checked against NumPy across dtypes, axes (None, negative),
reverse/inclusive, 0-d/empty and non-contiguous inputs; accepted call forms,
result dtypes and error types against real MLX where it is importable."""

import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import (A, DTYPES, FLOATS, INTS, LAYOUTS, SUBJECT_IS_MLX, Raised,
                      assert_call_forms_parse, assert_displayed_signature, assert_same_as_oracle,
                      assert_values, both, call_form_pattern, cast_like, cmlx_only, dname,
                      layout_input, make_layout, mlx_ref, mx, needs_oracle, npv, sample, to_mx,
                      to_np)


REALS = [n for n in DTYPES if n != "complex64"]


# ------------------------------------------------------------ call forms


def _samples(m):
    a2 = m.arange(6, dtype=m.float32).reshape(2, 3)
    a1 = m.arange(4, dtype=m.float32)
    sq = m.ones((3, 3))
    return {
        "sort": [("a", a2), ("axis", -1)],
        "argsort": [("a", a2), ("axis", -1)],
        "partition": [("a", a2), ("kth", 1), ("axis", -1)],
        "argpartition": [("a", a2), ("kth", 1), ("axis", -1)],
        "topk": [("a", a2), ("k", 1), ("axis", -1)],
        "searchsorted": [("sorted_sequence", a1), ("values", a1), ("side", "left")],
        "cumsum": [("a", a2), ("axis", 0)],
        "cumprod": [("a", a2), ("axis", 0)],
        "cummax": [("a", a2), ("axis", 0)],
        "cummin": [("a", a2), ("axis", 0)],
        "logcumsumexp": [("a", a2), ("axis", 0)],
        "matmul": [("a", sq), ("b", sq)],
        "addmm": [("c", sq), ("a", sq), ("b", sq), ("alpha", 1.0), ("beta", 1.0)],
    }


NAMES = sorted(_samples(mx).keys())
SCAN_KW = [("reverse", True), ("inclusive", False)]
KW_ONLY = {"cumsum": SCAN_KW + [("dtype", mx.float32)], "cumprod": SCAN_KW + [("dtype", mx.float32)],
           "cummax": SCAN_KW, "cummin": SCAN_KW, "logcumsumexp": SCAN_KW}


def _pattern(m, name):
    # The dtype keyword's value must be the module's own dtype object.
    kw = [(k, m.float32 if k == "dtype" else v) for k, v in KW_ONLY.get(name, [])]
    return call_form_pattern(m, getattr(m, name), _samples(m)[name], kw)


@pytest.mark.parametrize("name", NAMES)
def test_call_forms_parse(name):
    assert_call_forms_parse(_pattern(mx, name), len(_samples(mx)[name]), len(KW_ONLY.get(name, [])))


@needs_oracle
@pytest.mark.parametrize("name", NAMES)
def test_call_forms_match_mlx(name):
    assert _pattern(mx, name) == _pattern(mlx_ref, name)


@pytest.mark.skipif(SUBJECT_IS_MLX, reason="cmlx's signature table")
@pytest.mark.parametrize("name", NAMES)
def test_displayed_signature(name):
    assert_displayed_signature(name)


METHODS = ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"]


@pytest.mark.skipif(SUBJECT_IS_MLX, reason="cmlx's signature table")
@pytest.mark.parametrize("name", METHODS)
def test_method_signature(name):
    ours = [r[1] for r in mx._signatures if r[0] == "array." + name]
    assert ours == ["(self, axis: int | None = None, *, reverse: bool = False, inclusive: bool = "
                    "True, stream: StreamOrDevice = None) -> array"]
    if mlx_ref is not None:
        theirs = getattr(mlx_ref.array, name).__doc__.strip().splitlines()[0].replace(
            "mlx.core.Stream | mlx.core.ThreadLocalStream | mlx.core.Device | "
            "mlx.core.DeviceType | None", "StreamOrDevice").replace("mlx.core.", "")
        assert name + ours[0] == theirs


# ------------------------------------------------------------ sort and selection


def _sortable(name, shape, seed):
    """Data without NaN ties issues: distinct-ish values (ints may repeat)."""
    return sample(name, shape, lo=-20, hi=20, seed=seed)


@pytest.mark.parametrize("name", DTYPES)
def test_sort_argsort(name):
    x = _sortable(name, (4, 6), seed=1)
    a = to_mx(x, name)
    key = (lambda v: v) if name != "complex64" else (lambda v: v)
    for ax in [-1, 0, 1, -2, None]:
        r = mx.sort(a, ax)
        assert dname(r) == name
        e = np.sort(x, axis=ax) if ax is not None else np.sort(x, axis=None)
        assert_values(npv(r), key(e), name, msg=f"sort axis={ax}")
        r = mx.argsort(a, axis=ax)
        assert dname(r) == "uint32"
        idx = npv(r).astype(np.int64)
        if ax is None:
            got = x.ravel()[idx]
        else:
            got = np.take_along_axis(x, idx, axis=ax)
        assert_values(got, e, name, msg=f"argsort axis={ax}")
        if name not in ("complex64",):
            # stable: equal keys keep their order
            e_idx = np.argsort(x, axis=ax, kind="stable")
            assert np.array_equal(idx, e_idx), f"argsort stable axis={ax}"


@pytest.mark.parametrize("name", REALS)
def test_partition_topk(name):
    x = _sortable(name, (3, 7), seed=2)
    a = to_mx(x, name)
    for kth in [0, 3, -1, 6]:
        for ax in [-1, None]:
            r = mx.partition(a, kth, ax)
            assert dname(r) == name
            got = npv(r)
            e = np.sort(x, axis=ax)
            if ax is None:
                k = kth % x.size
                assert got.shape == (x.size,)
                assert_values(got[k:k + 1], e[k:k + 1], name)
                assert (got[:k] <= got[k]).all() and (got[k + 1:] >= got[k]).all()
            else:
                k = kth % x.shape[-1]
                assert_values(got[:, k], e[:, k], name)
                assert (got[:, :k] <= got[:, k:k + 1]).all()
                assert (got[:, k + 1:] >= got[:, k:k + 1]).all()
            r = mx.argpartition(a, kth=kth, axis=ax)
            assert dname(r) == "uint32"
            idx = npv(r).astype(np.int64)
            vals = x.ravel()[idx] if ax is None else np.take_along_axis(x, idx, -1)
            assert np.array_equal(np.sort(vals, axis=-1), e if ax is not None else e)
    for k in [0, 1, 3, 7]:
        r = mx.topk(a, k)
        assert dname(r) == name and r.shape == (3, k)
        assert_values(np.sort(npv(r), -1), np.sort(x, -1)[:, 7 - k:], name, msg=f"topk {k}")
        r = mx.topk(a, k=k, axis=0) if k <= 3 else mx.topk(a, 2, 0)
        kk = min(k, 3) if k <= 3 else 2
        assert_values(np.sort(npv(r), 0), np.sort(x, 0)[3 - kk:], name)
    r = mx.topk(a, 5, None)
    assert_values(np.sort(npv(r)), np.sort(x, axis=None)[-5:], name)


def test_sort_special_values():
    x = np.array([3.0, np.nan, -0.0, 0.0, -np.inf, np.inf, 1.0, np.nan], dtype=np.float32)
    r = npv(mx.sort(mx.array(x)))
    assert np.array_equal(r[:6], [-np.inf, -0.0, 0.0, 1.0, 3.0, np.inf])
    assert np.isnan(r[6:]).all()
    assert npv(mx.argsort(mx.array([0.0, -0.0]))).tolist() == [0, 1]
    assert npv(mx.sort(mx.array([True, False, True]))).tolist() == [False, True, True]
    c = np.array([1 + 2j, 1 + 1j, 0 + 5j], dtype=np.complex64)
    assert npv(mx.sort(mx.array(c))).tolist() == [5j, 1 + 1j, 1 + 2j]


# ------------------------------------------------------------ sort paths
# The CPU sort picks a path per row: presorted and reverse rows, counting
# sorts (narrow keys, few distinct values), the AVX-512 quicksort with its
# one-pass short rows, composite-key argsort, long rows on several threads,
# blocks of strided lines.  Every path must give NumPy's stable order (NaN
# last, -0.0 equal to 0.0 and kept in place), whatever the layout.

SORT_REALS = ["bool_", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
              "float16", "bfloat16", "float32", "float64"]


def _dist(kind, n, seed=0):
    """float64 data of a kind (cast by the caller)."""
    r = np.random.default_rng(seed)
    if kind == "uniform":
        return r.uniform(-100, 100, n)
    if kind == "normal":
        return r.standard_normal(n) * 30
    if kind == "sorted":
        return np.sort(r.uniform(-100, 100, n))
    if kind == "reverse":
        return np.sort(r.uniform(-100, 100, n))[::-1].copy()
    if kind == "few":  # 16 distinct values
        return r.integers(-8, 8, n).astype(np.float64)
    if kind == "few40":  # more distinct values than the counting path takes
        return r.integers(-20, 20, n).astype(np.float64)
    if kind == "const":
        return np.full(n, 3.0)
    if kind == "special":  # NaN, -0.0, 0.0 and infinities among few values
        x = r.integers(-3, 3, n).astype(np.float64)
        m = r.random(n)
        x[m < 0.1] = np.nan
        x[(m >= 0.1) & (m < 0.3)] = -0.0
        x[(m >= 0.3) & (m < 0.35)] = 0.0
        x[(m >= 0.35) & (m < 0.4)] = np.inf
        x[(m >= 0.4) & (m < 0.45)] = -np.inf
        return x
    if kind in ("sorted_zeros", "reverse_zeros"):  # ordered, with -0.0 and 0.0 mixed
        x = np.sort(r.integers(-3, 3, n).astype(np.float64))
        z = x == 0
        x[z] = np.where(r.random(int(z.sum())) < 0.5, -0.0, 0.0)
        return x if kind == "sorted_zeros" else x[::-1].copy()
    if kind == "sorted_nan":  # in order, NaNs at the end
        x = np.sort(r.uniform(-5, 5, n))
        x[-(n // 10 + 1):] = np.nan
        return x
    raise ValueError(kind)


def _data(name, kind, shape, seed=0):
    """NumPy data of dtype `name` (bfloat16: float32 holding bf16 values)."""
    x = _dist(kind, int(np.prod(shape)), seed).reshape(shape)
    if name not in FLOATS:
        x = np.nan_to_num(x, nan=1.0, posinf=90.0, neginf=-90.0)
        x = np.abs(x) if name.startswith("u") or name == "bool_" else x
    return cast_like(x, name)


def _check_sorted(x, a, name, axis=-1, msg=""):
    """sort and argsort of mx array `a` (holding x) against NumPy's stable
    sort: the same elements bit for bit, the same permutation."""
    order = np.argsort(x, axis=axis, kind="stable")
    want = np.take_along_axis(x, order, axis)
    got = to_np(mx.sort(a, axis=axis))
    if name in FLOATS:
        assert np.array_equal(got, want, equal_nan=True), f"sort {msg}"
        assert np.array_equal(np.signbit(got), np.signbit(want)), f"sort -0.0 order {msg}"
    else:
        assert np.array_equal(got, want), f"sort {msg}"
    idx = npv(mx.argsort(a, axis=axis)).astype(np.int64)
    assert np.array_equal(idx, order), f"argsort {msg}"


KINDS = ["uniform", "normal", "sorted", "reverse", "few", "few40", "const", "special",
         "sorted_zeros", "reverse_zeros", "sorted_nan"]


@pytest.mark.parametrize("name", SORT_REALS)
@pytest.mark.parametrize("kind", KINDS)
def test_sort_long_rows(name, kind):
    if name not in FLOATS and kind in ("special", "sorted_zeros", "reverse_zeros", "sorted_nan"):
        pytest.skip("float data")
    for n in [5000, 70000]:
        x = _data(name, kind, (n,), seed=n)
        _check_sorted(x, to_mx(x, name), name, msg=f"{name} {kind} n={n}")


@pytest.mark.parametrize("name", ["float32", "int32", "uint32", "float16", "int64", "uint8"])
@pytest.mark.parametrize("kind", ["uniform", "sorted", "reverse", "few", "few40", "special"])
def test_sort_one_very_long_row(name, kind):
    """Long enough that one row is sorted by several threads."""
    if name not in FLOATS and kind == "special":
        pytest.skip("float data")
    x = _data(name, kind, (300001,), seed=3)
    _check_sorted(x, to_mx(x, name), name, msg=f"{name} {kind}")


@pytest.mark.parametrize("name", ["float32", "int32", "uint32", "float64", "int8", "float16"])
def test_sort_row_lengths(name):
    """Around the sorting network's sizes (vectors of 16 and 8 keys, 256
    and 128 in all) and the thresholds of the other paths."""
    for n in [1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 65, 127, 128, 129, 255, 256, 257, 511,
              1000, 4095, 4096, 4097]:
        for kind in ["uniform", "few", "reverse"] + (["special"] if name in FLOATS else []):
            x = _data(name, kind, (n,), seed=n)
            _check_sorted(x, to_mx(x, name), name, msg=f"n={n} {kind}")


@pytest.mark.parametrize("name", ["float32", "int32", "float16", "int64", "uint8", "bfloat16"])
@pytest.mark.parametrize("kind", ["uniform", "few", "special", "sorted"])
def test_sort_axes_and_layouts(name, kind):
    """Every axis of 3-d arrays, batched rows, and transposed and strided
    views (lines along an outer axis are gathered in blocks)."""
    if name not in FLOATS and kind == "special":
        pytest.skip("float data")
    for shape in [(40, 300, 3), (1000, 20), (20, 1000), (5, 4097)]:
        x = _data(name, kind, shape, seed=len(shape))
        a = to_mx(x, name)
        for axis in range(-len(shape), len(shape)):
            _check_sorted(x, a, name, axis, msg=f"{shape} axis={axis}")
        t = mx.transpose(a)
        _check_sorted(np.ascontiguousarray(x.T), t, name, 0, msg=f"{shape} transposed")
        _check_sorted(np.ascontiguousarray(x.T), t, name, -1, msg=f"{shape} transposed")
        v = a[::2] if shape[0] > 1 else a
        _check_sorted(x[::2], v, name, -1, msg=f"{shape} strided")
        _check_sorted(x[::2], v, name, 0, msg=f"{shape} strided")
    _check_sorted(x.ravel(), a.flatten(), name, msg="flat")


def _check_partition(x, a, kth, name, msg=""):
    """partition and argpartition: the element that sorts to kth is there,
    none larger before it, none smaller after (NaN largest)."""
    ref = np.sort(x.astype(np.float64))
    for got in (to_np(mx.partition(a, kth)).astype(np.float64),
                x.astype(np.float64)[npv(mx.argpartition(a, kth)).astype(np.int64)]):
        k, rk = np.where(np.isnan(got), np.inf, got), np.where(np.isnan(ref), np.inf, ref)
        assert np.array_equal(np.sort(k), rk), msg
        assert k[kth] == rk[kth], msg
        assert (k[:kth] <= k[kth]).all() and (k[kth + 1:] >= k[kth]).all(), msg
    idx = npv(mx.argpartition(a, kth)).astype(np.int64)
    assert np.array_equal(np.sort(idx), np.arange(x.size)), msg


@pytest.mark.parametrize("name", ["float32", "int32", "float64", "uint16", "int8", "float16"])
@pytest.mark.parametrize("kind", ["uniform", "few", "special", "sorted", "const"])
def test_partition_long_rows(name, kind):
    if name not in FLOATS and kind == "special":
        pytest.skip("float data")
    for n in [300, 5000, 100000]:
        x = _data(name, kind, (n,), seed=n)
        a = to_mx(x, name)
        for kth in [0, 1, n // 3, n // 2, n - 2, n - 1]:
            _check_partition(x, a, kth, name, msg=f"{kind} n={n} kth={kth}")


_PATHS_SCRIPT = r"""
import hashlib, sys
import numpy as np
import cmlx.core as mx
r = np.random.default_rng(5)
h = hashlib.sha256()
for n in (300, 5000, 300001):
    base = [r.uniform(-9, 9, n), np.sort(r.uniform(-9, 9, n)), r.integers(-8, 8, n) * 1.0,
            np.where(r.random(n) < 0.2, -0.0, r.integers(-2, 2, n) * 1.0)]
    base[3][::17] = np.nan
    for x in base:
        for dt in (mx.float32, mx.int32, mx.float16, mx.float64, mx.uint8):
            a = mx.array(np.nan_to_num(x) if dt in (mx.int32, mx.uint8) else x).astype(dt)
            outs = [mx.sort(a), mx.argsort(a)]
            if sys.argv[1] == "all":
                outs += [mx.partition(a, n // 3), mx.argpartition(a, n // 3)]
            for o in outs:
                h.update(np.array(o.astype(mx.float32) if o.dtype == mx.float16 else o).tobytes())
a = mx.array(r.uniform(-9, 9, (600, 700)).astype(np.float32))
for o in (mx.sort(a, 0), mx.argsort(a, 0), mx.sort(a, 1), mx.argsort(a.T, 1)):
    h.update(np.array(o).tobytes())
print(h.hexdigest())
"""


def _paths_digest(what, **env_vars):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    env.pop("CMLX_NUM_THREADS", None)
    env.pop("CMLX_SORT_SIMD", None)
    env.update(env_vars)
    out = subprocess.run([sys.executable, "-c", _PATHS_SCRIPT, what], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@cmlx_only
def test_sort_same_for_any_thread_count():
    """Sort, argsort, partition and argpartition are bit for bit the same
    on one thread as on the default pool (and on more threads than cores,
    which splits rows further)."""
    ref = _paths_digest("all", CMLX_NUM_THREADS="1")
    assert _paths_digest("all") == ref
    assert _paths_digest("all", CMLX_NUM_THREADS="5") == ref


@cmlx_only
def test_sort_same_without_simd():
    """The portable sorts give what the AVX-512 ones give (partition may
    arrange the elements around kth differently, as MLX's own may)."""
    assert _paths_digest("sort", CMLX_SORT_SIMD="0") == _paths_digest("sort")
    assert (_paths_digest("sort", CMLX_SORT_SIMD="0", CMLX_NUM_THREADS="4")
            == _paths_digest("sort", CMLX_NUM_THREADS="1"))


@pytest.mark.parametrize("name", ["int32", "float32", "uint8", "float16", "int64"])
def test_searchsorted(name):
    seq = np.sort(sample(name, (9,), lo=0, hi=20, seed=3))
    vals = sample(name, (2, 5), lo=-2, hi=22, seed=4)
    s, v = to_mx(seq, name), to_mx(vals, name)
    for side in ["left", "right"]:
        r = mx.searchsorted(s, v, side)
        assert dname(r) == "uint32" and r.shape == (2, 5)
        assert npv(r).tolist() == np.searchsorted(seq, vals, side=side).tolist(), side
    assert npv(mx.searchsorted(s, v)).tolist() == np.searchsorted(seq, vals).tolist()
    assert npv(mx.searchsorted(s, v, side="right")).tolist() == \
        np.searchsorted(seq, vals, side="right").tolist()
    assert mx.searchsorted(s, to_mx(vals[0, 0], name)).shape == ()
    r = mx.searchsorted(mx.array([1, 2, 3]), mx.array([2.5]))  # promoted to float32
    assert r.tolist() == [2]


# ------------------------------------------------------------ scans


def _np_scan(op, x, axis, reverse, inclusive):
    if axis is None:
        x = x.reshape(-1)
        axis = 0
    if reverse:
        x = np.flip(x, axis)
    r = {"sum": np.cumsum, "prod": np.cumprod, "max": np.maximum.accumulate,
         "min": np.minimum.accumulate,
         "logaddexp": np.logaddexp.accumulate}[op](x, axis=axis)
    if not inclusive:
        ident = {"sum": 0, "prod": 1, "max": -np.inf, "min": np.inf, "logaddexp": -np.inf}[op]
        pad = [(0, 0)] * r.ndim
        pad[axis] = (1, 0)
        r = np.pad(r.astype(np.float64) if op in ("max", "min") else r, pad,
                   constant_values=ident)
        r = np.take(r, np.arange(x.shape[axis]), axis=axis)
    if reverse:
        r = np.flip(r, axis)
    return r


def _scan_dtype(op, name):
    if op == "sum" and name == "bool_":
        return "int32"
    if op == "logaddexp" and name not in ("float16", "bfloat16", "float32", "float64", "complex64"):
        return "float32"
    return name


SCANS = [("cumsum", "sum"), ("cumprod", "prod"), ("cummax", "max"), ("cummin", "min"),
         ("logcumsumexp", "logaddexp")]


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("fn,op", SCANS)
def test_scans(name, fn, op):
    if name == "complex64" and op in ("max", "min", "logaddexp"):
        pytest.skip("complex order/log: covered against MLX")
    lo, hi = (-2, 2) if op == "prod" else (-5, 5)
    x = sample(name, (3, 4), lo=lo, hi=hi, seed=5)
    if name in ("uint8", "uint16", "uint32", "uint64") and op == "prod":
        x = sample(name, (3, 4), lo=0, hi=2, seed=5)
    a = to_mx(x, name)
    rd = _scan_dtype(op, name)
    xr = x.astype(np.complex128 if name == "complex64" else
                  (np.int64 if name in INTS or name == "bool_" and op != "logaddexp" else np.float64))
    if name == "bool_" and op in ("prod", "max", "min"):
        xr = x
    tol = {"float16": 2e-2, "bfloat16": 6e-2}.get(rd)
    for ax in [None, 0, 1, -1]:
        for reverse in (False, True):
            for inclusive in (True, False):
                r = getattr(mx, fn)(a, ax, reverse=reverse, inclusive=inclusive)
                label = f"{fn} {name} axis={ax} rev={reverse} inc={inclusive}"
                assert dname(r) == rd, label
                e = _np_scan(op, xr, ax, reverse, inclusive)
                got = npv(r)
                if name == "bool_" and op in ("prod", "max", "min"):
                    # identities: and -> True, or (max) -> False, min -> True
                    e = np.where(np.isinf(e.astype(np.float64)), e.astype(np.float64) > 0, e).astype(bool)
                if rd in INTS and op in ("max", "min") and not inclusive:
                    # the identity of an integer max/min is the type's extreme
                    info = np.iinfo(got.dtype)
                    inf = np.isinf(e)
                    e2 = np.where(inf, 0, e).astype(got.dtype)
                    e2[inf & (e < 0)] = info.min
                    e2[inf & (e > 0)] = info.max
                    e = e2
                assert_values(got, e, rd, rtol=tol, atol=tol, msg=label)
    # the method form
    r = getattr(a, fn)(1, reverse=True)
    assert_values(npv(r), npv(getattr(mx, fn)(a, 1, reverse=True)), rd)


def test_scan_dtype_argument():
    a = mx.array([True, True, False, True])
    r = mx.cumsum(a)
    assert dname(r) == "int32" and r.tolist() == [1, 2, 2, 3]
    r = mx.cumsum(a, dtype=mx.float32)
    assert dname(r) == "float32" and r.tolist() == [1.0, 2.0, 2.0, 3.0]
    r = mx.cumprod(mx.array([1, 2, 3, 4], mx.int8), dtype=mx.int32)
    assert dname(r) == "int32" and r.tolist() == [1, 2, 6, 24]
    r = mx.cumsum(mx.array([100, 100], mx.int8))
    assert dname(r) == "int8"  # wraps, as MLX
    r = mx.cumsum(mx.array([[1.5, 2.5]]), 1, dtype=mx.int32)
    assert r.tolist() == [[1, 3]]
    with pytest.raises(TypeError):
        mx.array([1, 2]).cumsum(dtype=mx.int32)  # the method has no dtype


def test_scan_0d_and_empty():
    s = mx.array(2.0)
    assert mx.cumsum(s).shape == (1,)  # axis None flattens
    with pytest.raises(IndexError):
        mx.cumsum(s, 0)
    e = mx.zeros((0, 3))
    assert mx.cumsum(e, 1).shape == (0, 3)
    assert mx.cumprod(e).shape == (0,)
    assert mx.logcumsumexp(e, 0).shape == (0, 3)
    assert mx.sort(e).shape == (0, 3)
    assert mx.argsort(e, 0).shape == (0, 3)
    assert mx.topk(mx.zeros((3, 0)), 0).shape == (3, 0)
    with pytest.raises(IndexError):
        mx.sort(mx.array(1.0))
    assert mx.sort(mx.array(1.0), None).tolist() == [1.0]


# ------------------------------------------------------------ matmul


MATMUL_SHAPES = [
    ((2, 3), (3, 4)), ((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((5, 2, 3), (3, 4)),
    ((2, 3), (5, 3, 4)), ((2, 1, 2, 3), (5, 3, 4)), ((0, 3), (3, 2)), ((2, 0), (0, 2)),
    ((1, 1), (1, 1)), ((7, 33), (33, 9)),
]


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16", "float64", "complex64"])
@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul(name, sa, sb):
    x = sample(name, sa, lo=-1, hi=1, seed=6)
    y = sample(name, sb, lo=-1, hi=1, seed=7)
    a, b = to_mx(x, name), to_mx(y, name)
    e = np.matmul(x.astype(np.complex128 if name == "complex64" else np.float64),
                  y.astype(np.complex128 if name == "complex64" else np.float64))
    tol = {"float16": 2e-2, "bfloat16": 8e-2, "float32": 1e-4, "complex64": 1e-4}.get(name)
    for r in (mx.matmul(a, b), a @ b, mx.matmul(a, b, stream=mx.cpu)):
        assert dname(r) == name
        assert_values(npv(r), e, name, rtol=tol, atol=tol, msg=f"{sa} @ {sb}")


@pytest.mark.parametrize("layout", LAYOUTS)
def test_matmul_layouts(layout):
    x0 = make_layout(layout, lambda shape: sample("float32", shape, lo=-1, hi=1, seed=8))
    a, x = layout_input(layout, x0, "float32")
    if x.ndim == 0:
        with pytest.raises(ValueError, match="Got 0 dimension input"):
            mx.matmul(a, a)
        return
    r = mx.matmul(a, mx.swapaxes(a, -1, -2)) if x.ndim >= 2 else mx.matmul(a, a)
    e = x @ np.swapaxes(x, -1, -2) if x.ndim >= 2 else x @ x
    assert_values(npv(r), e, "float32", rtol=1e-4, atol=1e-4)


def test_addmm():
    rng = np.random.default_rng(9)
    x = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    y = rng.uniform(-1, 1, (3, 5)).astype(np.float32)
    for cs in [(2, 5), (5,), (1, 5), (2, 1), ()]:
        c = rng.uniform(-1, 1, cs).astype(np.float32)
        for alpha, beta in [(1.0, 1.0), (0.5, 2.0), (2, 0), (-1.5, 0.25)]:
            r = mx.addmm(mx.array(c), mx.array(x), mx.array(y), alpha, beta)
            assert_values(npv(r), alpha * (x @ y) + beta * c, "float32", rtol=1e-5, atol=1e-5)
    r = mx.addmm(mx.ones((2, 2)), mx.ones((2, 3)), mx.ones((3, 2)), beta=0.5)
    assert npv(r).tolist() == [[3.5, 3.5], [3.5, 3.5]]
    r = mx.addmm(mx.array([1, 2], mx.int32), mx.ones((2, 3)), mx.ones((3, 2)))
    assert dname(r) == "float32" and npv(r).tolist() == [[4.0, 5.0], [4.0, 5.0]]
    with pytest.raises(ValueError):
        mx.addmm(mx.ones((3, 5)), mx.ones((2, 3)), mx.ones((3, 5)))


def test_matmul_operator_forms():
    a = mx.array([[1.0, 2.0], [3.0, 4.0]])
    assert npv(a @ a).tolist() == [[7.0, 10.0], [15.0, 22.0]]
    b = a
    b @= mx.array([[1.0, 0.0], [0.0, 2.0]])
    assert b is a and npv(a).tolist() == [[1.0, 4.0], [3.0, 8.0]]
    c = mx.ones((2, 2), dtype=mx.float16)
    c @= mx.ones((2, 2))
    assert dname(c) == "float32"  # rebinding may change the dtype
    for other in [2, 2.0, [1.0, 2.0], np.ones((2, 2), np.float32), None, "x"]:
        with pytest.raises(TypeError):
            a @ other
        with pytest.raises(TypeError):
            d = a
            d @= other
    with pytest.raises(TypeError):
        2.0 @ a
    with pytest.raises(TypeError, match=r"__matmul__\(\): incompatible function arguments"):
        a @ 2.0
    with pytest.raises(ValueError, match="Only inexact types are supported"):
        mx.array([[1, 2]]) @ mx.array([[1], [2]])
    with pytest.raises(ValueError, match="must match second to last dimension"):
        a @ mx.ones((3, 2))


# ------------------------------------------------------------ errors


ERROR_CASES = [
    ("sort axis", lambda m: m.sort(m.zeros((2, 3)), 2), IndexError),
    ("sort list axis", lambda m: m.sort(m.zeros((2, 3)), [0]), TypeError),
    ("sort scalar", lambda m: m.sort(1.0), TypeError),
    ("sort 0-d", lambda m: m.sort(m.array(1.0)), IndexError),
    ("argsort axis", lambda m: m.argsort(m.zeros((2, 3)), -3), IndexError),
    ("partition kth", lambda m: m.partition(m.zeros((2, 3)), 5), ValueError),
    ("partition kth neg", lambda m: m.partition(m.zeros((2, 3)), -4), ValueError),
    ("argpartition kth", lambda m: m.argpartition(m.zeros(3), 3), ValueError),
    ("partition float kth", lambda m: m.partition(m.zeros(3), 1.0), TypeError),
    ("topk k", lambda m: m.topk(m.zeros((2, 3)), 4), ValueError),
    ("topk negative", lambda m: m.topk(m.zeros((2, 3)), -1), ValueError),
    ("topk axis", lambda m: m.topk(m.zeros((2, 3)), 1, 2), IndexError),
    ("searchsorted scalar", lambda m: m.searchsorted(m.zeros(3), 2.0), TypeError),
    ("searchsorted list", lambda m: m.searchsorted([1, 2], m.zeros(3)), TypeError),
    ("searchsorted 2d", lambda m: m.searchsorted(m.zeros((2, 2)), m.zeros(3)), ValueError),
    ("searchsorted side", lambda m: m.searchsorted(m.zeros(3), m.zeros(3), "middle"), ValueError),
    ("searchsorted side int", lambda m: m.searchsorted(m.zeros(3), m.zeros(3), side=1), TypeError),
    ("searchsorted side None", lambda m: m.searchsorted(m.zeros(3), m.zeros(3), side=None), TypeError),
    ("cumsum axis", lambda m: m.cumsum(m.zeros((2, 3)), 2), IndexError),
    ("cumsum list axis", lambda m: m.cumsum(m.zeros((2, 3)), [0]), TypeError),
    ("cumsum scalar", lambda m: m.cumsum(1.0), TypeError),
    ("cumsum reverse pos", lambda m: m.cumsum(m.zeros(3), 0, True), TypeError),
    ("cumprod dtype str", lambda m: m.cumprod(m.zeros(3), dtype="float32"), TypeError),
    ("cummax axis", lambda m: m.cummax(m.zeros((2, 3)), -3), IndexError),
    ("logcumsumexp axis", lambda m: m.logcumsumexp(m.zeros(3), 1), IndexError),
    ("matmul scalar", lambda m: m.matmul(m.ones((2, 2)), 2.0), TypeError),
    ("matmul list", lambda m: m.matmul(m.ones((2, 2)), [[1.0]]), TypeError),
    ("matmul numpy", lambda m: m.matmul(m.ones((2, 2)), np.ones((2, 2))), TypeError),
    ("matmul ints", lambda m: m.matmul(m.ones((2, 2), m.int32), m.ones((2, 2), m.int32)), ValueError),
    ("matmul 0-d", lambda m: m.matmul(m.array(1.0), m.ones(2)), ValueError),
    ("matmul mismatch", lambda m: m.matmul(m.ones((2, 3)), m.ones((4, 5))), ValueError),
    ("matmul batch", lambda m: m.matmul(m.ones((2, 2, 3)), m.ones((3, 3, 4))), ValueError),
    ("addmm scalar c", lambda m: m.addmm(1.0, m.ones((2, 2)), m.ones((2, 2))), TypeError),
    ("addmm alpha str", lambda m: m.addmm(m.ones(2), m.ones((2, 2)), m.ones((2, 2)), "a"), TypeError),
    ("addmm ints", lambda m: m.addmm(m.ones(2, m.int32), m.ones((2, 2), m.int32), m.ones((2, 2), m.int32)), ValueError),
    ("addmm c shape", lambda m: m.addmm(m.ones((3, 5)), m.ones((2, 3)), m.ones((3, 5))), ValueError),
]


@pytest.mark.parametrize("i", range(len(ERROR_CASES)))
def test_errors(i):
    label, fn, exc = ERROR_CASES[i]
    sub, ref = both(lambda m: fn(m))
    assert isinstance(sub, Raised), f"{label}: no error, got {sub}"
    assert sub.type is exc, f"{label}: {sub!r}, expected {exc.__name__}"
    if ref is not None:
        assert_same_as_oracle(sub, ref, msg=label)


def test_error_messages():
    with pytest.raises(IndexError, match=r"\[sort\] Axis 2 is out of bounds for array with 2 dimensions"):
        mx.sort(mx.zeros((2, 3)), 2)
    with pytest.raises(ValueError, match=r"\[topk\] Received invalid k=4 along axis -1"):
        mx.topk(mx.zeros((2, 3)), 4)
    with pytest.raises(ValueError, match=r"\[searchsorted\] Invalid side 'middle'"):
        mx.searchsorted(mx.zeros(3), mx.zeros(3), "middle")
    with pytest.raises(IndexError, match=r"\[cumsum\] Axis 2 is out of bounds"):
        mx.cumsum(mx.zeros((2, 3)), 2)
    with pytest.raises(ValueError, match=r"\[matmul\] Last dimension of first input with shape \(2,3\)"):
        mx.matmul(mx.ones((2, 3)), mx.ones((4, 5)))


# ------------------------------------------------------------ dtypes against MLX


def _oracle_cases():
    xs = {n: sample(n, (3, 4), lo=-3, hi=3, seed=10) for n in DTYPES}
    cases = []
    for n in DTYPES:
        for fn in ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"]:
            cases.append((f"{fn} {n}", lambda m, a, fn=fn: getattr(m, fn)(a, 1), [A(xs[n], n)]))
            cases.append((f"{fn} {n} rev excl",
                          lambda m, a, fn=fn: getattr(m, fn)(a, 0, reverse=True, inclusive=False),
                          [A(xs[n], n)]))
        cases.append((f"sort {n}", lambda m, a: m.sort(a), [A(xs[n], n)]))
        cases.append((f"argsort {n}", lambda m, a: m.argsort(a, None), [A(xs[n], n)]))
        cases.append((f"sorted topk {n}", lambda m, a: m.sort(m.topk(a, 2)), [A(xs[n], n)]))
    for n in ["int8", "uint16", "bool_", "float16", "bfloat16", "float64"]:
        cases.append((f"matmul f32 {n}", lambda m, a: m.matmul(m.ones((2, 3)), a), [A(xs[n], n)]))
        cases.append((f"addmm {n} c", lambda m, a: m.addmm(a, m.ones((3, 2)), m.ones((2, 4))),
                      [A(xs[n], n)]))
    cases += [
        ("cumsum dtype", lambda m, a: m.cumsum(a, dtype=m.float16), [A(xs["int8"], "int8")]),
        ("cumsum nan", lambda m: m.cummax(m.array([1.0, float("nan"), 3.0])), []),
        ("searchsorted promote", lambda m: m.searchsorted(m.array([1, 2, 3]), m.array([1.5, 2.0])), []),
        ("searchsorted nan", lambda m: m.searchsorted(m.array([1.0, float("nan")]), m.array([float("nan")])), []),
        ("matmul vec vec", lambda m: m.matmul(m.ones(3), m.ones(3)), []),
        ("matmul bcast", lambda m: m.matmul(m.ones((2, 1, 3, 4)), m.ones((5, 4, 5))), []),
        ("matmul empty K", lambda m: m.matmul(m.ones((2, 0)), m.ones((0, 3))), []),
        ("addmm beta 0", lambda m: m.addmm(m.full((2, 2), float("nan")), m.ones((2, 3)), m.ones((3, 2)), 1.0, 0.0), []),
    ]
    return cases


@needs_oracle
@pytest.mark.parametrize("i", range(len(_oracle_cases())))
def test_same_as_mlx(i):
    label, fn, args = _oracle_cases()[i]
    sub, ref = both(fn, *args)
    half = "16" in label
    assert_same_as_oracle(sub, ref, msg=label, rtol=6e-2 if half else None,
                          atol=6e-2 if half else None)


@cmlx_only  # MLX's float32 sgemm can miss by several ulps where terms cancel
@pytest.mark.parametrize("shape", [(1, 1, 1), (8, 8, 8), (5, 7, 3), (16, 32, 32)])
@pytest.mark.parametrize("layout", ["plain", "transposed"])
def test_small_float32_matmul_is_correctly_rounded(shape, layout):
    m, k, n = shape
    rng = np.random.default_rng(m * 100 + n)
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((k, n)).astype(np.float32)
    a, b = mx.array(x), mx.array(w)
    if layout == "transposed":  # the same values through transposed views
        a, b = mx.array(x.T).T, mx.array(w.T).T
    want = (x.astype(np.float64) @ w.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(np.array(a @ b), want)
    c = rng.standard_normal((m, n)).astype(np.float32)
    got = np.array(mx.addmm(mx.array(c), a, b, alpha=2.0, beta=0.5))
    ref = (2.0 * (x.astype(np.float64) @ w) + 0.5 * c.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(got, ref)
