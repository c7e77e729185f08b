"""cmlx.nn layers and optimizer steps against NumPy formulas (no oracle
needed): Linear, Bilinear, BatchNorm, GroupNorm, pooling, RNN/LSTM/GRU,
Upsample, SinusoidalPositionalEncoding and SGD/Adam/RMSprop trajectories."""

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

from conftest import mx
from nn_support import nn, optim

RNG = np.random.default_rng(3)


def data(*shape):
    return RNG.normal(size=shape).astype(np.float32)


def arr(m, name):
    return np.array(m[name]).astype(np.float64)


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(np.array(a), b, rtol=tol, atol=tol)


def test_linear_and_bilinear():
    x = data(3, 5)
    lin = nn.Linear(5, 4)
    close(lin(mx.array(x)), x @ arr(lin, "weight").T + arr(lin, "bias"))
    x1, x2 = data(2, 5), data(2, 3)
    bl = nn.Bilinear(5, 3, 4)
    w = arr(bl, "weight")  # (out, in2, in1)
    close(bl(mx.array(x1), mx.array(x2)), np.einsum("bi,oji,bj->bo", x1, w, x2) + arr(bl, "bias"))


def test_batch_norm_train_and_eval():
    x = data(6, 4, 3)
    bn = nn.BatchNorm(3, momentum=0.25)
    y = bn(mx.array(x))
    mean, var = x.mean((0, 1)), x.var((0, 1))
    close(y, (x - mean) / np.sqrt(var + 1e-5))
    close(bn.running_mean, 0.25 * mean)
    close(bn.running_var, 0.75 + 0.25 * x.var((0, 1), ddof=1))
    bn.eval()
    z = data(2, 4, 3)
    rm, rv = np.array(bn.running_mean), np.array(bn.running_var)
    close(bn(mx.array(z)), (z - rm) / np.sqrt(rv + 1e-5))


def test_group_norm_interleaved_groups():
    x = data(2, 5, 6)
    gn = nn.GroupNorm(3, 6)
    g = x.reshape(2, -1, 3)  # MLX groups channel c into group c % 3
    ref = (g - g.mean(1, keepdims=True)) / np.sqrt(g.var(1, keepdims=True) + 1e-5)
    close(gn(mx.array(x)), ref.reshape(x.shape))


@pytest.mark.parametrize("k,s,p", [(2, 2, 0), (3, 1, 0), (3, 2, 1), (2, 3, 0)])
def test_pooling_1d_2d(k, s, p):
    x = data(2, 9, 3)
    xp = np.pad(x, [(0, 0), (p, p), (0, 0)], constant_values=-np.inf)
    win = sliding_window_view(xp, k, axis=1)[:, ::s]
    close(nn.MaxPool1d(k, s, p)(mx.array(x)), win.max(-1))
    xz = np.pad(x, [(0, 0), (p, p), (0, 0)])
    close(nn.AvgPool1d(k, s, p)(mx.array(x)), sliding_window_view(xz, k, axis=1)[:, ::s].mean(-1))
    x2 = data(1, 7, 8, 2)
    w2 = sliding_window_view(x2, (k, k), axis=(1, 2))[:, ::s, ::s]
    close(nn.MaxPool2d(k, s)(mx.array(x2)), w2.max((-1, -2)))


def sig(v):
    return 1 / (1 + np.exp(-v))


def test_recurrent_layers():
    x = data(2, 4, 3)
    rnn = nn.RNN(3, 5)
    h = np.zeros((2, 5))
    outs = []
    for t in range(4):
        pre = x[:, t] @ arr(rnn, "Wxh").T + np.array(rnn.bias) + (h @ arr(rnn, "Whh").T if t else 0)
        h = np.tanh(pre)
        outs.append(h)
    close(rnn(mx.array(x)), np.stack(outs, 1))

    lstm = nn.LSTM(3, 5)
    h = c = None
    hs, cs = [], []
    for t in range(4):
        g = x[:, t] @ arr(lstm, "Wx").T + np.array(lstm.bias)
        if h is not None:
            g = g + h @ arr(lstm, "Wh").T
        i, f, gg, o = np.split(g, 4, axis=-1)
        c = sig(i) * np.tanh(gg) if c is None else sig(f) * c + sig(i) * np.tanh(gg)
        h = sig(o) * np.tanh(c)
        hs.append(h)
        cs.append(c)
    out_h, out_c = lstm(mx.array(x))
    close(out_h, np.stack(hs, 1))
    close(out_c, np.stack(cs, 1))

    gru = nn.GRU(3, 5)
    Wx, Wh, b, bhn = arr(gru, "Wx"), arr(gru, "Wh"), np.array(gru.b), np.array(gru.bhn)
    h = None
    hs = []
    for t in range(4):
        xp = x[:, t] @ Wx.T + b
        xrz, xn = xp[:, :10], xp[:, 10:]
        if h is None:
            r, z = np.split(sig(xrz), 2, axis=-1)
            h = (1 - z) * np.tanh(xn + r * bhn)
        else:
            hp = h @ Wh.T
            r, z = np.split(sig(xrz + hp[:, :10]), 2, axis=-1)
            h = (1 - z) * np.tanh(xn + r * (hp[:, 10:] + bhn)) + z * h
        hs.append(h)
    close(gru(mx.array(x)), np.stack(hs, 1))


def test_upsample_linear_align_corners():
    x = data(1, 3, 1)
    y = np.array(nn.Upsample(2.0, "linear", align_corners=True)(mx.array(x)))[0, :, 0]
    pos = np.arange(6) * (2 / 5)
    close(y, np.interp(pos, np.arange(3), x[0, :, 0]))
    y = np.array(nn.Upsample(2.0, "linear")(mx.array(x)))[0, :, 0]
    pos = np.clip((np.arange(6) + 0.5) / 2 - 0.5, 0, 2)
    close(y, np.interp(pos, np.arange(3), x[0, :, 0]))


def test_sinusoidal_encoding():
    pe = nn.SinusoidalPositionalEncoding(8, min_freq=0.01, max_freq=1.0)
    x = np.array([0.0, 1.0, 2.5], np.float32)
    freqs = np.exp(np.linspace(np.log(1.0), np.log(0.01), 4))
    ang = x[:, None] * freqs
    close(pe(mx.array(x)), np.concatenate([np.sin(ang), np.cos(ang)], -1) * 0.5)


def test_optimizer_trajectories():
    p0 = np.array([1.0, -2.0, 0.5])
    grads = [np.array([0.3, -0.1, 0.2]), np.array([-0.2, 0.4, 0.1]), np.array([0.1, 0.1, -0.3])]

    def run(opt):
        p = {"w": mx.array(p0.astype(np.float32))}
        for g in grads:
            p = opt.apply_gradients({"w": mx.array(g.astype(np.float32))}, p)
        return np.array(p["w"])

    # SGD with momentum, dampening and weight decay
    p, v = p0.copy(), np.zeros(3)
    for g in grads:
        g = g + 0.1 * p
        v = 0.9 * v + 0.8 * g
        p = p - 0.05 * v
    close(run(optim.SGD(0.05, momentum=0.9, dampening=0.2, weight_decay=0.1)), p)
    # Adam with bias correction
    p, m, v = p0.copy(), np.zeros(3), np.zeros(3)
    for t, g in enumerate(grads, 1):
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        p = p - 0.1 / (1 - 0.9**t) * m / (np.sqrt(v) / np.sqrt(1 - 0.999**t) + 1e-8)
    close(run(optim.Adam(0.1, bias_correction=True)), p)
    # RMSprop
    p, v = p0.copy(), np.zeros(3)
    for g in grads:
        v = 0.99 * v + 0.01 * g * g
        p = p - 0.01 * g / (np.sqrt(v) + 1e-8)
    close(run(optim.RMSprop(0.01)), p)
