"""Adam and AdamW update each parameter with one compiled function
(optimizers._adam_update): the same ops in the same order as the op-by-op
formulas, so the same bits, fused into one pass where compile fuses.

Checked: bit equality with the op-by-op path (dtypes, shapes, schedules,
weight decay, several steps), that the update really is a compiled node
(gradients from value_and_grad are ordinary inputs to compile once no
trace runs, as in MLX), an outer compiled step, differentiating through
an update, and the fall-back for constants that are not floats.
"""

import io
import re

import numpy as np
import pytest

from conftest import mx

optim = pytest.importorskip(mx.__name__.split(".")[0] + ".optimizers")
nn = pytest.importorskip(mx.__name__.split(".")[0] + ".nn")
oo = pytest.importorskip(mx.__name__.split(".")[0] + ".optimizers.optimizers")


def labels(*arrays):
    f = io.StringIO()
    mx.export_to_dot(f, *arrays)
    return re.findall(r'label ="([^"]+)"', f.getvalue())


def compile_fuses():
    x = mx.array(np.arange(4, dtype=np.float32))
    out = mx.compile(lambda a: mx.sqrt(a * 2 + 1))(x)
    return any(lb.startswith("Compiled") for lb in labels(out))


def run_steps(make_opt, params, grads_seq, fused, monkeypatch):
    if not fused:
        monkeypatch.setattr(oo, "_adam_update", lambda *a: None)
    opt = make_opt()
    p = dict(params)
    for g in grads_seq:
        p = opt.apply_gradients(g, p)
        mx.eval(p, opt.state)
    monkeypatch.undo()
    return p, opt.state


def bits(a):
    return np.array(a.astype(mx.float32) if a.dtype != mx.float32 else a).view(np.uint32)


MAKERS = {
    "adam": lambda: optim.Adam(1e-2),
    "adam_betas": lambda: optim.Adam(3e-3, betas=[0.8, 0.95], eps=1e-6),
    "adamw": lambda: optim.AdamW(1e-2),
    "adamw_wd0": lambda: optim.AdamW(1e-2, weight_decay=0.0),
    "adamw_schedule": lambda: optim.AdamW(optim.cosine_decay(1e-2, 10), weight_decay=0.1),
    "adamw_bias_correction": lambda: optim.AdamW(1e-2, bias_correction=True),
}


@pytest.mark.parametrize("name", list(MAKERS))
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_same_bits_as_op_by_op(name, dtype, monkeypatch):
    t = getattr(mx, dtype)
    rng = np.random.default_rng(0)
    shapes = {"w": (5, 7), "b": (7,), "s": (), "e": (0, 3), "t": (4, 6)}
    params = {k: mx.array(rng.standard_normal(s).astype(np.float32)).astype(t)
              for k, s in shapes.items()}
    params["t"] = params["t"].T  # a transposed parameter
    grads = [{k: mx.array(rng.standard_normal(v.shape).astype(np.float32)).astype(t)
              for k, v in params.items()} for _ in range(3)]
    p1, s1 = run_steps(MAKERS[name], params, grads, True, monkeypatch)
    p2, s2 = run_steps(MAKERS[name], params, grads, False, monkeypatch)
    for k in params:
        assert p1[k].dtype == t and p1[k].shape == params[k].shape
        np.testing.assert_array_equal(bits(p1[k]), bits(p2[k]))
        for sk in ("m", "v"):
            np.testing.assert_array_equal(bits(s1[k][sk]), bits(s2[k][sk]))
    # and the update moved the parameters
    assert not np.array_equal(np.array(p1["w"].astype(mx.float32)),
                              np.array(params["w"].astype(mx.float32)))


@pytest.mark.skipif(not compile_fuses(), reason="compile does not fuse here (no C compiler)")
def test_update_of_value_and_grad_is_compiled():
    mx.random.seed(0)
    model = nn.Linear(6, 3)
    x = mx.array(np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32))
    _, g = nn.value_and_grad(model, lambda m, x: (m(x) ** 2).mean())(model, x)
    opt = optim.AdamW(1e-2)
    opt.update(model, g)
    lb = labels(model.weight, model.bias)
    assert any(s.startswith("Compiled") and "Sqrt" in s for s in lb), lb
    assert "Sqrt" not in lb  # no op-by-op chain left


def test_compiled_function_of_gradients():
    # arrays built from grad's tracers are plain inputs after grad returns
    f = mx.compile(lambda a: mx.sqrt(mx.abs(a) * 3 + 1))
    x = mx.array(np.linspace(-1, 1, 9, dtype=np.float32))
    g = mx.grad(lambda x: (x**3).sum())(x)
    want = np.sqrt(np.abs(3 * np.array(x) ** 2) * 3 + 1)
    np.testing.assert_allclose(np.array(f(g)), want, rtol=1e-6)
    if compile_fuses():
        assert any(s.startswith("Compiled") for s in labels(f(g)))
    # inside a trace the compiled function is part of it: second derivative
    h = mx.grad(lambda x: f(mx.grad(lambda y: (y**3).sum())(x)).sum())(x)
    xs = np.array(x, np.float64)
    u = 3 * xs**2
    want_h = (3 * np.sign(u) / (2 * np.sqrt(np.abs(u) * 3 + 1))) * 6 * xs
    np.testing.assert_allclose(np.array(h), want_h, rtol=1e-4, atol=1e-5)


def test_inside_a_compiled_step(monkeypatch):
    def train(fused, compiled):
        if not fused:
            monkeypatch.setattr(oo, "_adam_update", lambda *a: None)
        mx.random.seed(0)
        model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
        mx.eval(model.parameters())
        opt = optim.AdamW(1e-2)
        x = mx.array(np.random.default_rng(0).standard_normal((5, 8)).astype(np.float32))
        vg = nn.value_and_grad(model, lambda m, x: (m(x) ** 2).mean())

        def step(x):
            loss, g = vg(model, x)
            opt.update(model, g)
            return loss

        if compiled:
            step = mx.compile(step, inputs=[model.state, opt.state],
                              outputs=[model.state, opt.state])
        losses = [step(x).item() for _ in range(4)]
        monkeypatch.undo()
        return losses, model.parameters()

    ref_l, ref_p = train(False, False)
    for fused, compiled in ((True, False), (True, True), (False, True)):
        l, p = train(fused, compiled)
        assert l == ref_l
        for a, b in zip(nn_leaves(p), nn_leaves(ref_p)):
            np.testing.assert_array_equal(np.array(a), np.array(b))


def nn_leaves(tree):
    from importlib import import_module

    utils = import_module(mx.__name__.split(".")[0] + ".utils")
    return [a for _, a in utils.tree_flatten(tree)]


def test_grad_through_an_update(monkeypatch):
    # the update differentiates as its ops (compile runs inside the trace)
    p = mx.array(np.array([0.5, -1.0, 2.0], np.float32))
    g = mx.array(np.array([0.1, 0.2, -0.3], np.float32))

    def f(p, fused):
        if not fused:
            monkeypatch.setattr(oo, "_adam_update", lambda *a: None)
        opt = optim.AdamW(1e-1)
        opt.init({"p": p})
        out = opt.apply_gradients({"p": g * p}, {"p": p})["p"]
        monkeypatch.undo()
        return (out**2).sum()

    d1 = mx.grad(lambda p: f(p, True))(p)
    d2 = mx.grad(lambda p: f(p, False))(p)
    np.testing.assert_array_equal(np.array(d1), np.array(d2))


def test_constants_that_are_not_floats():
    assert oo._adam_update(mx.array(0.9), 0.999, 1e-8, None) is None
    assert oo._adam_update(0.9, 0.999, 1e-8, mx.array(0.1)) is None
    assert oo._adam_update(0.9, 0.999, 1e-8, 0.01) is oo._adam_update(0.9, 0.999, 1e-8, 0.01)
    opt = optim.Adam(1e-2, betas=[mx.array(0.9), 0.999])
    p = opt.apply_gradients({"w": mx.ones((3,))}, {"w": mx.zeros((3,))})
    want = -1e-2 * 0.1 / (np.sqrt(1e-3) + 1e-8)  # first step: m = 0.1 g, v = 0.001 g^2
    np.testing.assert_allclose(np.array(p["w"]), np.full(3, want), rtol=1e-5)
