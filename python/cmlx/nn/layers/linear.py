"""``Identity``, ``Linear`` and ``Bilinear``."""

import math
from typing import Any, Optional

from ... import core as mx
from .base import Module
from .quantized import QQLinear, QuantizedLinear


def _uniform(scale, shape):
    return mx.random.uniform(low=-scale, high=scale, shape=shape)


class Identity(Module):
    """Returns its input; accepts and ignores any arguments."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def __call__(self, x: "mx.array") -> "mx.array":
        return x


class Linear(Module):
    """``y = x @ weight.T + bias`` with ``weight`` of shape
    ``(output_dims, input_dims)`` and ``bias`` of shape ``(output_dims,)``,
    both drawn from ``U(-1/sqrt(input_dims), 1/sqrt(input_dims))``."""

    def __init__(self, input_dims: int, output_dims: int, bias: bool = True) -> None:
        super().__init__()
        scale = math.sqrt(1.0 / input_dims)
        self.weight = _uniform(scale, (output_dims, input_dims))
        if bias:
            self.bias = _uniform(scale, (output_dims,))

    def _extra_repr(self) -> str:
        out_dims, in_dims = self.weight.shape
        return f"input_dims={in_dims}, output_dims={out_dims}, bias={'bias' in self}"

    def __call__(self, x: "mx.array") -> "mx.array":
        if "bias" in self:
            return mx.addmm(self["bias"], x, self["weight"].T)
        return x @ self["weight"].T

    def to_quantized(
        self,
        group_size: Optional[int] = None,
        bits: Optional[int] = None,
        mode: str = "affine",
        quantize_input: bool = False,
    ):
        """A :class:`QuantizedLinear` (or, with ``quantize_input``, a
        :class:`QQLinear`) holding this layer's weights quantized."""
        if quantize_input:
            if mode not in ("nvfp4", "mxfp8"):
                raise ValueError(
                    "Quantized activations are only supported for 'nvfp4' and 'mxfp8' "
                    f"modes, got {mode}."
                )
            return QQLinear.from_linear(self, group_size, bits, mode)
        return QuantizedLinear.from_linear(self, group_size, bits, mode)


class Bilinear(Module):
    """``y_i = x1^T W_i x2 + b_i`` with ``weight`` of shape
    ``(output_dims, input2_dims, input1_dims)``."""

    def __init__(
        self, input1_dims: int, input2_dims: int, output_dims: int, bias: bool = True
    ) -> None:
        super().__init__()
        scale = math.sqrt(1.0 / input1_dims)
        self.weight = _uniform(scale, (output_dims, input2_dims, input1_dims))
        if bias:
            self.bias = _uniform(scale, (output_dims,))

    def _extra_repr(self) -> str:
        out, in2, in1 = self.weight.shape
        return f"input1_dims={in1}, input2_dims={in2}, output_dims={out}, bias={'bias' in self}"

    def __call__(self, x1: "mx.array", x2: "mx.array") -> "mx.array":
        out, in2, in1 = self.weight.shape
        lead = x1.shape[:-1]
        # (n, in1) @ (in1, out*in2) -> (n, in2, out), then contract with x2
        t = x1.reshape(-1, in1) @ self.weight.reshape(out * in2, in1).T
        t = t.reshape(-1, out, in2).swapaxes(-2, -1)
        y = (x2.reshape(-1, 1, in2) @ t).squeeze(1).reshape(*lead, out)
        if "bias" in self:
            y = y + self.bias
        return y
