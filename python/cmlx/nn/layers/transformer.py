"""Multi-head attention and the Transformer encoder/decoder."""

import math
from typing import Any, Callable, Optional

from ... import core as mx
from ..utils import checkpoint
from .activations import relu
from .base import Module
from .dropout import Dropout
from .linear import Linear
from .normalization import LayerNorm


class MultiHeadAttention(Module):
    """Scaled dot-product attention over ``num_heads`` heads with query, key,
    value and output projections (``query_proj``, ``key_proj``,
    ``value_proj``, ``out_proj``)."""

    def __init__(
        self,
        dims: int,
        num_heads: int,
        query_input_dims: Optional[int] = None,
        key_input_dims: Optional[int] = None,
        value_input_dims: Optional[int] = None,
        value_dims: Optional[int] = None,
        value_output_dims: Optional[int] = None,
        bias: bool = False,
    ):
        super().__init__()
        if dims % num_heads != 0:
            raise ValueError(
                "The input feature dimensions should be divisible by the "
                f"number of heads ({dims} % {num_heads}) != 0"
            )
        query_input_dims = query_input_dims or dims
        key_input_dims = key_input_dims or dims
        value_input_dims = value_input_dims or key_input_dims
        value_dims = value_dims or dims
        value_output_dims = value_output_dims or dims
        self.num_heads = num_heads
        self.query_proj = Linear(query_input_dims, dims, bias=bias)
        self.key_proj = Linear(key_input_dims, dims, bias=bias)
        self.value_proj = Linear(value_input_dims, value_dims, bias=bias)
        self.out_proj = Linear(value_dims, value_output_dims, bias=bias)

    def _heads(self, x):
        return mx.unflatten(x, -1, (self.num_heads, -1)).transpose(0, 2, 1, 3)

    def __call__(self, queries, keys, values, mask=None):
        q = self._heads(self.query_proj(queries))
        k = self._heads(self.key_proj(keys))
        v = self._heads(self.value_proj(values))
        scale = math.sqrt(1 / q.shape[-1])
        out = mx.fast.scaled_dot_product_attention(q, k, v, scale=scale, mask=mask)
        return self.out_proj(out.transpose(0, 2, 1, 3).flatten(-2, -1))

    @staticmethod
    def create_additive_causal_mask(N: int, dtype: "mx.Dtype" = mx.float32):
        """An ``(N, N)`` mask with the dtype's lowest value above the
        diagonal and 0 elsewhere."""
        idx = mx.arange(N)
        future = idx[:, None] < idx[None]
        return future.astype(dtype) * mx.finfo(dtype).min


class TransformerEncoderLayer(Module):
    """Self-attention and an MLP, each with a residual connection and a
    LayerNorm (before the block with ``norm_first``, after it otherwise)."""

    def __init__(
        self,
        dims: int,
        num_heads: int,
        mlp_dims: Optional[int] = None,
        dropout: float = 0.0,
        activation: Callable[[Any], Any] = relu,
        norm_first: bool = True,
    ):
        super().__init__()
        mlp_dims = mlp_dims or dims * 4
        self.attention = MultiHeadAttention(dims, num_heads)
        self.ln1 = LayerNorm(dims)
        self.ln2 = LayerNorm(dims)
        self.linear1 = Linear(dims, mlp_dims)
        self.linear2 = Linear(mlp_dims, dims)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = activation
        self.norm_first = norm_first

    def _mlp(self, x):
        return self.linear2(self.dropout2(self.activation(self.linear1(x))))

    def __call__(self, x, mask):
        if self.norm_first:
            y = self.ln1(x)
            x = x + self.dropout1(self.attention(y, y, y, mask))
            return x + self._mlp(self.ln2(x))
        x = self.ln1(x + self.dropout1(self.attention(x, x, x, mask)))
        return self.ln2(x + self._mlp(x))


class _LayerStack(Module):
    """``num_layers`` copies of ``_layer`` followed by a LayerNorm."""

    _layer = None

    def __init__(
        self,
        num_layers: int,
        dims: int,
        num_heads: int,
        mlp_dims: Optional[int] = None,
        dropout: float = 0.0,
        activation=relu,
        norm_first: bool = True,
        checkpoint: bool = False,
    ):
        super().__init__()
        make = type(self)._layer
        self.layers = [
            make(dims, num_heads, mlp_dims, dropout, activation, norm_first)
            for _ in range(num_layers)
        ]
        self.ln = LayerNorm(dims)
        self.checkpoint = checkpoint

    def _run(self, x, *rest):
        for layer in self.layers:
            layer = checkpoint(layer) if self.checkpoint else layer
            x = layer(x, *rest)
        return self.ln(x)


class TransformerEncoder(_LayerStack):
    """``num_layers`` encoder layers followed by a LayerNorm; called as
    ``encoder(x, mask)``."""

    _layer = TransformerEncoderLayer

    def __call__(self, x, mask):
        return self._run(x, mask)


class TransformerDecoderLayer(Module):
    """Self-attention, cross-attention over ``memory`` and an MLP, each with
    a residual connection and a LayerNorm."""

    def __init__(
        self,
        dims: int,
        num_heads: int,
        mlp_dims: Optional[int] = None,
        dropout: float = 0.0,
        activation: Callable[[Any], Any] = relu,
        norm_first: bool = True,
    ):
        super().__init__()
        mlp_dims = mlp_dims or dims * 4
        self.self_attention = MultiHeadAttention(dims, num_heads)
        self.cross_attention = MultiHeadAttention(dims, num_heads)
        self.ln1 = LayerNorm(dims)
        self.ln2 = LayerNorm(dims)
        self.ln3 = LayerNorm(dims)
        self.linear1 = Linear(dims, mlp_dims)
        self.linear2 = Linear(mlp_dims, dims)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = activation
        self.norm_first = norm_first

    def _mlp(self, x):
        return self.linear2(self.dropout3(self.activation(self.linear1(x))))

    def __call__(self, x, memory, x_mask, memory_mask):
        if self.norm_first:
            y = self.ln1(x)
            x = x + self.dropout1(self.self_attention(y, y, y, x_mask))
            y = self.ln2(x)
            x = x + self.dropout2(self.cross_attention(y, memory, memory, memory_mask))
            return x + self._mlp(self.ln3(x))
        x = self.ln1(x + self.dropout1(self.self_attention(x, x, x, x_mask)))
        x = self.ln2(x + self.dropout2(self.cross_attention(x, memory, memory, memory_mask)))
        return self.ln3(x + self._mlp(x))


class TransformerDecoder(_LayerStack):
    """``num_layers`` decoder layers followed by a LayerNorm; called as
    ``decoder(x, memory, x_mask, memory_mask)``."""

    _layer = TransformerDecoderLayer

    def __call__(self, x, memory, x_mask, memory_mask):
        return self._run(x, memory, x_mask, memory_mask)


class Transformer(Module):
    """Encoder-decoder Transformer; ``custom_encoder`` / ``custom_decoder``
    replace the default stacks."""

    def __init__(
        self,
        dims: int = 512,
        num_heads: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        mlp_dims: Optional[int] = None,
        dropout: float = 0.0,
        activation: Callable[[Any], Any] = relu,
        custom_encoder: Optional[Any] = None,
        custom_decoder: Optional[Any] = None,
        norm_first: bool = True,
        checkpoint: bool = False,
    ):
        super().__init__()
        common = (mlp_dims, dropout, activation, norm_first, checkpoint)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(num_encoder_layers, dims, num_heads, *common)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(num_decoder_layers, dims, num_heads, *common)

    def __call__(self, src, tgt, src_mask, tgt_mask, memory_mask):
        memory = self.encoder(src, src_mask)
        return self.decoder(tgt, memory, tgt_mask, memory_mask)
