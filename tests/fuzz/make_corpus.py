#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets: small valid files of each
format, covering its dtypes, shapes and header variants, under
tests/fuzz/corpus/<format>/ (committed; rerun after changing a writer).

    PYTHONPATH=build/pkg .venv/bin/python tests/fuzz/make_corpus.py

Files come from cmlx's own writers and, where installed, from NumPy, the
`safetensors` package and the `gguf` package, so the seeds hold the layouts
other writers produce too (gguf: Q4_0, Q4_1, Q8_0 tensors and every
metadata value type)."""

import io
import os
import zipfile

import numpy as np

import cmlx.core as mx

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus")


def small_arrays():
    rng = np.random.default_rng(0)
    return {
        "f32": rng.standard_normal((3, 4)).astype(np.float32),
        "f16": rng.standard_normal(5).astype(np.float16),
        "i8": np.arange(-3, 3, dtype=np.int8).reshape(2, 3),
        "u64": np.arange(4, dtype=np.uint64),
        "b": np.array([True, False, True]),
        "scalar": np.array(2.5, np.float32),
        "empty": np.zeros((0, 3), np.int32),
    }


def write(fmt, name, data):
    os.makedirs(os.path.join(OUT, fmt), exist_ok=True)
    with open(os.path.join(OUT, fmt, name), "wb") as f:
        f.write(data)


def tmp(path_suffix):
    return os.path.join(OUT, "_tmp" + path_suffix)


def npy_seeds():
    from numpy.lib import format as npf

    arrays = small_arrays()
    arrays.update(
        c64=np.array([1 + 2j, 3 - 1j], np.complex64),
        be=np.arange(6, dtype=">i4").reshape(3, 2),
        fortran=np.asfortranarray(np.arange(6, dtype=np.float64).reshape(2, 3)),
    )
    for k, a in arrays.items():
        buf = io.BytesIO()
        np.save(buf, a)
        write("npy", f"numpy_{k}.npy", buf.getvalue())
    buf = io.BytesIO()
    npf.write_array(buf, arrays["f32"], version=(2, 0))
    write("npy", "numpy_v2.npy", buf.getvalue())
    for k in ("f32", "b", "scalar"):
        mx.save(tmp(".npy"), mx.array(arrays[k]))
        with open(tmp(".npy"), "rb") as f:
            write("npy", f"cmlx_{k}.npy", f.read())


def npz_seeds():
    arrays = small_arrays()
    for name, fn in (("numpy.npz", np.savez), ("numpy_deflated.npz", np.savez_compressed)):
        buf = io.BytesIO()
        fn(buf, **arrays)
        write("npz", name, buf.getvalue())
    cm = {k: mx.array(v) for k, v in arrays.items()}
    for name, fn in (("cmlx.npz", mx.savez), ("cmlx_deflated.npz", mx.savez_compressed)):
        fn(tmp(".npz"), **cm)
        with open(tmp(".npz"), "rb") as f:
            write("npz", name, f.read())
    buf = io.BytesIO()  # a zip64 directory record, as zipfile writes on request
    with zipfile.ZipFile(buf, "w", allowZip64=True) as z:
        with z.open("a.npy", "w", force_zip64=True) as m:
            np.save(m, arrays["f32"])
    write("npz", "zip64.npz", buf.getvalue())


def safetensors_seeds():
    arrays = {k: mx.array(v) for k, v in small_arrays().items()}
    arrays["bf16"] = mx.array([1.0, -2.0, 0.5, 3.0], dtype=mx.bfloat16)
    arrays["c64"] = mx.array(np.array([1 + 2j], np.complex64))
    mx.save_safetensors(tmp(".safetensors"), arrays, metadata={"format": "mlx", "k": "v"})
    with open(tmp(".safetensors"), "rb") as f:
        write("safetensors", "cmlx_all.safetensors", f.read())
    mx.save_safetensors(tmp(".safetensors"), {"x": arrays["f32"]})
    with open(tmp(".safetensors"), "rb") as f:
        write("safetensors", "cmlx_one.safetensors", f.read())
    try:
        from safetensors.numpy import save
    except ImportError:
        return
    np_arrays = {k: v for k, v in small_arrays().items() if k != "b"}
    write("safetensors", "pkg.safetensors", save(np_arrays, metadata={"who": "safetensors"}))


def gguf_seeds():
    arrays = {
        "f32": mx.array(np.arange(8, dtype=np.float32).reshape(2, 4)),
        "f16": mx.array(np.arange(4, dtype=np.float16)),
        "i32": mx.array(np.arange(3, dtype=np.int32)),
    }
    meta = {"general.name": "seed", "n": mx.array(3), "v": mx.array([1.0, 2.0]), "s": ["a", "b"]}
    mx.save_gguf(tmp(".gguf"), arrays, meta)
    with open(tmp(".gguf"), "rb") as f:
        write("gguf", "cmlx.gguf", f.read())
    try:
        import gguf
    except ImportError:
        return
    rng = np.random.default_rng(1)
    w = gguf.GGUFWriter(tmp(".gguf"), "llama")
    w.add_uint8("u8", 1)
    w.add_int8("i8", -1)
    w.add_uint16("u16", 2)
    w.add_int16("i16", -2)
    w.add_uint32("u32", 3)
    w.add_int32("i32", -3)
    w.add_float32("f32", 0.5)
    w.add_uint64("u64", 4)
    w.add_int64("i64", -4)
    w.add_float64("f64", 0.25)
    w.add_bool("flag", True)
    w.add_string("str", "text")
    w.add_array("ints", [1, 2, 3])
    w.add_array("strs", ["x", "yz"])
    w.add_tensor("t.f32", rng.standard_normal((2, 32)).astype(np.float32))
    w.add_tensor("t.f16", rng.standard_normal(32).astype(np.float16))
    for qt in ("Q4_0", "Q4_1", "Q8_0", "BF16"):
        q = getattr(gguf.GGMLQuantizationType, qt)
        data = gguf.quants.quantize(rng.standard_normal((2, 32)).astype(np.float32), q)
        w.add_tensor(f"t.{qt.lower()}", data, raw_dtype=q)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    with open(tmp(".gguf"), "rb") as f:
        write("gguf", "pkg_all_types.gguf", f.read())


def mlxfn_seeds():
    """Exported functions: plain, shapeless, several traces, kwargs, indexing."""
    import cmlx.core as cx

    def export(name, fun, *args, **kwargs):
        path = tmp(".mlxfn")
        cx.export_function(path, fun, *args, **kwargs)
        with open(path, "rb") as f:
            write("mlxfn", name, f.read())

    x = cx.array([[1.0, 2.0], [3.0, 4.0]])
    export("add_mul.mlxfn", lambda a, b: (a + b) * 2.0, x, x)
    export("shapeless.mlxfn", lambda a: cx.exp(a).sum(axis=-1), x, shapeless=True)
    export("kwargs.mlxfn", lambda a, *, w: a @ w, x, w=x.T)
    idx = cx.array([1, 0])
    export("gather_scatter.mlxfn", lambda a, i: a[i].at[0].add(1.0), x, idx)
    path = tmp(".mlxfn")
    with cx.exporter(path, lambda a: a.reshape(-1) * 3) as ex:
        ex(x)
        ex(cx.zeros((3,)))
    with open(path, "rb") as f:
        write("mlxfn", "two_traces.mlxfn", f.read())


def main():
    for fmt in ("npy", "npz", "safetensors", "gguf", "mlxfn"):
        # generated seeds are rewritten; regress_* inputs (crashes found) stay
        d = os.path.join(OUT, fmt)
        for name in os.listdir(d) if os.path.isdir(d) else ():
            if not name.startswith("regress_"):
                os.remove(os.path.join(d, name))
    os.makedirs(OUT, exist_ok=True)
    try:
        npy_seeds()
        npz_seeds()
        safetensors_seeds()
        gguf_seeds()
        mlxfn_seeds()
    finally:
        for name in os.listdir(OUT):
            if name.startswith("_tmp"):
                os.remove(os.path.join(OUT, name))
    for fmt in sorted(os.listdir(OUT)):
        files = os.listdir(os.path.join(OUT, fmt))
        size = sum(os.path.getsize(os.path.join(OUT, fmt, f)) for f in files)
        print(f"{fmt}: {len(files)} seeds, {size} bytes")


if __name__ == "__main__":
    main()
