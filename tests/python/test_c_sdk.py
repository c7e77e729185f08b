"""The C SDK inside the Python package: a C program builds against the
libcmlx, headers, pkg-config file and CMake package that the package carries
(build/pkg in the tree, site-packages/cmlx from a wheel), through
`python -m cmlx.config`, pkg-config and find_package(cmlx), and runs."""

import os
import shutil
import subprocess
import sys

import pytest

from conftest import SUBJECT_IS_MLX, UNDER_ASAN

# (Under the sanitizer run libcmlx is instrumented and the programs built
# here are not: what this checks is the packaging, which make test covers.)
pytestmark = [pytest.mark.skipif(SUBJECT_IS_MLX, reason="cmlx's own packaging"),
              pytest.mark.skipif(UNDER_ASAN, reason="packaging, checked by make test")]

import cmlx.config as config  # noqa: E402

PROGRAM = r"""
#include <stdio.h>
#include "mlx/c/mlx.h"

int main(void) {
  mlx_stream s = mlx_default_cpu_stream_new();
  float data[3] = {1, 2, 3};
  int shape[1] = {3};
  mlx_array x = mlx_array_new_data(data, shape, 1, MLX_FLOAT32);
  mlx_array y = mlx_array_new();
  mlx_array total = mlx_array_new();
  if (mlx_multiply(&y, x, x, s) || mlx_sum(&total, y, false, s) || mlx_array_eval(total))
    return 1;
  float v = 0;
  if (mlx_array_item_float32(&v, total)) return 1;
  printf("%g\n", v);
  mlx_array_free(x);
  mlx_array_free(y);
  mlx_array_free(total);
  mlx_stream_free(s);
  return 0;
}
"""

CC = shutil.which("cc") or shutil.which("gcc")
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler")


def cmlx_config(*flags):
    out = subprocess.run([sys.executable, "-m", "cmlx.config", *flags], capture_output=True,
                         text=True, check=True, env=os.environ)
    return out.stdout.split()


def run_program(exe):
    # No LD_LIBRARY_PATH: the flags' run path must find libcmlx.so.
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    out = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "14"  # 1 + 4 + 9


def test_the_package_carries_the_sdk():
    assert os.path.isfile(os.path.join(config.LIB_DIR, "libcmlx.so"))
    assert os.path.isfile(os.path.join(config.INCLUDE_DIR, "mlx", "c", "mlx.h"))
    assert os.path.isfile(os.path.join(config.LIB_DIR, "pkgconfig", "cmlx.pc"))
    assert os.path.isfile(os.path.join(config.LIB_DIR, "cmake", "cmlx", "cmlxConfig.cmake"))
    assert cmlx_config("--prefix") == [config.PREFIX]
    assert cmlx_config("--cflags") == [f"-I{config.INCLUDE_DIR}"]


def test_no_flag_is_a_usage_error():
    out = subprocess.run([sys.executable, "-m", "cmlx.config"], capture_output=True, text=True)
    assert out.returncode == 2 and "--cflags" in out.stdout


@needs_cc
def test_cc_with_cmlx_config(tmp_path):
    src = tmp_path / "prog.c"
    src.write_text(PROGRAM)
    exe = tmp_path / "prog"
    subprocess.run([CC, str(src), *cmlx_config("--cflags", "--libs"), "-o", str(exe)],
                   check=True)
    run_program(exe)


@needs_cc
@pytest.mark.skipif(shutil.which("pkg-config") is None, reason="no pkg-config")
def test_cc_with_pkg_config(tmp_path):
    env = dict(os.environ, PKG_CONFIG_PATH=cmlx_config("--pkgconfig-dir")[0])
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "cmlx"], capture_output=True,
                           text=True, check=True, env=env).stdout.split()
    assert f"-I{os.path.realpath(config.INCLUDE_DIR)}" in [
        "-I" + os.path.realpath(f[2:]) for f in flags if f.startswith("-I")]
    src = tmp_path / "prog.c"
    src.write_text(PROGRAM)
    exe = tmp_path / "prog"
    subprocess.run([CC, str(src), *flags, "-o", str(exe)], check=True)
    run_program(exe)


@needs_cc
@pytest.mark.skipif(shutil.which("cmake") is None, reason="no cmake")
def test_cmake_find_package(tmp_path):
    (tmp_path / "prog.c").write_text(PROGRAM)
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(uses_cmlx C)\n"
        "find_package(cmlx 0.1 REQUIRED)\n"
        "add_executable(prog prog.c)\ntarget_link_libraries(prog PRIVATE cmlx::cmlx)\n")
    build = tmp_path / "build"
    subprocess.run(["cmake", "-S", str(tmp_path), "-B", str(build),
                    f"-Dcmlx_DIR={cmlx_config('--cmake-dir')[0]}"], check=True,
                   capture_output=True)
    subprocess.run(["cmake", "--build", str(build)], check=True, capture_output=True)
    run_program(build / "prog")
