#!/usr/bin/env bash
# Idempotent developer/CI setup for cmlx on Debian 12 (run as root, or with sudo available).
#   1. installs the missing Debian packages (apt-get update only if something is missing)
#   2. creates .venv (python3 -m venv, with the python3 on PATH) if absent or broken
#   3. pip-installs a level's requirements into .venv unless its stamp is newer:
#        setup.sh demo   requirements-demo.txt: what make demo needs (~300 MB)
#        setup.sh test   that and requirements-dev.txt: the references the tests
#                        and benchmarks compare with (PyTorch, MLX: ~6 GB)
set -euo pipefail

LEVEL="${1:-test}"
case "$LEVEL" in
  demo) REQ_FILES=(requirements-demo.txt) ;;
  test) REQ_FILES=(requirements-demo.txt requirements-dev.txt) ;;
  *) printf 'setup: ERROR: unknown level %s (demo or test)\n' "$LEVEL" >&2; exit 2 ;;
esac

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

VENV="$ROOT/.venv"
STAMP="$VENV/.req-stamp-$LEVEL"

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libopenblas-dev libkissfft-dev libcjson-dev zlib1g-dev
  python3 python3-venv python3-dev git
  openmpi-bin libopenmpi-dev
  openssh-server openssh-client iproute2
)

say()  { printf 'setup: %s\n' "$*"; }
warn() { printf 'setup: WARNING: %s\n' "$*" >&2; }
die()  { printf 'setup: ERROR: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------- apt
missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for p in "${APT_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$p")
    fi
  done
else
  warn "dpkg not found (not Debian?); skipping system packages"
fi

if ((${#missing[@]})); then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || die "need root (or sudo) to install: ${missing[*]}"
    SUDO="sudo"
  fi
  say "installing apt packages: ${missing[*]}"
  log="$(mktemp /tmp/cmlx-apt.XXXXXX.log)"
  if ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$log" 2>&1; then
    cat "$log" >&2; die "apt-get update failed"
  fi
  if ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
       "${missing[@]}" >>"$log" 2>&1; then
    cat "$log" >&2; die "apt-get install failed for: ${missing[*]}"
  fi
  rm -f "$log"
  say "apt packages installed"
else
  say "apt packages: all present"
fi

# ---------------------------------------------------------------- venv
PY="$(command -v python3 || true)"
[ -n "$PY" ] || die "python3 not found on PATH"

if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
  :
else
  if [ -e "$VENV" ]; then
    warn ".venv exists but is broken; recreating it"
    rm -rf "$VENV"
  fi
  say "creating .venv with $("$PY" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
  "$PY" -m venv "$VENV" || die "python3 -m venv failed (is python3-venv installed?)"
fi

# ---------------------------------------------------------------- pip
stale=0
[ -f "$STAMP" ] || stale=1
for f in "${REQ_FILES[@]}"; do [ "$STAMP" -nt "$ROOT/$f" ] || stale=1; done
if [ "$stale" -eq 0 ]; then
  say "python requirements ($LEVEL): up to date (${STAMP#"$ROOT"/})"
  exit 0
fi

PIP=("$VENV/bin/python" -m pip --disable-pip-version-check --no-input -q)

# Each line: a requirement, then a comment saying why ("optional: ..." marks
# one whose failure is not fatal).  What is installed is printed with why.
required=()
optional=()
for f in "${REQ_FILES[@]}"; do
  while IFS= read -r line || [ -n "$line" ]; do
    spec="${line%%#*}"
    spec="$(printf '%s' "$spec" | tr -d '[:space:]')"
    [ -n "$spec" ] || continue
    why=""
    [[ "$line" == *"#"* ]] && why="$(printf '%s' "${line#*#}" | sed 's/^ *//')"
    if [[ "$why" == optional:* ]]; then
      optional+=("$spec")
      why="${why#optional: }"
    else
      required+=("$spec")
    fi
    if "$VENV/bin/python" -m pip show -q "${spec%%[<>=\[]*}" >/dev/null 2>&1; then
      continue  # present: pip would only check it again
    fi
    say "  ${spec}: ${why:-(no reason given in $f)}"
  done < "$ROOT/$f"
done

if ((${#required[@]})); then
  say "pip installing ($LEVEL): ${required[*]}"
  "${PIP[@]}" install "${required[@]}" || die "pip install failed: ${required[*]}"
fi

for spec in "${optional[@]}"; do
  say "pip installing (optional): $spec"
  if ! "${PIP[@]}" install "$spec"; then
    warn "optional package '$spec' could not be installed; comparison tests/benchmarks will skip it"
    warn "(to retry: rm ${STAMP#"$ROOT"/} && make setup)"
  fi
done

touch "$STAMP"
say "python requirements ($LEVEL) installed"
