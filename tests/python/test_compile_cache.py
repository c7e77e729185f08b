"""The compiled-kernel cache is code cmlx loads and runs, so it is trusted
only as far as it is private (docs/guide.md, "The kernel cache"):

- an entry is checked against SHA-256 digests of what it was built from and
  of the library bytes written at build time: another kernel's file copied
  over it, a truncated or a symlinked one is rebuilt, never run;
- a directory another user owns, or one group or others may write, is
  refused (nothing in it is loaded, nothing written to it): kernels are
  built in a fresh private directory instead, and results stay right;
- directories cmlx creates are 0700; the /tmp fallback (no HOME) must be
  exactly that;
- the size cap holds after every build.

CMLX_JIT_LOG (one line per event: disk, built, failed, rejected, refused)
shows which path a kernel took.  The cache is read at a kernel's first use
in a process, so most checks run fresh child processes.
"""

import os
import shutil
import stat
import subprocess
import sys

import numpy as np
import pytest

from conftest import SUBJECT_IS_MLX, mx

pytestmark = pytest.mark.skipif(SUBJECT_IS_MLX, reason="cmlx's kernel cache")

# Two kernels with the same inputs and outputs: one run in place of the
# other gives wrong numbers, not a crash.
CHILD = """
import numpy as np
import cmlx.core as mx
x = mx.arange(64).astype(mx.float32) / 7
f = mx.compile(lambda a: mx.sin(a) * 3 + 1)
g = mx.compile(lambda a: mx.cos(a) * 2 - 5)
want_f = np.sin(np.arange(64, dtype=np.float32) / 7) * 3 + 1
ok = np.allclose(np.array(f(x)), want_f, atol=1e-5)
if "G" in __import__("sys").argv:
    want_g = np.cos(np.arange(64, dtype=np.float32) / 7) * 2 - 5
    ok = ok and np.allclose(np.array(g(x)), want_g, atol=1e-5)
print(ok)
"""


def run_child(tmp_path, env, *args, drop=()):
    full = {k: v for k, v in os.environ.items() if k not in drop}
    full.pop("CMLX_CC", None)
    full["CMLX_JIT_LOG"] = str(tmp_path / "jit.log")
    full.update(env)
    r = subprocess.run([sys.executable, "-c", CHILD, *args], env=full, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    log = tmp_path / "jit.log"
    events = log.read_text().split() if log.exists() else []
    if log.exists():
        log.unlink()
    return r.stdout.strip(), list(zip(events[0::2], events[1::2]))


def entries(d):
    return sorted(p for p in os.listdir(d) if p.startswith("fused-"))


@pytest.fixture
def built(tmp_path):
    """A cache with f's and g's kernels: (dir, f's file, g's file)."""
    d = tmp_path / "cache"
    out, events = run_child(tmp_path, {"CMLX_CACHE_DIR": str(d)}, "G")
    assert out == "True" and [e for e, _ in events] == ["built", "built"]
    (_, hf), (_, hg) = events
    return d, d / f"fused-{hf}.so", d / f"fused-{hg}.so"


def test_entries_are_sealed_and_private(built):
    d, f_so, g_so = built
    for p in (f_so, g_so):
        st = p.stat()
        assert stat.S_IMODE(st.st_mode) & 0o022 == 0 and st.st_uid == os.geteuid()
        # the trailer: magic, two SHA-256 digests, the library's length
        data = p.read_bytes()
        assert data[-80:-72] == b"CMLXJIT1"
        assert int.from_bytes(data[-8:], "little") == len(data) - 80
        import hashlib
        assert data[-40:-8] == hashlib.sha256(data[:-80]).digest()
    assert stat.S_IMODE(d.stat().st_mode) == 0o700


def test_swapped_library_is_rebuilt_not_run(built, tmp_path):
    d, f_so, g_so = built
    shutil.copyfile(g_so, f_so)  # g's kernel under f's name
    out, events = run_child(tmp_path, {"CMLX_CACHE_DIR": str(d)})
    assert out == "True"
    assert events == [("rejected", f_so.name[6:-3]), ("built", f_so.name[6:-3])]
    # the rebuilt entry is f's again: the next process loads it
    out, events = run_child(tmp_path, {"CMLX_CACHE_DIR": str(d)})
    assert out == "True" and [e for e, _ in events] == ["disk"]


@pytest.mark.parametrize("damage", ["truncated", "flipped", "no-trailer", "symlink"])
def test_damaged_entry_is_rebuilt(built, tmp_path, damage):
    d, f_so, g_so = built
    data = f_so.read_bytes()
    if damage == "truncated":
        f_so.write_bytes(data[: len(data) // 2])
    elif damage == "flipped":  # one byte of the code changed, trailer kept
        i = len(data) // 3
        f_so.write_bytes(data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1:])
    elif damage == "no-trailer":
        f_so.write_bytes(data[:-80])
    else:  # a link to a valid entry: not followed
        elsewhere = tmp_path / "elsewhere.so"
        shutil.copyfile(f_so, elsewhere)
        f_so.unlink()
        f_so.symlink_to(elsewhere)
    out, events = run_child(tmp_path, {"CMLX_CACHE_DIR": str(d)})
    assert out == "True"
    assert [e for e, _ in events] == ["rejected", "built"]
    assert not f_so.is_symlink()


def refused_dir(tmp_path, built, how):
    """A directory holding f's valid entry, made unsafe in the way how."""
    d, f_so, _ = built
    bad = tmp_path / f"bad-{how}"
    bad.mkdir()
    shutil.copy2(f_so, bad / f_so.name)
    if how == "0777":
        os.chmod(bad, 0o777)
    elif how == "group-writable":
        os.chmod(bad, 0o770)
    else:  # another user's, private to them
        os.chown(bad, 12345, 12345)
        os.chown(bad / f_so.name, 12345, 12345)
        os.chmod(bad, 0o700)
    return bad, f_so.name


@pytest.mark.parametrize("how", ["0777", "group-writable", "other-owner"])
def test_unsafe_directory_is_refused(built, tmp_path, how):
    if how == "other-owner" and os.geteuid() != 0:
        pytest.skip("needs root to give a directory to another uid")
    bad, name = refused_dir(tmp_path, built, how)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    before = sorted(os.listdir(bad))
    # with a compiler: built in a private directory, which is gone at exit
    out, events = run_child(tmp_path, {"CMLX_CACHE_DIR": str(bad), "TMPDIR": str(tmp)})
    assert out == "True"
    assert [e for e, _ in events] == ["refused", "built"]
    assert sorted(os.listdir(bad)) == before  # nothing written there
    assert os.listdir(tmp) == []
    # without one: the valid-looking entry there is still not loaded
    out, events = run_child(tmp_path, {"CMLX_CACHE_DIR": str(bad), "TMPDIR": str(tmp),
                                       "CMLX_CC": "/nonexistent/cc"})
    assert out == "True"
    assert "disk" not in [e for e, _ in events] and ("refused", name[6:-3]) in events


def test_created_directories_are_private(tmp_path):
    d = tmp_path / "a" / "b" / "cache"
    out, events = run_child(tmp_path, {"CMLX_CACHE_DIR": str(d)})
    assert out == "True" and [e for e, _ in events] == ["built"]
    for p in (tmp_path / "a", tmp_path / "a" / "b", d):
        assert stat.S_IMODE(p.stat().st_mode) == 0o700


NO_HOME = ("HOME", "XDG_CACHE_HOME", "CMLX_CACHE_DIR")


def test_tmp_fallback_is_made_private_and_reused(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {"TMPDIR": str(tmp)}
    out, events = run_child(tmp_path, env, drop=NO_HOME)
    assert out == "True" and [e for e, _ in events] == ["built"]
    d = tmp / f"cmlx-cache-{os.geteuid()}"
    assert stat.S_IMODE(d.stat().st_mode) == 0o700 and len(entries(d)) == 1
    out, events = run_child(tmp_path, env, drop=NO_HOME)
    assert out == "True" and [e for e, _ in events] == ["disk"]


@pytest.mark.parametrize("how", ["0755", "symlink"])
def test_tmp_fallback_made_by_someone_else_is_refused(built, tmp_path, how):
    """Anyone can create a name in /tmp first: the fallback must be a real
    directory of mode 0700 (0755, harmless under a HOME, is refused here)."""
    _, f_so, _ = built
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    d = tmp / f"cmlx-cache-{os.geteuid()}"
    target = tmp_path / "planted"
    target.mkdir(mode=0o700)
    shutil.copy2(f_so, target / f_so.name)
    if how == "0755":
        os.rename(target, d)
        os.chmod(d, 0o755)
    else:
        d.symlink_to(target)
    out, events = run_child(tmp_path, {"TMPDIR": str(tmp), "CMLX_CC": "/nonexistent/cc"},
                            drop=NO_HOME)
    assert out == "True"
    assert [e for e, _ in events] == ["refused", "failed"]


def test_size_cap_holds_after_every_build(tmp_path, monkeypatch):
    d = tmp_path / "capped"
    monkeypatch.setenv("CMLX_CACHE_DIR", str(d))
    monkeypatch.delenv("CMLX_CC", raising=False)
    monkeypatch.delenv("CMLX_COMPILE_FUSE", raising=False)
    x = mx.arange(16).astype(mx.float32) / 5
    # kernels of this test's own (the process keeps the ones it loaded, and
    # constants are kernel arguments: the expressions' shape must differ from
    # every other test's, test_compile_fusion.py's cap test's included)
    unary = [mx.exp, mx.sin, mx.cos, mx.tanh, mx.log1p, mx.arctan, mx.sinh, mx.erf]
    mx.eval(mx.compile(lambda a: unary[0](a * 5) / (mx.square(a) + 9) + 4)(x))
    (first,) = entries(d)
    size = (d / first).stat().st_size
    cap = 2.5 * size
    monkeypatch.setenv("CMLX_CACHE_MAX_MB", str(cap / 2**20))
    for u in unary[1:]:
        f = mx.compile(lambda a, u=u: u(a * 5) / (mx.square(a) + 9) + 4)
        got = np.array(f(x))
        want = np.array(u(x * 5) / (mx.square(x) + 9) + 4)
        assert np.array_equal(got, want)
        total = sum((d / p).stat().st_size for p in entries(d))
        assert total <= cap, (total, cap)
        assert 1 <= len(entries(d)) <= 2
