"""compile fusion beyond elementwise chains: regions computed inside a
reduction's pass, shapeless traces and complex64 regions.  Each workload
has an eager row and a compiled row (cmlx and MLX: mx.compile, shapeless
where the name says so; NumPy and PyTorch eager).

- sum of squares over the last axis, (4096, 4096) float32
- softmax written with plain ops (max, exp, sum, divide), (4096, 4096)
- GELU (tanh) compiled once shapeless, called on three shapes in turn
- a complex64 chain ((a * b + a) * conj(b) - a), 2e6 elements

Outputs above 32 MiB are fresh mappings per call (the allocator's cache
limit), so page faults are part of these timings.
"""

import numpy as np

from bench_compile import _case, data, gelu
from harness import workload

SHAPES = [(1000, 1000), (1500, 1000), (700, 2000)]


def sum_squares(m, x):
    return (x * x).sum(-1)


def softmax(m, x):
    if m.__name__ == "numpy":
        e = np.exp(x - x.max(-1, keepdims=True))
    elif m.__name__ == "torch":
        e = m.exp(x - x.amax(-1, keepdim=True))
    else:
        e = m.exp(x - x.max(-1, keepdims=True))
    if m.__name__ == "torch":
        return e / e.sum(-1, keepdim=True)
    return e / e.sum(-1, keepdims=True)


def complex_chain(m, a, b):
    conj = np.conj if m.__name__ == "numpy" else m.conj
    return (a * b + a) * conj(b) - a


def _gelu_shapes(fw, compiled):
    if fw.name == "torch":
        import torch

        m = torch
    else:
        m = fw.mod
    f = lambda x: gelu(m, x)  # noqa: E731
    if compiled and fw.name in ("cmlx", "mlx"):
        f = fw.mod.compile(f, shapeless=True)
    xs = [fw.from_numpy(a) for a in data("gelu shapes", lambda rg: [
        rg.standard_normal(s).astype(np.float32) for s in SHAPES])]
    if fw.lazy:
        fw.mod.eval(*xs)
        return lambda: [fw.run(f(x)) for x in xs]
    return lambda: [f(x) for x in xs]


def _complex_data(rg):
    return [(rg.standard_normal(2_000_000) + 1j * rg.standard_normal(2_000_000)).astype(np.complex64)
            for _ in range(2)]


def _register(label, body, make_arrays):
    for compiled in (False, True):
        name = f"{label} {'compiled' if compiled else 'eager'}"

        def make(fw, compiled=compiled):
            if fw.name == "torch" and body is complex_chain:
                return None
            return _case(fw, body, data(label, make_arrays), compiled)

        workload(name, family="fusion")(make)


_register("sum of squares 4096x4096 f32", sum_squares,
          lambda rg: [rg.standard_normal((4096, 4096)).astype(np.float32)])
_register("softmax ops 4096x4096 f32", softmax,
          lambda rg: [rg.standard_normal((4096, 4096)).astype(np.float32)])
_register("complex chain 2e6 c64", complex_chain, _complex_data)
for _compiled in (False, True):
    workload(f"gelu shapeless 3 shapes f32 {'compiled' if _compiled else 'eager'}",
             family="fusion")(lambda fw, c=_compiled: _gelu_shapes(fw, c))
