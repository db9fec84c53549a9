#!/usr/bin/env bash
# Rewrites gateway/link/hot-code.ld: the linker script that places the functions the
# release daemon runs to start, serve web chat and API turns and spawn and announce
# sub-agents side by side (docs/performance.md, "Hot code first").
#
# It runs the bench's idle-rss, turn-latency and spawn-announce scenarios (few samples)
# with every daemon under `valgrind --tool=callgrind`, keeps the functions that ran and that
# the binary defines, in the order callgrind first names them, and writes each as a section
# pattern without the hashes rustc puts in symbol names (they change with the toolchain and
# the dependencies' features; the pattern then matches every instance of a generic
# function). Run it after a change that adds or renames much of the hot path, then rebuild
# and compare `bash bench/run.sh idle-rss` before and after. Needs valgrind
# (`apt-get install valgrind`).
#
# `bash bench/hot-code.sh --bin BINARY` profiles a release daemon already built with its
# symbols instead of building one.
#
# `bash bench/hot-code.sh --check [BINARY]` only compares the script with a release binary
# built with its symbols (SWITCHBOARD_STRIP=0; default target/release/switchboard): it names
# functions exactly (with their hashes), and a change that renamed or moved some of them
# leaves them out of the hot section, so idle memory grows by megabytes with nothing else to
# say so. It lists how many are missing and fails when more than 0.5 % are:
# `deploy/package.sh` (the release step of .ci/run) fails then, `bench/run.sh` warns.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == --check ]]; then
    bin=${2:-${CARGO_TARGET_DIR:-target}/release/switchboard}
    script=gateway/link/hot-code.ld
    if ! nm --defined-only "$bin" >/dev/null 2>&1 || [[ -z $(nm --defined-only "$bin" 2>/dev/null | head -1) ]]; then
        echo "error: $bin has no symbols to check $script against: build it with" \
            "SWITCHBOARD_STRIP=0 cargo build --release -p switchboard-gateway" >&2
        exit 2
    fi
    exact=$(sed -n 's/^    \*(\.text\.\([^ *]*\) .*/\1/p' "$script" | sort -u)
    total=$(printf '%s\n' "$exact" | grep -c .)
    missing=$(comm -23 <(printf '%s\n' "$exact") \
        <(nm --defined-only "$bin" | awk '{ print $3 }' | sort -u) | grep -c . || true)
    # A few names drift with ordinary edits (a function inlined away, an instance whose
    # hash moved). Each costs up to 64 KB of idle memory (the kernel maps the pages around
    # a fault with it), and such drift comes with new hot functions the script does not
    # name at all: 26 missing names measured +1.1 MB idle. Past 0.5 % the script is stale.
    allowed=$((total / 200))
    if ((missing > allowed)); then
        echo "error: $script is stale: $missing of its $total functions are not in $bin" \
            "(at most $allowed may be), so idle memory is higher than it should be;" \
            "run bash bench/hot-code.sh" >&2
        exit 1
    fi
    if ((missing > 0)); then
        echo "$script: $missing of its $total functions are not in $bin, within the" \
            "$allowed the check allows; regenerate it before the count nears that" >&2
        exit 0
    fi
    echo "$script: all $total functions are in $bin" >&2
    exit 0
fi
command -v valgrind >/dev/null || {
    echo "hot-code.sh needs valgrind: apt-get install valgrind" >&2
    exit 1
}
target=${CARGO_TARGET_DIR:-$PWD/target}
if [[ ${1:-} == --bin ]]; then
    # `--bin PATH`: profile that release daemon (built with its symbols, from this source
    # and profile) with the bench already built, instead of building both here.
    bin=$2
else
    # Built on their own: together, Cargo would unify the features of the dependencies
    # they share, and the daemon (its symbol names) would differ from the one users build.
    # With its symbols (SWITCHBOARD_STRIP=0): the same code as the stripped build.
    SWITCHBOARD_STRIP=0 cargo build --release -p switchboard-gateway
    cargo build --profile bench-driver -p switchboard-bench
    bin=$target/release/switchboard
fi
out=gateway/link/hot-code.ld
mkdir -p "$(dirname "$out")"

work=$(mktemp -d)
# shellcheck source=bench/callgrind.sh
source bench/callgrind.sh
trap 'callgrind_stop "$work"; rm -rf "$work"' EXIT
callgrind_wrapper "$work" "$work/callgrind" "$bin" --demangle=no

"$target/bench-driver/switchboard-bench" idle-rss turn-latency spawn-announce \
    --idle-secs 1 --warmup 10 --samples 50 --timeout-secs 300 \
    --bin "$work/daemon" --out "$work/report.json" >/dev/null
callgrind_stop "$work"

# Callgrind names a function in full the first time a file mentions it (`fn=(id) name`).
# Two sets of rules, in this order (the first rule that matches a section places it):
# - each function's exact section, so the code that runs is packed together (but for the
#   `.llvm.<n>` suffix of a function made visible across codegen units: it changes with
#   any edit of its unit);
# - the same names without the hashes rustc puts in symbols (they change with the
#   toolchain and the dependencies' features): `_ZN…17h<hash>E` and its `.llvm.<n>` suffix
#   end in `17h*`, crate disambiguators `Cs<hash>_` in `_R…` (v0) names become `Cs*_`.
#   A build whose hashes differ still finds its hot code here (with every instance of a
#   generic function: more pages, still far fewer than unordered).
# LLVM puts functions it thinks cold (`#[cold]`, slow paths) in `.text.unlikely.<name>`.
nm --defined-only "$bin" | awk '$2 ~ /^[tTwW]$/ { print $3 }' | sort -u >"$work/defined"
cat "$work"/callgrind.* |
    sed -n 's/^c\{0,1\}fn=([0-9]*) //p' |
    awk 'NR == FNR { defined[$0] = 1; next } ($0 in defined)' "$work/defined" - |
    sed 's/\.llvm\.[0-9]*$/.llvm.*/' | awk '!seen[$0]++' >"$work/hot"
sed -e 's/17h[0-9a-f]\{16\}E\(\.llvm\.\*\)\{0,1\}$/17h*/' -e '/^_R/s/Cs[0-9A-Za-z]*_/Cs*_/g' \
    "$work/hot" | grep -F '*' | awk '!seen[$0]++' >"$work/patterns"
{
    echo "/* Hot code of the switchboard daemon, linked first in release builds (gateway/build.rs)."
    echo "   Made by bench/hot-code.sh on $(date -u +%Y-%m-%d) from $(git rev-parse --short HEAD). */"
    echo "SECTIONS {"
    echo "  .text.hot : {"
    cat "$work/hot" "$work/patterns" | awk '{ print "    *(.text." $0 " .text.unlikely." $0 ")" }'
    echo "  }"
    echo "} INSERT BEFORE .text;"
} >"$out.tmp"
mv "$out.tmp" "$out"
echo "$(wc -l <"$work/hot") functions, $(wc -l <"$work/patterns") patterns in $out" >&2
