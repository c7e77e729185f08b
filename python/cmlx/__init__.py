"""cmlx: MLX's array framework (lazy arrays, function transformations and a
unified memory model) implemented in C.

``import cmlx.core as mx`` gives the array type and operations, mirroring
``mlx.core``.
"""

from . import core
from . import _transforms  # installs grad, value_and_grad, vmap, ... into core
from . import _array_api_info  # installs core.__array_namespace_info__

__version__ = core.__version__

__all__ = ["core"]
