"""compile: fused elementwise kernels.  Each workload has an eager row
(op by op) and a compiled row (cmlx and MLX: mx.compile; PyTorch:
torch.compile when CMLX_BENCH_TORCH_COMPILE=1, since inductor takes tens
of seconds per graph on this machine; eager otherwise; NumPy is always
eager).  The cmlx compiled/eager ratio is the gain from fusion.

- GELU, tanh approximation and exact (erf), 1e7 float32
- layer norm written with plain ops (mean, var, rsqrt), (4096, 4096)
- a chain of 100 elementwise ops on 16 elements (per-call overhead)
- one MLP training step (784-512-512-10, batch 128, AdamW), the step
  compiled with the model and optimizer state as inputs and outputs
"""

import importlib
import math
import os
from functools import partial

import numpy as np

from harness import workload

N = 10_000_000
TORCH_COMPILE = os.environ.get("CMLX_BENCH_TORCH_COMPILE") == "1"
_DATA = {}


def data(key, make):
    if key not in _DATA:
        _DATA[key] = make(np.random.default_rng(len(_DATA) + 5))
    return _DATA[key]


def gelu(m, x):
    tanh = m.tanh
    return 0.5 * x * (1 + tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def gelu_exact(m, x):
    return x * (1 + m.erf(x / math.sqrt(2))) / 2


def layer_norm(m, x, w, b):
    mu = x.mean(-1, keepdims=True)
    d = x - mu
    var = (d * d).mean(-1, keepdims=True)
    if m.__name__ == "numpy":
        return d / np.sqrt(var + 1e-5) * w + b
    return d * m.rsqrt(var + 1e-5) * w + b


def chain(m, x):
    for i in range(25):
        x = x * 1.0001 + 0.5
        x = (x.clamp(min=-1.0) if m.__name__ == "torch" else m.maximum(x, -1.0)) - 0.25
    return x


def _compiled(fw, f):
    if fw.name in ("cmlx", "mlx"):
        return fw.mod.compile(f)
    if fw.name == "torch" and TORCH_COMPILE:
        return fw.mod.compile(f)
    return f


def _case(fw, body, arrays, compiled):
    m = fw.mod
    if fw.name == "torch":
        import torch

        m = torch
    elif fw.name == "numpy" and body is gelu_exact:
        return None  # NumPy has no erf
    f = partial(body, m)
    if compiled:
        f = _compiled(fw, f)
    xs = [fw.from_numpy(a) for a in arrays]
    if fw.lazy:
        fw.mod.eval(*xs)
        return lambda: fw.run(f(*xs))
    if fw.name == "torch":
        import torch

        def run():
            with torch.no_grad():
                return f(*xs)

        return run
    return lambda: f(*xs)


def _register(label, body, make_arrays, unit="ms"):
    for compiled in (False, True):
        name = f"{label} {'compiled' if compiled else 'eager'}"

        def make(fw, compiled=compiled):
            return _case(fw, body, data(label, make_arrays), compiled)

        workload(name, family="compile", unit=unit)(make)


_register("gelu tanh 1e7 f32", gelu,
          lambda rg: [rg.standard_normal(N).astype(np.float32)])
_register("gelu erf 1e7 f32", gelu_exact,
          lambda rg: [rg.standard_normal(N).astype(np.float32)])
_register("layer norm ops 4096x4096 f32", layer_norm,
          lambda rg: [rg.standard_normal((4096, 4096)).astype(np.float32),
                      rg.standard_normal(4096).astype(np.float32),
                      rg.standard_normal(4096).astype(np.float32)])
_register("chain 100 ops 16 f32", chain,
          lambda rg: [rg.standard_normal(16).astype(np.float32)], unit="us")


def _mlp_step(fw, compiled):
    if fw.name not in ("cmlx", "mlx"):
        return None
    mx = fw.mod
    nn = importlib.import_module(fw.name + ".nn")
    optim = importlib.import_module(fw.name + ".optimizers")
    mx.random.seed(0)
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    opt = optim.AdamW(learning_rate=1e-3)
    rng = np.random.default_rng(0)
    x = mx.array(rng.standard_normal((128, 784)).astype(np.float32))
    y = mx.array(rng.integers(0, 10, 128).astype(np.int32))
    vg = nn.value_and_grad(model, lambda a, b: nn.losses.cross_entropy(model(a), b,
                                                                         reduction="mean"))
    mx.eval(model.parameters())

    def step(a, b):
        loss, grads = vg(a, b)
        opt.update(model, grads)
        return loss

    if compiled:
        state = [model.state, opt.state]
        step = mx.compile(step, inputs=state, outputs=state)

    def run():
        loss = step(x, y)
        mx.eval(loss, model.parameters(), opt.state)

    return run


@workload("train step MLP 784-512-512-10 b128 eager", family="compile")
def mlp_eager(fw):
    return _mlp_step(fw, False)


@workload("train step MLP 784-512-512-10 b128 compiled", family="compile")
def mlp_compiled(fw):
    return _mlp_step(fw, True)
