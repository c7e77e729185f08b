#!/usr/bin/env bash
# The GPU check, run on the GPU machine (scripts/cuda-check-prepare.sh
# packed what it needs here first, in .cuda-bundle).  Logs go to $OUT:
#   smi.txt      nvidia-smi and the libraries found
#   host.txt     the CUDA build's C tests (host logic, NVRTC compiles)
#   cuda.txt     tests/python/test_cuda.py: GPU against CPU
#   bench.txt    benchmarks/bench_cuda.py beside PyTorch
#   suite.txt    the Python suite with the GPU as default device
# Each step has its own time limit so the whole stays under 8 minutes.
set -u
OUT=${OUT:-/tmp/cuda-check-out}
mkdir -p "$OUT"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
B=/tmp/cmlx-bundle
rm -rf $B && mkdir -p $B && tar -C $B -xJf .cuda-bundle/bundle.tar.xz
export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONPATH=$B/pkg PYTHONUNBUFFERED=1
PY=${PY:-python3}
# NVRTC and cuBLASLt: the toolkit's, else the ones PyTorch's wheels bring
dirs=$(find /usr/local/cuda/lib64 "$($PY -c 'import site; print(site.getsitepackages()[0])')/nvidia" \
  \( -name 'libnvrtc.so*' -o -name 'libcublasLt.so*' \) -printf '%h\n' 2>/dev/null | sort -u | paste -sd:)
export CMLX_CUDA_LIBRARY_PATH=$dirs
{ nvidia-smi; echo "CMLX_CUDA_LIBRARY_PATH=$dirs"; $PY -c 'import cmlx.core as mx; print(mx.cuda.is_available(), mx.default_device(), mx.device_info())'; } > "$OUT/smi.txt" 2>&1
{ timeout 60 $B/bin/test_cuda_host; timeout 120 $B/bin/test_cuda_kernels; } > "$OUT/host.txt" 2>&1
timeout 150 $PY -m pytest -q -p no:cacheprovider -rf tests/python/test_cuda.py > "$OUT/cuda.txt" 2>&1
timeout 90 $PY benchmarks/bench_cuda.py > "$OUT/bench.txt" 2>&1
CMLX_TEST_DEVICE=gpu timeout 170 $PY -m pytest -q -p no:cacheprovider -n 8 --timeout 60 \
  --junitxml="$OUT/suite.xml" tests/python > "$OUT/suite.txt" 2>&1
tail -3 "$OUT"/*.txt
