"""Gather: take 10^6 random int32 indices from a 10^6-element float32
array (flat take, so the result has the indices' shape).  The random
order defeats caches and prefetching, as a real gather would."""

import numpy as np

from harness import workload

N = 10 ** 6
_DATA = {}


def data():
    if not _DATA:
        rg = np.random.default_rng(3)
        _DATA["x"] = rg.standard_normal(N).astype(np.float32)
        _DATA["idx"] = rg.integers(0, N, N).astype(np.int32)
    return _DATA


@workload("take f32 1e6 from 1e6 (int32 idx)", family="index")
def take_1e6(fw):
    d = data()
    a = fw.from_numpy(d["x"])
    if fw.name == "torch":
        # torch.take wants int64 indices; converting once here keeps the
        # conversion out of the timed loop (and the note says so)
        idx = fw.mod.from_numpy(d["idx"].astype(np.int64))
        take = fw.mod.take
        return (lambda: take(a, idx)), "int64 indices"
    idx = fw.from_numpy(d["idx"])
    take = fw.mod.take
    return lambda: fw.run(take(a, idx))
