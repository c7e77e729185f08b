"""mx.load / mx.save / savez / savez_compressed / save_safetensors / save_gguf:
round trips across dtypes, shapes and layouts, interchange with NumPy and
real MLX (files written by either load here and ours load there), GGUF
metadata and quantized tensors against MLX's loader, file objects and
pathlib paths, and MLX's errors."""

import io
import os
import pathlib
import struct
import zipfile

import numpy as np
import pytest

from conftest import DTYPES, dtype_name, mlx_ref, mx, needs_oracle, sample, to_mx, to_np

NPY_DTYPES = [d for d in DTYPES]  # every dtype, bfloat16 as '<V2' like MLX
NUMPY_DTYPES = [d for d in DTYPES if d != "bfloat16"]
SHAPES = [(), (1,), (5,), (3, 4), (2, 0, 3), (2, 3, 1, 4)]


def same(a, b):
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_array_equal(to_np(a), to_np(b))


def layouts(x):
    """The same values as several layouts: contiguous, transposed, sliced,
    broadcast."""
    yield "contiguous", x
    if x.ndim >= 2:
        yield "transposed", mx.swapaxes(x, 0, 1)
    if x.ndim >= 1 and x.shape[-1] > 1:
        yield "strided", x[..., ::2]
    yield "broadcast", mx.broadcast_to(x, (2,) + tuple(x.shape))


# ---------------------------------------------------------------- .npy

@pytest.mark.parametrize("name", NPY_DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_npy_round_trip(tmp_path, name, shape):
    x = to_mx(sample(name, shape, seed=3), name)
    for lay, y in layouts(x):
        f = tmp_path / f"{lay}.npy"
        mx.save(str(f), y)
        same(mx.load(str(f)), y)
        if name != "bfloat16":
            np.testing.assert_array_equal(np.load(f), to_np(y))


@pytest.mark.parametrize("name", NUMPY_DTYPES)
@pytest.mark.parametrize("order", ["<", ">"])
@pytest.mark.parametrize("fortran", [False, True])
def test_npy_from_numpy(tmp_path, name, order, fortran):
    v = sample(name, (3, 5, 2), seed=1)
    v = v.astype(v.dtype.newbyteorder(order)) if v.dtype.itemsize > 1 else v
    if fortran:
        v = np.asfortranarray(v)
    f = tmp_path / "a.npy"
    np.save(f, v)
    got = mx.load(str(f))
    assert got.dtype == getattr(mx, name)
    np.testing.assert_array_equal(np.array(got), v.astype(v.dtype.newbyteorder("=")))


def test_npy_appends_extension_and_paths(tmp_path):
    x = mx.arange(6).reshape(2, 3)
    mx.save(str(tmp_path / "noext"), x)
    assert (tmp_path / "noext.npy").exists()
    same(mx.load(tmp_path / "noext.npy"), x)  # pathlib.Path
    mx.save(pathlib.Path(tmp_path / "p.npy"), x)
    same(mx.load(str(tmp_path / "p.npy")), x)


def test_npy_fortran_order_written_for_column_major(tmp_path):
    x = mx.arange(12, dtype=mx.float32).reshape(3, 4).T
    mx.eval(x)
    f = tmp_path / "f.npy"
    mx.save(str(f), x)
    header = open(f, "rb").read(128)
    assert b"'fortran_order': True" in header
    np.testing.assert_array_equal(np.load(f), np.arange(12, dtype=np.float32).reshape(3, 4).T)
    same(mx.load(str(f)), x)


def test_npy_header_is_numpy_aligned(tmp_path):
    f = tmp_path / "h.npy"
    mx.save(str(f), mx.ones((7, 3)))
    raw = open(f, "rb").read()
    hlen = struct.unpack("<H", raw[8:10])[0]
    assert (10 + hlen) % 64 == 0 and raw[10 + hlen - 1 : 10 + hlen] == b"\n"


def test_npy_file_objects(tmp_path):
    x = mx.array(np.arange(10, dtype=np.int16))
    buf = io.BytesIO()
    mx.save(buf, x)
    buf.seek(0)
    same(mx.load(buf, format="npy"), x)
    f = tmp_path / "o.npy"
    with open(f, "wb") as fh:
        mx.save(fh, x)
    with open(f, "rb") as fh:
        same(mx.load(fh), x)
    with pytest.raises(AttributeError):
        mx.load(io.BytesIO(buf.getvalue()))  # no name to infer the format from


def test_npy_float64_and_complex128(tmp_path):
    f = tmp_path / "d.npy"
    np.save(f, np.arange(4, dtype=np.float64) / 3)
    out = mx.load(str(f), stream=mx.cpu)
    assert out.dtype == mx.float64
    np.testing.assert_array_equal(np.array(out), np.arange(4, dtype=np.float64) / 3)
    np.save(f, np.arange(4) + 1j)
    with pytest.raises(ValueError, match="Unsupported array protocol type-string"):
        mx.load(str(f))


def test_npy_truncated_data_fails_at_eval(tmp_path):
    f = tmp_path / "t.npy"
    np.save(f, np.arange(16, dtype=np.float32))
    with open(f, "r+b") as fh:
        fh.truncate(os.path.getsize(f) - 8)
    out = mx.load(str(f))  # the header is fine: lazy, as in MLX
    with pytest.raises(RuntimeError):
        mx.eval(out)


def test_npy_lazy_and_donated(tmp_path):
    f = tmp_path / "z.npy"
    x = mx.random.normal((4096,))
    mx.save(str(f), x)
    y = mx.load(str(f)) * 2
    np.testing.assert_array_equal(np.array(y), np.array(x) * 2)


@needs_oracle
@pytest.mark.parametrize("name", NPY_DTYPES)
def test_npy_interchange_with_mlx(tmp_path, name):
    v = sample(name, (4, 3), seed=5)
    ref = to_mx(v, name, mlx_ref)
    mlx_ref.save(str(tmp_path / "m.npy"), ref)
    same_vals = to_np(mx.load(str(tmp_path / "m.npy")))
    np.testing.assert_array_equal(same_vals, to_np(ref))
    mx.save(str(tmp_path / "c.npy"), to_mx(v, name))
    back = mlx_ref.load(str(tmp_path / "c.npy"))
    assert dtype_name(back.dtype) == name
    np.testing.assert_array_equal(to_np(back), to_np(ref))


# ---------------------------------------------------------------- .npz

@pytest.mark.parametrize("compressed", [False, True])
def test_npz_round_trip_and_numpy(tmp_path, compressed):
    save = mx.savez_compressed if compressed else mx.savez
    arrs = {n: to_mx(sample(n, (3, 4), seed=i), n) for i, n in enumerate(NUMPY_DTYPES)}
    arrs["empty"] = mx.zeros((0, 3))
    arrs["scalar"] = mx.array(7)
    arrs["col"] = mx.arange(6).reshape(2, 3).T
    save(str(tmp_path / "a"), mx.ones(2), **arrs)  # ".npz" is appended
    f = tmp_path / "a.npz"
    got = mx.load(str(f))
    assert set(got) == set(arrs) | {"arr_0"}
    for k, v in arrs.items():
        same(got[k], v)
    with np.load(f) as z:
        for k, v in arrs.items():
            np.testing.assert_array_equal(z[k], to_np(v))
    with zipfile.ZipFile(f) as z:
        assert z.testzip() is None
        kinds = {i.compress_type for i in z.infolist()}
        assert kinds == {zipfile.ZIP_DEFLATED if compressed else zipfile.ZIP_STORED}


@pytest.mark.parametrize("compressed", [False, True])
def test_npz_from_numpy(tmp_path, compressed):
    save = np.savez_compressed if compressed else np.savez
    vals = {"a": np.arange(100, dtype=np.float32).reshape(10, 10), "b": np.array([True, False]),
            "c": np.asfortranarray(np.arange(6, dtype=np.int64).reshape(2, 3))}
    save(tmp_path / "n.npz", np.zeros(3, np.uint8), **vals)
    got = mx.load(str(tmp_path / "n.npz"))
    assert set(got) == {"a", "b", "c", "arr_0"}
    for k, v in vals.items():
        np.testing.assert_array_equal(np.array(got[k]), v)


def test_npz_file_objects_and_errors(tmp_path):
    buf = io.BytesIO()
    mx.savez_compressed(buf, x=mx.arange(5))
    buf.seek(0)
    got = mx.load(buf, format="npz")
    same(got["x"], mx.arange(5))
    with pytest.raises(ValueError, match="Cannot use un-named variables and keyword arr_0"):
        mx.savez(str(tmp_path / "e.npz"), mx.ones(1), arr_0=mx.ones(1))
    with pytest.raises(ValueError, match="metadata not supported for format npz"):
        mx.load(str(tmp_path / "e.npz"), return_metadata=True)


@needs_oracle
@pytest.mark.parametrize("compressed", [False, True])
def test_npz_interchange_with_mlx(tmp_path, compressed):
    ours = mx.savez_compressed if compressed else mx.savez
    theirs = mlx_ref.savez_compressed if compressed else mlx_ref.savez
    ours(str(tmp_path / "c.npz"), a=mx.arange(10), b=mx.ones((2, 2), dtype=mx.bfloat16))
    back = mlx_ref.load(str(tmp_path / "c.npz"))
    np.testing.assert_array_equal(np.array(back["a"]), np.arange(10))
    assert back["b"].dtype == mlx_ref.bfloat16
    theirs(str(tmp_path / "m.npz"), a=mlx_ref.arange(10), b=mlx_ref.ones((2, 2), dtype=mlx_ref.bfloat16))
    got = mx.load(str(tmp_path / "m.npz"))
    np.testing.assert_array_equal(np.array(got["a"]), np.arange(10))
    assert got["b"].dtype == mx.bfloat16


# ---------------------------------------------------------------- safetensors

def test_safetensors_round_trip_layouts_and_metadata(tmp_path):
    arrs = {}
    for i, n in enumerate(DTYPES):
        if n == "float64":
            continue
        x = to_mx(sample(n, (3, 4), seed=i), n)
        arrs[n] = x
        arrs[n + "_t"] = mx.swapaxes(x, 0, 1)
        arrs[n + "_b"] = mx.broadcast_to(x[:1], (2, 4))
    arrs["empty"] = mx.zeros((0, 5))
    arrs["scalar"] = mx.array(1.5)
    meta = {"format": "mlx", "note": "ü \"q\" \\ \n"}
    mx.save_safetensors(str(tmp_path / "s"), arrs, meta)  # extension appended
    got, m = mx.load(str(tmp_path / "s.safetensors"), return_metadata=True)
    assert m == meta
    assert set(got) == set(arrs)
    for k, v in arrs.items():
        same(got[k], v)
    # as MLX writes it: the data right after the header, with no padding
    raw = open(tmp_path / "s.safetensors", "rb").read()
    assert len(raw) == 8 + struct.unpack("<Q", raw[:8])[0] + sum(v.nbytes for v in arrs.values())


def test_safetensors_file_objects(tmp_path):
    f = tmp_path / "f.safetensors"
    with open(f, "wb") as fh:
        mx.save_safetensors(fh, {"x": mx.arange(3)})
    with open(f, "rb") as fh:
        same(mx.load(fh)["x"], mx.arange(3))
    buf = io.BytesIO(open(f, "rb").read())
    same(mx.load(buf, format="safetensors")["x"], mx.arange(3))


def test_safetensors_errors(tmp_path):
    f = str(tmp_path / "e.safetensors")
    with pytest.raises(ValueError, match="Metadata must be a dictionary with string keys"):
        mx.save_safetensors(f, {"a": mx.ones(2)}, {"k": 0})
    with pytest.raises(RuntimeError, match="invalid dtype"):
        mx.save_safetensors(f, {"a": mx.ones(2, dtype=mx.float64)})


def test_safetensors_f8_bytes(tmp_path):
    body = b'{"t":{"dtype":"F8_E4M3","shape":[4],"data_offsets":[0,4]}}'
    f = tmp_path / "f8.safetensors"
    f.write_bytes(struct.pack("<Q", len(body)) + body + bytes([0, 0x7E, 0xFE, 0x38]))
    t = mx.load(str(f))["t"]
    assert t.dtype == mx.uint8
    np.testing.assert_array_equal(np.array(t), [0, 0x7E, 0xFE, 0x38])


@needs_oracle
def test_safetensors_interchange_with_mlx(tmp_path):
    src = {"a": mlx_ref.arange(6).reshape(2, 3), "b": mlx_ref.ones((3,), dtype=mlx_ref.bfloat16),
           "c": mlx_ref.array([1 + 2j], dtype=mlx_ref.complex64)}
    mlx_ref.save_safetensors(str(tmp_path / "m.safetensors"), src, {"who": "mlx"})
    got, meta = mx.load(str(tmp_path / "m.safetensors"), return_metadata=True)
    assert meta == {"who": "mlx"}
    for k, v in src.items():
        np.testing.assert_array_equal(to_np(got[k]), to_np(v))
    mx.save_safetensors(str(tmp_path / "c.safetensors"), {"a": mx.arange(4), "b": mx.zeros((0,))},
                        {"who": "cmlx"})
    back, meta = mlx_ref.load(str(tmp_path / "c.safetensors"), return_metadata=True)
    assert meta == {"who": "cmlx"}
    np.testing.assert_array_equal(np.array(back["a"]), np.arange(4))
    assert back["b"].shape == (0,)


# ---------------------------------------------------------------- gguf

@pytest.mark.parametrize("name", ["float32", "float16", "int8", "int16", "int32"])
def test_gguf_round_trip(tmp_path, name):
    arrs = {"a": to_mx(sample(name, (3, 5), seed=2), name), "s": to_mx(sample(name, (), seed=4), name),
            "t": mx.swapaxes(to_mx(sample(name, (2, 3), seed=6), name), 0, 1)}
    mx.save_gguf(str(tmp_path / "g"), arrs)
    got = mx.load(str(tmp_path / "g.gguf"))
    for k, v in arrs.items():
        same(got[k], v)


def test_gguf_metadata(tmp_path):
    f = str(tmp_path / "m.gguf")
    md = {"s": "text", "l": ["a", "", "ccc"], "f": mx.array(1.5), "i": mx.array([1, 2, 3]),
          "u8": mx.array([7], dtype=mx.uint8), "b": mx.array([True, False]),
          "u64": mx.array(np.array([2**63 + 5], np.uint64))}
    mx.save_gguf(f, {"w": mx.ones((2, 2))}, md)
    w, meta = mx.load(f, return_metadata=True)
    assert set(meta) == set(md)
    for k, v in md.items():
        if isinstance(v, mx.array):
            same(meta[k], v)
        else:
            assert meta[k] == v
    for bad in [mx.array(1, mx.float16), mx.array(1, mx.bfloat16), mx.array(1, mx.complex64)]:
        with pytest.raises(ValueError, match="not support for metadata"):
            mx.save_gguf(f, {"w": mx.ones(1)}, {"m": bad})
    with pytest.raises(RuntimeError, match="more than one dimension"):
        mx.save_gguf(f, {"w": mx.ones(1)}, {"m": mx.ones((2, 2))})
    with pytest.raises(RuntimeError, match="empty arrays"):
        mx.save_gguf(f, {"w": mx.ones(1)}, {"m": mx.ones((0,))})
    with pytest.raises(RuntimeError, match="is not supported"):
        mx.save_gguf(f, {"w": mx.ones(1, dtype=mx.uint8)})
    with pytest.raises(ValueError, match="Input must be a string"):
        mx.save_gguf(io.BytesIO(), {"w": mx.ones(1)})


def gguf_bytes(tensors, kv=(), alignment=32, version=3):
    """A GGUF file by hand: tensors = [(name, ggml dims, type, block bytes)],
    kv = [(key, type id, payload bytes)]."""
    out = bytearray(b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kv)))
    for k, t, payload in kv:
        out += struct.pack("<Q", len(k)) + k.encode() + struct.pack("<I", t) + payload
    off = 0
    offs = []
    for name, dims, t, data in tensors:
        off += -off % alignment
        offs.append(off)
        out += struct.pack("<Q", len(name)) + name.encode() + struct.pack("<I", len(dims))
        out += struct.pack(f"<{len(dims)}Q", *dims) + struct.pack("<IQ", t, off)
        off += len(data)
    out += b"\0" * (-len(out) % alignment)
    base = len(out)
    for (name, dims, t, data), o in zip(tensors, offs):
        out += b"\0" * (base + o - len(out)) + data
    return bytes(out)


def quant_blocks(kind, n_blocks, seed=0):
    r = np.random.default_rng(seed)
    d = r.uniform(-2, 2, size=(n_blocks, 1)).astype(np.float16)
    m = r.uniform(-2, 2, size=(n_blocks, 1)).astype(np.float16)
    if kind == "Q8_0":
        q = r.integers(-128, 128, size=(n_blocks, 32)).astype(np.int8)
        return np.concatenate([d.view(np.uint8), q.view(np.uint8)], axis=1).tobytes()
    q = r.integers(0, 16, size=(n_blocks, 32)).astype(np.uint8)
    packed = (q[:, :16] | (q[:, 16:] << 4)).astype(np.uint8)
    parts = [d.view(np.uint8)] + ([m.view(np.uint8)] if kind == "Q4_1" else []) + [packed]
    return np.concatenate(parts, axis=1).tobytes()


QTYPES = {"Q4_0": 2, "Q4_1": 3, "Q8_0": 8}


@pytest.mark.parametrize("kind", list(QTYPES))
def test_gguf_quantized_layout(tmp_path, kind):
    rows, cols = 3, 64
    blocks = quant_blocks(kind, rows * cols // 32, seed=1)
    f = tmp_path / "q.gguf"
    f.write_bytes(gguf_bytes([("blk.weight", (cols, rows), QTYPES[kind], blocks)]))
    got = mx.load(str(f))
    w, s, b = got["blk.weight"], got["blk.scales"], got["blk.biases"]
    assert w.dtype == mx.uint32 and s.dtype == mx.float16 and b.dtype == mx.float16
    bits = 8 if kind == "Q8_0" else 4
    assert w.shape == (rows, cols * bits // 32) and s.shape == (rows, cols // 32)
    # dequantize by hand from the packed words: MLX's layout
    words = np.array(w).astype(np.uint64)
    per = 32 // bits
    q = np.stack([(words >> (bits * k)) & ((1 << bits) - 1) for k in range(per)], -1)
    q = q.reshape(rows, cols).astype(np.float32)
    deq = q * np.repeat(np.array(s, np.float32), 32, 1) + np.repeat(np.array(b, np.float32), 32, 1)
    raw = np.frombuffer(blocks, np.uint8).reshape(-1, len(blocks) // (rows * cols // 32))
    dd = raw[:, :2].copy().view(np.float16).astype(np.float32)
    if kind == "Q8_0":
        expect = dd * raw[:, 2:].copy().view(np.int8).astype(np.float32)
    else:
        nib = raw[:, 4 if kind == "Q4_1" else 2:]
        qq = np.concatenate([nib & 15, nib >> 4], 1).astype(np.float32)
        if kind == "Q4_0":
            expect = dd * (qq - 8)
        else:
            expect = dd * qq + raw[:, 2:4].copy().view(np.float16).astype(np.float32)
    np.testing.assert_allclose(deq, expect.reshape(rows, cols), rtol=1e-3, atol=1e-3)


@needs_oracle
@pytest.mark.parametrize("kind", list(QTYPES))
def test_gguf_quantized_matches_mlx(tmp_path, kind):
    rows, cols = 4, 96
    blocks = quant_blocks(kind, rows * cols // 32, seed=9)
    f = tmp_path / "q.gguf"
    f.write_bytes(gguf_bytes([("model.w", (cols, rows), QTYPES[kind], blocks),
                              ("plain", (5,), 0, np.arange(5, dtype=np.float32).tobytes())]))
    ours, theirs = mx.load(str(f)), mlx_ref.load(str(f))
    assert set(ours) == set(theirs)
    for k in theirs:
        assert dtype_name(ours[k].dtype) == dtype_name(theirs[k].dtype)
        assert tuple(ours[k].shape) == tuple(theirs[k].shape)
        np.testing.assert_array_equal(np.array(ours[k]), np.array(theirs[k]))


@needs_oracle
def test_gguf_files_interchange_with_mlx(tmp_path):
    md = {"s": "x", "l": ["p", "q"], "a": mlx_ref.array([1, 2], dtype=mlx_ref.int16)}
    mlx_ref.save_gguf(str(tmp_path / "m.gguf"), {"w": mlx_ref.arange(6, dtype=mlx_ref.float16)}, md)
    w, meta = mx.load(str(tmp_path / "m.gguf"), return_metadata=True)
    np.testing.assert_array_equal(np.array(w["w"]), np.arange(6, dtype=np.float16))
    assert meta["s"] == "x" and meta["l"] == ["p", "q"] and meta["a"].dtype == mx.int16
    mx.save_gguf(str(tmp_path / "c.gguf"), {"w": mx.arange(6, dtype=mx.int32)},
                 {"s": "y", "f": mx.array([0.5, 1.5])})
    w, meta = mlx_ref.load(str(tmp_path / "c.gguf"), return_metadata=True)
    np.testing.assert_array_equal(np.array(w["w"]), np.arange(6))
    assert meta["s"] == "y"
    np.testing.assert_array_equal(np.array(meta["f"]), [0.5, 1.5])


def test_gguf_float64_metadata_loads_as_float32(tmp_path):
    # MLX's loader gives float64 values as float32 arrays (and then misreads
    # the rest of the file, since it advances by 4 bytes: it crashes on such
    # files, so there is no oracle here).
    kv = [("d", 12, struct.pack("<d", 0.1)),
          ("ad", 9, struct.pack("<IQ", 12, 2) + struct.pack("<2d", 0.1, 2.5)), ("after", 8,
          struct.pack("<Q", 2) + b"ok")]
    f = tmp_path / "k.gguf"
    f.write_bytes(gguf_bytes([("w", (2,), 0, b"\0" * 8)], kv))
    _, meta = mx.load(str(f), return_metadata=True)
    assert meta["d"].dtype == mx.float32 and meta["d"].shape == ()
    assert meta["d"].item() == np.float32(0.1)
    np.testing.assert_array_equal(np.array(meta["ad"]), np.array([0.1, 2.5], np.float32))
    assert meta["after"] == "ok"


@needs_oracle
def test_gguf_bool_and_int_metadata_like_mlx(tmp_path):
    kv = [("b", 7, b"\x01"), ("u16", 2, struct.pack("<H", 65535)),
          ("ab", 9, struct.pack("<IQ", 7, 3) + b"\x01\x00\x01"),
          ("ai", 9, struct.pack("<IQ", 11, 2) + struct.pack("<2q", -5, 2**62))]
    f = tmp_path / "k.gguf"
    f.write_bytes(gguf_bytes([("w", (2,), 0, b"\0" * 8)], kv))
    _, ours = mx.load(str(f), return_metadata=True)
    _, theirs = mlx_ref.load(str(f), return_metadata=True)
    assert set(ours) == set(theirs)
    for k in theirs:
        assert dtype_name(ours[k].dtype) == dtype_name(theirs[k].dtype), k
        assert tuple(ours[k].shape) == tuple(theirs[k].shape), k
        np.testing.assert_array_equal(np.array(ours[k]), np.array(theirs[k]))


# ---------------------------------------------------------------- load()

def test_load_format_errors(tmp_path):
    f = tmp_path / "x.npy"
    mx.save(str(f), mx.ones(2))
    with pytest.raises(ValueError, match="Unknown file format bin"):
        mx.load(str(f), format="bin")
    with pytest.raises(ValueError, match="Could not infer file format from extension"):
        mx.load(str(tmp_path / "noext"))
    with pytest.raises(ValueError, match="metadata not supported for format npy"):
        mx.load(str(f), return_metadata=True)
    with pytest.raises(ValueError, match="Input must be a file-like object"):
        mx.load(3)
    with pytest.raises(ValueError, match=r"\[load_gguf\] Input must be a string"):
        mx.load(io.BytesIO(), format="gguf")
    with pytest.raises(RuntimeError, match="Failed to open"):
        mx.load(str(tmp_path / "missing.npy"))
    same(mx.load(str(f), "npy"), mx.ones(2))  # format positionally


def test_python_file_errors_propagate(tmp_path):
    class Bad(io.BytesIO):
        def write(self, b):
            raise KeyError("boom")

    with pytest.raises(KeyError):
        mx.save(Bad(), mx.ones(3))
    closed = open(tmp_path / "c.npy", "wb")
    closed.close()
    with pytest.raises((RuntimeError, ValueError)):
        mx.save(closed, mx.ones(3))


@needs_oracle
def test_gguf_bf16_tensor_like_mlx(tmp_path):
    bits = np.random.default_rng(3).integers(0, 2**16, size=64, dtype=np.uint16)
    bits[:4] = [0x3F80, 0x7F80, 0xFF80, 0x7FC1]  # 1, inf, -inf, nan
    f = tmp_path / "b.gguf"
    f.write_bytes(gguf_bytes([("t", (16, 4), 30, bits.tobytes())]))
    ours, theirs = mx.load(str(f))["t"], mlx_ref.load(str(f))["t"]
    assert ours.dtype == mx.float16 and ours.shape == theirs.shape == (4, 16)
    np.testing.assert_array_equal(np.array(ours).view(np.uint16), np.array(theirs).view(np.uint16))


def test_gguf_unsupported_types_name_themselves(tmp_path):
    f = tmp_path / "k.gguf"
    f.write_bytes(gguf_bytes([("t", (256,), 13, b"\0" * 176)]))  # Q5_K
    with pytest.raises(RuntimeError, match="GGML type 13"):
        mx.load(str(f))


@needs_oracle
@pytest.mark.parametrize("kind,type_id,nbytes", [("Q2_K", 10, 84), ("Q4_K", 12, 144),
                                                 ("Q6_K", 14, 210)])
@pytest.mark.parametrize("count", [256, 768, 600])
def test_gguf_kquants_dequantize_like_mlx(tmp_path, kind, type_id, nbytes, count):
    r = np.random.default_rng(count + type_id)
    nblocks = (count + 255) // 256
    raw = r.integers(0, 256, size=(nblocks, nbytes), dtype=np.uint8)
    # keep the f16 scales finite and modest so most values are ordinary
    for off in {"Q2_K": (80, 82), "Q4_K": (0, 2), "Q6_K": (208,)}[kind]:
        raw[:, off:off + 2] = np.frombuffer(
            r.uniform(-0.1, 0.1, size=nblocks).astype(np.float16).tobytes(), np.uint8).reshape(-1, 2)
    f = tmp_path / "k.gguf"
    f.write_bytes(gguf_bytes([("t", (count,), type_id, raw.tobytes() + b"\0" * 256)]))
    ours, theirs = mx.load(str(f))["t"], mlx_ref.load(str(f))["t"]
    assert ours.dtype == mx.float16 and ours.shape == theirs.shape == (count,)
    np.testing.assert_array_equal(np.array(ours).view(np.uint16), np.array(theirs).view(np.uint16))


def test_overwriting_a_larger_file_leaves_no_tail(tmp_path):
    for fmt, save in [("npy", lambda p, a: mx.save(p, a)),
                      ("safetensors", lambda p, a: mx.save_safetensors(p, {"a": a})),
                      ("gguf", lambda p, a: mx.save_gguf(p, {"a": a})),
                      ("npz", lambda p, a: mx.savez(p, a=a))]:
        p = str(tmp_path / f"o.{fmt}")
        save(p, mx.arange(10000, dtype=mx.float32))
        big = os.path.getsize(p)
        save(p, mx.arange(3, dtype=mx.float32))
        assert os.path.getsize(p) < big
        got = mx.load(p)
        got = got if isinstance(got, mx.array) else got["a"]
        same(got, mx.arange(3, dtype=mx.float32))
