"""Run inside a bare Debian 12 root (scripts/test_wheel_clean.sh) after
`pip install cmlx-*.whl`: cmlx works from Python and from C with only what
the wheel brought.  No NumPy here: references are computed in plain Python.
Argument: the OpenBLAS core name the host's system OpenBLAS picks."""

import cmath
import ctypes
import glob
import os
import subprocess
import sys
import tempfile

import cmlx
import cmlx.config
import cmlx.core as mx

expected_core = sys.argv[1]
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def close(a, b, tol=1e-4):
    return all(abs(x - y) <= tol * (1 + abs(y)) for x, y in zip(a, b))


# Shared libraries: every one the package's two binaries need resolves.
pkg = os.path.dirname(cmlx.__file__)
for lib in glob.glob(os.path.join(pkg, "core*.so")) + [os.path.join(pkg, "lib", "libcmlx.so")]:
    ldd = subprocess.run(["ldd", lib], capture_output=True, text=True).stdout
    check("not found" not in ldd, f"ldd {os.path.basename(lib)}: every library found")

# Docstrings and type stubs came along.
check("exponential" in (mx.exp.__doc__ or ""), "docstrings (help(mx.exp))")
check(os.path.isfile(os.path.join(pkg, "core", "__init__.pyi")), "type stubs (cmlx/core/__init__.pyi)")

# BLAS: a 64x64 matmul (through OpenBLAS's sgemm) against plain Python.
n = 64
a = [[((i * 7 + j * 3) % 11) / 10.0 for j in range(n)] for i in range(n)]
b = [[((i * 5 + j) % 13) / 10.0 for j in range(n)] for i in range(n)]
ref = [[sum(a[i][k] * b[k][j] for k in range(n)) for j in range(n)] for i in range(n)]
got = (mx.array(a) @ mx.array(b)).tolist()
check(all(close(g, r) for g, r in zip(got, ref)), "matmul 64x64 matches plain Python")
check(close(mx.linalg.inv(mx.array([[2.0, 1.0], [1.0, 3.0]]), stream=mx.cpu).flatten().tolist(),
            [0.6, -0.2, -0.2, 0.4]), "linalg.inv (LAPACK)")

# FFT (KISS FFT, bundled): against a direct DFT.
x = [complex(k % 5, (k * 3) % 7) for k in range(12)]
dft = [sum(x[t] * cmath.exp(-2j * cmath.pi * f * t / 12) for t in range(12)) for f in range(12)]
out = mx.fft.fft(mx.array(x)).tolist()
check(all(abs(o - d) < 1e-3 for o, d in zip(out, dft)), "fft of 12 points matches a DFT")

# Files: zlib (compressed npz) and safetensors round trips.
with tempfile.TemporaryDirectory() as tmp:
    w = mx.arange(4096, dtype=mx.float32).reshape(64, 64)
    mx.savez_compressed(os.path.join(tmp, "w.npz"), w=w)
    check(mx.array_equal(mx.load(os.path.join(tmp, "w.npz"))["w"], w).item(), "savez_compressed/load")
    mx.save_safetensors(os.path.join(tmp, "w.safetensors"), {"w": w})
    check(mx.array_equal(mx.load(os.path.join(tmp, "w.safetensors"))["w"], w).item(),
          "save_safetensors/load")

# The bundled OpenBLAS chose the same kernels for this CPU as the system's.
libs = glob.glob(os.path.join(os.path.dirname(pkg), "cmlx.libs", "libopenblas*.so*"))
check(len(libs) == 1, f"one bundled OpenBLAS in cmlx.libs ({libs})")
if libs:
    blas = ctypes.CDLL(libs[0])
    blas.openblas_get_corename.restype = ctypes.c_char_p
    core = blas.openblas_get_corename().decode()
    check(core == expected_core, f"bundled OpenBLAS core {core!r} == system's {expected_core!r}")

# C: a program built with python -m cmlx.config's flags runs.
with tempfile.TemporaryDirectory() as tmp:
    src = os.path.join(tmp, "prog.c")
    with open(src, "w") as f:
        f.write('#include <stdio.h>\n#include "mlx/c/mlx.h"\nint main(void) {\n'
                '  mlx_stream s = mlx_default_cpu_stream_new();\n'
                '  mlx_array a = mlx_array_new_float(20.0f), b = mlx_array_new_float(22.0f);\n'
                '  mlx_array c = mlx_array_new();\n'
                '  if (mlx_add(&c, a, b, s) || mlx_array_eval(c)) return 1;\n'
                '  float v; if (mlx_array_item_float32(&v, c)) return 1;\n'
                '  printf("%g\\n", v);\n'
                '  mlx_array_free(a); mlx_array_free(b); mlx_array_free(c); mlx_stream_free(s);\n'
                '  return 0;\n}\n')
    flags = subprocess.run([sys.executable, "-m", "cmlx.config", "--cflags", "--libs"],
                           capture_output=True, text=True, check=True).stdout.split()
    exe = os.path.join(tmp, "prog")
    cc = subprocess.run(["gcc", src, *flags, "-o", exe], capture_output=True, text=True)
    check(cc.returncode == 0, "gcc with cmlx.config's flags" + (": " + cc.stderr if cc.stderr else ""))
    if cc.returncode == 0:
        run = subprocess.run([exe], capture_output=True, text=True)
        check(run.returncode == 0 and run.stdout.strip() == "42", "the C program prints 42")

print(f"check_wheel: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
