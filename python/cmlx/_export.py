"""The Python side of exported functions and graph export (MLX 0.32's
export_function, import_function, exporter, FunctionExporter and
export_to_dot). The engine (tracing, the .mlxfn format, graph printing) is
``cmlx.core._Exporter``, ``_Imported``, ``_export_visit`` and
``_export_to_dot``; this module checks the arguments as MLX's binding
does. Installed into ``cmlx.core`` by ``cmlx/__init__.py``.
"""

from . import core as _core

_array = _core.array

__all__ = ["export_function", "import_function", "exporter", "export_to_dot",
           "FunctionExporter"]


def _is_array_list(x):
    return isinstance(x, (list, tuple)) and all(isinstance(a, _array) for a in x)


def _is_array_dict(x):
    return isinstance(x, dict) and all(
        isinstance(k, str) and isinstance(v, _array) for k, v in x.items())


def _inputs(args, kwargs, prefix):
    """MLX's validate_and_extract_inputs: positional and keyword arrays, or
    one list/tuple of arrays and/or one dict of str -> array."""
    def bad():
        raise ValueError(
            f"{prefix} Inputs can either be a variable number of positional and keyword arrays "
            "or a single tuple and/or dictionary of arrays.")

    if len(args) == 0:
        if not _is_array_dict(kwargs):
            bad()
        return [], dict(kwargs)
    if isinstance(args[0], _array):
        if not _is_array_list(args) or not _is_array_dict(kwargs):
            bad()
        return list(args), dict(kwargs)
    if kwargs:
        bad()
    if len(args) == 1:
        if _is_array_list(args[0]):
            return list(args[0]), {}
        if _is_array_dict(args[0]):
            return [], dict(args[0])
        bad()
    if len(args) == 2:
        if not _is_array_list(args[0]) or not _is_array_dict(args[1]):
            bad()
        return list(args[0]), dict(args[1])
    bad()


def _flat(fun):
    """fun(*args, **kwargs) as the engine calls it: on the flat inputs
    (args, then the keyword arrays in sorted key order)."""
    def call(nargs, keys):
        def flat(*arrays):
            out = fun(*arrays[:nargs], **dict(zip(keys, arrays[nargs:])))
            if isinstance(out, _array):
                return [out]
            if isinstance(out, (list, tuple)) and all(isinstance(a, _array) for a in out):
                return list(out)
            raise ValueError("[export_function] Outputs can be either a single array, a tuple, "
                             "or a list of arrays.")
        return flat
    return call


def _split(kwargs):
    keys = sorted(kwargs)
    return keys, [kwargs[k] for k in keys]


class FunctionExporter:
    """Writes several traces of one function (different input shapes or
    types) into one export file; ``exporter(file, fun)`` makes one.

    Call the object with example inputs once per trace, then ``close()`` it,
    or use it as a context manager, which closes it on exit."""

    def __init__(self, file, fun, shapeless=False, metadata=None):
        self._fun = fun
        self._x = _core._Exporter(file, bool(shapeless), metadata or "")

    def close(self):
        """Finish the file: no more traces can be added after this."""
        self._x.close()

    def __enter__(self):
        return self

    def __exit__(self, exc_type=None, exc_value=None, traceback=None):
        self.close()

    def __call__(self, *args, **kwargs):
        a, k = _inputs(args, kwargs, "[export_function]")
        keys, vals = _split(k)
        self._x.add(_flat(self._fun)(len(a), keys), a, keys, vals)


def _check_metadata(metadata):
    if metadata is not None and not isinstance(metadata, str):
        raise TypeError("export_function(): metadata must be a str or None, "
                        f"not {type(metadata).__name__}.")


def export_function(file_or_callback, fun, *args, shapeless=False, metadata=None, **kwargs):
    """Export an MLX function. Example input arrays must be provided; they
    can be ``*args`` and ``**kwargs`` or a tuple of arrays and/or a
    dictionary of string keys with array values."""
    _check_metadata(metadata)
    if not callable(fun):
        raise TypeError("export_function(): fun must be callable.")
    a, k = _inputs(args, kwargs, "[export_function]")
    keys, vals = _split(k)
    if isinstance(file_or_callback, str):
        x = _core._Exporter(file_or_callback, bool(shapeless), metadata or "")
        try:
            x.add(_flat(fun)(len(a), keys), a, keys, vals)
        finally:
            x.close()
        return None
    if not callable(file_or_callback):
        raise TypeError("export_function(): file_or_callback must be a str or a callable.")
    if metadata:
        raise ValueError("[export_function] The metadata argument is only supported when "
                         "exporting to a file, not when using a callback.")
    _core._export_visit(file_or_callback, _flat(fun)(len(a), keys), a, keys, vals,
                        bool(shapeless))
    return None


def exporter(file, fun, *, shapeless=False, metadata=None):
    """Make a callable object to export multiple traces of a function to a
    file (a context manager)."""
    _check_metadata(metadata)
    if not isinstance(file, str):
        raise TypeError("exporter(): file must be a str.")
    return FunctionExporter(file, fun, shapeless, metadata)


def import_function(file, return_metadata=False):
    """Import a function from a file. The imported function takes
    ``*args`` and ``**kwargs`` or a tuple of arrays and/or a dict of
    arrays, and always returns a tuple of arrays."""
    if not isinstance(file, str):
        raise TypeError("import_function(): file must be a str.")
    imported = _core._Imported(file)

    def call(*args, **kwargs):
        a, k = _inputs(args, kwargs, "[import_function::call]")
        keys, vals = _split(k)
        return tuple(imported.call(a, keys, vals))

    if return_metadata:
        return call, imported.metadata
    return call


def export_to_dot(file, *args, **kwargs):
    """Export a graph to DOT format for visualization. ``args`` are output
    arrays; ``kwargs`` name arrays of the graph (and add them as outputs)."""
    outputs = []
    for a in args:
        if isinstance(a, _array):
            outputs.append(a)
        elif isinstance(a, (list, tuple)) and all(isinstance(x, _array) for x in a):
            outputs.extend(a)
        else:
            raise ValueError("export_to_dot accepts keyword arguments or array/list of arrays")
    names = []
    for k, v in kwargs.items():
        if not isinstance(v, _array):
            raise ValueError("export_to_dot only accepts keyword arguments with array values")
        names.append((v, k))
        outputs.append(v)
    text = _core._export_to_dot(outputs, names)
    if isinstance(file, str):
        with open(file, "w") as f:
            f.write(text)
    elif hasattr(file, "write"):
        file.write(text)
    else:
        raise ValueError("export_to_dot accepts file-like objects or strings to be used as "
                         "filenames")


def _install():
    for name in __all__:
        obj = globals()[name]
        obj.__module__ = "cmlx.core"
        setattr(_core, name, obj)


_install()
