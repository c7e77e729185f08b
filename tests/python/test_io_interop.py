"""Files written by the `safetensors` and `gguf` PyPI packages load in cmlx,
and files cmlx writes load in them (each part skipped when its package is
absent): values, dtypes, shapes and metadata, bfloat16 through PyTorch, and
GGUF's quantized Q4_0 / Q4_1 / Q8_0 tensors against the package's own
dequantization (and MLX's loader where MLX is installed)."""

import numpy as np
import pytest

from conftest import mlx_ref

import cmlx.core as cx  # the file formats under test are cmlx's

# float64 is not a safetensors dtype in MLX (nor here): see the error test
NP_DTYPES = ["float32", "float16", "int8", "int16", "int32", "int64",
             "uint8", "uint16", "uint32", "uint64", "bool"]  # fmt: skip
SHAPES = [(), (0,), (5,), (3, 4), (2, 0, 3), (2, 3, 1, 4)]


def values(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return np.asarray(rng.random(shape) > 0.5)
    if dtype.startswith(("int", "uint")):
        return np.asarray(rng.integers(0, 100, shape).astype(dtype))
    return np.asarray((rng.standard_normal(shape) * 3).astype(dtype))


# ----------------------------------------------------------- safetensors


def test_safetensors_package_file_loads(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    arrays = {f"{d}_{i}": values(d, s, i) for i, s in enumerate(SHAPES) for d in NP_DTYPES}
    path = str(tmp_path / "pkg.safetensors")
    st.save_file(arrays, path, metadata={"format": "np", "note": "ünïcode"})
    got, meta = cx.load(path, return_metadata=True)
    assert meta == {"format": "np", "note": "ünïcode"}
    assert sorted(got) == sorted(arrays)
    for k, a in arrays.items():
        assert str(got[k].dtype).split(".")[-1] == a.dtype.name, k
        assert tuple(got[k].shape) == a.shape, k
        np.testing.assert_array_equal(np.array(got[k]), a, err_msg=k)


def test_safetensors_float64_is_rejected_as_mlx_does(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    path = str(tmp_path / "f64.safetensors")
    st.save_file({"a": np.ones(3)}, path)
    with pytest.raises(RuntimeError, match=r"\[safetensor\] unsupported dtype F64"):
        cx.load(path)
    if mlx_ref is not None:
        with pytest.raises(RuntimeError, match="unsupported dtype F64"):
            mlx_ref.load(path)


def test_cmlx_safetensors_loads_in_package(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    from safetensors import safe_open

    arrays = {f"{d}_{i}": values(d, s, i) for i, s in enumerate(SHAPES) for d in NP_DTYPES}
    arrays["strided"] = np.arange(24, dtype=np.float32).reshape(4, 6)[:, ::2]
    arrays["transposed"] = np.arange(12, dtype=np.int32).reshape(3, 4).T
    path = str(tmp_path / "ours.safetensors")
    cx.save_safetensors(path, {k: cx.array(v) for k, v in arrays.items()}, {"who": "cmlx"})
    loaded = st.load_file(path)
    for k, a in arrays.items():
        assert loaded[k].dtype == a.dtype and loaded[k].shape == a.shape, k
        np.testing.assert_array_equal(loaded[k], a, err_msg=k)
    with safe_open(path, "np") as f:
        assert f.metadata() == {"who": "cmlx"}


def test_safetensors_bfloat16_both_ways(tmp_path):
    pytest.importorskip("safetensors")
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file, save_file

    t = torch.tensor([[1.5, -2.0, 3.25], [0.0, 1e-3, -7.0]], dtype=torch.bfloat16)
    save_file({"w": t}, str(tmp_path / "t.safetensors"))
    w = cx.load(str(tmp_path / "t.safetensors"))["w"]
    assert w.dtype == cx.bfloat16 and w.shape == (2, 3)
    np.testing.assert_array_equal(np.array(w.astype(cx.float32)), t.float().numpy())

    cx.save_safetensors(str(tmp_path / "o.safetensors"), {"w": w * 2})
    back = load_file(str(tmp_path / "o.safetensors"))["w"]
    assert back.dtype == torch.bfloat16
    assert torch.equal(back, t * 2)


# ------------------------------------------------------------------ gguf

QUANT = {"Q4_0": 4, "Q4_1": 4, "Q8_0": 8}


def write_gguf_package_file(path, gguf, f64=True):
    """Every metadata value type, dense and quantized tensors. MLX 0.32's
    loader crashes (SIGSEGV) on a float64 scalar value, so the file
    compared with MLX leaves that one out (f64=False)."""
    rng = np.random.default_rng(7)
    w = gguf.GGUFWriter(path, "llama")
    w.add_uint8("k.u8", 200)
    w.add_int8("k.i8", -5)
    w.add_uint16("k.u16", 60000)
    w.add_int16("k.i16", -300)
    w.add_uint32("k.u32", 4_000_000_000)
    w.add_int32("k.i32", -70000)
    w.add_float32("k.f32", 0.5)
    w.add_uint64("k.u64", 2**40)
    w.add_int64("k.i64", -(2**40))
    if f64:
        w.add_float64("k.f64", 0.25)
    w.add_bool("k.bool", True)
    w.add_string("k.str", "hello")
    w.add_array("k.ints", [1, 2, 3])
    w.add_array("k.floats", [0.5, 1.5])
    w.add_array("k.strs", ["a", "bc"])
    dense = {
        "t.f32": rng.standard_normal((3, 64)).astype(np.float32),
        "t.f16": rng.standard_normal((2, 32)).astype(np.float16),
        "t.i32": np.arange(6, dtype=np.int32).reshape(2, 3),
    }
    for name, a in dense.items():
        w.add_tensor(name, a)
    quant = {}
    for qt in QUANT:
        q = getattr(gguf.GGMLQuantizationType, qt)
        x = rng.standard_normal((4, 64)).astype(np.float32)
        data = gguf.quants.quantize(x, q)
        w.add_tensor(f"q.{qt.lower()}.weight", data, raw_dtype=q)
        quant[qt] = gguf.quants.dequantize(data, q).reshape(4, 64)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return dense, quant


def test_gguf_package_file_loads(tmp_path):
    gguf = pytest.importorskip("gguf")
    path = str(tmp_path / "pkg.gguf")
    dense, quant = write_gguf_package_file(path, gguf)
    got, meta = cx.load(path, return_metadata=True)
    for name, a in dense.items():
        assert got[name].shape == a.shape, name
        np.testing.assert_array_equal(np.array(got[name]), a, err_msg=name)
    for qt, expect in quant.items():
        prefix = f"q.{qt.lower()}"
        w, s, b = got[prefix + ".weight"], got[prefix + ".scales"], got[prefix + ".biases"]
        deq = cx.dequantize(w, s, b, group_size=32, bits=QUANT[qt])
        np.testing.assert_allclose(np.array(deq), expect, rtol=1e-3, atol=1e-3, err_msg=qt)
    assert meta["k.str"] == "hello" and meta["k.strs"] == ["a", "bc"]
    assert meta["k.u8"].item() == 200 and meta["k.i8"].item() == -5
    assert meta["k.u32"].item() == 4_000_000_000 and meta["k.i64"].item() == -(2**40)
    assert meta["k.f64"].item() == 0.25 and meta["k.bool"].item() is True
    assert np.array(meta["k.ints"]).tolist() == [1, 2, 3]
    assert np.array(meta["k.floats"]).tolist() == [0.5, 1.5]
    if mlx_ref is not None:  # MLX's loader reads the same file the same way
        path = str(tmp_path / "pkg_for_mlx.gguf")
        write_gguf_package_file(path, gguf, f64=False)
        got, meta = cx.load(path, return_metadata=True)
        ref, ref_meta = mlx_ref.load(path, return_metadata=True)
        assert sorted(ref) == sorted(got)
        for k in ref:
            assert str(ref[k].dtype) == str(got[k].dtype).replace("cmlx.", "mlx."), k
            np.testing.assert_array_equal(np.array(ref[k]), np.array(got[k]), err_msg=k)
        assert sorted(ref_meta) == sorted(meta)


def test_cmlx_gguf_loads_in_package(tmp_path):
    gguf = pytest.importorskip("gguf")
    rng = np.random.default_rng(3)
    arrays = {
        "a.f32": rng.standard_normal((3, 5)).astype(np.float32),
        "a.f16": rng.standard_normal((2, 2, 4)).astype(np.float16),
        "a.i32": np.arange(7, dtype=np.int32),
        "a.i8": np.arange(-4, 4, dtype=np.int8).reshape(2, 4),
    }
    meta = {"general.name": "cmlx", "n": cx.array(3, dtype=cx.uint32),
            "v": cx.array([1.0, 2.0]), "names": ["x", "yz"]}  # fmt: skip
    path = str(tmp_path / "ours.gguf")
    cx.save_gguf(path, {k: cx.array(v) for k, v in arrays.items()}, meta)
    reader = gguf.GGUFReader(path)
    tensors = {t.name: t for t in reader.tensors}
    assert sorted(tensors) == sorted(arrays)
    for k, a in arrays.items():
        t = tensors[k]
        # the package reports GGUF's dims (fastest first) and the data row-major
        assert tuple(int(d) for d in t.shape) == a.shape[::-1], k
        np.testing.assert_array_equal(np.asarray(t.data).reshape(a.shape), a, err_msg=k)
    fields = reader.fields
    assert fields["general.name"].contents() == "cmlx"
    assert fields["n"].contents() == 3
    assert fields["v"].contents() == [1.0, 2.0]
    assert fields["names"].contents() == ["x", "yz"]


def test_empty_npy_with_huge_dims_loads(tmp_path):
    """Found by fuzz_npy: an empty array whose other dims multiply past
    int64 (row-major strides overflowed; UBSan caught it)."""
    shape = (2, 3, 20, 3, 29, 20, 329, 29, 20, 329, 0, 30, 3, 29, 329, 2)
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': %r, }" % (shape,)
    header += " " * (-(10 + len(header) + 1) % 64) + "\n"
    path = tmp_path / "e.npy"
    path.write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
    a = cx.load(str(path))
    assert a.shape == shape and a.size == 0
    b = a + 1
    cx.eval(b)
    assert b.shape == shape and b.size == 0
