"""Loss functions (``mlx.nn.losses``).  ``reduction`` is ``"none"``,
``"mean"`` or ``"sum"``."""

import math
from typing import Literal, Optional, get_args

from .. import core as mx

Reduction = Literal["none", "mean", "sum"]


def _reduce(loss: "mx.array", reduction: Reduction = "none"):
    if reduction not in get_args(Reduction):
        raise ValueError(f"Invalid reduction. Must be one of {get_args(Reduction)}.")
    if reduction == "mean":
        return mx.mean(loss)
    if reduction == "sum":
        return mx.sum(loss)
    return loss


def _same_shape(a, b, what_a, what_b):
    if a.shape != b.shape:
        raise ValueError(f"{what_a} shape {a.shape} does not match {what_b} shape {b.shape}.")


def _weighted(loss, weights):
    if weights is None:
        return loss
    if weights.shape != loss.shape:
        raise ValueError(
            f"Weights with shape {weights.shape} is not the same as output loss with shape "
            f"{loss.shape}."
        )
    return loss * weights


def cross_entropy(
    logits: "mx.array",
    targets: "mx.array",
    weights: Optional["mx.array"] = None,
    axis: int = -1,
    label_smoothing: float = 0.0,
    reduction: Reduction = "none",
) -> "mx.array":
    """Cross entropy of ``logits`` against class indices (one axis fewer)
    or probabilities (same shape) ``targets``, with optional per-sample
    ``weights`` and ``label_smoothing`` in ``[0, 1)``."""
    if label_smoothing < 0 or label_smoothing >= 1:
        raise ValueError(f"Label smoothing must be in [0, 1), got {label_smoothing}.")
    as_probs = targets.ndim == logits.ndim
    reduced = list(logits.shape)
    reduced.pop(axis)
    expected = logits.shape if as_probs else tuple(reduced)
    if targets.shape != expected:
        raise ValueError(
            f"Targets shape {targets.shape} does not match logits shape {logits.shape}."
        )
    logits = logits - mx.stop_gradient(mx.max(logits, axis=axis, keepdims=True))
    if as_probs:
        score = mx.sum(logits * targets, axis=axis)
    else:
        score = mx.take_along_axis(logits, mx.expand_dims(targets, axis), axis).squeeze(axis)
    lse = mx.logsumexp(logits, axis=axis)
    if label_smoothing > 0:
        smoothed = -logits.mean(axis=axis) * label_smoothing
        loss = lse - (1 - label_smoothing) * score + smoothed
    else:
        loss = lse - score
    return _reduce(_weighted(loss, weights), reduction)


def binary_cross_entropy(
    inputs: "mx.array",
    targets: "mx.array",
    weights: Optional["mx.array"] = None,
    with_logits: bool = True,
    reduction: Reduction = "mean",
) -> "mx.array":
    """Binary cross entropy; ``inputs`` are logits (``with_logits``) or
    probabilities (their logs clipped at -100)."""
    _same_shape(inputs, targets, "Inputs", "targets")
    if with_logits:
        loss = mx.logaddexp(0.0, inputs) - inputs * targets
    else:
        log_p = mx.clip(mx.log(inputs), a_min=-100, a_max=None)
        log_q = mx.clip(mx.log(1 - inputs), a_min=-100, a_max=None)
        loss = -(targets * log_p + (1 - targets) * log_q)
    return _reduce(_weighted(loss, weights), reduction)


def l1_loss(predictions, targets, reduction: Reduction = "mean"):
    """Mean absolute error."""
    _same_shape(predictions, targets, "Predictions", "targets")
    return _reduce(mx.abs(predictions - targets), reduction)


def mse_loss(predictions, targets, reduction: Reduction = "mean"):
    """Mean squared error."""
    _same_shape(predictions, targets, "Predictions", "targets")
    return _reduce(mx.square(predictions - targets), reduction)


def nll_loss(inputs, targets, axis: int = -1, reduction: Reduction = "none"):
    """Negative log likelihood of the log-probabilities ``inputs`` at the
    class indices ``targets``."""
    loss = -mx.take_along_axis(inputs, mx.expand_dims(targets, axis), axis).squeeze(axis)
    return _reduce(loss, reduction)


def gaussian_nll_loss(
    inputs,
    targets,
    vars,
    full: bool = False,
    eps: float = 1e-6,
    reduction: Reduction = "mean",
):
    """Negative log likelihood of ``targets`` under ``N(inputs, vars)``
    (variances clamped at ``eps``; ``full`` adds the constant term)."""
    _same_shape(inputs, targets, "Inputs", "targets")
    _same_shape(inputs, vars, "Inputs", "vars")
    vars = mx.maximum(vars, eps)
    loss = 0.5 * (mx.log(vars) + mx.square(targets - inputs) / vars)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def kl_div_loss(inputs, targets, axis: int = -1, reduction: Reduction = "none"):
    """Kullback-Leibler divergence of the log-probabilities ``targets`` from
    the log-probabilities ``inputs``."""
    loss = mx.sum(mx.exp(targets) * (targets - inputs), axis)
    return _reduce(loss, reduction)


def smooth_l1_loss(predictions, targets, beta: float = 1.0, reduction: Reduction = "mean"):
    """Quadratic below ``beta``, linear above."""
    _same_shape(predictions, targets, "Predictions", "targets")
    diff = mx.abs(predictions - targets)
    loss = mx.where(diff < beta, 0.5 * mx.square(diff) / beta, mx.abs(diff) - 0.5 * beta)
    return _reduce(loss, reduction)


def triplet_loss(
    anchors,
    positives,
    negatives,
    axis: int = -1,
    p: int = 2,
    margin: float = 1.0,
    eps: float = 1e-6,
    reduction: Reduction = "none",
):
    """``max(d(a, p) - d(a, n) + margin, 0)`` with ``d`` the ``p``-norm
    distance along ``axis``."""

    def dist(a, b):
        return mx.power(mx.power(mx.abs(a - b), p).sum(axis) + eps, 1.0 / p)

    loss = mx.maximum(dist(anchors, positives) - dist(anchors, negatives) + margin, 0)
    return _reduce(loss, reduction)


def hinge_loss(inputs, targets, reduction: Reduction = "none"):
    """``max(1 - inputs * targets, 0)`` for targets in {-1, 1}."""
    return _reduce(mx.maximum(1 - inputs * targets, 0), reduction)


def huber_loss(inputs, targets, delta: float = 1.0, reduction: Reduction = "none"):
    """Quadratic for errors up to ``delta``, linear beyond."""
    err = mx.abs(inputs - targets)
    quad = mx.minimum(err, delta)
    loss = 0.5 * quad**2 + delta * (err - quad)
    return _reduce(loss, reduction)


def log_cosh_loss(inputs, targets, reduction: Reduction = "none"):
    """``log(cosh(inputs - targets))``."""
    err = inputs - targets
    return _reduce(mx.logaddexp(err, -err) - math.log(2), reduction)


def cosine_similarity_loss(x1, x2, axis: int = 1, eps: float = 1e-8, reduction: Reduction = "none"):
    """Cosine similarity of ``x1`` and ``x2`` along ``axis``."""
    n1 = mx.linalg.norm(x1, axis=axis)
    n2 = mx.linalg.norm(x2, axis=axis)
    loss = mx.sum(x1 * x2, axis=axis) / mx.maximum(n1 * n2, eps)
    return _reduce(loss, reduction)


def margin_ranking_loss(
    inputs1, inputs2, targets, margin: float = 0.0, reduction: Reduction = "none"
):
    """``max(0, -targets * (inputs1 - inputs2) + margin)``."""
    if not inputs1.shape == inputs2.shape == targets.shape:
        raise ValueError(
            "The shapes of the arguments do not match. The provided shapes are "
            f"inputs1.shape={inputs1.shape}, inputs2.shape={inputs2.shape}, and "
            f"targets.shape={targets.shape}."
        )
    loss = mx.maximum(0, -targets * (inputs1 - inputs2) + margin)
    return _reduce(loss, reduction)
