#!/usr/bin/env python3
"""Paired rounds of the end-to-end bench: two or more arms (a daemon binary, optionally
with a config merged in) run back to back in every round, their order alternating, and
each figure is compared within rounds against the first arm. On a shared 2-core VM the
run-to-run noise is as large as the differences sought; pairing removes the drift between
rounds (docs/performance.md, "Against the core, run by run").

    python3 bench/paired.py --rounds 6 --arm head=target/release/switchboard \
        --arm five=target/release/switchboard@'{"tools":{"allow":["group:sessions"]}}' \
        -- turn-latency throughput

Each arm is NAME=BINARY or NAME=BINARY@JSON (JSON: `--config-merge`). Arguments after
`--` go to `switchboard-bench` (scenarios and flags). Reports are kept in --dir.
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys

BENCH = os.path.join(
    os.environ.get("CARGO_TARGET_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target"),
    "bench-driver",
    "switchboard-bench",
)


def parse_arm(text):
    name, _, rest = text.partition("=")
    if not name or not rest:
        raise argparse.ArgumentTypeError(f"expected NAME=BINARY[@JSON], got {text!r}")
    binary, _, merge = rest.partition("@")
    if merge:
        json.loads(merge)
    return name, binary, merge or None


def run_arm(arm, round_no, args, bench_args):
    name, binary, merge = arm
    out = os.path.join(args.dir, f"r{round_no:02}-{name}.json")
    cmd = [args.bench, "--bin", binary, "--out", out]
    if merge:
        cmd += ["--config-merge", merge]
    cmd += bench_args
    print(f"round {round_no} {name}: {' '.join(cmd)}", file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        report = json.load(f)
    return {
        (fig["scenario"], fig["figure"]): fig["value"]
        for fig in report["figures"]
        if fig.get("value") is not None
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--arm", type=parse_arm, action="append", required=True)
    parser.add_argument("--dir", default="bench-results/paired")
    parser.add_argument("--bench", default=BENCH)
    parser.add_argument("bench_args", nargs="*")
    args = parser.parse_args()
    if len(args.arm) < 2:
        parser.error("give at least two --arm")
    os.makedirs(args.dir, exist_ok=True)
    results = {arm[0]: [] for arm in args.arm}
    for r in range(args.rounds):
        order = args.arm if r % 2 == 0 else list(reversed(args.arm))
        for arm in order:
            results[arm[0]].append(run_arm(arm, r, args, args.bench_args))
    base = args.arm[0][0]
    keys = [k for k in results[base][0] if all(k in rep for reps in results.values() for rep in reps)]
    names = [a[0] for a in args.arm]
    header = ["scenario", "figure"] + [f"{n} median" for n in names] + [f"{n} vs {base}" for n in names[1:]]
    print("\t".join(header))
    for key in keys:
        row = list(key)
        for n in names:
            row.append(f"{statistics.median(rep[key] for rep in results[n]):.4g}")
        for n in names[1:]:
            diffs = []
            for b, o in zip(results[base], results[n]):
                if b[key]:
                    diffs.append((o[key] - b[key]) / abs(b[key]) * 100.0)
            if len(diffs) >= 2:
                mean = statistics.mean(diffs)
                sd = statistics.stdev(diffs)
                t = mean / (sd / math.sqrt(len(diffs))) if sd > 0 else float("inf")
                lower = sum(d < 0 for d in diffs)
                row.append(f"{mean:+.1f} % (t {t:.1f}, lower {lower}/{len(diffs)})")
            else:
                row.append("-")
        print("\t".join(row))


if __name__ == "__main__":
    main()
