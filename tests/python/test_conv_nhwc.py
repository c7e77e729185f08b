"""The direct channels-last float32 convolution (src/backend/cpu/conv_nhwc.c).

One-group convolutions with 1-2 spatial axes, no input dilation, output
channels a multiple of 8 (16 for the AVX-512 tiles) and taps x channels up
to 2304 run on register tiles instead of patch matrix + GEMM; the rest keep
the GEMM path.  Values are checked against the float64 NumPy reference of
test_conv.py across batch, odd sizes, paddings (also negative ones, as the
input gradient builds), strides, dilations, flips, channel counts on both
sides of the tile widths, layouts and dtypes; the AVX2 tiles and the GEMM
path (forced through CMLX_MATMUL_AVX512=0 / CMLX_MATMUL_SIMD=0 in a fresh
interpreter) must give the same values within float rounding, gradients
included; and results against real MLX where importable."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import SUBJECT_IS_MLX, SUBJECT_NAME, cmlx_only, mlx_ref, mx, needs_oracle
from test_conv import np_conv

RNG = np.random.default_rng(19)


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def close(got, want, rtol=2e-5):
    got = np.asarray(got, np.float64)
    assert got.shape == want.shape
    scale = max(1.0, float(np.abs(want).max()) if want.size else 1.0)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale)


# (N, H, W, Cin, Cout, k, stride, padding, dilation): every batch, odd size,
# padding, input and output channel count of the issue at least once
CASES = [
    (1, 7, 7, 64, 64, 3, 1, 1, 1),
    (3, 13, 13, 3, 16, 3, 1, 1, 1),
    (1, 56, 56, 64, 64, 3, 1, 1, 1),
    (3, 7, 13, 67, 80, 3, 1, 2, 1),
    (1, 13, 7, 1, 16, 3, 1, 0, 1),
    (3, 7, 7, 67, 16, 3, 1, 0, 1),
    (1, 13, 13, 3, 80, 3, 1, 2, 1),
    (1, 7, 56, 64, 80, 3, 1, 1, 1),
    (3, 13, 7, 64, 16, 5, 1, 2, 1),
    (1, 13, 13, 3, 128, 3, 1, 1, 1),
    (1, 13, 13, 67, 64, 3, 2, 1, 1),
    (3, 13, 13, 3, 64, 3, 2, 0, 1),
    (1, 13, 13, 16, 64, 3, 1, 2, 2),
    (1, 7, 7, 16, 16, 5, 1, 0, 1),  # a 3x3 output: tiles of fewer pixels
    (1, 7, 7, 8, 48, 7, 1, 3, 1),  # every pixel touches the padding
    (2, 3, 3, 16, 32, 5, 1, 1, 1),  # a kernel wider than the input
    (1, 5, 20, 32, 24, 3, 1, 1, 1),  # 24 outputs: AVX2 blocks only
    (1, 5, 20, 32, 8, 3, 1, 1, 1),
    (1, 5, 9, 32, 20, 3, 1, 1, 1),  # 20: the GEMM path
    (1, 5, 9, 300, 32, 3, 1, 1, 1),  # 2700 taps x channels: the GEMM path
    (0, 5, 9, 16, 32, 3, 1, 1, 1),
]


@pytest.mark.parametrize("N,H,W,C,O,k,s,p,d", CASES)
def test_conv2d_values(N, H, W, C, O, k, s, p, d):
    x, w = randn(N, H, W, C), randn(O, k, k, C)
    got = mx.conv2d(mx.array(x), mx.array(w), stride=s, padding=p, dilation=d)
    close(np.array(got), np_conv(x, w, stride=s, lo=p, kdil=d))


@pytest.mark.parametrize("kh,kw,s,lo,hi,d,flip", [
    ((3, 1), (1, 3), (1, 1), (1, 0), (1, 0), (1, 1), False),
    ((1, 5), (1, 5), (1, 2), (0, 2), (0, 1), (1, 1), False),
    ((3, 3), (3, 3), (2, 1), (2, 0), (0, 2), (1, 2), True),
    ((3, 3), (3, 3), (1, 1), (0, 0), (2, 0), (1, 1), False),
    ((2, 4), (2, 4), (1, 3), (1, 2), (1, 2), (2, 1), True),
])
def test_conv_general_asymmetric(kh, kw, s, lo, hi, d, flip):
    x, w = randn(2, 11, 12, 19), randn(32, kh[0], kw[1], 19)
    got = mx.conv_general(mx.array(x), mx.array(w), stride=list(s), padding=(list(lo), list(hi)),
                          kernel_dilation=list(d), flip=flip)
    close(np.array(got), np_conv(x, w, stride=list(s), lo=list(lo), hi=list(hi), kdil=list(d),
                                 flip=flip))


@pytest.mark.parametrize("s,p,d", [(1, 0, 1), (1, 2, 1), (2, 1, 1), (1, 3, 2)])
def test_conv1d_values(s, p, d):
    x, w = randn(3, 29, 24), randn(48, 5, 24)
    got = mx.conv1d(mx.array(x), mx.array(w), stride=s, padding=p, dilation=d)
    close(np.array(got), np_conv(x, w, stride=s, lo=p, kdil=d))


LAYOUTS = {
    "transposed": lambda a: mx.transpose(mx.array(np.ascontiguousarray(a.transpose(0, 2, 1, 3))),
                                         (0, 2, 1, 3)),
    "sliced": lambda a: mx.array(np.pad(a, ((0, 0), (1, 2), (0, 3), (2, 1))))[:, 1:-2, :-3, 2:-1],
    "strided": lambda a: mx.array(np.repeat(a, 2, axis=2))[:, :, ::2],
    "channels_first": lambda a: mx.transpose(mx.array(np.ascontiguousarray(
        a.transpose(0, 3, 1, 2))), (0, 2, 3, 1)),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_layouts(layout):
    x, w = randn(2, 9, 9, 32), randn(64, 3, 3, 32)
    X, Wt = LAYOUTS[layout](x), LAYOUTS[layout](w)
    assert np.array_equal(np.array(X), x) and np.array_equal(np.array(Wt), w)
    close(np.array(mx.conv2d(X, Wt, padding=1)), np_conv(x, w, lo=1))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_dtypes(dtype):
    x, w = randn(2, 9, 11, 32), randn(64, 3, 3, 32) / 8
    X, Wt = mx.array(x).astype(getattr(mx, dtype)), mx.array(w).astype(getattr(mx, dtype))
    got = mx.conv2d(X, Wt, padding=1)
    assert got.dtype == getattr(mx, dtype)
    # the reference from the rounded inputs; the output is rounded once
    xr, wr = np.array(X.astype(mx.float32)), np.array(Wt.astype(mx.float32))
    want = np_conv(xr, wr, lo=1)
    tol = 2e-3 if dtype == "float16" else 1.6e-2
    close(np.array(got.astype(mx.float32)), want, rtol=tol)


@cmlx_only  # MLX's float64 convolution is not this exact
def test_float64_keeps_gemm_path():
    x, w = np.asarray(randn(1, 9, 9, 16), np.float64), np.asarray(randn(32, 3, 3, 16), np.float64)
    got = mx.conv2d(mx.array(x, mx.float64), mx.array(w, mx.float64), padding=1)
    assert got.dtype == mx.float64
    np.testing.assert_allclose(np.array(got), np_conv(x, w, lo=1), rtol=1e-12, atol=1e-12)


def _vjp(x, w, ct, s, p):
    X, Wt, CT = mx.array(x), mx.array(w), mx.array(ct)
    dx = mx.vjp(lambda a: mx.conv2d(a, Wt, stride=s, padding=p), [X], [CT])[1][0]
    dw = mx.vjp(lambda b: mx.conv2d(X, b, stride=s, padding=p), [Wt], [CT])[1][0]
    return np.array(dx), np.array(dw)


GRAD_CASES = [(2, 13, 64, 64, 3, 1, 1), (1, 11, 16, 48, 5, 1, 2), (2, 12, 32, 64, 3, 2, 1),
              (1, 9, 3, 16, 3, 1, 0), (1, 9, 16, 32, 1, 1, 1)]  # the last: padding -1 in dx


@pytest.mark.parametrize("N,H,C,O,k,s,p", GRAD_CASES)
def test_gradients_adjoint(N, H, C, O, k, s, p):
    """<dx, x'> == <ct, conv(x', w)> and <dw, w'> == <ct, conv(x, w')>:
    the input gradient runs the direct kernel (a flipped convolution with
    the weight's channels swapped), the weight gradient the GEMM."""
    x, w = randn(N, H, H, C), randn(O, k, k, C)
    Y = (H + 2 * p - k) // s + 1
    ct = randn(N, Y, Y, O)
    dx, dw = _vjp(x, w, ct, s, p)
    x2, w2 = randn(*x.shape), randn(*w.shape)
    ref_x = np.sum(ct * np_conv(x2, w, stride=s, lo=p))
    ref_w = np.sum(ct * np_conv(x, w2, stride=s, lo=p))
    assert np.isclose(np.sum(dx.astype(np.float64) * x2), ref_x, rtol=1e-4, atol=1e-3)
    assert np.isclose(np.sum(dw.astype(np.float64) * w2), ref_w, rtol=1e-4, atol=1e-3)


def np_weight_grad(x, ct, k, lo, kdil=1, flip=False):
    """dW[o, kh, kw, c] = sum over n, oh, ow of ct[n, oh, ow, o] *
    x[n, oh + kh * kdil - lo, ow + kw * kdil - lo, c] (stride 1), float64."""
    N, OH, OW, O = ct.shape
    xp = np.pad(np.asarray(x, np.float64), ((0, 0), (lo, lo + k * kdil), (lo, lo + k * kdil), (0, 0)))
    dw = np.zeros((O, k, k, x.shape[-1]))
    for kh in range(k):
        for kw in range(k):
            win = xp[:, kh * kdil:kh * kdil + OH, kw * kdil:kw * kdil + OW]
            dw[:, kh, kw] = np.einsum("nhwo,nhwc->oc", ct.astype(np.float64), win)
    return dw[:, ::-1, ::-1] if flip else dw


# the direct weight gradient: stride 1, rows of 8 or more, weights up to 160K
@pytest.mark.parametrize("N,H,W,C,O,k,p,d,flip", [
    (2, 13, 13, 64, 64, 3, 1, 1, False),
    (1, 9, 17, 67, 16, 3, 0, 1, False),
    (3, 11, 8, 3, 48, 5, 2, 1, True),
    (1, 12, 12, 16, 32, 3, 2, 2, False),
    (1, 10, 9, 20, 24, 3, 1, 1, True),  # 24 outputs: AVX2 tiles
    (2, 10, 10, 8, 80, 3, 1, 1, False),
    (1, 9, 9, 128, 160, 3, 1, 1, False),  # 184K weights: the GEMM
    (2, 6, 6, 16, 32, 3, 1, 1, False),  # rows of 6: the GEMM
])
def test_weight_grad_values(N, H, W, C, O, k, p, d, flip):
    x, w = randn(N, H, W, C), randn(O, k, k, C)
    f = lambda b: mx.conv_general(mx.array(x), b, padding=p, kernel_dilation=d, flip=flip)
    OH, OW = (H + 2 * p - d * (k - 1) - 1) + 1, (W + 2 * p - d * (k - 1) - 1) + 1
    ct = randn(N, OH, OW, O)
    dw = mx.vjp(f, [mx.array(w)], [mx.array(ct)])[1][0]
    close(np.array(dw), np_weight_grad(x, ct, k, p, d, flip), rtol=5e-5)


_FRESH = """
import json, sys
import numpy as np
import {mod} as mx
out = []
for case in json.loads(sys.argv[1]):
    rg = np.random.default_rng(5)
    N, H, C, O, k, s, p = case
    x = rg.standard_normal((N, H, H, C)).astype(np.float32)
    w = rg.standard_normal((O, k, k, C)).astype(np.float32)
    Y = (H + 2 * p - k) // s + 1
    ct = rg.standard_normal((N, Y, Y, O)).astype(np.float32)
    X, W, CT = mx.array(x), mx.array(w), mx.array(ct)
    y = mx.conv2d(X, W, stride=s, padding=p)
    dx = mx.vjp(lambda a: mx.conv2d(a, W, stride=s, padding=p), [X], [CT])[1][0]
    dw = mx.vjp(lambda b: mx.conv2d(X, b, stride=s, padding=p), [W], [CT])[1][0]
    out.append([np.array(a).ravel().tolist() for a in (y, dx, dw)])
print(json.dumps(out))
"""
FRESH_CASES = GRAD_CASES + [(1, 7, 67, 80, 3, 1, 2), (1, 10, 32, 24, 3, 1, 1)]


def _fresh(env_extra):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), **env_extra)
    r = subprocess.run([sys.executable, "-c", _FRESH.format(mod=SUBJECT_NAME),
                        json.dumps(FRESH_CASES)], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.skipif(SUBJECT_IS_MLX, reason="cmlx's kernel switches")
def test_avx2_tiles_and_gemm_path_agree():
    """The default kernels, the AVX2 tiles and the GEMM path give the same
    forward and gradients within float rounding (and match NumPy)."""
    runs = {name: _fresh(env) for name, env in [
        ("default", {}), ("avx2", {"CMLX_MATMUL_AVX512": "0"}), ("gemm", {"CMLX_MATMUL_SIMD": "0"})]}
    for i, (N, H, C, O, k, s, p) in enumerate(FRESH_CASES):
        rg = np.random.default_rng(5)
        x = rg.standard_normal((N, H, H, C)).astype(np.float32)
        w = rg.standard_normal((O, k, k, C)).astype(np.float32)
        want = np_conv(x, w, stride=s, lo=p).ravel()
        for name in runs:
            close(runs[name][i][0], want)
            for part in (1, 2):
                ref = np.asarray(runs["gemm"][i][part], np.float64)
                close(runs[name][i][part], ref, rtol=5e-5)


@needs_oracle
@pytest.mark.parametrize("N,H,W,C,O,k,s,p,d", [c for c in CASES if c[0] > 0][:12])
def test_against_mlx(N, H, W, C, O, k, s, p, d):
    x, w = randn(N, H, W, C), randn(O, k, k, C)
    got = mx.conv2d(mx.array(x), mx.array(w), stride=s, padding=p, dilation=d)
    ref = mlx_ref.conv2d(mlx_ref.array(x), mlx_ref.array(w), stride=s, padding=p, dilation=d)
    close(np.array(got), np.array(ref, np.float64), rtol=5e-5)


def test_bad_channels_still_raise():
    with pytest.raises(ValueError):
        mx.conv2d(mx.zeros((1, 5, 5, 16)), mx.zeros((32, 3, 3, 8)))
