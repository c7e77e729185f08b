"""``Module``: the base class of every layer (mirrors ``mlx.nn.Module``).

A module is a ``dict`` whose items are its arrays, sub-modules and the lists or
dicts that nest them; plain attributes (numbers, strings, functions, ``None``)
live in the object's ``__dict__`` instead.  Keys starting with ``_`` are never
parameters.  ``_no_grad`` holds the names of the frozen members.
"""

from __future__ import annotations

import textwrap
from typing import Any, Callable, List, Optional, Tuple, Union

from ... import core as mx
from ...utils import tree_flatten, tree_unflatten

__all__ = ["Module"]


def _keep_all(value):
    return value


def _not_container(module, key, value):
    return not isinstance(value, (Module, dict, list))


class Module(dict):
    """Base class of neural network layers and models.

    Arrays, sub-modules and nested lists/dicts of them assigned as attributes
    become the module's members; :meth:`parameters` collects the arrays.
    Members named in the frozen set (:meth:`freeze`) are excluded from
    :meth:`trainable_parameters` and therefore from gradients.
    """

    __call__: Callable

    def __init__(self):
        self._no_grad = set()
        self._training = True

    # ------------------------------------------------------------------
    # attribute access
    # ------------------------------------------------------------------
    @property
    def training(self):
        """``True`` in training mode (see :meth:`train`, :meth:`eval`)."""
        return self._training

    @property
    def state(self):
        """The module itself: a live dict of every member."""
        return self

    def __getattr__(self, key: str):
        value = self.get(key, None)
        if value is not None:
            return value
        # raises AttributeError with Python's usual message
        return super().__getattribute__(key)

    def __setattr__(self, key: str, val: Any):
        if isinstance(val, (mx.array, dict, list, tuple)):
            # a plain attribute of that name would shadow the item
            if key in self.__dict__:
                object.__delattr__(self, key)
            self[key] = val
        else:
            super().__setattr__(key, val)
            self.pop(key, None)

    def __delattr__(self, name):
        if self.get(name, None) is not None:
            del self[name]
        else:
            super().__delattr__(name)

    def _extra_repr(self) -> str:
        return ""

    def __repr__(self):
        children = tree_flatten(self.children(), is_leaf=self.is_module)
        lines = [f"{type(self).__name__}({self._extra_repr()}"]
        for k, v in children:
            lines.append(textwrap.indent(f"({k}): {v!r}", prefix="  "))
        return "\n".join(lines) + ("\n)" if children else ")")

    # ------------------------------------------------------------------
    # weights on disk
    # ------------------------------------------------------------------
    def load_weights(
        self,
        file_or_weights: Union[str, List[Tuple[str, "mx.array"]]],
        strict: bool = True,
    ) -> "Module":
        """Loads weights from a ``.npz`` / ``.safetensors`` file or a list of
        ``(name, array)`` pairs.  With ``strict`` the names must be exactly
        the model's parameters and the shapes must match."""
        weights = file_or_weights
        if isinstance(weights, str):
            weights = list(mx.load(weights).items())
        if strict:
            given = dict(weights)
            current = tree_flatten(self.parameters(), destination={})
            extras = given.keys() - current.keys()
            if extras:
                names = ",\n".join(sorted(extras))
                raise ValueError(f"Received {len(extras)} parameters not in model: \n{names}.")
            missing = current.keys() - given.keys()
            if missing:
                names = ",\n".join(sorted(missing))
                raise ValueError(f"Missing {len(missing)} parameters: \n{names}.")
            for name, old in current.items():
                new = given[name]
                if not isinstance(new, mx.array):
                    raise ValueError(
                        f"Expected mx.array but received {type(new)} for parameter {name}"
                    )
                if new.shape != old.shape:
                    raise ValueError(
                        f"Expected shape {old.shape} but received "
                        f"shape {new.shape} for parameter {name}"
                    )
        if len(weights) != 0:
            self.update(tree_unflatten(list(weights)), strict=False)
        return self

    def save_weights(self, file: str):
        """Saves the parameters to ``file``: ``.npz`` (:func:`savez`) or
        ``.safetensors`` (:func:`save_safetensors`), chosen by extension."""
        flat = tree_flatten(self.parameters(), destination={})
        if file.endswith(".npz"):
            mx.savez(file, **flat)
        elif file.endswith(".safetensors"):
            mx.save_safetensors(file, flat)
        else:
            raise ValueError(
                f"Unsupported file extension for {file}. Use '.npz' or '.safetensors'."
            )

    # ------------------------------------------------------------------
    # filters
    # ------------------------------------------------------------------
    @staticmethod
    def is_module(value):
        return isinstance(value, Module)

    @staticmethod
    def valid_child_filter(module, key, value):
        return isinstance(value, (dict, list))

    @staticmethod
    def valid_parameter_filter(module, key, value):
        return isinstance(value, (dict, list, mx.array)) and not key.startswith("_")

    @staticmethod
    def trainable_parameter_filter(module, key, value):
        return Module.valid_parameter_filter(module, key, value) and key not in module._no_grad

    def filter_and_map(
        self,
        filter_fn: Callable[["Module", str, Any], bool],
        map_fn: Optional[Callable] = None,
        is_leaf_fn: Optional[Callable[["Module", str, Any], bool]] = None,
    ):
        """The members selected by ``filter_fn(module, key, value)``,
        recursively, as nested dicts and lists; leaves (``is_leaf_fn``,
        default: anything but modules, dicts and lists) go through
        ``map_fn``."""
        return _select(self, filter_fn, map_fn or _keep_all, is_leaf_fn or _not_container)

    def parameters(self):
        """Every array member, recursively, as nested dicts and lists."""
        return self.filter_and_map(self.valid_parameter_filter)

    def trainable_parameters(self):
        """The array members that are not frozen."""
        return self.filter_and_map(self.trainable_parameter_filter)

    def children(self):
        """The direct sub-modules (in their nesting of lists and dicts)."""
        return self.filter_and_map(
            self.valid_child_filter, is_leaf_fn=lambda m, k, v: isinstance(v, Module)
        )

    def leaf_modules(self):
        """The sub-modules that hold no other module."""

        def is_leaf_module(m, k, v):
            return isinstance(v, Module) and len(tree_flatten(v.children())) == 0

        return self.filter_and_map(self.valid_child_filter, is_leaf_fn=is_leaf_module)

    # ------------------------------------------------------------------
    # updates
    # ------------------------------------------------------------------
    def update(self, parameters: dict, strict: bool = True) -> "Module":
        """Replaces the arrays found at the places of ``parameters`` (a full or
        partial tree like :meth:`parameters`).  With ``strict`` every place
        must exist and hold an array where the module holds one."""
        _update_parameters(self, parameters, strict)
        return self

    def apply(
        self,
        map_fn: Callable[["mx.array"], "mx.array"],
        filter_fn: Optional[Callable[["Module", str, Any], bool]] = None,
    ) -> "Module":
        """Maps the selected parameters (default: all) with ``map_fn`` and
        stores the results in place."""
        self.update(self.filter_and_map(filter_fn or Module.valid_parameter_filter, map_fn))
        return self

    def update_modules(self, modules: dict, strict: bool = True) -> "Module":
        """Like :meth:`update`, for sub-modules: replaces the modules found at
        the places of ``modules``."""
        _update_children(self, modules, strict)
        return self

    def apply_to_modules(self, apply_fn: Callable[[str, "Module"], Any]) -> "Module":
        """Calls ``apply_fn(path, module)`` on this module and every
        sub-module (paths are dotted, ``""`` for this one)."""
        pending = [("", self)]
        while pending:
            path, module = pending.pop()
            apply_fn(path, module)
            prefix = "." + path if path else ""
            pending.extend(tree_flatten(module.children(), prefix=prefix, is_leaf=self.is_module))
        return self

    def modules(self):
        """A list of this module and all its sub-modules."""
        found = []
        self.apply_to_modules(lambda path, m: found.append(m))
        return found

    def named_modules(self):
        """A list of ``(dotted path, module)`` for this module and all its
        sub-modules."""
        found = []
        self.apply_to_modules(lambda path, m: found.append((path, m)))
        return found

    # ------------------------------------------------------------------
    # freezing and modes
    # ------------------------------------------------------------------
    def _validate_keys(self, keys, strict):
        keys = keys if isinstance(keys, list) else [keys]
        if strict:
            for k in keys:
                if k not in self:
                    raise KeyError(f"Module doesn't contain member {k}.")
        return keys

    def _validate_keys_recursive(self, keys):
        # a key such as "bias" must exist somewhere in the model, not in
        # every sub-module
        keys = keys if isinstance(keys, list) else [keys]
        modules = self.modules()
        for k in keys:
            if not any(k in m for m in modules):
                raise KeyError(f"Module doesn't contain member {k}.")

    def _for_self_or_all(self, fn, recurse, keys, strict):
        if recurse:
            if strict and keys is not None:
                self._validate_keys_recursive(keys)
                strict = False
            self.apply_to_modules(lambda _, m: fn(m, strict))
        else:
            fn(self, strict)
        return self

    def freeze(
        self,
        *,
        recurse: bool = True,
        keys: Optional[Union[str, List[str]]] = None,
        strict: bool = False,
    ) -> "Module":
        """Freezes the parameters named ``keys`` (default: all of them), in
        the sub-modules too with ``recurse``; ``strict`` checks the keys
        exist.  Frozen parameters get no gradients."""

        def freeze_one(m, strict):
            names = keys
            if names is None:
                own = m.filter_and_map(
                    lambda mm, k, v: not isinstance(v, Module)
                    and mm.valid_parameter_filter(mm, k, v)
                )
                names = [k for k, _ in tree_flatten(own)]
            m._no_grad.update(m._validate_keys(names, strict))

        return self._for_self_or_all(freeze_one, recurse, keys, strict)

    def unfreeze(
        self,
        *,
        recurse: bool = True,
        keys: Optional[Union[str, List[str]]] = None,
        strict: bool = False,
    ) -> "Module":
        """Unfreezes the parameters named ``keys`` (default: all), see
        :meth:`freeze`."""

        def unfreeze_one(m, strict):
            if keys is None:
                m._no_grad.clear()
            else:
                m._no_grad.difference_update(m._validate_keys(keys, strict))

        return self._for_self_or_all(unfreeze_one, recurse, keys, strict)

    def _set_training_mode(self, mode: bool) -> None:
        self._training = mode

    def train(self, mode: bool = True) -> "Module":
        """Sets training mode (``mode=True``) or evaluation mode on this
        module and every sub-module."""
        self.apply_to_modules(lambda _, m: m._set_training_mode(mode))
        return self

    def eval(self) -> "Module":
        """Evaluation mode: ``train(False)``."""
        return self.train(False)

    def set_dtype(
        self,
        dtype: "mx.Dtype",
        predicate: Optional[Callable[["mx.Dtype"], bool]] = lambda t: mx.issubdtype(t, mx.floating),
    ):
        """Casts the parameters whose dtype satisfies ``predicate`` (default:
        floating point ones; ``None``: all) to ``dtype``."""
        if predicate is None:
            predicate = lambda _: True  # noqa: E731
        self.apply(lambda x: x.astype(dtype) if predicate(x.dtype) else x)


def _type_error(value):
    return ValueError(f"Received invalid type: {type(value).__name__}.")


def _matching_places(dst, src, strict, what):
    """The ``(key, new value)`` pairs of ``src`` (a dict or list tree) that
    exist in ``dst``; with ``strict`` a missing place is an error."""
    if isinstance(src, dict):
        places = []
        for k in src:
            if k in dst:
                places.append((k, src[k]))
            elif strict:
                raise ValueError(f'Module does not have {what} named "{k}".')
        return places
    if isinstance(src, list):
        if strict and len(src) > len(dst):
            raise ValueError(
                f"List index {len(dst)} is out of bounds for destination of length {len(dst)}."
            )
        return list(enumerate(src[: len(dst)]))
    if strict:
        raise _type_error(src)
    return []


def _update_parameters(dst, src, strict):
    for k, new in _matching_places(dst, src, strict, "parameter"):
        old = dst[k]
        if isinstance(old, mx.array):
            if strict and not isinstance(new, mx.array):
                raise _type_error(new)
            dst[k] = new
        else:
            _update_parameters(old, new, strict)


def _update_children(dst, src, strict):
    for k, new in _matching_places(dst, src, strict, "sub-module"):
        old = dst[k]
        if isinstance(old, Module) and isinstance(new, Module):
            dst[k] = new
        elif isinstance(old, (dict, list)):
            _update_children(old, new, strict)
        elif strict and new != {}:
            raise _type_error(new)


def _select(module, filter_fn, map_fn, is_leaf_fn):
    return {
        k: _select_value(module, k, v, filter_fn, map_fn, is_leaf_fn)
        for k, v in module.items()
        if filter_fn(module, k, v)
    }


def _select_value(owner, key, value, filter_fn, map_fn, is_leaf_fn):
    if is_leaf_fn(owner, key, value):
        return map_fn(value)
    if isinstance(value, Module):
        return _select(value, filter_fn, map_fn, is_leaf_fn)
    if isinstance(value, (dict, list)):
        # inside plain containers the owner stays the module and the key is
        # the dotted path below it; dropped entries become {} placeholders
        items = value.items() if isinstance(value, dict) else enumerate(value)
        out = {}
        for k, v in items:
            path = f"{key}.{k}"
            keep = filter_fn(owner, path, v)
            out[k] = _select_value(owner, path, v, filter_fn, map_fn, is_leaf_fn) if keep else {}
        return out if isinstance(value, dict) else list(out.values())
    raise RuntimeError("Unexpected leaf found while traversing the module")
