#!/usr/bin/env bash
# Builds the release artifacts into dist/ (docs/operating.md, "Release artifacts"):
#   switchboard          the daemon, stripped (as `cargo build --release` leaves it), with a
#                        .gnu_debuglink to
#   switchboard.debug    its symbols and line tables (perf, gdb and addr2line read them)
#   switchboard_<version>-1_<arch>.deb   the Debian package (cargo-deb): the binary, the
#                        systemd unit, a default /etc/switchboard/config.json5, a system user
#   SHA256SUMS
# One release build, with symbols kept (SWITCHBOARD_STRIP=0, gateway/build.rs): the code is
# the same as the stripped build's (the strip is a link argument, not a profile setting), so
# the debug file matches the shipped binary. The hot-code linker script is checked against
# that build last: a stale one fails the run (bench/hot-code.sh --check). Needs objcopy (binutils)
# and cargo-deb, installed on first use (`cargo install cargo-deb --locked`).
# .ci/run runs it unless SWITCHBOARD_CI_RELEASE=0. On a fresh Debian machine it installs
# what it needs: binutils and systemd with apt-get (through sudo when not root), cargo-deb
# with cargo.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-$PWD/target}
out=dist
# A known version (its own Cargo.lock with --locked); CARGO_DEB_VERSION picks another.
cargo_deb_version=${CARGO_DEB_VERSION:-3.8.0}

# apt_install PKG...: Debian's packages for a tool this script needs.
apt_install() {
    local sudo=()
    [[ $(id -u) -eq 0 ]] || sudo=(sudo)
    echo "== installing $* (apt-get)" >&2
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
}
command -v objcopy >/dev/null || apt_install binutils
command -v systemd-analyze >/dev/null || apt_install systemd
command -v objcopy >/dev/null || {
    echo "package.sh needs objcopy: apt-get install binutils" >&2
    exit 1
}
if ! cargo deb --version >/dev/null 2>&1; then
    echo "== installing cargo-deb $cargo_deb_version" >&2
    CARGO_TARGET_DIR="$target/cargo-deb" cargo install cargo-deb --locked --version "$cargo_deb_version"
fi

echo "== release build (symbols kept)" >&2
start=$(date +%s)
SWITCHBOARD_STRIP=0 cargo build --release --locked -p switchboard-gateway
echo "release build: $(($(date +%s) - start)) s" >&2
bin=$target/release/switchboard

echo "== split the debug info" >&2
rm -rf "$out"
mkdir -p "$out"
objcopy --only-keep-debug "$bin" "$out/switchboard.debug"
chmod 0644 "$out/switchboard.debug"
objcopy --strip-all --add-gnu-debuglink="$out/switchboard.debug" "$bin" "$out/switchboard"

echo "== systemd unit" >&2
# verify needs the ExecStart program to exist: a copy of the unit runs the built binary.
command -v systemd-analyze >/dev/null || {
    echo "package.sh needs systemd-analyze to check the unit: apt-get install systemd" >&2
    exit 1
}
unit=$(mktemp -d)/switchboard.service
sed "s|^ExecStart=/usr/bin/switchboard |ExecStart=$PWD/$out/switchboard |" deploy/switchboard.service >"$unit"
systemd-analyze verify "$unit"
rm -r "$(dirname "$unit")"

echo "== Debian package" >&2
# --no-build: the binary is dist/switchboard (the metadata's asset), already stripped.
cargo deb -p switchboard-gateway --no-build --no-strip --output "$out/"

(cd "$out" && sha256sum switchboard switchboard.debug ./*.deb | sed 's| \./| |' >SHA256SUMS)
ls -l "$out" >&2

# Last, so the artifacts are there to look at either way; a stale script fails the run.
echo "== hot-code linker script against this build" >&2
bash bench/hot-code.sh --check "$bin"
