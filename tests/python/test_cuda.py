"""The CUDA backend against the CPU (the reference), on a machine with a GPU.

Skipped where cmlx has no usable GPU (the CPU build, or the CUDA build on a
machine without a device).  make test-cuda also runs the whole suite with
the GPU as the default device; these tests compare the two devices
directly, over dtypes, shapes (0-d, empty, broadcast) and layouts
(transposed, sliced, strided), and check what only the GPU has: streams
that order work with the CPU, unified memory, the graph settings.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import mx

pytestmark = pytest.mark.skipif(
    not (hasattr(mx, "cuda") and mx.cuda.is_available()), reason="no CUDA device")

FLOATS = ["float16", "bfloat16", "float32"]
INTS = ["int8", "int32", "int64", "uint8", "uint32"]


def on(device, fn, *arrays):
    with mx.stream(device):
        out = fn(*arrays)
        mx.eval(out)
    return out


def close(a, b, dtype):
    a = np.array(a.astype(mx.float32) if a.dtype == mx.bfloat16 else a)
    b = np.array(b.astype(mx.float32) if b.dtype == mx.bfloat16 else b)
    assert a.shape == b.shape and a.dtype == b.dtype
    tol = {"float16": 2e-3, "bfloat16": 2e-2}.get(dtype, 1e-5)
    if a.dtype.kind in "fc":
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(a, b)


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype in INTS:
        return mx.array(rng.integers(1, 100, size=shape).astype(dtype))
    if dtype == "bool_":
        return mx.array(rng.random(shape) > 0.5)
    return mx.array(rng.standard_normal(shape).astype(np.float32)).astype(getattr(mx, dtype))


UNARY = ["exp", "log", "sin", "cos", "tanh", "sqrt", "abs", "negative", "sigmoid", "erf",
         "floor", "round", "square", "rsqrt", "log1p", "expm1", "isnan"]


@pytest.mark.parametrize("op", UNARY)
@pytest.mark.parametrize("dtype", FLOATS)
def test_unary_matches_cpu(op, dtype):
    x = sample((33, 17), dtype)
    if op in ("log", "sqrt", "rsqrt", "log1p"):
        x = mx.abs(x) + 0.5
    fn = getattr(mx, op)
    for view in (x, x.T, x[::2, 1::3]):
        close(on(mx.gpu, fn, view), on(mx.cpu, fn, view), dtype)


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "maximum", "minimum",
                                "floor_divide", "remainder", "equal", "less"])
@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_binary_matches_cpu(op, dtype):
    a, b = sample((8, 1, 5), dtype, 1), sample((3, 5), dtype, 2)
    fn = getattr(mx, op)
    close(on(mx.gpu, fn, a, b), on(mx.cpu, fn, a, b), dtype)           # broadcast
    close(on(mx.gpu, fn, a, a[0]), on(mx.cpu, fn, a, a[0]), dtype)
    close(on(mx.gpu, fn, a, mx.array(3, a.dtype)), on(mx.cpu, fn, a, mx.array(3, a.dtype)), dtype)


def test_int_division_rules():
    a = mx.array([7, -7, 7, -7, 5, np.iinfo(np.int32).min], mx.int32)
    b = mx.array([2, 2, -2, -2, 0, -1], mx.int32)
    for fn in (mx.floor_divide, mx.remainder):
        close(on(mx.gpu, fn, a, b), on(mx.cpu, fn, a, b), "int32")


@pytest.mark.parametrize("src", ["bool_", "uint8", "int32", "int64", "float16", "bfloat16",
                                 "float32", "complex64"])
@pytest.mark.parametrize("dst", ["bool_", "int32", "float16", "bfloat16", "float32"])
def test_astype_matches_cpu(src, dst):
    x = sample((4, 6), "float32" if src == "complex64" else src)
    if src == "complex64":
        x = x.astype(mx.complex64)
    fn = lambda v: v.astype(getattr(mx, dst))
    close(on(mx.gpu, fn, x.T), on(mx.cpu, fn, x.T), dst)


@pytest.mark.parametrize("op", ["sum", "prod", "max", "min", "all", "any"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "bool_"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2), -1])
def test_reduce_matches_cpu(op, dtype, axis):
    x = sample((6, 7, 5), dtype)
    if op == "prod" and dtype != "bool_":
        x = (x / 10 if dtype.startswith("float") else x % 3)
    fn = lambda v: getattr(mx, op)(v, axis=axis)
    close(on(mx.gpu, fn, x), on(mx.cpu, fn, x), dtype)
    close(on(mx.gpu, fn, x.transpose(2, 0, 1)), on(mx.cpu, fn, x.transpose(2, 0, 1)), dtype)


def test_reduce_nan_and_empty():
    x = mx.array([1.0, float("nan"), 3.0])
    assert np.isnan(on(mx.gpu, mx.max, x).item())
    assert on(mx.gpu, mx.sum, mx.zeros((0, 3)), 0).tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("shapes", [((5, 7), (7, 3)), ((2, 4, 8), (2, 8, 6)),
                                    ((3, 1, 4, 5), (2, 5, 6)), ((1, 64), (64, 1))])
def test_matmul_matches_cpu(dtype, shapes):
    a, b = sample(shapes[0], dtype, 3), sample(shapes[1], dtype, 4)
    close(on(mx.gpu, mx.matmul, a, b), on(mx.cpu, mx.matmul, a, b), dtype)
    at = mx.swapaxes(mx.swapaxes(a, -1, -2), -1, -2)
    close(on(mx.gpu, lambda x, y: x @ y, at, b), on(mx.cpu, lambda x, y: x @ y, at, b), dtype)


def test_matmul_transposed_and_addmm():
    a, b, c = sample((16, 8), "float32"), sample((16, 12), "float32"), sample((8, 12), "float32")
    close(on(mx.gpu, lambda x, y: x.T @ y, a, b), on(mx.cpu, lambda x, y: x.T @ y, a, b), "float32")
    fn = lambda x, y, z: mx.addmm(z, x.T, y, alpha=0.5, beta=2.0)
    close(on(mx.gpu, fn, a, b, c), on(mx.cpu, fn, a, b, c), "float32")


def test_views_and_copies():
    x = sample((4, 5, 6), "float32")
    ops = [lambda v: v.reshape(20, 6), lambda v: v.T.reshape(-1), lambda v: v[1:, ::2],
           lambda v: mx.concatenate([v, v * 2], axis=1), lambda v: mx.pad(v, 1),
           lambda v: mx.where(v > 0, v, -v), lambda v: mx.broadcast_to(v[:, :1], (4, 5, 6)) + 1]
    for fn in ops:
        close(on(mx.gpu, fn, x), on(mx.cpu, fn, x), "float32")


def test_unified_memory_and_streams():
    # a GPU result read by CPU code and consumed on the CPU stream
    a = on(mx.gpu, lambda: mx.ones((1000,)) * 3)
    assert np.array(a).sum() == 3000
    b = on(mx.cpu, lambda v: v + 1, a)
    assert b.tolist()[:2] == [4.0, 4.0]
    s = mx.new_stream(mx.gpu)
    with mx.stream(s):
        c = mx.exp(mx.zeros((10,)))
    mx.synchronize(s)
    assert c.tolist() == [1.0] * 10
    assert mx.default_device() == mx.gpu


def test_memory_counters():
    mx.clear_cache()
    before = mx.get_active_memory()
    x = on(mx.gpu, lambda: mx.zeros((1 << 20,)))
    assert mx.get_active_memory() >= before + 4 * (1 << 20)
    del x
    assert mx.get_active_memory() <= before


def test_missing_kernel_names_the_primitive():
    with pytest.raises(RuntimeError, match="has no GPU implementation"):
        on(mx.gpu, lambda: mx.linalg.eig(mx.eye(3)))


@pytest.mark.parametrize("graphs", ["0", "1"])
def test_graphs_on_and_off(graphs):
    code = ("import cmlx.core as mx, numpy as np\n"
            "x = mx.arange(1000, dtype=mx.float32)\n"
            "y = x\n"
            "for i in range(50): y = y * 1.01 + 1\n"
            "mx.eval(y)\n"
            "ref = np.arange(1000, dtype=np.float32)\n"
            "for i in range(50): ref = ref * np.float32(1.01) + np.float32(1)\n"
            "assert np.allclose(np.array(y), ref, rtol=1e-5)\n")
    env = dict(os.environ, MLX_USE_CUDA_GRAPHS=graphs, MLX_MAX_OPS_PER_BUFFER="7")
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
