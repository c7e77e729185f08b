"""The array API's inspection namespace, ``cmlx.core.__array_namespace_info__()``,
as MLX defines it (``mlx.__array_api_info``): the capabilities, devices and
dtypes of the namespace that ``array.__array_namespace__()`` returns."""

from . import core as _core


class ArrayNamespaceInfo:
    def capabilities(self):
        return {
            "boolean indexing": False,
            "data-dependent shapes": False,
            "max dimensions": 10,
        }

    def default_device(self):
        return _core.default_device()

    def default_dtypes(self, *, device=None):
        if device is not None and not isinstance(device, _core.Device):
            raise TypeError("Expected a mlx Device")
        return {
            "real floating": _core.float32,
            "complex floating": _core.complex64,
            "integral": _core.int32,
            "indexing": _core.int32,
        }

    def devices(self):
        return tuple(
            _core.Device(kind, i)
            for kind in (_core.cpu, _core.gpu)
            for i in range(_core.device_count(kind))
        )

    def dtypes(self, *, device=None, kind=None):
        if device is not None and not isinstance(device, _core.Device):
            raise TypeError("Expected a mlx Device")
        device = device if device is not None else self.default_device()
        dtypes = {
            "bool": _core.bool_,
            "int8": _core.int8,
            "int16": _core.int16,
            "int32": _core.int32,
            "int64": _core.int64,
            "uint8": _core.uint8,
            "uint16": _core.uint16,
            "uint32": _core.uint32,
            "uint64": _core.uint64,
            "float32": _core.float32,
            "complex64": _core.complex64,
        }
        # float64 exists on the CPU only, as in MLX
        if device.type == _core.cpu:
            dtypes["float64"] = _core.float64
        if kind is None:
            return dtypes
        signed = {"int8", "int16", "int32", "int64"}
        unsigned = {"uint8", "uint16", "uint32", "uint64"}
        real = {"float32", "float64"}
        complex_ = {"complex64"}
        kinds = {
            "bool": {"bool"},
            "signed integer": signed,
            "unsigned integer": unsigned,
            "integral": signed | unsigned,
            "real floating": real,
            "complex floating": complex_,
            "numeric": signed | unsigned | real | complex_,
        }
        kind = (kind,) if isinstance(kind, str) else kind
        if not isinstance(kind, tuple) or any(k not in kinds for k in kind):
            raise ValueError(f"Unsupported dtype kind: {kind!r}")
        names = {name for k in kind for name in kinds[k]}
        return {name: dtype for name, dtype in dtypes.items() if name in names}


def __array_namespace_info__():
    return ArrayNamespaceInfo()


__array_namespace_info__.__module__ = "cmlx.core"
_core.__array_namespace_info__ = __array_namespace_info__
