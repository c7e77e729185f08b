"""The allocator behind the memory API: the cache is bounded as in MLX's CPU
allocator (RAM / 16, between 32 MiB and 1 GiB, by default, of which blocks
whose size has not recurred may use MLX's 32 MiB; blocks that do not fit are
given back to the system), active memory counts the bytes asked for, and the
limits start at MLX's defaults.  Counts are compared with real MLX where it is installed."""

import os
import random
import subprocess
import sys

import pytest

from conftest import SUBJECT_NAME, mx, mlx_ref, needs_oracle, to_np

MB = 1 << 20


def settle():
    mx.synchronize()


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGESIZE")


def run_fresh(code):
    """Run code in a new interpreter (default limits, empty cache); its stdout."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", f"import {SUBJECT_NAME} as mx\n" + code],
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_varying_sizes_loop_stays_bounded():
    """Arrays of 4 MB to 180 MB, each freed before the next: nothing but the
    bounded cache stays (this grew to 1.1 GB resident when the cache was
    capped at the machine's RAM; MLX stays near 40 MB)."""
    settle()
    limit = mx.set_cache_limit(32 * MB)
    try:
        mx.clear_cache()
        base_active = mx.get_active_memory()
        base_rss = rss_bytes() if sys.platform.startswith("linux") else 0
        rng = random.Random(0)
        for _ in range(40):
            n = rng.randint(4, 180) * MB // 4
            a = mx.ones((n,)) * 2
            mx.eval(a)
            assert to_np(a[-1:]).tolist() == [2.0]
            del a
            settle()
            assert mx.get_cache_memory() <= 32 * MB
            assert mx.get_active_memory() == base_active
        if sys.platform.startswith("linux"):
            grown = rss_bytes() - base_rss
            assert grown < 100 * MB, f"resident memory grew by {grown / MB:.0f} MB"
    finally:
        mx.set_cache_limit(limit)
        mx.clear_cache()


def test_default_limits():
    """MLX's memory limit and wired limit; the cache limit is RAM / 16
    between MLX's CPU default (32 MiB) and 1 GiB."""
    cache_limit, memory_limit, wired = map(int, run_fresh(
        "c = mx.set_cache_limit(0); mx.set_cache_limit(c)\n"
        "print(c, mx.get_memory_limit(), mx.set_wired_limit(1 << 20))\n"))
    ram = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGESIZE")
    assert cache_limit == min(max(ram // 16, 32 * MB), 1024 * MB)
    assert memory_limit == int(0.8 * ram)
    assert wired == 0


def test_default_cache_keeps_a_recurring_big_block():
    """A 64 MiB temporary is beyond MLX's 32 MiB, so the first one goes back
    to the system; once its size recurs (a loop's next step) the default
    limit keeps it, and the step after reuses it (no fresh pages to fault
    in)."""
    out = run_fresh(
        "c = mx.set_cache_limit(0); mx.set_cache_limit(c)\n"
        "x = mx.ones((16 << 20,)); mx.eval(x)\n"
        "a = x * 2; mx.eval(a); del a\n"
        "first = mx.get_cache_memory()\n"
        "b = x * 3; mx.eval(b); del b\n"
        "cached = mx.get_cache_memory()\n"
        "c3 = x * 4; mx.eval(c3)\n"
        "print(c, first, cached, mx.get_cache_memory(), float(c3[-1].item()))\n")
    limit, first, cached, after, value = out
    if int(limit) < 64 * MB:
        pytest.skip("the default cache limit is below 64 MiB on this machine")
    # (plus, perhaps, the scalars 2, 3 and 4: 4 bytes each)
    assert int(first) < 4096
    assert 64 * MB <= int(cached) < 64 * MB + 4096
    assert int(after) < 4096 and float(value) == 4.0


def test_wired_limit_is_not_recorded_on_cpu():
    assert mx.set_wired_limit(1000) == 0
    assert mx.set_wired_limit(0) == 0


def test_active_memory_is_the_requested_size():
    settle()
    limit = mx.set_cache_limit(32 * MB)
    try:
        mx.clear_cache()
        base = mx.get_active_memory()
        a = mx.zeros((25 * MB,))  # 100 MiB, not rounded up to a size class
        mx.eval(a)
        settle()
        assert mx.get_active_memory() - base == 100 * MB
        assert mx.get_array_buffer_size(a) == 100 * MB
        del a
        settle()
        assert mx.get_active_memory() == base
        # (the zeros' fill value, a 4-byte scalar, may be cached)
        assert mx.get_cache_memory() < 4096, "a block larger than the cache limit is not kept"
    finally:
        mx.set_cache_limit(limit)


def test_blocks_larger_than_the_cache_limit_are_freed():
    settle()
    old = mx.set_cache_limit(MB)
    try:
        mx.clear_cache()
        a = mx.ones((MB // 2,))  # 2 MiB
        mx.eval(a)
        del a
        settle()
        assert mx.get_cache_memory() < 4096  # a scalar at most
        b = mx.ones((1000,))
        mx.eval(b)
        del b
        settle()
        assert 4000 <= mx.get_cache_memory() <= MB
    finally:
        mx.set_cache_limit(old)
        mx.clear_cache()


def test_reuse_counts_the_cached_block():
    """A smaller request served by a cached block counts the block's size
    (MLX reports the same); a much smaller one gets a new block."""
    settle()
    mx.clear_cache()
    base = mx.get_active_memory()
    a = mx.zeros((1000,))
    mx.eval(a)
    del a
    settle()
    cached = mx.get_cache_memory()
    assert cached >= 4000
    b = mx.zeros((900,))  # 3600 bytes fit in the cached 4000-byte block
    mx.eval(b)
    settle()
    assert mx.get_active_memory() - base == 4000
    del b
    c = mx.zeros((100, 100))  # 40000 bytes: nothing cached fits
    mx.eval(c)
    settle()
    assert mx.get_active_memory() - base == 40000
    del c
    mx.clear_cache()
    assert mx.get_cache_memory() == 0


def test_lowering_the_cache_limit_frees_cached_blocks():
    settle()
    old = mx.set_cache_limit(64 * MB)
    try:
        mx.clear_cache()
        arrays = [mx.ones((k * MB // 4,)) for k in (1, 2, 3, 4)]
        mx.eval(arrays)
        del arrays
        settle()
        assert 10 * MB <= mx.get_cache_memory() < 10 * MB + 4096
        assert mx.set_cache_limit(5 * MB) == 64 * MB
        assert mx.get_cache_memory() <= 5 * MB
        mx.set_cache_limit(0)
        assert mx.get_cache_memory() == 0
    finally:
        mx.set_cache_limit(old)


def test_empty_arrays_hold_no_memory():
    settle()
    base = mx.get_active_memory()
    a = mx.zeros((0, 3))
    mx.eval(a)
    assert mx.get_active_memory() == base
    assert to_np(a).shape == (0, 3)


def test_reset_peak_memory_resets_to_zero():
    a = mx.ones((1000,))
    mx.eval(a)
    mx.reset_peak_memory()
    assert mx.get_peak_memory() == 0
    b = a + 1
    mx.eval(b)
    assert mx.get_peak_memory() >= mx.get_active_memory() > 0
    assert to_np(b)[:2].tolist() == [2.0, 2.0]


def test_array_buffer_size_needs_evaluated_arrays():
    # the size is the buffer's, and a cached buffer handed out again may be
    # larger than asked for: start from an empty cache, whatever ran before
    mx.clear_cache()
    x = mx.ones((4,)) + 1
    with pytest.raises(ValueError):
        mx.get_array_buffer_size(x)
    mx.eval(x)
    assert mx.get_array_buffer_size(x) == 16
    y = x[1:]
    mx.eval(y)
    assert mx.get_array_buffer_size([x, y], {"a": x}, 3) == 16


@needs_oracle
def test_counts_match_mlx():
    code = (
        "mx.set_cache_limit(32 << 20)\n"
        "def step(shape):\n"
        "    a = mx.zeros(shape); mx.eval(a); s = mx.get_active_memory(); del a\n"
        "    print(s, mx.get_cache_memory())\n"
        "for shape in [(1000,), (900,), (0,), (100, 100), (25 << 20,), (3, 5), (4096,)]:\n"
        "    step(shape)\n"
        "print(mx.get_memory_limit())\n")
    ours = run_fresh(code)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    theirs = subprocess.run([sys.executable, "-c", "import mlx.core as mx\n" + code], env=env,
                            capture_output=True, text=True, timeout=120)
    assert theirs.returncode == 0, theirs.stderr
    assert ours == theirs.stdout.split()
