"""Calls through the Python wrappers (compile, the transforms, nn and the
optimizers) leave no reference cycles behind: a cycle keeps its arrays
alive until the garbage collector happens to run, so big outputs pile up
and every call maps fresh memory (compiled `x * 2 + 1` on a 64 MB array
ran 10x slower than eager that way)."""
import gc

import pytest

import cmlx.core as mx
import cmlx.nn as nn
import cmlx.optimizers as optim
from cmlx.utils import tree_flatten, tree_map, tree_unflatten


def _model():
    mx.random.seed(0)
    m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    mx.eval(m.parameters())
    return m


def _cases():
    x = mx.random.normal((4, 4))
    m = _model()
    opt = optim.AdamW(1e-3)
    vg = nn.value_and_grad(m, lambda m, x: m(x).sum())
    state = [m.state, opt.state]
    compiled_sum = mx.compile(lambda a: a.sum())
    compiled_step = mx.compile(lambda a: vg(m, a), inputs=state, outputs=state)
    return {
        "grad": lambda: mx.grad(lambda a: (a * a).sum())(x),
        "value_and_grad": lambda: mx.value_and_grad(lambda a: (a * a).sum())(x),
        "vjp": lambda: mx.vjp(lambda a: a * 2, [x], [x]),
        "jvp": lambda: mx.jvp(lambda a: a * 2, [x], [x]),
        "vmap": lambda: mx.vmap(lambda a: a * 2)(x),
        "compile_nested_output": lambda: mx.compile(lambda a: {"y": [a * 2, (a + 1,)]})(x),
        "compiled_replay": lambda: compiled_sum(x),
        "custom_function": lambda: mx.grad(mx.custom_function(lambda a: (a * 3).sum()))(x),
        "nn_value_and_grad": lambda: vg(m, x),
        "optimizer_update": lambda: opt.update(m, vg(m, x)[1]),
        "compiled_training_step": lambda: compiled_step(x),
        "tree_utils": lambda: tree_unflatten(tree_flatten(tree_map(lambda a: a + 1, m.parameters()))),
        "module_call": lambda: m(x),
    }


CASES = _cases()


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_cyclic_garbage(name):
    call = CASES[name]
    mx.eval(call())  # first call traces / builds caches
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for _ in range(2):
            out = call()
            mx.eval(out)
            del out
        gc.collect()
        left = [type(o).__name__ for o in gc.garbage]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert left == []


def test_compiled_outputs_freed_at_once():
    x = mx.zeros((1024, 1024))  # 4 MB per output
    mx.eval(x)
    f = mx.compile(lambda a: [a * 2 + 1, (a - 1,)])
    mx.eval(f(x))
    gc.disable()
    try:
        base = mx.get_active_memory()
        for _ in range(5):
            mx.eval(f(x))
        assert mx.get_active_memory() == base
    finally:
        gc.enable()
