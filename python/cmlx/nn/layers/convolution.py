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


class Conv1d(Module):
    """1-D convolution with ``stride``, ``padding``, ``dilation`` and
    ``groups``; ``bias`` starts at zero."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        stride: int = 1,
        padding: int = 0,
        dilation: int = 1,
        groups: int = 1,
        bias: bool = True,
    ):
        super().__init__()
        _check_groups(in_channels, groups)
        self.weight = _init_weight(in_channels, out_channels, (kernel_size,), in_channels // groups)
        if bias:
            self.bias = mx.zeros((out_channels,))
        self.padding = padding
        self.dilation = dilation
        self.stride = stride
        self.groups = groups

    def _extra_repr(self):
        return (
            f"{self.weight.shape[-1] * self.groups}, {self.weight.shape[0]}, "
            f"kernel_size={self.weight.shape[1]}, stride={self.stride}, "
            f"padding={self.padding}, dilation={self.dilation}, groups={self.groups}, "
            f"bias={'bias' in self}"
        )

    def __call__(self, x):
        y = mx.conv1d(x, self.weight, self.stride, self.padding, self.dilation, self.groups)
        return _add_bias(self, y)


class Conv2d(Module):
    """2-D convolution; ``kernel_size``, ``stride`` and ``padding`` are ints
    or pairs."""

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
        _check_groups(in_channels, groups)
        kernel_size, stride, padding = (_tuple(v, 2) for v in (kernel_size, stride, padding))
        self.weight = _init_weight(in_channels, out_channels, kernel_size, in_channels // groups)
        if bias:
            self.bias = mx.zeros((out_channels,))
        self.padding = padding
        self.stride = stride
        self.dilation = dilation
        self.groups = groups

    def _extra_repr(self):
        return (
            f"{self.weight.shape[-1] * self.groups}, {self.weight.shape[0]}, "
            f"kernel_size={self.weight.shape[1:3]}, stride={self.stride}, "
            f"padding={self.padding}, dilation={self.dilation}, groups={self.groups}, "
            f"bias={'bias' in self}"
        )

    def __call__(self, x):
        y = mx.conv2d(x, self.weight, self.stride, self.padding, self.dilation, self.groups)
        return _add_bias(self, y)


class Conv3d(Module):
    """3-D convolution; ``kernel_size``, ``stride`` and ``padding`` are ints
    or triples."""

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
        super().__init__()
        kernel_size, stride, padding = (_tuple(v, 3) for v in (kernel_size, stride, padding))
        self.weight = _init_weight(in_channels, out_channels, kernel_size, in_channels)
        if bias:
            self.bias = mx.zeros((out_channels,))
        self.padding = padding
        self.stride = stride
        self.dilation = dilation

    def _extra_repr(self):
        return (
            f"{self.weight.shape[-1]}, {self.weight.shape[0]}, "
            f"kernel_size={self.weight.shape[1:4]}, stride={self.stride}, "
            f"padding={self.padding}, dilation={self.dilation}, bias={'bias' in self}"
        )

    def __call__(self, x):
        y = mx.conv3d(x, self.weight, self.stride, self.padding, self.dilation)
        return _add_bias(self, y)
