"""Strided copy: materialize the transpose of a 4096x4096 float32 array in
row-major order (cmlx and MLX: contiguous(a.T); NumPy: ascontiguousarray;
PyTorch: a.T.contiguous()).  Reading one layout while writing the other
is the worst case for caches, so this measures the copy kernel's blocking.

The transposed view is made (and, for lazy frameworks, evaluated) before
timing, so only the copy is timed.
"""

import numpy as np

from harness import workload

SIDE = 4096
_DATA = {}


def data():
    if not _DATA:
        _DATA["x"] = np.random.default_rng(4).standard_normal((SIDE, SIDE)).astype(np.float32)
    return _DATA


@workload("contiguous(a.T) f32 4096x4096", family="copy")
def transpose_copy(fw):
    a = fw.from_numpy(data()["x"])
    at = a.T
    if fw.name == "numpy":
        return lambda: np.ascontiguousarray(at)
    if fw.name == "torch":
        return lambda: at.contiguous()
    mx = fw.mod
    mx.eval(at)
    if hasattr(mx, "contiguous"):
        contiguous = mx.contiguous
        return lambda: fw.run(contiguous(at))
    # an MLX without contiguous(): array(view) copies into a new array
    return (lambda: fw.run(mx.array(at))), "mx.array(a.T): no contiguous()"
