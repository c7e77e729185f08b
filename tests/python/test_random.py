"""mx.random: MLX's counter-based generator (Threefry-2x32 keys).

The numbers must be MLX's for the same key and call, bit for bit, so an MLX
experiment reproduces on cmlx: every sampler is compared with real MLX
where it is importable, over shapes (0-d, empty, odd sizes, large ones on
the threaded path), dtypes and seeds, and with values obtained from MLX's
C++ API (REF below) where MLX's Python module has no entry point
(random.bits, which cmlx adds) or no oracle is importable.  Independently
of MLX the samples are checked statistically (moments, ranges,
frequencies).  Then the global key (seed, advancing, threads, state),
transforms (vmap over keys, grad, jvp), errors and signatures.
"""

import math
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from conftest import SUBJECT_IS_MLX, cmlx_only, mlx_ref, mx, needs_oracle, to_np

R = mx.random

# From MLX 0.32.4's C++ API (mlx::core::random, which MLX's Python module
# and mlx-c wrap), key(0) and key(42).
REF = {
    "split_k0_3": [2467461003, 428148500, 3186719485, 3840466878, 2562233961, 1946702221],
    "bits_w1_7": [143, 35, 95, 55, 29, 21, 219],          # key 0, shape (7,), width 1
    "bits_w1_2x3": [45, 179, 215, 3, 244, 131],           # key 42, (2, 3), width 1
    "bits_w2_3": [9103, 14175, 5405],                     # key 0, (3,), width 2
    "bits_w2_5": [8426, 37627, 63599, 6563, 55571],       # key 42, (5,), width 2
    "bits_w4_5": [3134548294, 3733159049, 843694964, 894150801, 801545058],
    # vmap over split(key(42), 3): one key per row, each its own stream
    "vmap_bits_w1_3": [10, 97, 15, 82, 48, 1, 180, 208, 88],
    "vmap_bits_w2_5": [45449, 31637, 35495, 32823, 19863, 24350, 10289, 38044, 12482, 52418,
                       34308, 15713, 38376, 59055, 7183],
    "uniform_4": [1.29657769, 2.42655015, -0.762155294, -0.750577569],     # (-1, 3)
    "normal_4": [0.186935648, 1.06533384, -1.5593127, -1.53529537],
    "normal_ls_4": [1.59346783, 2.03266692, 0.720343649, 0.732352316],   # loc 1.5, scale 0.5
    "randint_6": [6, 8, 8, -1, -1, 4],                                    # [-3, 10)
    "bernoulli_6": [0, 0, 0, 1, 1, 0],                                    # p = 0.3
    "trunc_4": [0.328271568, 1.07984388, -0.815720856, -0.807465255],     # (-1, 2)
    "gumbel_4": [0.589013696, 1.86600649, -1.03759873, -1.02061534],
    "laplace_4": [0.178984195, -1.99846435, 4.75856781, 4.66350794],      # loc 0.5, scale 2
    "perm_6": [4, 3, 5, 0, 1, 2],
    "seed7_uniform_3_twice": [0.0777458325, 0.174454302, 0.83264631,
                              0.584717035, 0.436813712, 0.706478179],
}

FLOATS = ["float16", "bfloat16", "float32"]


def bits_of(a):
    """The exact bits of an array as a NumPy array (bfloat16 as uint16)."""
    m = _mod_of(a)
    if a.dtype == m.bfloat16:
        x = np.atleast_1d(np.array(a.astype(m.float32)))
        return (x.view(np.uint32) >> 16).astype(np.uint16)
    x = np.atleast_1d(np.array(a))
    if x.dtype.kind == "c":
        return x.view(np.uint32)
    if x.dtype.kind == "f":
        return x.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[x.itemsize])
    return x


def _mod_of(a):
    return mx if isinstance(a, mx.array) else mlx_ref


def same_bits(a, b):
    assert a.shape == b.shape, (a.shape, b.shape)
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], (a.dtype, b.dtype)
    ba, bb = bits_of(a), bits_of(b)
    fa = np.atleast_1d(np.array(a.astype(_mod_of(a).float32))) if "float" in str(a.dtype) else None
    fb = np.atleast_1d(np.array(b.astype(_mod_of(b).float32))) if "float" in str(b.dtype) else None
    ok = ba == bb
    if fa is not None:
        ok |= np.isnan(fa) & np.isnan(fb)
    assert ok.all(), (np.argwhere(~ok)[:5].tolist(), ba[~ok][:5], bb[~ok][:5])


def k(seed, mod=None):
    return (mod or mx).random.key(seed)


# ------------------------------------------------------------------ keys

def test_key_layout():
    assert k(0).tolist() == [0, 0]
    assert k(42).tolist() == [0, 42]
    assert k(2 ** 40 + 5).tolist() == [256, 5]
    assert k(2 ** 64 - 1).tolist() == [2 ** 32 - 1, 2 ** 32 - 1]
    assert k(0).dtype == mx.uint32 and k(0).shape == (2,)


def test_split_is_bits_of_the_key():
    assert R.split(k(0), 3).flatten().tolist() == REF["split_k0_3"]
    a, b = R.split(k(0))  # the rows of split(key, 2), not a prefix of split(key, 3)
    assert a.tolist() == [4146024105, 967050713] and b.tolist() == [2718843009, 1272950319]
    assert R.split(k(0), 0).shape == (0, 2)
    assert R.split(k(5), num=1).shape == (1, 2)


@cmlx_only
@pytest.mark.parametrize("name", [n for n in REF if n.startswith("bits_")])
def test_bits_match_mlx_cpp(name):
    width = int(name.split("_")[1][1:])
    shape = {"7": (7,), "2x3": (2, 3), "3": (3,), "5": (5,)}[name.split("_")[2]]
    key = k(0) if name in ("bits_w1_7", "bits_w2_3") else k(42)
    b = R.bits(shape, width, key=key)
    assert b.dtype == {1: mx.uint8, 2: mx.uint16, 4: mx.uint32}[width]
    assert b.shape == shape
    assert b.flatten().tolist() == REF[name]


@cmlx_only
@pytest.mark.parametrize("width", [1, 2, 4])
def test_bits_vmap_over_keys(width):
    """A batch of keys gives each key its own stream: the batched bits are
    the unbatched calls stacked, including widths whose per-key runs are
    not word aligned (MLX's byte layout)."""
    keys = R.split(k(42), 3)
    n = {1: 3, 2: 5, 4: 7}[width]
    v = mx.vmap(lambda kk: R.bits((n,), width, key=kk))(keys)
    rows = [R.bits((n,), width, key=keys[i]).tolist() for i in range(3)]
    assert v.tolist() == rows
    if width in (1, 2):
        assert v.flatten().tolist() == REF[f"vmap_bits_w{width}_{n}"]


@cmlx_only
def test_bits_layout_of_counters():
    """Word j and word H + odd + j come from one hash: the first half of a
    longer run is not the run of a shorter shape (MLX's counter layout),
    while every size is a prefix-free, deterministic function of the key."""
    a = R.bits((8,), key=k(3)).tolist()
    b = R.bits((9,), key=k(3)).tolist()
    assert a[:4] != b[:4]  # 8 words pair (j, 4 + j); 9 words pair (j, 5 + j)
    for n in (0, 1, 2, 3, 31, 32, 33, 1000, 4097):
        x = R.bits((n,), key=k(9))
        assert x.shape == (n,) and x.tolist() == R.bits((n,), key=k(9)).tolist()


@cmlx_only
def test_vector_and_portable_loops_agree():
    """The AVX-512, AVX2 and portable kernels give the same bits (each is
    forced in a child process by its environment switch)."""
    code = ("import cmlx.core as mx, hashlib, numpy as np; h = hashlib.sha256(); "
            "[h.update(np.array(mx.random.bits((n,), w, key=mx.random.key(n))).tobytes()) "
            "for n in (1, 7, 33, 100, 1001, 70001) for w in (1, 2, 4)]; "
            "[h.update(np.array(mx.random.uniform(shape=(n,), key=mx.random.key(1))).tobytes()) "
            "for n in (5, 1001, 70001)]; print(h.hexdigest())")
    env = dict(os.environ)
    outs = []
    for extra in ({}, {"CMLX_RANDOM_AVX512": "0"}, {"CMLX_RANDOM_SIMD": "0"}):
        e = dict(env, **extra)
        outs.append(subprocess.run([sys.executable, "-c", code], env=e, capture_output=True,
                                   text=True, check=True).stdout.strip())
    assert outs[0] == outs[1] == outs[2], outs


def test_bits_of_noncontiguous_keys():
    keys = R.split(k(1), 6)
    contiguous = [R.uniform(shape=(5,), key=mx.array(keys[i].tolist(), mx.uint32)).tolist()
                  for i in range(6)]
    for i, key in enumerate([keys[i] for i in range(6)]):  # row views
        assert R.uniform(shape=(5,), key=key).tolist() == contiguous[i]
    kt = keys.T  # a key as a strided column
    for i in range(6):
        assert R.uniform(shape=(5,), key=kt[:, i]).tolist() == contiguous[i]


# ------------------------------------------------------------------ against MLX

SHAPES = [(), (0,), (1,), (2,), (3,), (5,), (8,), (17,), (2, 3), (3, 0, 2), (31, 7), (4097,)]
SEEDS = [0, 7, 2 ** 33 + 9, 2 ** 64 - 1]


def both(fn):
    """fn(module) in cmlx and in MLX; the results must agree bit for bit."""
    a, b = fn(mx), fn(mlx_ref)
    same_bits(a, b)
    return a


@needs_oracle
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_uniform_matches_mlx(seed, dtype):
    for shape in SHAPES:
        both(lambda m: m.random.uniform(shape=shape, dtype=getattr(m, dtype), key=k(seed, m)))
        both(lambda m: m.random.uniform(-3.5, 7.25, shape, getattr(m, dtype), key=k(seed, m)))
    both(lambda m: m.random.uniform(m.array([[0.0], [10.0]]), m.array([1.0, 2.0, 3.0]), (2, 3),
                                    getattr(m, dtype), key=k(seed, m)))


@needs_oracle
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", FLOATS + ["float64", "complex64"])
def test_normal_matches_mlx(seed, dtype):
    for shape in SHAPES:
        both(lambda m: m.random.normal(shape, getattr(m, dtype), key=k(seed, m)))
        both(lambda m: m.random.normal(shape, getattr(m, dtype), 1.5, 0.25, key=k(seed, m)))
    both(lambda m: m.random.normal((3, 2), getattr(m, dtype), loc=m.array([1.0, -1.0]),
                                   scale=m.array([[2.0], [0.5], [1.0]]), key=k(seed, m)))


@needs_oracle
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", FLOATS + ["float64"])
def test_laplace_gumbel_truncated_normal_match_mlx(seed, dtype):
    t = lambda m: getattr(m, dtype)  # noqa: E731
    for shape in SHAPES:
        both(lambda m: m.random.laplace(shape, t(m), 0.5, 2.0, key=k(seed, m)))
        both(lambda m: m.random.laplace(shape, t(m), key=k(seed, m)))
        if dtype == "float64":  # MLX's uniform has no float64 (checked in the errors)
            continue
        both(lambda m: m.random.gumbel(shape, t(m), key=k(seed, m)))
        both(lambda m: m.random.truncated_normal(-1.5, 2.0, shape, t(m), key=k(seed, m)))
    if dtype != "float64":
        both(lambda m: m.random.truncated_normal(m.array([-2.0, 0.0]), m.array([[0.0], [1.0]]),
                                                 dtype=t(m), key=k(seed, m)))


@needs_oracle
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", ["int32", "uint8", "int64", "bool_", "uint32", "int16"])
def test_randint_matches_mlx(seed, dtype):
    for shape in SHAPES:
        both(lambda m: m.random.randint(-5, 100, shape, getattr(m, dtype), key=k(seed, m)))
        both(lambda m: m.random.randint(0, 2, shape, getattr(m, dtype), key=k(seed, m)))
    both(lambda m: m.random.randint(m.array([0, 10]), m.array([[5], [50]]), (2, 2),
                                    getattr(m, dtype), key=k(seed, m)))
    both(lambda m: m.random.randint(0.5, 10.7, (40,), getattr(m, dtype), key=k(seed, m)))


@needs_oracle
@pytest.mark.parametrize("seed", SEEDS)
def test_bernoulli_permutation_categorical_match_mlx(seed):
    for shape in SHAPES:
        both(lambda m: m.random.bernoulli(0.3, shape, key=k(seed, m)))
        n = int(np.prod(shape))
        both(lambda m: m.random.permutation(n, key=k(seed, m)))
        if shape and shape[0] > 0 and n:
            lg = np.linspace(-2, 2, n).reshape(shape).astype(np.float32)
            both(lambda m: m.random.categorical(m.array(lg), key=k(seed, m)))
            both(lambda m: m.random.categorical(m.array(lg), 0, num_samples=6, key=k(seed, m)))
            both(lambda m: m.random.categorical(m.array(lg), -1, shape=(4,) + shape[:-1],
                                                key=k(seed, m)))
            both(lambda m: m.random.permutation(m.array(lg), axis=-1, key=k(seed, m)))
    both(lambda m: m.random.bernoulli(m.array([[0.1], [0.9]], m.float16), (2, 3), key=k(seed, m)))
    both(lambda m: m.random.categorical(m.array([0.0, np.inf, np.inf]), shape=(40,),
                                        key=k(seed, m)))


@needs_oracle
def test_large_threaded_draws_match_mlx():
    for n in (10 ** 6 + 3, 2 * 10 ** 6):
        both(lambda m: m.random.uniform(shape=(n,), key=k(5, m)))
        both(lambda m: m.random.normal((n // 4,), key=k(5, m)))


@needs_oracle
def test_categorical_over_a_vocabulary_matches_mlx():
    """A language model's sampler: categorical over (1, vocab) logits takes
    the inverse-CDF path, whose exp, cumulative and total sums must all be
    MLX's for the sampled tokens to be."""
    for seed, n in ((0, 20000), (1, 50257)):
        lg = (np.random.default_rng(seed).normal(size=(1, n)) * 3).astype(np.float32)
        both(lambda m: m.random.categorical(m.array(lg), key=k(seed, m)))
        both(lambda m: m.random.categorical(m.array(lg[0]), shape=(50000,), key=k(seed, m)))
        both(lambda m: m.random.categorical(m.array(lg[0], m.float16), shape=(999,),
                                            key=k(seed, m)))


@needs_oracle
def test_unary_bases_are_mlx_bit_for_bit():
    """The samplers are built on them: float32 exp, erf and erfinv follow
    MLX's formulas exactly, log and log1p are glibc's as in MLX, contiguous
    and strided."""
    x = np.arange(0, 2 ** 32, 4099, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x = x[np.isfinite(x)]
    u = np.random.default_rng(0).uniform(-1, 1, 200001).astype(np.float32)
    for op, data in (("erf", x), ("erfinv", u), ("exp", x / np.float32(1e36)),
                     ("log", np.abs(x)), ("log1p", -np.abs(u))):
        same_bits(getattr(mx, op)(mx.array(data)), getattr(mlx_ref, op)(mlx_ref.array(data)))
        strided = data[: (len(data) // 6) * 6].reshape(-1, 6)
        same_bits(getattr(mx, op)(mx.array(strided).T), getattr(mlx_ref, op)(
            mlx_ref.array(strided).T))


@pytest.mark.parametrize("name", [n for n in REF if not n.startswith(("bits_", "vmap_", "split"))])
def test_values_from_mlx_cpp(name):
    key = k(42)
    f = {
        "uniform_4": lambda: R.uniform(-1.0, 3.0, [4], key=key),
        "normal_4": lambda: R.normal([4], key=key),
        "normal_ls_4": lambda: R.normal([4], loc=1.5, scale=0.5, key=key),
        "randint_6": lambda: R.randint(-3, 10, [6], key=key),
        "bernoulli_6": lambda: R.bernoulli(0.3, [6], key=key),
        "trunc_4": lambda: R.truncated_normal(-1.0, 2.0, [4], key=key),
        "gumbel_4": lambda: R.gumbel([4], key=key),
        "laplace_4": lambda: R.laplace([4], loc=0.5, scale=2.0, key=key),
        "perm_6": lambda: R.permutation(6, key=key),
    }
    if name == "seed7_uniform_3_twice":
        R.seed(7)
        got = R.uniform(shape=[3]).tolist() + R.uniform(shape=[3]).tolist()
    else:
        got = f[name]().tolist()
    exp = REF[name]
    if isinstance(exp[0], float):
        assert np.array_equal(np.float32(got), np.float32(exp)), (got, exp)
    else:
        assert [int(v) for v in got] == exp


# ------------------------------------------------------------------ statistics

N = 200_000


def test_uniform_statistics():
    for dt in FLOATS:
        u = to_np(R.uniform(shape=(N,), dtype=getattr(mx, dt), key=k(1))).astype(np.float64)
        assert u.min() >= 0 and u.max() < 1
        assert abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002
        counts = np.histogram(u, bins=10, range=(0, 1))[0]
        assert np.all(np.abs(counts - N / 10) < 5 * math.sqrt(N / 10))
    u = to_np(R.uniform(-3.0, 5.0, (N,), key=k(2)))
    assert u.min() >= -3 and u.max() < 5 and abs(u.mean() - 1) < 0.05
    lo, hi = np.array([[0.0], [10.0]]), np.array([20.0, 30.0])
    u = to_np(R.uniform(mx.array(lo), mx.array(hi), (2, 2), key=k(3)))
    assert np.all(u >= lo) and np.all(u < hi)
    # a bfloat16 draw close to its upper bound never rounds up to it
    u = to_np(R.uniform(-0.1, 0.1, (N,), mx.bfloat16, key=k(4)))
    assert u.max() < 0.1 + 1e-9


def moments(x):
    x = np.asarray(x, np.float64)
    m, s = x.mean(), x.std()
    return m, s, ((x - m) ** 3).mean() / s ** 3, ((x - m) ** 4).mean() / s ** 4


@pytest.mark.parametrize("dtype", FLOATS + ["float64"])
def test_normal_statistics(dtype):
    z = to_np(R.normal((N,), getattr(mx, dtype), key=k(5)))
    m, s, skew, kurt = moments(z)
    assert abs(m) < 0.01 and abs(s - 1) < 0.01 and abs(skew) < 0.03 and abs(kurt - 3) < 0.08
    assert np.all(np.isfinite(z))
    z = to_np(R.normal((N,), getattr(mx, dtype), loc=3.0, scale=0.5, key=k(6)))
    m, s, _, _ = moments(z)
    assert abs(m - 3) < 0.01 and abs(s - 0.5) < 0.01


def test_complex_normal_statistics():
    z = np.array(R.normal((N,), mx.complex64, key=k(7)))
    assert z.dtype == np.complex64
    for part in (z.real, z.imag):
        m, s, _, _ = moments(part)
        assert abs(m) < 0.01 and abs(s ** 2 - 0.5) < 0.01
    assert abs(np.corrcoef(z.real, z.imag)[0, 1]) < 0.01


def test_laplace_gumbel_truncated_statistics():
    x = to_np(R.laplace((N,), loc=1.0, scale=2.0, key=k(8)))
    m, s, _, kurt = moments(x)
    assert abs(m - 1) < 0.03 and abs(s ** 2 - 8) < 0.2 and abs(kurt - 6) < 0.5
    g = to_np(R.gumbel((N,), key=k(9)))
    m, s, _, _ = moments(g)
    assert abs(m - 0.5772156649) < 0.01 and abs(s ** 2 - math.pi ** 2 / 6) < 0.05
    for dt in ("float16", "bfloat16"):  # no infinities at the ends
        for f in (R.laplace, R.gumbel, R.normal):
            assert np.all(np.isfinite(to_np(f((N,), getattr(mx, dt), key=k(10)))))
    a, b = -1.0, 2.0
    t = to_np(R.truncated_normal(a, b, (N,), key=k(11))).astype(np.float64)
    assert t.min() >= a and t.max() <= b
    phi = lambda v: math.exp(-v * v / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda v: 0.5 * (1 + math.erf(v / math.sqrt(2)))  # noqa: E731
    mean = (phi(a) - phi(b)) / (cdf(b) - cdf(a))
    assert abs(t.mean() - mean) < 0.01
    t = to_np(R.truncated_normal(2.0, -2.0, (10,), key=k(1)))
    assert np.all(t == 2.0)


def test_randint_bernoulli_statistics():
    x = to_np(R.randint(-5, 5, (N,), key=k(12)))
    assert x.dtype == np.int32 and x.min() == -5 and x.max() == 4
    counts = np.bincount(x + 5, minlength=10)
    assert np.all(np.abs(counts - N / 10) < 5 * math.sqrt(N / 10))
    x = to_np(R.randint(10, -10, (100,), key=k(1)))
    assert np.all(x == 10)
    x = to_np(R.randint(2 ** 24, 2 ** 24 + 2, (10000,), mx.int32, key=k(1)))
    assert x.min() >= 2 ** 24 and x.max() < 2 ** 24 + 2
    for p in (0.0, 0.05, 0.5, 0.93, 1.0):
        b = to_np(R.bernoulli(p, (N,), key=k(13)))
        assert b.dtype == np.bool_ and abs(b.mean() - p) < 4 * math.sqrt(p * (1 - p) / N) + 1e-9
    b = to_np(R.bernoulli(mx.array([2.0, -2.0])))
    assert b.tolist() == [True, False]


def test_categorical_and_permutation_statistics():
    logits = np.array([0.0, 1.0, -1.0, 2.0], np.float32)
    p = np.exp(logits) / np.exp(logits).sum()
    for draw in (lambda: R.categorical(mx.array(logits), shape=(N,), key=k(14)),  # inverse CDF
                 lambda: R.categorical(mx.array(np.tile(logits, (N, 1))), key=k(14))):  # Gumbel
        s = to_np(draw())
        assert s.dtype == np.uint32
        freq = np.bincount(s, minlength=4) / N
        assert np.all(np.abs(freq - p) < 4 * np.sqrt(p * (1 - p) / N))
    s = to_np(R.categorical(mx.array([0.0, np.inf, np.inf, -np.inf]), shape=(N // 10,), key=k(1)))
    assert set(np.unique(s).tolist()) == {1, 2}
    perms = np.stack([to_np(R.permutation(5, key=kk)) for kk in R.split(k(15), 2000)])
    assert np.all(np.sort(perms, axis=1) == np.arange(5))
    first = np.bincount(perms[:, 0], minlength=5) / 2000
    assert np.all(np.abs(first - 0.2) < 0.05)
    x = mx.arange(12).reshape(3, 4)
    for axis in (0, 1, -1):
        y = R.permutation(x, axis=axis, key=k(3))
        assert mx.array_equal(mx.sort(y, axis=axis), x).item()


def test_multivariate_normal_statistics():
    mean = np.array([4.0, -7.0], np.float32)
    cov = np.array([[2.0, 0.5], [0.5, 1.0]], np.float32)
    d = to_np(R.multivariate_normal(mx.array(mean), mx.array(cov), (N,), key=k(16)))
    assert d.shape == (N, 2)
    assert np.allclose(d.mean(0), mean, atol=0.02)
    assert np.allclose(np.cov(d.T), cov, atol=0.03)
    out = R.multivariate_normal(mx.zeros((3, 2)), mx.array(cov), shape=(4, 3), key=k(1))
    assert out.shape == (4, 3, 2)


# ------------------------------------------------------------------ the global key

def test_seed_reproduces_and_draws_advance():
    R.seed(3)
    a, b = R.uniform(shape=(3,)).tolist(), R.uniform(shape=(3,)).tolist()
    R.seed(3)
    assert R.uniform(shape=(3,)).tolist() == a and R.uniform(shape=(3,)).tolist() == b
    assert a != b
    # the global key draws as key=split(state)[1] would, keeping split(state)[0]
    R.seed(11)
    state = mx.array(R.state[0].tolist(), mx.uint32)
    k1, k2 = R.split(state)
    assert R.uniform(shape=(4,)).tolist() == R.uniform(shape=(4,), key=k2).tolist()
    assert R.state[0].tolist() == k1.tolist()


def test_every_sampler_advances_the_global_key_once():
    calls = [lambda: R.uniform(), lambda: R.normal(), lambda: R.randint(0, 3),
             lambda: R.bernoulli(), lambda: R.truncated_normal(0, 1), lambda: R.gumbel(),
             lambda: R.categorical(mx.zeros(3)), lambda: R.laplace(),
             lambda: R.permutation(3), lambda: R.multivariate_normal(mx.zeros(2), mx.eye(2))]
    for f in calls:
        R.seed(5)
        f()
        after = R.state[0].tolist()
        R.seed(5)
        R.uniform()
        assert after == R.state[0].tolist()
        R.seed(5)
        f(), f()
        assert after != R.state[0].tolist()


def test_failed_call_still_used_a_key():
    """As in MLX's bindings the key is drawn before the arguments are
    checked: a call that raises ValueError has advanced the global key (a
    TypeError from argument parsing has not)."""
    R.seed(0)
    R.uniform()
    second = R.uniform().item()
    for bad in (lambda: R.uniform(dtype=mx.int32), lambda: R.normal(loc=[1, 2]),
                lambda: R.categorical(mx.zeros(3), shape=[2], num_samples=2)):
        R.seed(0)
        with pytest.raises(ValueError):
            bad()
        assert R.uniform().item() == second
    R.seed(0)
    with pytest.raises(TypeError):
        R.uniform(shape=5)
    first = R.uniform().item()
    R.seed(0)
    assert R.uniform().item() == first


def test_keys_are_per_thread():
    R.seed(123)
    main_state = R.state[0].tolist()
    got = {}

    def worker():
        got["state"] = R.state[0].tolist()
        R.seed(5)
        got["u"] = R.uniform().item()

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert got["state"] != main_state  # not the main thread's seeded key
    assert R.state[0].tolist() == main_state  # seeding there did not touch ours
    R.seed(5)
    assert R.uniform().item() == got["u"]


def test_initial_key_is_the_start_time_in_milliseconds():
    """As in MLX: key(ms since the epoch, read once per process), the same
    for every thread that has not been seeded."""
    code = ("import time, threading; t0 = time.time(); import {m}.core as mx; "
            "k = mx.random.state[0].tolist(); r = {{}}; "
            "th = threading.Thread(target=lambda: r.update(k=mx.random.state[0].tolist())); "
            "th.start(); th.join(); print(k[0], k[1], r['k'] == k, t0, flush=True); "
            "import os; os._exit(0)")  # (MLX sometimes aborts in its thread teardown)
    mod = "mlx" if SUBJECT_IS_MLX else "cmlx"
    out = subprocess.run([sys.executable, "-c", code.format(m=mod)], capture_output=True,
                         text=True, check=True).stdout.split()
    ms = (int(out[0]) << 32) | int(out[1])
    assert out[2] == "True"
    assert abs(ms - float(out[3]) * 1000) < 60_000


def test_state_sentinel():
    st = R.state
    assert st is R.state and len(st) == 1
    assert st[0].shape == (2,) and st[0].dtype == mx.uint32
    assert st[-1].tolist() == st[0].tolist()
    assert [a.tolist() for a in st] == [st[0].tolist()]
    with pytest.raises(IndexError, match="random state index out of range"):
        st[1]
    with pytest.raises(AttributeError, match="has no attribute"):
        R.not_a_function  # noqa: B018


# ------------------------------------------------------------------ transforms

def test_vmap_over_keys_gives_independent_streams():
    keys = R.split(k(7), 4)
    for f in (lambda kk: R.uniform(shape=(3,), key=kk),
              lambda kk: R.normal((2, 3), key=kk),
              lambda kk: R.randint(0, 100, (5,), key=kk),
              lambda kk: R.permutation(5, key=kk),
              lambda kk: R.categorical(mx.zeros(6), shape=(4,), key=kk),
              lambda kk: R.split(kk, 3)):
        v = mx.vmap(f)(keys)
        assert v.tolist() == [f(keys[i]).tolist() for i in range(4)]
    # keys batched on their last axis: the batch moves in front of the pair
    v = mx.vmap(lambda kk: R.normal((2,), key=kk), in_axes=1)(keys.T)
    assert v.tolist() == [R.normal((2,), key=keys[i]).tolist() for i in range(4)]
    # nested
    kk = R.split(k(3), 6).reshape(2, 3, 2)
    v = mx.vmap(mx.vmap(lambda x: R.uniform(shape=(2,), key=x)))(kk)
    assert v.tolist() == [[R.uniform(shape=(2,), key=kk[i, j]).tolist() for j in range(3)]
                          for i in range(2)]


def test_vmap_with_an_unbatched_key():
    v = mx.vmap(lambda x: x + R.uniform(key=k(1)))(mx.arange(3.0))
    u = R.uniform(key=k(1)).item()
    assert np.allclose(np.array(v), np.arange(3.0) + u)


def test_grad_and_jvp_through_samplers():
    key = k(11)
    x = mx.array([1.0, 2.0, 3.0])
    g = mx.grad(lambda x: (x * R.normal(x.shape, key=key)).sum())(x)
    assert g.tolist() == R.normal((3,), key=key).tolist()
    z = R.normal((3,), key=key)
    g = mx.grad(lambda s: R.normal((3,), loc=0.5, scale=s, key=key).sum())(mx.array(2.0))
    assert np.isclose(g.item(), z.sum().item(), rtol=1e-6)
    g = mx.grad(lambda lc: R.normal((3,), loc=lc, key=key).sum())(mx.array(0.5))
    assert g.item() == 3.0
    u = R.uniform(shape=(4,), key=key)
    g = mx.grad(lambda lo: R.uniform(lo, 5.0, (4,), key=key).sum())(mx.array(1.0))
    assert np.isclose(g.item(), (1 - u).sum().item(), rtol=1e-6)
    _, t = mx.jvp(lambda lc: R.normal((3,), loc=lc, key=key), [mx.array(0.5)], [mx.array(1.0)])
    assert t[0].tolist() == [1.0, 1.0, 1.0]


def test_global_key_inside_transforms():
    x = mx.array([1.0, 2.0, 3.0])
    R.seed(4)
    g = mx.grad(lambda x: (x * R.uniform(shape=x.shape)).sum())(x)
    after = R.uniform().item()
    R.seed(4)
    assert g.tolist() == R.uniform(shape=(3,)).tolist()
    assert R.uniform().item() == after
    R.seed(4)
    v = mx.vmap(lambda x: x * R.uniform())(x)  # one draw, shared by the batch
    R.seed(4)
    u = R.uniform().item()
    assert np.allclose(np.array(v), np.array([1.0, 2.0, 3.0]) * u)


# ------------------------------------------------------------------ errors

ERRORS = [
    (lambda: R.uniform(shape=(2, -3)), ValueError, "[bits] Negative dimensions not allowed."),
    (lambda: R.uniform(dtype=mx.int32), ValueError,
     "[uniform] Can only generate uniform numbers with real floating point type."),
    (lambda: R.uniform(dtype=mx.float64), RuntimeError, "[uniform] Unsupported type."),
    (lambda: R.uniform(shape=(3,), low=mx.zeros((2, 3))), ValueError,
     "[uniform] Cannot generate random values of shape (3) from broadcasted shape (2,3)."),
    (lambda: R.uniform(shape=(2, 3), low=mx.zeros((4,))), ValueError,
     "[broadcast_shapes] Shapes (2,3) and (4) cannot be broadcast."),
    (lambda: R.uniform(key=mx.array([1, 2])), ValueError,
     "[bits] Expected key type uint32 but received int32."),
    (lambda: R.uniform(key=mx.zeros((2, 2), mx.uint32)), ValueError,
     "[bits] Expected key shape (2) but received (2,2)."),
    (lambda: R.split(mx.array([1, 2, 3], mx.uint32)), ValueError,
     "[bits] Expected key shape (2) but received (3)."),
    (lambda: R.split(k(0), -1), ValueError, "[bits] Negative dimensions not allowed."),
    (lambda: R.normal(dtype=mx.int32), ValueError,
     "[normal] Only floating point and complex64 types are supported."),
    (lambda: R.normal(loc=[1, 2]), ValueError,
     "Invalid type list received in array initialization."),
    (lambda: R.randint(0, 5, dtype=mx.float32), ValueError,
     "[randint] randint only accepts integer dtypes and bool."),
    (lambda: R.bernoulli(0, [2]), ValueError,
     "[bernoulli] bernoulli probability `p` must be a float type."),
    (lambda: R.bernoulli(mx.array([0.1, 0.2, 0.3]), [2]), ValueError,
     "[broadcast_shapes] Shapes (2) and (3) cannot be broadcast."),
    (lambda: R.bernoulli(mx.array([0.5, 0.2]), [1]), ValueError,
     "[bernoulli] shape of `p` is incompatible with argument `shape`."),
    (lambda: R.truncated_normal(0, 1, dtype=mx.int32), ValueError,
     "[trunc_normal] trunc_normal only accepts floating point dtypes."),
    (lambda: R.truncated_normal(mx.array([-2.0, -1.0]), mx.array([1.0, 2.0, 3.0])), ValueError,
     "[broadcast_shapes] Shapes (2) and (3) cannot be broadcast."),
    (lambda: R.laplace(dtype=mx.int32), ValueError,
     "[laplace] Only real floating point types are supported."),
    (lambda: R.gumbel(dtype=mx.int32), ValueError,
     "[uniform] Can only generate uniform numbers with real floating point type."),
    (lambda: R.categorical(mx.zeros((3,)), axis=2), IndexError,
     "[categorical] Invalid axis 2 for logits with 1 dimensions."),
    (lambda: R.categorical(mx.zeros((3, 4)), shape=(1,)), ValueError,
     "[categorical] Requested shape (1) is not broadcast compatible with reduced logits "
     "shape(3)."),
    (lambda: R.categorical(mx.zeros((3,)), shape=[2], num_samples=2), ValueError,
     "[categorical] At most one of shape or num_samples can be specified."),
    (lambda: R.permutation(-1), ValueError, "[bits] Negative dimensions not allowed."),
    (lambda: R.permutation(mx.zeros((3,)), axis=1), IndexError, "SmallVector out of range."),
    (lambda: R.multivariate_normal(mx.zeros(2), mx.eye(2), dtype=mx.float16), ValueError,
     "[multivariate_normal] dtype must be float32."),
    (lambda: R.multivariate_normal(mx.zeros(()), mx.eye(2)), ValueError,
     "[multivariate_normal] mean must have at least one dimension."),
    (lambda: R.multivariate_normal(mx.zeros(2), mx.zeros(2)), ValueError,
     "[multivariate_normal] cov must have at least two dimensions."),
    (lambda: R.multivariate_normal(mx.zeros(2), mx.zeros((2, 3))), ValueError,
     "[multivariate_normal] last two dimensions of cov must be equal."),
    (lambda: R.multivariate_normal(mx.zeros(3), mx.zeros((2, 2))), ValueError,
     "[multivariate_normal] mean and cov must have compatible shapes."),
    (lambda: R.uniform(shape=(2 ** 31,)), OverflowError,
     "Integer value 2147483648 is outside the supported range"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i):
    f, exc, msg = ERRORS[i]
    with pytest.raises(exc) as e:
        mx.eval(f())
    assert str(e.value).startswith(msg), str(e.value)


TYPE_ERRORS = [
    lambda: R.uniform(shape=5), lambda: R.uniform(shape=(1.5,)), lambda: R.uniform(shape="ab"),
    lambda: R.uniform(key=[1, 2]), lambda: R.uniform(key=np.array([1, 2], np.uint32)),
    lambda: R.uniform(0, 1, (2,), mx.float32, None, mx.cpu, 3), lambda: R.uniform(bogus=1),
    lambda: R.key(-1), lambda: R.key(2 ** 64), lambda: R.key(1.5), lambda: R.seed(-1),
    lambda: R.split(k(0), num=2 ** 31), lambda: R.split(k(0), 3.0), lambda: R.split(None),
    lambda: R.permutation(3.0), lambda: R.permutation(np.int64(4)),
    lambda: R.categorical([1, 2]), lambda: R.randint(0), lambda: R.laplace(loc="a"),
    lambda: R.bernoulli(0.5, 3), lambda: R.multivariate_normal([0, 0], mx.eye(2)),
]


@pytest.mark.parametrize("i", range(len(TYPE_ERRORS)))
def test_type_errors(i):
    with pytest.raises(TypeError, match="incompatible function arguments"):
        TYPE_ERRORS[i]()


@needs_oracle
@pytest.mark.parametrize("i", range(len(ERRORS) + len(TYPE_ERRORS)))
def test_errors_are_mlx_errors(i):
    """The same exception and message as MLX (TypeErrors list the same
    signature and argument types)."""
    f = (ERRORS[i][0] if i < len(ERRORS) else TYPE_ERRORS[i - len(ERRORS)])

    def run(m):
        g = f.__globals__
        saved = g["R"], g["mx"]
        g["R"], g["mx"] = m.random, m
        try:
            m.eval(f())
            return None
        except Exception as e:
            return type(e), str(e).replace("cmlx.core", "mlx.core")
        finally:
            g["R"], g["mx"] = saved
    assert run(mx) == run(mlx_ref)


def test_accepted_argument_forms():
    key = k(1)
    assert R.uniform(0, 1, (2,), mx.float32, key, mx.cpu).shape == (2,)  # stream by position
    assert R.uniform(shape=np.array([2, 3]), key=key).shape == (2, 3)
    assert R.uniform(shape=mx.array([2, 3]), key=key).shape == (2, 3)
    assert R.uniform(shape=range(3), key=key).shape == (0, 1, 2)
    assert R.uniform(dtype=None, key=key).dtype == mx.float32
    assert R.randint(0, 3, dtype=None, key=key).dtype == mx.int32
    assert R.split(key, 3, mx.cpu).shape == (3, 2)
    assert R.key(np.uint64(2 ** 63)).tolist() == [2 ** 31, 0]
    assert R.key(True).tolist() == [0, 1]
    assert R.permutation(True, key=key).tolist() == [0]
    assert R.laplace(loc=mx.array(1.0), key=key).dtype == mx.float32
    assert R.bernoulli(0.5, None, key=key).shape == ()
    R.seed(2 ** 64 - 1)


@cmlx_only
def test_permutation_out_of_int_range_is_mlx_bad_cast():
    with pytest.raises(RuntimeError, match="std::bad_cast"):
        R.permutation(2 ** 31)


# ------------------------------------------------------------------ the namespace

MLX_NAMES = ["bernoulli", "categorical", "gumbel", "key", "laplace", "multivariate_normal",
             "normal", "permutation", "randint", "seed", "split", "truncated_normal", "uniform"]


def test_namespace():
    names = sorted(n for n in dir(R) if not n.startswith("_"))
    expected = MLX_NAMES if SUBJECT_IS_MLX else sorted(MLX_NAMES + ["bits"])  # cmlx adds bits
    assert names == expected
    assert R.__name__.endswith(".core.random")
    import importlib
    assert importlib.import_module(mx.__name__ + ".random") is R


@cmlx_only
@needs_oracle
@pytest.mark.parametrize("name", MLX_NAMES)
def test_displayed_signatures_are_mlx(name):
    ours = getattr(R, name).__doc__.strip().splitlines()[0]
    theirs = getattr(mlx_ref.random, name).__doc__.strip().splitlines()[0]
    assert ours == theirs
    sig = [r for r in R._signatures if r[0] == name]
    assert len(sig) == 1 and name + sig[0][1] == theirs


def test_bits_errors_and_forms():
    if SUBJECT_IS_MLX:
        pytest.skip("MLX's Python module has no random.bits")
    with pytest.raises(ValueError, match=r"\[bits\] Bit width must be in \{1, 2, 4\} but got 3."):
        R.bits((2,), 3, key=k(0))
    assert R.bits(key=k(0)).shape == () and R.bits([0], 2, key=k(0)).shape == (0,)
    R.seed(1)
    a = R.bits((4,))
    R.seed(1)
    assert R.bits((4,)).tolist() == a.tolist()
