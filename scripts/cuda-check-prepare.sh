#!/usr/bin/env bash
# Prepare the GPU check (scripts/cuda-check.sh) on this machine: build the
# CUDA backend for the GPU machine's Python (3.12) and pack what it needs
# there into .cuda-bundle/bundle.tar.xz (ignored by git; name .cuda-bundle
# in the device tool's carry).  The bundle holds the staged package, the
# C tests of the CUDA build and the shared libraries the GPU machine lacks
# (OpenBLAS, KISS FFT, cJSON, zlib and their runtimes); NVRTC and cuBLASLt
# come from the CUDA toolkit or PyTorch's wheels there.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY312=${PY312:-$(command -v python3.12 || true)}
[ -n "$PY312" ] || { echo "cuda-check-prepare: python3.12 not found (set PY312)"; exit 1; }
PY312=$("$PY312" -c 'import sys; print(sys.executable)')
B=build-cuda-py312
cmake -S . -B $B -G Ninja -DCMLX_BUILD_PYTHON=ON -DPython_EXECUTABLE="$PY312" \
  -DCMLX_CUDA=ON -DCUDAToolkit_ROOT=${CUDA_HOME:-/usr/local/cuda} -DCMAKE_BUILD_TYPE=Release \
  --log-level=WARNING
cmake --build $B -j "$(nproc)"
stage=$(mktemp -d)
mkdir -p "$stage/lib" "$stage/bin"
cp -r $B/pkg "$stage/pkg"
cp $B/test_cuda_host $B/test_cuda_kernels "$stage/bin/"
# every shared library the extension loads, except the C library's own
ldd $B/pkg/cmlx/core*.so | awk '/=>/ {print $3}' |
  grep -Ev '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' |
  while read -r lib; do cp -L "$lib" "$stage/lib/"; done
mkdir -p .cuda-bundle
grep -qx '/.cuda-bundle/' .git/info/exclude 2>/dev/null || echo '/.cuda-bundle/' >> .git/info/exclude
tar -C "$stage" -cJf .cuda-bundle/bundle.tar.xz .
rm -rf "$stage"
echo "cuda-check-prepare: $(du -h .cuda-bundle/bundle.tar.xz | cut -f1) in .cuda-bundle/bundle.tar.xz"
