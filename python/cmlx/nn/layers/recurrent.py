"""Recurrent layers: RNN (Elman), GRU and LSTM.  Inputs are ``(N, L, D)`` or
``(L, D)``; outputs stack the hidden state of every step on axis ``-2``."""

import math
from typing import Callable, Optional

from ... import core as mx
from .activations import tanh
from .base import Module


def _init(scale, *shape):
    return mx.random.uniform(low=-scale, high=scale, shape=shape)


def _project(x, w, b):
    return mx.addmm(b, x, w.T) if b is not None else x @ w.T


class RNN(Module):
    """``h_t = nonlinearity(W_xh x_t + W_hh h_{t-1} + b)`` (default
    nonlinearity: tanh)."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: Optional[Callable] = None,
    ):
        super().__init__()
        self.nonlinearity = nonlinearity or tanh
        if not callable(self.nonlinearity):
            raise ValueError(f"Nonlinearity must be callable. Current value: {nonlinearity}.")
        scale = 1.0 / math.sqrt(hidden_size)
        self.hidden_size = hidden_size
        self.Wxh = _init(scale, hidden_size, input_size)
        self.Whh = _init(scale, hidden_size, hidden_size)
        self.bias = _init(scale, hidden_size) if bias else None

    def _extra_repr(self):
        return (
            f"input_dims={self.Wxh.shape[1]}, hidden_size={self.hidden_size}, "
            f"nonlinearity={self.nonlinearity}, bias={self.bias is not None}"
        )

    def __call__(self, x, hidden=None):
        x = _project(x, self.Wxh, self.bias)
        states = []
        for t in range(x.shape[-2]):
            xt = x[..., t, :]
            hidden = xt if hidden is None else mx.addmm(xt, hidden, self.Whh.T)
            hidden = self.nonlinearity(hidden)
            states.append(hidden)
        return mx.stack(states, axis=-2)


class GRU(Module):
    """Gated recurrent unit; ``Wx``/``Wh`` hold the r, z, n gates stacked
    (``(3 * hidden_size, ...)``), ``b`` their input bias and ``bhn`` the
    hidden bias of the n gate."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True):
        super().__init__()
        self.hidden_size = hidden_size
        scale = 1.0 / math.sqrt(hidden_size)
        self.Wx = _init(scale, 3 * hidden_size, input_size)
        self.Wh = _init(scale, 3 * hidden_size, hidden_size)
        self.b = _init(scale, 3 * hidden_size) if bias else None
        self.bhn = _init(scale, hidden_size) if bias else None

    def _extra_repr(self):
        return (
            f"input_dims={self.Wx.shape[1]}, hidden_size={self.hidden_size}, "
            f"bias={self.b is not None}"
        )

    def __call__(self, x, hidden=None):
        H = self.hidden_size
        x = _project(x, self.Wx, self.b)
        x_rz, x_n = x[..., :-H], x[..., -H:]
        states = []
        for t in range(x.shape[-2]):
            rz = x_rz[..., t, :]
            if hidden is not None:
                hp = hidden @ self.Wh.T
                hp_rz, hp_n = hp[..., :-H], hp[..., -H:]
                if self.bhn is not None:
                    hp_n = hp_n + self.bhn
                rz = rz + hp_rz
            r, z = mx.split(mx.sigmoid(rz), 2, axis=-1)
            n = x_n[..., t, :]
            if hidden is not None:
                n = n + r * hp_n
            elif self.bhn is not None:
                n = n + r * self.bhn
            n = mx.tanh(n)
            hidden = (1 - z) * n if hidden is None else (1 - z) * n + z * hidden
            states.append(hidden)
        return mx.stack(states, axis=-2)


class LSTM(Module):
    """Long short-term memory; ``Wx``/``Wh``/``bias`` hold the i, f, g, o
    gates stacked.  Returns ``(hidden states, cell states)``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True):
        super().__init__()
        self.hidden_size = hidden_size
        scale = 1.0 / math.sqrt(hidden_size)
        self.Wx = _init(scale, 4 * hidden_size, input_size)
        self.Wh = _init(scale, 4 * hidden_size, hidden_size)
        self.bias = _init(scale, 4 * hidden_size) if bias else None

    def _extra_repr(self):
        return (
            f"input_dims={self.Wx.shape[1]}, hidden_size={self.hidden_size}, "
            f"bias={self.bias is not None}"
        )

    def __call__(self, x, hidden=None, cell=None):
        x = _project(x, self.Wx, self.bias)
        hs, cs = [], []
        for t in range(x.shape[-2]):
            gates = x[..., t, :]
            if hidden is not None:
                gates = mx.addmm(gates, hidden, self.Wh.T)
            i, f, g, o = mx.split(gates, 4, axis=-1)
            i, f, g, o = mx.sigmoid(i), mx.sigmoid(f), mx.tanh(g), mx.sigmoid(o)
            cell = i * g if cell is None else f * cell + i * g
            hidden = o * mx.tanh(cell)
            cs.append(cell)
            hs.append(hidden)
        return mx.stack(hs, axis=-2), mx.stack(cs, axis=-2)
