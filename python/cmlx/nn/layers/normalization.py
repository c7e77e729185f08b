"""Normalisation layers: InstanceNorm, LayerNorm, RMSNorm, GroupNorm and
BatchNorm (channels last)."""

from typing import Tuple

from ... import core as mx
from .base import Module


def _check_eps(name, eps):
    if eps <= 0.0:
        raise ValueError(f"[{name}] 'eps' must be positive but got {eps}.")


def _affine(module, x):
    return module.weight * x + module.bias if "weight" in module else x


class InstanceNorm(Module):
    """Normalises each channel of each sample over its spatial axes; input
    ``(N, ..., C)``.  With ``affine``, a learnable scale and shift per
    channel."""

    def __init__(self, dims: int, eps: float = 1e-5, affine: bool = False):
        super().__init__()
        _check_eps("InstanceNorm", eps)
        if affine:
            self.weight = mx.ones((dims,))
            self.bias = mx.zeros((dims,))
        self.dims = dims
        self.eps = eps

    def _extra_repr(self):
        return f"{self.dims}, eps={self.eps}, affine={'weight' in self}"

    def __call__(self, x: "mx.array") -> "mx.array":
        if x.ndim < 3:
            raise ValueError(
                "InstanceNorm expects inputs with at least 3 dimensions (N, ..., C) but the "
                f"input has {x.ndim} dimensions."
            )
        n, c = x.shape[0], x.shape[-1]
        spatial = x.shape[1:-1]
        k = len(spatial)
        y = mx.transpose(x, (0, x.ndim - 1, *range(1, x.ndim - 1))).reshape(n, c, -1)
        y = mx.fast.layer_norm(y, None, None, self.eps)
        y = mx.transpose(y.reshape(n, c, *spatial), (0, *range(2, k + 2), 1))
        return _affine(self, y)


class LayerNorm(Module):
    """Normalises over the last axis (``dims`` features); ``affine`` adds a
    learnable ``weight`` (and, with ``bias``, a ``bias``)."""

    def __init__(self, dims: int, eps: float = 1e-5, affine: bool = True, bias: bool = True):
        super().__init__()
        _check_eps("LayerNorm", eps)
        if affine:
            self.weight = mx.ones((dims,))
            if bias:
                self.bias = mx.zeros((dims,))
        self.eps = eps
        self.dims = dims

    def _extra_repr(self):
        return f"{self.dims}, eps={self.eps}, affine={'weight' in self}"

    def __call__(self, x):
        return mx.fast.layer_norm(x, self.get("weight"), self.get("bias"), self.eps)


class RMSNorm(Module):
    """Root-mean-square normalisation over the last axis with a learnable
    ``weight``."""

    def __init__(self, dims: int, eps: float = 1e-5):
        super().__init__()
        _check_eps("RMSNorm", eps)
        self.weight = mx.ones((dims,))
        self.eps = eps

    def _extra_repr(self):
        return f"{self.weight.shape[0]}, eps={self.eps}"

    def __call__(self, x):
        return mx.fast.rms_norm(x, self["weight"], self.eps)


class GroupNorm(Module):
    """Splits the ``dims`` channels in ``num_groups`` groups and normalises
    each over the group and the spatial axes.  ``pytorch_compatible`` groups
    consecutive channels as PyTorch does (MLX's default interleaves them)."""

    def __init__(
        self,
        num_groups: int,
        dims: int,
        eps: float = 1e-5,
        affine: bool = True,
        pytorch_compatible: bool = False,
    ):
        super().__init__()
        _check_eps("GroupNorm", eps)
        if num_groups <= 0:
            raise ValueError(f"The number of groups ({num_groups}) must be a positive integer.")
        if dims <= 0:
            raise ValueError(f"The number of features ({dims}) must be a positive integer.")
        if dims % num_groups != 0:
            raise ValueError(
                f"The number of features ({dims}) must be evenly divisible by the number of "
                f"groups ({num_groups})."
            )
        if affine:
            self.bias = mx.zeros((dims,))
            self.weight = mx.ones((dims,))
        self.num_groups = num_groups
        self.dims = dims
        self.eps = eps
        self.pytorch_compatible = pytorch_compatible

    def _extra_repr(self):
        return (
            f"{self.num_groups}, {self.dims}, eps={self.eps}, affine={'weight' in self}, "
            f"pytorch_compatible={self.pytorch_compatible}"
        )

    def _pytorch_compatible_group_norm(self, x):
        g = self.num_groups
        batch, *rest, dims = x.shape
        size = dims // g
        y = x.reshape(batch, -1, g, size).transpose(0, 2, 1, 3).reshape(batch, g, -1)
        y = mx.fast.layer_norm(y, eps=self.eps, weight=None, bias=None)
        y = y.reshape(batch, g, -1, size).transpose(0, 2, 1, 3)
        return y.reshape(batch, *rest, dims)

    def _group_norm(self, x):
        batch, *rest, dims = x.shape
        y = x.reshape(batch, -1, self.num_groups)
        mean = mx.mean(y, axis=1, keepdims=True)
        var = mx.var(y, axis=1, keepdims=True)
        y = (y - mean) * mx.rsqrt(var + self.eps)
        return y.reshape(batch, *rest, dims)

    def __call__(self, x):
        if self.pytorch_compatible:
            x = self._pytorch_compatible_group_norm(x)
        else:
            x = self._group_norm(x)
        return _affine(self, x)


class BatchNorm(Module):
    """Normalises each channel over the batch and spatial axes of
    ``(N, C)``, ``(N, L, C)`` or ``(N, H, W, C)`` inputs.  In training mode
    with ``track_running_stats``, updates the (frozen) ``running_mean`` and
    ``running_var`` with ``momentum``; in evaluation mode uses them."""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
    ):
        super().__init__()
        _check_eps("BatchNorm", eps)
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = mx.ones((num_features,))
            self.bias = mx.zeros((num_features,))
        if self.track_running_stats:
            self.running_mean = mx.zeros((num_features,))
            self.running_var = mx.ones((num_features,))
            self.freeze(keys=["running_mean", "running_var"], recurse=False)

    def unfreeze(self, *args, **kwargs):
        """Unfreezes like :meth:`Module.unfreeze`; the running statistics
        stay frozen."""
        super().unfreeze(*args, **kwargs)
        self.freeze(keys=["running_mean", "running_var"], recurse=False)

    def _extra_repr(self):
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={'weight' in self}, track_running_stats={self.track_running_stats}"
        )

    def _calc_stats(self, x: "mx.array", ddof: int = 0) -> Tuple["mx.array", "mx.array"]:
        axes = tuple(range(x.ndim - 1))
        return mx.mean(x, axis=axes), mx.var(x, axis=axes, ddof=ddof)

    def __call__(self, x: "mx.array") -> "mx.array":
        if x.ndim < 2 or x.ndim > 4:
            raise ValueError(
                f"Expected input tensor to have 2, 3 or 4 dimensions, but got {x.ndim}"
            )
        if self.training:
            count = 1
            for size in x.shape[:-1]:
                count *= size
            if count == 1:
                raise ValueError("BatchNorm training requires more than one value per channel.")
        mean, var = self._calc_stats(x)
        if self.training and self.track_running_stats:
            mu = self.momentum
            _, unbiased = self._calc_stats(x, ddof=1)
            self.running_mean = (1 - mu) * self.running_mean + mu * mean
            self.running_var = (1 - mu) * self.running_var + mu * unbiased
        elif self.track_running_stats:
            mean, var = self.running_mean, self.running_var
        x = (x - mean) * mx.rsqrt(var + self.eps)
        return _affine(self, x)
