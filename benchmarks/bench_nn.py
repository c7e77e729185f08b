"""nn / optimizers: one training step (forward, value_and_grad, optimizer
update, eval) of models built with the frameworks' nn packages, cmlx.nn vs
mlx.nn (NumPy has no nn; PyTorch rows are left to the issue's own benchmark
of the demo model).

- MLP 784-512-512-10, batch 128, cross entropy, AdamW
- LSTM 64->128, 32 steps, batch 16, forward+backward, SGD (many small ops)
- Adam update alone over 64 parameters of 256x256 (optimizer overhead)
- 4-layer Transformer encoder (d=256, 4 heads, seq 128, batch 16), AdamW:
  needs mx.fast (layer_norm, scaled_dot_product_attention)
"""

import importlib

import numpy as np

from harness import workload


def _libs(fw):
    if fw.name not in ("cmlx", "mlx"):
        return None
    nn = importlib.import_module(fw.name + ".nn")
    return fw.mod, nn, importlib.import_module(fw.name + ".optimizers")


def _train_step(fw, build, make_opt, inputs, loss_fn):
    libs = _libs(fw)
    if libs is None:
        return None
    mx, nn, optim = libs
    mx.random.seed(0)
    model = build(nn)
    opt = make_opt(optim)
    xs = [fw.from_numpy(a) for a in inputs]
    vg = nn.value_and_grad(model, lambda *a: loss_fn(nn, model, *a))
    mx.eval(model.parameters())

    def step():
        loss, grads = vg(*xs)
        opt.update(model, grads)
        mx.eval(loss, model.parameters(), opt.state)

    return step


def _ce(nn, model, x, y):
    return nn.losses.cross_entropy(model(x), y, reduction="mean")


@workload("train step MLP 784-512-512-10 b128 AdamW", family="nn")
def mlp_step(fw):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((128, 784)).astype(np.float32)
    y = rng.integers(0, 10, 128).astype(np.int32)
    return _train_step(
        fw,
        lambda nn: nn.Sequential(
            nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)
        ),
        lambda o: o.AdamW(1e-3),
        [x, y],
        _ce,
    )


@workload("train step LSTM 64->128 L32 b16 SGD", family="nn")
def lstm_step(fw):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((16, 32, 64)).astype(np.float32)

    def loss(nn, model, x):
        h, _ = model(x)
        return (h * h).mean()

    return _train_step(
        fw, lambda nn: nn.LSTM(64, 128), lambda o: o.SGD(0.1, momentum=0.9), [x], loss
    )


@workload("Adam update 64 x (256x256)", family="nn")
def adam_update(fw):
    libs = _libs(fw)
    if libs is None:
        return None
    mx, nn, optim = libs
    rng = np.random.default_rng(2)

    def sample():
        return fw.from_numpy(rng.standard_normal((256, 256)).astype(np.float32))

    params = {f"p{i}": sample() for i in range(64)}
    grads = {k: sample() for k in params}
    opt = optim.Adam(1e-3)
    state = {"p": params}

    def step():
        state["p"] = opt.apply_gradients(grads, state["p"])
        mx.eval(state["p"], opt.state)

    return step


@workload("train step Transformer enc 4x d256 h4 L128 b16 AdamW", family="nn")
def transformer_step(fw):
    libs = _libs(fw)
    if libs is None:
        return None
    mx = libs[0]
    if not hasattr(mx, "fast"):
        raise NotImplementedError("needs mx.fast")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((16, 128, 256)).astype(np.float32)

    def loss(nn, model, x):
        return (model(x, None) ** 2).mean()

    return _train_step(
        fw, lambda nn: nn.TransformerEncoder(4, 256, 4), lambda o: o.AdamW(1e-3), [x], loss
    )
