"""Transposed convolutions over channels-last inputs (ConvTranspose1d/2d/3d).
Weights are ``(out_channels, *kernel_size, in_channels)``."""

from typing import Union

from ... import core as mx
from .base import Module
from .convolution import _add_bias, _init_weight, _tuple


class _ConvTransposeNd(Module):
    _ndim = 0

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Union[int, tuple],
        stride: Union[int, tuple] = 1,
        padding: Union[int, tuple] = 0,
        dilation: Union[int, tuple] = 1,
        output_padding: Union[int, tuple] = 0,
        bias: bool = True,
    ):
        super().__init__()
        n = self._ndim
        if n > 1:
            kernel_size, stride, padding, output_padding = (
                _tuple(v, n) for v in (kernel_size, stride, padding, output_padding)
            )
            kernel = kernel_size
        else:
            kernel = (kernel_size,)
        self.weight = _init_weight(in_channels, out_channels, kernel, in_channels)
        if bias:
            self.bias = mx.zeros((out_channels,))
        self.padding = padding
        self.dilation = dilation
        self.stride = stride
        self.output_padding = output_padding

    def _extra_repr(self):
        n = self._ndim
        ks = self.weight.shape[1] if n == 1 else self.weight.shape[1 : 1 + n]
        return (
            f"{self.weight.shape[-1]}, {self.weight.shape[0]}, kernel_size={ks}, "
            f"stride={self.stride}, padding={self.padding}, dilation={self.dilation}, "
            f"output_padding={self.output_padding}, bias={'bias' in self}"
        )

    def __call__(self, x):
        conv = getattr(mx, f"conv_transpose{self._ndim}d")
        y = conv(x, self.weight, self.stride, self.padding, self.dilation, self.output_padding)
        return _add_bias(self, y)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution of ``(N, L, C)`` inputs."""

    _ndim = 1


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution of ``(N, H, W, C)`` inputs;
    ``kernel_size``, ``stride``, ``padding`` and ``output_padding`` are ints
    or pairs."""

    _ndim = 2


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution of ``(N, D, H, W, C)`` inputs."""

    _ndim = 3
