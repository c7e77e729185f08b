"""Optimizers and learning-rate schedules (``mlx.optimizers``)."""

from .optimizers import *  # noqa: F401,F403
from .schedulers import *  # noqa: F401,F403
