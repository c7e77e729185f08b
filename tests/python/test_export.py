"""mx.export_function / import_function / exporter / export_to_dot: .mlxfn
files in MLX 0.32's format, both ways with real MLX when it is installed,
and hostile files (truncated, flipped bytes) that must raise, not crash."""
import io
import os
import random

import numpy as np
import pytest

import cmlx.core as mx

try:
    import mlx.core as mlx
except ImportError:  # the oracle is optional
    mlx = None

needs_mlx = pytest.mark.skipif(mlx is None, reason="needs real MLX")


def _np(a):
    return np.array(a.tolist())


def _masked(x, y):
    a = x + 0
    a[x > 0.5] = mx.arange(9, dtype=mx.float32) * 10
    return a


CASES = [
    ("unary", lambda x, y: mx.abs(mx.sin(x)) + mx.sqrt(mx.abs(y)) - mx.rsqrt(mx.abs(x) + 1)),
    ("binary", lambda x, y: mx.maximum(x * 2 - y, y / 3) ** 2),
    ("log", lambda x, y: mx.log(mx.abs(x - y)).astype(mx.int32)),
    ("reduce", lambda x, y: (x.sum(axis=0), x.max(axis=1, keepdims=True), mx.argmax(x, axis=1))),
    ("shape", lambda x, y: mx.transpose(x).reshape(-1)[1:5:2] + mx.expand_dims(y, 0).squeeze(0)[0]),
    ("matmul", lambda x, y: (x @ x.T, mx.addmm(x, x, x, alpha=0.5, beta=2.0))),
    ("softmax", lambda x, y: (mx.softmax(x, axis=-1), mx.logsumexp(x, axis=-1))),
    ("scan", lambda x, y: mx.cumsum(x, axis=1, reverse=True)),
    ("sort", lambda x, y: (mx.sort(x, axis=0), mx.argsort(y))),
    ("where", lambda x, y: mx.where(x > 0.5, x, y)),
    ("concat", lambda x, y: mx.concatenate([x, x * 2], axis=1)),
    ("take", lambda x, y: mx.take_along_axis(x, mx.array([[0, 1, 2], [2, 1, 0], [1, 1, 1]]), 0)),
    ("scatter", lambda x, y: x.at[mx.array([0, 0, 2])].add(mx.ones((3, 3)))),
    ("divmod", lambda x, y: mx.divmod(x * 10, y + 1)),
    ("slice_update", lambda x, y: x.at[1:3].add(y) + x.at[0].multiply(2)),
    ("pad", lambda x, y: mx.pad(x, [(1, 2), (0, 1)]) + 1),
    ("fft", lambda x, y: (mx.abs(mx.fft.fft(x)), mx.fft.irfft(mx.fft.rfft(x)))),
    ("floor_divide", lambda x, y: x // 0.3),
    ("gather", lambda x, y: x[mx.array([[0, 2], [1, 1]])] + x[mx.array([0, 2]), 1:3].sum()),
    ("conv", lambda x, y: mx.conv2d(x.reshape(1, 3, 3, 1), mx.ones((2, 2, 2, 1)), padding=1)),
    ("split", lambda x, y: mx.split(x, [1], axis=1)),
    ("masked_scatter", _masked),
    ("linalg", lambda x, y: (mx.linalg.inv(x @ x.T + mx.eye(3)),
                             mx.linalg.cholesky(x @ x.T + mx.eye(3)),
                             mx.linalg.svd(x, compute_uv=False),
                             mx.linalg.eigvalsh(x + x.T, UPLO="U"),
                             mx.linalg.tri_inv(x + mx.eye(3), upper=True))),
    ("dynamic_slice", lambda x, y: (mx.slice(x, mx.array([1]), [0], [2, 3]),
                                    mx.slice_update(x, y.reshape(1, 3), mx.array([2]), [0]))),
    ("gather_mm", lambda x, y: mx.gather_mm(mx.stack([x, x + 1]), x.reshape(1, 3, 3),
                                            mx.array([1, 0], dtype=mx.uint32),
                                            mx.array([0, 0], dtype=mx.uint32))),
    ("composed_unary", lambda x, y: (mx.isnan(mx.log(y)), mx.reciprocal(x + 1), mx.degrees(y),
                                     mx.radians(x), mx.isposinf(1 / (x - x)),
                                     mx.isneginf(-1 / (x - x)))),
    ("as_strided", lambda x, y: mx.as_strided(x, (2, 2), (3, 1), 1) * 2),
    ("view", lambda x, y: x.view(mx.int32) + 1),
    ("hadamard", lambda x, y: mx.hadamard_transform(mx.pad(x, [(0, 0), (0, 1)]), scale=0.5)),
]


def _inputs(lib):
    x = lib.array(np.arange(9, dtype=np.float32).reshape(3, 3) / 7.0)
    y = lib.array(np.array([0.5, -1.5, 2.25], dtype=np.float32))
    return x, y


@pytest.mark.parametrize("name,fun", CASES, ids=[c[0] for c in CASES])
def test_round_trip(tmp_path, name, fun):
    path = str(tmp_path / "f.mlxfn")
    x, y = _inputs(mx)
    mx.export_function(path, fun, x, y)
    out = mx.import_function(path)(x, y)
    exp = fun(x, y)
    exp = exp if isinstance(exp, (list, tuple)) else [exp]
    assert len(out) == len(exp)
    for o, e in zip(out, exp):
        assert o.dtype == e.dtype and o.shape == e.shape
        np.testing.assert_allclose(_np(o), _np(e), rtol=1e-5, atol=1e-6)


@needs_mlx
@pytest.mark.parametrize("name,fun", CASES, ids=[c[0] for c in CASES])
def test_cmlx_file_imports_in_mlx(tmp_path, name, fun):
    path = str(tmp_path / "f.mlxfn")
    x, y = _inputs(mx)
    mx.export_function(path, fun, x, y)
    out = mlx.import_function(path)(*_inputs(mlx))
    exp = fun(x, y)
    exp = exp if isinstance(exp, (list, tuple)) else [exp]
    for o, e in zip(out, exp):
        assert tuple(o.shape) == e.shape
        np.testing.assert_allclose(np.array(o.tolist()), _np(e), rtol=1e-5, atol=1e-6)


@needs_mlx
def test_mlx_file_imports_in_cmlx(tmp_path):
    path = str(tmp_path / "m.mlxfn")

    def fun(x, y, z=None):
        a = mlx.abs(mlx.sin(x)) * 2 + y
        return a.sum(axis=0), mlx.cumsum(a, axis=1), mlx.log(mlx.abs(x - z)).astype(mlx.int32)

    x, y = _inputs(mlx)
    mlx.export_function(path, fun, x, y, z=y + 1)
    exp = fun(x, y, z=y + 1)
    cx, cy = _inputs(mx)
    out = mx.import_function(path)(cx, cy, z=cy + 1)
    for o, e in zip(out, exp):
        assert o.shape == tuple(e.shape)
        np.testing.assert_allclose(_np(o), np.array(e.tolist()), rtol=1e-5, atol=1e-6)


@needs_mlx
def test_mlx_multi_output_and_window_primitives(tmp_path):
    path = str(tmp_path / "w.mlxfn")

    def fun(x):
        a, b = mlx.split(x, [1], axis=1)
        return a * 2, mlx.pad(b, [(1, 0), (0, 2)]), x.at[1:].add(x[:1]), mlx.fft.rfft(x)

    x, _ = _inputs(mlx)
    mlx.export_function(path, fun, x)
    exp = fun(x)
    out = mx.import_function(path)(_inputs(mx)[0])
    assert len(out) == len(exp)
    for o, e in zip(out, exp):
        assert o.shape == tuple(e.shape)
        np.testing.assert_allclose(np.array(o.tolist()), np.array(e.tolist()), rtol=1e-5,
                                   atol=1e-5)


@needs_mlx
def test_random_samples_import_in_mlx(tmp_path):
    # cmlx's fused uniform is written as MLX's composition, bit for bit
    path = str(tmp_path / "r.mlxfn")
    key = mx.random.key(7)
    fun = lambda k: (mx.random.uniform(shape=(4, 5), key=k),
                     mx.random.normal(shape=(6,), key=k))
    mx.export_function(path, fun, key)
    exp = fun(key)
    out = mlx.import_function(path)(mlx.array(np.array(key.tolist(), dtype=np.uint32)))
    for o, e in zip(out, exp):
        assert np.array_equal(np.array(o.tolist()), _np(e))
    for o, e in zip(mx.import_function(path)(key), exp):
        assert mx.array_equal(o, e).item()


def test_fast_primitives_round_trip(tmp_path):
    # MLX's names and states; MLX itself evaluates these only on the GPU
    path = str(tmp_path / "fast.mlxfn")
    x = mx.array(np.random.default_rng(1).standard_normal((2, 4, 8)).astype(np.float32))
    w, b = mx.ones((8,)) * 2, mx.ones((8,))
    fun = lambda x: (mx.fast.rms_norm(x, w, 1e-5), mx.fast.layer_norm(x, None, b, 1e-4),
                     mx.fast.rope(x, 8, traditional=False, base=10000.0, scale=1.0, offset=3),
                     mx.fast.rope(x, 4, traditional=True, base=None, scale=0.5, offset=1,
                                  freqs=mx.array([1.0, 2.0])))
    mx.export_function(path, fun, x)
    events = []
    mx.export_function(events.append, fun, x)
    names = [e["name"] for e in events if e["type"] == "primitive"]
    assert {"RMSNorm", "LayerNorm", "RoPE"} <= set(names)
    for o, e in zip(mx.import_function(path)(x), fun(x)):
        np.testing.assert_allclose(_np(o), _np(e), rtol=1e-5, atol=1e-6)


def _quantized(lib):
    def fun(x, w):
        q = lib.quantize(w, 64, 4)
        idx = dict(lhs_indices=lib.array([0, 1], dtype=lib.uint32),
                   rhs_indices=lib.array([2, 3], dtype=lib.uint32))
        q0 = lib.quantize(w[0], 64, 4)
        return (lib.gather_qmm(x, *q, transpose=True, group_size=64, bits=4, **idx),
                lib.quantized_matmul(x, *q0, transpose=True, group_size=64, bits=4)) + tuple(q)
    rng = np.random.default_rng(2)
    return fun, [rng.standard_normal((2, 1, 64)).astype(np.float32),
                 rng.standard_normal((4, 8, 64)).astype(np.float32)]


def test_quantized_round_trip(tmp_path):
    path = str(tmp_path / "q.mlxfn")
    fun, data = _quantized(mx)
    ins = [mx.array(d) for d in data]
    mx.export_function(path, fun, *ins)
    for o, e in zip(mx.import_function(path)(*ins), fun(*ins)):
        np.testing.assert_allclose(_np(o), _np(e), rtol=1e-5, atol=1e-5)


@needs_mlx
def test_quantized_both_ways_with_mlx(tmp_path):
    path = str(tmp_path / "q.mlxfn")
    for src, dst in ((mx, mlx), (mlx, mx)):
        fun, data = _quantized(src)
        src.export_function(path, fun, *[src.array(d) for d in data])
        out = dst.import_function(path)(*[dst.array(d) for d in data])
        exp = fun(*[src.array(d) for d in data])
        assert len(out) == len(exp)
        for o, e in zip(out, exp):
            np.testing.assert_allclose(np.array(o.tolist()), np.array(e.tolist()), rtol=1e-4,
                                       atol=1e-4)


def test_kwargs_exporter_metadata_and_errors(tmp_path):
    path = str(tmp_path / "k.mlxfn")

    def fun(x, y, z=None):
        return x + y if z is None else x + y + z

    with mx.exporter(path, fun, metadata="meta") as ex:
        ex(mx.array([1, 2]), mx.array([1, 1]))
        ex(mx.array([1, 2]), mx.array([1, 1]), z=mx.array([5]))
        with pytest.raises(RuntimeError):
            ex(mx.array([3, 4]), mx.array([1, 1]))  # same signature again
    with pytest.raises(RuntimeError):
        ex(mx.array([1, 2, 3]), mx.array([1, 1, 1]))  # closed
    f, meta = mx.import_function(path, return_metadata=True)
    assert meta == "meta"
    assert f(mx.array([1, 2]), mx.array([1, 1]))[0].tolist() == [2, 3]
    assert f(mx.array([1, 2]), mx.array([1, 1]), z=mx.array([5]))[0].tolist() == [7, 8]
    with pytest.raises(ValueError, match="No imported function found"):
        f(mx.array([1.0, 2.0]), mx.array([1.0, 1.0]))
    with pytest.raises(ValueError):
        mx.export_function(path, fun, "hi")
    with pytest.raises(ValueError):
        mx.export_function(path, lambda: (mx.zeros((2,)), 1))


def test_callback():
    events = []
    mx.export_function(events.append, lambda x, y: mx.log(mx.abs(x - y)).astype(mx.int32),
                       mx.array(1.0), y=mx.array(2.0))
    prims = [e for e in events if e["type"] == "primitive"]
    assert [p["name"] for p in prims] == ["Subtract", "Abs", "Log", "AsType"]
    assert prims[2]["arguments"] == [2] and prims[3]["arguments"] == [mx.int32]
    kw = [e for e in events if e["type"] == "keyword_inputs"][0]["keywords"]
    assert kw[0][0] == "y"


def test_shapeless(tmp_path):
    path = str(tmp_path / "s.mlxfn")
    mx.export_function(path, lambda x, y: x * y + 1, mx.ones((2, 3)), mx.ones((3,)), shapeless=True)
    f = mx.import_function(path)
    out = f(mx.ones((4, 5)) * 2, mx.ones((5,)) * 3)[0]
    assert out.shape == (4, 5) and out.tolist() == [[7.0] * 5] * 4


def test_shapeless_reductions_take_new_shapes(tmp_path):
    path = str(tmp_path / "r.mlxfn")
    fun = lambda x: (x * 2 + x.sum(axis=0), mx.argmax(x, axis=1), mx.logsumexp(x, axis=-1))
    mx.export_function(path, fun, mx.ones((2, 3, 4)), shapeless=True)
    f = mx.import_function(path)
    x = mx.array(np.random.default_rng(4).standard_normal((5, 7, 4)).astype(np.float32))
    for o, e in zip(f(x), fun(x)):
        assert o.shape == e.shape
        np.testing.assert_allclose(_np(o), _np(e), rtol=1e-5, atol=1e-6)


@needs_mlx
def test_mlx_shapeless_files_take_new_shapes(tmp_path):
    # MLX's shapeless graphs: Broadcast with shape inputs, BroadcastAxes
    # (matmul), NumberOfElements (mean)
    path = str(tmp_path / "s.mlxfn")
    w = np.ones((4, 2), np.float32)
    fun = lambda L: (lambda x: (L.mean(x, axis=1), L.softmax(x, axis=-1) @ L.array(w),
                                x * 2 + x.sum(axis=0)))
    mlx.export_function(path, fun(mlx), mlx.ones((2, 3, 4)), shapeless=True)
    f = mx.import_function(path)
    x = np.random.default_rng(5).standard_normal((5, 7, 4)).astype(np.float32)
    for o, e in zip(f(mx.array(x)), fun(mx)(mx.array(x))):
        assert o.shape == e.shape
        np.testing.assert_allclose(_np(o), _np(e), rtol=1e-5, atol=1e-6)


def test_input_free_nodes_are_saved_as_values(tmp_path):
    # a node MLX has no state for that does not depend on the inputs is
    # saved as its value (median and the others: test_export_more.py)
    path = str(tmp_path / "c.mlxfn")
    mx.export_function(path, lambda x: mx.hanning(5) + mx.eye(5) + x, mx.array(1.0))
    out = mx.import_function(path)(mx.array(2.0))[0]
    np.testing.assert_allclose(_np(out), _np(mx.hanning(5) + mx.eye(5) + 2.0), rtol=1e-6)


def test_failed_trace_leaves_the_file_valid(tmp_path):
    path = str(tmp_path / "f.mlxfn")
    c = mx.array([1.0, 2.0, 3.0])
    mx.eval(c)

    def fun(x):
        return x * c if x.ndim == 1 else (x * c) @ mx.ones((5, 5))  # a shape error

    with mx.exporter(path, fun) as ex:
        with pytest.raises(ValueError, match="matmul"):
            ex(mx.ones((2, 3)))
        ex(mx.ones((3,)))
    f = mx.import_function(path)
    assert f(mx.array([2.0, 2.0, 2.0]))[0].tolist() == [2.0, 4.0, 6.0]


def _valid_file(tmp_path):
    path = str(tmp_path / "v.mlxfn")
    c = mx.arange(6, dtype=mx.float32).reshape(2, 3)
    mx.eval(c)
    mx.export_function(path, lambda x: (mx.sum(x * c, axis=1), mx.transpose(x)[::-1]),
                       mx.ones((2, 3)))
    with open(path, "rb") as f:
        return path, f.read()


def test_truncated_files_raise(tmp_path):
    path, data = _valid_file(tmp_path)
    bad = str(tmp_path / "bad.mlxfn")
    for n in list(range(0, min(len(data), 200))) + list(range(200, len(data), 7)):
        with open(bad, "wb") as f:
            f.write(data[:n])
        with pytest.raises((ValueError, RuntimeError)):
            mx.import_function(bad)


def test_flipped_bytes_never_crash(tmp_path):
    path, data = _valid_file(tmp_path)
    bad = str(tmp_path / "bad.mlxfn")
    rng = random.Random(0)
    for _ in range(400):
        b = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        with open(bad, "wb") as f:
            f.write(bytes(b))
        try:
            f = mx.import_function(bad)
            outs = f(mx.ones((2, 3)))
            mx.eval(*outs)
        except (ValueError, RuntimeError, TypeError, IndexError, OverflowError, MemoryError):
            pass


def test_hostile_as_strided_window(tmp_path):
    # a file whose AsStrided window reaches past its input must not import
    path = str(tmp_path / "a.mlxfn")
    mx.export_function(path, lambda x: mx.as_strided(x, (2,), (1,), 0), mx.ones((4,)))
    data = bytearray(open(path, "rb").read())
    at = data.find(b"AsStrided") + len("AsStrided")
    # state: shape (u64 count, int32), strides (u64 count, int64), offset (u64)
    off = at + 8 + 4 + 8 + 8
    data[off:off + 8] = (3).to_bytes(8, "little")
    with open(path, "wb") as f:
        f.write(bytes(data))
    with pytest.raises(ValueError, match="AsStrided"):
        mx.import_function(path)


def test_missing_file():
    with pytest.raises(RuntimeError):
        mx.import_function("/nonexistent/dir/x.mlxfn")


def test_export_to_dot():
    a, b = mx.array(1.0), mx.array(2.0)
    f = io.StringIO()
    mx.export_to_dot(f, *mx.divmod(a, b))
    s = f.getvalue()
    assert s.startswith("digraph {") and 'label ="DivMod"' in s and s.count("rank=sink") == 2
    x = mx.array([1, 2, 3])
    f = io.StringIO()
    mx.export_to_dot(f, x.at[mx.array([0])].add(mx.array([5])), x=x)
    assert 'label ="Scatter Sum"' in f.getvalue() and '"x"' in f.getvalue()


def test_compile_merges_equal_nodes(monkeypatch):
    def fun(x):
        return (x + 1) + (x + 1)

    def count(out, label="label"):
        b = io.StringIO()
        mx.export_to_dot(b, out)
        return b.getvalue().count(label)

    x = mx.array(1.0)
    # merged (unfused here): the two x + 1 become one
    monkeypatch.setenv("CMLX_COMPILE_FUSE", "0")
    merged = mx.compile(fun, shapeless=True)
    assert count(merged(x), '"Add"') == 2 < count(fun(x), '"Add"') == 3
    assert merged(x).item() == 4.0
    # fused, the merged graph is one elementwise node
    monkeypatch.delenv("CMLX_COMPILE_FUSE")
    assert count(mx.compile(fun, shapeless=True)(x)) == 1
    fused = mx.compile(fun)
    assert count(fused(x)) == 1
    assert fused(x).item() == 4.0
