#!/usr/bin/env bash
# Build the libFuzzer targets (tests/fuzz/fuzz_*.c, clang with ASan+UBSan)
# in build-fuzz/ and run each for FUZZ_SECONDS (default 30) on its seed
# corpus tests/fuzz/corpus/<format>/.  New inputs go to build-fuzz/corpus/,
# never into the committed seeds; a crash leaves its input in
# build-fuzz/crashes/ and fails the run.
#   scripts/fuzz.sh [format ...]      (default: every target)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SECONDS_EACH="${FUZZ_SECONDS:-30}"
BUILD="${FUZZ_BUILD:-build-fuzz}"

CC_FUZZ="${FUZZ_CC:-$(command -v clang-14 || command -v clang || true)}"
if [ -z "$CC_FUZZ" ]; then
  echo "fuzz: installing clang (libFuzzer)"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends clang
  CC_FUZZ="$(command -v clang)"
fi

if [ -f "$BUILD/CMakeCache.txt" ] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$BUILD/CMakeCache.txt"; then
  rm -rf "$BUILD"
fi
CC="$CC_FUZZ" cmake -S . -B "$BUILD" -G Ninja --log-level=WARNING -DCMLX_FUZZ=ON \
  -DCMLX_BUILD_TESTS=OFF -DCMLX_BUILD_PYTHON=OFF -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_FLAGS_DEBUG="-O1 -g"
cmake --build "$BUILD"

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in tests/fuzz/fuzz_*.c; do t="$(basename "$f" .c)"; targets+=("${t#fuzz_}"); done
fi

mkdir -p "$BUILD/crashes"
failed=()
for t in "${targets[@]}"; do
  work="$BUILD/corpus/$t"
  mkdir -p "$work"
  echo "fuzz: $t for ${SECONDS_EACH}s"
  # One process, one thread (the machine is shared); -rss_limit_mb bounds
  # memory, so an unbounded allocation is reported as a failure.
  if ! ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
       CMLX_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
       "$BUILD/fuzz_$t" -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -max_len=65536 \
       -timeout=20 -print_final_stats=1 -artifact_prefix="$BUILD/crashes/${t}-" \
       "$work" "tests/fuzz/corpus/$t" 2>"$BUILD/fuzz_$t.log"; then
    failed+=("$t")
    tail -60 "$BUILD/fuzz_$t.log"
  else
    grep -E "^stat::number_of_executed_runs|^#[0-9]+.*DONE" "$BUILD/fuzz_$t.log" | tail -2 || true
  fi
done
if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} (inputs in $BUILD/crashes/, logs $BUILD/fuzz_<t>.log)"
  exit 1
fi
echo "fuzz: ${targets[*]}: no crash"
