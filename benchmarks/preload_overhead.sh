#!/usr/bin/env bash
# What libdlio_preload.so costs a program reading from the page cache: runs
# preload_overhead_benchmark without and with LD_PRELOAD (its data file inside the traced prefix,
# so every call is traced and its event written), alternating ROUNDS times, then prints per
# benchmark the time per call of both (the fastest repetition, which other load on the machine
# disturbs least, and the median), the nanoseconds added per call and the overhead in percent.
#
#   benchmarks/preload_overhead.sh [BUILD_DIR] [ROUNDS]   (12 rounds or more for a figure)
#
# BUILD_DIR (default: build) must hold a Release build configured with -DDLIO_BUILD_BENCHMARKS=ON.
# Targets: < 3 % at 1 MiB, < 1000 ns added per call at 4 KiB.
# DLIO_PRELOAD_NO_FAULTS or DLIO_PRELOAD_NO_RUN_DELAY set in the environment reach the traced runs.
set -euo pipefail
build=${1:-build}
rounds=${2:-3}
bench="$build/benchmarks/preload_overhead_benchmark"
lib="$build/preload/libdlio_preload.so"
for f in "$bench" "$lib"; do
  [[ -e "$f" ]] || { echo "missing $f (build with -DDLIO_BUILD_BENCHMARKS=ON)" >&2; exit 2; }
done
work=$(mktemp -d /tmp/dlio-preload-overhead.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/data" "$work/traces"
export DLIO_BENCH_DATA_DIR="$work/data"
args=(--benchmark_repetitions=3 --benchmark_min_time=0.2 --benchmark_format=json)

events=0
for ((r = 0; r < rounds; r++)); do
  "$bench" "${args[@]}" >"$work/base-$r.json"
  DLIO_PRELOAD_OUTPUT="$work/traces" DLIO_PRELOAD_DATA_DIRS="$work/data" LD_PRELOAD="$lib" \
    "$bench" "${args[@]}" >"$work/preload-$r.json"
  events=$((events + $(cat "$work"/traces/*.pfw | grep -c '"ph":"X"' || true)))
  rm -f "$work"/traces/*.pfw
done

/usr/bin/python3 - "$work" "$rounds" "$events" <<'PY'
import json, statistics, sys

work, rounds = sys.argv[1], int(sys.argv[2])

def times(kind):
    out = {}
    for r in range(rounds):
        for b in json.load(open(f"{work}/{kind}-{r}.json"))["benchmarks"]:
            if b.get("run_type") != "iteration":
                continue
            scale = {"ns": 1, "us": 1e3, "ms": 1e6}[b["time_unit"]]
            out.setdefault(b["run_name"], []).append(
                (b["real_time"] * scale, b["cpu_time"] * scale))
    return out

base, pre = times("base"), times("preload")
print(f"traced events written: {sys.argv[3]}; {rounds} rounds x 3 repetitions per run")
print("ns per call; min = the fastest repetition, med = the median")
head = f"{'base':>8}{'preload':>9}{'added':>7}{'overhead':>9}"
print(f"{'':<17}|{'wall min':^33}|{'wall med':^33}|{'cpu min':^33}")
print(f"{'benchmark':<17}|{head}|{head}|{head}")
for name in base:
    cols = []
    for i, f in ((0, min), (0, statistics.median), (1, min)):
        b, p = f(t[i] for t in base[name]), f(t[i] for t in pre[name])
        cols.append(f"{b:>8.0f}{p:>9.0f}{p - b:>7.0f}{100 * (p - b) / b:>8.2f}%")
    print(f"{name:<17}|" + "|".join(cols))
PY
