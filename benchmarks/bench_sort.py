"""Sorting float32 (and some other dtypes) along the last axis, into a new
array: the input is left as it is, so every sample sorts the same data.

The CPU sort takes a different path per kind of row, so the distributions
are timed one by one: uniform [0, 1) and normal (the quicksort), already
sorted and reverse sorted (found in one pass), 16 distinct values
(counted, not sorted).  argsort is stable in MLX; NumPy's default argsort
is not, so it is timed both ways (the "stable" rows pass kind="stable" to
NumPy; MLX and cmlx are the same call).  Batched rows, along the last axis
and along axis 0, and partition close the family.
"""

import numpy as np

from harness import workload

N = 10 ** 6
_DATA = {}


def _rows(kind, n):
    rg = np.random.default_rng(2)
    if kind == "uniform":
        return rg.random(n, dtype=np.float32)
    if kind == "normal":
        return rg.standard_normal(n).astype(np.float32)
    if kind == "sorted":
        return np.sort(rg.random(n, dtype=np.float32))
    if kind == "reverse":
        return np.sort(rg.random(n, dtype=np.float32))[::-1].copy()
    if kind == "few16":
        return rg.integers(0, 16, n).astype(np.float32)
    raise ValueError(kind)


def data(kind, n=N, dtype=np.float32, shape=None):
    key = (kind, n, np.dtype(dtype).name, shape)
    if key not in _DATA:
        x = _rows(kind, n)
        if dtype == np.int32:
            x = (x * 2e9 - 1e9).astype(np.int32)
        elif dtype != np.float32:
            x = x.astype(dtype)
        _DATA[key] = x.reshape(shape) if shape else x
    return _DATA[key]


def _array(fw, x, dtype=None):
    """x in the framework, cast to `dtype` ("bfloat16": not for NumPy)."""
    if dtype == "bfloat16":
        if fw.name == "numpy":
            return None
        a = fw.mod.array(x).astype(fw.mod.bfloat16)
        fw.run(a)
        return a
    return fw.from_numpy(x)


def _sorter(fw, op, axis=-1, stable=False):
    m = fw.mod
    if fw.name == "torch":
        if op == "sort":
            return lambda a: m.sort(a, dim=axis, stable=stable).values
        return lambda a: m.argsort(a, dim=axis, stable=stable)
    if fw.name == "numpy" and op == "argsort":
        kind = "stable" if stable else None
        return lambda a: m.argsort(a, axis=axis, kind=kind)
    f = getattr(m, op)  # numpy, mlx and cmlx: f(a, axis)
    return lambda a: f(a, axis=axis)


def _make(op, x_of, dtype=None, axis=-1, stable=False):
    def build(fw):
        a = _array(fw, x_of(), dtype)
        if a is None:
            return None
        f = _sorter(fw, op, axis, stable)
        return lambda: fw.run(f(a))
    return build


def _register(name, op, x_of, **kw):
    workload(name, family="sort")(_make(op, x_of, **kw))


for _kind in ["uniform", "normal", "sorted", "reverse", "few16"]:
    _x = (lambda k: lambda: data(k))(_kind)
    _register(f"sort f32 1e6 {_kind}", "sort", _x)
    _register(f"argsort f32 1e6 {_kind}", "argsort", _x)
    _register(f"argsort f32 1e6 {_kind} (np stable)", "argsort", _x, stable=True)

for _n, _label in [(10 ** 5, "1e5"), (10 ** 7, "1e7")]:
    _x = (lambda n: lambda: data("uniform", n))(_n)
    _register(f"sort f32 {_label} uniform", "sort", _x)
    _register(f"argsort f32 {_label} uniform (np stable)", "argsort", _x, stable=True)

_register("sort i32 1e6 uniform", "sort", lambda: data("uniform", dtype=np.int32))
_register("argsort i32 1e6 uniform (np stable)", "argsort",
          lambda: data("uniform", dtype=np.int32), stable=True)
_register("sort f16 1e6 normal", "sort", lambda: data("normal", dtype=np.float16))
_register("argsort f16 1e6 normal (np stable)", "argsort",
          lambda: data("normal", dtype=np.float16), stable=True)
_register("sort bf16 1e6 normal", "sort", lambda: data("normal"), dtype="bfloat16")

_square = lambda: data("uniform", shape=(1000, 1000))  # noqa: E731
_register("sort f32 (1000,1000) axis -1", "sort", _square)
_register("sort f32 (1000,1000) axis 0", "sort", _square, axis=0)
_register("argsort f32 (1000,1000) axis -1 (np stable)", "argsort", _square, stable=True)
_register("argsort f32 (1000,1000) axis 0 (np stable)", "argsort", _square, axis=0, stable=True)


def _partition(op, x_of, kth, axis=-1):
    def build(fw):
        if fw.name == "torch":
            return None
        a = fw.from_numpy(x_of())
        f = getattr(fw.mod, op)
        return lambda: fw.run(f(a, kth, axis=axis))
    return build


workload("partition f32 1e6 uniform", family="sort")(
    _partition("partition", lambda: data("uniform"), N // 2))
workload("argpartition f32 1e6 uniform", family="sort")(
    _partition("argpartition", lambda: data("uniform"), N // 2))
workload("partition f32 (1000,1000) axis -1", family="sort")(
    _partition("partition", _square, 500))
