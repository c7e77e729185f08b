"""Max and average pooling over 1, 2 or 3 spatial axes of channels-last
inputs ``(N, *spatial, C)``."""

from typing import Optional, Tuple, Union

from ... import core as mx
from .base import Module


def _value_or_list(x, n, msg):
    if isinstance(x, (list, tuple)):
        if len(x) != n:
            raise ValueError(msg)
        return list(x)
    if not isinstance(x, int):
        raise ValueError(msg)
    return [x] * n


def _tiled_windows(x, window):
    # stride == window and every size divisible: a reshape and a transpose
    n, *sizes, c = x.shape
    shape = [n]
    for s, w in zip(sizes, window):
        shape += [s // w, w]
    shape.append(c)
    last = len(shape) - 1
    order = [0, *range(1, last, 2), *range(2, last, 2), last]
    return x.reshape(shape).transpose(order)


def _sliding_windows(x, window, strides):
    if x.ndim < 3:
        raise ValueError(
            "To extract sliding windows at least 1 spatial dimension (3 total) is needed but "
            f"the input only has {x.ndim} dimensions."
        )
    sizes = x.shape[1:-1]
    if not len(sizes) == len(window) == len(strides):
        raise ValueError(
            "To extract sliding windows the window shapes and strides must have the same "
            f"number of spatial dimensions as the signal but the signal has {len(sizes)} dims "
            f"and the window shape has {len(window)} and strides have {len(strides)}."
        )
    if all(w == s and n % w == 0 for n, w, s in zip(sizes, window, strides)):
        return _tiled_windows(x, window)
    # row-major element strides of x
    elem = [1] * x.ndim
    for i in range(x.ndim - 2, -1, -1):
        elem[i] = elem[i + 1] * x.shape[i + 1]
    out_shape = [x.shape[0]]
    out_shape += [(n - w) // s + 1 for n, w, s in zip(sizes, window, strides)]
    out_shape += list(window) + [x.shape[-1]]
    spatial = elem[1:-1]
    out_strides = [elem[0]] + [e * s for e, s in zip(spatial, strides)] + spatial + [elem[-1]]
    return mx.as_strided(x, out_shape, out_strides)


class _Pool(Module):
    def __init__(self, pooling_function, kernel_size, stride, padding, padding_value):
        super().__init__()
        name = type(self).__name__
        for what, values in (("kernel_size", kernel_size), ("stride", stride)):
            if any(v <= 0 for v in values):
                raise ValueError(f"[{name}] '{what}' must be positive but got {tuple(values)}.")
        if any(p[0] < 0 for p in padding):
            raise ValueError(
                f"[{name}] 'padding' must be non-negative but got {tuple(p[0] for p in padding)}."
            )
        self._pooling_function = pooling_function
        self._kernel_size = kernel_size
        self._stride = stride
        self._padding = padding
        self._padding_value = padding_value
        self._axes = tuple(range(-len(kernel_size) - 1, -1, 1))

    def _extra_repr(self):
        ks = tuple(self._kernel_size)
        st = tuple(self._stride)
        pd = tuple(p[0] for p in self._padding)
        return f"kernel_size={ks}, stride={st}, padding={pd}"

    def __call__(self, x):
        if any(p[0] > 0 for p in self._padding):
            x = mx.pad(x, [(0, 0)] + self._padding + [(0, 0)], constant_values=self._padding_value)
        windows = _sliding_windows(x, self._kernel_size, self._stride)
        return self._pooling_function(windows, self._axes)


_WORDS = {1: "1 integer", 2: "2 integers", 3: "3 integers"}


class _PoolNd(_Pool):
    _ndim = 0

    def __init__(self, pooling_function, padding_value, kernel_size, stride=None, padding=0):
        n = self._ndim
        msg = "[{}] '{}' must be an integer or a tuple containing " + _WORDS[n]
        name = type(self).__name__
        kernel_size = _value_or_list(kernel_size, n, msg.format(name, "kernel_size"))
        if stride is not None:
            stride = _value_or_list(stride, n, msg.format(name, "stride"))
        else:
            stride = kernel_size
        padding = [(p, p) for p in _value_or_list(padding, n, msg.format(name, "padding"))]
        super().__init__(pooling_function, kernel_size, stride, padding, padding_value)


class _Pool1d(_PoolNd):
    _ndim = 1


class _Pool2d(_PoolNd):
    _ndim = 2


class _Pool3d(_PoolNd):
    _ndim = 3


_Int1 = Union[int, Tuple[int]]
_Int2 = Union[int, Tuple[int, int]]
_Int3 = Union[int, Tuple[int, int, int]]


class MaxPool1d(_Pool1d):
    """Max over windows of ``kernel_size`` along the one spatial axis of
    ``(N, L, C)`` (``stride`` defaults to ``kernel_size``, padding with
    ``-inf``)."""

    def __init__(self, kernel_size: _Int1, stride: Optional[_Int1] = None, padding: _Int1 = 0):
        super().__init__(mx.max, -float("inf"), kernel_size, stride, padding)


class AvgPool1d(_Pool1d):
    """Mean over windows along the spatial axis of ``(N, L, C)`` (padding
    with 0)."""

    def __init__(self, kernel_size: _Int1, stride: Optional[_Int1] = None, padding: _Int1 = 0):
        super().__init__(mx.mean, 0, kernel_size, stride, padding)


class MaxPool2d(_Pool2d):
    """Max pooling over ``(N, H, W, C)``."""

    def __init__(
        self, kernel_size: _Int2, stride: Optional[_Int2] = None, padding: Optional[_Int2] = 0
    ):
        super().__init__(mx.max, -float("inf"), kernel_size, stride, padding)


class AvgPool2d(_Pool2d):
    """Average pooling over ``(N, H, W, C)``."""

    def __init__(
        self, kernel_size: _Int2, stride: Optional[_Int2] = None, padding: Optional[_Int2] = 0
    ):
        super().__init__(mx.mean, 0, kernel_size, stride, padding)


class MaxPool3d(_Pool3d):
    """Max pooling over ``(N, D, H, W, C)``."""

    def __init__(
        self, kernel_size: _Int3, stride: Optional[_Int3] = None, padding: Optional[_Int3] = 0
    ):
        super().__init__(mx.max, -float("inf"), kernel_size, stride, padding)


class AvgPool3d(_Pool3d):
    """Average pooling over ``(N, D, H, W, C)``."""

    def __init__(
        self, kernel_size: _Int3, stride: Optional[_Int3] = None, padding: Optional[_Int3] = 0
    ):
        super().__init__(mx.mean, 0, kernel_size, stride, padding)
