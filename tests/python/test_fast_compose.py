"""mx.fast.cross_entropy and mx.fast.gated_delta_update (MLX 0.32.4), which
cmlx computes as MLX's CPU does (a composition of ops).  NumPy loops are
the value reference; real MLX checks dtypes, messages and bits."""
import numpy as np
import pytest

from conftest import mlx_ref, mx, needs_oracle


def rand(shape, seed=0, lo=None):
    r = np.random.default_rng(seed)
    if lo is not None:
        return r.uniform(lo, 1.0, size=shape).astype(np.float32)
    return r.standard_normal(shape).astype(np.float32)


# ---------------------------------------------------------------- cross_entropy

def np_cross_entropy(logits, targets):
    x = logits.astype(np.float64)
    m = x.max(-1, keepdims=True)
    lse = np.log(np.exp(x - m).sum(-1)) + m[..., 0]
    picked = np.take_along_axis(x, targets[..., None].astype(np.int64), -1)[..., 0]
    return lse - picked


@pytest.mark.parametrize("shape", [(5,), (3, 7), (2, 3, 4)])
def test_cross_entropy_values(shape):
    logits = rand(shape, seed=len(shape)) * 3
    targets = np.random.default_rng(1).integers(0, shape[-1], size=shape[:-1])
    for tdt in (mx.int32, mx.uint8, mx.int64):
        got = mx.fast.cross_entropy(mx.array(logits), mx.array(targets, dtype=tdt))
        assert got.dtype == mx.float32 and got.shape == shape[:-1]
        np.testing.assert_allclose(np.array(got), np_cross_entropy(logits, targets), rtol=1e-5,
                                   atol=1e-5)


def test_cross_entropy_half_inputs_give_float32():
    logits = rand((4, 6)) * 2
    targets = np.array([0, 5, 2, 3])
    for d, tol in ((mx.float16, 2e-3), (mx.bfloat16, 2e-2), (mx.float64, 1e-6)):
        got = mx.fast.cross_entropy(mx.array(logits).astype(d), mx.array(targets), stream=mx.cpu)
        assert got.dtype == mx.float32
        np.testing.assert_allclose(np.array(got), np_cross_entropy(logits, targets), rtol=tol,
                                   atol=tol)
    # -inf logits: the loss of an impossible class is inf
    got = mx.fast.cross_entropy(mx.array([[-np.inf, 0.0]]), mx.array([0]))
    assert np.isinf(np.array(got)[0])


def test_cross_entropy_gradient():
    logits = rand((3, 5))
    targets = np.array([1, 4, 0])
    g = mx.grad(lambda x: mx.fast.cross_entropy(x, mx.array(targets)).sum())(mx.array(logits))
    p = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    p[np.arange(3), targets] -= 1
    np.testing.assert_allclose(np.array(g), p, rtol=1e-5, atol=1e-6)
    f16 = mx.grad(lambda x: mx.fast.cross_entropy(x, mx.array(targets)).sum())(
        mx.array(logits).astype(mx.float16))
    assert f16.dtype == mx.float16
    # vmap over a leading axis
    v = mx.vmap(mx.fast.cross_entropy)(mx.array(rand((2, 3, 4))), mx.zeros((2, 3), mx.int32))
    assert v.shape == (2, 3)


def test_cross_entropy_errors():
    l2 = mx.array([[1.0, 2.0]])
    cases = [
        ((mx.array(1.0), mx.array(0)),
         r"logits must have at least 1 dimension but got input with 0 dimensions\."),
        ((l2, mx.array([0, 1])),
         r"targets shape \(2\) does not match logits shape \(1,2\) with the last axis removed\."),
        ((mx.array([[1, 2]]), mx.array([0.5])), r"Received unsupported logits type int32\."),
        ((mx.array([[1 + 1j, 2]]), mx.array([0])), r"Received unsupported logits type complex64\."),
        ((l2, mx.array([True])), r"targets must be integer class indices but got bool\."),
        ((l2, mx.array([0.5])), r"targets must be integer class indices but got float32\."),
    ]
    for args, msg in cases:
        with pytest.raises(ValueError, match=r"\[cross_entropy\] " + msg):
            mx.fast.cross_entropy(*args)
    with pytest.raises(ValueError, match=r"\[logsumexp\] Received empty array\."):
        mx.fast.cross_entropy(mx.zeros((0, 3)), mx.zeros((0,), mx.int32))
    with pytest.raises(TypeError, match="incompatible function arguments"):
        mx.fast.cross_entropy([[1.0, 2.0]], mx.array([0]))


@needs_oracle
def test_cross_entropy_against_mlx():
    logits = rand((3, 6)) * 4
    targets = np.array([5, 0, 2], np.int32)
    for name in ("float32", "float16", "bfloat16"):
        ours = mx.fast.cross_entropy(mx.array(logits).astype(getattr(mx, name)),
                                     mx.array(targets))
        theirs = mlx_ref.fast.cross_entropy(
            mlx_ref.array(logits).astype(getattr(mlx_ref, name)), mlx_ref.array(targets))
        np.testing.assert_array_equal(np.array(ours), np.array(theirs))
    sig = mlx_ref.fast.cross_entropy.__doc__.splitlines()[0]
    assert mx.fast.cross_entropy.__doc__.splitlines()[0] == sig


# ---------------------------------------------------------------- gated_delta_update

def np_gated_delta(q, k, v, g, beta, state=None, mask=None):
    """The gated delta rule, one time step after another, in float64."""
    B, T, Hk, Dk = q.shape
    Hv, Dv = v.shape[2:]
    r = Hv // Hk
    q, k = np.repeat(q, r, axis=2).astype(np.float64), np.repeat(k, r, axis=2).astype(np.float64)
    S = np.zeros((B, Hv, Dv, Dk)) if state is None else state.astype(np.float64)
    ys = np.zeros((B, T, Hv, Dv))
    for t in range(T):
        decay = g[:, t][..., None, None] if g.ndim == 3 else g[:, t][..., None, :]
        new = S * decay
        kv = (new * k[:, t][:, :, None, :]).sum(-1)
        delta = (v[:, t] - kv) * beta[:, t][..., None]
        new = new + k[:, t][:, :, None, :] * delta[..., None]
        y = (new * q[:, t][:, :, None, :]).sum(-1)
        if mask is not None:
            keep = mask[:, t].astype(bool)
            new = np.where(keep[:, None, None, None], new, S)
            y = np.where(keep[:, None, None], y, 0.0)
        S = new
        ys[:, t] = y
    return ys, S


def gd_inputs(B=2, T=3, Hk=2, Dk=4, Hv=4, Dv=5, vector_gate=False):
    q, k = rand((B, T, Hk, Dk), 1), rand((B, T, Hk, Dk), 2)
    v = rand((B, T, Hv, Dv), 3)
    g = rand((B, T, Hv, Dk) if vector_gate else (B, T, Hv), 4, lo=0.5)
    beta = rand((B, T, Hv), 5, lo=0.0)
    s0 = rand((B, Hv, Dv, Dk), 6)
    return q, k, v, g, beta, s0


@pytest.mark.parametrize("vector_gate", [False, True])
@pytest.mark.parametrize("with_state", [False, True])
def test_gated_delta_values(vector_gate, with_state):
    q, k, v, g, beta, s0 = gd_inputs(vector_gate=vector_gate)
    args = [q, k, v, g, beta] + ([s0] if with_state else [])
    out = mx.fast.gated_delta_update(*[mx.array(a) for a in args])
    assert isinstance(out, list) and len(out) == 2
    y, s = out
    wy, ws = np_gated_delta(*args)
    assert y.shape == (2, 3, 4, 5) and s.shape == (2, 4, 5, 4)
    assert y.dtype == s.dtype == mx.float32
    np.testing.assert_allclose(np.array(y), wy, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.array(s), ws, rtol=1e-4, atol=1e-5)


def test_gated_delta_mask_keeps_state_and_zeroes_output():
    q, k, v, g, beta, s0 = gd_inputs()
    mask = np.array([[True, False, True], [True, True, False]])
    y, s = mx.fast.gated_delta_update(*[mx.array(a) for a in (q, k, v, g, beta, s0)],
                                      mask=mx.array(mask))
    wy, ws = np_gated_delta(q, k, v, g, beta, s0, mask)
    np.testing.assert_allclose(np.array(y), wy, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.array(s), ws, rtol=1e-4, atol=1e-5)
    assert not np.array(y)[0, 1].any()


def test_gated_delta_dtypes():
    q, k, v, g, beta, s0 = (mx.array(a) for a in gd_inputs(B=1, T=2, Hk=1, Hv=2, Dv=3))
    bf, f16, f32 = mx.bfloat16, mx.float16, mx.float32
    cases = [  # (q, k, v, g, beta, state) -> (y, state)
        ((bf, bf, bf, f32, f32, None), (bf, f32)), ((bf, bf, bf, bf, bf, bf), (bf, f32)),
        ((f16,) * 6, (f16, f32)), ((bf, f32, f32, f32, f32, None), (f32, f32)),
        ((mx.int32,) * 5 + (None,), (f32, f32)), ((f32,) * 5 + (mx.float64,), (f32, f32)),
    ]
    for dts, want in cases:
        args = [x.astype(d) for x, d in zip((q, k, v, g, beta), dts)]
        state = None if dts[5] is None else s0.astype(dts[5])
        y, s = mx.fast.gated_delta_update(*args, state, stream=mx.cpu)
        assert (y.dtype, s.dtype) == want, dts
    y, s = mx.fast.gated_delta_update(*[x.astype(mx.float64) for x in (q, k, v, g, beta)],
                                      stream=mx.cpu)
    assert (y.dtype, s.dtype) == (mx.float64, mx.float64)


def test_gated_delta_gradient():
    q, k, v, g, beta, s0 = gd_inputs(B=1, T=2, Hk=1, Dk=3, Hv=1, Dv=2)
    rest = [mx.array(a) for a in (k, v, g, beta, s0)]

    def loss(x):
        y, s = mx.fast.gated_delta_update(x, *rest)
        return y.sum() + s.sum()

    grad = np.array(mx.grad(loss)(mx.array(q)))
    eps, num = 1e-3, np.zeros_like(q, dtype=np.float64)
    for idx in np.ndindex(*q.shape):  # central differences in float64
        d = np.zeros_like(q, dtype=np.float64)
        d[idx] = eps
        f = [sum(x.sum() for x in np_gated_delta(q + sgn * d, k, v, g, beta, s0)) for sgn in (1, -1)]
        num[idx] = (f[0] - f[1]) / (2 * eps)
    np.testing.assert_allclose(grad, num, rtol=1e-3, atol=1e-3)


def test_gated_delta_errors():
    q, k, v, g, beta, s0 = (mx.array(a) for a in gd_inputs())
    with pytest.raises(IndexError):
        mx.fast.gated_delta_update(q[0], k, v, g, beta, s0)
    with pytest.raises(ValueError, match=r"\[broadcast_shapes\] Shapes .* cannot be broadcast"):
        mx.fast.gated_delta_update(q, k[:, :, :1], v, g, beta, s0)
    with pytest.raises(ValueError, match=r"\[stack\] No arrays provided for stacking"):
        mx.fast.gated_delta_update(q[:, :0], k[:, :0], v[:, :0], g[:, :0], beta[:, :0], s0)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        mx.fast.gated_delta_update(q, k, v, g)


@needs_oracle
def test_gated_delta_against_mlx():
    q, k, v, g, beta, s0 = gd_inputs()
    mask = np.array([[True, False, True], [False, True, True]])
    for args in ([q, k, v, g, beta], [q, k, v, g, beta, s0, mask]):
        y1, s1 = mx.fast.gated_delta_update(*[mx.array(a) for a in args])
        y2, s2 = mlx_ref.fast.gated_delta_update(*[mlx_ref.array(a) for a in args])
        np.testing.assert_allclose(np.array(y1), np.array(y2), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(np.array(s1), np.array(s2), rtol=1e-6, atol=1e-6)
    sig = mlx_ref.fast.gated_delta_update.__doc__.splitlines()[0]
    assert mx.fast.gated_delta_update.__doc__.splitlines()[0] == sig
