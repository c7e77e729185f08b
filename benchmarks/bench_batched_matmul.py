"""Batched float32 matmul with broadcast batch shapes (issue 9): a batch
against one shared matrix, a batch shared across heads, both operands
broadcast, a plain stacked batch, and many tiny matrices.  cmlx folds the
batch axes it can into few large BLAS calls (backend/cpu/matmul.c)."""

import numpy as np

from harness import workload

CASES = [
    ("(64,128,128)@(64,128,128)", (64, 128, 128), (64, 128, 128)),
    ("(32,256,512)@(512,512)", (32, 256, 512), (512, 512)),
    ("(8,16,128,64)@(8,1,64,128)", (8, 16, 128, 64), (8, 1, 64, 128)),
    ("(8,1,128,64)@(1,16,64,128)", (8, 1, 128, 64), (1, 16, 64, 128)),
    ("(16,32,1,64)@(16,32,64,256)", (16, 32, 1, 64), (16, 32, 64, 256)),
    ("(4096,8,8)@(4096,8,8)", (4096, 8, 8), (4096, 8, 8)),
]
_DATA = {}


def data(sa, sb):
    key = (sa, sb)
    if key not in _DATA:
        rg = np.random.default_rng(11)
        _DATA[key] = (rg.standard_normal(sa).astype(np.float32),
                      rg.standard_normal(sb).astype(np.float32))
    return _DATA[key]


def _make(sa, sb):
    def fn(fw):
        a_np, b_np = data(sa, sb)
        a, b = fw.from_numpy(a_np), fw.from_numpy(b_np)
        if fw.lazy:
            return lambda: fw.run(a @ b)
        return lambda: a @ b

    return fn


for _name, _sa, _sb in CASES:
    workload("bmm f32 " + _name, family="batched_matmul")(_make(_sa, _sb))
