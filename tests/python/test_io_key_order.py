"""The order of names in loaded and saved files is MLX's.

MLX holds arrays in a std::unordered_map, so the dict mx.load returns, the
members of an npz and the tensors of a GGUF file mx.savez / mx.save_gguf
write follow that map's order, and model code can depend on it (a
sanitize that keeps the first of two tied weights).  cmlx reproduces the
order (src/io/key_order.c).  Checked two ways: against a compiled
std::unordered_map (where g++ is present), and against real MLX (where it
is installed), which must also write byte-identical safetensors and GGUF
files."""

import os
import random
import shutil
import struct
import subprocess
import zipfile

import numpy as np
import pytest

from conftest import mlx_ref, mx, needs_oracle

# sizes on both sides of each rehash of libstdc++'s table (13, 29, 59, 127, 257)
SIZES = [1, 2, 3, 13, 14, 15, 29, 30, 59, 60, 127, 128, 257, 258, 700]

CPP = r"""
#include <iostream>
#include <string>
#include <unordered_map>
int main() {
  std::unordered_map<std::string, int> m;
  std::string k;
  while (std::getline(std::cin, k)) m.insert({k, 0});
  for (auto &p : m) std::cout << p.first << "\n";
}
"""


def _keys(n, seed):
    rng = random.Random(seed)
    alphabet = "abcdefghijklmnopqrstuvwxyz._0123456789"
    keys = []
    while len(keys) < n:
        k = "model." + "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 30)))
        if k not in keys:
            keys.append(k)
    return keys


@pytest.fixture(scope="module")
def std_order(tmp_path_factory):
    """keys -> the order a std::unordered_map filled with them iterates."""
    gxx = shutil.which("g++")
    if not gxx:
        pytest.skip("needs g++ to build the std::unordered_map reference")
    d = tmp_path_factory.mktemp("um")
    (d / "um.cpp").write_text(CPP)
    subprocess.run([gxx, "-O1", "-o", str(d / "um"), str(d / "um.cpp")], check=True)

    def order(keys):
        out = subprocess.run([str(d / "um")], input="".join(k + "\n" for k in keys),
                             capture_output=True, text=True, check=True).stdout
        return out.split("\n")[:-1]

    return order


def _arrays(m, keys):
    return {k: m.array([i], dtype=m.int32) for i, k in enumerate(keys)}


@pytest.mark.parametrize("n", SIZES)
def test_safetensors_load_order_is_the_maps(tmp_path, std_order, n):
    keys = _keys(n, n)
    p = str(tmp_path / "a.safetensors")
    mx.save_safetensors(p, _arrays(mx, keys), metadata={k: "v" for k in keys[:20]})
    got, meta = mx.load(p, return_metadata=True)
    # MLX fills its map from the header's keys in sorted order
    assert list(got) == std_order(sorted(keys))
    assert list(meta) == std_order(sorted(keys[:20]))
    assert all(got[k].item() == i for i, k in enumerate(keys))


@pytest.mark.parametrize("n", SIZES)
def test_npz_load_order_is_the_maps_over_the_file_order(tmp_path, std_order, n):
    keys = _keys(n, 100 + n)
    p = str(tmp_path / "a.npz")
    np.savez(p, **{k: np.array([i], np.int32) for i, k in enumerate(keys)})  # keeps keys' order
    got = mx.load(p)
    assert list(got) == std_order(keys)
    assert all(got[k].item() == i for i, k in enumerate(keys))


@pytest.mark.parametrize("n", [1, 14, 30, 128])
def test_savez_and_save_gguf_write_in_the_maps_order(tmp_path, std_order, n):
    keys = _keys(n, 200 + n)
    p = str(tmp_path / "a.npz")
    mx.savez(p, **_arrays(mx, keys))
    assert [m[:-4] for m in zipfile.ZipFile(p).namelist()] == std_order(keys)
    np_loaded = np.load(p)
    assert all(np_loaded[k][0] == i for i, k in enumerate(keys))
    # the loaded order is the map's over the file's, as in MLX
    assert list(mx.load(p)) == std_order(std_order(keys))
    g = str(tmp_path / "a.gguf")
    mx.save_gguf(g, _arrays(mx, keys), {"m" + k: "x" for k in keys[:5]})
    arrays, meta = mx.load(g, return_metadata=True)
    assert list(arrays) == std_order(std_order(keys))
    assert list(meta) == std_order(std_order(["m" + k for k in keys[:5]]))


def test_safetensors_header_is_sorted_and_unpadded(tmp_path):
    p = str(tmp_path / "h.safetensors")
    mx.save_safetensors(p, {"b": mx.zeros((2, 3)), "Z": mx.zeros((0,)), "a\n": mx.ones(2)})
    b = open(p, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    header = b[8:8 + n].decode()
    assert header.startswith('{"Z":{"data_offsets":')
    assert '"__metadata__":null,"a\\n":' in header
    assert header.endswith('"shape":[2,3]}}')
    assert len(b) == 8 + n + 24 + 8  # no padding: the data follows at once
    got = mx.load(p)
    assert got["b"].shape == (2, 3) and got["Z"].shape == (0,)
    assert np.array_equal(np.array(got["a\n"]), np.ones(2, np.float32))


@needs_oracle
@pytest.mark.parametrize("n", [3, 14, 30, 60, 300])
def test_same_order_and_bytes_as_mlx(tmp_path, n):
    keys = _keys(n, 300 + n)
    meta = {k: str(i) for i, k in enumerate(keys[:15])}
    for name, m in (("mlx", mlx_ref), ("cmlx", mx)):
        d = _arrays(m, keys)
        m.savez(str(tmp_path / f"{name}.npz"), **d)
        m.save_safetensors(str(tmp_path / f"{name}.safetensors"), d, metadata=meta)
        m.save_gguf(str(tmp_path / f"{name}.gguf"), d, meta)
    for ext in ("safetensors", "gguf"):
        a = open(tmp_path / f"mlx.{ext}", "rb").read()
        assert a == open(tmp_path / f"cmlx.{ext}", "rb").read(), ext
    names = [zipfile.ZipFile(tmp_path / f"{s}.npz").namelist() for s in ("mlx", "cmlx")]
    assert names[0] == names[1]
    for ext in ("npz", "safetensors", "gguf"):
        for src in ("mlx", "cmlx"):
            path = str(tmp_path / f"{src}.{ext}")
            if ext == "npz":
                ref, got = mlx_ref.load(path), mx.load(path)
                assert list(ref) == list(got), (ext, src)
            else:
                ref, got = mlx_ref.load(path, return_metadata=True), mx.load(path, return_metadata=True)
                assert list(ref[0]) == list(got[0]), (ext, src)
                assert list(ref[1]) == list(got[1]), (ext, src)


@needs_oracle
def test_escaped_names_match_mlx_bytes(tmp_path):
    d = {"tab\there": 1, 'q"uote': 2, "back\\slash": 3, "ctl\x01": 4, "é": 5, "cr\r\b\f": 6}
    for name, m in (("mlx", mlx_ref), ("cmlx", mx)):
        m.save_safetensors(str(tmp_path / f"{name}.safetensors"),
                           {k: m.array([v]) for k, v in d.items()}, metadata={"x\ny": "\x02"})
    assert (open(tmp_path / "mlx.safetensors", "rb").read()
            == open(tmp_path / "cmlx.safetensors", "rb").read())
    got = mx.load(str(tmp_path / "mlx.safetensors"))
    assert {k: v.item() for k, v in got.items()} == d
