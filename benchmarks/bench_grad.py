"""Automatic differentiation: the cost of building and evaluating the
backward graph, measured as forward-only time, forward+backward time and
their ratio, for two models:

- chain: 1,000 elementwise ops on a 10^4 float32 vector (sin, multiply by
  0.99, add 0.01, repeated), summed.  Tiny ops, so per-node overhead of the
  graph and of its transpose dominates.  (0.99 and 0.01 keep values near
  0.4 and the gradient around 1e-12: normal floats, no denormal slowdown.)
- mlp: a 3-layer perceptron 784-512-512-10 with tanh, batch 256, softmax
  cross-entropy written as mean(logsumexp(logits) - sum(onehot * logits)).
  Matmul-dominated; the gradient is taken for all six weights and biases.

cmlx and MLX use value_and_grad (forward value and gradients evaluated
together); PyTorch times its forward under no_grad and forward+backward
with autograd.  NumPy has no autograd: it gets the forward row only, as a
reference.  A framework without grad gets "n/a" in the row's note.

The harness's cells hold times, so the ratio row's numbers are in its note,
computed from the samples the two rows above it just took (the timed
callables record their own durations; see _recorded).  Run the family as a
whole (-k grad) for the ratio rows to have data.
"""

import statistics
import time

import numpy as np

from harness import workload

CHAIN_OPS, CHAIN_N = 1000, 10 ** 4
BATCH, WIDTHS = 256, (784, 512, 512, 10)
WARMUP = 2  # harness.measure's warmup calls, left out of the recorded medians

_DATA = {}
_SAMPLES = {}  # (model, "fwd"|"fwdbwd", framework) -> seconds per call

# The harness writes an exception as "<framework>: <type name>: <message>" in
# the row's note; naming the types this way makes the notes read
# "cmlx: n/a: ..." and "cmlx: ratio: 2.75".
Unavailable = type("n/a", (Exception,), {})
Ratio = type("ratio", (Exception,), {})


def data():
    if not _DATA:
        rg = np.random.default_rng(6)
        _DATA["chain_x"] = rg.uniform(-1, 1, CHAIN_N).astype(np.float32)
        ws = []
        for fan_in, fan_out in zip(WIDTHS[:-1], WIDTHS[1:]):
            ws.append((rg.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)).astype(np.float32))
            ws.append(np.zeros(fan_out, np.float32))
        _DATA["mlp_params"] = ws
        _DATA["mlp_x"] = rg.standard_normal((BATCH, WIDTHS[0])).astype(np.float32)
        labels = rg.integers(0, WIDTHS[-1], BATCH)
        _DATA["mlp_y"] = np.eye(WIDTHS[-1], dtype=np.float32)[labels]
    return _DATA


# ------------------------------------------------------------ the models
# Written once against a module `m` that has sin, tanh, sum, mean and
# logsumexp with numpy-like signatures (cmlx, MLX, NumPy via _NumpyOps,
# PyTorch via _TorchOps).

def chain(m, x):
    y = x
    for i in range(CHAIN_OPS):
        k = i % 3
        if k == 0:
            y = m.sin(y)
        elif k == 1:
            y = y * 0.99
        else:
            y = y + 0.01
    return m.sum(y)


def mlp_loss(m, params, x, onehot):
    w1, b1, w2, b2, w3, b3 = params
    h = m.tanh(x @ w1 + b1)
    h = m.tanh(h @ w2 + b2)
    logits = h @ w3 + b3
    return m.mean(m.logsumexp(logits, axis=1) - m.sum(onehot * logits, axis=1))


class _NumpyOps:
    sin, tanh, mean = np.sin, np.tanh, np.mean

    @staticmethod
    def sum(a, axis=None):
        return np.sum(a, axis=axis)

    @staticmethod
    def logsumexp(a, axis):
        mx = np.max(a, axis=axis, keepdims=True)
        return np.log(np.sum(np.exp(a - mx), axis=axis)) + np.squeeze(mx, axis)


class _TorchOps:
    def __init__(self, torch):
        self.t = torch
        self.sin, self.tanh, self.mean = torch.sin, torch.tanh, torch.mean

    def sum(self, a, axis=None):
        return self.t.sum(a) if axis is None else self.t.sum(a, dim=axis)

    def logsumexp(self, a, axis):
        return self.t.logsumexp(a, dim=axis)


# ------------------------------------------------------------ per framework

def _inputs(fw, model):
    """The model as a function of its differentiated inputs (a tuple), and
    those inputs, as arrays of `fw`."""
    d = data()
    if model == "chain":
        return (lambda m, x: chain(m, x)), (fw.from_numpy(d["chain_x"]),)
    x, y = fw.from_numpy(d["mlp_x"]), fw.from_numpy(d["mlp_y"])
    params = [fw.from_numpy(p) for p in d["mlp_params"]]
    return (lambda m, ps: mlp_loss(m, ps, x, y)), (params,)


def _lazy_callables(fw, model):
    """cmlx / MLX: forward = evaluate f; fwd+bwd = evaluate value_and_grad."""
    m = fw.mod
    f, args = _inputs(fw, model)

    def fn(*a):
        return f(m, *a)

    fwd = lambda: m.eval(fn(*args))  # noqa: E731
    if not hasattr(m, "value_and_grad"):
        return fwd, None
    vg = m.value_and_grad(fn)

    def fwdbwd():
        v, g = vg(*args)
        m.eval(v, g)

    return fwd, fwdbwd


def _torch_callables(fw, model):
    t = fw.mod
    ops = _TorchOps(t)
    f, args = _inputs(fw, model)
    args = tuple(a.clone() for a in args) if model == "chain" else ([p.clone() for p in args[0]],)
    leaves = list(args) if model == "chain" else args[0]
    for leaf in leaves:
        leaf.requires_grad_(True)

    def fwd():
        with t.no_grad():
            return f(ops, *args)

    def fwdbwd():
        for leaf in leaves:
            leaf.grad = None
        loss = f(ops, *args)
        loss.backward()
        return loss

    return fwd, fwdbwd


def _callables(fw, model):
    if fw.name == "numpy":
        f, args = _inputs(fw, model)
        return (lambda: f(_NumpyOps, *args)), None
    if fw.name == "torch":
        return _torch_callables(fw, model)
    return _lazy_callables(fw, model)


def _recorded(key, fn):
    """fn, recording each call's duration under `key` for the ratio row."""
    samples = _SAMPLES[key] = []

    def timed():
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)

    return timed


def _median(key):
    s = _SAMPLES.get(key) or []
    s = s[WARMUP:] if len(s) > WARMUP else s
    return statistics.median(s) if s else None


def _forward(model):
    def make(fw):
        _SAMPLES.pop((model, "fwd", fw.name), None)  # no stale data if this raises
        fwd, _ = _callables(fw, model)
        return _recorded((model, "fwd", fw.name), fwd)
    return make


def _fwdbwd(model):
    def make(fw):
        _SAMPLES.pop((model, "fwdbwd", fw.name), None)
        if fw.name == "numpy":
            return None  # no autograd
        if fw.name in ("cmlx", "mlx") and not hasattr(fw.mod, "value_and_grad"):
            raise Unavailable("no value_and_grad")
        _, fb = _callables(fw, model)
        return _recorded((model, "fwdbwd", fw.name), fb)
    return make


def _ratio(model):
    def make(fw):
        if fw.name == "numpy":
            return None
        a, b = _median((model, "fwd", fw.name)), _median((model, "fwdbwd", fw.name))
        if a is None or b is None:
            raise Unavailable("forward or fwd+bwd not measured")
        raise Ratio(f"{b / a:.2f}")
    return make


# names fit the table's 40-character column (batch and sizes: see above)
for _model, _label in (("chain", f"grad chain {CHAIN_OPS} ops x 1e4"),
                       ("mlp", f"grad mlp {'-'.join(map(str, WIDTHS))}")):
    workload(f"{_label}: forward", family="grad")(_forward(_model))
    workload(f"{_label}: fwd+bwd", family="grad")(_fwdbwd(_model))
    workload(f"{_label}: fwd+bwd / fwd", family="grad")(_ratio(_model))
