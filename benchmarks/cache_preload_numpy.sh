#!/usr/bin/env bash
# An unmodified numpy program served by dlio's tiered cache through LD_PRELOAD (docs/caching.md,
# "Unmodified programs (LD_PRELOAD)"): FILES .npy files on an emulated parallel file system (a
# `slow` source: a latency per call and a bandwidth cap), a memory tier of about half the
# dataset, and /usr/bin/python3 running benchmarks/cache_preload_numpy.py (np.load over a seeded
# shuffle each epoch, a pause per sample as compute) under libdlio_cache_preload.so against
# `dlio-run cache-serve`. Prints a Markdown table, one row per policy:
#   policy | epoch 1 .. N (s) | tier hits per epoch (%) | source fetches per epoch (files: copies
#   plus opens the source served) | copied (MiB)
# Epoch times are the loop's own (np.load and the pauses); the statistics come from the server
# (kTakeStats at each epoch's end, outside the timed loop).
# Rows: none (a server whose only tier holds 1 byte: every open reads the source, with its cost),
# monarch, lru, clairvoyant (the future file written from the same seeded shuffle), and memory
# (no preload, the files in the page cache: the lower bound).
#
#   benchmarks/cache_preload_numpy.sh [DLIO_RUN] [WORKDIR]
#
# Environment knobs (defaults in brackets):
#   FILES [96]  FILE_BYTES [1048576]  EPOCHS [5]  SEED [42]  COMPUTE_MS [2]
#   LATENCY_US [2000]  BANDWIDTH_MIB_S [200]: the slow source
#   TIER_FRACTION [0.5]: the memory tier's capacity over the dataset's bytes  TIER_THREADS [4]
#   POLICIES ["none monarch lru clairvoyant memory"]
#   CACHE_PRELOAD_LIB [beside dlio-run in the build tree: preload/cache/libdlio_cache_preload.so]
set -euo pipefail

DLIO_RUN="${1:-build/apps/dlio-run/dlio-run}"
WORK="${2:-/tmp/dlio-cache-preload-numpy}"
FILES="${FILES:-96}"
FILE_BYTES="${FILE_BYTES:-1048576}"
EPOCHS="${EPOCHS:-5}"
SEED="${SEED:-42}"
COMPUTE_MS="${COMPUTE_MS:-2}"
LATENCY_US="${LATENCY_US:-2000}"
BANDWIDTH_MIB_S="${BANDWIDTH_MIB_S:-200}"
TIER_FRACTION="${TIER_FRACTION:-0.5}"
TIER_THREADS="${TIER_THREADS:-4}"
POLICIES="${POLICIES:-none monarch lru clairvoyant memory}"
PY=/usr/bin/python3
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
LOOP="$HERE/cache_preload_numpy.py"

[[ -x "$DLIO_RUN" ]] || { echo "dlio-run not found at $DLIO_RUN" >&2; exit 2; }
LIB="${CACHE_PRELOAD_LIB:-$(dirname "$DLIO_RUN")/../../preload/cache/libdlio_cache_preload.so}"
[[ -f "$LIB" ]] || { echo "libdlio_cache_preload.so not found at $LIB (set CACHE_PRELOAD_LIB)" >&2; exit 2; }
LIB="$(realpath "$LIB")"
mkdir -p "$WORK"
WORK="$(realpath "$WORK")"
DATA="$WORK/data"
SOCKET="$WORK/cache.sock"

rm -rf "$DATA"
"$PY" "$LOOP" make "$DATA" "$FILES" "$FILE_BYTES"
"$PY" "$LOOP" order "$DATA" "$EPOCHS" "$SEED" >"$WORK/future.txt"
sync
dataset_bytes=$(du -sb "$DATA" | cut -f1)
capacity=$("$PY" -c "print(int($dataset_bytes * $TIER_FRACTION))")
compute_s=$("$PY" -c "print($COMPUTE_MS / 1000)")
echo "dataset: $FILES .npy files, $((dataset_bytes / 1048576)) MiB; memory tier: $((capacity / 1048576)) MiB;" \
  "source: slow, ${LATENCY_US} us per call, ${BANDWIDTH_MIB_S} MiB/s; compute ${COMPUTE_MS} ms per sample" >&2

server_pid=""
stop_server() {
  if [[ -n "$server_pid" ]]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
  fi
}
trap stop_server EXIT

# Starts `dlio-run cache-serve` for a policy and a tier capacity; waits for its socket.
start_server() {
  local policy="$1" tier_bytes="$2" config="$WORK/cache-$1.yaml"
  cat >"$config" <<EOF
dataset:
  data_folder: $DATA
storage:
  storage_type: tiered
  tiered_source: slow
  slow_latency_us: $LATENCY_US
  slow_bandwidth_mib_s: $BANDWIDTH_MIB_S
  cache_policy: $policy
  tiers:
    - {type: memory, capacity_bytes: $tier_bytes, threads: $TIER_THREADS}
EOF
  rm -f "$SOCKET"
  "$DLIO_RUN" cache-serve "$config" --socket "$SOCKET" --stats-json "$WORK/stats-$1.json" \
    >"$WORK/server-$1.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 100); do
    [[ -S "$SOCKET" ]] && return 0
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  cat "$WORK/server-$1.log" >&2
  echo "cache-serve did not start" >&2
  exit 1
}

for row in $POLICIES; do
  out="$WORK/epochs-$row.jsonl"
  case "$row" in
    memory)
      cat "$DATA"/*.npy >/dev/null  # every file in the page cache
      "$PY" "$LOOP" train "$DATA" "$EPOCHS" "$SEED" "$compute_s" >"$out" ;;
    none | monarch | lru | clairvoyant)
      policy="$row" tier_bytes="$capacity" future=()
      # No cache: monarch (never evicts) with a tier smaller than any file, so every open is
      # answered "read the source" and the preload adds the slow source's cost to those reads.
      [[ "$row" == none ]] && policy=monarch tier_bytes=1
      [[ "$row" == clairvoyant ]] && future=("DLIO_CACHE_FUTURE=$WORK/future.txt")
      start_server "$policy" "$tier_bytes"
      env LD_PRELOAD="$LIB" DLIO_CACHE_SOCKET="$SOCKET" DLIO_CACHE_DATA_DIRS="$DATA" "${future[@]}" \
        "$PY" "$LOOP" train "$DATA" "$EPOCHS" "$SEED" "$compute_s" "$SOCKET" >"$out"
      stop_server ;;
    *) echo "unknown policy '$row' (none, monarch, lru, clairvoyant, memory)" >&2; exit 2 ;;
  esac
done

"$PY" - "$WORK" $POLICIES <<'EOF'
import json, sys
work, rows = sys.argv[1], sys.argv[2:]
epochs = None
for row in rows:
    lines = [json.loads(l) for l in open(f"{work}/epochs-{row}.jsonl")]
    per_epoch = [l for l in lines if "epoch" in l]
    if epochs is None:
        epochs = len(per_epoch)
        print("| policy | " + " | ".join(f"epoch {i + 1} (s)" for i in range(epochs)) +
              " | tier hits per epoch (%) | source fetches per epoch (files) | copied (MiB) |")
        print("|---" * (epochs + 4) + "|")
    hits, fetches, copied = [], [], 0
    for l in per_epoch:
        if "cache" not in l:
            continue
        tier = l["cache"]["tiers"][0]
        opens = tier["hits"] + tier["misses"]
        hits.append(str(round(100 * tier["hits"] / opens)) if opens else "-")
        # An open the source served counts once; one read through a copy made during it is
        # counted by the source too (as in cache_epochs.sh): one fetch, the copy.
        fetches.append(str(tier["files_copied"] - tier["read_through"] +
                           l["cache"]["source"]["hits"]))
        copied += tier["bytes_copied"]
    times = " | ".join(f"{l['seconds']:.2f}" for l in per_epoch)
    hit_text = ", ".join(hits) if hits else "-"
    fetch_text = ", ".join(fetches) if fetches else "-"
    copied_text = f"{copied / 1048576:.0f}" if hits else "-"
    print(f"| {row} | {times} | {hit_text} | {fetch_text} | {copied_text} |")
EOF
