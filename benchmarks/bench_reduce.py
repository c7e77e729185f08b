"""Reductions over float32: sum and max of a whole 10^7-element array, and
along axis 0 and axis 1 of a 3000x3000 array.

Axis 1 reduces along contiguous rows; axis 0 reduces across rows (every
output element gathers a strided column), so the two exercise different
kernel paths.  All frameworks get the same row-major data.
"""

import numpy as np

from harness import workload

N = 10 ** 7
SIDE = 3000
_DATA = {}


def data():
    """Inputs in [-1, 1), built once and shared by all frameworks."""
    if not _DATA:
        rg = np.random.default_rng(1)
        _DATA["flat"] = rg.uniform(-1, 1, N).astype(np.float32)
        _DATA["square"] = rg.uniform(-1, 1, (SIDE, SIDE)).astype(np.float32)
    return _DATA


def _reducer(fw, op, axis):
    """`op` ("sum" or "max") over `axis` (None: all) as a one-argument
    function of a framework array; torch spells the axis `dim` and its
    max-with-dim returns (values, indices), hence amax."""
    if fw.name == "torch":
        t = fw.mod
        if op == "sum":
            return (lambda a: t.sum(a)) if axis is None else (lambda a: t.sum(a, dim=axis))
        return (lambda a: t.max(a)) if axis is None else (lambda a: t.amax(a, dim=axis))
    f = getattr(fw.mod, op)  # numpy, mlx and cmlx agree on name and keyword
    return (lambda a: f(a)) if axis is None else (lambda a: f(a, axis=axis))


def _make(op, axis):
    def make(fw):
        d = data()
        a = fw.from_numpy(d["flat"] if axis is None else d["square"])
        red = _reducer(fw, op, axis)
        return lambda: fw.run(red(a))
    return make


for _op in ("sum", "max"):
    workload(f"{_op} f32 1e7 (all)", family="reduce")(_make(_op, None))
    for _axis in (0, 1):
        workload(f"{_op} f32 3000x3000 axis={_axis}", family="reduce")(_make(_op, _axis))
