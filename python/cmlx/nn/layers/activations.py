"""Activation functions and their ``Module`` wrappers (``mlx.nn`` names)."""

import math
from typing import Any

from ... import core as mx
from .base import Module

_SQRT_2 = math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def sigmoid(x):
    """``1 / (1 + exp(-x))``, element-wise."""
    return mx.sigmoid(x)


def relu(x):
    """``max(x, 0)``."""
    return mx.maximum(x, 0)


def relu2(x):
    """``max(x, 0) ** 2``."""
    return mx.square(mx.maximum(x, 0))


def relu6(x):
    """``min(max(x, 0), 6)``."""
    return mx.minimum(mx.maximum(x, 0), 6.0)


def leaky_relu(x, negative_slope=0.01):
    """``max(negative_slope * x, x)``."""
    return mx.maximum(negative_slope * x, x)


def log_softmax(x, axis=-1):
    """``x - logsumexp(x)`` along ``axis`` (max-shifted for stability)."""
    shifted = x - mx.stop_gradient(mx.max(x, axis=axis, keepdims=True))
    return shifted - mx.logsumexp(shifted, axis=axis, keepdims=True)


def elu(x, alpha=1.0):
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere."""
    return mx.where(x > 0, x, alpha * (mx.exp(x) - 1))


def softmax(x, axis=-1):
    """Softmax along ``axis``."""
    return mx.softmax(x, axis=axis)


def softplus(x):
    """``log(1 + exp(x))``."""
    return mx.logaddexp(x, 0)


def softsign(x):
    """``x / (1 + |x|)``."""
    return mx.divide(x, 1 + mx.abs(x))


def softshrink(x, lambd: float = 0.5):
    """``x - sign(x) * lambd`` where ``|x| > lambd``, else 0."""
    return mx.where(mx.abs(x) > lambd, x - mx.sign(x) * lambd, 0)


def celu(x, alpha=1.0):
    """``max(x, 0) + alpha * (exp(min(x, 0) / alpha) - 1)``."""
    return mx.maximum(x, 0.0) + alpha * (mx.exp(mx.minimum(x, 0.0) / alpha) - 1)


def silu(x):
    """``x * sigmoid(x)`` (swish)."""
    return x * mx.sigmoid(x)


def log_sigmoid(x):
    """``log(sigmoid(x)) = -softplus(-x)``."""
    return -softplus(-x)


def gelu(x) -> "mx.array":
    """Exact GELU: ``x * (1 + erf(x / sqrt(2))) / 2``."""
    return x * (1 + mx.erf(x / _SQRT_2)) / 2


def gelu_approx(x):
    """GELU with the tanh approximation."""
    return 0.5 * x * (1 + mx.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x**3)))


def gelu_fast_approx(x):
    """GELU approximated by ``x * sigmoid(1.702 * x)``."""
    return x * mx.sigmoid(1.702 * x)


def glu(x: "mx.array", axis: int = -1) -> "mx.array":
    """Gated linear unit: splits ``x`` in halves ``a, b`` along ``axis`` and
    returns ``a * sigmoid(b)``."""
    a, b = mx.split(x, indices_or_sections=2, axis=axis)
    return a * mx.sigmoid(b)


def step(x: "mx.array", threshold: float = 0.0):
    """1 where ``x >= threshold``, else 0."""
    return mx.where(x >= threshold, 1, 0)


def selu(x):
    """Scaled ELU (``alpha = 1.67326``, ``scale = 1.0507``)."""
    return elu(x, 1.67326) * 1.0507


def prelu(x: "mx.array", alpha: "mx.array") -> "mx.array":
    """``max(0, x) + alpha * min(0, x)``."""
    return mx.maximum(0, x) + alpha * mx.minimum(0, x)


def mish(x: "mx.array") -> "mx.array":
    """``x * tanh(softplus(x))``."""
    return x * mx.tanh(softplus(x))


def hardswish(x):
    """``x * min(max(x + 3, 0), 6) / 6``."""
    return x * mx.minimum(mx.maximum(x + 3, 0), 6) / 6


def hard_tanh(x, min_val=-1.0, max_val=1.0):
    """``x`` clipped to ``[min_val, max_val]``."""
    return mx.minimum(mx.maximum(x, min_val), max_val)


def hard_shrink(x, lambd=0.5):
    """``x`` where ``|x| > lambd``, else 0."""
    return mx.where(mx.abs(x) > lambd, x, 0)


def softmin(x, axis=-1):
    """``softmax(-x)`` along ``axis``."""
    return mx.softmax(-x, axis=axis)


def tanh(x):
    """Hyperbolic tangent."""
    return mx.tanh(x)


def _wrapping(fn):
    """Class decorator: ``__call__(x)`` applies ``fn``."""

    def decorate(cls):
        cls.__call__ = lambda self, x: fn(x)
        cls.__doc__ = f"Applies :func:`{fn.__name__}` element-wise."
        return cls

    return decorate


class GLU(Module):
    """Gated linear unit along ``axis`` (see :func:`glu`)."""

    def __init__(self, axis: int = -1):
        super().__init__()
        self.axis = axis

    def __call__(self, x) -> Any:
        return glu(x=x, axis=self.axis)


@_wrapping(sigmoid)
class Sigmoid(Module):
    pass


@_wrapping(mish)
class Mish(Module):
    pass


@_wrapping(relu)
class ReLU(Module):
    pass


@_wrapping(relu2)
class ReLU2(Module):
    pass


@_wrapping(relu6)
class ReLU6(Module):
    pass


class LeakyReLU(Module):
    """:func:`leaky_relu` with a fixed ``negative_slope``."""

    def __init__(self, negative_slope=0.01):
        super().__init__()
        self._negative_slope = negative_slope

    def __call__(self, x):
        return leaky_relu(x, self._negative_slope)


class ELU(Module):
    """:func:`elu` with a fixed ``alpha``."""

    def __init__(self, alpha=1.0):
        super().__init__()
        self._alpha = alpha

    def __call__(self, x):
        return elu(x, self._alpha)


@_wrapping(softmax)
class Softmax(Module):
    pass


@_wrapping(softplus)
class Softplus(Module):
    pass


@_wrapping(softsign)
class Softsign(Module):
    pass


class Softshrink(Module):
    """:func:`softshrink` with a fixed ``lambd``."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def __call__(self, x):
        return softshrink(x, self.lambd)


class CELU(Module):
    """:func:`celu` with a fixed ``alpha``."""

    def __init__(self, alpha=1.0):
        super().__init__()
        self._alpha = alpha

    def __call__(self, x):
        return celu(x, self._alpha)


@_wrapping(silu)
class SiLU(Module):
    pass


@_wrapping(log_softmax)
class LogSoftmax(Module):
    pass


@_wrapping(log_sigmoid)
class LogSigmoid(Module):
    pass


class PReLU(Module):
    """:func:`prelu` with a learnable slope ``weight`` of shape
    ``(num_parameters,)`` initialised to ``init``."""

    def __init__(self, num_parameters=1, init=0.25):
        super().__init__()
        self.weight = mx.full([num_parameters], init)

    def __call__(self, x: "mx.array"):
        return prelu(x, self.weight)


class GELU(Module):
    """GELU; ``approx`` is ``"none"`` (exact), ``"precise"``/``"tanh"``
    (:func:`gelu_approx`) or ``"fast"`` (:func:`gelu_fast_approx`)."""

    _ALLOWED = ["none", "precise", "tanh", "fast"]

    def __init__(self, approx="none"):
        super().__init__()
        if approx not in self._ALLOWED:
            raise ValueError(
                f"The approximation should be in {self._ALLOWED} but '{approx}' was given"
            )
        self._approx = approx

    def __call__(self, x):
        if self._approx == "none":
            return gelu(x)
        if self._approx in ("precise", "tanh"):
            return gelu_approx(x)
        return gelu_fast_approx(x)


@_wrapping(tanh)
class Tanh(Module):
    pass


@_wrapping(hardswish)
class Hardswish(Module):
    pass


class Step(Module):
    """:func:`step` with a fixed ``threshold``."""

    def __init__(self, threshold: float = 0.0):
        super().__init__()
        self.threshold = threshold

    def __call__(self, x: "mx.array"):
        return step(x, self.threshold)


@_wrapping(selu)
class SELU(Module):
    pass


@_wrapping(hard_tanh)
class HardTanh(Module):
    pass


class HardShrink(Module):
    """:func:`hard_shrink` with a fixed ``lambd``."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def __call__(self, x):
        return hard_shrink(x, self.lambd)


@_wrapping(softmin)
class Softmin(Module):
    pass
