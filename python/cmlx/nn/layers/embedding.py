"""``Embedding``: a lookup table of vectors."""

import math
from typing import Optional

from ... import core as mx
from .base import Module
from .quantized import QuantizedEmbedding


class Embedding(Module):
    """Maps integer ids to rows of ``weight`` (``(num_embeddings, dims)``,
    drawn from ``N(0, 1/dims)``)."""

    def __init__(self, num_embeddings: int, dims: int):
        super().__init__()
        self.weight = mx.random.normal(shape=(num_embeddings, dims), scale=math.sqrt(1 / dims))

    def _extra_repr(self):
        return f"{self.weight.shape[0]}, {self.weight.shape[1]}"

    def __call__(self, x):
        return self.weight[x]

    def as_linear(self, x):
        """``x @ weight.T``: uses the table as an output projection."""
        return x @ self.weight.T

    def to_quantized(
        self,
        group_size: Optional[int] = None,
        bits: Optional[int] = None,
        mode: str = "affine",
        quantize_input: bool = False,
    ):
        """A :class:`QuantizedEmbedding` with this table quantized."""
        if quantize_input:
            raise ValueError("Quantized input is not supported.")
        return QuantizedEmbedding.from_embedding(self, group_size, bits, mode)
