"""Contractions: LLM-decode matrix-vector products (x (rows, 4096) against
a 4096 x 4096 weight, transposed and plain, float32 / float16 / bfloat16
weights), a prefill's projection (512 rows) in float32 / float16 /
bfloat16, float32 square and batched matmuls, and einsum.  NumPy has no
bfloat16 (that row has no NumPy time) and multiplies float16 slowly."""

import numpy as np

from harness import workload

D = 4096
_DATA = {}


def data(key, make):
    if key not in _DATA:
        _DATA[key] = make(np.random.default_rng(len(_DATA) + 11))
    return _DATA[key]


def _cast(fw, x, dtype):
    if dtype == "float32":
        return fw.from_numpy(x)
    if fw.name == "numpy":
        return None if dtype == "bfloat16" else x.astype(dtype)
    if fw.name == "torch":
        return fw.from_numpy(x).to(getattr(fw.mod, dtype))
    a = fw.from_numpy(x).astype(getattr(fw.mod, dtype))
    fw.mod.eval(a)
    return a


def _runner(fw, f):
    if fw.lazy:
        return lambda: fw.run(f())
    return f


def gemv(rows, transposed, dtype):
    def make(fw):
        w = data("w", lambda rg: rg.standard_normal((D, D)).astype(np.float32))
        x = data(("x", rows), lambda rg: rg.standard_normal((rows, D)).astype(np.float32))
        W, X = _cast(fw, w, dtype), _cast(fw, x, dtype)
        if W is None:
            return None
        Wt = fw.transpose(W)[0] if transposed else W
        return _runner(fw, lambda: X @ Wt)

    return make


for _rows in (1, 4):
    for _t in (True, False):
        for _dt in ("float32", "float16", "bfloat16"):
            if _dt != "float32" and (_rows != 1 or not _t):
                continue
            workload(f"gemv {_dt} x({_rows},{D}) @ w{'.T' if _t else ''}",
                     family="contract")(gemv(_rows, _t, _dt))


def prefill(dtype):
    """A prefill's projection, x (512, 2048) @ w.T with w (5632, 2048): the
    half rows run on AMX tiles where the CPU has them (gemm_amx.c)."""
    def make(fw):
        if fw.name == "numpy" and dtype != "float32":
            return None  # NumPy's float16 product takes seconds
        w = data("pw", lambda rg: (rg.standard_normal((5632, 2048)) * 0.05).astype(np.float32))
        x = data("px", lambda rg: rg.standard_normal((512, 2048)).astype(np.float32))
        W, X = _cast(fw, w, dtype), _cast(fw, x, dtype)
        if W is None:
            return None
        Wt = fw.transpose(W)[0]
        return _runner(fw, lambda: X @ Wt)

    return make


for _dt in ("float32", "float16", "bfloat16"):
    workload(f"prefill matmul {_dt} x(512,2048) @ w(5632,2048).T", family="contract")(prefill(_dt))


def square(n):
    def make(fw):
        a = data(("a", n), lambda rg: rg.standard_normal((n, n)).astype(np.float32))
        b = data(("b", n), lambda rg: rg.standard_normal((n, n)).astype(np.float32))
        A, B = fw.from_numpy(a), fw.from_numpy(b)
        return _runner(fw, lambda: A @ B)

    return make


for _n in (512, 1024, 2048):
    workload(f"matmul f32 {_n}x{_n}", family="contract")(square(_n))


@workload("matmul f32 batched (64,128,128)", family="contract")
def batched(fw):
    a = data("ba", lambda rg: rg.standard_normal((64, 128, 128)).astype(np.float32))
    b = data("bb", lambda rg: rg.standard_normal((64, 128, 128)).astype(np.float32))
    A, B = fw.from_numpy(a), fw.from_numpy(b)
    return _runner(fw, lambda: A @ B)


def einsum_case(subs, shapes):
    def make(fw):
        ops = [fw.from_numpy(data(("e", subs, i), lambda rg, s=s: rg.standard_normal(s).astype(
            np.float32))) for i, s in enumerate(shapes)]
        if fw.name == "numpy":
            return lambda: np.einsum(subs, *ops, optimize=True)
        return _runner(fw, lambda: fw.mod.einsum(subs, *ops))

    return make


workload("einsum attention bhqd,bhkd->bhqk", family="contract")(
    einsum_case("bhqd,bhkd->bhqk", [(8, 16, 128, 64), (8, 16, 128, 64)]))
workload("einsum chain ij,jk,kl->il (256)", family="contract")(
    einsum_case("ij,jk,kl->il", [(256, 512), (512, 64), (64, 256)]))
