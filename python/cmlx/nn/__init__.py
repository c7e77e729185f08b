"""Neural networks on top of :mod:`cmlx.core`, mirroring ``mlx.nn``: the
:class:`Module` base class, layers, activations, :mod:`losses` and
:mod:`init`."""

from . import init, losses
from .layers import *  # noqa: F401,F403
from .utils import average_gradients, value_and_grad
