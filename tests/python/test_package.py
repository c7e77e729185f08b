"""The Python package itself: what importing it from a source checkout says."""

import os
import subprocess
import sys

import pytest

from conftest import cmlx_only


@cmlx_only
def test_source_package_without_extension_says_so():
    """Importing from inside python/ finds the source package, which has no
    built extension: a clear ImportError, not a circular-import message."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")
    if not os.path.isfile(os.path.join(src, "cmlx", "__init__.py")):
        pytest.skip("no source checkout")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", "import cmlx.core"], cwd=src, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    assert "ImportError: cmlx's C extension cmlx.core is not built" in out.stderr
    assert "circular import" not in out.stderr
