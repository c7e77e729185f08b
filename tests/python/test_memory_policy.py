"""The default cache policy and the memory limit (src/core/allocator.c).

- Idle memory stays near MLX's: after a loop over sizes that never recur,
  the cache holds at most MLX's 32 MiB (it held the whole 1 GiB default
  limit before), while a loop whose sizes recur each step is still served
  from the cache; blocks the program stopped reusing go back.
- The counters stay exact: active, peak and cache are what was allocated.
- set_memory_limit: new memory over the limit is first taken out of the
  cache; with relaxed=False an allocation still over it raises MLX's
  MemoryError (after waiting for scheduled work, none here), relaxed it
  proceeds.

Each check runs in a fresh interpreter: default limits and an empty cache.
"""

import os
import subprocess
import sys

import pytest

from conftest import SUBJECT_IS_MLX, SUBJECT_NAME, mlx_ref, needs_oracle

MB = 1 << 20
pytestmark = pytest.mark.skipif(SUBJECT_IS_MLX, reason="cmlx's cache policy")


def run_fresh(code, module=SUBJECT_NAME):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", f"import {module} as mx\n" + code], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return [int(v) if v.lstrip("-").isdigit() else v for v in out.stdout.split()]


RSS = """
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096
"""

VARYING = RSS + """
import random
limit = mx.set_cache_limit(0); mx.set_cache_limit(limit)
rng = random.Random(0)
x = mx.arange(1); mx.eval(x); base = rss()
for _ in range(60):
    n = rng.randint(1024, 150 * 2**20) // 4
    a = mx.ones((n,)) * 2
    mx.eval(a)
    del a
mx.synchronize()
print(limit, mx.get_cache_memory(), mx.get_active_memory(), rss() - base)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_idle_memory_after_varying_sizes_is_near_mlx():
    limit, cache, active, grown = run_fresh(VARYING)
    assert active == 4  # x
    assert cache <= 32 * MB, f"{cache / MB:.0f} MB cached (the default limit is {limit / MB:.0f})"
    assert grown < 100 * MB, f"resident memory grew by {grown / MB:.0f} MB"


@needs_oracle
def test_idle_cache_matches_mlx():
    ours = run_fresh(VARYING)
    theirs = run_fresh(VARYING, "mlx.core")
    assert ours[1] <= max(theirs[1], 32 * MB)


STEPS = """
base = mx.arange(16 << 20, dtype=mx.float32); mx.eval(base)  # 64 MiB
sizes = [4 << 20, 8 << 20, 12 << 20, 16 << 20] * 2            # 320 MiB of float32
def step(k):
    keep = []
    for n in sizes:
        t = base[:n] * k; mx.eval(t); keep.append(t)
    return keep
limit = mx.set_cache_limit(0); mx.set_cache_limit(limit)
for k in range(3):
    keep = step(float(k))
    if k == 2:
        mid = mx.get_cache_memory()  # the step's blocks came out of the cache
    del keep
    print(mx.get_cache_memory())
print(limit, mid)
"""


def test_recurring_step_is_served_from_the_cache():
    first, second, third, limit, mid = run_fresh(STEPS)
    if limit < 400 * MB:
        pytest.skip("the default cache limit cannot hold the step here")
    total = 4 * sum([4 << 20, 8 << 20, 12 << 20, 16 << 20]) * 2
    assert first <= 32 * MB + 4096  # not yet shown to recur
    assert total <= second < total + 4096  # recurred: kept
    assert total <= third < total + 4096 and mid < 4096  # reused, then kept again


AGING = """
import random
mx.set_cache_limit(256 << 20)
base = mx.arange(10 << 20, dtype=mx.float32); mx.eval(base)  # 40 MiB
for k in range(3):  # a loop whose four 40 MiB temporaries recur
    keep = [base * (k + j) for j in range(4)]
    mx.eval(keep)
    del keep
kept = mx.get_cache_memory()
rng = random.Random(1)
for _ in range(12):  # then sizes that never recur, 50-100 MB each
    a = mx.zeros((rng.randint(50, 100) * 2**18 + rng.randint(1, 999),)) + 1
    mx.eval(a)
    del a
print(kept, mx.get_cache_memory())
"""


def test_blocks_no_longer_reused_go_back():
    kept, after = run_fresh(AGING)
    assert kept >= 160 * MB
    assert after <= 32 * MB


EXACT = """
mx.clear_cache(); mx.reset_peak_memory()
base = mx.get_active_memory()
a = mx.arange(1 << 20, dtype=mx.float32); mx.eval(a)  # 4 MiB, one block
print(mx.get_active_memory() - base, mx.get_peak_memory() - base)
del a
print(mx.get_active_memory() - base, mx.get_cache_memory())
mx.clear_cache()
print(mx.get_cache_memory(), mx.get_peak_memory() - base)
for k in range(3):  # 100 MiB: beyond MLX's part until its size recurs
    b = mx.arange(25 << 20, dtype=mx.float32); mx.eval(b)
    print(mx.get_active_memory() - base, mx.get_cache_memory())
    del b
    print(mx.get_cache_memory())
print(mx.get_peak_memory() - base)
mx.clear_cache()
print(mx.get_cache_memory())
"""


def test_counters_are_exact():
    v = run_fresh(EXACT)
    M4, M100 = 4 * MB, 100 * MB
    assert v[:6] == [M4, M4, 0, M4, 0, M4]
    # first: new, not kept; second: new, recurring, kept; third: reused
    assert v[6:15] == [M100, 0, 0, M100, 0, M100, M100, 0, M100]
    assert v[15:] == [M100, 0]


def test_strict_memory_limit_raises_mlx_error():
    out = run_fresh("""
x = mx.ones((1 << 20,)); mx.eval(x)
active = mx.get_active_memory()
old = mx.set_memory_limit(active + 50 * 2**20, relaxed=False)
try:
    y = mx.zeros((25 << 20,)) + 1  # 100 MiB
    mx.eval(y)
    print("no-error")
except MemoryError as e:
    print("MemoryError", str(e).replace(" ", "_"))
print(float(x.sum().item()))  # arrays that exist are untouched
z = mx.zeros((5 << 20,)) + 1; mx.eval(z)  # 20 MiB: within the limit
print(float(z[-1].item()))
mx.set_memory_limit(old)  # relaxed again: over the limit proceeds
mx.set_memory_limit(active, relaxed=True)
y = mx.zeros((25 << 20,)) + 1; mx.eval(y)
print(float(y[-1].item()))
""")
    assert out == ["MemoryError", "[malloc]_Unable_to_allocate_104857600_bytes.",
                   "1048576.0", "1.0", "1.0"]


def test_over_the_limit_the_cache_goes_first():
    cache_before, cache_after, value = run_fresh("""
mx.set_cache_limit(512 << 20)
a = mx.arange(5 << 20, dtype=mx.float32); mx.eval(a)   # 20 MiB
del a
before = mx.get_cache_memory()
mx.set_memory_limit(mx.get_active_memory() + 40 * 2**20)  # relaxed
b = mx.arange(6 << 20, dtype=mx.float32); mx.eval(b)   # 24 MiB: no cached fit
print(before, mx.get_cache_memory(), float(b[-1].item()))
""")
    assert cache_before == 20 * MB
    assert cache_after == 0  # 20 + 24 would exceed the limit's 40
    assert float(value) == float((6 << 20) - 1)


def test_strict_limit_inside_an_eval_raises_not_hangs():
    out = run_fresh("""
mx.set_memory_limit(mx.get_active_memory() + 8 * 2**20, relaxed=False)
s = mx.new_stream(mx.cpu)
with mx.stream(s):
    y = mx.exp(mx.ones((1 << 22,))) * 2  # 16 MiB buffers on a worker
try:
    mx.eval(y)
    print("no-error")
except MemoryError:
    print("MemoryError")
""")
    assert out == ["MemoryError"]


def test_relaxed_is_a_keyword_flag():
    out = run_fresh("""
old = mx.set_memory_limit(1 << 40, relaxed=False)
print(mx.set_memory_limit(old) == 1 << 40)
for bad in [dict(relaxed=1), dict(relaxed=None), dict(other=True)]:
    try:
        mx.set_memory_limit(1 << 30, **bad); print("accepted")
    except TypeError:
        print("TypeError")
mx.set_memory_limit(old)
""")
    assert out == ["True", "TypeError", "TypeError", "TypeError"]
