"""Dense float32 matrix product: (1024, 1024) @ (1024, 1024), about 2.1
GFLOP per call.  NumPy, PyTorch and MLX call their BLAS; cmlx uses its own
kernel."""

import numpy as np

from harness import workload

SIDE = 1024
_DATA = {}


def data():
    if not _DATA:
        rg = np.random.default_rng(5)
        _DATA["a"] = rg.standard_normal((SIDE, SIDE)).astype(np.float32)
        _DATA["b"] = rg.standard_normal((SIDE, SIDE)).astype(np.float32)
    return _DATA


@workload("matmul f32 1024x1024", family="matmul")
def matmul_1024(fw):
    d = data()
    a, b = fw.from_numpy(d["a"]), fw.from_numpy(d["b"])
    if fw.lazy:
        return lambda: fw.run(a @ b)
    return lambda: a @ b
