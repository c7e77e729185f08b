"""mx.compile: traced once per input signature, replayed afterwards, with
MLX's semantics for constants, captured state, errors and transforms."""

import threading

import numpy as np
import pytest

from conftest import mlx_ref, mx, needs_oracle


def counted(fun):
    calls = []

    def wrapper(*a, **k):
        calls.append(1)
        return fun(*a, **k)

    wrapper.calls = calls
    return wrapper


def test_values_and_trace_counts():
    f = counted(lambda x, y: (mx.exp(x) * y - x, x + 1))
    c = mx.compile(f)
    rng = np.random.default_rng(0)
    traces = []
    for shape in [(4,), (3,), (2, 3)]:
        for _ in range(3):
            x, y = rng.standard_normal(shape).astype(np.float32), rng.standard_normal(shape)
            a, b = c(mx.array(x), mx.array(y.astype(np.float32)))
            np.testing.assert_allclose(np.array(a), np.exp(x) * y - x, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(np.array(b), x + 1, rtol=1e-6)
        traces.append(len(f.calls))
    # one trace per new shape (MLX itself traces its very first call twice)
    assert traces[1] - traces[0] == 1 and traces[2] - traces[1] == 1
    assert traces[0] == 1 or mx.__name__ == "mlx.core"
    c(mx.array([1, 2]), mx.array([3, 4]))  # a new dtype traces again
    assert len(f.calls) == traces[2] + 1
    a, b = c(mx.array(2.0), mx.array(3.0))  # 0-d
    assert abs(a.item() - (np.exp(2.0) * 3 - 2)) < 1e-4 and b.item() == 3.0


def test_layouts_replay_on_views():
    c = mx.compile(lambda x: x * 2 + 1)
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    c(mx.array(base))
    for x, ref in [(mx.array(base).T, base.T), (mx.array(base)[:, ::2], base[:, ::2]),
                   (mx.broadcast_to(mx.array(base[:1]), (3, 4)), np.broadcast_to(base[:1], (3, 4)))]:
        np.testing.assert_array_equal(np.array(c(x)), ref * 2 + 1)


def test_constants_are_part_of_the_key():
    f = counted(lambda x, k, name=None, scale=1.0: x * k * scale if name == "mul" else x + k)
    c = mx.compile(f)
    x = mx.array([1.0, 2.0])
    assert c(x, 2).tolist() == [3.0, 4.0]
    assert c(x, 2).tolist() == [3.0, 4.0]
    assert c(x, 3).tolist() == [4.0, 5.0]
    assert c(x, 2, name="mul").tolist() == [2.0, 4.0]
    assert c(x, 2, name="mul", scale=0.5).tolist() == [1.0, 2.0]
    assert len(f.calls) == 4


def test_side_effects_run_once_and_closures_are_frozen():
    y = 1
    seen = []

    def f(x):
        seen.append(1)
        return x + y

    c = mx.compile(f)
    assert c(mx.array(1)).item() == 2
    y = 10
    assert c(mx.array(1)).item() == 2  # replayed: the traced constant stays
    assert len(seen) == 1


def test_trees_in_and_out():
    def f(d, l):
        return {"s": d["a"] + l[0], "p": (d["a"] * l[1], None, 3)}

    c = mx.compile(f)
    out = c({"a": mx.array(2.0)}, [mx.array(3.0), mx.array(4.0)])
    assert out["s"].item() == 5.0 and out["p"][0].item() == 8.0
    assert out["p"][1] is None and out["p"][2] == 3


def test_captured_state():
    state = [mx.array(0.0)]

    def step(x):
        state[0] = state[0] + x
        return state[0] * 2

    c = mx.compile(step, inputs=state, outputs=state)
    for i in range(1, 4):
        assert c(mx.array(1.0)).item() == 2.0 * i
        assert state[0].item() == float(i)

    model = {"w": mx.array([1.0, 2.0])}
    c = mx.compile(lambda x: (model["w"] * x).sum(), inputs=model)
    assert c(mx.array(2.0)).item() == 6.0
    model["w"] = mx.array([5.0, 5.0])  # captured inputs are read each call
    assert c(mx.array(2.0)).item() == 20.0


def test_random_state_capture():
    plain = mx.compile(lambda: mx.random.uniform(shape=(4,)))
    a, b = plain(), plain()
    assert mx.array_equal(a, b).item()  # the key is a traced constant
    stateful = mx.compile(lambda: mx.random.uniform(shape=(4,)), inputs=mx.random.state,
                          outputs=mx.random.state)
    mx.random.seed(3)
    a, b = stateful(), stateful()
    assert not mx.allclose(a, b).item()
    mx.random.seed(3)
    assert mx.array_equal(stateful(), a).item()  # advances the real key as uncompiled draws


def test_errors():
    x = mx.array([1, 2, 3]) + 2

    def uses_input_from_closure(a):
        return a + (x + 1)

    with pytest.raises(ValueError, match="uncaptured inputs"):
        mx.compile(uses_input_from_closure)(x)

    class Box:
        value = 1

    with pytest.raises(ValueError, match="Function arguments must be trees"):
        mx.compile(lambda a, b: a)(mx.array(0.0), Box())

    def evaluates(a):
        mx.eval(a)
        return a

    with pytest.raises(ValueError, match="Attempting to eval an array during function"):
        mx.compile(evaluates)(mx.array(1.0))

    def raises(a):
        raise KeyError("inside")

    with pytest.raises(KeyError, match="inside"):
        mx.compile(raises)(mx.array(1.0))
    with pytest.raises(TypeError):
        mx.compile(3)
    # the failing trace is not cached: a fixed function works afterwards
    c = mx.compile(lambda a: a * 3)
    assert c(mx.array(2.0)).item() == 6.0


def test_transforms_of_compiled():
    f = lambda x, y: mx.sin(x) * y + x * x  # noqa: E731
    c = mx.compile(f)
    x, y = mx.array([0.5, 1.0, 2.0]), mx.array([2.0, 3.0, 4.0])
    np.testing.assert_allclose(np.array(mx.grad(lambda a: c(a, y).sum())(x)),
                               np.array(mx.grad(lambda a: f(a, y).sum())(x)), rtol=1e-6)
    np.testing.assert_allclose(np.array(mx.vmap(c)(x, y)), np.array(f(x, y)), rtol=1e-6)
    out, vjp = mx.vjp(c, [x, y], [mx.ones(3)])
    _, vjp_ref = mx.vjp(f, [x, y], [mx.ones(3)])
    np.testing.assert_allclose(np.array(vjp[1]), np.array(vjp_ref[1]), rtol=1e-6)
    # a compiled function of a gradient
    g = mx.compile(mx.grad(lambda a: (a ** 3).sum()))
    np.testing.assert_allclose(np.array(g(x)), 3 * np.array(x) ** 2, rtol=1e-6)


def test_multi_output_primitive_inside():
    c = mx.compile(lambda a, b: mx.divmod(a, b))
    q, r = c(mx.array([7, -7, 9]), mx.array([2, 2, 4]))
    assert q.tolist() == [3, -4, 2] and r.tolist() == [1, 1, 1]
    q, r = c(mx.array([10, 11, 12]), mx.array([3, 3, 5]))
    assert q.tolist() == [3, 3, 2] and r.tolist() == [1, 2, 2]


def test_called_from_other_threads():
    c = mx.compile(lambda x: (x + 1, x * 2))
    c(mx.array([1.0]))
    results, errors = [], []

    def worker():
        try:
            a, b = c(mx.array([1.0]))
            results.append((a.item(), b.item()))
        except Exception as e:  # reported below
            errors.append(e)
        mx.clear_streams()

    for _ in range(3):
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    assert not errors and results == [(2.0, 2.0)] * 3


def test_shapeless():
    f = counted(lambda x, y: x * y.sum(0, keepdims=True) + 1)
    c = mx.compile(f, shapeless=True)
    for n in [2, 3, 5]:
        x, y = np.ones((n, n), np.float32), np.arange(n * n, dtype=np.float32).reshape(n, n)
        np.testing.assert_array_equal(np.array(c(mx.array(x), mx.array(y))),
                                      x * y.sum(0, keepdims=True) + 1)
    assert len(f.calls) == 1  # one trace for every shape of the same rank
    c(mx.ones((2,)), mx.ones((2,)))  # another rank traces again
    assert len(f.calls) == 2
    b = mx.compile(lambda a: mx.broadcast_to(a, (2, 2)), shapeless=True)
    b(mx.array(0.0))
    with pytest.raises(ValueError):
        b(mx.zeros((3,)).reshape(3)[None].reshape(1, 3)[0])  # (3,) cannot become (2, 2)


def test_disable_enable():
    f = counted(lambda x: x + 1)
    c = mx.compile(f)
    c(mx.array(1.0))
    c(mx.array(1.0))
    assert len(f.calls) == 1
    mx.disable_compile()
    try:
        c(mx.array(1.0))
        c(mx.array(1.0))
        assert len(f.calls) == 3
    finally:
        mx.enable_compile()
    c(mx.array(1.0))
    assert len(f.calls) == 3


def test_preserves_attributes():
    def documented(x):
        """The docstring."""
        return x

    c = mx.compile(documented)
    assert c.__name__ == "documented" and c.__doc__ == "The docstring."


@needs_oracle
def test_matches_mlx():
    def f(x, y):
        return mx.maximum(x, y) * mx.tanh(y) - mx.sum(x * y, axis=-1, keepdims=True)

    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((4, 5)).astype(np.float32), rng.standard_normal((4, 5)).astype(np.float32)
    ours = mx.compile(f)(mx.array(x), mx.array(y))

    def g(a, b):
        m = mlx_ref
        return m.maximum(a, b) * m.tanh(b) - m.sum(a * b, axis=-1, keepdims=True)

    theirs = mlx_ref.compile(g)(mlx_ref.array(x), mlx_ref.array(y))
    assert ours.dtype.size == theirs.dtype.size and ours.shape == theirs.shape
    np.testing.assert_allclose(np.array(ours), np.array(theirs), rtol=1e-5, atol=1e-6)


def test_compiled_gradient_through_checkpoint_and_custom_function():
    """A compiled training step whose graph holds custom-function nodes
    (mx.checkpoint, as mlx-examples' transformer_lm uses with
    --checkpoint, and mx.custom_function): MLX compiles them; the replays
    share each traced node's state, which lives until the last replayed
    node and the cached trace are gone."""

    def block(w, x):
        return mx.tanh(x @ w) * 2.0

    @mx.custom_function
    def scaled(x):
        return x * 3.0

    @scaled.vjp
    def scaled_vjp(primals, cotangent, output):
        return cotangent * 5.0  # not the true derivative: shows the rule ran

    def loss(w, x):
        h = mx.checkpoint(block)(w, x)
        return mx.sum(scaled(h) ** 2)

    vg = mx.value_and_grad(loss)
    step = mx.compile(vg)
    rng = np.random.default_rng(3)
    w = mx.array(rng.standard_normal((4, 4)).astype(np.float32))
    for _ in range(4):  # the first call traces, the others replay
        x = mx.array(rng.standard_normal((2, 4)).astype(np.float32))
        (v, g), (v0, g0) = step(w, x), vg(w, x)
        np.testing.assert_allclose(np.array(v), np.array(v0), rtol=1e-5)
        np.testing.assert_allclose(np.array(g), np.array(g0), rtol=1e-5, atol=1e-6)
    # The custom rule (5, not 3) reached the gradient.
    h = np.tanh(np.array(x) @ np.array(w)) * 2.0
    dh = 2 * (3 * h) * 5.0
    want = np.array(x).T @ (dh * 2.0 * (1 - (h / 2.0) ** 2))
    np.testing.assert_allclose(np.array(g), want, rtol=1e-4, atol=1e-5)
    del step
    mx.clear_cache()


def test_gradient_of_compiled_checkpoint():
    """The other nesting: grad of a compiled function that checkpoints
    (its replayed custom-function nodes give the gradient), shapeless too."""

    def block(w, x):
        return mx.tanh(x @ w)

    def f(w, x):
        return mx.sum(mx.checkpoint(block)(w, x) ** 2)

    rng = np.random.default_rng(4)
    w = mx.array(rng.standard_normal((4, 4)).astype(np.float32))
    x = mx.array(rng.standard_normal((3, 4)).astype(np.float32))
    for cf in (mx.compile(f), mx.compile(f, shapeless=True)):
        for rows in (3, 3, 2):
            got, want = mx.grad(cf)(w, x[:rows]), mx.grad(f)(w, x[:rows])
            np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-5, atol=1e-6)
