"""cmlx.optimizers: every optimizer's steps against MLX's on the same model,
data and gradients (same run, same numbers), schedules, state handling,
MultiOptimizer, clip_grad_norm, and hand-computed first steps."""

import math

import numpy as np
import pytest

from conftest import mlx_ref, mx, needs_oracle
from nn_support import (
    assert_tree_close,
    nn,
    optim,
    ref_nn,
    ref_optim,
    reference_ops,
    same_weights,
    utils,
)

RNG = np.random.default_rng(5)
X = RNG.normal(size=(16, 6)).astype(np.float32)
Y = RNG.integers(0, 3, 16)


def model(lib):
    return lib.Sequential(lib.Linear(6, 8), lib.Tanh(), lib.Linear(8, 3))


def train(lib, core, net, opt, steps):
    x, y = core.array(X), core.array(Y)

    def loss(a, b):
        return lib.losses.cross_entropy(net(a), b, reduction="mean")

    vg = lib.value_and_grad(net, loss)
    losses = []
    for _ in range(steps):
        value, grads = vg(x, y)
        opt.update(net, grads)
        core.eval(net.parameters(), opt.state)
        losses.append(value.item())
    return losses


OPTIMIZERS = [
    ("SGD", (0.1,), {}),
    ("SGD", (0.1,), {"momentum": 0.9}),
    ("SGD", (0.1,), {"momentum": 0.9, "dampening": 0.2, "weight_decay": 0.01}),
    ("SGD", (0.1,), {"momentum": 0.8, "nesterov": True, "weight_decay": 0.1}),
    ("RMSprop", (0.01,), {}),
    ("RMSprop", (0.01,), {"alpha": 0.5, "eps": 1e-4}),
    ("Adagrad", (0.1,), {}),
    ("AdaDelta", (1.0,), {"rho": 0.8}),
    ("Adam", (0.01,), {}),
    ("Adam", (0.01,), {"betas": [0.8, 0.99], "bias_correction": True}),
    ("AdamW", (0.01,), {}),
    ("AdamW", (0.01,), {"weight_decay": 0.1, "bias_correction": True}),
    ("Adamax", (0.01,), {}),
    ("Lion", (0.001,), {}),
    ("Lion", (0.001,), {"weight_decay": 0.1}),
    ("Adafactor", (), {}),
    ("Adafactor", (0.01,), {"relative_step": False, "beta_1": 0.9, "weight_decay": 0.1}),
    ("Adafactor", (), {"warmup_init": True, "scale_parameter": False}),
    ("Muon", (0.02,), {}),
    ("Muon", (0.02,), {"nesterov": False, "weight_decay": 0.0}),
]


@needs_oracle
@pytest.mark.parametrize("case", range(len(OPTIMIZERS)), ids=lambda i: OPTIMIZERS[i][0] + str(i))
def test_steps_match_mlx(case):
    name, args, kwargs = OPTIMIZERS[case]
    ref_net = model(ref_nn)
    net = same_weights(ref_net, model(nn))
    with reference_ops():
        ours = train(nn, mx, net, getattr(optim, name)(*args, **kwargs), 6)
    ref = train(ref_nn, mlx_ref, ref_net, getattr(ref_optim, name)(*args, **kwargs), 6)
    np.testing.assert_allclose(ours, ref, rtol=2e-5, atol=1e-6)
    assert_tree_close(net.parameters(), ref_net.parameters(), rtol=2e-5, atol=2e-6)


@needs_oracle
@pytest.mark.parametrize(
    "make",
    [
        lambda o: o.cosine_decay(0.1, 4, 0.01),
        lambda o: o.exponential_decay(0.1, 0.7),
        lambda o: o.step_decay(0.1, 0.5, 2),
        lambda o: o.linear_schedule(0.0, 0.1, 3),
        lambda o: o.join_schedules([o.linear_schedule(0.0, 0.1, 2), o.cosine_decay(0.1, 3)], [2]),
    ],
)
def test_schedules_match_mlx(make):
    for step in range(8):
        a = make(optim)(mx.array(step))
        b = make(ref_optim)(mlx_ref.array(step))
        np.testing.assert_allclose(np.array(a), np.array(b), rtol=1e-6, atol=1e-8)
    ref_net = model(ref_nn)
    net = same_weights(ref_net, model(nn))
    ours = train(nn, mx, net, optim.SGD(make(optim), momentum=0.5), 6)
    ref = train(ref_nn, mlx_ref, ref_net, ref_optim.SGD(make(ref_optim), momentum=0.5), 6)
    np.testing.assert_allclose(ours, ref, rtol=2e-5)


def test_schedule_values():
    cos = optim.cosine_decay(1.0, 10, 0.1)
    np.testing.assert_allclose(
        cos(mx.array(5)).item(), 0.1 + 0.5 * (1 + math.cos(math.pi / 2)) * 0.9, rtol=1e-6
    )
    assert abs(cos(mx.array(50)).item() - 0.1) < 1e-7
    assert abs(optim.step_decay(1.0, 0.5, 3)(mx.array(7)).item() - 0.25) < 1e-7
    assert abs(optim.linear_schedule(0.0, 1.0, 4)(mx.array(2)).item() - 0.5) < 1e-7
    joined = optim.join_schedules([lambda s: mx.array(1.0), lambda s: s * 0.0 + 2.0], [3])
    assert joined(mx.array(2)).item() == 1.0 and joined(mx.array(3)).item() == 2.0
    for bad, msg in [
        (lambda: optim.step_decay(1, 0.5, 0), "step_size must be greater than 0"),
        (lambda: optim.cosine_decay(1, 0), "decay_steps must be greater than 0"),
        (lambda: optim.linear_schedule(0, 1, 0), "steps must be greater than 0"),
        (lambda: optim.join_schedules([], []), "Must provide at least 1 schedule"),
        (lambda: optim.join_schedules([cos, cos], []), "Received 0 boundaries but expected 1"),
    ]:
        with pytest.raises(ValueError, match=msg):
            bad()


def test_first_steps_by_hand():
    p = {"w": mx.array([1.0, -2.0])}
    g = {"w": mx.array([0.5, 0.25])}
    gn = np.array([0.5, 0.25])
    out = optim.SGD(0.1).apply_gradients(g, p)
    np.testing.assert_allclose(np.array(out["w"]), [1.0 - 0.05, -2.0 - 0.025], rtol=1e-6)
    adam = optim.Adam(0.1)
    out = adam.apply_gradients(g, p)
    m, v = 0.1 * gn, 0.001 * gn**2
    np.testing.assert_allclose(
        np.array(out["w"]), np.array([1.0, -2.0]) - 0.1 * m / (np.sqrt(v) + 1e-8), rtol=1e-5
    )
    assert adam.step.item() == 1 and adam.step.dtype == mx.uint64
    np.testing.assert_allclose(np.array(adam.state["w"]["m"]), m, rtol=1e-6)
    lion = optim.Lion(0.1)
    np.testing.assert_allclose(np.array(lion.apply_gradients(g, p)["w"]), [0.9, -2.1], rtol=1e-6)
    ag = optim.Adagrad(1.0)
    np.testing.assert_allclose(np.array(ag.apply_gradients(g, p)["w"]), [0.0, -3.0], atol=1e-6)


def test_state_init_and_learning_rate():
    net = model(nn)
    opt = optim.AdamW(learning_rate=0.01)
    opt.init(net.trainable_parameters())
    assert set(opt.state) == {"step", "learning_rate", "layers"}
    assert opt.state["layers"][1] == {}
    assert opt.state["layers"][0]["weight"]["m"].shape == (8, 6)
    opt.learning_rate = 0.5
    assert opt.learning_rate.item() == 0.5
    # a new optimizer continues from a saved state
    state = utils.tree_map(lambda a: a, opt.state)
    opt2 = optim.AdamW(learning_rate=0.5)
    opt2.state = state
    g = utils.tree_map(lambda a: mx.ones_like(a), net.trainable_parameters())
    a = opt.apply_gradients(g, net.trainable_parameters())
    b = opt2.apply_gradients(g, net.trainable_parameters())
    for (k, x), (_, y) in zip(utils.tree_flatten(a), utils.tree_flatten(b)):
        assert np.array_equal(np.array(x), np.array(y)), k
    # a scheduled learning rate follows the step
    opt3 = optim.SGD(optim.exponential_decay(1.0, 0.5))
    for _ in range(3):
        opt3.apply_gradients(g, net.trainable_parameters())
    assert abs(opt3.learning_rate.item() - 0.25) < 1e-7


def test_types_conserved():
    p = {"w": mx.ones((3,), mx.float16), "v": mx.ones((2, 2), mx.bfloat16)}
    g = utils.tree_map(lambda a: a * 0.5, p)
    for name, args in [
        ("SGD", (0.1,)),
        ("Adam", (0.1,)),
        ("AdamW", (0.1,)),
        ("Adafactor", ()),
        ("Lion", (0.1,)),
        ("RMSprop", (0.1,)),
        ("AdaDelta", (0.1,)),
        ("Adamax", (0.1,)),
        ("Adagrad", (0.1,)),
    ]:
        out = getattr(optim, name)(*args).apply_gradients(g, p)
        assert out["w"].dtype == mx.float16 and out["v"].dtype == mx.bfloat16, name


def test_argument_errors():
    for bad, msg in [
        (lambda: optim.SGD(0.1, nesterov=True), "Nesterov momentum requires a momentum"),
        (lambda: optim.Adam(0.1, betas=[1.0, 0.9]), r"Adam beta1 should be in \[0, 1\)"),
        (lambda: optim.Adam(0.1, eps=-1.0), "Adam epsilon should be >=0"),
        (lambda: optim.Lion(0.1, betas=[0.9, 1.5]), r"Lion beta2 should be in \[0, 1\)"),
        (lambda: optim.RMSprop(0.1, alpha=-0.1), "RMSprop alpha should be >=0"),
        (lambda: optim.RMSprop(0.1, eps=0.0), "RMSprop epsilon should be >0"),
        (lambda: optim.Adagrad(0.1, eps=0.0), "Adagrad epsilon should be >0"),
        (lambda: optim.AdaDelta(0.1, rho=-1.0), "AdaDelta rho should be >=0"),
        (lambda: optim.AdaDelta(0.1, eps=0.0), "AdaDelta epsilon should be >0"),
        (lambda: optim.clip_grad_norm({}, -1.0), "max_norm should be >=0"),
        (
            lambda: optim.MultiOptimizer([optim.SGD(0.1)], [lambda *a: True]),
            "Given 1 filters but 0 needed",
        ),
    ]:
        with pytest.raises(ValueError, match=msg):
            bad()


def test_clip_grad_norm():
    g = {"a": mx.array([3.0, 0.0]), "b": [mx.array([[4.0]])]}
    clipped, norm = optim.clip_grad_norm(g, 1.0)
    assert abs(norm.item() - 5.0) < 1e-6
    np.testing.assert_allclose(np.array(clipped["a"]), [3 / (5 + 1e-6), 0], rtol=1e-6)
    same, _ = optim.clip_grad_norm(g, 10.0)
    np.testing.assert_allclose(np.array(same["b"][0]), [[4.0]])


@needs_oracle
def test_multi_optimizer_matches_mlx():
    def make(o):
        return o.MultiOptimizer(
            [o.Adam(0.01), o.SGD(0.1, momentum=0.9)], [lambda path, g: path.endswith("bias")]
        )

    ref_net = model(ref_nn)
    net = same_weights(ref_net, model(nn))
    ours_opt = make(optim)
    ours = train(nn, mx, net, ours_opt, 5)
    ref = train(ref_nn, mlx_ref, ref_net, make(ref_optim), 5)
    np.testing.assert_allclose(ours, ref, rtol=2e-5)
    assert_tree_close(net.parameters(), ref_net.parameters(), rtol=2e-5, atol=2e-6)
    assert len(ours_opt.state["states"]) == 2
    assert "m" in ours_opt.state["states"][0]["layers"][0]["bias"]
    ours_opt.learning_rate = 0.3
    assert ours_opt.optimizers[1].learning_rate.item() == pytest.approx(0.3)
    with pytest.raises(ValueError, match="Invalid state provided"):
        ours_opt.state = {"states": []}
