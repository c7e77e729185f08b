"""Helpers for the cmlx.nn / cmlx.optimizers tests.

``nn``/``optim`` are the subject's packages, ``ref_nn``/``ref_optim`` real
MLX's (None without the oracle).  :func:`same_weights` copies an MLX
module's parameters into ours so both compute on identical numbers.

``reference_ops`` temporarily gives the subject stand-ins, written with its
own basic ops, for ``mx.fast`` and ``mx.linalg.norm`` where those
namespaces are not built yet: this checks how the layers call them (shapes,
arguments, wiring) against MLX.  Where the real namespace exists it is left
alone, so the same tests then check the real kernels.
"""

import contextlib
import importlib
import math
import types

import numpy as np

from conftest import SUBJECT_NAME, mlx_ref, mx

_pkg = SUBJECT_NAME.split(".")[0]
nn = importlib.import_module(_pkg + ".nn")
optim = importlib.import_module(_pkg + ".optimizers")
utils = importlib.import_module(_pkg + ".utils")
ref_nn = importlib.import_module("mlx.nn") if mlx_ref is not None else None
ref_optim = importlib.import_module("mlx.optimizers") if mlx_ref is not None else None
ref_utils = importlib.import_module("mlx.utils") if mlx_ref is not None else None


def np_tree(tree):
    return utils.tree_map(lambda a: np.array(a), tree)


def to_ours(a):
    return mx.array(np.array(a))


def to_ref(a):
    return mlx_ref.array(np.array(a))


def same_weights(ref_module, our_module):
    """Loads ``ref_module``'s parameters (MLX) into ``our_module``."""
    flat = ref_utils.tree_flatten(ref_module.parameters())
    our_module.update(utils.tree_unflatten([(k, to_ours(v)) for k, v in flat]))
    return our_module


def assert_close(ours, ref, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np.array(ours), np.array(ref), rtol=rtol, atol=atol)


def assert_tree_close(ours, ref, rtol=1e-5, atol=1e-6):
    a = utils.tree_flatten(ours)
    b = ref_utils.tree_flatten(ref) if ref_utils is not None else utils.tree_flatten(ref)
    assert [k for k, _ in a] == [k for k, _ in b]
    for (k, x), (_, y) in zip(a, b):
        np.testing.assert_allclose(np.array(x), np.array(y), rtol=rtol, atol=atol, err_msg=k)


# --------------------------------------------------------------- stand-ins
def _layer_norm(x, weight, bias, eps):
    # statistics in float32, as MLX's kernel
    x32 = x.astype(mx.float32)
    mean = mx.mean(x32, axis=-1, keepdims=True)
    var = mx.var(x32, axis=-1, keepdims=True)
    y = ((x32 - mean) * mx.rsqrt(var + eps)).astype(x.dtype)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


def _rms_norm(x, weight, eps):
    y = x * mx.rsqrt(mx.mean(mx.square(x), axis=-1, keepdims=True) + eps)
    return y * weight if weight is not None else y


def _rope(x, dims, *, traditional, base, scale, offset, freqs=None):
    L = x.shape[-2]
    half = dims // 2
    inv = mx.exp(-mx.arange(half, dtype=mx.float32) * (math.log(base) / half))
    pos = (mx.arange(L, dtype=mx.float32) + offset) * scale
    theta = pos[:, None] * inv[None, :]
    cos, sin = mx.cos(theta), mx.sin(theta)
    rot, rest = x[..., :dims], x[..., dims:]
    if traditional:
        a, b = rot[..., 0::2], rot[..., 1::2]
        ra, rb = a * cos - b * sin, a * sin + b * cos
        out = mx.stack([ra, rb], axis=-1).reshape(rot.shape)
    else:
        a, b = rot[..., :half], rot[..., half:]
        out = mx.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)
    out = out.astype(x.dtype)
    return mx.concatenate([out, rest], axis=-1) if rest.shape[-1] else out


def _sdpa(q, k, v, *, scale, mask=None):
    s = (q * scale) @ k.swapaxes(-1, -2)
    if mask is not None:
        if mask.dtype == mx.bool_:
            s = mx.where(mask, s, mx.finfo(s.dtype).min)
        else:
            s = s + mask
    return mx.softmax(s, axis=-1, precise=True) @ v


def _norm(x, ord=None, axis=None, keepdims=False):
    return mx.sqrt(mx.sum(mx.square(x), axis=axis, keepdims=keepdims))


@contextlib.contextmanager
def reference_ops():
    added = []
    if not hasattr(mx, "fast"):
        mx.fast = types.SimpleNamespace(
            layer_norm=_layer_norm,
            rms_norm=_rms_norm,
            rope=_rope,
            scaled_dot_product_attention=_sdpa,
        )
        added.append("fast")
    if not hasattr(mx, "linalg"):
        mx.linalg = types.SimpleNamespace(norm=_norm)
        added.append("linalg")
    try:
        yield
    finally:
        for name in added:
            delattr(mx, name)
