"""mx.compile(shapeless=True): one trace replayed on inputs of other shapes.
Every primitive on the path re-derives its output shape (Reshape from the
requested shape, BroadcastAxes for matmul's batch axes, NumberOfElements
for mean and var, ...); results equal the uncompiled function's and MLX's."""

import numpy as np
import pytest

from conftest import mlx_ref, mx, needs_oracle
from test_compile import counted


def rand(shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def check_replays(fun, shape_sets, atol=1e-5, ref=True):
    """fun compiled shapeless is traced once per set of input ranks and
    equals fun (and MLX's compiled fun) on every set of input shapes."""
    f = counted(fun)
    c = mx.compile(f, shapeless=True)
    theirs = None
    if ref and mlx_ref is not None:
        theirs = mlx_ref.compile(fun_for(fun, mlx_ref), shapeless=True)
    for k, shapes in enumerate(shape_sets):
        args = [rand(s, seed=k * 10 + i) for i, s in enumerate(shapes)]
        got = c(*[mx.array(a) for a in args])
        want = fun(*[mx.array(a) for a in args])
        got = got if isinstance(got, (list, tuple)) else [got]
        want = want if isinstance(want, (list, tuple)) else [want]
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_allclose(np.array(g), np.array(w), rtol=1e-5, atol=atol)
        if theirs is not None:
            t = theirs(*[mlx_ref.array(a) for a in args])
            t = t if isinstance(t, (list, tuple)) else [t]
            for g, w in zip(got, t):
                assert g.shape == tuple(w.shape)
                np.testing.assert_allclose(np.array(g), np.array(w), rtol=1e-5, atol=atol)
    assert len(f.calls) == len({tuple(len(s) for s in shapes) for shapes in shape_sets})


def fun_for(fun, module):
    """The same function written against another module (its globals' mx)."""
    g = dict(fun.__globals__)
    g["mx"] = module
    import types

    return types.FunctionType(fun.__code__, g, fun.__name__, fun.__defaults__, fun.__closure__)


def test_reshape_infers_again():
    check_replays(lambda x: x.reshape(x.shape[0] * x.shape[1], -1), [[(2, 3, 4)], [(2, 3, 8)]])
    check_replays(lambda x: mx.reshape(x, (-1,)), [[(2, 3)], [(4, 5)], [(6,)]])
    # -1 that changes nothing at the traced shape still re-infers
    check_replays(lambda x: x.reshape(-1) * 2, [[(4,)], [(7,)]])


def test_reshape_that_does_not_fit_raises():
    c = mx.compile(lambda x: x.reshape(6, -1), shapeless=True)
    assert c(mx.zeros((2, 3, 4))).shape == (6, 4)
    with pytest.raises(ValueError, match="reshape"):
        c(mx.zeros((5, 5, 5)))
    c = mx.compile(lambda x: x.reshape(2, 3), shapeless=True)
    c(mx.zeros((6,)))
    with pytest.raises(ValueError, match="Cannot reshape array of size 8"):
        c(mx.zeros((8,)))


def test_views_and_axes():
    check_replays(lambda x: mx.transpose(x, (2, 0, 1)) + 1, [[(2, 3, 4)], [(5, 1, 2)]])
    check_replays(lambda x: mx.expand_dims(x, (0, 2)) * 2, [[(3, 4)], [(1, 5)]])
    check_replays(lambda x: mx.squeeze(x, 1) - 1, [[(3, 1, 4)], [(2, 1, 6)]])
    check_replays(lambda x: mx.flatten(x, 1, 2), [[(2, 3, 4)], [(5, 2, 2)]])
    # MLX 0.32's replay of this one sums the wrong axis: values from the
    # uncompiled function only
    check_replays(lambda x: mx.moveaxis(x, 0, -1).sum(0), [[(2, 3, 4)], [(4, 1, 3)]], ref=False)


def test_broadcast_arrays_and_broadcast_to():
    check_replays(lambda a, b: mx.broadcast_arrays(a, b), [[(3, 1), (1, 4)], [(2, 1, 5), (6, 1)]])
    c = mx.compile(lambda a: mx.broadcast_to(a, (2, 2)), shapeless=True)
    assert c(mx.array(1.0)).shape == (2, 2)
    assert c(mx.ones((1, 2))).shape == (2, 2)
    with pytest.raises(ValueError):
        c(mx.zeros((1, 1, 1)))


@pytest.mark.parametrize(
    "sa,sb",
    [
        ((2, 1, 4, 2), (3, 2, 5)),
        ((4, 3), (3, 5)),
        ((2, 4, 3), (3, 5)),
        ((3,), (2, 3, 4)),
        ((2, 5, 3), (3,)),
    ],
)
def test_matmul_batch_shapes(sa, sb):
    grow = lambda s: tuple(d + 1 if d > 1 else d for d in s)
    other_a, other_b = list(grow(sa)), list(grow(sb))
    # keep the contraction sizes matching
    k = other_a[-1]
    if len(other_b) >= 2:
        other_b[-2] = k
    else:
        other_b[0] = k
    check_replays(lambda a, b: a @ b, [[sa, sb], [tuple(other_a), tuple(other_b)]], atol=1e-4)


def test_matmul_grad_follows_shapes():
    f = lambda a, b: (a @ b).sum()
    g = mx.compile(mx.grad(f, argnums=(0, 1)), shapeless=True)
    for sa, sb in [((2, 1, 4, 2), (3, 2, 5)), ((3, 1, 4, 2), (2, 2, 5)), ((1, 1, 3, 2), (2, 2, 4))]:
        a, b = mx.array(rand(sa, 1)), mx.array(rand(sb, 2))
        ga, gb = g(a, b)
        wa, wb = mx.grad(f, argnums=(0, 1))(a, b)
        assert ga.shape == sa and gb.shape == sb
        np.testing.assert_allclose(np.array(ga), np.array(wa), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(np.array(gb), np.array(wb), rtol=1e-4, atol=1e-4)


def test_addmm():
    check_replays(lambda c, a, b: mx.addmm(c, a, b), [[(2, 4), (2, 3), (3, 4)], [(3, 5), (3, 6), (6, 5)]])
    check_replays(lambda c, a, b: mx.addmm(c, a, b, alpha=2.0, beta=-0.5),
                  [[(2, 4), (2, 3), (3, 4)], [(5, 2), (5, 1), (1, 2)]])


def test_gather_mm_and_take():
    b = mx.array(rand((4, 8, 5), 7))
    idx = mx.array(np.array([0, 1, 2, 3], np.uint32))
    fn = lambda x: mx.gather_mm(x, b, lhs_indices=idx, rhs_indices=idx)
    c = mx.compile(fn, shapeless=True)
    for m in (2, 6):
        x = mx.array(rand((4, m, 8), m))
        np.testing.assert_allclose(np.array(c(x)), np.array(fn(x)), rtol=1e-5, atol=1e-5)
    buf = mx.array(np.arange(10, dtype=np.float32))
    for red in (mx.sum, mx.mean, mx.max, mx.argmax, mx.argmin, mx.prod):
        f = lambda i: red(mx.take(buf, i, axis=0))
        c = mx.compile(f, shapeless=True)
        for n in (1, 3, 5, 2):
            i = mx.arange(n)
            assert mx.array_equal(c(i), f(i)).item(), (red.__name__, n)
    a = mx.array(rand((5, 3), 3))
    f = lambda i: mx.take_along_axis(a, i, axis=0)
    c = mx.compile(f, shapeless=True)
    for n in (1, 4):
        i = mx.array(np.zeros((n, 3), np.int32))
        assert c(i).shape == (n, 3)
        assert mx.array_equal(c(i), f(i)).item()


def test_slice_update():
    def fun(x):
        x[2] = mx.array([3.0])
        return x

    check_replays(fun, [[(4,)], [(6,)]], ref=False)


def test_full_like_family():
    for f in (mx.zeros_like, mx.ones_like, lambda x: mx.full_like(x, 2.5),
              lambda x: mx.zeros_like(x, dtype=mx.int32)):
        c = mx.compile(f, shapeless=True)
        for s in [(1, 1, 32), (2, 2, 16), (3, 1, 1)]:
            x = mx.zeros(s)
            assert c(x).shape == s
            assert mx.array_equal(c(x), f(x)).item()
            assert c(x).dtype == f(x).dtype


def test_mean_and_var_count_the_new_shape():
    check_replays(lambda x: mx.mean(x, keepdims=True), [[(2,)], [(4,)], [(7,)]])
    check_replays(lambda x: mx.mean(x, axis=1), [[(2, 3)], [(2, 8)]])
    # MLX 0.32 dies of a floating point exception on this replay
    check_replays(lambda x: mx.mean(x, axis=1), [[(2, 3)], [(5, 1)]], ref=False)
    check_replays(lambda x: mx.var(x, axis=0), [[(3, 2)], [(9, 2)]])
    check_replays(lambda x: mx.var(x, ddof=1), [[(3,)], [(10,)]])
    check_replays(lambda x: mx.std(x, axis=-1), [[(2, 3)], [(2, 11)]])
    # integers count in float32, as MLX's mean
    c = mx.compile(lambda x: mx.mean(x), shapeless=True)
    for n in (2, 5):
        x = mx.arange(n)
        assert c(x).item() == pytest.approx(mx.mean(x).item())
        assert c(x).dtype == mx.float32


def test_mean_under_grad_and_vmap():
    g = mx.compile(mx.grad(lambda x: mx.mean(x * x)), shapeless=True)
    for n in (2, 5):
        x = mx.array(rand((n,), n))
        np.testing.assert_allclose(np.array(g(x)), 2 * np.array(x) / n, rtol=1e-5)
    v = mx.compile(mx.vmap(lambda x: mx.mean(x)), shapeless=True)
    for s in [(3, 4), (2, 9)]:
        x = mx.array(rand(s, 1))
        np.testing.assert_allclose(np.array(v(x)), np.array(x).mean(1), rtol=1e-5)


def test_vmap_of_matmul_broadcast_axes():
    counter = counted(lambda x, y: mx.matmul(x, y))
    vf = mx.vmap(counter, in_axes=(0, 1))
    c = mx.compile(vf, shapeless=True)
    for sx, sy in [((2, 3, 1, 4, 5), (1, 2, 5, 6)), ((3, 2, 1, 4, 5), (2, 3, 5, 6))]:
        x, y = mx.array(rand(sx, 1)), mx.array(rand(sy, 2))
        np.testing.assert_allclose(np.array(c(x, y)), np.array(vf(x, y)), rtol=1e-5, atol=1e-5)
    assert len(counter.calls) == 3  # two direct calls and one trace
    vf = mx.vmap(lambda x, y: x @ y, in_axes=(2, None))
    c = mx.compile(vf, shapeless=True)
    for sx, sy in [((3, 4, 2), (4, 5)), ((6, 2, 3), (2, 1))]:
        x, y = mx.array(rand(sx, 3)), mx.array(rand(sy, 4))
        np.testing.assert_allclose(np.array(c(x, y)), np.array(vf(x, y)), rtol=1e-5, atol=1e-5)


def test_primitive_without_shape_rule_raises():
    # Slice has no shape rule in MLX either: another shape is a ValueError
    c = mx.compile(lambda x: x[1:3] + 1, shapeless=True)
    c(mx.zeros((4,)))
    with pytest.raises(ValueError, match="shapeless"):
        c(mx.zeros((6,)))


@needs_oracle
def test_matches_mlx_errors_for_bad_replays():
    for m in (mx, mlx_ref):
        c = m.compile(lambda x: x.reshape(6, -1), shapeless=True)
        c(m.zeros((2, 3, 4)))
        with pytest.raises(ValueError):
            c(m.zeros((5, 5, 5)))


def test_jvp_and_vmap_of_dynamic_broadcasts():
    f = lambda x, y: x * y + 2
    j = mx.compile(lambda x, y, t: mx.jvp(f, (x, y), (t, mx.zeros_like(y)))[1][0], shapeless=True)
    for sx, sy in [((3, 1), (1, 4)), ((2, 1), (1, 5))]:
        x, y, t = mx.array(rand(sx, 1)), mx.array(rand(sy, 2)), mx.array(rand(sx, 3))
        np.testing.assert_allclose(np.array(j(x, y, t)), np.array(t) * np.array(y), rtol=1e-5)
    v = mx.compile(mx.vmap(lambda x: mx.sum(x) * 2 + mx.ones_like(x)), shapeless=True)
    for s in [(3, 4), (5, 2)]:
        x = mx.array(rand(s, 4))
        want = 2 * np.array(x).sum(1, keepdims=True) + np.ones(s)
        np.testing.assert_allclose(np.array(v(x)), want, rtol=1e-5)


@pytest.mark.parametrize(
    "name,fun,traced,other",
    [
        ("matmul", lambda a, b: a @ b, [(2, 1, 4, 3), (5, 3, 2)], [(3, 1, 4, 3), (2, 3, 6)]),
        ("mean", lambda x: mx.mean(x, axis=0), [(3, 4)], [(7, 4)]),
        ("var", lambda x: mx.var(x, ddof=1), [(5,)], [(9,)]),
        ("reshape", lambda x: x.reshape(x.shape[0] * x.shape[1], -1), [(2, 3, 4)], [(2, 3, 8)]),
        ("zeros_like", lambda x: mx.zeros_like(x) + x, [(3, 4)], [(5, 2)]),
    ],
)
def test_shapeless_export_round_trip(tmp_path, name, fun, traced, other):
    """The new nodes (BroadcastAxes, NumberOfElements, Reshape's requested
    shape, Full of the input's shape) export as MLX's and replay at other
    shapes after import, here and in MLX."""
    path = str(tmp_path / f"{name}.mlxfn")
    mx.export_function(path, fun, *[mx.array(rand(s, 1)) for s in traced], shapeless=True)
    args = [rand(s, 2 + i) for i, s in enumerate(other)]
    want = np.array(fun(*[mx.array(a) for a in args]))
    got = mx.import_function(path)(*[mx.array(a) for a in args])[0]
    np.testing.assert_allclose(np.array(got), want, rtol=1e-5, atol=1e-5)
    if mlx_ref is not None:
        theirs = mlx_ref.import_function(path)(*[mlx_ref.array(a) for a in args])[0]
        np.testing.assert_allclose(np.array(theirs), want, rtol=1e-5, atol=1e-5)


# ---- fused kernels in shapeless traces ---------------------------------------


def _labels(*arrays):
    import io

    buf = io.StringIO()
    mx.export_to_dot(buf, *arrays)
    return [l.split('"')[1] for l in buf.getvalue().splitlines() if "label" in l]


def _bits(a):
    if a.dtype == mx.bfloat16:
        a = a.astype(mx.float32)
    n = np.array(a)
    return n.dtype, n.shape, n.tobytes()


SHAPE_SETS = [[(3, 4), (3, 4)], [(5, 7), (5, 7)], [(2, 1), (1, 6)], [(6, 1), (6, 5)],
              [(1, 1), (4, 3)], [(0, 4), (1, 4)], [(3, 0), (3, 1)], [(1, 9), (2, 1)]]


@pytest.mark.parametrize("dtype", [mx.float32, mx.float16, mx.bfloat16, mx.int32])
def test_fused_kernel_replays_on_other_shapes(dtype, tmp_path, monkeypatch):
    monkeypatch.setenv("CMLX_CACHE_DIR", str(tmp_path))
    if dtype == mx.int32:
        def fun(a, b):
            return mx.maximum(a * b - 3, b) + (a & 7) * 2
    else:
        def fun(a, b):
            return mx.exp(a * b + 1) - a / (b * b + 1) + mx.where(a > b, a, 0.5)
    c = mx.compile(fun, shapeless=True)
    for k, shapes in enumerate(SHAPE_SETS):
        a, b = (mx.array(rand(s, seed=k * 2 + i) * 4).astype(dtype) for i, s in enumerate(shapes))
        mx.eval(a, b)
        got = c(a, b)
        if k == 0:  # one node: the region with its dynamic broadcasts (and where's Full)
            labels = [l for l in _labels(got) if l != "Full"]
            assert len(labels) == 1 and labels[0].startswith("CompiledBroadcast"), labels
        want = fun(a, b)
        assert _bits(got) == _bits(want), shapes
        monkeypatch.setenv("CMLX_COMPILE_FUSE", "0")
        assert _bits(mx.compile(fun, shapeless=True)(a, b)) == _bits(want)
        monkeypatch.delenv("CMLX_COMPILE_FUSE")


def test_fused_shapeless_layouts_constants_and_outputs(tmp_path, monkeypatch):
    monkeypatch.setenv("CMLX_CACHE_DIR", str(tmp_path))
    w = mx.array(rand((1,), seed=3))  # a closure constant read as a scalar

    def fun(a, b):
        y = mx.tanh(a * 2 + w) * b
        return y, y * y + 1, mx.sum(y * a, axis=-1)

    c = mx.compile(fun, shapeless=True)
    base = mx.array(rand((8, 6), seed=4))
    other = mx.array(rand((8, 6), seed=6))
    for a, b in [(base, other), (base.T, other.T), (base[::2, 1:], base[1::2, :5]),
                 (mx.broadcast_to(base[:1], (8, 6)), base), (base[:3, :1], base[:1, :4])]:
        got, want = c(a, b), fun(a, b)
        for g, v in zip(got, want):
            assert _bits(g) == _bits(v)
    # a rank the trace has not seen: traced again
    a = mx.array(rand((2, 3, 4), seed=5))
    for g, v in zip(c(a, a), fun(a, a)):
        assert _bits(g) == _bits(v)


@needs_oracle
def test_fused_shapeless_against_mlx():
    def fun(a, b):
        return mx.sigmoid(a - b) * (a + 1) / (mx.abs(b) + 1)

    ours = mx.compile(fun, shapeless=True)
    theirs = mlx_ref.compile(fun_for(fun, mlx_ref), shapeless=True)
    # not the empty sets: MLX 0.32's shapeless replay of (0, 4) with (1, 4)
    # gives a (1, 4) result, its uncompiled function (0, 4), as ours does
    for k, shapes in enumerate(s for s in SHAPE_SETS if 0 not in s[0] + s[1]):
        args = [rand(s, seed=k * 3 + i) for i, s in enumerate(shapes)]
        got = ours(*[mx.array(x) for x in args])
        want = theirs(*[mlx_ref.array(x) for x in args])
        np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-5, atol=1e-6)


# Basic indexing that adds or drops axes (None, ints) is ExpandDims /
# Squeeze, as in MLX, so a replay infers the new shape; it was a Reshape to
# the traced shape, and mlx-lm's bailing_moe aggregation
# (e * s[..., None]).sum(-2) failed on the second length.
def test_none_index_replays():
    def aggregate(e, s):
        return (e * s[..., None]).sum(axis=-2)

    check_replays(aggregate, [[(2, 3, 4), (2, 3)], [(2, 5, 4), (2, 5)], [(3, 2, 4), (3, 2)]])
    # (not a length of 1 after 3: MLX 0.32.4's replay of it crashes)
    check_replays(lambda x: x[None, :, None] * 2,
                  [[(3, 4)], [(5, 2)]])
    check_replays(lambda x: x[..., None, :].sum(0), [[(2, 3)], [(4, 6)]])


def test_none_index_with_array_index():
    # the advanced path's None axes are ExpandDims too; a Gather keeps its
    # traced slice sizes in a replay, as in MLX, so one shape only here
    idx = mx.array([0, 1])
    c = mx.compile(lambda x: x[idx, None] + 1, shapeless=True)
    a = rand((3, 4))
    np.testing.assert_allclose(np.array(c(mx.array(a))), a[[0, 1], None] + 1, rtol=1e-6)
    np.testing.assert_allclose(np.array(c(mx.array(a * 2))), a[[0, 1], None] * 2 + 1, rtol=1e-6)
