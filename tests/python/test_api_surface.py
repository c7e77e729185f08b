"""Names and argument conversions of MLX 0.32.4's surface that cmlx lacked:
mx.matrix_norm, nn.layers.distributed.sum_gradients, and operands that
are only convertible to a number (objects with __float__, __complex__ or
__index__, which MLX's complex caster turns into complex64 scalars)."""
import importlib
import importlib.util
import operator
import os
import subprocess
import sys
import types
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from conftest import mlx_ref, mx, needs_oracle

_pkg = mx.__name__.split(".")[0]
dist_layers = importlib.import_module(_pkg + ".nn.layers.distributed")


# ---------------------------------------------------------------- matrix_norm

def test_matrix_norm_is_linalg_norm():
    assert mx.matrix_norm is mx.linalg.norm
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(np.array(mx.matrix_norm(mx.array(a), "fro")),
                               np.linalg.norm(a, "fro"), rtol=1e-6)


# ---------------------------------------------------------------- sum_gradients

class _Group:
    """A stand-in group of n processes (sum_gradients only asks its size)."""

    def __init__(self, n):
        self.n = n

    def size(self):
        return self.n


def test_sum_gradients_single_process_is_identity():
    g = mx.distributed.init()
    f = dist_layers.sum_gradients(g)
    assert f is dist_layers.sum_gradients(g)  # cached per group, as MLX's
    x = mx.array([1.0, 2.0])
    assert np.array_equal(np.array(f(x)), [1.0, 2.0])
    np.testing.assert_array_equal(np.array(mx.grad(lambda x: (f(x) * 3).sum())(x)), [3.0, 3.0])


def test_sum_gradients_sums_the_cotangent(monkeypatch):
    calls = []

    def fake_all_sum(x, *, group=None, stream=None):
        calls.append(group)
        return x * group.size()

    monkeypatch.setattr(mx.distributed, "all_sum", fake_all_sum)
    g = _Group(4)
    f = dist_layers.sum_gradients(g)
    x = mx.array([1.0, -2.0])
    np.testing.assert_array_equal(np.array(f(x)), [1.0, -2.0])
    assert not calls  # the forward pass communicates nothing
    grad = mx.grad(lambda x: (f(x) * 2).sum())(x)
    np.testing.assert_array_equal(np.array(grad), [8.0, 8.0])
    assert calls == [g]


def test_mlx_lm_import_line():
    # what 12 mlx-lm architectures import at load time
    mod = importlib.import_module(_pkg + ".nn.layers.distributed")
    for name in ("shard_inplace", "shard_linear", "sum_gradients"):
        assert callable(getattr(mod, name))


# ---------------------------------------------------------------- number-like operands

class AsFloat:
    def __float__(self):
        return 2.5


class AsComplex:
    def __complex__(self):
        return 1 + 2j


class AsIndex:
    def __index__(self):
        return 3


class Raising:
    def __float__(self):
        raise RuntimeError("boom")


NUMBER_LIKE = [(AsFloat, 2.5), (AsComplex, 1 + 2j), (AsIndex, 3.0),
               (lambda: Fraction(1, 2), 0.5), (lambda: Decimal("1.5"), 1.5)]
OPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow,
       operator.lt, operator.eq, operator.ne]


@pytest.mark.parametrize("make,value", NUMBER_LIKE)
@pytest.mark.parametrize("op", OPS, ids=lambda f: f.__name__)
def test_number_like_operand_is_complex64(make, value, op):
    a = np.array([1.0, 2.0], np.float32)
    # Fraction and Decimal have reflected operators of their own
    for left in (True, False) if isinstance(make, type) else (True,):
        got = op(mx.array(a), make()) if left else op(make(), mx.array(a))
        c = np.complex64(value)
        want = op(a.astype(np.complex64), c) if left else op(c, a.astype(np.complex64))
        if op in (operator.lt,):  # MLX orders complex by real, then imaginary part
            want = np.array([(x.real, x.imag) < (c.real, c.imag) for x in a.astype(np.complex64)])
            if not left:
                want = np.array([(c.real, c.imag) < (x.real, x.imag) for x in a.astype(np.complex64)])
        assert got.dtype == (mx.bool_ if want.dtype == np.bool_ else mx.complex64)
        np.testing.assert_allclose(np.array(got), want, rtol=1e-6)


@pytest.mark.parametrize("op", ["+", "-", "*", "/", "//", "**"])
def test_number_like_inplace(op):
    for start in ([1.0, 2.0], [1, 2]):
        if op == "/" and isinstance(start[0], int):
            with pytest.raises(ValueError, match="In place division cannot cast"):
                c = mx.array(start)
                c /= AsFloat()
            continue
        c = mx.array(start)
        same = c
        exec(f"c {op}= o", {}, ns := {"c": c, "o": AsFloat()})
        c = ns["c"]
        assert c is same and c.dtype == mx.complex64
        # MLX's floor division of complex64 is a division
        want = eval(f"np.array(start, np.complex64) {op.replace('//', '/')} np.complex64(2.5)")
        np.testing.assert_allclose(np.array(c), want, rtol=1e-6)


def test_number_like_in_ops():
    b = mx.array([1.0, 2.0])
    assert mx.add(b, AsFloat()).dtype == mx.complex64
    assert mx.maximum(b, AsFloat()).dtype == mx.complex64
    np.testing.assert_allclose(np.array(mx.exp(AsFloat())), np.exp(np.complex64(2.5)), rtol=1e-6)
    assert mx.abs(AsFloat()).dtype == mx.float32
    assert mx.full((2,), AsFloat()).dtype == mx.complex64
    w = mx.where(b > 1, b, AsFloat())
    np.testing.assert_allclose(np.array(w), [2.5, 2.0])
    # a setitem / at[] update takes the array's dtype
    b[0] = AsFloat()
    assert b.dtype == mx.float32 and b.tolist() == [2.5, 2.0]
    assert b.at[1].add(AsFloat()).tolist() == [2.5, 4.5]


def test_number_like_errors():
    b = mx.array([1.0, 2.0])
    # mx.array itself refuses them, naming the class with its module
    with pytest.raises(ValueError, match=r"Invalid type .*AsFloat received in array init"):
        mx.array(AsFloat())
    with pytest.raises(ValueError, match=r"Invalid type .*AsFloat received"):
        mx.array([AsFloat()])
    with pytest.raises(ValueError, match=r"Floating point types not allowed with bitwise and"):
        mx.array([1, 2]) & AsFloat()
    with pytest.raises(ValueError, match=r"\[remainder\] Complex type not supported"):
        b % AsFloat()
    with pytest.raises(TypeError):
        b @ AsFloat()
    # a conversion that raises makes the object a non-operand
    with pytest.raises(ValueError, match=r"Cannot perform addition on an .*array and .*Raising"):
        b + Raising()
    with pytest.raises(ValueError, match=r"Cannot perform addition on an .*array and object"):
        b + object()
    assert (b == object()) is False


@needs_oracle
def test_number_like_against_mlx():
    a = np.array([1.0, 2.0], np.float32)
    for make, _ in NUMBER_LIKE:
        for op in OPS:
            ours = op(mx.array(a), make())
            theirs = op(mlx_ref.array(a), make())
            assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
            np.testing.assert_allclose(np.array(ours), np.array(theirs), rtol=1e-6)
    for o in (AsFloat(), Raising(), object()):
        msgs = []
        for m in (mx, mlx_ref):
            with pytest.raises(Exception) as e:
                m.array(o) if not isinstance(o, Raising) else m.array([1.0]) + o
            msgs.append((type(e.value), str(e.value).replace("cmlx.", "mlx.")))
        assert msgs[0] == msgs[1]


# ---------------------------------------------------------------- scripts/api_diff.py

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _api_diff():
    spec = importlib.util.spec_from_file_location(
        "api_diff", os.path.join(ROOT, "scripts", "api_diff.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_api_diff_reports_missing_names_and_signatures():
    ad = _api_diff()
    theirs, ours = types.ModuleType("mlx.fake"), types.ModuleType("cmlx.fake")

    def f(a, b=1, *, c=None):
        pass

    def g(a, b=2, *, c=None):
        pass

    def h(x, /, y):
        pass

    class K:
        def m(self, q=0):
            pass

    class L:
        def m(self, q=0):
            pass

    for fn in (f, g, h):
        fn.__module__ = "mlx.fake"
    theirs.f, theirs.h, theirs.K = f, h, K
    ours.f, ours.K = g, L
    K.__module__ = L.__module__ = "mlx.fake"
    theirs.nodoc = object()
    report = []
    ad.compare(theirs, ours, "mlx.fake", report, set())
    keys = {(k, n) for k, n, _ in report}
    assert ("signature", "mlx.fake.f") in keys and ("missing", "mlx.fake.h") in keys
    assert ("missing", "mlx.fake.nodoc") in keys and not any("K" in n for _, n in keys)
    # nanobind-style docstring signatures: names, kinds and defaults
    assert ad.params_from_text("a: array, /, k: int = 0, *, stream: Stream | None = None") == [
        ("a", "pos_only", None), ("k", "pos_or_kw", "0"), ("stream", "kw_only", "None")]
    assert ad.params_from_text("v: Annotated[int, x=1] = 3")[0] == ("v", "pos_or_kw", "3")


@needs_oracle
def test_api_diff_check_passes_with_the_allowlist():
    if not mx.__name__.startswith("cmlx"):
        pytest.skip("compares cmlx with MLX")
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(mx.__file__)))
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "api_diff.py"), "--check",
                        os.path.join(ROOT, "scripts", "api", "api_diff_allow.txt")],
                       capture_output=True, text=True, timeout=240,
                       env=dict(os.environ, PYTHONPATH=pkg))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "api_diff:" in r.stdout


def test_array_like_is_a_marker_as_in_mlx():
    # the name exists for annotations; it wraps without converting, an
    # array is no instance of it, and an array cannot be made from one
    assert mx.ArrayLike.__module__ == mx.__name__
    w = mx.ArrayLike(3)
    assert not isinstance(mx.ones(2), mx.ArrayLike)
    with pytest.raises(ValueError, match="Invalid type"):
        mx.array(w)
    with pytest.raises(TypeError):
        mx.ArrayLike()
