#!/usr/bin/env bash
# Builds the release daemon and the bench, then runs the end-to-end benchmarks against an
# instant fake model on 127.0.0.1. Arguments go to `switchboard-bench` (no scenario = all);
# e.g. `bash bench/run.sh all --burst 2000`, `bash bench/run.sh turn-latency --samples 5000`.
# The table goes to stdout, progress to stderr, a JSON copy to bench-results/report.json
# (or --out PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
# The daemon is built on its own, as users build it: built together with the bench, Cargo
# would unify the features of the dependencies they share and measure another binary.
# With its symbols (SWITCHBOARD_STRIP=0, gateway/build.rs): the same code as the stripped
# binary users build, and the hot-code check below can read its names.
SWITCHBOARD_STRIP=0 cargo build --release -p switchboard-gateway
cargo build --profile bench-driver -p switchboard-bench
# Idle memory depends on the hot-code linker script matching this binary: say when not.
bash bench/hot-code.sh --check || true
exec "${CARGO_TARGET_DIR:-target}/bench-driver/switchboard-bench" "$@"
