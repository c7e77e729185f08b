"""Running programs written for MLX unedited: `python -m cmlx.run` and the
CMLX_AS_MLX start-up switch route `import mlx...` to cmlx."""

import os
import subprocess
import sys
import textwrap

import pytest

from conftest import SUBJECT_IS_MLX, mlx_ref

pytestmark = pytest.mark.skipif(SUBJECT_IS_MLX, reason="cmlx's own entry points")

import cmlx  # noqa: E402  (the package under test, whatever the subject)

PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(cmlx.__file__)))

PROGRAM = textwrap.dedent("""
    import sys
    import mlx.core as mx
    import mlx.utils
    from mlx.utils import tree_flatten
    a = mx.array([1.0, 2.0, 3.0])
    print(mx.__name__, type(a).__module__, mx is sys.modules["cmlx.core"])
    print(mlx.utils.__name__, tree_flatten({"w": 1}))
    print((a * 2).sum().item(), sys.argv[1:], __name__)
    if "--fail" in sys.argv:
        raise SystemExit(3)
""")


def _run(args, env_extra=None, cwd=None):
    env = dict(os.environ, **(env_extra or {}))
    return subprocess.run([sys.executable] + args, capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=120)


@pytest.fixture
def program(tmp_path):
    p = tmp_path / "train.py"
    p.write_text(PROGRAM)
    return p


def test_run_script(program):
    r = _run(["-m", "cmlx.run", str(program), "--lr", "0.1"])
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "cmlx.core cmlx.core True"
    assert lines[1] == "cmlx.utils [('w', 1)]"
    assert lines[2] == "12.0 ['--lr', '0.1'] __main__"


def test_run_script_exit_status_and_errors(program, tmp_path):
    assert _run(["-m", "cmlx.run", str(program), "--fail"]).returncode == 3
    bad = tmp_path / "bad.py"
    bad.write_text("import mlx.core as mx\nmx.reshape(mx.zeros((2, 3)), (4,))\n")
    r = _run(["-m", "cmlx.run", str(bad)])
    assert r.returncode == 1 and "ValueError" in r.stderr
    r = _run(["-m", "cmlx.run"])
    assert r.returncode == 2 and "usage" in r.stderr


def test_run_module(tmp_path):
    (tmp_path / "mlxprog").mkdir()
    (tmp_path / "mlxprog" / "__init__.py").write_text("")
    (tmp_path / "mlxprog" / "main.py").write_text(PROGRAM)
    pythonpath = os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])
    r = _run(["-m", "cmlx.run", "-m", "mlxprog.main", "x"], {"PYTHONPATH": pythonpath})
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[2] == "12.0 ['x'] __main__"


def test_missing_counterpart_is_module_not_found(tmp_path):
    p = tmp_path / "p.py"
    p.write_text("import mlx.no_such_module\n")
    r = _run(["-m", "cmlx.run", str(p)])
    assert r.returncode == 1 and "ModuleNotFoundError" in r.stderr


# The .pth start-up hook is read from site directories; site.addsitedir
# reads it from the staged package folder as an installed wheel's would be.
HOOK = "import site, sys; site.addsitedir(%r); import mlx.core as mx; print(mx.__name__)" % PKG_DIR


def test_environment_switch():
    r = _run(["-c", HOOK], {"CMLX_AS_MLX": "1"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "cmlx.core"


def test_environment_switch_off():
    r = _run(["-c", HOOK], {"CMLX_AS_MLX": "0"})
    # real MLX where it is installed, else ModuleNotFoundError; never cmlx
    assert r.stdout.strip() != "cmlx.core"
    if mlx_ref is not None:
        assert r.returncode == 0 and r.stdout.strip() == "mlx.core", r.stderr


@pytest.mark.skipif(mlx_ref is None, reason="needs real MLX installed")
def test_install_after_real_mlx_is_refused():
    r = _run(["-c", "import mlx.core; from cmlx import _mlx_alias; _mlx_alias.install()"])
    assert r.returncode == 1 and "RuntimeError" in r.stderr and "already imported" in r.stderr


def test_missing_script_or_module_is_one_line(tmp_path):
    r = _run(["-m", "cmlx.run", str(tmp_path / "nope.py")])
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        f"cmlx.run: can't open file {str(tmp_path / 'nope.py')!r}: [Errno 2] No such file or directory"]
    r = _run(["-m", "cmlx.run", "-m", "no_such_pkg.main"])
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == ["cmlx.run: No module named no_such_pkg.main"]


def _fake_namespace_distribution(root):
    """root/mlx/fakedata: another distribution's module in the mlx
    namespace, as mlx-data installs mlx/data next to MLX's mlx/core."""
    pkg = root / "mlx" / "fakedata"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("VALUE = 41\n")
    (pkg / "sub" / "__init__.py").write_text("from mlx.fakedata import VALUE\nPLUS = VALUE + 1\n")
    return str(root)


def test_other_mlx_distributions_pass_through(tmp_path):
    site = _fake_namespace_distribution(tmp_path / "site")
    prog = tmp_path / "p.py"
    prog.write_text("import mlx.core as mx, mlx.fakedata, mlx.fakedata.sub as s\n"
                    "print(mx.__name__, mlx.fakedata.VALUE, s.PLUS, mlx.fakedata.__name__)\n")
    pythonpath = os.pathsep.join([os.environ.get("PYTHONPATH", ""), site])
    r = _run(["-m", "cmlx.run", str(prog)], {"PYTHONPATH": pythonpath})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["cmlx.core", "41", "42", "mlx.fakedata"]


@pytest.mark.skipif(mlx_ref is None, reason="needs real MLX installed")
def test_real_mlx_own_modules_do_not_pass_through(tmp_path):
    # mlx.extension exists in MLX's wheel but not in cmlx: loading MLX's
    # would mix the two libraries, so it stays a ModuleNotFoundError.
    p = tmp_path / "p.py"
    p.write_text("import mlx.extension\n")
    r = _run(["-m", "cmlx.run", str(p)])
    assert r.returncode == 1 and "ModuleNotFoundError" in r.stderr


def test_environment_switch_with_the_package_on_pythonpath():
    # build/pkg (on PYTHONPATH here) reads no .pth; its sitecustomize
    # honours the switch, and without it real MLX (or nothing) loads.
    code = "import mlx.core as mx; print(mx.__name__)"
    if not os.path.exists(os.path.join(PKG_DIR, "sitecustomize.py")):
        pytest.skip("cmlx is installed in a site directory here (the .pth applies)")
    r = _run(["-c", code], {"CMLX_AS_MLX": "1"})
    assert r.returncode == 0 and r.stdout.strip() == "cmlx.core", r.stderr
    r = _run(["-c", code], {"CMLX_AS_MLX": "0"})
    assert r.stdout.strip() != "cmlx.core"


def test_mlx_data_passes_through(tmp_path):
    """mlx-data (a separate distribution in the mlx namespace) loads as on
    MLX and feeds cmlx arrays."""
    pytest.importorskip("mlx.data", reason="mlx-data is not installed")
    p = tmp_path / "p.py"
    p.write_text(textwrap.dedent("""
        import numpy as np
        import mlx.core as mx
        import mlx.data as dx
        buf = dx.buffer_from_vector([{"x": np.arange(4, dtype=np.float32) + i} for i in range(6)])
        print(mx.__name__, dx.__name__, [mx.array(b["x"]).sum().item() for b in buf.to_stream().batch(3)])
    """))
    r = _run(["-m", "cmlx.run", str(p)])
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "cmlx.core mlx.data [30.0, 66.0]"
