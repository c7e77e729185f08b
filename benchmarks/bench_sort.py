"""Sorting: 10^6 random float32 values, ascending, into a new array (the
input is left as it is, so every sample sorts the same unsorted data)."""

import numpy as np

from harness import workload

N = 10 ** 6
_DATA = {}


def data():
    if not _DATA:
        _DATA["x"] = np.random.default_rng(2).standard_normal(N).astype(np.float32)
    return _DATA


@workload("sort f32 1e6", family="sort")
def sort_1e6(fw):
    a = fw.from_numpy(data()["x"])
    if fw.name == "torch":
        sort = fw.mod.sort
        return lambda: sort(a).values  # torch.sort returns (values, indices)
    sort = fw.mod.sort  # numpy, mlx, cmlx: sort(a) along the last axis
    return lambda: fw.run(sort(a))
