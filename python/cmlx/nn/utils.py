"""Transformations of functions of a module's parameters: value_and_grad,
checkpoint, average_gradients, clip_grad_norm_sharded."""

from functools import wraps
from typing import Any, Callable, Optional

from .. import core as mx
from ..utils import tree_flatten, tree_map, tree_reduce, tree_unflatten
from .layers.base import Module  # noqa: F401  (importable from here, as in MLX)


def _with_parameters(model, fn):
    """``fn`` as a function of the model's trainable parameters first."""

    def inner(params, *args, **kwargs):
        model.update(params)
        return fn(*args, **kwargs)

    return inner


def value_and_grad(model, fn: Callable):
    """Wraps ``fn`` (which calls ``model``) to return ``(value, grads)``
    with the gradients taken with respect to ``model``'s trainable
    parameters (as a tree like :meth:`Module.trainable_parameters`)."""
    vg = mx.value_and_grad(_with_parameters(model, fn))

    @wraps(fn)
    def wrapped(*args, **kwargs):
        return vg(model.trainable_parameters(), *args, **kwargs)

    return wrapped


def checkpoint(module, fn: Optional[Callable] = None):
    """``fn`` (default: the module itself) under :func:`mlx.core.checkpoint`:
    its intermediates are recomputed in the backward pass instead of
    stored."""
    if fn is None:
        fn = module
    ck = mx.checkpoint(_with_parameters(module, fn))

    @wraps(fn)
    def wrapped(*args, **kwargs):
        return ck(module.trainable_parameters(), *args, **kwargs)

    return wrapped


def _group_size(group):
    if group is not None:
        return group.size()
    dist = getattr(mx, "distributed", None)
    if dist is None:
        return 1  # no distributed backend: a single process
    return dist.init().size()


def average_gradients(
    gradients: Any,
    group=None,
    all_reduce_size: int = 32 * 1024**2,
    communication_stream=None,
):
    """Averages ``gradients`` over the processes of ``group`` (default: the
    global group).  With one process (always the case without
    ``mx.distributed``) the gradients come back unchanged."""
    n = _group_size(group)
    if n == 1:
        return gradients
    dist = mx.distributed
    group = group or dist.init()

    def all_mean(x):
        return dist.all_sum(x, group=group, stream=communication_stream) / n

    if all_reduce_size <= 0:
        return tree_map(all_mean, gradients)
    flat = tree_flatten(gradients)
    if not flat:
        return gradients
    dtypes = {g.dtype for _, g in flat}
    if len(dtypes) != 1:
        return average_gradients(gradients, group, 0, communication_stream)
    itemsize = flat[0][1].dtype.size
    # concatenate consecutive gradients into buckets of about all_reduce_size
    buckets, bucket, nbytes = [], [], 0
    for i, (_, g) in enumerate(flat):
        bucket.append(i)
        nbytes += g.size * itemsize
        if nbytes >= all_reduce_size:
            buckets.append(bucket)
            bucket, nbytes = [], 0
    if bucket:
        buckets.append(bucket)
    out = []
    for bucket in buckets:
        big = all_mean(mx.concatenate([flat[i][1].reshape(-1) for i in bucket]))
        offsets, total = [], 0
        for i in bucket[:-1]:
            total += flat[i][1].size
            offsets.append(total)
        for i, part in zip(bucket, mx.split(big, offsets)):
            out.append((flat[i][0], part.reshape(flat[i][1].shape)))
    return tree_unflatten(out)


def clip_grad_norm_sharded(gradients: Any, max_norm: float, group=None):
    """Clips the global norm of gradients sharded over ``group`` (default:
    the global group): the local squared norms are summed over the group,
    and every shard is scaled by ``min(max_norm / (norm + 1e-6), 1)``.
    Returns ``(clipped_gradients, norm)``."""
    local = tree_reduce(lambda acc, g: acc + g.square().sum(), gradients, 0.0)
    norm = mx.sqrt(mx.distributed.all_sum(local, group=group))
    scale = mx.minimum(max_norm / (norm + 1e-6), 1.0)
    return tree_map(lambda g: g * scale, gradients), norm
