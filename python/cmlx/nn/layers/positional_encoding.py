"""Positional encodings: RoPE, SinusoidalPositionalEncoding and ALiBi."""

import math
from typing import Optional

from ... import core as mx
from .base import Module


class RoPE(Module):
    """Rotary positional encoding of the first ``dims`` features
    (:func:`mlx.core.fast.rope`); ``traditional`` rotates consecutive pairs
    instead of the two halves."""

    def __init__(
        self, dims: int, traditional: bool = False, base: float = 10000, scale: float = 1.0
    ):
        super().__init__()
        self.dims = dims
        self.traditional = traditional
        self.base = base
        self.scale = scale

    def _extra_repr(self):
        return f"{self.dims}, traditional={self.traditional}"

    def __call__(self, x, offset: int = 0):
        return mx.fast.rope(
            x,
            self.dims,
            traditional=self.traditional,
            base=self.base,
            scale=self.scale,
            offset=offset,
        )


class SinusoidalPositionalEncoding(Module):
    """Sine and cosine features of ``x`` at ``dims // 2`` frequencies spaced
    geometrically from ``max_freq`` down to ``min_freq``; the result has a
    trailing axis of size ``dims``."""

    def __init__(
        self,
        dims: int,
        min_freq: float = 0.0001,
        max_freq: float = 1,
        scale: Optional[float] = None,
        cos_first: bool = False,
        full_turns: bool = False,
    ):
        super().__init__()
        if dims <= 0 or dims % 2 != 0:
            raise ValueError(
                f"[SinusoidalPositionalEncoding] dims must be positive and even but got {dims}."
            )
        half = dims // 2
        if dims == 2:
            t = mx.array([1.0])
        else:
            t = 1 - mx.arange(0, half) / (half - 1)
        lo, hi = math.log(min_freq), math.log(max_freq)
        self._sigmas = mx.exp(t * (hi - lo) + lo)
        if full_turns:
            self._sigmas = self._sigmas * (2 * math.pi)
        self.scale = scale if scale is not None else (2 / dims) ** 0.5
        self.cos_first = cos_first

    def __call__(self, x):
        y = x[..., None] * self._sigmas
        parts = [mx.cos(y), mx.sin(y)] if self.cos_first else [mx.sin(y), mx.cos(y)]
        y = mx.concatenate(parts, axis=-1)
        if self.scale != 1:
            y = y * self.scale
        return y


def _alibi_slopes(n: int):
    if math.log2(n).is_integer():
        first = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [first * first**i for i in range(n)]
    p = 2 ** math.floor(math.log2(n))
    return _alibi_slopes(p) + _alibi_slopes(2 * p)[0::2][: n - p]


class ALiBi(Module):
    """Attention with linear biases: adds ``-slope_h * |i - j|`` to the
    attention scores ``(B, H, L, S)``."""

    @staticmethod
    def create_alibi_matrix(
        q_sequence_length: int,
        k_sequence_length: int,
        num_heads: int,
        offset: int = 0,
        dtype=mx.float32,
    ):
        q = mx.arange(offset, q_sequence_length)
        k = mx.arange(0, k_sequence_length)
        distance = -mx.abs(mx.expand_dims(q[:, None] - k[None, :], axis=(0, 1)))
        slopes = ALiBi.create_alibi_slope(num_heads=num_heads, dtype=dtype)
        return (distance * slopes).astype(dtype)

    @staticmethod
    def create_alibi_slope(num_heads, dtype=mx.float32):
        slopes = mx.array(_alibi_slopes(num_heads), dtype=dtype)
        return mx.expand_dims(slopes, axis=(-1, -2))

    def __call__(self, attention_scores, offset=0, mask=None):
        bias = ALiBi.create_alibi_matrix(
            q_sequence_length=attention_scores.shape[-2] + offset,
            k_sequence_length=attention_scores.shape[-1],
            num_heads=attention_scores.shape[1],
            offset=offset,
            dtype=attention_scores.dtype,
        )
        if mask is not None:
            bias = bias + mask
        return attention_scores + bias
