"""Quantized layers (QuantizedLinear, QuantizedEmbedding, QQLinear) and
:func:`quantize`, which swaps a model's layers for their quantized forms."""

import math
from typing import Callable, Optional, Union

from ... import core as mx
from ...utils import tree_map_with_path
from .base import Module

_MODE_DEFAULTS = {"affine": (64, 4), "mxfp4": (32, 4), "nvfp4": (16, 4), "mxfp8": (32, 8)}


def _defaults_for_mode(mode, group_size, bits):
    if mode not in _MODE_DEFAULTS:
        raise ValueError(
            f"Invalid quantization mode '{mode}'. Valid modes are: {', '.join(_MODE_DEFAULTS)}."
        )
    default_group, default_bits = _MODE_DEFAULTS[mode]
    return group_size or default_group, bits or default_bits


def quantize(
    model: Module,
    group_size: int = None,
    bits: int = None,
    *,
    mode: str = "affine",
    quantize_input: bool = False,
    class_predicate: Optional[Callable[[str, Module], Union[bool, dict]]] = None,
):
    """Replaces, in place, each leaf module selected by
    ``class_predicate(path, module)`` (default: those with ``to_quantized``)
    by ``module.to_quantized(...)``.  The predicate may return a dict of
    arguments for ``to_quantized`` instead of ``True``."""
    if class_predicate is None:
        class_predicate = lambda _, m: hasattr(m, "to_quantized")  # noqa: E731

    def convert(path, m):
        choice = class_predicate(path, m)
        if not choice:
            return m
        if not hasattr(m, "to_quantized"):
            raise ValueError(f"Unable to quantize model of type {type(m)}")
        if isinstance(choice, bool):
            kwargs = {"group_size": group_size, "bits": bits, "mode": mode}
            if quantize_input:
                kwargs["quantize_input"] = quantize_input
            return m.to_quantized(**kwargs)
        if isinstance(choice, dict):
            if "quantize_input" in choice and not choice["quantize_input"]:
                choice.pop("quantize_input")
            return m.to_quantized(**choice)
        raise ValueError(
            "``class_predicate`` must return a bool or a dict of parameters to pass to "
            "``to_quantized``"
        )

    leaves = tree_map_with_path(convert, model.leaf_modules(), is_leaf=Module.is_module)
    model.update_modules(leaves)


def _quantized_matmul(layer, x):
    """``x @ W.T`` with the layer's quantized ``weight``."""
    return mx.quantized_matmul(
        x,
        layer["weight"],
        scales=layer["scales"],
        biases=layer.get("biases"),
        transpose=True,
        group_size=layer.group_size,
        bits=layer.bits,
        mode=layer.mode,
    )


def _store_quantized(layer, weight, group_size, bits, mode):
    layer.weight, layer.scales, *biases = mx.quantize(weight, group_size, bits, mode=mode)
    layer.biases = biases[0] if biases else None


class QuantizedEmbedding(Module):
    """An :class:`Embedding` whose table is quantized (``weight``,
    ``scales`` and, in affine mode, ``biases``); frozen by default."""

    def __init__(
        self,
        num_embeddings: int,
        dims: int,
        group_size: int = None,
        bits: int = None,
        mode: str = "affine",
    ):
        super().__init__()
        self.group_size, self.bits = _defaults_for_mode(mode, group_size, bits)
        self.mode = mode
        table = mx.random.normal(shape=(num_embeddings, dims), scale=math.sqrt(1 / dims))
        _store_quantized(self, table, group_size, bits, mode)
        self.num_embeddings = num_embeddings
        self.dims = dims
        self.freeze()

    def __call__(self, x):
        biases = self.get("biases")
        return mx.dequantize(
            self["weight"][x],
            scales=self["scales"][x],
            biases=biases[x] if biases is not None else None,
            group_size=self.group_size,
            bits=self.bits,
            mode=self.mode,
        )

    def as_linear(self, x):
        """``x @ table.T`` with the quantized table."""
        return _quantized_matmul(self, x)

    def _extra_repr(self):
        return (
            f"{self.num_embeddings}, {self.dims}, group_size={self.group_size}, "
            f"bits={self.bits}, mode={self.mode}"
        )

    @classmethod
    def from_embedding(
        cls, embedding_layer: Module, group_size: int = None, bits: int = None, mode: str = "affine"
    ):
        """Quantizes the table of an :class:`Embedding`."""
        n, dims = embedding_layer.weight.shape
        layer = cls(n, dims, group_size, bits, mode=mode)
        _store_quantized(layer, embedding_layer.weight, group_size, bits, mode)
        return layer


class QuantizedLinear(Module):
    """A :class:`Linear` with a quantized ``weight`` (plus ``scales`` and,
    in affine mode, ``biases``); frozen by default."""

    def __init__(
        self,
        input_dims: int,
        output_dims: int,
        bias: bool = True,
        group_size: int = None,
        bits: int = None,
        mode: str = "affine",
    ):
        super().__init__()
        self.group_size, self.bits = _defaults_for_mode(mode, group_size, bits)
        self.mode = mode
        scale = math.sqrt(1 / input_dims)
        w = mx.random.uniform(low=-scale, high=scale, shape=(output_dims, input_dims))
        _store_quantized(self, w, group_size, bits, mode)
        if bias:
            self.bias = mx.zeros((output_dims,))
        self.freeze()

    def _extra_repr(self):
        out_dims, packed = self.weight.shape
        in_dims = packed * 32 // self.bits
        return (
            f"input_dims={in_dims}, output_dims={out_dims}, bias={'bias' in self}, "
            f"group_size={self.group_size}, bits={self.bits}, mode={self.mode}"
        )

    def __call__(self, x):
        y = _quantized_matmul(self, x)
        if "bias" in self:
            y = y + self["bias"]
        return y

    @classmethod
    def from_linear(
        cls, linear_layer: Module, group_size: int = None, bits: int = None, mode: str = "affine"
    ):
        """Quantizes the weight of a :class:`Linear` (its bias is kept)."""
        out_dims, in_dims = linear_layer.weight.shape
        layer = cls(in_dims, out_dims, False, group_size, bits, mode=mode)
        _store_quantized(layer, linear_layer.weight, group_size, bits, mode)
        if "bias" in linear_layer:
            layer.bias = linear_layer.bias
        return layer


class QQLinear(Module):
    """A linear layer (no bias) that quantizes both weight and input
    (``mx.qqmm``): the weight stays in full precision in training mode and is
    quantized in evaluation mode."""

    def __init__(
        self,
        input_dims: int,
        output_dims: int,
        group_size: int = None,
        bits: int = None,
        mode: str = "nvfp4",
    ):
        super().__init__()
        self.group_size, self.bits = _defaults_for_mode(mode, group_size, bits)
        self.mode = mode
        scale = math.sqrt(1 / input_dims)
        self.weight = mx.random.uniform(low=-scale, high=scale, shape=(output_dims, input_dims))
        self._quantized = False

    def _extra_repr(self):
        out_dims, in_dims = self.weight.shape
        if self.weight.dtype == mx.uint32:
            in_dims = in_dims * 32 // self.bits
        return (
            f"input_dims={in_dims}, output_dims={out_dims}, group_size={self.group_size}, "
            f"bits={self.bits}, mode={self.mode}"
        )

    def quantize(self):
        """Quantizes the weight (no-op when already quantized)."""
        if not self._quantized:
            self.weight, self.scales = mx.quantize(
                self.weight, self.group_size, self.bits, mode=self.mode
            )
            self._quantized = True

    def dequantize(self):
        """Restores a full-precision weight (no-op when not quantized)."""
        if self._quantized:
            self.weight = mx.dequantize(
                self.weight,
                scales=self.scales,
                group_size=self.group_size,
                bits=self.bits,
                mode=self.mode,
            )
            del self.scales
            self._quantized = False

    def _set_training_mode(self, mode: bool):
        super()._set_training_mode(mode)
        if self._training:
            self.dequantize()
        else:
            self.quantize()

    def __call__(self, x):
        return mx.qqmm(
            x,
            self["weight"],
            scales=self.get("scales"),
            group_size=self.group_size,
            bits=self.bits,
            mode=self.mode,
        )

    @classmethod
    def from_linear(
        cls, linear_layer: Module, group_size: int = None, bits: int = None, mode: str = "nvfp4"
    ):
        """A QQLinear with the weight of a bias-free :class:`Linear`."""
        out_dims, in_dims = linear_layer.weight.shape
        if linear_layer.get("bias") is not None:
            raise NotImplementedError("QQLinear does not support bias yet.")
        layer = cls(in_dims, out_dims, group_size, bits, mode=mode)
        layer.weight = linear_layer.weight
        layer.train(linear_layer.training)
        return layer
