#!/usr/bin/env bash
# make test-wheel: the wheel from make wheel installs and runs on a bare
# Debian 12, one with no -dev packages and no OpenBLAS, KISS FFT or cJSON:
# a minimal root made with debootstrap (python3, and gcc for the C check),
# kept in build/clean-root between runs.  Inside it, as root through chroot:
# pip installs the wheel offline into a fresh venv, and tests/wheel/check_wheel.py
# uses cmlx from Python (BLAS, FFT, files), checks that the bundled OpenBLAS
# picked the same kernels for this CPU as the system's does, and builds and
# runs a C program with `python -m cmlx.config --cflags --libs`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PY:-$ROOT/.venv/bin/python}"
ROOTFS="${WHEEL_ROOTFS:-$ROOT/build/clean-root}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
wheel="$(ls "$ROOT"/dist/cmlx-*.whl 2>/dev/null | head -n 1 || true)"
[ -n "$wheel" ] || { echo "test-wheel: no dist/cmlx-*.whl (make wheel first)" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "test-wheel: needs root (debootstrap, chroot)" >&2; exit 1; }

if [ ! -x "$ROOTFS/usr/bin/python3" ]; then
  if ! command -v debootstrap >/dev/null 2>&1; then
    echo "test-wheel: installing debootstrap (apt)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
  fi
  echo "test-wheel: making a bare Debian 12 root in ${ROOTFS#"$ROOT"/} (debootstrap, a few minutes)"
  rm -rf "$ROOTFS"
  debootstrap --variant=minbase --include=python3,python3-venv,gcc,libc6-dev \
    bookworm "$ROOTFS" "$MIRROR" >"$ROOT/build/debootstrap.log" 2>&1 ||
    { tail -n 20 "$ROOT/build/debootstrap.log" >&2; exit 1; }
fi

# The system's OpenBLAS core choice, for comparison with the bundled copy's.
expected_core="$("$PY" - <<'PYEOF'
import ctypes, ctypes.util
name = ctypes.util.find_library("openblas")
lib = ctypes.CDLL(name)
lib.openblas_get_corename.restype = ctypes.c_char_p
print(lib.openblas_get_corename().decode())
PYEOF
)"

mounted=()
cleanup() {
  for m in "${mounted[@]}"; do umount -l "$m" 2>/dev/null || true; done
}
trap cleanup EXIT
# /proc, /sys and /dev as the host's (the root's own /dev nodes from
# debootstrap do where a container forbids mounts).
for fs in proc sys dev; do
  mkdir -p "$ROOTFS/$fs"
  if mount --bind "/$fs" "$ROOTFS/$fs" 2>/dev/null; then
    mounted=("$ROOTFS/$fs" "${mounted[@]}")
  else
    echo "test-wheel: could not bind /$fs into the root; going on without it"
  fi
done

work="$ROOTFS/tmp/cmlx-wheel"
rm -rf "$work"
mkdir -p "$work"
cp "$wheel" "$work/"
cp "$ROOT/tests/wheel/check_wheel.py" "$work/"
echo "test-wheel: $(basename "$wheel") in a bare Debian 12 root"
chroot "$ROOTFS" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root bash -euc "
  if ls /usr/lib/x86_64-linux-gnu | grep -q -e openblas -e kissfft -e cjson; then
    echo 'test-wheel: the root is not bare: it has OpenBLAS, KISS FFT or cJSON' >&2; exit 1
  fi
  rm -rf /opt/venv
  python3 -m venv /opt/venv
  /opt/venv/bin/pip install -q --no-index --no-deps /tmp/cmlx-wheel/$(basename "$wheel")
  cd /tmp/cmlx-wheel
  /opt/venv/bin/python check_wheel.py '$expected_core'
"
