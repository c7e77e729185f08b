"""cmlx: MLX's array framework (lazy arrays, function transformations and a
unified memory model) implemented in C.

``import cmlx.core as mx`` gives the array type and operations, mirroring
``mlx.core``.
"""


def _extension_missing():
    """True when this package directory holds no built ``core`` extension:
    the source tree (python/cmlx) imported instead of a built package."""
    import importlib.machinery
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    names = ("core" + suffix for suffix in importlib.machinery.EXTENSION_SUFFIXES)
    return not any(os.path.exists(os.path.join(here, n)) for n in names)


try:
    from . import core

    # The stubs' folder (core/*.pyi) imports as an empty namespace package
    # when the extension is missing: the same error as no core at all.
    if not hasattr(core, "array") and _extension_missing():
        raise ImportError("cmlx.core is the stubs' folder, not the extension")
except ImportError as _e:
    # Without the extension Python reports a confusing circular import of
    # this half-initialised package; say what is actually wrong.
    if not _extension_missing():
        raise
    import os as _os

    raise ImportError(
        "cmlx's C extension cmlx.core is not built in "
        f"{_os.path.dirname(_os.path.abspath(__file__))} (the source package). Build it with "
        "`make build` and import from build/pkg (PYTHONPATH=build/pkg, from outside the "
        "python/ directory, whose source package would shadow it), or run `pip install .`."
    ) from None

from . import _transforms  # installs grad, value_and_grad, vmap, ... into core
from . import _compile  # installs compile, disable_compile, enable_compile into core
from . import _export  # installs export_function, import_function, exporter, export_to_dot
from . import _array_api_info  # installs core.__array_namespace_info__
from . import _types  # installs core.ArrayLike

__version__ = core.__version__

__all__ = ["core"]
