"""Hostile and damaged files: every parser (npy, npz, safetensors, gguf)
answers truncation, bad magic, lengths/offsets/sizes past the end,
overflowing shapes, wrong dtype strings, bad UTF-8, overlapping tensors,
absurd counts and random corruption with a clear exception of MLX's kind
(RuntimeError or ValueError), never a crash, an overread (run under ASan
by `make asan`) or a huge allocation (peak memory stays small)."""

import io
import struct
import zipfile

import numpy as np
import pytest

from conftest import SUBJECT_IS_MLX, cmlx_only, mx

ERRORS = (RuntimeError, ValueError)
PEAK_LIMIT = 64 << 20


def load_all(path, fmt=None):
    """Load and evaluate everything; return the loaded value."""
    out = mx.load(str(path), format=fmt) if fmt else mx.load(str(path))
    arrays = [out] if isinstance(out, mx.array) else list(out.values())
    mx.eval(*arrays)
    return out


def expect_error(path, fmt=None, kinds=ERRORS, match=None):
    mx.reset_peak_memory()
    with pytest.raises(kinds, match=match):
        load_all(path, fmt)
    assert mx.get_peak_memory() < PEAK_LIMIT


def survive(path, fmt=None):
    """Loading either works or fails cleanly, within the memory bound."""
    mx.reset_peak_memory()
    try:
        load_all(path, fmt)
    except ERRORS:
        pass
    assert mx.get_peak_memory() < PEAK_LIMIT


def npy_bytes(header, data=b"", version=1):
    h = header.encode()
    if version == 1:
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + data
    return b"\x93NUMPY\x02\x00" + struct.pack("<I", len(h)) + h + data


def st_bytes(header, data=b""):
    h = header.encode() if isinstance(header, str) else header
    return struct.pack("<Q", len(h)) + h + data


def gguf_head(ntensors, nkv, version=3):
    return b"GGUF" + struct.pack("<IQQ", version, ntensors, nkv)


def gstr(s):
    s = s.encode() if isinstance(s, str) else s
    return struct.pack("<Q", len(s)) + s


def gtensor(name, dims, t, off):
    return gstr(name) + struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}Q", *dims) + \
        struct.pack("<IQ", t, off)


def valid_files(tmp_path):
    """One valid file per format."""
    files = {}
    x = {"a": mx.arange(12, dtype=mx.float32).reshape(3, 4), "b": mx.array([1, 2, 3], mx.int16)}
    mx.save(str(tmp_path / "v.npy"), x["a"])
    mx.savez(str(tmp_path / "v.npz"), **x)
    mx.savez_compressed(str(tmp_path / "vc.npz"), **x)
    mx.save_safetensors(str(tmp_path / "v.safetensors"), x, {"k": "v"})
    mx.save_gguf(str(tmp_path / "v.gguf"), x, {"s": "t", "l": ["a", "b"], "n": mx.array([1, 2])})
    for name in ["v.npy", "v.npz", "vc.npz", "v.safetensors", "v.gguf"]:
        files[name] = (tmp_path / name).read_bytes()
    return files


# ---------------------------------------------------------------- truncation

@pytest.mark.parametrize("name", ["v.npy", "v.npz", "vc.npz", "v.safetensors", "v.gguf"])
def test_every_truncation(tmp_path, name):
    data = valid_files(tmp_path)[name]
    ext = name.split(".")[1]
    f = tmp_path / f"t.{ext}"
    for cut in range(len(data)):
        f.write_bytes(data[:cut])
        expect_error(f)
    f.write_bytes(data)
    load_all(f)


@pytest.mark.parametrize("name", ["v.npy", "v.npz", "vc.npz", "v.safetensors", "v.gguf"])
def test_random_corruption(tmp_path, name):
    data = valid_files(tmp_path)[name]
    ext = name.split(".")[1]
    f = tmp_path / f"c.{ext}"
    r = np.random.default_rng(sum(map(ord, name)))
    for trial in range(300):
        b = bytearray(data)
        for _ in range(int(r.integers(1, 4))):
            i = int(r.integers(0, len(b)))
            b[i] = int(r.integers(0, 256)) if trial % 2 else b[i] ^ (1 << int(r.integers(0, 8)))
        f.write_bytes(bytes(b))
        survive(f)


def test_random_bytes_every_format(tmp_path):
    r = np.random.default_rng(1)
    for ext in ["npy", "npz", "safetensors", "gguf"]:
        f = tmp_path / f"r.{ext}"
        for n in [0, 1, 7, 8, 9, 24, 100, 1000]:
            f.write_bytes(r.integers(0, 256, size=n, dtype=np.uint8).tobytes())
            expect_error(f)


# ---------------------------------------------------------------- .npy

NPY_CASES = [
    ("bad magic", b"\x93NUMPZ\x01\x00\x10\x00" + b" " * 16, "Invalid header", RuntimeError),
    ("version 3", b"\x93NUMPY\x03\x00\x10\x00" + b" " * 16, "Unsupported npy format version",
     RuntimeError),
    ("header past end", b"\x93NUMPY\x01\x00\xff\xff{", "header", RuntimeError),
    ("v2 header past end", b"\x93NUMPY\x02\x00\xff\xff\xff\xff{", "header", RuntimeError),
    ("complex128", npy_bytes("{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }"),
     "Unsupported array protocol type-string", ValueError),
    ("unicode", npy_bytes("{'descr': '<U5', 'fortran_order': False, 'shape': (1,), }"),
     "Unsupported array protocol", ValueError),
    ("object", npy_bytes("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }"),
     "Unsupported array protocol", ValueError),
    ("f3", npy_bytes("{'descr': '<f3', 'fortran_order': False, 'shape': (1,), }"),
     "Unsupported array protocol", ValueError),
    ("negative dim", npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }"),
     "parsing header", RuntimeError),
    ("dim past int32", npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2147483648,), }"),
     "outside the supported range", RuntimeError),
    ("huge dim", npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,), }"),
     "parsing header", RuntimeError),
    ("size overflow", npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': "
                                "(2147483647, 2147483647, 2147483647), }"), "overflows", RuntimeError),
    ("65 dims", npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (" + "1, " * 65 + "), }"),
     "Too many dimensions", RuntimeError),
    ("missing shape", npy_bytes("{'descr': '<f4', 'fortran_order': False, }"), "parsing header",
     RuntimeError),
    ("bad order", npy_bytes("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,), }"),
     "parsing header", RuntimeError),
    ("not a dict", npy_bytes("[1, 2, 3]"), "parsing header", RuntimeError),
    ("unterminated", npy_bytes("{'descr': '<f4"), "parsing header", RuntimeError),
    ("duplicate key", npy_bytes("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
                                "'shape': (1,), }"), "parsing header", RuntimeError),
    ("huge shape, tiny file", npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': "
                                        "(1073741824, 64), }", b"12345678"), "Unable to read",
     RuntimeError),
]


@pytest.mark.parametrize("case", NPY_CASES, ids=[c[0] for c in NPY_CASES])
def test_npy_hostile(tmp_path, case):
    _, data, match, kind = case
    f = tmp_path / "h.npy"
    f.write_bytes(data)
    expect_error(f, kinds=kind, match=match)


def test_npy_header_lengths_read_lazily(tmp_path):
    # a shape the file cannot hold: the load is lazy (as MLX), the eval
    # fails without allocating the claimed 512 GiB
    f = tmp_path / "l.npy"
    f.write_bytes(npy_bytes("{'descr': '<f4', 'fortran_order': True, 'shape': (65536, 2097152), }"))
    a = mx.load(str(f))
    assert a.shape == (65536, 2097152)
    mx.reset_peak_memory()
    with pytest.raises(RuntimeError, match="Unable to read"):
        mx.eval(a)
    assert mx.get_peak_memory() < PEAK_LIMIT


# ---------------------------------------------------------------- safetensors

ST_CASES = [
    ("length zero", struct.pack("<Q", 0) + b"{}", "Invalid json header length"),
    ("length 1e8", struct.pack("<Q", 100000000) + b"{}", "Invalid json header length"),
    ("length past end", struct.pack("<Q", 1000) + b"{}", "but the file is only"),
    ("length 2^64-1", struct.pack("<Q", 2**64 - 1) + b"{}", "Invalid json header length"),
    ("not json", st_bytes("{nope"), "Invalid JSON"),
    ("top-level array", st_bytes("[1, 2]"), "Invalid json metadata"),
    ("trailing garbage", st_bytes("{} x"), "Invalid JSON"),
    ("bad utf-8 key", st_bytes(b'{"\xff\xfe":{"dtype":"F32","shape":[],"data_offsets":[0,4]}}',
                               b"\0" * 4), "UTF-8"),
    ("overlong utf-8", st_bytes(b'{"\xc0\xaf":1}'), "UTF-8"),
    ("lone surrogate", st_bytes('{"\\ud800":1}'), "surrogate"),
    ("deep nesting", st_bytes("[" * 100000 + "]" * 100000), "nesting too deep"),
    ("unsupported dtype", st_bytes('{"t":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}}',
                                   b"\0" * 8), "unsupported dtype"),
    ("negative dim", st_bytes('{"t":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}', b"\0" * 4),
     "invalid shape"),
    ("dim past int32", st_bytes('{"t":{"dtype":"U8","shape":[4294967296],"data_offsets":[0,4294967296]}}'),
     "invalid shape"),
    ("size overflow", st_bytes('{"t":{"dtype":"C64","shape":[2147483647,2147483647,2147483647],'
                               '"data_offsets":[0,0]}}'), "overflows"),
    ("float dim", st_bytes('{"t":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}}', b"\0" * 4),
     "invalid shape"),
    ("three offsets", st_bytes('{"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}}', b"\0" * 8),
     "exactly 2 entries"),
    ("offsets mismatch", st_bytes('{"t":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}', b"\0" * 8),
     "Expecting 8 bytes"),
    ("offsets reversed", st_bytes('{"t":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}}', b"\0" * 8),
     "invalid data offsets"),
    ("past end", st_bytes('{"t":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}', b"\0" * 8),
     "exceeding the size of the file"),
    ("huge offsets", st_bytes('{"t":{"dtype":"U8","shape":[1],"data_offsets":[18446744073709551614,'
                              '18446744073709551615]}}'), "exceeding the size"),
    ("offsets past 2^64", st_bytes('{"t":{"dtype":"U8","shape":[1],"data_offsets":[0,'
                                   '18446744073709551616]}}'), "invalid data offsets"),
    ("overlap", st_bytes('{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},'
                         '"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}', b"\0" * 12),
     "overlap"),
    ("duplicate name", st_bytes('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
                                '"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}', b"\0\0"),
     "Duplicate"),
    ("missing dtype", st_bytes('{"a":{"shape":[1],"data_offsets":[0,1]}}', b"\0"), "dtype"),
    ("tensor not object", st_bytes('{"a":3}'), "dtype"),
    ("metadata not strings", st_bytes('{"__metadata__":{"k":1}}'), "not a string"),
    ("metadata not object", st_bytes('{"__metadata__":[1]}'), "__metadata__"),
]


@pytest.mark.parametrize("case", ST_CASES, ids=[c[0] for c in ST_CASES])
def test_safetensors_hostile(tmp_path, case):
    _, data, match = case
    f = tmp_path / "h.safetensors"
    f.write_bytes(data)
    expect_error(f, kinds=RuntimeError, match=match)


def test_safetensors_metadata_null_and_padding(tmp_path):
    # MLX writes "__metadata__": null when there is none; padding spaces
    f = tmp_path / "n.safetensors"
    f.write_bytes(st_bytes('{"__metadata__":null,"t":{"dtype":"U8","shape":[2],'
                           '"data_offsets":[0,2]}}    ', b"\x01\x02"))
    got, meta = mx.load(str(f), return_metadata=True)
    assert meta == {} and got["t"].tolist() == [1, 2]


def test_safetensors_file_object_hostile():
    buf = io.BytesIO(struct.pack("<Q", 50))
    with pytest.raises(RuntimeError):
        mx.load(buf, format="safetensors")


# ---------------------------------------------------------------- gguf

def gguf_file(tensors_info=b"", kv=b"", nt=0, nkv=0, data=b"", version=3):
    head = gguf_head(nt, nkv, version) + kv + tensors_info
    return head + b"\0" * (-len(head) % 32) + data


GGUF_CASES = [
    ("bad magic", b"GGUX" + b"\0" * 40, "not a GGUF file"),
    ("too short", b"GGUF\x03\x00", "not a GGUF file"),
    ("version 1", gguf_file(version=1), "Unsupported GGUF version"),
    ("version 4", gguf_file(version=4), "Unsupported GGUF version"),
    ("huge tensor count", gguf_file(nt=2**63), "more than it can hold"),
    ("huge kv count", gguf_file(nkv=2**63), "past the end"),
    ("key length huge", gguf_file(kv=struct.pack("<Q", 2**62), nkv=1), "Metadata key"),
    ("key length wraps", gguf_file(kv=struct.pack("<Q", 2**64 - 1), nkv=1), "Metadata key"),
    ("string value huge", gguf_file(kv=gstr("k") + struct.pack("<IQ", 8, 2**60), nkv=1),
     "String metadata value"),
    ("array len huge", gguf_file(kv=gstr("k") + struct.pack("<IIQ", 9, 4, 2**62), nkv=1),
     "Array metadata value"),
    ("string array len huge", gguf_file(kv=gstr("k") + struct.pack("<IIQ", 9, 8, 2**62), nkv=1),
     "Array metadata value"),
    ("unknown value type", gguf_file(kv=gstr("k") + struct.pack("<I", 77) + b"\0" * 8, nkv=1),
     "unexpected type"),
    ("unknown element type", gguf_file(kv=gstr("k") + struct.pack("<IIQ", 9, 77, 1) + b"\0" * 8,
                                       nkv=1), "unexpected type"),
    ("value past end", gguf_file(kv=gstr("k") + struct.pack("<I", 10) + b"\0", nkv=1)[:-31],
     "past the end"),
    ("alignment zero", gguf_file(kv=gstr("general.alignment") + struct.pack("<II", 4, 0), nkv=1),
     "alignment"),
    ("9 dims", gguf_file(gtensor("t", [1] * 9, 0, 0), nt=1, data=b"\0" * 4), "dimensions"),
    ("dim past int32", gguf_file(gtensor("t", [2**31], 0, 0), nt=1, data=b"\0" * 4),
     "outside the supported range"),
    ("size overflow", gguf_file(gtensor("t", [2**31 - 1] * 3, 0, 0), nt=1, data=b"\0" * 4),
     "overflows"),
    ("offset past end", gguf_file(gtensor("t", [1], 0, 4096), nt=1, data=b"\0" * 4),
     "data offset past the end"),
    ("offset overflows", gguf_file(gtensor("t", [1], 0, 2**64 - 8), nt=1, data=b"\0" * 4),
     "overflows the data section"),
    ("data past end", gguf_file(gtensor("t", [100], 0, 0), nt=1, data=b"\0" * 4),
     "extends past the end"),
    ("unknown tensor type", gguf_file(gtensor("t", [1], 99, 0), nt=1, data=b"\0" * 4),
     "GGML type 99"),
    ("Q3_K type", gguf_file(gtensor("t", [256], 11, 0), nt=1, data=b"\0" * 110), "GGML type 11"),
    ("K-quant past end", gguf_file(gtensor("t", [512], 14, 0), nt=1, data=b"\0" * 210),
     "extends past the end"),
    ("quant dim not /32", gguf_file(gtensor("t.weight", [48], 2, 0), nt=1, data=b"\0" * 36),
     "incompatible last dim"),
    ("quant data past end", gguf_file(gtensor("t.weight", [64, 2], 2, 0), nt=1, data=b"\0" * 36),
     "extends past the end"),
    ("duplicate tensor", gguf_file(gtensor("t", [1], 0, 0) + gtensor("t", [1], 0, 0), nt=2,
                                   data=b"\0" * 4), "Duplicate"),
    ("duplicate quant scales", gguf_file(gtensor("a.weight", [32], 8, 0) + gtensor("a.other_", [32],
                                         8, 64), nt=2, data=b"\0" * 128), "Duplicate"),
]


@pytest.mark.parametrize("case", GGUF_CASES, ids=[c[0] for c in GGUF_CASES])
def test_gguf_hostile(tmp_path, case):
    _, data, match = case
    f = tmp_path / "h.gguf"
    f.write_bytes(data)
    expect_error(f, match=match)


def test_gguf_nested_arrays_are_value_error(tmp_path):
    f = tmp_path / "n.gguf"
    f.write_bytes(gguf_file(kv=gstr("k") + struct.pack("<IIQ", 9, 9, 1) + b"\0" * 16, nkv=1))
    expect_error(f, kinds=ValueError, match="1-layer of nested arrays")


def test_gguf_missing_file_is_value_error(tmp_path):
    with pytest.raises(ValueError, match="Failed to open"):
        mx.load(str(tmp_path / "missing.gguf"))


# ---------------------------------------------------------------- npz

def zip_with(members, compress=zipfile.ZIP_STORED):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=compress) as z:
        for name, data in members:
            z.writestr(name, data)
    return bytearray(buf.getvalue())


def npy_of(x):
    buf = io.BytesIO()
    np.save(buf, x)
    return buf.getvalue()


def find(b, sig):
    return bytes(b).rfind(struct.pack("<I", sig))


def test_npz_hostile(tmp_path):
    f = tmp_path / "h.npz"
    good = npy_of(np.arange(10, dtype=np.int32))

    def check(data, match=None):
        f.write_bytes(bytes(data))
        expect_error(f, match=match)

    check(b"PK\x03\x04" + b"\0" * 40, "end of central directory")
    z = zip_with([("a.npy", good)])
    e = find(z, 0x06054B50)
    bad = bytearray(z)
    bad[e + 16:e + 20] = struct.pack("<I", 10**9)  # central directory offset past the end
    check(bad, "central directory")
    bad = bytearray(z)
    bad[e + 10:e + 12] = struct.pack("<H", 0xFFFE)  # more entries than the directory holds
    check(bad, "central directory")
    c = find(z, 0x02014B50)
    bad = bytearray(z)
    bad[c + 42:c + 46] = struct.pack("<I", 10**8)  # local header past the end
    check(bad, "past the end|Unexpected end")
    bad = bytearray(z)
    bad[c + 10:c + 12] = struct.pack("<H", 12)  # bzip2
    check(bad, "compression method 12")
    bad = bytearray(z)
    bad[c + 8:c + 10] = struct.pack("<H", 1)  # encrypted
    check(bad, "encrypted")
    bad = bytearray(z)
    bad[c + 20:c + 24] = struct.pack("<I", 5)  # stored sizes disagree
    check(bad, "two sizes")
    # deflated: a claimed size far larger than the data (a zip bomb's claim)
    zc = zip_with([("a.npy", good)], zipfile.ZIP_DEFLATED)
    c = find(zc, 0x02014B50)
    bad = bytearray(zc)
    bad[c + 24:c + 28] = struct.pack("<I", 0xFFFFFFF0)
    check(bad, "inflates to")
    bad = bytearray(zc)
    bad[c + 16:c + 20] = struct.pack("<I", 0)  # CRC
    check(bad, "CRC-32")
    d = find(zc, 0x04034B50) + 30 + 5
    bad = bytearray(zc)
    for i in range(d, d + 8):
        bad[i] ^= 0x55  # corrupt deflate stream
    f.write_bytes(bytes(bad))
    survive(f)
    # a member that is not a .npy
    check(zip_with([("a.npy", b"hello world, not numpy")]), "Invalid header")


def test_npz_bomb_bounded_memory(tmp_path):
    # 200 MB of zeros deflate to ~200 KB: loading inflates only what is
    # really there, and a member claiming less than it inflates to fails
    big = npy_of(np.zeros(50_000_000 // 4, np.float32))
    z = zip_with([("a.npy", big)], zipfile.ZIP_DEFLATED)
    c = find(z, 0x02014B50)
    z[c + 24:c + 28] = struct.pack("<I", 1 << 20)
    f = tmp_path / "b.npz"
    f.write_bytes(bytes(z))
    expect_error(f, match="inflates past its declared size")


# ---------------------------------------------------------------- integrity

# A member failing its CRC-32 is a RuntimeError in cmlx, wherever it is
# found.  MLX reads members through zipfile: a check failing while its
# array is evaluated is a RuntimeError there too, one failing while the
# .npy header is read (small members are read whole) is zipfile.BadZipFile.
CRC_ERRORS = (RuntimeError, zipfile.BadZipFile) if SUBJECT_IS_MLX else (RuntimeError,)

def flip_member_byte(data, member, at):
    """data with one bit flipped at byte `at` of member's data (stored)."""
    b = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        info = z.getinfo(member)
    lh = info.header_offset
    start = lh + 30 + struct.unpack("<H", b[lh + 26:lh + 28])[0] + \
        struct.unpack("<H", b[lh + 28:lh + 30])[0]
    b[start + at] ^= 0x10
    return bytes(b)


@pytest.mark.parametrize("writer", ["cmlx", "numpy"])
@pytest.mark.parametrize("where", ["data", "header"])
def test_npz_stored_bit_flip_is_an_error(tmp_path, writer, where):
    """A flipped bit in a stored member fails its CRC-32 when the array is
    read (RuntimeError, as MLX's zipfile-based loader raises), never loads
    as wrong values."""
    f = tmp_path / "s.npz"
    x = np.arange(1000, dtype=np.float32)
    if writer == "cmlx":
        mx.savez(str(f), a=mx.array(x), b=mx.array([1, 2, 3]))
    else:
        np.savez(f, a=x, b=np.array([1, 2, 3]))
    at = 600 if where == "data" else 20  # 20: inside the .npy header's dict
    bad = flip_member_byte(f.read_bytes(), "a.npy", at)
    f.write_bytes(bad)
    with pytest.raises(ERRORS + CRC_ERRORS):
        load_all(f)
    if where == "data":
        with pytest.raises(CRC_ERRORS, match="CRC-32"):
            load_all(f)


def test_npz_stored_empty_and_trailing_members_checked(tmp_path):
    """Members whose data does not reach their end (an empty array, bytes
    after the array) are checked when loaded."""
    x = npy_of(np.zeros((0, 3), np.float32))
    y = npy_of(np.arange(4, dtype=np.int32)) + b"tail"
    f = tmp_path / "e.npz"
    f.write_bytes(bytes(zip_with([("e.npy", x), ("t.npy", y)])))
    got = load_all(f)
    assert got["e"].shape == (0, 3) and np.array(got["t"]).tolist() == [0, 1, 2, 3]
    for member, at in [("e.npy", 30), ("t.npy", len(y) - 2)]:
        f.write_bytes(flip_member_byte(bytes(zip_with([("e.npy", x), ("t.npy", y)])), member, at))
        with pytest.raises(CRC_ERRORS, match="CRC-32"):
            load_all(f)


@cmlx_only  # zipfile reads the central directory's CRC-32 only
def test_npz_local_header_crc_must_agree(tmp_path):
    f = tmp_path / "l.npz"
    mx.savez(str(f), a=mx.arange(10))
    b = bytearray(f.read_bytes())
    b[14] ^= 1  # the first local header's CRC-32
    f.write_bytes(bytes(b))
    with pytest.raises(RuntimeError, match="CRC-32"):
        load_all(f)


def test_npz_truncated_is_value_error_like_mlx(tmp_path):
    """MLX checks zipfile.is_zipfile first: a cut-off archive (no end of
    central directory) is a ValueError."""
    f = tmp_path / "t.npz"
    mx.savez(str(f), a=mx.arange(100))
    data = f.read_bytes()
    for cut in [0, 10, len(data) // 2, len(data) - 1]:
        f.write_bytes(data[:cut])
        with pytest.raises(ValueError, match="zip file"):
            load_all(f)


@cmlx_only  # zipfile stops at the stream's end and names only the CRC
def test_npz_deflated_trailing_bytes_and_truncated_stream(tmp_path):
    f = tmp_path / "d.npz"
    zc = zip_with([("a.npy", npy_of(np.arange(1000, dtype=np.int64)))], zipfile.ZIP_DEFLATED)
    c = find(zc, 0x02014B50)
    csize = struct.unpack("<I", zc[c + 20:c + 24])[0]
    for delta, match in [(-20, "truncated"), (+4, "after its deflate stream|past the end")]:
        bad = bytearray(zc)
        bad[c + 20:c + 24] = struct.pack("<I", csize + delta)
        f.write_bytes(bytes(bad))
        with pytest.raises(RuntimeError, match=match):
            load_all(f)


@cmlx_only  # zipfile reads entries until the directory's size, whatever the count says
def test_npz_entry_count_must_match_directory(tmp_path):
    """A damaged entry count is an error, not an archive with members missing."""
    f = tmp_path / "n.npz"
    mx.savez(str(f), a=mx.arange(3), b=mx.arange(4))
    b = bytearray(f.read_bytes())
    e = find(b, 0x06054B50)
    b[e + 8:e + 12] = struct.pack("<HH", 1, 1)
    f.write_bytes(bytes(b))
    with pytest.raises(RuntimeError, match="central directory"):
        load_all(f)
