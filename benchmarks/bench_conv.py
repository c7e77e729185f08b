"""2-D convolution on three ResNet layers (batch 8, float32, channels-last):

- l1: 56x56x64 -> 64 channels, 3x3, stride 1, padding 1 (1.85 GFLOP)
- l2: 28x28x128 -> 256 channels, 3x3, stride 2, padding 1 (0.92 GFLOP)
- 1x1: 56x56x256 -> 64 channels, pointwise (0.82 GFLOP)
- rgb: 56x56x3 -> 128 channels, 3x3, padding 1 (a first layer on colour
  input, 0.17 GFLOP)
- depthwise: 56x56x64, 3x3, groups 64 (cmlx and MLX only)

Each layer is timed forward, and backward for the input gradient and for
the weight gradient separately (vjp with a fixed cotangent).  cmlx and MLX
run conv2d and vjp; NumPy gets the forward only, as im2col through
sliding_window_view and one tensordot (its BLAS); PyTorch, where
installed, runs conv2d on NCHW copies and its autograd.grad helpers."""

import numpy as np

from harness import workload

N = 8
LAYERS = {  # name: (H, C, O, k, stride, padding)
    "l1": (56, 64, 64, 3, 1, 1),
    "l2": (28, 128, 256, 3, 2, 1),
    "1x1": (56, 256, 64, 1, 1, 0),
    "rgb": (56, 3, 128, 3, 1, 1),
    "depthwise": (56, 64, 64, 3, 1, 1),  # groups = 64: one channel per group
}
_DATA = {}


def data(name):
    if name not in _DATA:
        H, C, O, k, s, p = LAYERS[name]
        rg = np.random.default_rng(11)
        x = rg.standard_normal((N, H, H, C)).astype(np.float32)
        cg = 1 if name == "depthwise" else C
        w = (rg.standard_normal((O, k, k, cg)) / np.sqrt(k * k * cg)).astype(np.float32)
        Y = (H + 2 * p - k) // s + 1
        ct = rg.standard_normal((N, Y, Y, O)).astype(np.float32)
        _DATA[name] = (x, w, ct)
    return _DATA[name]


def numpy_conv2d(x, w, s, p):
    xp = np.pad(x, ((0, 0), (p, p), (p, p), (0, 0)))
    k = w.shape[1]
    win = np.lib.stride_tricks.sliding_window_view(xp, (k, k), axis=(1, 2))[:, ::s, ::s]
    # win: (N, Y, Y, C, k, k); w: (O, k, k, C)
    return np.tensordot(win, w, axes=([3, 4, 5], [3, 1, 2]))


def _make(name, part):
    def bench(fw):
        x, w, ct = data(name)
        _, _, _, _, s, p = LAYERS[name]
        if name == "depthwise":
            return _depthwise(fw, x, w, ct, part)
        if fw.name == "numpy":
            if part != "fwd":
                return None
            return lambda: numpy_conv2d(x, w, s, p)
        if fw.name == "torch":
            return _torch(fw.mod, x, w, ct, s, p, part)
        m = fw.mod
        X, W, CT = fw.from_numpy(x), fw.from_numpy(w), fw.from_numpy(ct)
        if part == "fwd":
            return lambda: m.eval(m.conv2d(X, W, stride=s, padding=p))
        if part == "dx":
            return lambda: m.eval(m.vjp(lambda a: m.conv2d(a, W, stride=s, padding=p), [X],
                                        [CT])[1])
        return lambda: m.eval(m.vjp(lambda b: m.conv2d(X, b, stride=s, padding=p), [W], [CT])[1])
    return bench


def _depthwise(fw, x, w, ct, part):
    if fw.name != "cmlx" and fw.name != "mlx":
        return None
    m, G = fw.mod, x.shape[-1]
    X, W, CT = fw.from_numpy(x), fw.from_numpy(w), fw.from_numpy(ct)
    if part == "fwd":
        return lambda: m.eval(m.conv2d(X, W, padding=1, groups=G))
    if part == "dx":
        return lambda: m.eval(m.vjp(lambda a: m.conv2d(a, W, padding=1, groups=G), [X], [CT])[1])
    return lambda: m.eval(m.vjp(lambda b: m.conv2d(X, b, padding=1, groups=G), [W], [CT])[1])


def _torch(torch, x, w, ct, s, p, part):
    F = torch.nn.functional
    X = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2)))
    W = torch.from_numpy(np.ascontiguousarray(w.transpose(0, 3, 1, 2)))
    CT = torch.from_numpy(np.ascontiguousarray(ct.transpose(0, 3, 1, 2)))
    if part == "fwd":
        return lambda: F.conv2d(X, W, stride=s, padding=p)
    if part == "dx":
        return lambda: torch.nn.grad.conv2d_input(X.shape, W, CT, stride=s, padding=p)
    return lambda: torch.nn.grad.conv2d_weight(X, W.shape, CT, stride=s, padding=p)


for _name in LAYERS:
    for _part, _label in (("fwd", "forward"), ("dx", "grad input"), ("dw", "grad weight")):
        workload(f"conv2d {_name} {_label}", family="conv")(_make(_name, _part))
