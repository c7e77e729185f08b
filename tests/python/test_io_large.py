"""Multi-GB files round-trip: a 2.5 GB array (past 2 GiB, where 32-bit
offsets break) through .npy, stored and deflated .npz and safetensors,
written by cmlx and read by NumPy / the safetensors package / MLX, and
the other way; and .npz archives past 4 GiB, which need ZIP64 (offsets
in one archive of two members, then the sizes of one 4.4 GB member).

Slow (a few minutes: every case writes and reads GBs) and run only with
CMLX_TEST_LARGE=1, by `make test-large` (which .ci/run calls); the default
`make test` skips it.  Memory is the limit (the machine has 24 GiB, shared):
each case holds at most two arrays of its size and frees them at once
(del, then clear_cache, which returns cmlx's cached buffers); files are
deleted when a case ends.  A deflated member past 4 GiB is left out: it is
inflated into memory and then copied into its array (two of 4.4 GB), and
deflating it alone takes about a minute here."""

import gc
import os
import zipfile

import numpy as np
import pytest

from conftest import mlx_ref, mx

pytestmark = pytest.mark.skipif(not os.environ.get("CMLX_TEST_LARGE"),
                                reason="multi-GB files: CMLX_TEST_LARGE=1 (make test-large)")

N = 625_000_000  # uint32: 2.5 GB
N_OVER_4GIB = 1_100_000_000  # uint32: 4.4 GB
CHUNK = 1 << 26


def free(*_):
    """Drop cmlx's cached buffers after the caller's `del`."""
    gc.collect()
    mx.clear_cache()


@pytest.fixture
def big(tmp_path):
    """A path factory whose files are removed when the case ends."""
    made = []

    def path(name):
        made.append(tmp_path / name)
        return str(made[-1])

    yield path
    for p in made:
        if p.exists():
            p.unlink()


def probes(n):
    """Element offsets that cross 2 GiB and 4 GiB (in bytes), and the ends."""
    return [i for i in [0, 1 << 29, (1 << 29) + 1, 1 << 30, n - 8] if 0 <= i <= n - 8]


def expect_arange(a, n):
    """a (cmlx, MLX or NumPy) holds arange(n) as uint32: the sum modulo 2^32
    over every element (cheap, no copy), plus exact values at the probes."""
    want_sum = (n * (n - 1) // 2) % (1 << 32)
    if isinstance(a, np.ndarray):
        assert a.dtype == np.uint32 and a.shape == (n,)
        got_sum = int(np.add.reduce(a, dtype=np.uint32))
        slices = [np.asarray(a[i:i + 8]) for i in probes(n)]
    else:
        assert a.shape == (n,) and "uint32" in str(a.dtype)
        got_sum = a.sum().item()
        slices = [np.array(a[i:i + 8]) for i in probes(n)]
    assert got_sum == want_sum
    for i, s in zip(probes(n), slices):
        np.testing.assert_array_equal(s, np.arange(i, i + 8, dtype=np.uint32))


def cmlx_arange(n):
    x = mx.arange(n, dtype=mx.uint32)
    mx.eval(x)
    return x


def numpy_arange_file(path, n):
    """A .npy of arange(n) written by NumPy without holding it in memory."""
    m = np.lib.format.open_memmap(path, mode="w+", dtype=np.uint32, shape=(n,))
    for i in range(0, n, CHUNK):
        m[i:i + CHUNK] = np.arange(i, min(i + CHUNK, n), dtype=np.uint32)
    m.flush()
    del m


def test_npy_2_5gb(big):
    p = big("a.npy")
    x = cmlx_arange(N)
    mx.save(p, x)
    del x
    free()
    y = mx.load(p)
    expect_arange(y, N)
    del y
    free()
    expect_arange(np.load(p, mmap_mode="r"), N)
    if mlx_ref is not None:
        expect_arange(mlx_ref.load(p), N)
        free()
    q = big("n.npy")
    numpy_arange_file(q, N)
    y = mx.load(q)
    expect_arange(y, N)
    del y
    free()


def test_npz_stored_archive_past_4gib(big):
    """Two 2.5 GB members, then a small one that starts past 4 GiB, as does
    the central directory (ZIP64 offsets and end record). Members are written
    in MLX's unordered_map order, which for three names is the reverse of the
    keyword order: c goes first so that it is written last."""
    p = big("two.npz")
    x = cmlx_arange(N)
    mx.savez(p, c=mx.arange(10), a=x, b=x)
    del x
    free()
    with zipfile.ZipFile(p) as z:
        infos = {i.filename: i for i in z.infolist()}
        assert [i.filename for i in z.infolist()] == ["b.npy", "a.npy", "c.npy"]
        assert infos["c.npy"].header_offset > 1 << 32
        assert np.load(z.open("c.npy")).tolist() == list(range(10))
    got = mx.load(p)
    assert np.array(got["c"]).tolist() == list(range(10))
    for k in ["a", "b"]:
        expect_arange(got[k], N)
        got[k] = None
        free()
    del got
    with np.load(p) as z:
        b = z["b"]
        expect_arange(b, N)
        del b
    gc.collect()
    # a flipped bit near the end of the far member (a, the second written)
    # fails its CRC-32
    size = os.path.getsize(p)
    far = infos["a.npy"]
    with open(p, "r+b") as f:
        f.seek(far.header_offset + 26)
        lengths = f.read(4)
        start = far.header_offset + 30 + lengths[0] + lengths[2]  # (< 256 each)
        f.seek(start + far.file_size - 1000)
        byte = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([byte[0] ^ 4]))
    assert os.path.getsize(p) == size
    got = mx.load(p)
    with pytest.raises(RuntimeError, match="CRC-32"):
        mx.eval(got["a"])
    del got
    free()


def test_npz_stored_member_past_4gib(big):
    """One 4.4 GB member: its sizes need the ZIP64 extra fields."""
    p = big("one.npz")
    x = cmlx_arange(N_OVER_4GIB)
    mx.savez(p, a=x)
    del x
    free()
    y = mx.load(p)["a"]
    expect_arange(y, N_OVER_4GIB)
    del y
    free()
    # zipfile reads the ZIP64 sizes and checks the CRC-32 while streaming
    with zipfile.ZipFile(p) as z:
        info = z.getinfo("a.npy")
        assert info.file_size > 1 << 32 and info.compress_type == zipfile.ZIP_STORED
        with z.open(info) as f:
            n = 0
            while chunk := f.read(1 << 26):
                n += len(chunk)
        assert n == info.file_size


def test_npz_deflated_zeros_2_5gb(big):
    p = big("z.npz")
    mx.savez_compressed(p, w=mx.zeros((N,), mx.float32))
    free()
    assert os.path.getsize(p) < N // 100
    y = mx.load(p)["w"]
    assert y.shape == (N,) and y.dtype == mx.float32
    assert not mx.any(y).item()
    del y
    free()
    with np.load(p) as z:
        w = z["w"]
        assert w.shape == (N,) and not w.any()
        del w
    gc.collect()
    # NumPy's deflated zeros (np.zeros costs no memory until written)
    q = big("nz.npz")
    np.savez_compressed(q, w=np.zeros(N, np.float32))
    y = mx.load(q)["w"]
    assert y.shape == (N,) and not mx.any(y).item()
    del y
    free()


def test_safetensors_2_5gb(big):
    p = big("a.safetensors")
    x = cmlx_arange(N)
    mx.save_safetensors(p, {"w": x})
    del x
    free()
    y = mx.load(p)["w"]
    expect_arange(y, N)
    del y
    free()
    try:
        import safetensors.numpy as st
    except ImportError:
        st = None
    if st is not None:
        w = st.load_file(p)["w"]
        expect_arange(w, N)
        del w
        gc.collect()
        q = big("n.safetensors")
        w = np.arange(N, dtype=np.uint32)
        st.save_file({"w": w}, q)
        del w
        gc.collect()
        y = mx.load(q)["w"]
        expect_arange(y, N)
        del y
        free()
