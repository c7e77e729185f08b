"""Transform rules MLX's own suite leans on: the scans' derivatives (every
order), prod's complex vjp, derivative errors for indices and masks,
StopGradient cutting the path, MaskedScatter, Pad and searchsorted under
vmap, and the trees grad/vmap hand back.

Values are checked against central finite differences in float64, vmap
against a loop, and against real MLX where it is importable.  Where MLX
0.32 lacks a rule or gets it wrong (jvp of cummax, the gradient of a pad
value, the gradient through a vmapped masked scatter) the check is
cmlx_only.
"""

import itertools
from collections import namedtuple

import numpy as np
import pytest

from conftest import SUBJECT_IS_MLX, cmlx_only, mlx_ref, mx, needs_oracle

F64 = mx.float64


def a64(x):
    return mx.array(np.asarray(x, dtype=np.float64), dtype=F64)


def finite(o):
    """o with its infinities (an exclusive max scan's identity) zeroed, so
    that a loss over it stays finite."""
    return mx.where(mx.isfinite(o), o, 0)


def fd_grad(f, x, h=1e-5):
    g = np.zeros_like(x)
    for j in np.ndindex(*x.shape):
        xp, xm = x.copy(), x.copy()
        xp[j] += h
        xm[j] -= h
        g[j] = (f(xp) - f(xm)) / (2 * h)
    return g


# ------------------------------------------------------------------ scans

SCANS = ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"]
FLAGS = list(itertools.product([False, True], [False, True], [0, 1]))  # reverse, inclusive, axis


def scan_of(name, reverse, inclusive, axis):
    return lambda a: getattr(mx, name)(a, axis=axis, reverse=reverse, inclusive=inclusive)


def scan_data(name, seed, zeros=False):
    r = np.random.default_rng(seed)
    x = r.uniform(-2, 2, size=(4, 5))
    if zeros:
        x[1, 2] = x[2, 3] = x[2, 1] = 0.0  # one zero in some lines, two in another
    return x, r.uniform(-1, 1, size=x.shape), r.uniform(-1, 1, size=x.shape)


@pytest.mark.parametrize("name", SCANS)
@pytest.mark.parametrize("reverse,inclusive,axis", FLAGS)
def test_scan_grad_and_jvp(name, reverse, inclusive, axis):
    op = scan_of(name, reverse, inclusive, axis)
    for zeros in ([False, True] if name == "cumprod" else [False]):
        x, w, v = scan_data(name, 0, zeros)
        wm = a64(w)
        loss = lambda a: (finite(op(a)) * wm).sum()
        g = np.array(mx.grad(loss)(a64(x)))
        fd = fd_grad(lambda a: loss(a64(a)).item(), x)
        # (MLX 0.32 loses float64 precision in a reverse logcumsumexp)
        tol = 2e-3 if SUBJECT_IS_MLX and name == "logcumsumexp" else 1e-6
        np.testing.assert_allclose(g, fd, rtol=tol, atol=tol, err_msg=f"grad zeros={zeros}")
        if name == "cumsum":  # the only scan MLX 0.32 has a jvp for
            check_scan_jvp(op, x, v)


@cmlx_only
@pytest.mark.parametrize("name", SCANS[1:])
@pytest.mark.parametrize("reverse,inclusive,axis", FLAGS)
def test_scan_jvp_mlx_lacks(name, reverse, inclusive, axis):
    op = scan_of(name, reverse, inclusive, axis)
    for zeros in ([False, True] if name == "cumprod" else [False]):
        x, _, v = scan_data(name, 1, zeros)
        check_scan_jvp(op, x, v)


def check_scan_jvp(op, x, v, h=1e-5):
    _, (t,) = mx.jvp(lambda a: finite(op(a)), [a64(x)], [a64(v)])
    fd = (np.array(finite(op(a64(x + h * v)))) - np.array(finite(op(a64(x - h * v))))) / (2 * h)
    np.testing.assert_allclose(np.array(t), fd, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", SCANS)
@pytest.mark.parametrize("reverse,inclusive,axis", FLAGS)
def test_scan_second_order(name, reverse, inclusive, axis):
    """Hessian-vector products (grad of grad, and jvp of grad) against
    differences of the gradient: the rules' graphs differentiate again
    (cumprod: away from zeros, where its rule is piecewise).  MLX 0.32
    computes parts of these float64 rules in float32 and has no jvp for
    the scans their graphs hold, so this is cmlx's; MLX's own suite checks
    the float32 grad of grad of cummax/cummin."""
    if SUBJECT_IS_MLX:
        pytest.skip("MLX 0.32: float64 precision and missing scan jvps")
    op = scan_of(name, reverse, inclusive, axis)
    x, w, v = scan_data(name, 2)
    wm, vm = a64(w), a64(v)
    grad = mx.grad(lambda a: (finite(op(a)) * wm).sum())
    h = 1e-5
    fd = (np.array(grad(a64(x + h * v))) - np.array(grad(a64(x - h * v)))) / (2 * h)
    hvp = mx.grad(lambda a: (grad(a) * vm).sum())(a64(x))
    np.testing.assert_allclose(np.array(hvp), fd, rtol=1e-5, atol=1e-6, err_msg="grad of grad")
    _, (jg,) = mx.jvp(grad, [a64(x)], [vm])
    np.testing.assert_allclose(np.array(jg), fd, rtol=1e-5, atol=1e-6, err_msg="jvp of grad")


def test_cummax_ties():
    # ties: the latest element in scan order holding the extreme gets it
    x = mx.array([1.0, 3.0, 3.0, 2.0, 3.0])
    _, (g,) = mx.vjp(lambda a: mx.cummax(a), [x], [mx.ones(5)])
    assert g.tolist() == [1.0, 1.0, 2.0, 0.0, 1.0]
    _, (g,) = mx.vjp(lambda a: mx.cummax(a, reverse=True), [x], [mx.ones(5)])
    assert g.tolist() == [0.0, 2.0, 1.0, 0.0, 2.0]
    _, (g,) = mx.vjp(lambda a: mx.cummin(a, inclusive=False), [x], [mx.arange(5.0)])
    assert g.tolist() == [10.0, 0.0, 0.0, 0.0, 0.0]


@cmlx_only  # MLX 0.32 scatters to index -1 here (a crash)
def test_cummax_opened_by_nan():
    # no element equals a NaN running max: the NaN that opened it owns it
    y = mx.array([float("nan"), 1.0, 2.0])
    _, (g,) = mx.vjp(lambda a: mx.cummax(a), [y], [mx.ones(3)])
    assert g.tolist() == [3.0, 0.0, 0.0]
    _, (g,) = mx.vjp(lambda a: mx.cummin(a, reverse=True), [y[::-1]], [mx.ones(3)])
    assert g.tolist() == [0.0, 0.0, 3.0]


def test_scan_empty_axis():
    for name in SCANS:
        x = mx.zeros((2, 0))
        _, (g,) = mx.vjp(lambda a: getattr(mx, name)(a, axis=1), [x], [mx.zeros((2, 0))])
        assert g.shape == (2, 0)


@needs_oracle
@pytest.mark.parametrize("name", SCANS)
@pytest.mark.parametrize("reverse,inclusive,axis", FLAGS)
def test_scan_vjp_matches_mlx(name, reverse, inclusive, axis):
    r = np.random.default_rng(3)
    x = r.integers(-3, 4, size=(4, 6)).astype(np.float32)  # ties and zeros
    c = r.uniform(-1, 1, size=x.shape).astype(np.float32)
    out = []
    for m in (mx, mlx_ref):
        f = lambda a: getattr(m, name)(a, axis=axis, reverse=reverse, inclusive=inclusive)
        out.append(np.array(m.vjp(f, [m.array(x)], [m.array(c)])[1][0]))
    np.testing.assert_allclose(out[0], out[1], rtol=1e-5, atol=1e-6)


@needs_oracle
@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "logcumsumexp"])
def test_scan_complex_vjp_matches_mlx(name):
    r = np.random.default_rng(4)
    x = (r.normal(size=(3, 4)) + 1j * r.normal(size=(3, 4))).astype(np.complex64)
    c = (r.normal(size=(3, 4)) + 1j * r.normal(size=(3, 4))).astype(np.complex64)
    out = []
    for m in (mx, mlx_ref):
        f = lambda a: getattr(m, name)(a, axis=1)
        out.append(np.array(m.vjp(f, [m.array(x)], [m.array(c)])[1][0]))
    np.testing.assert_allclose(out[0], out[1], rtol=1e-4, atol=1e-5)


# ------------------------------------------------------------------ prod


def test_complex_prod_vjp_exact():
    r = np.random.default_rng(5)
    p = mx.array((r.normal(size=(2, 7)) + 1j * r.normal(size=(2, 7))).astype(np.complex64))
    c = mx.array((r.normal(size=7) + 1j * r.normal(size=7)).astype(np.complex64))
    _, (g,) = mx.vjp(lambda a: a.prod(axis=0), [p], [c])
    expected = mx.stack([mx.conj(p[1]) * c, mx.conj(p[0]) * c])
    assert mx.array_equal(g, expected).item()
    _, gm = mx.vjp(mx.multiply, [p[0], p[1]], [c])
    assert mx.array_equal(mx.stack(gm), g).item()


@pytest.mark.parametrize("axes", [None, 0, 2, (0, 1), (0, 2), (1, 2)])
def test_prod_with_zeros(axes):
    r = np.random.default_rng(6)
    x = r.uniform(0.5, 1.5, size=(3, 4, 2))
    x[0, 1, 0] = 0.0  # one zero in some groups,
    x[2, 0, 1] = x[2, 3, 1] = 0.0  # two in others
    v = r.uniform(-1, 1, size=x.shape)
    loss = lambda a: (mx.prod(a, axis=axes) ** 2).sum()
    g = np.array(mx.grad(loss)(a64(x)))
    np.testing.assert_allclose(g, fd_grad(lambda a: loss(a64(a)).item(), x), atol=1e-6)
    h = 1e-6
    _, (t,) = mx.jvp(lambda a: mx.prod(a, axis=axes), [a64(x)], [a64(v)])
    at = lambda d: np.array(mx.prod(a64(x + d * v), axis=axes))
    np.testing.assert_allclose(np.array(t), (at(h) - at(-h)) / (2 * h), atol=1e-6)


def test_prod_integers_exact():
    x = mx.array([[2, 0, 3], [4, 5, 6]])
    g = mx.grad(lambda a: mx.prod(a))(x.astype(mx.float32))
    assert g.tolist() == [[0.0, 720.0, 0.0], [0.0, 0.0, 0.0]]  # 2*3*4*5*6 at the zero
    _, (gi,) = mx.vjp(lambda a: mx.prod(a, axis=1), [x], [mx.array([1, 1])])
    assert gi.tolist() == [[0, 6, 0], [30, 24, 20]]


# ------------------------------------------------- indices, masks, StopGradient


def _errs():
    x = mx.array([1.0, 2.0, 3.0, 4.0])
    idx = mx.array([1, 3])
    col = x[:, None]
    return [
        ("gather", lambda a, i: mx.take(a, i), [x, idx]),
        ("gather_axis", lambda a, i: mx.take_along_axis(a, i, axis=0), [col, idx[:, None]]),
        ("scatter", lambda a, i: a.at[i].add(mx.array([5.0, 6.0])), [x, idx]),
        ("scatter_axis", lambda a, i: mx.put_along_axis(a, i, mx.ones((2, 1)), axis=0),
         [col, idx[:, None]]),
    ]


@pytest.mark.parametrize("name,fn,args", _errs(), ids=[e[0] for e in _errs()])
def test_index_derivative_is_an_error(name, fn, args):
    out = fn(*args)
    with pytest.raises(ValueError, match=rf"\[{name}\] Cannot calculate VJP .*stop_gradient"):
        mx.vjp(fn, args, [mx.ones(out.shape)])
    # an index computed from the differentiated input: the same
    idx_of = lambda a: (a[: args[1].shape[0]] * 0).astype(mx.int32)
    with pytest.raises(ValueError, match="stop_gradient"):
        mx.grad(lambda a: fn(a, idx_of(a)).sum())(args[0])
    if name in ("gather", "gather_axis", "scatter_axis"):
        with pytest.raises(ValueError, match=rf"\[{name}\] Cannot calculate JVP"):
            mx.jvp(fn, args, [mx.ones(a.shape, a.dtype) for a in args])


def test_dynamic_slice_start_derivative_is_an_error():
    x, i = mx.arange(6.0), mx.array([1])
    with pytest.raises(ValueError, match=r"\[DynamicSlice::vjp\] Not supported for start"):
        mx.vjp(lambda a, st: mx.slice(a, st, [0], [2]), [x, i], [mx.ones(2)])
    with pytest.raises(ValueError, match=r"\[DynamicSliceUpdate::vjp\] Not supported for start"):
        mx.vjp(lambda a, st: mx.slice_update(a, mx.ones(2), st, [0]), [x, i], [mx.ones(6)])
    g = mx.grad(lambda a: mx.slice(a, mx.stop_gradient(a[:1].astype(mx.int32)), [0], [2]).sum())(x)
    assert g.tolist() == [1.0, 1.0, 0.0, 0.0, 0.0, 0.0]


def test_masked_scatter_mask_derivative_is_an_error():
    def f(a, m):
        a = a + 0
        a[m] = mx.array([7.0, 8.0])
        return a

    x, m = mx.array([1.0, 2.0, 3.0]), mx.array([True, False, True])
    with pytest.raises(ValueError, match=r"\[masked_scatter\] Cannot calculate VJP .*mask"):
        mx.vjp(f, [x, m], [mx.ones(3)])


def test_stop_gradient_cuts_the_path():
    w = mx.array([4.0, 3.0, 2.0, 1.0])
    g = mx.grad(lambda a: mx.take(a, mx.stop_gradient(mx.argsort(a)[:2])).sum())(w)
    assert g.tolist() == [0.0, 0.0, 1.0, 1.0]
    # without it, MLX's error
    with pytest.raises(ValueError, match="stop_gradient"):
        mx.grad(lambda a: mx.take(a, mx.argsort(a)[:2]).sum())(w)
    # a stop_gradient output gets no cotangent and a zero tangent
    _, (t,) = mx.jvp(lambda a: mx.stop_gradient(a * 2), [w], [mx.ones(4)])
    assert t.tolist() == [0.0] * 4
    # vmap still batches through it
    assert mx.vmap(lambda a: mx.stop_gradient(a * 2))(mx.ones((2, 3))).shape == (2, 3)


def test_sort_family_second_order():
    x, v = a64([3.0, 1.0, 2.0, 5.0]), a64([1.0, -2.0, 0.5, 1.5])
    for fn in (lambda a: mx.sort(a), lambda a: mx.partition(a, 2), lambda a: mx.topk(a, 2),
               lambda a: mx.median(a, keepdims=True)):
        f = lambda a: (fn(a) ** 2).sum()
        hvp = mx.grad(lambda a: (mx.grad(f)(a) * v).sum())(x)
        fd = (mx.grad(f)(x + 1e-4 * v) - mx.grad(f)(x - 1e-4 * v)) / 2e-4
        np.testing.assert_allclose(np.array(hvp), np.array(fd), atol=1e-6)


# ------------------------------------------------------------ MaskedScatter


def _scatter(x, m, src):
    x = x + 0
    x[m] = src
    return x


def _loop(fn, args, axes):
    n = next(a.shape[ax] for a, ax in zip(args, axes) if ax is not None)
    pick = lambda a, ax, i: a if ax is None else mx.take(a, i, axis=ax)
    return mx.stack([fn(*[pick(a, ax, i) for a, ax in zip(args, axes)]) for i in range(n)])


@pytest.mark.parametrize("axes", [(0, 0, 0), (0, 0, None), (None, 0, 0), (0, None, 0),
                                  (1, 1, 1), (None, 1, 0)])
def test_vmap_masked_scatter_vs_loop(axes):
    r = np.random.default_rng(7)
    shape = {0: (3, 2, 4), 1: (2, 3, 4), None: (2, 4)}
    a = mx.array(r.integers(0, 9, size=shape[axes[0]]).astype(np.float32))
    m = mx.array(r.uniform(size=shape[axes[1]]) > 0.5)
    ssz = {0: (3, 8), 1: (8, 3), None: (8,)}[axes[2]]
    src = mx.array(r.integers(10, 99, size=ssz).astype(np.float32))
    got = mx.vmap(_scatter, in_axes=axes)(a, m, src)
    assert mx.array_equal(got, _loop(_scatter, [a, m, src], axes)).item()


def test_vmap_masked_scatter_nested_and_windows():
    r = np.random.default_rng(8)
    a = mx.zeros((3, 4, 5))
    m = mx.array(r.uniform(size=(3, 4, 5)) > 0.5)
    src = mx.array(r.normal(size=(3, 5)).astype(np.float32))
    inner = mx.vmap(_scatter, in_axes=(0, 0, None))
    got = mx.vmap(inner, in_axes=(0, 0, 0))(a, m, src)
    want = mx.stack([mx.stack([_scatter(a[i, j], m[i, j], src[i]) for j in range(4)])
                     for i in range(3)])
    assert mx.array_equal(got, want).item()
    # a mask over leading axes selects whole rows of a window source
    a2, m2 = mx.zeros((2, 3, 2)), mx.array([[True, False, True], [False, True, False]])
    s2 = mx.arange(8.0).reshape(2, 2, 2)
    got = mx.vmap(_scatter)(a2, m2, s2)
    assert mx.array_equal(got, _loop(_scatter, [a2, m2, s2], (0, 0, 0))).item()


@cmlx_only  # cmlx's ValueError for this (MLX: RuntimeError), as without vmap
def test_vmap_masked_scatter_short_source_is_an_error():
    a, m = mx.zeros((2, 3)), mx.array([[True, True, True], [True, False, False]])
    src = mx.ones((2, 2))
    with pytest.raises(ValueError, match="Source does not have enough elements"):
        mx.eval(mx.vmap(_scatter)(a, m, src))


@cmlx_only  # MLX 0.32's vjp of a vmapped masked scatter ignores the batch
def test_masked_scatter_grads_through_vmap():
    r = np.random.default_rng(9)
    a = a64(r.normal(size=(3, 4)))
    m = mx.array(np.array([[1, 0, 1, 1], [0, 1, 1, 0], [1, 1, 1, 1]], bool))
    src = a64(r.normal(size=(3, 4)))
    w = a64(r.normal(size=(3, 4)))
    loss = lambda a_, s_: (mx.vmap(_scatter)(a_, m, s_) * w).sum()
    ga, gs = mx.grad(loss, argnums=(0, 1))(a, src)
    loop = lambda a_, s_: (_loop(_scatter, [a_, m, s_], (0, 0, 0)) * w).sum()
    la, ls = mx.grad(loop, argnums=(0, 1))(a, src)
    assert mx.allclose(ga, la).item() and mx.allclose(gs, ls).item()
    # and vmap of the gradient
    per = mx.grad(lambda s_, a_, m_, w_: (_scatter(a_, m_, s_) * w_).sum())
    got = mx.vmap(per)(src, a, m, w)
    assert mx.allclose(got, gs).item()
    _, (t,) = mx.jvp(lambda s_: mx.vmap(_scatter)(a, m, s_), [src], [mx.ones_like(src)])
    assert mx.array_equal(t, mx.vmap(_scatter)(mx.zeros_like(a), m, mx.ones_like(src))).item()


# ------------------------------------------------------------ Pad


def test_vmap_pad_value():
    x = mx.arange(24.0).reshape(2, 3, 4)
    pad = lambda a, v: mx.pad(a, ((1, 1), (0, 2)), constant_values=v)
    got = mx.vmap(pad, in_axes=(0, None))(x, mx.array(5.0))
    assert mx.array_equal(got, mx.stack([pad(xi, mx.array(5.0)) for xi in x])).item()
    got = mx.vmap(pad, in_axes=(2, None), out_axes=1)(x, mx.array(-1))
    want = mx.stack([pad(x[:, :, i], mx.array(-1.0)) for i in range(4)], axis=1)
    assert mx.array_equal(got, want).item()
    with pytest.raises(ValueError, match=r"\[Pad::vmap\] Vmap over padding value"):
        mx.vmap(pad)(x, mx.array([3.0, 4.0]))
    # the value is cast to the array's dtype, as MLX
    y = mx.pad(mx.array([1, 2], mx.int32), 1, constant_values=mx.array(2.7))
    assert y.dtype == mx.int32 and y.tolist() == [2, 1, 2, 2]


def test_pad_derivatives():
    r = np.random.default_rng(10)
    x, w = r.normal(size=(2, 3)), r.normal(size=(4, 6))
    pad = lambda a, v: mx.pad(a, ((1, 1), (2, 1)), constant_values=v)
    loss = lambda a, v: (pad(a, v) * a64(w)).sum()
    ga = mx.grad(loss)(a64(x), a64(0.5))
    assert np.allclose(np.array(ga), w[1:3, 2:5])
    _, (t,) = mx.jvp(lambda a: pad(a, a64(0.0)), [a64(x)], [a64(np.ones((2, 3)))])
    assert np.array_equal(np.array(t), np.pad(np.ones((2, 3)), ((1, 1), (2, 1))))


@cmlx_only  # MLX 0.32 does not differentiate the pad value
def test_pad_value_gradient():
    w = np.arange(24.0).reshape(4, 6)
    g = mx.grad(lambda v: (mx.pad(a64(np.ones((2, 3))), ((1, 1), (2, 1)), constant_values=v)
                           * a64(w)).sum())(a64(0.5))
    assert g.item() == w.sum() - w[1:3, 2:5].sum()


# ------------------------------------------------------------ searchsorted


def test_vmap_searchsorted():
    a = mx.array([1.0, 2.0, 3.0, 5.0])
    v = mx.array([[0.0, 2.5, 6.0], [3.0, 1.0, 2.0]])
    for side in ("left", "right"):
        f = lambda q: mx.searchsorted(a, q, side=side)
        assert mx.array_equal(mx.vmap(f)(v), f(v)).item()
        assert mx.array_equal(mx.vmap(f, in_axes=1, out_axes=1)(v), f(v)).item()
        assert mx.array_equal(mx.vmap(mx.vmap(f))(v), f(v)).item()
    with pytest.raises(ValueError, match="Cannot vmap over the sorted sequence"):
        mx.vmap(lambda s: mx.searchsorted(s, mx.array(2.0)))(mx.stack([a, a]))


# ------------------------------------------------------------ trees and outputs

Vector = type("Vector", (tuple,), {})
State = namedtuple("State", ["a", "b"])


def test_tuple_subclasses_keep_their_type():
    for kind in (tuple, Vector):
        g = mx.grad(lambda t: t[0].sum() + (t[1] * 10).sum())(kind([mx.ones(3), mx.ones(3)]))
        assert type(g) is kind and g[1].tolist() == [10.0] * 3
        out = mx.vmap(lambda t: kind([t[0] + 1, t[1] * 2]))(kind([mx.ones(3), mx.ones(3)]))
        assert type(out) is kind and out[0].tolist() == [2.0] * 3
    g = mx.grad(lambda s: s.a.sum() + s.b.sum())(State(mx.ones(2), mx.ones(2)))
    assert type(g) is State
    out = mx.vmap(lambda s: State(s.b, s.a))(State(mx.ones(2), mx.zeros(2)))
    assert type(out) is State and out.a.tolist() == [0.0, 0.0]


def test_grad_keeps_the_callers_arrays():
    def fun(arrs):
        arrs[1] = sum(arrs)
        return arrs[1]

    arrs = [mx.array(1.0), mx.array(1.0), mx.array(1.0)]
    before = list(arrs)
    mx.grad(fun)(arrs)
    assert arrs[0] is before[0] and arrs[2] is before[2] and arrs[1] is not before[1]


def test_vmap_unbatched_and_0d_outputs():
    a, b = mx.ones((2, 3, 4)), mx.ones((4, 3))
    const = lambda x, y: mx.array(2)
    assert mx.vmap(const, in_axes=(0, None))(a, b).tolist() == [2, 2]
    assert mx.vmap(const, in_axes=(None, 0))(a, b).tolist() == [2] * 4
    assert mx.vmap(const, in_axes=(1, 1))(a, b).tolist() == [2] * 3
    with pytest.raises(ValueError):
        mx.vmap(const, in_axes=(None, None))(a, b)
    with pytest.raises(ValueError):
        mx.vmap(const, in_axes=(0, 0))(a, b)
    x, y = mx.arange(6.0).reshape(2, 3), mx.array(3.0)
    assert mx.vmap(lambda p, q: q, in_axes=(0, None))(x, y).tolist() == [3.0, 3.0]
    got = mx.vmap(lambda p, q: q * 2, in_axes=(1, None), out_axes=2)(x, x)
    assert got.shape == (2, 3, 3) and got[:, :, 1].tolist() == (x * 2).tolist()
    assert mx.vmap(mx.vmap(lambda p: mx.array(1.0)))(x).shape == (2, 3)
