"""Dropout layers: zero entries (or whole channels) with probability ``p`` in
training mode and scale the rest by ``1 / (1 - p)``."""

from ... import core as mx
from .base import Module


class _DropoutBase(Module):
    # number of trailing spatial axes (before the channel axis) that share one
    # mask entry, and the ranks accepted (None: any)
    _shared_axes = 0
    _ranks = None

    def __init__(self, p: float = 0.5):
        super().__init__()
        if p < 0 or p >= 1:
            raise ValueError(f"The dropout probability {p} is not in [0, 1)")
        self._p_1 = 1 - p

    def _extra_repr(self) -> str:
        return f"p={1 - self._p_1}"

    def __call__(self, x: "mx.array") -> "mx.array":
        if self._ranks is not None and x.ndim not in self._ranks:
            lo, hi = self._ranks
            raise ValueError(
                f"Received input with {x.ndim} dimensions. Expected {lo} or {hi} dimensions."
            )
        if self._p_1 == 1 or not self.training:
            return x
        shape = list(x.shape)
        for i in range(2, 2 + self._shared_axes):
            shape[-i] = 1
        mask = mx.random.bernoulli(p=self._p_1, shape=shape)
        return mask * x * (1 / self._p_1)


class Dropout(_DropoutBase):
    """Zeroes each element with probability ``p`` during training."""


class Dropout2d(_DropoutBase):
    """Zeroes whole channels of ``(N, H, W, C)`` / ``(H, W, C)`` inputs."""

    _shared_axes = 2
    _ranks = (3, 4)


class Dropout3d(_DropoutBase):
    """Zeroes whole channels of ``(N, D, H, W, C)`` / ``(D, H, W, C)``
    inputs."""

    _shared_axes = 3
    _ranks = (4, 5)
