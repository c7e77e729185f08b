"""The pytree side of ``mx.compile`` (MLX 0.32's semantics).

A call flattens its arguments into arrays and a key of constants (the
tree's structure, ints, floats, strings, None), appends the arrays of the
captured ``inputs`` state, and hands both to the core's trace cache
(``cmlx.core._Compiled``). On a miss the function runs once on
placeholders: captured inputs hold the placeholders meanwhile, and the
output structure is kept with the trace. Afterwards the captured
``outputs`` state receives the new arrays. Installed into ``cmlx.core``
by ``cmlx/__init__.py``.
"""

import functools
import struct

from . import core as _core
from ._transforms import (_MISSING, _bind, _flatten, _new_tuple, _signature_error, _signed, _unflatten,
                          _update, _update_copy)

_array = _core.array

__all__ = ["compile", "disable_compile", "enable_compile"]

_COMPILE_SIG = (
    "compile(fun: Callable[P, R], inputs: object | None = None, outputs: object | None = None, "
    "shapeless: bool = False) -> Callable[P, R]"
)

# Markers of the structure in the constants key (large primes, as MLX picks,
# so that they rarely coincide with a constant's value).
_ARRAY, _LIST, _DICT, _NONE = (
    18446744073709551557, 18446744073709551533, 18446744073709551521, 10239356951478402889)
_MASK = (1 << 64) - 1


def _key(tree, arrays, constants):
    if isinstance(tree, _array):
        arrays.append(tree)
        constants.append(_ARRAY)
    elif isinstance(tree, (list, tuple)):
        constants.append(_LIST)
        for t in tree:
            _key(t, arrays, constants)
    elif isinstance(tree, dict):
        constants.append(_DICT)
        for k, v in tree.items():
            constants.append(hash(k) & _MASK)
            _key(v, arrays, constants)
    elif isinstance(tree, str):
        constants.append(hash(tree) & _MASK)
    elif isinstance(tree, int):
        constants.append(tree & _MASK)
    elif isinstance(tree, float):
        constants.append(struct.unpack("<Q", struct.pack("<d", tree))[0])  # the bits
    elif tree is None:
        constants.append(_NONE)
    else:
        raise ValueError(
            "[compile] Function arguments must be trees of arrays or constants (floats, ints, "
            f"strings, or None), but received type {type(tree).__module__}."
            f"{type(tree).__qualname__}.".replace("builtins.", ""))


def _is_random_state(obj):
    return type(obj).__name__ == "_RandomState"


def _state_arrays(tree):
    """The arrays of captured state (other leaves are ignored, as MLX's
    non-strict flatten); mx.random.state counts as the list of its key."""
    if _is_random_state(tree):
        return [tree[0]]
    if isinstance(tree, (list, tuple)):
        return [a for t in tree for a in _state_arrays(t)]
    if isinstance(tree, dict):
        return [a for t in tree.values() for a in _state_arrays(t)]
    return [tree] if isinstance(tree, _array) else []


def _fill(tree, values):
    """Put values, in order, in place of the arrays of captured state."""
    _fill_from(tree, iter(values))


# The tree walkers are module functions, not closures that call
# themselves: a nested recursive function is a reference cycle holding
# its arrays until the garbage collector runs, so every compiled call's
# outputs would stay resident long after the caller dropped them.
def _fill_from(t, it):
    if _is_random_state(t):
        t[0] = next(it)
        return t
    if isinstance(t, list):
        for i in range(len(t)):
            t[i] = _fill_from(t[i], it)
        return t
    if isinstance(t, tuple):  # rebuilt, as MLX's tree helpers do
        return _new_tuple(t, [_fill_from(x, it) for x in t])
    if isinstance(t, dict):
        for k in t:
            t[k] = _fill_from(t[k], it)
        return t
    return next(it) if isinstance(t, _array) else t


def _structure(tree):
    """(arrays, template): the template is tree with each array replaced
    by the marker _MISSING, to rebuild it from new arrays."""
    return _flatten(tree, False, []), _update_copy(tree, lambda _: _MISSING)


def _rebuild(template, values):
    return _build(template, iter(values))


def _build(t, it):
    if t is _MISSING:
        return next(it)
    if isinstance(t, list):
        return [_build(x, it) for x in t]
    if isinstance(t, tuple):
        return _new_tuple(t, [_build(x, it) for x in t])
    if isinstance(t, dict):
        return {k: _build(v, it) for k, v in t.items()}
    return t


class _CompiledFunction:
    def __init__(self, fun, inputs, outputs, shapeless):
        self._fun = fun
        self._inputs = inputs
        self._outputs = outputs
        self._cache = _core._Compiled(bool(shapeless))
        functools.update_wrapper(self, fun)

    def __get__(self, obj, objtype=None):  # a compiled method binds like a function
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args, **kwargs):
        if _core._compile_mode() == 0:
            return self._fun(*args, **kwargs)
        arrays, constants = [], []
        _key(args, arrays, constants)
        num_args = len(arrays)
        _key(kwargs, arrays, constants)
        num_flat = len(arrays)
        captured_in = _state_arrays(self._inputs) if self._inputs is not None else []
        found = {}

        def traced(*tracers):
            tracers = list(tracers)
            if captured_in:
                _fill(self._inputs, tracers[num_flat:])
            try:
                a = _unflatten(args, tracers[:num_args])
                k = _unflatten(kwargs, tracers[num_args:num_flat])
                flat_out, template = _structure(self._fun(*a, **k))
                found["structure"] = (template, len(flat_out))
                if self._outputs is not None:
                    flat_out = flat_out + _state_arrays(self._outputs)
            finally:
                if captured_in:
                    # tracers the function left in place go back to the
                    # originals (MLX's tree_replace, by identity)
                    back = {id(t): o for t, o in zip(tracers[num_flat:], captured_in)}
                    self._restore(back)
            return flat_out

        outs, (template, num_out) = self._cache.call(
            traced, arrays + captured_in, constants, lambda: found["structure"])
        if self._outputs is not None:
            _fill(self._outputs, outs[num_out:])
        return _rebuild(template, outs[:num_out])

    def _restore(self, back):
        if _is_random_state(self._inputs):
            k = self._inputs[0]
            if id(k) in back:
                self._inputs[0] = back[id(k)]
            return
        _update(self._inputs, lambda a: back.get(id(a), a))


@_signed(_COMPILE_SIG)
def compile(*args, **kwargs):
    """Return a compiled version of ``fun``: traced once per distinct input
    signature (dtypes, shapes and constant arguments), then replayed
    without calling ``fun`` again. ``inputs`` and ``outputs`` are trees
    (lists, dicts, modules, ``mx.random.state``) of implicit state the
    function reads and writes."""
    fun, inputs, outputs, shapeless = _bind(
        "compile", _COMPILE_SIG,
        [("fun", _MISSING), ("inputs", None), ("outputs", None), ("shapeless", False)],
        args, kwargs)
    if not callable(fun):
        _signature_error("compile", _COMPILE_SIG, args, kwargs)
    return _CompiledFunction(fun, inputs, outputs, shapeless)


def disable_compile():
    """Make compiled functions run uncompiled (MLX_DISABLE_COMPILE does the same)."""
    _core._set_compile_mode(0)


def enable_compile():
    """Undo disable_compile (and MLX_DISABLE_COMPILE)."""
    _core._set_compile_mode(3)


def _install():
    for name in __all__:
        obj = globals()[name]
        obj.__module__ = "cmlx.core"
        setattr(_core, name, obj)


_install()
