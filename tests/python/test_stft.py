"""mx.fft.stft / mx.fft.istft (MLX 0.32.4): framing, windows, centring pad
modes, norms, one- and two-sided spectra, the overlap-add inverse; NumPy
is the value reference, real MLX the oracle for the rest."""
import numpy as np
import pytest

from conftest import mlx_ref, mx, needs_oracle


def signal(n=40, seed=0):
    r = np.random.default_rng(seed)
    return (np.sin(np.arange(n) * 0.3) + 0.5 + 0.1 * r.standard_normal(n)).astype(np.float32)


def np_stft(x, n_fft, hop=None, window=None, center=True, pad_mode="reflect", norm="backward",
            onesided=True):
    hop = hop or n_fft // 4
    w = np.ones(n_fft) if window is None else window
    lo = (n_fft - len(w)) // 2
    w = np.pad(w, (lo, n_fft - len(w) - lo))
    if center:
        x = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(n_fft // 2, n_fft // 2)],
                   mode={"edge": "edge", "constant": "constant"}.get(pad_mode, "reflect"))
    n_frames = 1 + (x.shape[-1] - n_fft) // hop
    frames = np.stack([x[..., i * hop:i * hop + n_fft] * w for i in range(n_frames)], -2)
    spec = (np.fft.rfft if onesided else np.fft.fft)(frames, n=n_fft, axis=-1, norm=norm)
    return np.swapaxes(spec, -1, -2)


@pytest.mark.parametrize("kw", [
    {}, {"hop_length": 3}, {"center": False}, {"pad_mode": "constant"}, {"pad_mode": "edge"},
    {"norm": "ortho"}, {"norm": "forward"}, {"onesided": False}, {"win_length": 5},
    {"window": np.hanning(8)}, {"window": np.hanning(6), "hop_length": 1},
])
def test_stft_against_numpy(kw):
    x = signal()
    args = dict(kw)
    if "window" in args:
        args["window"] = mx.array(args["window"].astype(np.float32))
    got = mx.fft.stft(mx.array(x), n_fft=8, **args)
    ref_kw = {k: v for k, v in kw.items() if k != "win_length"}
    if "win_length" in kw:
        ref_kw["window"] = np.ones(kw["win_length"])
    if "hop_length" in ref_kw:
        ref_kw["hop"] = ref_kw.pop("hop_length")
    want = np_stft(x, 8, **ref_kw)
    assert got.dtype == mx.complex64 and got.shape == want.shape
    np.testing.assert_allclose(np.array(got), want, rtol=1e-4, atol=1e-4)


def test_stft_shapes_and_dtypes():
    x = signal(32)
    assert mx.fft.stft(mx.array(x), n_fft=7).shape == (4, 32)  # odd n_fft, hop 1
    batch = mx.fft.stft(mx.array(np.stack([x, 2 * x])), n_fft=8)
    assert batch.shape == (2, 5, 17)
    np.testing.assert_allclose(np.array(batch[1]), 2 * np.array(batch[0]), rtol=1e-5, atol=1e-5)
    for d in (mx.float16, mx.int32, mx.float64):
        assert mx.fft.stft(mx.array(x).astype(d), n_fft=8, stream=mx.cpu).dtype == mx.complex64
    # complex input: two-sided unless told otherwise
    z = mx.array(x).astype(mx.complex64)
    assert mx.fft.stft(z, n_fft=8).shape == (8, 17)
    assert mx.fft.stft(z, n_fft=8, onesided=True).shape == (5, 17)


@pytest.mark.parametrize("kw", [
    {"n_fft": 8}, {"n_fft": 8, "hop_length": 2, "window": "hann"}, {"n_fft": 8, "center": False},
    {"n_fft": 8, "norm": "ortho"}, {"n_fft": 8, "onesided": False}, {"n_fft": 7},
    {"n_fft": 8, "win_length": 6},
])
def test_istft_inverts_stft(kw):
    x = signal(32)
    kw = dict(kw)
    if kw.get("window") == "hann":
        kw["window"] = mx.array(np.hanning(8).astype(np.float32))
    spec = mx.fft.stft(mx.array(x), **kw)
    y = mx.fft.istft(spec, **kw, length=32)
    assert y.dtype == mx.float32 and y.shape == (32,)
    np.testing.assert_allclose(np.array(y), x, rtol=1e-4, atol=1e-4)


def test_istft_lengths_and_envelope():
    x = signal(32)
    spec = mx.fft.stft(mx.array(x), n_fft=8)
    assert mx.fft.istft(spec).shape == (32,)  # n_fft inferred from 5 bins
    y = mx.fft.istft(spec, length=40)  # the frames reach 36 samples, then zeros
    assert y.shape == (40,) and not np.array(y)[36:].any() and np.array(y)[32:36].all()
    assert mx.fft.istft(spec, length=10).shape == (10,)
    # where the window covers nothing the result is 0, not NaN
    w = mx.array(np.hanning(8).astype(np.float32))
    y = np.array(mx.fft.istft(mx.fft.stft(mx.array(x), n_fft=8, window=w, hop_length=8),
                              n_fft=8, window=w, hop_length=8))
    assert np.isfinite(y).all() and y[3] == 0 and y[4] == 0
    b = mx.fft.istft(mx.fft.stft(mx.array(np.stack([x, x])), n_fft=8))
    assert b.shape == (2, 32)


def test_gradients():
    x = mx.array(signal(16))
    g = mx.grad(lambda x: mx.abs(mx.fft.stft(x, n_fft=4, hop_length=2)).sum())(x)
    assert g.shape == (16,) and np.isfinite(np.array(g)).all()
    # istft(stft(x)) is x: its gradient is one
    f = lambda x: mx.fft.istft(mx.fft.stft(x, n_fft=4, hop_length=1), n_fft=4, hop_length=1,
                               length=16).sum()
    np.testing.assert_allclose(np.array(mx.grad(f)(x)), np.ones(16), rtol=1e-4, atol=1e-4)


def test_errors():
    x = mx.array(signal(32))
    cases = [
        (lambda: mx.fft.stft(x, n_fft=0), r"\[stft\] n_fft must be positive\."),
        (lambda: mx.fft.stft(x, n_fft=8, hop_length=0), r"\[stft\] hop_length must be positive"),
        (lambda: mx.fft.stft(x, n_fft=2), r"\[stft\] hop_length must be positive"),
        (lambda: mx.fft.stft(x, n_fft=8, win_length=9),
         r"\[stft\] window length must not exceed n_fft\."),
        (lambda: mx.fft.stft(x, n_fft=8, window=mx.ones((8, 1))),
         r"\[stft\] window must be a one-dimensional array\."),
        (lambda: mx.fft.stft(mx.array(1.0), n_fft=8),
         r"\[stft\] Input must have at least one dimension\."),
        (lambda: mx.fft.stft(x[:4], n_fft=8, center=False),
         r"\[stft\] Input is too short for the given n_fft\."),
        (lambda: mx.fft.stft(x, n_fft=8, norm="x"), r"\[stft\] Invalid norm\. Expected one of"),
        (lambda: mx.fft.stft(x, n_fft=8, pad_mode="wrap"),
         r"Invalid padding mode \(wrap\) passed to pad"),
        (lambda: mx.fft.istft(x[None][:, 0]), r"\[istft\] Input must have at least two dim"),
        (lambda: mx.fft.istft(mx.ones((1, 3))), r"\[istft\] n_fft must be positive\."),
        (lambda: mx.fft.istft(mx.ones((5, 3)), hop_length=0),
         r"\[istft\] hop_length must be positive\."),
        (lambda: mx.fft.istft(mx.ones((5, 3)), norm="no"), r"\[istft\] Invalid norm\."),
    ]
    for f, msg in cases:
        with pytest.raises(ValueError, match=msg):
            f()
    with pytest.raises(TypeError, match="incompatible function arguments"):
        mx.fft.stft(np.ones(8), n_fft=4)


@needs_oracle
def test_against_mlx():
    x = signal(24)
    w = np.hanning(6).astype(np.float32)
    for kw in ({}, {"pad_mode": "edge"}, {"pad_mode": "constant", "hop_length": 3},
               {"window": w}, {"onesided": False, "norm": "ortho"}):
        def call(m):
            k = dict(kw)
            if "window" in k:
                k["window"] = m.array(k["window"])
            spec = m.fft.stft(m.array(x), n_fft=8, **k)
            return spec, m.fft.istft(spec, n_fft=8, **{a: b for a, b in k.items()
                                                        if a != "pad_mode"})
        (s1, y1), (s2, y2) = call(mx), call(mlx_ref)
        np.testing.assert_allclose(np.array(s1), np.array(s2), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np.array(y1), np.array(y2), rtol=1e-5, atol=1e-5)
    for name in ("stft", "istft"):
        ours, theirs = getattr(mx.fft, name), getattr(mlx_ref.fft, name)
        assert ours.__doc__.splitlines()[0] == theirs.__doc__.splitlines()[0]
