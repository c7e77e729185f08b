"""The pytree side of cmlx's function transformations.

``grad``, ``value_and_grad``, ``vmap``, ``checkpoint`` and ``custom_function``
are MLX's Python-level transformations: they flatten nested lists, tuples and
dicts of arrays into flat lists, run the core's engines on those (``vjp``,
``_vmap_trace``/``_vmap_replace`` and ``_custom_function`` in ``cmlx.core``),
and put the results back into the caller's structure.  The behaviour, error
types and messages follow MLX 0.32.  Everything here is installed into
``cmlx.core`` by ``cmlx/__init__.py``; use it as ``mx.grad`` and so on.
"""

from . import core as _core

_array = _core.array

__all__ = ["grad", "value_and_grad", "vmap", "checkpoint", "custom_function"]

_GRAD_SIG = (
    "grad(fun: Callable[P, R], argnums: int | Sequence[int] | None = None, "
    "argnames: str | Sequence[str] = []) -> Callable[P, Any]"
)
_VAG_SIG = (
    "value_and_grad(fun: Callable[P, R], argnums: int | Sequence[int] | None = None, "
    "argnames: str | Sequence[str] = []) -> Callable[P, tuple[R, Any]]"
)
_VMAP_SIG = "vmap(fun: Callable[P, R], in_axes: object = 0, out_axes: object = 0) -> Callable[P, R]"
_CHECKPOINT_SIG = "checkpoint(fun: Callable[P, R]) -> Callable[P, R]"
_CUSTOM_SIG = "__init__(self, f: Callable)"


def _signed(sig):
    """Start the decorated function's docstring with MLX's signature line,
    as nanobind does: the functions take (*args, **kwargs) to give
    nanobind's errors, so help() and scripts/api_diff.py read the
    parameters from that line."""

    def mark(fun):
        fun.__doc__ = sig + "\n\n" + (fun.__doc__ or "")
        return fun

    return mark


def _signature_error(name, sig, args, kwargs):
    # Raises nanobind's "incompatible function arguments" TypeError, as MLX.
    _core._signature_error(name, sig, tuple(args), dict(kwargs))


_MISSING = object()


def _bind(name, sig, params, args, kwargs):
    """Bind args/kwargs to params [(name, default or _MISSING)] the way a
    nanobind signature does, raising MLX's TypeError on a mismatch."""
    if len(args) > len(params):
        _signature_error(name, sig, args, kwargs)
    values = list(args) + [_MISSING] * (len(params) - len(args))
    names = [p for p, _ in params]
    for k, v in kwargs.items():
        if k not in names or values[names.index(k)] is not _MISSING:
            _signature_error(name, sig, args, kwargs)
        values[names.index(k)] = v
    for i, (_, default) in enumerate(params):
        if values[i] is _MISSING:
            if default is _MISSING:
                _signature_error(name, sig, args, kwargs)
            values[i] = default
    return values


# ---------------------------------------------------------------------------
# Trees (MLX's C++ tree helpers: lists, tuples and dicts, subclasses too)
# ---------------------------------------------------------------------------


def _flatten(tree, strict, out):
    if isinstance(tree, _array):
        out.append(tree)
    elif isinstance(tree, (list, tuple)):
        for t in tree:
            _flatten(t, strict, out)
    elif isinstance(tree, dict):
        for t in tree.values():
            _flatten(t, strict, out)
    elif strict:
        raise ValueError("[tree_flatten] The argument should contain only arrays")
    return out


def _new_tuple(like, items):
    # A tuple subclass keeps its type, as in MLX's tree helpers: a
    # namedtuple is built from the items, any other from their list.
    if type(like) is tuple:
        return tuple(items)
    if hasattr(type(like), "_fields"):
        return type(like)(*items)
    return type(like)(items)


def _unflatten(tree, values, it=None):
    """tree with its arrays replaced, in order, by values (new containers)."""
    if it is None:
        it = iter(values)
    if isinstance(tree, _array):
        return next(it)
    if isinstance(tree, list):
        return [_unflatten(t, values, it) for t in tree]
    if isinstance(tree, tuple):
        return _new_tuple(tree, [_unflatten(t, values, it) for t in tree])
    if isinstance(tree, dict):
        return {k: _unflatten(v, values, it) for k, v in tree.items()}
    return tree


def _update(tree, fn):
    """Replace the arrays of tree by fn(array) in place for lists and dicts
    (MLX fills the caller's containers: a dict subclass such as a module
    stays the same object); tuples are rebuilt."""
    if isinstance(tree, _array):
        return fn(tree)
    if isinstance(tree, list):
        for i in range(len(tree)):
            tree[i] = _update(tree[i], fn)
        return tree
    if isinstance(tree, tuple):
        return _new_tuple(tree, [_update(t, fn) for t in tree])
    if isinstance(tree, dict):
        for k, v in tree.items():
            tree[k] = _update(v, fn)
        return tree
    return tree


def _prefix_error():
    return ValueError("[tree_map] Additional input tree is not a valid prefix of the first tree.")


def _visit2(tree, prefix, visitor):
    """Visit the leaves of tree with the matching node of prefix, a tree that
    may stop early (an int applies to the whole subtree)."""
    for kind in (list, tuple, dict):
        if isinstance(tree, kind):
            others = tuple(k for k in (list, tuple, dict) if k is not kind)
            if (isinstance(prefix, kind) and len(prefix) != len(tree)) or isinstance(prefix, others):
                raise _prefix_error()
            if kind is dict:
                for k, v in tree.items():
                    if isinstance(prefix, dict):
                        if k not in prefix:
                            raise ValueError("[tree_visit] Tree is not a valid prefix tree of the first tree.")
                        _visit2(v, prefix[k], visitor)
                    else:
                        _visit2(v, prefix, visitor)
            else:
                for i, v in enumerate(tree):
                    _visit2(v, prefix[i] if isinstance(prefix, kind) else prefix, visitor)
            return
    visitor(tree, prefix)


# ---------------------------------------------------------------------------
# grad and value_and_grad
# ---------------------------------------------------------------------------


def _is_int(x):
    return isinstance(x, int)


def _parse_argnums(name, sig, args, kwargs):
    """(fun, sorted argnums, argnames) with MLX's TypeError for bad types."""
    fun, argnums, argnames = _bind(name, sig, [("fun", _MISSING), ("argnums", None), ("argnames", [])], args, kwargs)
    bad = not callable(fun)
    nums = names = None
    if argnums is None:
        pass
    elif _is_int(argnums):
        nums = [int(argnums)]
    elif isinstance(argnums, (list, tuple)) and all(_is_int(a) for a in argnums):
        nums = [int(a) for a in argnums]
    else:
        bad = True
    if isinstance(argnames, str):
        names = [argnames]
    elif isinstance(argnames, (list, tuple, set, frozenset)) and all(isinstance(a, str) for a in argnames):
        names = list(dict.fromkeys(argnames))
    else:
        bad = True
    if bad:
        _signature_error(name, sig, args, kwargs)
    if nums is None:
        nums = [0] if not names else []
    return fun, nums, names


def _value_and_grad(fun, argnums, argnames, tag, scalar_only):
    if not argnums and not argnames:
        raise ValueError(f"{tag} Gradient wrt no argument requested")
    argnums = sorted(argnums)
    if argnums:
        if argnums[0] < 0:
            raise ValueError(f"{tag} Can't compute the gradient of negative argument index {argnums[0]}")
        for i in range(1, len(argnums)):
            if argnums[i] == argnums[i - 1]:
                raise ValueError(f"{tag} Duplicate argument index {argnums[0]} is not allowed.")
    names = set(argnames)

    def value_and_grads(*args, **kwargs):
        if argnums and argnums[-1] >= len(args):
            raise ValueError(
                f"{tag} Can't compute the gradient of argument index {argnums[-1]} because the "
                f"function is called with only {len(args)} positional arguments."
            )
        for key in argnames:
            if key not in kwargs:
                keys = "".join(f"{k}," for k in kwargs)
                raise ValueError(
                    f"{tag} Can't compute the gradient of keyword argument '{key}' because the "
                    f"function is called with the following keyword arguments {{{keys}}}"
                )

        # Every array of the call, and which of them are differentiated.
        arrays, grad_index, counts = [], [], [0]
        for i, a in enumerate(args):
            needs = i in argnums
            flat = _flatten(a, needs, [])
            if needs:
                grad_index.extend(range(len(arrays), len(arrays) + len(flat)))
                counts.append(counts[-1] + len(flat))
            arrays.extend(flat)
        for k, a in kwargs.items():
            needs = k in names
            flat = _flatten(a, needs, [])
            if needs:
                grad_index.extend(range(len(arrays), len(arrays) + len(flat)))
                counts.append(counts[-1] + len(flat))
            arrays.extend(flat)
        if not grad_index:
            raise ValueError("[grad] Must specify at least one argument.")

        py_out = [None]

        def traced(*tracers):
            full = list(arrays)
            for j, t in zip(grad_index, tracers):
                full[j] = t
            tree = [args, kwargs]
            it = iter(full)
            tree = _update(tree, lambda _: next(it))
            try:
                out = fun(*tree[0], **tree[1])
            finally:
                # Put the caller's arrays back where the tracers still are;
                # a place the function wrote to keeps what it wrote.  As in
                # MLX the k-th array found is compared with the k-th given.
                pos = [0]

                def restore(node):
                    k = pos[0]
                    pos[0] += 1
                    return arrays[k] if k < len(full) and node is full[k] else node

                _update(tree, restore)
            py_out[0] = out
            if not isinstance(out, _array):
                kind = type(out).__name__
                if scalar_only:
                    raise ValueError(
                        f"{tag} The return value of the function whose gradient we want to compute "
                        f"should be a scalar array; but {kind} was returned."
                    )
                if not isinstance(out, tuple):
                    raise ValueError(
                        f"{tag} The return value of the function whose gradient we want to compute "
                        "should be either a scalar array or a tuple with the first value being a "
                        f"scalar array (Union[array, tuple[array, Any, ...]]); but {kind} was returned."
                    )
                if len(out) == 0:
                    raise ValueError(
                        f"{tag} The return value of the function whose gradient we want to compute "
                        "should be either a scalar array or a non-empty tuple. The first value should "
                        "be a scalar array and the rest can be anything. Instead, we got an empty tuple."
                    )
                if not isinstance(out[0], _array):
                    raise ValueError(
                        f"{tag} The return value of the function whose gradient we want to compute "
                        "should be either a scalar array or a tuple with the first value being a "
                        "scalar array (Union[array, tuple[array, Any, ...]]); but it was a tuple with "
                        f"the first value being of type {type(out[0]).__name__} ."
                    )
            flat = _flatten(out, False, [])
            # Only the first output is differentiated: the rest are aux.
            return [flat[0]] + [_core.stop_gradient(a) for a in flat[1:]]

        primals = [arrays[j] for j in grad_index]
        outputs, grads = _core.vjp(traced, primals, [_array(1.0)])

        if len(argnums) == 1:
            pos_grads = _unflatten(args[argnums[0]], grads[counts[0] : counts[1]])
        elif len(argnums) > 1:
            pos_grads = tuple(
                _unflatten(args[n], grads[counts[i] : counts[i + 1]]) for i, n in enumerate(argnums)
            )
        else:
            pos_grads = None
        if argnames:
            kw_grads, i = {}, len(argnums)
            for k, v in kwargs.items():
                if k in names:
                    kw_grads[k] = _unflatten(v, grads[counts[i] : counts[i + 1]])
                    i += 1
            py_grads = (pos_grads, kw_grads)
        else:
            py_grads = pos_grads
        return _unflatten(py_out[0], outputs), py_grads

    return value_and_grads


@_signed(_VAG_SIG)
def value_and_grad(*args, **kwargs):
    """Returns a function which computes the value and gradient of ``fun``.

    ``fun`` returns a scalar array, or a tuple whose first element is a scalar
    array (the loss) and whose other elements (arrays or anything else) are
    returned unchanged and not differentiated.  ``argnums`` (int or sequence
    of ints, default 0 when ``argnames`` is empty) picks positional arguments
    and ``argnames`` (str or sequence of str) keyword arguments; each may be
    an array or a nested list/tuple/dict of arrays, and its gradient has the
    same structure.  With ``argnames`` the gradients are
    ``(positional_grads, {name: grad})``.
    """
    fun, nums, names = _parse_argnums("value_and_grad", _VAG_SIG, args, kwargs)
    return _core._gc_func(_value_and_grad(fun, nums, names, "[value_and_grad]", False), fun)


@_signed(_GRAD_SIG)
def grad(*args, **kwargs):
    """Returns a function which computes the gradient of ``fun``.

    ``fun`` must return a scalar array.  ``argnums`` and ``argnames`` are as
    in :func:`value_and_grad`; the result has the structure of the
    differentiated arguments (a tuple of them for several ``argnums``, and
    ``(positional_grads, {name: grad})`` with ``argnames``).
    """
    fun, nums, names = _parse_argnums("grad", _GRAD_SIG, args, kwargs)
    vag = _value_and_grad(fun, nums, names, "[grad]", True)

    def grads(*a, **k):
        return vag(*a, **k)[1]

    return _core._gc_func(grads, fun)


# ---------------------------------------------------------------------------
# vmap
# ---------------------------------------------------------------------------


def _axes_to_flat(tree, axes, output):
    flat, saw_tuple = [], [False]

    def axis_of(x, ax, prefix=""):
        if ax < 0:
            ax += x.ndim + output
        if ax < 0 or ax >= x.ndim + output:
            shape = "(" + ",".join(str(d) for d in x.shape) + ")"
            kind = " output " if output else " "
            raise IndexError(f"[vmap] Invalid{kind}vectorization axis {ax} for array with shape {shape}")
        return ax

    def visit(x, ax):
        if not isinstance(x, _array):
            raise ValueError("[vmap] The arguments should contain only arrays")
        if ax is None:
            flat.append(None)
        elif _is_int(ax):
            flat.append(axis_of(x, int(ax)))
        elif isinstance(ax, tuple):
            saw_tuple[0] = True
            if len(ax) == 1 and _is_int(ax[0]):
                flat.append(axis_of(x, int(ax[0])))
            elif len(ax) == 1 and ax[0] is None:
                flat.append(None)
            else:
                raise ValueError("[vmap] axis must be int or None.")
        else:
            raise ValueError("[vmap] axis must be int or None.")

    _visit2(tree, axes, visit)
    if saw_tuple[0] and not isinstance(tree, _array):
        raise ValueError("[vmap] axis must be int or None.")
    return flat


@_signed(_VMAP_SIG)
def vmap(*args, **kwargs):
    """Returns a vectorized version of ``fun``.

    ``in_axes`` gives the batch axis of each argument (an int, ``None`` for
    an argument that is not batched, or a tree matching the arguments, a
    prefix of it being enough); ``out_axes`` gives where the batch axis goes
    in each output, in the same way.  The function is traced once on one
    slice of the inputs and each primitive's vmap rule batches the result.
    """
    fun, in_axes, out_axes = _bind("vmap", _VMAP_SIG, [("fun", _MISSING), ("in_axes", 0), ("out_axes", 0)], args, kwargs)
    if not callable(fun) or in_axes is None or out_axes is None:
        _signature_error("vmap", _VMAP_SIG, args, kwargs)

    def vectorized(*args, **kwargs):
        if kwargs:
            raise TypeError("[vmap] Keyword arguments are not supported.")
        inputs = _flatten(args, True, [])
        flat_in = _axes_to_flat(args[0] if len(args) == 1 else args, in_axes, False)
        if flat_in and all(a is None for a in flat_in):
            raise ValueError("At least one of in_axes must be non-None.")
        py_out = [None]

        def traced(*a):
            py_out[0] = fun(*_unflatten(args, a))
            return _flatten(py_out[0], True, [])

        s_in, s_out = _core._vmap_trace(traced, inputs, flat_in)
        flat_out = _axes_to_flat(_unflatten(py_out[0], s_out), out_axes, True)
        outputs = _core._vmap_replace(inputs, s_in, s_out, flat_in, flat_out)
        return _unflatten(py_out[0], outputs)

    return _core._gc_func(vectorized, fun)


# ---------------------------------------------------------------------------
# custom_function and checkpoint
# ---------------------------------------------------------------------------


def _structure(args, kwargs):
    """Flat arrays of (args, kwargs) and a function rebuilding them."""
    full = (args, kwargs)
    flat = _flatten(full, False, [])

    def rebuild(arrays):
        a, k = _unflatten(full, arrays)
        return a, k

    return flat, rebuild


def _primals_tree(args):
    return args[0] if len(args) == 1 else args


class custom_function:
    """Set up a function for custom gradient and vmap definitions.

    Instances are callables that behave like the wrapped function; under a
    transformation the functions given with :meth:`vjp`, :meth:`jvp` and
    :meth:`vmap` are used instead of the default rules (each is optional).
    Captured arrays are treated as constants: no gradient flows to them.

    - ``vjp(primals, cotangents, outputs, **kwargs)`` returns the cotangents
      of the positional arguments (``primals`` is the single argument, or
      the tuple of them); ``None`` leaves mean zero.
    - ``jvp(primals, tangents)`` returns the output tangents; a tangent is
      ``None`` for an input without one.
    - ``vmap(inputs, axes)`` returns ``(outputs, out_axes)``.
    """

    __module__ = "cmlx.core"

    @_signed(_CUSTOM_SIG)
    def __init__(self, *args, **kwargs):
        f = None
        if len(args) == 1 and not kwargs:
            f = args[0]
        elif not args and list(kwargs) == ["f"]:
            f = kwargs["f"]
        if not callable(f):
            _signature_error("__init__", _CUSTOM_SIG, (self,) + args, kwargs)
        self._fun = f
        self._vjp = None
        self._jvp = None
        self._vmap = None

    def vjp(self, f):
        """Define a custom vjp for the wrapped function (usable as a decorator)."""
        self._vjp = f
        return self

    def jvp(self, f):
        """Define a custom jvp for the wrapped function (usable as a decorator)."""
        self._jvp = f
        return self

    def vmap(self, f):
        """Define a custom vectorization for the wrapped function (usable as a decorator)."""
        self._vmap = f
        return self

    def __call__(self, *args, **kwargs):
        if self._vjp is None and self._jvp is None and self._vmap is None:
            return self._fun(*args, **kwargs)
        fun, vjp_fun, jvp_fun, vmap_fun = self._fun, self._vjp, self._jvp, self._vmap
        inputs, rebuild = _structure(args, kwargs)
        out_tree = [None]

        def flat_fun(*arrays):
            a, k = rebuild(arrays)
            out_tree[0] = fun(*a, **k)
            return _flatten(out_tree[0], True, [])  # outputs: arrays only, as MLX

        def flat_vjp(primals, cotangents, outputs):
            a, k = rebuild(primals)
            cots = _unflatten(out_tree[0], cotangents)
            outs = _unflatten(out_tree[0], outputs)
            res = vjp_fun(_primals_tree(a), cots, outs, **k)
            # keyword arguments are not differentiated: zeros for their arrays
            return _fill_none(_primals_tree(a), res, "vjp") + [_core.zeros_like(x) for x in _flatten(k, False, [])]

        def flat_jvp(primals, tangents, argnums):
            a, k = rebuild(primals)
            if k:
                raise ValueError("[custom jvp] Function should only accept positional arguments")
            given = dict(zip(argnums, tangents))
            count = iter(range(len(primals)))
            tans = _update_copy(a, lambda x: given.get(next(count)))
            res = jvp_fun(_primals_tree(a), _primals_tree(tans))
            return _flatten(res, False, [])

        def flat_vmap(arrays, axes):
            a, k = rebuild(arrays)
            if k:
                raise ValueError("[custom vmap] Function should only accept positional arguments")
            it = iter(axes)
            ax = _update_copy(a, lambda x: next(it))
            res = vmap_fun(_primals_tree(a), _primals_tree(ax))
            if not isinstance(res, tuple) or len(res) != 2:
                raise ValueError("[custom vmap] Vmap function should return a tuple with 2 items.")
            outs, out_axes = [], []

            def visit(x, axis):
                if isinstance(x, _array):
                    outs.append(x)
                    out_axes.append(axis)

            _visit2(res[0], res[1], visit)
            return outs, out_axes

        outputs = _core._custom_function(
            flat_fun,
            flat_vjp if vjp_fun is not None else None,
            flat_jvp if jvp_fun is not None else None,
            flat_vmap if vmap_fun is not None else None,
            inputs,
        )
        return _unflatten(out_tree[0], outputs)


def _update_copy(tree, fn):
    """tree with each array replaced by fn(array), new containers."""
    if isinstance(tree, _array):
        return fn(tree)
    if isinstance(tree, list):
        return [_update_copy(t, fn) for t in tree]
    if isinstance(tree, tuple):
        return _new_tuple(tree, [_update_copy(t, fn) for t in tree])
    if isinstance(tree, dict):
        return {k: _update_copy(v, fn) for k, v in tree.items()}
    return tree


def _fill_none(primals, result, what):
    """The flat cotangents of a custom vjp's result, zeros for None leaves
    (a subtree of None stands for zeros of the whole subtree)."""
    flat = []

    def visit(p, r):
        if isinstance(p, _array):
            if r is None:
                flat.append(_core.zeros_like(p))
            elif isinstance(r, _array):
                flat.append(r)
            else:
                raise ValueError(
                    f"[custom_function] The {what} function must return arrays (or None) matching "
                    f"the primals, not {type(r).__name__}."
                )

    if isinstance(primals, _array) and isinstance(result, (list, tuple)) and len(result) == 1:
        result = result[0]  # MLX accepts a one-element sequence for one primal
    _visit2(primals, result, visit)
    return flat


@_signed(_CHECKPOINT_SIG)
def checkpoint(*args, **kwargs):
    """Returns a checkpointed version of ``fun``.

    The result computes the same values; under ``vjp``/``grad`` the function
    is run again in the backward pass instead of keeping its intermediate
    arrays alive, which trades compute for memory.  (It is a custom function
    whose vjp is the vjp of ``fun`` recomputed from the inputs.)
    """
    (fun,) = _bind("checkpoint", _CHECKPOINT_SIG, [("fun", _MISSING)], args, kwargs)
    if not callable(fun):
        _signature_error("checkpoint", _CHECKPOINT_SIG, args, kwargs)

    def checkpointed(*a, **k):
        inputs, rebuild = _structure(a, k)
        out_tree = [None]

        def flat_fun(*arrays):
            a, k = rebuild(arrays)
            out_tree[0] = fun(*a, **k)
            return _flatten(out_tree[0], False, [])

        outputs = _core._custom_function(flat_fun, None, None, None, inputs)
        return _unflatten(out_tree[0], outputs)

    return _core._gc_func(checkpointed, fun)


def _install():
    for name in __all__:
        obj = globals()[name]
        obj.__module__ = "cmlx.core"  # they are cmlx.core's functions, as in MLX
        setattr(_core, name, obj)


_install()
