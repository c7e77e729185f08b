"""Convolutions over channels-last inputs: Conv1d ``(N, L, C)``, Conv2d
``(N, H, W, C)`` and Conv3d ``(N, D, H, W, C)``.  Weights are
``(out_channels, *kernel_size, in_channels // groups)``."""

import math
from typing import Union

from ... import core as mx
from .base import Module


def _tuple(x, n):
    return (x,) * n if isinstance(x, int) else x


def _check_groups(in_channels, groups):
    if in_channels % groups != 0:
        raise ValueError(
            f"The number of input channels ({in_channels}) must be divisible by "
            f"the number of groups ({groups})"
        )


def _init_weight(in_channels, out_channels, kernel, in_per_group):
    scale = math.sqrt(1 / (in_channels * math.prod(kernel)))
    return mx.random.uniform(low=-scale, high=scale, shape=(out_channels, *kernel, in_per_group))


def _add_bias(module, y):
    return y + module.bias if "bias" in module else y


class _ConvNd(Module):
    _ndim = 0
    _grouped = True  # Conv3d has no groups argument

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Union[int, tuple],
        stride: Union[int, tuple] = 1,
        padding: Union[int, tuple] = 0,
        dilation: Union[int, tuple] = 1,
        groups: int = 1,
        bias: bool = True,
    ):
        super().__init__()
        n = self._ndim
        _check_groups(in_channels, groups)
        if n > 1:
            kernel_size, stride, padding = (_tuple(v, n) for v in (kernel_size, stride, padding))
        kernel = kernel_size if n > 1 else (kernel_size,)
        self.weight = _init_weight(in_channels, out_channels, kernel, in_channels // groups)
        if bias:
            self.bias = mx.zeros((out_channels,))
        self.padding = padding
        self.dilation = dilation
        self.stride = stride
        if self._grouped:
            self.groups = groups

    def _extra_repr(self):
        n = self._ndim
        w = self.weight.shape
        groups = self.groups if self._grouped else 1
        text = (
            f"{w[-1] * groups}, {w[0]}, kernel_size={w[1] if n == 1 else w[1 : 1 + n]}, "
            f"stride={self.stride}, padding={self.padding}, dilation={self.dilation}, "
        )
        if self._grouped:
            text += f"groups={self.groups}, "
        return text + f"bias={'bias' in self}"

    def __call__(self, x):
        conv = getattr(mx, f"conv{self._ndim}d")
        args = (self.stride, self.padding, self.dilation)
        if self._grouped:
            args += (self.groups,)
        return _add_bias(self, conv(x, self.weight, *args))


class Conv1d(_ConvNd):
    """1-D convolution of ``(N, L, C)`` inputs with ``stride``, ``padding``,
    ``dilation`` and ``groups``; ``bias`` starts at zero."""

    _ndim = 1


class Conv2d(_ConvNd):
    """2-D convolution of ``(N, H, W, C)`` inputs; ``kernel_size``,
    ``stride`` and ``padding`` are ints or pairs."""

    _ndim = 2


class Conv3d(_ConvNd):
    """3-D convolution of ``(N, D, H, W, C)`` inputs; ``kernel_size``,
    ``stride`` and ``padding`` are ints or triples."""

    _ndim = 3
    _grouped = False

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Union[int, tuple],
        stride: Union[int, tuple] = 1,
        padding: Union[int, tuple] = 0,
        dilation: Union[int, tuple] = 1,
        bias: bool = True,
    ):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, 1, bias)
