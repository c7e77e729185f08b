"""Installs ``core.ArrayLike``: the name MLX's signatures use for objects
that convert themselves to an array through an ``__mlx_array__`` method.

cmlx accepts such objects wherever an array is accepted; the class exists
so that code and annotations naming ``mx.ArrayLike`` work.  As in MLX it is
a marker: constructing one wraps an object without converting it, and an
array is never an instance of it."""

from . import core as _core


class ArrayLike:
    """Any Python object with an ``__mlx_array__`` method returning an
    :obj:`array` (a name for annotations; it converts nothing itself)."""

    __slots__ = ("_obj",)

    def __init__(self, arg, /):
        self._obj = arg


ArrayLike.__module__ = _core.__name__
# setattr: core's stubs declare ArrayLike as a class of core (this one), and
# type checkers reject a plain assignment to a class name
setattr(_core, "ArrayLike", ArrayLike)
