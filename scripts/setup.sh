#!/usr/bin/env bash
# Installs what tablecam needs to build, test and run on Debian 12, and nothing that is already there.
#
#   1. Debian packages (OpenCV with contrib, clang/libclang for bindgen, pkg-config, nasm, ZeroMQ and
#      libsodium headers, and the basics a bare machine may lack: make, g++, pip).
#   2. The ONNX Runtime shared library, taken from the official `onnxruntime` wheel on PyPI and
#      extracted into the git-ignored folder .native/onnxruntime/ (tablecam finds it there; see
#      docs/stack.md). The extracted file is checked against the sha256 the wheel's RECORD lists.
#
# Idempotent: a second run only checks and prints "ok" lines (about a second).
# Environment:
#   TABLECAM_SKIP_APT=1   do not check or install Debian packages (you provide them another way)
#   TABLECAM_SKIP_BROWSER=1   do not install chromium (the dashboard's browser test is then skipped)
#   TABLECAM_EXTRA_APT="pkg ..."   more Debian packages to install the same way (scripts/train.sh's fonts)
set -euo pipefail

ORT_VERSION="1.31.1"
ORT_LIB_NAME="libonnxruntime.so.${ORT_VERSION}"
# sha256 of onnxruntime/capi/libonnxruntime.so.1.31.1 in the x86_64 manylinux wheel (pinned; the
# wheel's own RECORD is checked as well, on every architecture).
ORT_LIB_SHA256_X86_64="fc44112fbe06d7d689c57e11d3862031f64711007e4ee020f8eed5185fd2c1d3"
# Card artwork for the simulator (src/sim/faces): fonts of the procedural decks and the packaged
# SVG decks, read from /usr/share at generation time (see datasets/README.md).
# chromium (headless, for the dispute report's and the dashboard's browser tests) is added below
# unless TABLECAM_SKIP_BROWSER=1.
APT_PACKAGES=(libopencv-dev clang libclang-dev pkg-config nasm libzmq3-dev libsodium-dev make g++
    fonts-dejavu-core fonts-freefont-ttf gnome-cards-data kdegames-card-data-kf5)

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NATIVE="$ROOT/.native"
WHEEL_DIR="$NATIVE/wheels"
ORT_DIR="$NATIVE/onnxruntime"
ORT_LIB="$ORT_DIR/$ORT_LIB_NAME"

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: ERROR: %s\n' "$*" >&2; exit 1; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        die "need root to run: $* (run this script as root or install sudo)"
    fi
}

is_installed() {
    [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" = "install ok installed" ]
}

# --- 1. Debian packages ---------------------------------------------------------------------------
install_apt_packages() {
    if [ "${TABLECAM_SKIP_APT:-0}" = "1" ]; then
        say "skipping Debian packages (TABLECAM_SKIP_APT=1)"
        return
    fi
    command -v dpkg-query >/dev/null 2>&1 || die "dpkg-query not found: this script expects Debian 12 (bookworm); install the equivalents of: ${APT_PACKAGES[*]}"

    local wanted=("${APT_PACKAGES[@]}")
    local extra
    read -r -a extra <<<"${TABLECAM_EXTRA_APT:-}"
    wanted+=("${extra[@]}")
    # Headless browser for the dashboard's end-to-end test (tests/dashboard.rs); skipped with
    # TABLECAM_SKIP_BROWSER=1, in which case that test is skipped as well.
    if [ "${TABLECAM_SKIP_BROWSER:-0}" != "1" ]; then
        wanted+=(chromium)
    fi
    # pip is needed only to download the ONNX Runtime wheel, and only when the library is missing.
    if [ ! -f "$ORT_LIB" ] && ! python3 -m pip --version >/dev/null 2>&1; then
        wanted+=(python3-pip)
    fi

    local missing=()
    for pkg in "${wanted[@]}"; do
        is_installed "$pkg" || missing+=("$pkg")
    done
    if [ "${#missing[@]}" -eq 0 ]; then
        say "ok: Debian packages present (${wanted[*]})"
        return
    fi
    say "installing Debian packages: ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
    say "ok: installed ${missing[*]}"
}

# --- 2. ONNX Runtime --------------------------------------------------------------------------------
# Checks $ORT_LIB against the sha256 recorded next to it when it was extracted and verified.
ort_lib_ok() {
    [ -f "$ORT_LIB" ] && [ -f "$ORT_LIB.sha256" ] || return 1
    local size
    size="$(stat -c %s "$ORT_LIB")"
    [ "$size" -gt 1000000 ] || return 1
    [ "$(sha256sum "$ORT_LIB" | cut -d' ' -f1)" = "$(cat "$ORT_LIB.sha256")" ]
}

install_onnxruntime() {
    if ort_lib_ok; then
        say "ok: ONNX Runtime $ORT_VERSION at ${ORT_LIB#"$ROOT"/}"
        return
    fi
    command -v python3 >/dev/null 2>&1 || die "python3 not found (needed to download the onnxruntime wheel from PyPI)"
    python3 -m pip --version >/dev/null 2>&1 || die "pip not available for python3: install python3-pip"

    mkdir -p "$WHEEL_DIR" "$ORT_DIR"
    local wheel
    wheel="$(ls "$WHEEL_DIR"/onnxruntime-"$ORT_VERSION"-*.whl 2>/dev/null | head -n1 || true)"
    if [ -z "$wheel" ]; then
        say "downloading onnxruntime==$ORT_VERSION wheel from PyPI (~24 MB)"
        python3 -m pip download "onnxruntime==$ORT_VERSION" --no-deps --only-binary=:all: \
            --disable-pip-version-check -q -d "$WHEEL_DIR"
        wheel="$(ls "$WHEEL_DIR"/onnxruntime-"$ORT_VERSION"-*.whl 2>/dev/null | head -n1 || true)"
        [ -n "$wheel" ] || die "pip did not produce an onnxruntime-$ORT_VERSION wheel in $WHEEL_DIR"
    fi
    say "extracting $ORT_LIB_NAME from $(basename "$wheel")"
    # Python's zipfile, so `unzip` is not needed. The wheel's RECORD holds the sha256 of every file.
    python3 - "$wheel" "$ORT_LIB_NAME" "$ORT_LIB" <<'PY'
import base64, hashlib, os, sys, zipfile

wheel, name, dest = sys.argv[1:4]
member = "onnxruntime/capi/" + name
with zipfile.ZipFile(wheel) as zf:
    record_name = next((n for n in zf.namelist() if n.endswith(".dist-info/RECORD")), None)
    if record_name is None:
        sys.exit(f"setup: ERROR: {wheel} has no RECORD file")
    expected = None
    for line in zf.read(record_name).decode().splitlines():
        parts = line.rsplit(",", 2)
        if len(parts) == 3 and parts[0] == member and parts[1].startswith("sha256="):
            expected = parts[1][len("sha256="):]
    if expected is None:
        sys.exit(f"setup: ERROR: {member} is not listed in {record_name} of {wheel}")
    data = zf.read(member)

digest = hashlib.sha256(data)
got = base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode()
if got != expected:
    sys.exit(f"setup: ERROR: sha256 of {member} is {got}, the wheel's RECORD says {expected}; delete {os.path.dirname(wheel)} and retry")
if len(data) < 1_000_000:
    sys.exit(f"setup: ERROR: {member} is only {len(data)} bytes; delete {os.path.dirname(wheel)} and retry")

tmp = dest + ".tmp"
with open(tmp, "wb") as f:
    f.write(data)
os.chmod(tmp, 0o755)
os.replace(tmp, dest)
with open(dest + ".sha256", "w") as f:
    f.write(digest.hexdigest() + "\n")
print(f"setup: verified {name}: {len(data)} bytes, sha256 {digest.hexdigest()}")
PY
    ort_lib_ok || die "verification of $ORT_LIB failed after extraction"
    if [ "$(uname -m)" = "x86_64" ] && [ "$(cat "$ORT_LIB.sha256")" != "$ORT_LIB_SHA256_X86_64" ]; then
        rm -f "$ORT_LIB" "$ORT_LIB.sha256"
        die "sha256 of $ORT_LIB_NAME does not match the pinned $ORT_LIB_SHA256_X86_64; delete $WHEEL_DIR and retry"
    fi
    say "ok: ONNX Runtime $ORT_VERSION at ${ORT_LIB#"$ROOT"/}"
}

check_rust() {
    if command -v cargo >/dev/null 2>&1; then
        say "ok: $(cargo --version)"
    else
        die "cargo not found: install the Rust toolchain (https://rustup.rs) and re-run"
    fi
}

install_apt_packages
install_onnxruntime
check_rust
say "done"
