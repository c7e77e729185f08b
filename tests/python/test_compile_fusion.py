"""mx.compile's graph simplification and fused elementwise kernels.

Every check compares a compiled function with the same function run op by
op: the fused kernels must give the same bits (the same expressions, the
same row functions for libm-like ops, float16/bfloat16 rounded after each
op).  CMLX_JIT_LOG (one line per kernel loaded) shows that fusion happened
and whether a kernel came from the disk cache.
"""

import io
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import mlx_ref, mx, needs_oracle


@pytest.fixture(autouse=True)
def jit_env(tmp_path, monkeypatch):
    monkeypatch.setenv("CMLX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CMLX_JIT_LOG", str(tmp_path / "jit.log"))
    monkeypatch.delenv("CMLX_CC", raising=False)
    monkeypatch.delenv("CMLX_COMPILE_FUSE", raising=False)
    return tmp_path


def log_lines(tmp_path):
    p = tmp_path / "jit.log"
    return p.read_text().split()[0::2] if p.exists() else []


def bits(a):
    """The bytes of a (bfloat16 widened to float32 exactly, for NumPy)."""
    if a.dtype == mx.bfloat16:
        a = a.astype(mx.float32)
    n = np.array(a)
    return n.dtype, n.shape, n.tobytes()


def check(f, *args):
    """Compiled and uncompiled results agree bit for bit; returns them."""
    want = f(*args)
    got = mx.compile(f)(*args)
    if not isinstance(want, (tuple, list)):
        want, got = [want], [got]
    assert len(want) == len(got)
    for w, g in zip(want, got):
        assert w.dtype == g.dtype and w.shape == g.shape
        assert bits(w) == bits(g), (w, g)
    return got


def rand(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == mx.bool_:
        return mx.array(rng.random(shape) < 0.5)
    if dtype in (mx.float16, mx.bfloat16, mx.float32, mx.float64):
        v = mx.array((rng.standard_normal(shape) * 3).astype(np.float32))
        return v.astype(dtype)
    info = np.iinfo(np.dtype(str(dtype).split(".")[-1]))
    lo, hi = max(info.min, -1000), min(info.max, 1000)
    return mx.array(rng.integers(lo, hi, size=shape)).astype(dtype)


FLOATS = [mx.float32, mx.float16, mx.bfloat16, mx.float64]
INTS = [mx.int32, mx.int8, mx.uint8, mx.int64, mx.uint32, mx.int16, mx.uint16, mx.uint64]


def gelu(x):
    return 0.5 * x * (1 + mx.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def gelu_exact(x):
    return x * (1 + mx.erf(x / math.sqrt(2))) / 2


@pytest.mark.parametrize("dtype", FLOATS)
def test_float_chains(dtype, jit_env):
    x, y = rand((33, 17), dtype, 1), rand((33, 17), dtype, 2)
    check(gelu, x)
    check(gelu_exact, x)
    check(lambda a, b: mx.maximum(a * b - a, b / (a + 0.5)) + mx.minimum(a, -b), x, y)
    check(lambda a: mx.sqrt(mx.abs(a)) + mx.rsqrt(a * a + 1) - mx.reciprocal(a + 10), x)
    check(lambda a: mx.floor(a) + mx.ceil(a * 2) + mx.round(a * 3) + mx.sign(a), x)
    check(lambda a, b: mx.where(a > b, a - b, mx.exp(b) * 2), x, y)
    check(lambda a: mx.sigmoid(a) * mx.log(mx.abs(a) + 1) + mx.sin(a) * mx.cos(a), x)
    check(lambda a, b: mx.power(mx.abs(a), b) + mx.arctan2(a, b) + mx.logaddexp(a, b), x, y)
    check(lambda a, b: (a // (b + 0.1)) + mx.remainder(a, b + 10), x, y)
    assert "built" in log_lines(jit_env)


def test_nan_and_inf_rules():
    x = mx.array([float("nan"), 1.0, -float("inf"), float("inf"), 0.0, -0.0, 3.0])
    y = mx.array([2.0, float("nan"), 1.0, float("inf"), -0.0, 0.0, float("nan")])
    check(lambda a, b: mx.maximum(a, b) * 1 + mx.minimum(b, a), x, y)
    check(lambda a, b: (a / b + 1, a == b, a < b, mx.isnan(a * b), mx.isinf(a + b)), x, y)
    check(lambda a: (mx.isfinite(a * 2), mx.logical_not(a + 0), mx.sign(a - 1)), x)
    check(lambda a: (a * 3).astype(mx.int32) + 1, x)  # NaN/inf -> INT_MIN, as astype
    check(lambda a: (a * 1.5).astype(mx.uint8) * 3, x)


@pytest.mark.parametrize("dtype", INTS)
def test_integer_chains(dtype):
    x, y = rand((40,), dtype, 3), rand((40,), dtype, 4)
    check(lambda a, b: (a + b) * a - b * 3, x, y)
    check(lambda a, b: mx.maximum(a, b) - mx.minimum(a, b) + mx.abs(a) * mx.square(b), x, y)
    check(lambda a, b: (a // (b + 1), mx.remainder(a, b - 1) + a), x, y)
    check(lambda a, b: (a & b) | (a ^ 7) + (-a if dtype != mx.bool_ else a), x, y)
    check(lambda a, b: mx.where(a >= b, a, b) + (a != b).astype(dtype), x, y)
    check(lambda a: (a.astype(mx.float32) * 0.5 + 1).astype(dtype) + a, x)
    check(lambda a: (a * 2).astype(mx.float16) + 1, x)


def test_wrapping_and_division_by_zero():
    x = mx.array([127, -128, 5, -7, 0], dtype=mx.int8)
    y = mx.array([1, -1, 0, 2, 0], dtype=mx.int8)
    check(lambda a, b: (a + b) * b - a * a, x, y)
    check(lambda a, b: (a // b + 1, mx.remainder(a, b) * 1), x, y)
    u = mx.array([0, 1, 255, 128], dtype=mx.uint8)
    check(lambda a: (a - 3) * a, u)


def test_bool_chains():
    a, b = rand((50,), mx.bool_, 5), rand((50,), mx.bool_, 6)
    check(lambda p, q: mx.logical_and(p, q) | mx.logical_or(p, ~q) ^ (p == q), a, b)
    check(lambda p, q: mx.logical_not(p) + q * p - q, a, b)
    check(lambda p, q: mx.where(p, q, ~q).astype(mx.float32) * 2 + 1, a, b)


def test_every_float16_pattern_and_the_ties_to_it():
    """The generated kernels' half conversions (F16C where the compiler
    has it, bit operations elsewhere) equal the op-by-op kernels': every
    float16 bit pattern (NaNs, infinities, subnormals, signed zeros) loaded
    and rounded back, and float32 values on and beside each rounding tie,
    through overflow and into the subnormals."""
    h = mx.array(np.arange(65536, dtype=np.uint16).view(np.float16))
    check(lambda a: a * 1.0 + a, h)
    check(lambda a: (a.astype(mx.float32) * 0.5).astype(mx.float16) * 3, h)
    f = np.arange(65536, dtype=np.uint32).astype(np.float16).astype(np.float32)  # exact halves
    f = f[np.isfinite(f)]
    ulp = np.abs(np.spacing(f.astype(np.float16)).astype(np.float32))
    ties = np.concatenate([f + ulp / 2, f - ulp / 2, np.nextafter(f + ulp / 2, np.inf, dtype=np.float32),
                           np.nextafter(f + ulp / 2, -np.inf, dtype=np.float32),
                           np.float32([65504, 65519.99, 65520, 1e30, 2.0 ** -25, 2.0 ** -26, 3 * 2.0 ** -26])])
    x = mx.array(ties.astype(np.float32))
    check(lambda a: (a * 1.0).astype(mx.float16) + 0, x)
    check(lambda a: (a * 1.0).astype(mx.bfloat16) * 1, x)


def test_casts_between_float_types():
    x = rand((64,), mx.float32, 7) * 1000
    check(lambda a: (a.astype(mx.float16) * 3).astype(mx.bfloat16) + 1, x)
    check(lambda a: (a.astype(mx.float64) / 3).astype(mx.float32) - a, x)
    check(lambda a: (a * 70000).astype(mx.float16) + a.astype(mx.float16), x)  # overflow to inf


@pytest.mark.parametrize("shape", [(), (0,), (0, 3), (1,), (5,), (3, 1, 4)])
def test_shapes(shape):
    x, y = rand(shape, mx.float32, 8), rand(shape, mx.float32, 9)
    check(lambda a, b: mx.exp(a * b + 1) - a, x, y)
    check(lambda a, b: (a + b) * 2 - b, x, y)


def test_broadcast_inputs():
    x = rand((3, 1), mx.float32, 10)
    y = rand((1, 4), mx.float32, 11)
    z = rand((4,), mx.float16, 12)
    check(lambda a, b: mx.tanh(a + b) * b - a, x, y)
    check(lambda a, b, c: (a * b + c) / 2, x, y, z)
    check(lambda a: a * 2 + 3, mx.array(1.5))
    # only row-constant inputs, (n, 1) against (n, m); a last axis of 1
    check(lambda a: mx.broadcast_to(a, (3, 4)) * 2 + mx.exp(mx.broadcast_to(a, (3, 4))), x)
    check(lambda a, b: mx.exp(a + b) * a, rand((5, 1), mx.float32, 26), rand((1, 1), mx.float32, 27))
    # a row-constant input whose layout is not: a transposed (1, n) row
    check(lambda a, b: mx.sin(a * b) + b, rand((4, 6), mx.float32, 28), rand((1, 4), mx.float32, 29).T)


@pytest.mark.parametrize("layout", ["T", "slice", "step", "bcast_view", "mixed"])
def test_layouts(layout):
    base = rand((12, 10), mx.float32, 13)
    other = rand((12, 10), mx.float32, 14)
    if layout == "T":
        x, y = base.T, other.T
    elif layout == "slice":
        x, y = base[2:9, 1:7], other[3:10, 2:8]
    elif layout == "step":
        x, y = base[::2, ::3], other[1::2, ::3]
    elif layout == "bcast_view":
        x, y = mx.broadcast_to(base[:1], (12, 10)), other
    else:
        x, y = base.T, rand((10, 12), mx.float32, 25)
    check(lambda a, b: mx.exp(a) * b + a * a - 1, x, y)
    check(lambda a, b: gelu(a) + b, x, y)


def test_large_parallel_and_donation():
    x = rand((1 << 18,), mx.float32, 15)
    check(gelu, x)
    check(gelu_exact, x)
    y = rand((700, 900), mx.float16, 16)
    check(lambda a: mx.sigmoid(a) * a + 1, y)
    check(lambda a: mx.sigmoid(a) * a + 1, y.T)


@pytest.mark.parametrize("dtype", [mx.float32, mx.float16, mx.bfloat16])
def test_layer_norm_with_plain_ops(dtype):
    # reductions split the regions; broadcast row statistics, dead intermediates
    def ln(x, w, b):
        mu = x.mean(-1, keepdims=True)
        d = x - mu
        var = (d * d).mean(-1, keepdims=True)
        return d * mx.rsqrt(var + 1e-5) * w + b

    x = rand((64, 300), dtype, 30)
    check(ln, x, rand((300,), dtype, 31), rand((300,), dtype, 32))
    check(ln, x.T, rand((64,), dtype, 33), rand((64,), dtype, 34))


def test_multi_output_regions():
    x, y = rand((30,), mx.float32, 17), rand((30,), mx.float32, 18)

    def f(a, b):
        t = mx.exp(a) * b
        u = t + 1
        return t, u * 2, (u - a) > 0

    check(f, x, y)
    # an intermediate used by a non-elementwise consumer escapes the region
    check(lambda a: ((a * 2 + 1).sum(), (a * 2 + 1) * 3), x)
    check(lambda a, b: mx.matmul(mx.tanh(a * b)[None], (a + b)[:, None]) + a * 2, x, y)


def test_repeated_calls_and_retrace():
    f = mx.compile(lambda a, b: mx.exp(a) * b + a)
    for s in (4, 4, 7, 4):
        a, b = rand((s,), mx.float32, s), rand((s,), mx.float32, s + 1)
        want = mx.exp(a) * b + a
        assert bits(f(a, b)) == bits(want)


def test_simplify_merges_and_folds():
    calls = []

    def f(x):
        calls.append(1)
        c = mx.array(2.0) * mx.array(3.0)  # folded to a constant
        return (mx.exp(x) + mx.exp(x)) * c, mx.stop_gradient(x) * 1 + x

    x = rand((9,), mx.float32, 19)
    check(f, x)
    a = rand((5,), mx.float16, 20)
    check(lambda v: (v + 1) * (v + 1) + mx.exp(v + 1), a)


def test_random_ops_never_merged():
    key = mx.random.key(0)

    def f(x):
        k1, k2 = mx.random.split(key)
        return x + mx.random.uniform(shape=x.shape, key=k1), x + mx.random.uniform(shape=x.shape,
                                                                                     key=k2)

    x = mx.zeros((100,))
    a, b = mx.compile(f)(x)
    ua, ub = f(x)
    assert bits(a) == bits(ua) and bits(b) == bits(ub)
    assert not np.array_equal(np.array(a), np.array(b))


def test_transforms_of_compiled_functions():
    x = rand((16,), mx.float32, 21)
    f = mx.compile(gelu)
    g = mx.grad(lambda v: f(v).sum())(x)
    g_ref = mx.grad(lambda v: gelu(v).sum())(x)
    assert bits(g) == bits(g_ref)
    cg = mx.compile(mx.grad(lambda v: gelu(v).sum()))
    assert bits(cg(x)) == bits(g_ref)
    vm = mx.vmap(f)(x.reshape(4, 4))
    assert bits(vm) == bits(gelu(x.reshape(4, 4)))
    _, jv = mx.jvp(f, [x], [mx.ones_like(x)])
    _, jv_ref = mx.jvp(gelu, [x], [mx.ones_like(x)])
    assert bits(jv[0]) == bits(jv_ref[0])


def test_disable_fusion_env_and_modes(jit_env, monkeypatch):
    monkeypatch.setenv("CMLX_COMPILE_FUSE", "0")
    x = rand((10,), mx.float32, 22)
    check(lambda a: mx.exp(a) * 2 + a, x)
    assert log_lines(jit_env) == []


def run_child(code, env):
    full = dict(os.environ)
    full.update(env)
    r = subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


CHILD = """
import math
import numpy as np
import cmlx.core as mx
x = mx.arange(1000).astype(mx.float32) / 100 - 5
f = lambda x: x * (1 + mx.erf(x / math.sqrt(2))) / 2 + mx.sin(x) * 0.25
a = mx.compile(f)(x)
b = f(x)
print(np.array_equal(np.array(a), np.array(b)))
"""


def test_disk_cache_hit_in_fresh_process(jit_env):
    env = {"CMLX_CACHE_DIR": str(jit_env / "shared"), "CMLX_JIT_LOG": str(jit_env / "child.log")}
    assert run_child(CHILD, env).strip() == "True"
    first = (jit_env / "child.log").read_text().split()
    assert first[0::2] and set(first[0::2]) == {"built"}
    (jit_env / "child.log").unlink()
    # the second process finds every kernel on disk, even with no compiler
    env["CMLX_CC"] = str(jit_env / "no-such-compiler")
    assert run_child(CHILD, env).strip() == "True"
    second = (jit_env / "child.log").read_text().split()
    assert set(second[0::2]) == {"disk"} and second[1::2] == first[1::2]
    assert not [p for p in os.listdir(jit_env / "shared") if p.startswith("tmp-")]


def test_no_compiler_falls_back(jit_env):
    env = {"CMLX_CACHE_DIR": str(jit_env / "empty"), "CMLX_JIT_LOG": str(jit_env / "nocc.log"),
           "CMLX_CC": "/nonexistent/cc"}
    assert run_child(CHILD, env).strip() == "True"
    assert set((jit_env / "nocc.log").read_text().split()[0::2]) == {"failed"}


def test_no_compiler_in_process(jit_env, monkeypatch):
    monkeypatch.setenv("CMLX_CC", "/nonexistent/cc")
    x = rand((10,), mx.float32, 23)
    check(lambda a: mx.cosh(a) * 3 - a * a, x)
    assert set(log_lines(jit_env)) == {"failed"}


def test_no_compiler_interprets_the_fused_program(jit_env, monkeypatch):
    # the region still fuses; its program runs interpreted over the op-by-op
    # row functions, which give the unfused bits in every dtype and layout
    monkeypatch.setenv("CMLX_CC", "/nonexistent/cc")
    f = lambda a, b: mx.where(a > b, mx.exp(a) - b, a * b) * 3 + mx.abs(a)  # noqa: E731
    for dt in [mx.float32, mx.float16, mx.bfloat16, mx.float64]:
        x, y = rand((33, 17), dt, 80), rand((17,), dt, 81)
        assert any(l.startswith("Compiled") for l in labels_of(mx.compile(f)(x, y)))
        check(f, x, y)
        check(f, x.T, rand((33,), dt, 84))
        check(f, x[::2, ::-1], mx.array(0.5, dtype=dt))
        check(lambda a: mx.sum(mx.tanh(a) * 2 + 1, axis=-1), x[:, 1:])
    check(lambda a, b: (a * b - a, (a + 7) // (b | 1)), rand((9, 5), mx.int32, 82),
          rand((5,), mx.int32, 83))
    assert set(log_lines(jit_env)) == {"failed"}


THREADS = """
import threading
import numpy as np
import cmlx.core as mx
f = mx.compile(lambda x: mx.sin(x) * 3 + mx.exp(x) - x * x)
g = mx.compile(lambda x: mx.sum(mx.tanh(x) * 2 + 1, axis=-1))
outs, bar = [None] * 8, threading.Barrier(8)
def run(i):
    x = mx.arange(20000).astype(mx.float32) / 1e3
    a, b = f(x), g(x.reshape(20, 1000))
    bar.wait()  # every thread's first eval at once
    mx.eval(a, b)
    outs[i] = (np.array(a), np.array(b))
ts = [threading.Thread(target=run, args=(i,)) for i in range(8)]
[t.start() for t in ts]
[t.join() for t in ts]
print(all(all(np.array_equal(o[k], outs[0][k]) for k in range(2)) for o in outs))
"""


def test_first_evals_on_many_threads_build_each_kernel_once(jit_env):
    env = {"CMLX_CACHE_DIR": str(jit_env / "threads"), "CMLX_JIT_LOG": str(jit_env / "thr.log")}
    assert run_child(THREADS, env).strip() == "True"
    lines = (jit_env / "thr.log").read_text().split()
    assert set(lines[0::2]) == {"built"} and len(lines[1::2]) == len(set(lines[1::2])) == 2


@needs_oracle
def test_against_mlx_compile():
    x = rand((1000,), mx.float32, 24)
    ref = mlx_ref.compile(lambda v: v * (1 + mlx_ref.erf(v / math.sqrt(2))) / 2)
    want = np.array(ref(mlx_ref.array(np.array(x))))
    np.testing.assert_allclose(np.array(mx.compile(gelu_exact)(x)), want, rtol=1e-6, atol=1e-7)


def test_shared_broadcast_is_read_inside_the_region_and_kept_outside():
    # yy feeds the fused region and a Sum: the region reads y with zero
    # strides, the Broadcast stays for the Sum, and the node takes MLX's name
    def fun(x, y, z):
        yy = mx.broadcast_to(y, z.shape)
        return x + yy * z, yy.sum()

    x = mx.random.normal((10, 10), key=mx.random.key(1))
    y = mx.array(0.1)
    z = mx.random.normal((10, 10), key=mx.random.key(2))
    got = mx.compile(fun)(x, y, z)
    buf = io.StringIO()
    mx.export_to_dot(buf, *got)  # before evaluation ends the graph
    labels = [l for l in buf.getvalue().splitlines() if "label" in l]
    assert any('"CompiledBroadcastMultiplyAdd"' in l for l in labels)
    assert any('"Broadcast"' in l for l in labels) and any('"Sum"' in l for l in labels)
    want = fun(x, y, z)
    assert all(mx.array_equal(g, w).item() for g, w in zip(got, want))


# ---- regions feeding a reduction ------------------------------------------


def labels_of(*arrays):
    buf = io.StringIO()
    mx.export_to_dot(buf, *arrays)
    return [l.split('"')[1] for l in buf.getvalue().splitlines() if "label" in l]


def test_reduction_takes_the_region_into_its_pass():
    x = rand((7, 300), mx.float32, 40)
    got = mx.compile(lambda a: mx.sum(a * a + 1, axis=-1))(x)
    (label,) = labels_of(got)  # one node: the region and its reduction
    assert label.startswith("CompiledMultiply") and label.endswith("AddSum")
    assert bits(got) == bits(mx.sum(x * x + 1, axis=-1))
    # a region value also used elsewhere is one more (full-size) output
    f = lambda a: ((a - 1) * 2, mx.max((a - 1) * 2 + a, axis=-1))  # noqa: E731
    got = mx.compile(f)(x)
    assert sum(l.startswith("Compiled") and l.endswith("AddMax") for l in labels_of(*got)) == 1
    for g, w in zip(got, f(x)):
        assert bits(g) == bits(w)
    # the reduction's input used twice stays a plain region
    got = mx.compile(lambda a: (a * a + 1).sum(axis=-1) + (a * a + 1)[:, 0])(x)
    assert not any(l.endswith("Sum") and l.startswith("Compiled") for l in labels_of(got))


REDUCTIONS = [
    lambda v: mx.sum(v, axis=-1),
    lambda v: mx.mean(v, axis=-1, keepdims=True),
    lambda v: mx.max(v, axis=-1),
    lambda v: mx.min(v),
    lambda v: mx.prod(v, axis=(1, 2)),
    lambda v: mx.sum(v, axis=(0, 1, 2), keepdims=True),
]


@pytest.mark.parametrize("dtype", FLOATS + [mx.int32, mx.uint8, mx.int64])
@pytest.mark.parametrize("red", range(len(REDUCTIONS)))
def test_fused_reductions_are_bit_identical(dtype, red):
    r = REDUCTIONS[red]
    x, y = rand((3, 5, 4100), dtype, 41), rand((3, 5, 4100), dtype, 42)
    if dtype in FLOATS:
        check(lambda a, b: r(a * b - mx.exp(a * 0.1)), x * 0.1, y)
        check(lambda a: r((a.astype(mx.float32) * 0.5).astype(dtype)), x)
    else:
        check(lambda a, b: r((a & 3) + (b & 1) + 1), x, y)
    check(lambda a: r(mx.where(a > 0, a, a * 0) + a), x)


def test_fused_reduction_logic_and_empty_and_size_one():
    x = rand((6, 9), mx.float32, 43)
    check(lambda a: mx.all(a * 2 > -3, axis=-1), x)
    check(lambda a: mx.any(mx.abs(a) + 1 > 4, axis=(0, 1)), x)
    for shape, axis in [((0, 5), -1), ((5, 0), -1), ((0,), 0), ((4, 1), -1), ((4, 1, 3), (1, 2)),
                        ((1, 1), None), ((), None)]:
        v = rand(shape, mx.float32, 44)
        check(lambda a: mx.sum(a * 3 - 1, axis=axis), v)
        check(lambda a: mx.max(-a * 2 + 1, axis=axis) if v.size else mx.sum(-a * a, axis=axis), v)
        check(lambda a: mx.prod(a * 0 - 0.0, axis=axis), v)  # -0.0 through size-1 axes


def test_fused_reduction_broadcasts_and_layouts():
    x = rand((64, 33), mx.float32, 45)
    mu = rand((64, 1), mx.float32, 46)
    w = rand((33,), mx.float32, 47)
    # broadcast inputs: row-major results keep the unfused bits
    check(lambda a, m, v: mx.sum((a - m) * (a - m) * v, axis=-1), x, mu, w)
    check(lambda m, v: mx.sum(m * v + 1, axis=-1), mu, w)
    check(lambda v: mx.sum(mx.broadcast_to(v, (5, 33)) * 2 + 1), w)
    # other layouts: the fused pass reads the values in row-major order,
    # which the unfused reduction of a non-row-major temporary may not
    for v in [x.T, x[::2, 1:30:3], mx.broadcast_to(w, (4, 33))]:
        for f in [lambda a: mx.sum(a * a + 1, axis=-1), lambda a: mx.max(mx.exp(a) - 1),
                  lambda a: mx.mean(a * 0.5 - 2)]:
            want, got = f(v), mx.compile(f)(v)
            assert want.shape == got.shape and want.dtype == got.dtype
            np.testing.assert_allclose(np.array(got), np.array(want), rtol=2e-6, atol=1e-6)


def test_fused_reduction_matches_unfused_env(jit_env, monkeypatch):
    x = rand((17, 5000), mx.float32, 48)
    f = lambda a: (mx.sum(a * a, axis=-1), mx.min(mx.tanh(a) * 3, axis=0))  # noqa: E731
    got = mx.compile(f)(x)
    monkeypatch.setenv("CMLX_COMPILE_FUSE", "0")
    plain = mx.compile(f)(x)
    for g, p in zip(got, plain):
        assert bits(g) == bits(p)


@needs_oracle
def test_fused_reduction_against_mlx():
    rng = np.random.default_rng(49)
    xs = rng.standard_normal((32, 257)).astype(np.float32)

    def ln(m, a):
        mu = a.mean(-1, keepdims=True)
        d = a - mu
        return d * m.rsqrt((d * d).mean(-1, keepdims=True) + 1e-5)

    got = mx.compile(lambda a: ln(mx, a))(mx.array(xs))
    want = mlx_ref.compile(lambda a: ln(mlx_ref, a))(mlx_ref.array(xs))
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-5, atol=1e-5)


# ---- the disk cache's cap ----------------------------------------------------


def kernel_files(tmp_path):
    d = tmp_path / "cache"
    return sorted(p.name for p in d.iterdir() if p.name.startswith("fused-")) if d.exists() else []


def test_disk_cache_is_capped_least_recently_used_first(jit_env, monkeypatch):
    x = rand((8,), mx.float32, 50)
    # kernels no other test builds (the process keeps the ones it loaded)
    unary = [mx.exp, mx.sin, mx.cos, mx.tanh, mx.log1p, mx.arctan]
    check(lambda a: unary[0](a * 2) * mx.sqrt(mx.abs(a) + 7) - 5, x)
    (name,) = kernel_files(jit_env)
    cache = jit_env / "cache"
    size = (cache / name).stat().st_size
    # a cap of three and a half kernels
    monkeypatch.setenv("CMLX_CACHE_MAX_MB", str(3.5 * size / 2**20))
    for u in unary[1:3]:
        check(lambda a, u=u: u(a * 2) * mx.sqrt(mx.abs(a) + 7) - 5, x)
    first = kernel_files(jit_env)
    assert len(first) == 3
    for i, name in enumerate(first):
        os.utime(cache / name, (1_000_000 + i, 1_000_000 + i))
    oldest = first[0]
    os.utime(cache / oldest, None)  # as a load does: now the most recent
    for u in unary[3:5]:
        check(lambda a, u=u: u(a * 2) * mx.sqrt(mx.abs(a) + 7) - 5, x)
    files = kernel_files(jit_env)
    assert len(files) == 3 and oldest in files
    assert all(name not in files for name in first[1:])
    # no cap
    monkeypatch.setenv("CMLX_CACHE_MAX_MB", "0")
    for u in unary:
        check(lambda a, u=u: u(a * 3) * mx.sqrt(mx.abs(a) + 7) + mx.floor(a), x)
    assert len(kernel_files(jit_env)) == len(files) + len(unary)


def test_disk_cache_load_refreshes_and_stale_temporaries_go(jit_env):
    x = rand((8,), mx.float32, 51)
    # kernels of their own (the process keeps the ones it loaded)
    check(lambda a: mx.arcsinh(a * 3) - mx.cosh(a), x)
    (name,) = kernel_files(jit_env)
    cache = jit_env / "cache"
    os.utime(cache / name, (1_000_000, 1_000_000))
    stale = cache / "tmp-0-1-2.c"
    stale.write_text("int x;")
    os.utime(stale, (1_000_000, 1_000_000))
    fresh = cache / "tmp-0-1-3.c"
    fresh.write_text("int x;")
    env = dict(os.environ)
    run_child("import cmlx.core as mx\n"
              "f = mx.compile(lambda a: mx.arcsinh(a * 3) - mx.cosh(a))\n"
              "mx.eval(f(mx.array([1.0, 2.0])))\n", env)
    assert "disk" in log_lines(jit_env)
    assert (cache / name).stat().st_mtime > 1_000_000 + 3600
    # a build sweeps temporaries an hour old, not younger ones
    check(lambda a: mx.arccosh(mx.abs(a) + 3) * mx.sinh(a), x)
    assert not stale.exists() and fresh.exists()


# ---- complex64 ----------------------------------------------------------------


def crand(shape, seed):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    return mx.array(v.astype(np.complex64))


COMPLEX_FUNS = [
    lambda a, b: (a + b) * a - b,
    lambda a, b: a / (b + 1) - mx.exp(a),
    lambda a, b: mx.abs(a * b) + 1,
    lambda a, b: mx.where(a == b, a, -b) + 2,
    lambda a, b: (a.real * 2 + b.imag).astype(mx.complex64) * a,
    lambda a, b: mx.sqrt(a) * mx.log(b) + mx.square(a),
    lambda a, b: (a * 1j + b, a != b),
    lambda a, b: mx.maximum(a, b) - mx.minimum(a, b) + (a < b),
    lambda a, b: mx.sum(a * b - 1, axis=-1),
    lambda a, b: mx.conj(a) * b + mx.sin(a).real.astype(mx.complex64),
]


@pytest.mark.parametrize("k", range(len(COMPLEX_FUNS)))
def test_complex_regions(k, jit_env):
    f = COMPLEX_FUNS[k]
    x, y = crand((9, 13), 60), crand((9, 13), 61)
    check(f, x, y)
    nan = mx.array([complex(float("nan"), 1), complex(float("inf"), float("nan")), 1 + 2j,
                    complex(0, float("-inf")), -0.0 + 0j, 3 - 1j], dtype=mx.complex64)
    check(f, nan, nan[::-1])
    check(f, x.T, y.T)  # a shared transposed layout
    check(f, x[::2, 1:], crand((13,), 62)[1:])  # slices and a broadcast row
    check(f, x, mx.array(0.5 - 1j, dtype=mx.complex64))  # a scalar
    check(f, crand((0, 4), 63), crand((0, 4), 64))
    assert "built" in log_lines(jit_env)
    assert not any(l.startswith("failed") for l in log_lines(jit_env))


def test_complex_region_is_one_node():
    x, y = crand((4, 5), 65), crand((4, 5), 66)
    got = mx.compile(lambda a, b: (a + b) * a - mx.exp(b))(x, y)
    (label,) = labels_of(got)
    assert label == "CompiledAddMultiplyExpSubtract"


def test_bool_regions_are_fused_with_raw_bytes_cleaned():
    p, q = rand((40,), mx.bool_, 67), rand((40,), mx.bool_, 68)
    f = lambda a, b: mx.logical_and(a, b) | ~b  # noqa: E731
    (label,) = labels_of(mx.compile(f)(p, q))
    assert label.startswith("Compiled")
    check(lambda a, b: mx.any(mx.logical_xor(a, b) & a, axis=-1), p, q)
    # bytes other than 0/1 viewed as bool read as True, fused or not
    raw = mx.array(np.array([0, 1, 2, 255, 0, 7], dtype=np.uint8)).view(mx.bool_)
    check(f, raw, q[:6])
    check(lambda a, b: mx.where(a, 1.5, 2.0) * 2 + b, raw, rand((6,), mx.float32, 69))


def test_cheap_values_feeding_a_reduction_are_recomputed_not_stored():
    def ln(x, w, b):
        mu = x.mean(-1, keepdims=True)
        d = x - mu
        var = (d * d).mean(-1, keepdims=True)
        return d * mx.rsqrt(var + 1e-5) * w + b

    x, w, b = rand((16, 70), mx.float32, 70), rand((70,), mx.float32, 71), rand((70,), mx.float32, 72)
    labels = [l for l in labels_of(mx.compile(ln)(x, w, b)) if l.startswith("Compiled")]
    # x - mu is computed in the variance's pass and again in the result's
    assert sum("Subtract" in l for l in labels) == 2, labels
    assert sum(l.endswith("Sum") for l in labels) == 1, labels
    check(ln, x, w, b)
    check(ln, x[:, ::2], w[::2], b[1::2])
    # the shared value also an output, and read by two reductions
    check(lambda a: (a - 1, mx.sum((a - 1) * (a - 1), axis=-1), mx.max((a - 1) * 3, axis=-1)), x)
    check(lambda a: (mx.sum((a - 1) * 2, axis=-1), mx.min((a - 1) * 2 + 1, axis=-1), a - 1), x)
    # a reduction's result read by the copied values' consumers
    check(lambda a: (a * 2) / mx.sum(a * 2 * a, axis=-1, keepdims=True) + (a * 2), x)
