"""Tensor-parallel linear layers (``mlx.nn`` names).

Each process holds a slice ("shard") of the weight: ``AllToSharded`` layers
split the outputs, ``ShardedToAll`` layers split the inputs and sum the
partial results over the group.  Without ``mx.distributed`` (or with a group
of one process) the shard is the whole weight and the collectives are the
identity, so these layers compute exactly what :class:`Linear` and
:class:`QuantizedLinear` compute.
"""

import math
from functools import lru_cache
from typing import Callable, Optional, Union

from ... import core as mx
from ...utils import tree_flatten, tree_map_with_path, tree_unflatten
from .base import Module
from .linear import Linear
from .quantized import _quantized_matmul

__all__ = [
    "AllToShardedLinear",
    "ShardedToAllLinear",
    "QuantizedAllToShardedLinear",
    "QuantizedShardedToAllLinear",
    "FullyShardedModule",
    "fully_shard",
    "shard_linear",
    "shard_inplace",
    "sum_gradients",
]


def _group(group=None):
    return group if group is not None else mx.distributed.init()


def _all_sum(x, group):
    if group.size() == 1:
        return x
    return mx.distributed.all_sum(x, group=group)


@lru_cache
def sum_gradients(group):
    """Identity forward; in the backward pass the cotangent is summed over
    the group.  Cached per group, as MLX's is, so that models calling it in
    every forward pass reuse one custom function."""
    if group.size() == 1:
        return lambda x: x

    @mx.custom_function
    def f(x):
        return x

    @f.vjp
    def f(x, dx, _):
        return mx.distributed.all_sum(dx, group=group)

    return f


def _split(weight, segments, axis):
    if isinstance(segments, int) or isinstance(segments[0], int):
        return mx.split(weight, segments, axis=axis)
    n = weight.shape[axis]
    return mx.split(weight, [int(s * n) for s in segments], axis=axis)


def _shard(parameters: dict, sharding_predicate: Callable, group=None):
    """This process's part of each array of ``parameters``:
    ``sharding_predicate(path, array)`` gives the axis (or ``(axis,
    segments)``, or ``None`` to keep the array whole)."""
    group = _group(group)
    n, r = group.size(), group.rank()

    def shard_one(path, weight):
        if not isinstance(weight, mx.array):
            return weight
        how = sharding_predicate(path, weight)
        if how is None:
            return weight
        if isinstance(how, int):
            axis, segments = how, 1
        elif isinstance(how, tuple):
            axis, segments = how
        else:
            raise ValueError("The sharding function should return int or tuple[int, list]")
        parts = [_split(seg, n, axis)[r] for seg in _split(weight, segments, axis)]
        return mx.contiguous(mx.concatenate(parts, axis=axis))

    return tree_map_with_path(shard_one, parameters)


def _all_to_sharded(segments):
    def how(path, weight):
        if path.endswith("bias"):
            return (-1, segments)
        return (max(weight.ndim - 2, 0), segments)

    return how


def _sharded_to_all(segments):
    def how(path, weight):
        return None if path.endswith("bias") else (-1, segments)

    return how


def _check_sharding(sharding):
    if sharding not in ("all-to-sharded", "sharded-to-all"):
        raise ValueError(
            f"Sharding type sharding={sharding!r} not supported, choose one of "
            "'all-to-sharded' or 'sharded-to-all'"
        )


def shard_inplace(module: Module, sharding: Union[str, Callable], *, segments=1, group=None):
    """Replaces ``module``'s parameters by this process's shards."""
    if isinstance(sharding, str):
        _check_sharding(sharding)
        sharding = (
            _all_to_sharded(segments) if sharding == "all-to-sharded" else _sharded_to_all(segments)
        )
    module.update(_shard(module.parameters(), sharding, group))


def shard_linear(module: Module, sharding: str, *, segments=1, group=None):
    """The sharded counterpart of a :class:`Linear` or
    :class:`QuantizedLinear`."""
    _check_sharding(sharding)
    plain = isinstance(module, Linear)
    if sharding == "all-to-sharded":
        cls = AllToShardedLinear if plain else QuantizedAllToShardedLinear
    else:
        cls = ShardedToAllLinear if plain else QuantizedShardedToAllLinear
    make = cls.from_linear if plain else cls.from_quantized_linear
    return make(module, segments=segments, group=group)


def _uniform(input_dims, shape):
    scale = math.sqrt(1.0 / input_dims)
    return mx.random.uniform(low=-scale, high=scale, shape=shape)


def _divisible(size, n, message):
    if size % n != 0:
        raise ValueError(message)
    return size // n


class AllToShardedLinear(Module):
    """A :class:`Linear` whose outputs are split over the group."""

    def __init__(self, input_dims: int, output_dims: int, bias: bool = True, group=None):
        super().__init__()
        self.group = _group(group)
        n = self.group.size()
        out = _divisible(
            output_dims, n, f"Cannot shard the output of size {output_dims} across {n} devices."
        )
        self.weight = _uniform(input_dims, (out, input_dims))
        if bias:
            self.bias = _uniform(input_dims, (out,))

    def _extra_repr(self) -> str:
        out_dims, in_dims = self.weight.shape
        return (
            f"input_dims={in_dims}, output_dims={out_dims * self.group.size()}, "
            f"bias={'bias' in self}"
        )

    def __call__(self, x):
        x = sum_gradients(self.group)(x)
        if "bias" in self:
            return mx.addmm(self["bias"], x, self["weight"].T)
        return x @ self["weight"].T

    @classmethod
    def from_linear(cls, linear_layer: Module, *, segments=1, group=None):
        group = _group(group)
        out_dims, in_dims = linear_layer.weight.shape
        layer = cls(in_dims, out_dims, hasattr(linear_layer, "bias"), group)
        layer.update(_shard(linear_layer.parameters(), _all_to_sharded(segments), group))
        return layer


class ShardedToAllLinear(Module):
    """A :class:`Linear` whose inputs are split over the group; the partial
    products are summed."""

    def __init__(self, input_dims: int, output_dims: int, bias: bool = True, group=None):
        super().__init__()
        self.group = _group(group)
        n = self.group.size()
        inp = _divisible(
            input_dims, n, f"The input of size {input_dims} cannot be sharded across {n} devices."
        )
        self.weight = _uniform(input_dims, (output_dims, inp))
        if bias:
            self.bias = _uniform(input_dims, (output_dims,))

    def _extra_repr(self) -> str:
        out_dims, in_dims = self.weight.shape
        return (
            f"input_dims={in_dims * self.group.size()}, output_dims={out_dims}, "
            f"bias={'bias' in self}"
        )

    def __call__(self, x):
        x = _all_sum(x @ self["weight"].T, self.group)
        if "bias" in self:
            x = x + self["bias"]
        return x

    @classmethod
    def from_linear(cls, linear_layer: Module, *, segments=1, group=None):
        group = _group(group)
        out_dims, in_dims = linear_layer.weight.shape
        layer = cls(in_dims, out_dims, hasattr(linear_layer, "bias"), group)
        layer.update(_shard(linear_layer.parameters(), _sharded_to_all(segments), group))
        return layer


class _QuantizedSharded(Module):
    """Shared by the two quantized sharded layers; ``_outputs_sharded``
    says which side of the weight is split."""

    _outputs_sharded = True

    def __init__(
        self,
        input_dims: int,
        output_dims: int,
        bias: bool = True,
        group_size: int = 64,
        bits: int = 4,
        mode: str = "affine",
        group=None,
    ):
        super().__init__()
        self.group_size = group_size
        self.bits = bits
        self.mode = mode
        self.group = _group(group)
        n = self.group.size()
        if self._outputs_sharded:
            out = _divisible(
                output_dims, n, f"Cannot shard the output of size {output_dims} across {n} devices."
            )
            shape = (out, input_dims)
        else:
            inp = _divisible(
                input_dims,
                n,
                f"The input of size {input_dims} cannot be sharded across {n} devices.",
            )
            shape = (output_dims, inp)
        w = _uniform(input_dims, shape)
        self.weight, self.scales, *biases = mx.quantize(w, group_size, bits, mode=mode)
        self.biases = biases[0] if biases else None
        if bias:
            self.bias = mx.zeros((shape[0],))
        self.freeze()

    def unfreeze(self, *args, **kwargs):
        super().unfreeze(*args, **kwargs)
        self.freeze(recurse=False)

    def _extra_repr(self) -> str:
        out_dims, packed = self.weight.shape
        in_dims = packed * 32 // self.bits
        if self._outputs_sharded:
            out_dims *= self.group.size()
        else:
            in_dims *= self.group.size()
        return (
            f"input_dims={in_dims}, output_dims={out_dims}, bias={'bias' in self}, "
            f"group_size={self.group_size}, bits={self.bits}, mode={self.mode}"
        )

    def __call__(self, x):
        if self._outputs_sharded:
            x = _quantized_matmul(self, sum_gradients(self.group)(x))
        else:
            x = _all_sum(_quantized_matmul(self, x), self.group)
        if "bias" in self:
            x = x + self["bias"]
        return x

    @classmethod
    def from_quantized_linear(cls, quantized_linear_layer: Module, *, segments=1, group=None):
        """The sharded counterpart of a :class:`QuantizedLinear`."""
        q = quantized_linear_layer
        group = _group(group)
        out_dims, packed = q.weight.shape
        layer = cls(
            packed * 32 // q.bits,
            out_dims,
            hasattr(q, "bias"),
            group_size=q.group_size,
            bits=q.bits,
            mode=getattr(q, "mode", "affine"),
            group=group,
        )
        how = _all_to_sharded if cls._outputs_sharded else _sharded_to_all
        layer.update(_shard(q.parameters(), how(segments), group))
        return layer


class QuantizedAllToShardedLinear(_QuantizedSharded):
    """A :class:`QuantizedLinear` whose outputs are split over the group."""


class QuantizedShardedToAllLinear(_QuantizedSharded):
    """A :class:`QuantizedLinear` whose inputs are split over the group; the
    partial products are summed."""

    _outputs_sharded = False


def _fsdp_filter(module, key, value):
    # a FullyShardedModule inside keeps its own shards
    if isinstance(value, FullyShardedModule):
        return False
    return Module.valid_parameter_filter(module, key, value)


def _fsdp_gatherer(group, full_shapes, compute_dtype):
    """A custom function from this rank's shards (axis 0 of each parameter,
    in order) to the full parameters.  The shards travel as one row per
    rank (all_gather stacks the rows), each parameter a run of columns;
    the gradient of a full parameter is reduce-scattered back the same way
    and averaged over the group."""
    n = group.size()
    shard_shapes = [(shape[0] // n,) + tuple(shape[1:]) for shape in full_shapes]
    sizes = [math.prod(shape) for shape in shard_shapes]
    bounds = [sum(sizes[: i + 1]) for i in range(len(sizes) - 1)]

    def cast(x, dtype):
        return x if dtype is None or x.dtype == dtype else x.astype(dtype)

    @mx.custom_function
    def gather(shards):
        row = mx.concatenate([cast(s.reshape(1, -1), compute_dtype) for s in shards], axis=1)
        rows = mx.distributed.all_gather(row, group=group)  # (n, sum(sizes))
        return [c.reshape(shape) for c, shape in zip(mx.split(rows, bounds, axis=1), full_shapes)]

    @gather.vjp
    def gather(shards, cotangents, _):
        rows = mx.concatenate([c.reshape(n, -1) for c in cotangents], axis=1)
        mine = mx.distributed.sum_scatter(rows, group=group) / n
        return [cast(c.reshape(shape), s.dtype)
                for c, shape, s in zip(mx.split(mine, bounds, axis=1), shard_shapes, shards)]

    return gather


class FullyShardedModule(Module):
    """Wraps a module so that each process of the group keeps a shard (a
    block of rows, axis 0) of every parameter (FSDP).  Each call gathers
    the full parameters from the group, runs the module and puts the shards
    back; in the backward pass the gradients are reduce-scattered, so the
    optimizer updates each process's own shard.  Every parameter's axis 0
    must divide by the group's size.  ``compute_dtype`` casts the gathered
    parameters for the call."""

    def __init__(self, module: Module, group=None, compute_dtype=None):
        super().__init__()
        group = _group(group)
        n = group.size()
        params = module.filter_and_map(_fsdp_filter)
        flat = tree_flatten(params)
        for path, a in flat:
            if a.ndim == 0:
                raise ValueError(f"Cannot shard parameter '{path}' because it is a scalar.")
            if a.shape[0] % n != 0:
                raise ValueError(
                    f"Cannot shard parameter '{path}' with shape {a.shape} "
                    f"across {n} devices: axis 0 must be divisible by {n}."
                )
        # plain attributes, not children or parameters of the module tree
        object.__setattr__(self, "_paths", [path for path, _ in flat])
        object.__setattr__(self, "_gather_fn",
                           _fsdp_gatherer(group, [a.shape for _, a in flat], compute_dtype))
        module.update(_shard(params, lambda path, w: 0, group))
        self.module = module

    def _extra_repr(self) -> str:
        return f"num_sharded_params={len(self._paths)}"

    def _with_full_parameters(self, fn, *args, **kwargs):
        shards = self.module.filter_and_map(_fsdp_filter)
        full = self._gather_fn([a for _, a in tree_flatten(shards)])
        self.module.update(tree_unflatten(list(zip(self._paths, full))))
        try:
            return fn(*args, **kwargs)
        finally:
            self.module.update(shards)

    def __call__(self, *args, **kwargs):
        return self._with_full_parameters(self.module, *args, **kwargs)

    def as_linear(self, *args, **kwargs):
        return self._with_full_parameters(self.module.as_linear, *args, **kwargs)


def fully_shard(module: Module, *, group=None, compute_dtype=None) -> Module:
    """Shards ``module``'s parameters over the group (FSDP); with a single
    process it returns ``module`` unchanged."""
    group = _group(group)
    if group.size() == 1 or isinstance(module, FullyShardedModule):
        return module
    wrapped = FullyShardedModule(module, group=group, compute_dtype=compute_dtype)
    return wrapped if wrapped._paths else module
