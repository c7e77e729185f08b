"""The matrix products of the Transformer training step in bench_train.py
(4 layers, d=256, MLP 1024, sequence 128, batch 16: 2048 rows), one row
per shape, so the step's BLAS share can be compared per shape:

- forward x @ W^T for the attention projections (N=256) and the MLP
  (N=1024, then 1024 -> 256), with x (16, 128, K) batched against a 2-D W
  as nn.Linear calls it;
- the weight gradient x^T @ g over all 2048 rows (K=2048), the product the
  fold of a batched x against a matrix W reduces a Linear's weight
  gradient to.

Each call is 2*M*N*K flops: 0.27 GFLOP (N=K=256), 1.07 GFLOP (1024 wide).
"""

import numpy as np

from harness import workload

ROWS, D, MLP = 2048, 256, 1024
_DATA = {}


def _rand(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _forward(K, N):
    def bench(fw):
        if fw.name == "numpy":
            return None
        x = fw.from_numpy(_rand((16, ROWS // 16, K), 1))
        w = fw.from_numpy(_rand((N, K), 2))
        if fw.name == "torch":
            return lambda: fw.mod.matmul(x, w.T)
        return lambda: fw.run(fw.mod.matmul(x, w.T))

    return bench


def _weight_grad(K, N):
    def bench(fw):
        if fw.name == "numpy":
            return None
        x = fw.from_numpy(_rand((ROWS, K), 3))
        g = fw.from_numpy(_rand((ROWS, N), 4))
        if fw.name == "torch":
            return lambda: fw.mod.matmul(x.T, g)
        return lambda: fw.run(fw.mod.matmul(x.T, g))

    return bench


for _k, _n in ((D, D), (D, MLP), (MLP, D)):
    workload(f"train matmul fwd (16,128,{_k})@({_k},{_n})", family="train_shapes")(
        _forward(_k, _n))
    workload(f"train matmul wgrad ({_k},2048)@(2048,{_n})", family="train_shapes")(
        _weight_grad(_k, _n))
