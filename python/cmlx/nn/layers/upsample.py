"""``Upsample``: nearest, linear and cubic interpolation of channels-last
inputs ``(N, *spatial, C)`` by a scale factor per spatial axis."""

import operator
from functools import reduce
from itertools import product
from math import ceil
from typing import Callable, Literal, Tuple, Union

from ... import core as mx
from .base import Module


def _along(indices, dim, ndims):
    shape = [1] * ndims
    shape[dim] = -1
    return indices.reshape(shape)


def _scaled_indices(N, scale, align_corners, dim, ndims):
    """Source coordinates (float) of the ``int(scale * N)`` output samples."""
    M = int(scale * N)
    ramp = mx.arange(M, dtype=mx.float32)
    if align_corners:
        pos = ramp * ((N - 1) / max(M - 1, 1))
    else:
        step = 1 / scale
        pos = ramp * step - ((M - 1) * step - N + 1) / 2
    return _along(pos, dim, ndims)


def _nearest_indices(N, scale, dim, ndims):
    M = int(scale * N)
    pos = mx.arange(M, dtype=mx.float32)
    if M > N:
        pos = ((pos + 0.5) * (N / M) - 0.5).round()
    else:
        pos = pos * (N / M)
    return _along(pos.astype(mx.uint32), dim, ndims)


def _linear_indices(N, scale, align_corners, dim, ndims):
    pos = mx.clip(_scaled_indices(N, scale, align_corners, dim, ndims), a_min=0, a_max=N - 1)
    left = mx.floor(pos)
    right = mx.ceil(pos)
    w = mx.expand_dims(pos - left, -1)
    return ((left.astype(mx.uint32), 1 - w), (right.astype(mx.uint32), w))


def _keys_weight(x, far):
    # Keys' cubic convolution kernel with a = -0.75: the |x| <= 1 piece
    # (far=False) and the 1 < |x| <= 2 piece (far=True)
    a = -0.75
    if far:
        return (((x - 5) * x + 8) * x - 4) * a
    return ((a + 2.0) * x - (a + 3.0)) * x * x + 1


def _cubic_indices(N, scale, align_corners, dim, ndims):
    pos = _scaled_indices(N, scale, align_corners, dim, ndims)
    l1 = mx.floor(pos)
    r1 = mx.floor(pos + 1)
    l2 = l1 - 1
    r2 = r1 + 1
    out = []
    for idx, far in ((l1, False), (r1, False), (l2, True), (r2, True)):
        w = _keys_weight(mx.abs(pos - idx), far)[..., None]
        out.append((mx.clip(idx, a_min=0, a_max=N - 1).astype(mx.uint32), w))
    return tuple(out)


def _triangle_kernel(x):
    return mx.maximum(1.0 - x, 0.0)


def _cubic_kernel(x):
    a = -0.5
    inner = ((a + 2.0) * x - (a + 3.0)) * x * x + 1
    outer = (((x - 5) * x + 8) * x - 4) * a
    return mx.where(x <= 1.0, inner, mx.where(x <= 2.0, outer, 0.0))


def _aa_indices(N, scale, align_corners, dim, ndims, kernel_fn, kernel_radius):
    """Taps and normalised weights of an antialiasing filter: when
    downsampling the kernel is stretched by ``1 / scale``."""
    pos = _scaled_indices(N, scale, align_corners, dim, ndims)
    stretch = 1.0 / scale if scale < 1 else 1.0
    taps = ceil(kernel_radius * stretch) + 1
    idxs, ws = [], []
    for k in range(-taps + 1, taps):
        idx = mx.floor(pos) + k
        w = kernel_fn(mx.abs(pos - idx) / stretch)
        ws.append(mx.where((idx >= 0) & (idx < N), w, 0.0))
        idxs.append(idx)
    total = sum(ws)
    total = mx.where(total > 0, total, 1.0)
    return tuple(
        (
            mx.clip(idx, a_min=0, a_max=N - 1).astype(mx.uint32),
            mx.expand_dims(w / total, -1),
        )
        for idx, w in zip(idxs, ws)
    )


def _linear_aa_indices(N, scale, align_corners, dim, ndims):
    return _aa_indices(N, scale, align_corners, dim, ndims, _triangle_kernel, 1.0)


def _cubic_aa_indices(N, scale, align_corners, dim, ndims):
    return _aa_indices(N, scale, align_corners, dim, ndims, _cubic_kernel, 2.0)


def _validate_antialias_align_corners(align_corners, antialias):
    if antialias and align_corners:
        raise ValueError(
            "[Upsample] antialias=True with align_corners=True is not supported. "
            "Use align_corners=False for antialiased interpolation."
        )


def _check_scales(x, scale_factor):
    dims = x.ndim - 2
    if dims != len(scale_factor):
        raise ValueError("A scale needs to be provided for each spatial dimension")
    return dims


def upsample_nearest(x: "mx.array", scale_factor: Tuple):
    """Nearest-neighbour upsampling (integer scales repeat each sample)."""
    dims = _check_scales(x, scale_factor)
    if tuple(map(int, scale_factor)) == scale_factor:
        n, *sizes, c = x.shape
        expanded = [n]
        for s in sizes:
            expanded += [s, 1]
        expanded.append(c)
        y = x.reshape(expanded)
        for d, s in enumerate(scale_factor):
            expanded[2 + 2 * d] = int(s)
        y = mx.broadcast_to(y, expanded)
        return y.reshape([n, *(s * int(f) for s, f in zip(sizes, scale_factor)), c])
    n, *sizes, c = x.shape
    index = [slice(None)]
    for i, (size, s) in enumerate(zip(sizes, scale_factor)):
        index.append(_nearest_indices(size, s, i, dims))
    return x[tuple(index)]


def _interpolate(x, scale_factor, indices_fn, align_corners=False):
    dims = _check_scales(x, scale_factor)
    _, *sizes, _ = x.shape
    per_axis = [
        indices_fn(n, s, align_corners, i, dims)
        for i, (n, s) in enumerate(zip(sizes, scale_factor))
    ]
    total = None
    for combo in product(*per_axis):
        idx, weight = zip(*combo)
        term = reduce(operator.mul, weight) * x[(slice(None),) + idx]
        total = term if total is None else total + term
    return total


def _interpolate_separable(x, scale_factor, indices_fn, align_corners=False):
    dims = _check_scales(x, scale_factor)
    _, *sizes, _ = x.shape
    out = x
    for i, (n, s) in enumerate(zip(sizes, scale_factor)):
        acc = None
        for idx, w in indices_fn(n, s, align_corners, i, dims):
            term = mx.take(out, idx.reshape(-1), axis=i + 1) * w
            acc = term if acc is None else acc + term
        out = acc
    return out


def upsample_linear(x, scale_factor: Tuple, align_corners: bool = False, antialias: bool = False):
    """(Multi-)linear interpolation."""
    _validate_antialias_align_corners(align_corners, antialias)
    if antialias:
        return _interpolate_separable(x, scale_factor, _linear_aa_indices, align_corners)
    return _interpolate(x, scale_factor, _linear_indices, align_corners)


def upsample_cubic(x, scale_factor: Tuple, align_corners: bool = False, antialias: bool = False):
    """(Multi-)cubic interpolation."""
    _validate_antialias_align_corners(align_corners, antialias)
    if antialias:
        return _interpolate_separable(x, scale_factor, _cubic_aa_indices, align_corners)
    return _interpolate(x, scale_factor, _cubic_indices, align_corners)


class Upsample(Module):
    """Upsamples the spatial axes of ``(N, *spatial, C)`` by
    ``scale_factor`` (a number or one per axis) with ``mode`` ``"nearest"``,
    ``"linear"`` or ``"cubic"``; ``align_corners`` and ``antialias`` as in
    PyTorch's ``interpolate``."""

    def __init__(
        self,
        scale_factor: Union[float, Tuple],
        mode: Literal["nearest", "linear", "cubic"] = "nearest",
        align_corners: bool = False,
        antialias: bool = False,
    ):
        super().__init__()
        if mode not in ("nearest", "linear", "cubic"):
            raise ValueError(f"[Upsample] Got unsupported upsampling algorithm: {mode}")
        if antialias and mode == "nearest":
            raise ValueError(
                "[Upsample] Antialiasing is not supported for nearest neighbor upsampling"
            )
        if isinstance(scale_factor, (list, tuple)):
            scale_factor = tuple(map(float, scale_factor))
        else:
            scale_factor = float(scale_factor)
        _validate_antialias_align_corners(align_corners, antialias)
        self.scale_factor = scale_factor
        self.mode = mode
        self.align_corners = align_corners
        self.antialias = antialias

    def _extra_repr(self) -> str:
        text = (
            f"scale_factor={self.scale_factor}, mode={self.mode!r}, "
            f"align_corners={self.align_corners}"
        )
        return text + (", antialias=True" if self.antialias else "")

    def __call__(self, x: "mx.array") -> "mx.array":
        dims = x.ndim - 2
        if dims <= 0:
            raise ValueError(
                "[Upsample] The input should have at least 1 spatial dimension which means it "
                f"should be at least 3D but {x.ndim}D was provided"
            )
        scale = self.scale_factor
        if isinstance(scale, tuple):
            if len(scale) != dims:
                raise ValueError(
                    "[Upsample] One scale per spatial dimension is required but "
                    f"scale_factor={scale} and the number of spatial dimensions were {dims}"
                )
        else:
            scale = (scale,) * dims
        if self.mode == "nearest":
            return upsample_nearest(x, scale)
        if self.mode == "linear":
            return upsample_linear(x, scale, self.align_corners, self.antialias)
        return upsample_cubic(x, scale, self.align_corners, self.antialias)
