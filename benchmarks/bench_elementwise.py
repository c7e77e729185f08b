"""Large elementwise ops: 10^7 float32, contiguous and transposed.

The transposed inputs are a (4000, 2500) array's .T (a view where the
framework has views).  "mixed" adds a transposed view to a row-major array
of the same shape, which no framework can treat as one contiguous run: it
measures the general strided path.
"""

import numpy as np

from harness import workload

ROWS, COLS = 4000, 2500  # 10^7 elements
_DATA = {}


def data():
    """Two float32 inputs in [-2, 2) (built once, shared by all frameworks)."""
    if not _DATA:
        rg = np.random.default_rng(0)
        _DATA["x"] = rg.uniform(-2, 2, (ROWS, COLS)).astype(np.float32)
        _DATA["y"] = rg.uniform(-2, 2, (ROWS, COLS)).astype(np.float32)
        _DATA["yT"] = np.ascontiguousarray(_DATA["y"].T)
    return _DATA


def _binary(op, layout):
    def make(fw):
        d = data()
        f = fw.op(op)
        a, b = fw.from_numpy(d["x"]), fw.from_numpy(d["y"])
        note = ""
        if layout == "transposed":
            a, n1 = fw.transpose(a)
            b, n2 = fw.transpose(b)
            note = n1 or n2
        elif layout == "mixed":
            a, note = fw.transpose(a)
            b = fw.from_numpy(d["yT"])
        return (lambda: fw.run(f(a, b))), note
    return make


def _unary(op, layout):
    def make(fw):
        f = fw.op(op)
        a = fw.from_numpy(data()["x"])
        note = ""
        if layout == "transposed":
            a, note = fw.transpose(a)
        return (lambda: fw.run(f(a))), note
    return make


for _op in ("add", "multiply"):
    for _layout in ("contiguous", "transposed"):
        workload(f"{_op} f32 1e7 {_layout}", family="elementwise")(_binary(_op, _layout))
for _op in ("exp", "tanh"):
    for _layout in ("contiguous", "transposed"):
        workload(f"{_op} f32 1e7 {_layout}", family="elementwise")(_unary(_op, _layout))
workload("add f32 1e7 mixed (T + row-major)", family="elementwise")(_binary("add", "mixed"))
