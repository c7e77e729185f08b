"""Per-primitive transformation rules, checked numerically.

Every case in CASES is a small float64 function of one or more arrays.  For
each we check:

- grad: the vjp of <f(x), w> (w fixed) against central finite differences;
- jvp: the directional derivative along random tangents, the same way;
- vmap: vmap(f) over a batch of three inputs against a loop;

and, where real MLX is importable, the gradient against MLX's.  A case
whose rule is missing in cmlx fails (with the NotImplementedError naming
the primitive, "[vjp] Not implemented for Exp."); one MLX gets wrong or
lacks is marked mlx_deviates.  Adding an op is adding a line to CASES.
"""

import numpy as np
import pytest

from conftest import SUBJECT_IS_MLX, mlx_ref, mx

class Case:
    """fn(m, *arrays) over inputs with the given shapes, drawn from
    [lo, hi] (a (lo, hi) per input, or one pair for all)."""

    def __init__(self, id, fn, shapes, lo=-2.0, hi=2.0, zero_derivative=False, mlx_deviates=()):
        self.id, self.fn, self.shapes = id, fn, shapes
        self.lo, self.hi = lo, hi
        # derivatives defined as zero (stop_gradient), not the numerical ones
        self.zero = zero_derivative
        # checks real MLX 0.32 fails (no rule, or a wrong result): skipped
        # when the tests run against MLX, kept for cmlx
        self.mlx_deviates = mlx_deviates

    def skip_if_mlx_deviates(self, check):
        if SUBJECT_IS_MLX and check in self.mlx_deviates:
            pytest.skip(f"MLX 0.32's {check} of {self.id} is missing or wrong; cmlx must get it right")

    def data(self, seed=0):
        r = np.random.default_rng(seed)
        return [r.uniform(self.lo, self.hi, size=s) for s in self.shapes]

    def __repr__(self):
        return self.id


def un(name, lo=-2.0, hi=2.0, shape=(2, 3), zero=False):
    return Case(name, lambda m, x: getattr(m, name)(x), [shape], lo, hi, zero)


def bi(name, lo=-2.0, hi=2.0, shapes=((2, 3), (2, 3))):
    return Case(name, lambda m, x, y: getattr(m, name)(x, y), list(shapes), lo, hi)


def _idx(m):
    return m.array([2, 0, 1, 2])


CASES = [
    # unary
    un("abs", 0.2, 2), un("negative"), un("exp"), un("expm1"), un("square"),
    un("log", 0.3, 3), un("log1p", 0.3, 3), un("log2", 0.3, 3), un("log10", 0.3, 3),
    un("sqrt", 0.3, 3), un("rsqrt", 0.3, 3), un("reciprocal", 0.3, 3),
    un("sin"), un("cos"), un("tan", -1, 1), un("arcsin", -0.8, 0.8), un("arccos", -0.8, 0.8),
    un("arctan"), un("sinh"), un("cosh"), un("tanh"), un("arcsinh"), un("arccosh", 1.2, 3),
    un("arctanh", -0.8, 0.8), un("sigmoid"), un("erf"), un("erfinv", -0.8, 0.8),
    un("degrees"), un("radians"), un("sign", 0.2, 2), un("floor", 0.1, 0.9), un("ceil", 0.1, 0.9),
    un("round", 0.1, 0.4), un("stop_gradient", zero=True),
    # binary
    bi("add"), bi("subtract"), bi("multiply"), bi("divide", 0.5, 2), bi("power", 0.5, 2),
    bi("maximum"), bi("minimum"), bi("arctan2", 0.3, 2), bi("logaddexp"),
    Case("add_broadcast", lambda m, x, y: m.add(x, y), [(2, 3), (3,)]),
    Case("multiply_broadcast", lambda m, x, y: m.multiply(x, y), [(2, 1), (1, 3)]),
    Case("matmul", lambda m, x, y: m.matmul(x, y), [(2, 3), (3, 4)]),
    Case("matmul_batched", lambda m, x, y: m.matmul(x, y), [(2, 2, 3), (3, 2)]),
    Case("matmul_vec", lambda m, x, y: m.matmul(x, y), [(3,), (3, 2)]),
    Case("addmm", lambda m, x, c, y: m.addmm(c, x, y, alpha=0.5, beta=2.0), [(2, 3), (2, 4), (3, 4)],
         mlx_deviates=("jvp",)),
    Case("inner", lambda m, x, y: m.inner(x, y), [(2, 3), (4, 3)]),
    Case("outer", lambda m, x, y: m.outer(x, y), [(3,), (2,)]),
    # ternary
    Case("where", lambda m, x, y: m.where(m.array(np.array([[True, False, True], [False, True, False]])), x, y),
         [(2, 3), (2, 3)]),
    Case("clip", lambda m, x: m.clip(x, -0.5, 0.5), [(2, 3)]),
    # reductions and scans
    Case("sum", lambda m, x: m.sum(x), [(2, 3)]),
    Case("sum_axis", lambda m, x: m.sum(x, axis=1, keepdims=True), [(2, 3)]),
    Case("mean", lambda m, x: m.mean(x, axis=0), [(2, 3)]),
    Case("prod", lambda m, x: m.prod(x, axis=1), [(2, 3)], 0.5, 2),
    Case("max", lambda m, x: m.max(x, axis=1), [(2, 3)]),
    Case("min", lambda m, x: m.min(x), [(2, 3)]),
    Case("var", lambda m, x: m.var(x, axis=1), [(2, 3)]),
    Case("std", lambda m, x: m.std(x), [(2, 3)]),
    Case("logsumexp", lambda m, x: m.logsumexp(x, axis=1), [(2, 3)]),
    Case("median", lambda m, x: m.median(x, axis=1), [(2, 5)]),
    Case("median_even", lambda m, x: m.median(x, axis=(0, 1)), [(2, 3)]),
    Case("softmax", lambda m, x: m.softmax(x, axis=-1), [(2, 3)]),
    Case("cumsum", lambda m, x: m.cumsum(x, axis=1), [(2, 3)]),
    Case("cumsum_reverse", lambda m, x: m.cumsum(x, axis=0, reverse=True, inclusive=False), [(3, 2)]),
    Case("cumprod", lambda m, x: m.cumprod(x, axis=1), [(2, 3)], 0.5, 2, mlx_deviates=("jvp",)),
    Case("cummax", lambda m, x: m.cummax(x, axis=1), [(2, 3)], mlx_deviates=("jvp",)),
    Case("logcumsumexp", lambda m, x: m.logcumsumexp(x, axis=1), [(2, 3)]),
    Case("logcumsumexp_reverse", lambda m, x: m.logcumsumexp(x, axis=0, reverse=True), [(3, 2)],
         mlx_deviates=("jvp",)),
    Case("cummin_reverse", lambda m, x: m.cummin(x, axis=0, reverse=True), [(3, 2)],
         mlx_deviates=("jvp",)),
    Case("cumprod_exclusive", lambda m, x: m.cumprod(x, axis=1, inclusive=False), [(2, 3)], 0.5, 2,
         mlx_deviates=("jvp",)),
    # shapes and layouts
    Case("reshape", lambda m, x: m.reshape(x, (3, 2)), [(2, 3)]),
    Case("transpose", lambda m, x: m.transpose(x, (1, 2, 0)), [(2, 3, 2)]),
    Case("swapaxes", lambda m, x: m.swapaxes(x, 0, 1), [(2, 3)]),
    Case("moveaxis", lambda m, x: m.moveaxis(x, 0, -1), [(2, 3, 2)]),
    Case("expand_squeeze", lambda m, x: m.squeeze(m.expand_dims(x, 1), 1), [(2, 3)]),
    Case("flatten", lambda m, x: m.flatten(x), [(2, 3)]),
    Case("broadcast_to", lambda m, x: m.broadcast_to(x, (2, 2, 3)), [(2, 1, 3)]),
    Case("concatenate", lambda m, x, y: m.concatenate([x, y], axis=1), [(2, 3), (2, 2)]),
    Case("stack", lambda m, x, y: m.stack([x, y], axis=1), [(2, 3), (2, 3)]),
    Case("split", lambda m, x: m.split(x, [1], axis=1)[1], [(2, 3)]),
    Case("slice", lambda m, x: x[1:, ::2], [(3, 4)]),
    Case("slice_negative", lambda m, x: x[::-1, 1:], [(3, 4)]),
    Case("pad", lambda m, x: m.pad(x, [(1, 0), (0, 2)]), [(2, 3)]),
    Case("tile", lambda m, x: m.tile(x, (2, 1)), [(2, 3)]),
    Case("repeat", lambda m, x: m.repeat(x, 2, axis=1), [(2, 3)]),
    Case("roll", lambda m, x: m.roll(x, 1, axis=1), [(2, 3)]),
    Case("diagonal", lambda m, x: m.diagonal(x), [(3, 3)]),
    Case("diag", lambda m, x: m.diag(x), [(3,)], mlx_deviates=("jvp",)),
    Case("tril", lambda m, x: m.tril(x), [(3, 3)]),
    Case("sort", lambda m, x: m.sort(x, axis=1), [(2, 4)]),
    Case("astype", lambda m, x: x.astype(m.float32).astype(m.float64), [(2, 3)]),
    # indexing
    Case("take", lambda m, x: m.take(x, _idx(m), axis=1), [(2, 3)]),
    Case("take_along_axis",
         lambda m, x: m.take_along_axis(x, m.array([[0, 2], [1, 1]]), axis=1), [(2, 3)]),
    Case("getitem_array", lambda m, x: x[_idx(m)], [(3, 2)]),
    Case("at_add", lambda m, x, y: x.at[_idx(m)[:2]].add(y), [(3, 2), (2, 2)], mlx_deviates=("jvp",)),
    Case("setitem_slice", lambda m, x, y: _setitem(x, y), [(3, 2), (2,)], mlx_deviates=("vmap",)),
    Case("setitem_mask", lambda m, x, y: _setitem_mask(m, x, y), [(2, 3), (4,)]),
]


def _setitem_mask(m, x, y):
    x = x + 0
    x[m.array(np.array([[True, False, True], [False, True, False]]))] = y
    return x


def _setitem(x, y):
    x = x + 0  # a fresh array: setitem must not touch the input
    x[1] = y
    return x


IDS = [c.id for c in CASES]


def _f64(m, arrays):
    return [m.array(a, dtype=m.float64) for a in arrays]


def _np(a):
    return np.array(a.astype(mx.float64) if a.dtype != mx.float64 else a)


def _forward(case, arrays):
    out = case.fn(mx, *_f64(mx, arrays))
    return _np(out)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_grad_finite_differences(case):
    case.skip_if_mlx_deviates("grad")
    xs = case.data()
    w = np.random.default_rng(1).uniform(-1, 1, size=_forward(case, xs).shape)
    wm = mx.array(w, dtype=mx.float64)

    def loss(*a):
        # <f(x), w> through matmul (not multiply) so that the check needs
        # no more rules than the op's own plus Reshape and Matmul
        return mx.matmul(case.fn(mx, *a).reshape(-1), wm.reshape(-1))

    argnums = tuple(range(len(xs)))
    grads = mx.grad(loss, argnums=argnums)(*_f64(mx, xs))
    grads = grads if isinstance(grads, tuple) else (grads,)
    h = 1e-4
    for i, x in enumerate(xs):
        assert grads[i].dtype == mx.float64, f"gradient dtype {grads[i].dtype}"
        assert tuple(grads[i].shape) == x.shape
        fd = np.zeros_like(x)
        for j in np.ndindex(*x.shape):
            xp = [a.copy() for a in xs]
            xm = [a.copy() for a in xs]
            xp[i][j] += h
            xm[i][j] -= h
            fd[j] = ((_forward(case, xp) * w).sum() - (_forward(case, xm) * w).sum()) / (2 * h)
        if case.zero:
            fd[...] = 0
        np.testing.assert_allclose(_np(grads[i]), fd, rtol=2e-3, atol=2e-3, err_msg=f"{case.id} input {i}")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_jvp_finite_differences(case):
    case.skip_if_mlx_deviates("jvp")
    xs = case.data(seed=2)
    ts = [np.random.default_rng(3 + i).uniform(-1, 1, size=x.shape) for i, x in enumerate(xs)]
    outs, tans = mx.jvp(lambda *a: case.fn(mx, *a), _f64(mx, xs), _f64(mx, ts))
    h = 1e-4
    fd = (_forward(case, [x + h * t for x, t in zip(xs, ts)])
          - _forward(case, [x - h * t for x, t in zip(xs, ts)])) / (2 * h)
    if case.zero:
        fd[...] = 0
    np.testing.assert_allclose(_np(outs[0]), _forward(case, xs), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(_np(tans[0]), fd, rtol=2e-3, atol=2e-3, err_msg=case.id)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_vmap_matches_loop(case):
    case.skip_if_mlx_deviates("vmap")
    batch = [case.data(seed=s) for s in range(3)]
    stacked = [np.stack([b[i] for b in batch]) for i in range(len(case.shapes))]
    expected = np.stack([_forward(case, b) for b in batch])
    got = mx.vmap(lambda *a: case.fn(mx, *a))(*_f64(mx, stacked))
    np.testing.assert_allclose(_np(got), expected, rtol=1e-6, atol=1e-6, err_msg=case.id)
    # batch on the last axis of the first input, the others unbatched
    if len(case.shapes) > 1:
        first = np.moveaxis(stacked[0], 0, -1)
        rest = batch[0][1:]
        in_axes = (-1,) + (None,) * len(rest)
        got = mx.vmap(lambda *a: case.fn(mx, *a), in_axes=in_axes)(*_f64(mx, [first] + rest))
        exp = np.stack([_forward(case, [b[0]] + rest) for b in batch])
        np.testing.assert_allclose(_np(got), exp, rtol=1e-6, atol=1e-6, err_msg=case.id + " in_axes")


@pytest.mark.skipif(mlx_ref is None, reason="real MLX (mlx.core) is not importable")
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_grad_matches_mlx(case):
    xs = case.data(seed=5)
    argnums = tuple(range(len(xs)))

    def grads(m):
        def loss(*a):
            return case.fn(m, *a).sum()

        out = m.grad(loss, argnums=argnums)(*[m.array(x.astype(np.float32)) for x in xs])
        return out if isinstance(out, tuple) else (out,)

    ref = grads(mlx_ref)
    got = grads(mx)
    for g, r in zip(got, ref):
        np.testing.assert_allclose(np.array(g), np.array(r), rtol=1e-4, atol=1e-5, err_msg=case.id)
