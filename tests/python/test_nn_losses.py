"""cmlx.nn.losses and cmlx.nn.init: values against NumPy formulas and,
with the oracle, against mlx.nn on the same inputs, for every reduction;
error messages for bad shapes and arguments."""

import math

import numpy as np
import pytest

from conftest import mlx_ref, mx, needs_oracle
from nn_support import nn, ref_nn, reference_ops

RNG = np.random.default_rng(11)
REDUCTIONS = ["none", "mean", "sum"]


def f32(*shape):
    return RNG.normal(size=shape).astype(np.float32)


def probs(*shape):
    return RNG.uniform(0.05, 0.95, size=shape).astype(np.float32)


# name -> (positional NumPy inputs, keyword arguments)
CASES = [
    ("cross_entropy", lambda: (f32(4, 5), RNG.integers(0, 5, 4)), {}),
    ("cross_entropy", lambda: (f32(4, 5), RNG.integers(0, 5, 4)), {"label_smoothing": 0.3}),
    ("cross_entropy", lambda: (f32(4, 5), probs(4, 5)), {}),
    ("cross_entropy", lambda: (f32(3, 4, 2), RNG.integers(0, 4, (3, 2))), {"axis": 1}),
    ("binary_cross_entropy", lambda: (f32(6), probs(6)), {}),
    ("binary_cross_entropy", lambda: (probs(2, 3), probs(2, 3)), {"with_logits": False}),
    ("l1_loss", lambda: (f32(3, 4), f32(3, 4)), {}),
    ("mse_loss", lambda: (f32(3, 4), f32(3, 4)), {}),
    ("nll_loss", lambda: (f32(4, 5), RNG.integers(0, 5, 4)), {}),
    ("gaussian_nll_loss", lambda: (f32(5), f32(5), probs(5)), {}),
    ("gaussian_nll_loss", lambda: (f32(5), f32(5), probs(5)), {"full": True, "eps": 0.1}),
    ("kl_div_loss", lambda: (np.log(probs(3, 4)), np.log(probs(3, 4))), {}),
    ("smooth_l1_loss", lambda: (f32(8), f32(8)), {"beta": 0.5}),
    ("triplet_loss", lambda: (f32(3, 4), f32(3, 4), f32(3, 4)), {}),
    ("triplet_loss", lambda: (f32(3, 4), f32(3, 4), f32(3, 4)), {"p": 1, "margin": 0.5}),
    ("hinge_loss", lambda: (f32(6), np.sign(f32(6))), {}),
    ("huber_loss", lambda: (f32(6), f32(6)), {"delta": 0.7}),
    ("log_cosh_loss", lambda: (f32(6), f32(6)), {}),
    ("cosine_similarity_loss", lambda: (f32(3, 4), f32(3, 4)), {}),
    ("cosine_similarity_loss", lambda: (f32(3, 4), f32(3, 4)), {"axis": 0}),
    ("margin_ranking_loss", lambda: (f32(5), f32(5), np.sign(f32(5))), {"margin": 0.2}),
]


@needs_oracle
@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_losses_match_mlx(case, reduction):
    name, make, kwargs = CASES[case]
    inputs = make()
    with reference_ops():
        ours = getattr(nn.losses, name)(*map(mx.array, inputs), reduction=reduction, **kwargs)
    ref = getattr(ref_nn.losses, name)(*map(mlx_ref.array, inputs), reduction=reduction, **kwargs)
    assert ours.shape == ref.shape
    np.testing.assert_allclose(np.array(ours), np.array(ref), rtol=1e-5, atol=1e-6)


def test_loss_formulas():
    logits = np.array([[2.0, 1.0, 0.1], [0.5, 2.5, 0.3]], np.float32)
    t = np.array([0, 1])
    lse = np.log(np.exp(logits).sum(1))
    ce = lse - logits[np.arange(2), t]
    got = nn.losses.cross_entropy(mx.array(logits), mx.array(t))
    np.testing.assert_allclose(np.array(got), ce, rtol=1e-6)
    w = np.array([0.5, 2.0], np.float32)
    got = nn.losses.cross_entropy(
        mx.array(logits), mx.array(t), weights=mx.array(w), reduction="sum"
    )
    np.testing.assert_allclose(got.item(), (ce * w).sum(), rtol=1e-6)
    x, y = np.array([1.0, -2.0, 0.5], np.float32), np.array([0.0, 1.0, 1.0], np.float32)
    bce = np.log1p(np.exp(x)) - x * y
    np.testing.assert_allclose(
        nn.losses.binary_cross_entropy(mx.array(x), mx.array(y)).item(), bce.mean(), rtol=1e-6
    )
    d = x - y
    np.testing.assert_allclose(
        np.array(nn.losses.huber_loss(mx.array(x), mx.array(y))),
        np.where(np.abs(d) <= 1, 0.5 * d**2, np.abs(d) - 0.5),
        rtol=1e-6,
    )
    np.testing.assert_allclose(
        np.array(nn.losses.log_cosh_loss(mx.array(x), mx.array(y))), np.log(np.cosh(d)), rtol=1e-5
    )
    np.testing.assert_allclose(
        nn.losses.mse_loss(mx.array(x), mx.array(y), reduction="sum").item(),
        (d**2).sum(),
        rtol=1e-6,
    )


def test_loss_errors():
    a, b = mx.zeros((2, 3)), mx.zeros((3, 2))
    with pytest.raises(ValueError, match="Invalid reduction"):
        nn.losses.l1_loss(a, a, reduction="avg")
    with pytest.raises(
        ValueError, match=r"Predictions shape \(2, 3\) does not match targets shape"
    ):
        nn.losses.mse_loss(a, b)
    with pytest.raises(ValueError, match="Targets shape"):
        nn.losses.cross_entropy(a, mx.zeros((3,), mx.int32))
    with pytest.raises(ValueError, match=r"Label smoothing must be in \[0, 1\)"):
        nn.losses.cross_entropy(a, mx.zeros((2,), mx.int32), label_smoothing=1.0)
    with pytest.raises(ValueError, match="Weights with shape"):
        nn.losses.cross_entropy(a, mx.zeros((2,), mx.int32), weights=mx.ones(3))
    with pytest.raises(ValueError, match="Inputs shape .* does not match vars shape"):
        nn.losses.gaussian_nll_loss(a, a, mx.ones((2,)))
    with pytest.raises(ValueError, match="The shapes of the arguments do not match"):
        nn.losses.margin_ranking_loss(a, a, b)


# ------------------------------------------------------------------- init
def test_init_values_and_shapes():
    a = mx.zeros((64, 32))
    assert np.all(np.array(nn.init.constant(0.5)(a)) == 0.5)
    assert nn.init.constant(1, dtype=mx.float16)(a).dtype == mx.float16
    n = np.array(nn.init.normal(2.0, 0.5)(mx.zeros((200, 100))))
    assert abs(n.mean() - 2.0) < 0.02 and abs(n.std() - 0.5) < 0.02
    u = np.array(nn.init.uniform(-1, 3)(a))
    assert u.min() >= -1 and u.max() < 3
    assert np.array_equal(np.array(nn.init.identity()(mx.zeros((3, 3)))), np.eye(3))
    with pytest.raises(ValueError, match="must be a square matrix"):
        nn.init.identity()(a)
    g = np.array(nn.init.glorot_uniform()(a, gain=2.0))
    assert np.abs(g).max() <= 2.0 * math.sqrt(6 / 96)
    conv = mx.zeros((16, 3, 3, 8))  # fan_in = 8*9, fan_out = 16*9
    h = np.array(nn.init.he_normal()(conv, mode="fan_out"))
    assert abs(h.std() - 1 / math.sqrt(144)) < 0.01
    hu = np.array(nn.init.he_uniform()(conv))
    assert np.abs(hu).max() <= math.sqrt(3 / 72)
    with pytest.raises(ValueError, match="Invalid mode: x"):
        nn.init.he_uniform()(conv, mode="x")
    with pytest.raises(ValueError, match="at least 2 dimensional"):
        nn.init.glorot_normal()(mx.zeros((3,)))
    s = np.array(nn.init.sparse(0.25)(mx.zeros((10, 8))))
    assert np.all((s == 0).sum(axis=1) >= 2)
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions"):
        nn.init.sparse(0.5)(mx.zeros((2, 2, 2)))


@pytest.mark.skipif(not hasattr(mx, "linalg"), reason="waits for mx.linalg.qr")
def test_init_orthogonal():
    q = np.array(nn.init.orthogonal()(mx.zeros((4, 6))))
    np.testing.assert_allclose(q @ q.T, np.eye(4), atol=1e-5)


@needs_oracle
@pytest.mark.parametrize(
    "name", ["normal", "uniform", "glorot_normal", "glorot_uniform", "he_normal", "he_uniform"]
)
def test_init_same_samples_as_mlx(name):
    # same seed, same random bits: the initializers draw exactly MLX's values
    mx.random.seed(5)
    ours = getattr(nn.init, name)()(mx.zeros((6, 4)))
    mlx_ref.random.seed(5)
    ref = getattr(ref_nn.init, name)()(mlx_ref.zeros((6, 4)))
    np.testing.assert_allclose(np.array(ours), np.array(ref), rtol=1e-6, atol=1e-7)
