"""Random numbers: 10^7 float32 uniform in [0, 1), and 10^6 standard
normal and integer samples.

NumPy draws with its Generator (PCG64, `default_rng().random(n,
dtype=float32)`), the fastest NumPy path; cmlx and MLX with their
counter-based Threefry keys (a new key per call, as a training loop
would use them), evaluated to completion.  The generators differ, so
only the speed compares, not the numbers.
"""

import numpy as np

from harness import workload

N_UNIFORM = 10 ** 7
N_OTHER = 10 ** 6


def _draw(fw, kind, n):
    if fw.name == "numpy":
        rng = np.random.default_rng(0)
        if kind == "uniform":
            return lambda: rng.random(n, dtype=np.float32)
        if kind == "normal":
            return lambda: rng.standard_normal(n, dtype=np.float32)
        return lambda: rng.integers(0, 1000, n, dtype=np.int32)
    if fw.name not in ("cmlx", "mlx"):
        return None
    r = fw.mod.random
    keys = iter(r.split(r.key(0), 4096))  # fresh keys, made before timing
    if kind == "uniform":
        return lambda: fw.run(r.uniform(shape=(n,), key=next(keys)))
    if kind == "normal":
        return lambda: fw.run(r.normal(shape=(n,), key=next(keys)))
    return lambda: fw.run(r.randint(0, 1000, (n,), key=next(keys)))


@workload("uniform f32 1e7", family="random")
def uniform_1e7(fw):
    return _draw(fw, "uniform", N_UNIFORM)


@workload("normal f32 1e6", family="random")
def normal_1e6(fw):
    return _draw(fw, "normal", N_OTHER)


@workload("randint i32 1e6", family="random")
def randint_1e6(fw):
    return _draw(fw, "randint", N_OTHER)
