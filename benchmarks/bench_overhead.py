"""Per-op overhead from Python: one-element `a + b`, then eval (lazy
frameworks), timed over many iterations and reported per iteration."""

import numpy as np

from harness import workload

ITERS = 2000  # iterations per timed sample


def _scalar_pair(fw):
    return fw.from_numpy(np.array([1.5], np.float32)), fw.from_numpy(np.array([2.5], np.float32))


@workload("overhead: 1-elem a + b, eval", family="overhead", unit="us", inner=ITERS)
def add_then_eval(fw):
    a, b = _scalar_pair(fw)
    if fw.lazy:
        ev = fw.mod.eval
        return lambda: ev(a + b)
    return lambda: a + b


@workload("overhead: 1-elem a + b (graph only)", family="overhead", unit="us", inner=ITERS)
def add_lazy_only(fw):
    if not fw.lazy:
        return None  # eager frameworks have no separate graph-building cost
    a, b = _scalar_pair(fw)
    return lambda: a + b


@workload("overhead: 1-elem exp(a) * b + a, eval", family="overhead", unit="us", inner=ITERS // 2)
def three_ops_then_eval(fw):
    a, b = _scalar_pair(fw)
    exp = fw.op("exp")
    if fw.lazy:
        ev = fw.mod.eval
        return lambda: ev(exp(a) * b + a)
    return lambda: exp(a) * b + a
