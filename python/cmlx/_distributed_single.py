"""A single-process ``cmlx.core.distributed``, installed only while the C
extension has none of its own (the distributed issue brings the real one).

Programs written for MLX, mlx-lm first, call ``mx.distributed.init()`` and
the collectives unconditionally; in one process the group has rank 0 and
size 1, collectives return their input (a new array, as MLX's do), and
point-to-point operations fail as MLX's do in a singleton group."""

import sys
import types

from . import core


class Group:
    """The group of this process alone (rank 0, size 1)."""

    def rank(self):
        return 0

    def size(self):
        return 1

    def split(self, color, key=-1):
        raise RuntimeError("Cannot split the distributed group further.")


_WORLD = Group()


def is_available(backend="any"):
    return False


def init(strict=False, backend="any", *, all_gather_factory=None):
    if strict:
        raise RuntimeError("[distributed] Couldn't initialize any backend")
    return _WORLD


def _identity(name):
    def collective(x, *, group=None, stream=None):
        return core.array(x)

    collective.__name__ = collective.__qualname__ = name
    collective.__doc__ = f"{name} over a group of one process: a copy of x."
    return collective


def _singleton(what):
    def op(*args, group=None, stream=None, **kwargs):
        raise ValueError(f"Cannot {what} a singleton group")

    return op


def install():
    if hasattr(core, "distributed"):
        return
    mod = types.ModuleType("cmlx.core.distributed", __doc__)
    mod.Group = Group
    mod.is_available = is_available
    mod.init = init
    for name in ("all_sum", "all_max", "all_min", "all_gather", "sum_scatter"):
        setattr(mod, name, _identity(name))
    mod.send = _singleton("send to")
    mod.recv = mod.recv_like = _singleton("receive from")
    core.distributed = mod
    sys.modules["cmlx.core.distributed"] = mod


install()
