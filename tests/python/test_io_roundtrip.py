"""Valid files round-trip exactly, both ways, in every format.

cmlx writes a file and NumPy (np.load), the `safetensors` package, the
`gguf` package and real MLX read it; NumPy, those packages and MLX write
one and cmlx reads it.  Every dtype a format holds, 0-d, empty,
transposed and sliced arrays, compressible (zeros) and incompressible
(random bytes) data, many members, and sizes on either side of zlib's
and the reader's buffer boundaries (up to tens of MB, which stay fast).
Values are compared as bits: NaN payloads, -0.0 and bfloat16 included.
A reference that is not installed is skipped.  Multi-GB files are in
test_io_large.py (`make test-large`)."""

import io
import zipfile

import numpy as np
import pytest

from conftest import DTYPES, dtype_name, mlx_ref, mx

UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
SIZE = {"bool_": 1, "uint8": 1, "uint16": 2, "uint32": 4, "uint64": 8, "int8": 1, "int16": 2,
        "int32": 4, "int64": 8, "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8,
        "complex64": 8}  # fmt: skip
# What each format holds (MLX's writers): safetensors has no float64, GGUF
# five dtypes (MLX's loader reads BF16 tensors as float16).
FORMAT_DTYPES = {
    "npy": DTYPES, "npz": DTYPES, "npz_deflated": DTYPES,
    "safetensors": [d for d in DTYPES if d != "float64"],
    "gguf": ["float32", "float16", "int8", "int16", "int32"],
}  # fmt: skip
FORMATS = list(FORMAT_DTYPES)
EXT = {"npy": "npy", "npz": "npz", "npz_deflated": "npz", "safetensors": "safetensors",
       "gguf": "gguf"}  # fmt: skip
SHAPES = [(), (0,), (3, 0, 2), (1,), (7,), (5, 6), (2, 3, 4)]


# ---------------------------------------------------------------- values as bits

def bits(name, shape, fill="random", seed=0):
    """A NumPy array of unsigned ints holding dtype `name`'s raw bits."""
    n = int(np.prod(shape, dtype=np.int64)) * SIZE[name]
    if fill == "zeros":
        raw = np.zeros(n, np.uint8)
    else:
        raw = np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8)
        if name == "bool_":
            raw &= 1
    return raw.view(UINT[SIZE[name]]).reshape(shape)


def c_order(b):
    """b row-major (np.ascontiguousarray would make a 0-d array 1-d)."""
    return np.array(b, order="C")


def from_bits(b, name, mod=None):
    """The array of dtype `name` (of the subject or `mod`) with bits b."""
    mod = mod if mod is not None else mx
    return mod.array(c_order(b)).view(getattr(mod, name))


def bits_of(a):
    """Raw bits of a subject/oracle array, a NumPy array or a torch tensor."""
    if isinstance(a, np.ndarray):
        return c_order(a).view(UINT[a.dtype.itemsize])
    if type(a).__module__.startswith("torch"):
        import torch

        t = a.contiguous()
        signed = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
        return bits_of(t.view(signed[t.element_size()]).numpy())
    mod = mx if isinstance(a, mx.array) else mlx_ref
    name = dtype_name(a.dtype)
    return np.array(a.view(getattr(mod, f"uint{8 * SIZE[name]}")))


def check(got, want_bits, name, where=""):
    """got (any array kind) has dtype `name` and exactly the bits want_bits."""
    if isinstance(got, np.ndarray):
        pass  # NumPy's dtype is checked by the caller where it has one
    elif type(got).__module__.startswith("torch"):
        pass
    else:
        assert dtype_name(got.dtype) == name, (where, got.dtype, name)
    assert tuple(got.shape) == tuple(want_bits.shape), (where, got.shape, want_bits.shape)
    np.testing.assert_array_equal(bits_of(got), want_bits, err_msg=where)


def layouts(name, seed=0):
    """(key, bits, subject array) for 0-d, empty, contiguous, transposed and
    sliced arrays of dtype `name`, random and zero."""
    out = []
    for i, shape in enumerate(SHAPES):
        b = bits(name, shape, seed=seed + i)
        out.append((f"c{i}", b, from_bits(b, name)))
    b = bits(name, (6, 5), seed=seed + 50)
    x = from_bits(b, name)
    out.append(("transposed", b.T, x.T))
    out.append(("sliced", b[1:, ::2], x[1:, ::2]))
    b3 = bits(name, (4, 3, 5), seed=seed + 51)
    x3 = from_bits(b3, name)
    out.append(("strided", b3[::-2, :, 1::2].transpose(2, 0, 1),
                mx.transpose(x3[::-2, :, 1::2], (2, 0, 1))))
    z = bits(name, (33, 17), "zeros")
    out.append(("zeros", z, from_bits(z, name)))
    return out


# ---------------------------------------------------------------- writers / readers

def save(fmt, path, arrays, mod=None):
    """Write arrays (name -> subject/oracle array) with `mod`'s writer."""
    mod = mod if mod is not None else mx
    if fmt == "npy":
        ((_, a),) = arrays.items()
        mod.save(path, a)
    elif fmt == "npz":
        mod.savez(path, **arrays)
    elif fmt == "npz_deflated":
        mod.savez_compressed(path, **arrays)
    elif fmt == "safetensors":
        mod.save_safetensors(path, arrays)
    else:
        mod.save_gguf(path, arrays)


def load(path, mod=None):
    mod = mod if mod is not None else mx
    out = mod.load(path)
    return {"x": out} if isinstance(out, mod.array) else out


def numpy_writes(fmt, path, arrays):
    """NumPy writes its formats (bfloat16 as MLX's '<V2')."""
    if fmt == "npy":
        ((_, a),) = arrays.items()
        np.save(path, a)
    elif fmt == "npz":
        np.savez(path, **arrays)
    else:
        np.savez_compressed(path, **arrays)


def as_numpy(b, name):
    """The NumPy array NumPy itself would hold for dtype `name`'s bits."""
    b = c_order(b)
    if name == "bfloat16":
        return b.view("V2")
    return b.view({"bool_": np.bool_}.get(name, name))


def one_file_each(fmt, members):
    """npy holds one array per file; the others hold them all."""
    if fmt == "npy":
        return [{k: v} for k, v in members.items()]
    return [members]


# ---------------------------------------------------------------- cmlx writes

@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", DTYPES)
def test_cmlx_writes_others_read(tmp_path, fmt, name):
    if name not in FORMAT_DTYPES[fmt]:
        pytest.skip(f"{fmt} holds no {name}")
    cases = layouts(name, seed=DTYPES.index(name))
    if fmt == "gguf":  # GGUF tensors have at least one element (MLX refuses 0-d and empty)
        cases = [c for c in cases if c[1].size > 0 and c[1].ndim > 0]
    want = {k: b for k, b, _ in cases}
    for group in one_file_each(fmt, {k: a for k, _, a in cases}):
        path = str(tmp_path / f"w.{EXT[fmt]}")
        save(fmt, path, group)
        got = load(path)
        if fmt == "npy":
            got = {next(iter(group)): got["x"]}
        assert sorted(got) == sorted(group)
        for k, a in got.items():
            check(a, want[k], name, f"cmlx {k}")
        read_with_references(fmt, path, name, {k: want[k] for k in group})


def read_with_references(fmt, path, name, want):
    if fmt.startswith("np"):
        got = np.load(path)
        got = {next(iter(want)): got} if fmt == "npy" else dict(got)
        assert sorted(got) == sorted(want)
        for k, v in got.items():
            assert v.dtype == as_numpy(want[k], name).dtype, (k, v.dtype)
            check(v, want[k], name, f"numpy {k}")
    elif fmt == "safetensors":
        got = read_safetensors_package(path, name)
        if got is not None:
            assert sorted(got) == sorted(want)
            for k, v in got.items():
                check(v, want[k], name, f"safetensors {k}")
    else:
        gguf = pytest.importorskip("gguf")
        reader = gguf.GGUFReader(path)
        tensors = {t.name: t for t in reader.tensors}
        assert sorted(tensors) == sorted(want)
        for k, t in tensors.items():
            # GGUF's dims run fastest first; the data is row-major
            assert tuple(int(d) for d in t.shape)[::-1] == want[k].shape, k
            v = np.asarray(t.data).reshape(want[k].shape)
            assert v.dtype == np.dtype(name), (k, v.dtype)
            check(v, want[k], name, f"gguf {k}")
    if mlx_ref is not None:
        got = load(path, mlx_ref)
        if fmt == "npy":
            got = {next(iter(want)): got["x"]}
        assert sorted(got) == sorted(want)
        for k, v in got.items():
            check(v, want[k], name, f"mlx {k}")


def read_safetensors_package(path, name):
    """The package's NumPy reader (PyTorch's for bfloat16, which NumPy lacks)."""
    if name == "bfloat16":
        try:
            import safetensors.torch as st
        except ImportError:
            return None
        return st.load_file(path)
    try:
        import safetensors.numpy as st
    except ImportError:
        return None
    return st.load_file(path)


# ---------------------------------------------------------------- others write

@pytest.mark.parametrize("fmt", ["npy", "npz", "npz_deflated"])
@pytest.mark.parametrize("name", DTYPES)
def test_numpy_writes_cmlx_reads(tmp_path, fmt, name):
    cases = layouts(name, seed=7 + DTYPES.index(name))
    members = {k: as_numpy(b, name) for k, b, _ in cases}
    # NumPy writes a transposed array as fortran_order: keep one such
    members["fortran"] = np.asfortranarray(as_numpy(bits(name, (4, 7), seed=3), name))
    for group in one_file_each(fmt, members):
        path = str(tmp_path / f"n.{EXT[fmt]}")
        numpy_writes(fmt, path, group)
        got = load(path)
        if fmt == "npy":
            got = {next(iter(group)): got["x"]}
        assert sorted(got) == sorted(group)
        for k, a in got.items():
            check(a, bits_of(group[k]), name, f"numpy -> cmlx {k}")


@pytest.mark.parametrize("name", FORMAT_DTYPES["safetensors"])
def test_safetensors_package_writes_cmlx_reads(tmp_path, name):
    cases = layouts(name, seed=11)
    path = str(tmp_path / "p.safetensors")
    if name == "bfloat16":
        torch = pytest.importorskip("torch")
        st = pytest.importorskip("safetensors.torch")
        tensors = {k: torch.from_numpy(c_order(b).view(np.int16)).view(torch.bfloat16)
                   for k, b, _ in cases}
    else:
        st = pytest.importorskip("safetensors.numpy")
        tensors = {k: as_numpy(b, name) for k, b, _ in cases}
    st.save_file(tensors, path)
    got = load(path)
    assert sorted(got) == sorted(tensors)
    for k, b, _ in cases:
        check(got[k], c_order(b), name, f"safetensors -> cmlx {k}")


@pytest.mark.parametrize("name", FORMAT_DTYPES["gguf"])
def test_gguf_package_writes_cmlx_reads(tmp_path, name):
    gguf = pytest.importorskip("gguf")
    cases = [c for c in layouts(name, seed=13) if c[1].size > 0 and c[1].ndim > 0]
    path = str(tmp_path / "p.gguf")
    w = gguf.GGUFWriter(path, "llama")
    for k, b, _ in cases:
        w.add_tensor(k, c_order(as_numpy(b, name)))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    got = load(path)
    assert sorted(got) == sorted(k for k, _, _ in cases)
    for k, b, _ in cases:
        check(got[k], c_order(b), name, f"gguf -> cmlx {k}")


@pytest.mark.skipif(mlx_ref is None, reason="real MLX (mlx.core) is not importable")
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", DTYPES)
def test_mlx_writes_cmlx_reads(tmp_path, fmt, name):
    if name not in FORMAT_DTYPES[fmt]:
        pytest.skip(f"{fmt} holds no {name}")
    cases = layouts(name, seed=17)
    if fmt == "gguf":
        cases = [c for c in cases if c[1].size > 0 and c[1].ndim > 0]
    arrays = {k: from_bits(b, name, mlx_ref) for k, b, _ in cases}
    # MLX's own layouts (its save makes transposed arrays fortran_order)
    x = from_bits(bits(name, (6, 5), seed=19), name, mlx_ref)
    arrays["mlx_t"] = x.T
    want = {k: b for k, b, _ in cases}
    want["mlx_t"] = bits(name, (6, 5), seed=19).T
    for group in one_file_each(fmt, arrays):
        path = str(tmp_path / f"m.{EXT[fmt]}")
        save(fmt, path, group, mlx_ref)
        got = load(path)
        if fmt == "npy":
            got = {next(iter(group)): got["x"]}
        assert sorted(got) == sorted(group)
        for k, a in got.items():
            check(a, want[k], name, f"mlx -> cmlx {k}")


# ---------------------------------------------------------------- sizes and counts

BIG_ZEROS = [(1024, 4096), (2097152,), (512, 4096), (3, 1000, 1000)]


@pytest.mark.parametrize("shape", BIG_ZEROS)
def test_deflated_zeros_round_trip(tmp_path, shape):
    """Zeros deflate ~1000:1, so the last compressed bytes inflate to far
    more than one output buffer: once reported as a truncated member."""
    path = str(tmp_path / "z.npz")
    mx.savez_compressed(path, w=mx.zeros(shape))
    got = mx.load(path)["w"]
    assert got.shape == shape and got.dtype == mx.float32
    assert not mx.any(got).item()
    np.testing.assert_array_equal(np.load(path)["w"], np.zeros(shape, np.float32))
    np.savez_compressed(path, w=np.zeros(shape, np.float32))
    assert not mx.any(mx.load(path)["w"]).item()


# Member sizes on each side of the inflater's 64 KiB input chunk and its
# 1 MiB first output buffer (the .npy header is 128 bytes here).
EDGES = [65536 - 128 - 1, 65536 - 128, 65536 - 128 + 1, (1 << 20) - 128 - 1, (1 << 20) - 128,
         (1 << 20) - 128 + 1, (1 << 21) + 7]  # fmt: skip


@pytest.mark.parametrize("fmt", ["npz", "npz_deflated", "safetensors", "npy"])
def test_buffer_boundaries(tmp_path, fmt):
    arrays, want = {}, {}
    for i, n in enumerate(EDGES):
        for fill in ["random", "zeros"]:
            b = bits("uint8", (n,), fill, seed=i)
            if fill == "zeros":  # mostly zeros with a tail, so both ends matter
                b = b.copy()
                b[-3:] = [1, 2, 3]
            key = f"{fill}_{n}"
            arrays[key], want[key] = from_bits(b, "uint8"), b
    # several MB of incompressible data in one member
    b = bits("float32", (3, 1 << 19), seed=99)
    arrays["big_random"], want["big_random"] = from_bits(b, "float32"), b
    for group in one_file_each(fmt, arrays):
        path = str(tmp_path / f"b.{EXT[fmt]}")
        save(fmt, path, group)
        got = load(path)
        if fmt == "npy":
            got = {next(iter(group)): got["x"]}
        for k, a in got.items():
            check(a, want[k], dtype_name(a.dtype), k)
        if fmt.startswith("npz"):
            with np.load(path) as z:
                for k in group:
                    np.testing.assert_array_equal(bits_of(z[k]), want[k], err_msg=k)


@pytest.mark.parametrize("fmt", ["npz", "npz_deflated", "safetensors", "gguf"])
def test_many_members(tmp_path, fmt):
    names = ["float32", "int8", "float16", "int32"] if fmt == "gguf" else DTYPES
    arrays, want = {}, {}
    for i in range(300):
        name = names[i % len(names)]
        if fmt == "safetensors" and name == "float64":
            name = "int64"
        b = bits(name, (i % 5 + 1, i % 7 + 1), seed=i)
        arrays[f"layer.{i}.w"], want[f"layer.{i}.w"] = from_bits(b, name), (b, name)
    path = str(tmp_path / f"many.{EXT[fmt]}")
    save(fmt, path, arrays)
    got = load(path)
    assert list(got) == list(arrays) or sorted(got) == sorted(arrays)
    for k, (b, name) in want.items():
        check(got[k], b, name, k)
    if fmt.startswith("npz"):
        with np.load(path) as z:
            assert sorted(z.files) == sorted(arrays)
            for k in ["layer.0.w", "layer.151.w", "layer.299.w"]:
                np.testing.assert_array_equal(bits_of(z[k]), want[k][0])
    if mlx_ref is not None:
        ref = load(path, mlx_ref)
        assert sorted(ref) == sorted(arrays)
        for k in ["layer.0.w", "layer.151.w", "layer.299.w"]:
            check(ref[k], *want[k], k)


def test_npz_zip64_members_read(tmp_path):
    """Python's zipfile writes ZIP64 extra fields when told to (force_zip64):
    such small members load as well."""
    path = tmp_path / "z64.npz"
    x = np.arange(1000, dtype=np.int64)
    for method in [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED]:
        with zipfile.ZipFile(path, "w", compression=method) as z:
            for k in ["a", "b"]:
                with z.open(f"{k}.npy", "w", force_zip64=True) as f:
                    buf = io.BytesIO()
                    np.save(buf, x)
                    f.write(buf.getvalue())
        got = mx.load(str(path))
        assert sorted(got) == ["a", "b"]
        np.testing.assert_array_equal(np.array(got["b"]), x)
