"""File formats: save and load a 64 MiB float32 array as .npy and
.safetensors, an .npz of 16 MiB (stored and deflated), and a GGUF file of
64 MiB.  Files live in /tmp (the page cache is warm after the first run,
so this measures the parsers and copies, not the disk).  Loads are
evaluated, so the bytes are really read.  NumPy has .npy and .npz only;
PyTorch is not compared."""

import os
import tempfile

import numpy as np

from harness import workload

_DIR = tempfile.mkdtemp(prefix="cmlx_bench_io_")
_DATA = {}


def data(n):
    if n not in _DATA:
        _DATA[n] = np.random.default_rng(5).standard_normal(n).astype(np.float32)
    return _DATA[n]


def path(fw, name):
    return os.path.join(_DIR, f"{fw.name}_{name}")


BIG = 16 << 20  # float32 elements: 64 MiB
SMALL = 4 << 20  # 16 MiB


@workload("save .npy 64 MiB", family="io")
def save_npy(fw):
    if fw.name == "torch":
        return None
    if fw.name == "numpy":
        x = data(BIG)
        return lambda: np.save(path(fw, "a.npy"), x)
    a = fw.from_numpy(data(BIG))
    fw.run(a)
    return lambda: fw.mod.save(path(fw, "a.npy"), a)


@workload("load .npy 64 MiB", family="io")
def load_npy(fw):
    if fw.name == "torch":
        return None
    p = path(fw, "l.npy")
    np.save(p, data(BIG))
    if fw.name == "numpy":
        return lambda: np.load(p)
    return lambda: fw.run(fw.mod.load(p))


def round_trip(fw, x, fname, save, key="a"):
    """Save x with save(mod, path, array), then load it back and evaluate;
    None for frameworks without the format."""
    if fw.name == "torch":
        return None
    p = path(fw, fname)
    if fw.name == "numpy":
        if save is None:
            return None
        return lambda: (save(np, p, x), np.load(p)[key])[1]
    a = fw.from_numpy(x)
    fw.run(a)
    mx = fw.mod
    return lambda: (save(mx, p, a), fw.run(mx.load(p)[key]))[1]


@workload("save+load .safetensors 64 MiB", family="io")
def safetensors(fw):
    if fw.name == "numpy":
        return None
    return round_trip(fw, data(BIG), "s.safetensors", lambda m, p, a: m.save_safetensors(p, {"a": a}))


@workload("savez+load .npz 16 MiB", family="io")
def npz(fw):
    return round_trip(fw, data(SMALL), "z.npz", lambda m, p, a: m.savez(p, a=a))


@workload("savez_compressed+load .npz 16 MiB", family="io")
def npz_compressed(fw):
    x = np.round(data(SMALL), 1)  # compressible
    return round_trip(fw, x, "zc.npz", lambda m, p, a: m.savez_compressed(p, a=a))


@workload("save_gguf+load .gguf 64 MiB", family="io")
def gguf(fw):
    if fw.name == "numpy":
        return None
    return round_trip(fw, data(BIG), "g.gguf", lambda m, p, a: m.save_gguf(p, {"a": a}))
