#!/usr/bin/env bash
# Instructions per turn of the daemon, counted by callgrind: repeatable for one binary and
# config whatever else the machine does, so it can tell apart differences that the
# wall-clock figures' noise hides. Runs the bench's `turn-latency` twice with the daemon
# under `valgrind --tool=callgrind` (LONG and SHORT measured turns, same warm-up) and
# prints the difference divided by the difference in turns: start-up, warm-up and
# shutdown cancel out. Needs valgrind (`apt-get install valgrind`) and the release bench.
#
#   bash bench/instructions.sh [--bin PATH] [--config-merge JSON] [--keep DIR]
#
# --keep DIR keeps both profiles (`callgrind_annotate DIR/long.* DIR/short.*`).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/target/release/switchboard
merge=()
keep=
long=250
short=50
while (($#)); do
    case $1 in
    --bin) bin=$(realpath "$2"); shift 2 ;;
    --config-merge) merge=(--config-merge "$2"); shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 64 ;;
    esac
done
command -v valgrind >/dev/null || {
    echo "instructions.sh needs valgrind: apt-get install valgrind" >&2
    exit 1
}
bench=${CARGO_TARGET_DIR:-target}/bench-driver/switchboard-bench
[[ -x $bench ]] || cargo build --profile bench-driver -p switchboard-bench
work=$(mktemp -d)
# shellcheck source=bench/callgrind.sh
source bench/callgrind.sh
trap 'callgrind_stop "$work"; rm -rf "$work"' EXIT

# One profile of `turns` measured turns; prints its total instructions.
profile() {
    local name=$1 turns=$2
    callgrind_wrapper "$work" "$work/$name" "$bin"
    "$bench" turn-latency --warmup 20 --samples "$turns" --timeout-secs 600 \
        --bin "$work/daemon" --out "$work/$name.json" "${merge[@]}" >/dev/null 2>"$work/$name.log" || {
        cat "$work/$name.log" >&2
        exit 1
    }
    callgrind_stop "$work" || exit 1
    # `summary: N` is the profile's total of the default event (Ir).
    grep -h '^summary:' "$work/$name".[0-9]* | awk '{ total += $2 } END { print total }'
}

long_total=$(profile long "$long")
short_total=$(profile short "$short")
per_turn=$(((long_total - short_total) / (long - short)))
echo "instructions per turn: $per_turn ($long_total over $long turns, $short_total over $short)"
if [[ -n $keep ]]; then
    mkdir -p "$keep"
    cp "$work"/long.* "$work"/short.* "$keep"/
fi
