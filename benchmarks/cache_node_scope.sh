#!/usr/bin/env bash
# storage.cache_scope node vs process (docs/caching.md, "Ranks of a node share one cache"): RANKS
# ranks on one node read a shuffled dataset from an emulated parallel file system (`slow`: a
# latency per call and a per-call bandwidth cap) through a tiered storage with a memory tier large
# enough for the dataset, for EPOCHS epochs. Prints a Markdown table, one row per scope: the epoch
# times (the slowest rank's, from {rank}_per_epoch_stats.json) and the files and bytes copied over
# the run, summed over every rank that reports a cache (under node scope, each node's first rank).
#
#   benchmarks/cache_node_scope.sh [DLIO_RUN] [WORKDIR]
#
# Environment knobs (defaults in brackets): RANKS [4]  FILES [64]  SAMPLE_BYTES [2097152] (npz, one
# sample per file)  EPOCHS [4]  LATENCY_US [2000]  BANDWIDTH_MIB_S [100]  POLICY [lru]
# READ_THREADS [2]  BATCH [2]  MPIRUN ["mpirun --allow-run-as-root --oversubscribe"]
set -euo pipefail

DLIO_RUN="${1:-build/apps/dlio-run/dlio-run}"
WORK="${2:-/tmp/dlio-cache-node-scope}"
RANKS="${RANKS:-4}"
FILES="${FILES:-64}"
SAMPLE_BYTES="${SAMPLE_BYTES:-2097152}"
EPOCHS="${EPOCHS:-4}"
LATENCY_US="${LATENCY_US:-2000}"
BANDWIDTH_MIB_S="${BANDWIDTH_MIB_S:-100}"
POLICY="${POLICY:-lru}"
READ_THREADS="${READ_THREADS:-2}"
BATCH="${BATCH:-2}"
read -r -a MPIRUN <<<"${MPIRUN:-mpirun --allow-run-as-root --oversubscribe}"
PY=/usr/bin/python3

[[ -x "$DLIO_RUN" ]] || { echo "dlio-run not found at $DLIO_RUN" >&2; exit 2; }
mkdir -p "$WORK"
common=(--quiet
  --set dataset.format=npz --set "dataset.data_folder=$WORK/data"
  --set "dataset.num_files_train=$FILES" --set dataset.num_samples_per_file=1
  --set "dataset.record_length_bytes=$SAMPLE_BYTES" --set dataset.record_length_bytes_stdev=0
  --set "reader.batch_size=$BATCH" --set "reader.read_threads=$READ_THREADS"
  --set reader.file_shuffle=seed --set reader.sample_shuffle=seed --set reader.data_loader=dlio
  --set "train.epochs=$EPOCHS" --set train.computation_time=0
  --set workflow.checkpoint=false --set output.progress=false --set metric.mlperf_rules=off)
run() {  # quietly; the log shown only on failure
  "$@" >"$WORK/run.log" 2>&1 || { cat "$WORK/run.log" >&2; exit 1; }
}
run "$DLIO_RUN" "${common[@]}" --set "output.folder=$WORK/gen" --generate --no-train
echo "$RANKS ranks, one node; $FILES files of $((SAMPLE_BYTES / 1024)) KiB; source: slow," \
  "${LATENCY_US} us per call, ${BANDWIDTH_MIB_S} MiB/s per call; policy $POLICY; memory tier" \
  "holds the dataset" >&2

echo "| scope | epoch times (s) | files copied | MiB copied |"
echo "|---|---|---|---|"
for scope in node process; do
  run "${MPIRUN[@]}" -np "$RANKS" "$DLIO_RUN" "${common[@]}" --set "output.folder=$WORK/out-$scope" \
    --set storage.storage_type=tiered --set storage.tiered_source=slow \
    --set "storage.slow_latency_us=$LATENCY_US" --set "storage.slow_bandwidth_mib_s=$BANDWIDTH_MIB_S" \
    --set "storage.cache_policy=$POLICY" --set "storage.cache_scope=$scope" \
    --set "storage.tiers=[{type: memory, capacity_bytes: 4GiB, threads: 2}]"
  "$PY" - "$WORK/out-$scope" "$scope" <<'PYEOF'
import glob, json, sys
out, scope = sys.argv[1], sys.argv[2]
times, files, nbytes = {}, 0, 0
for path in glob.glob(out + "/*_per_epoch_stats.json"):
    for epoch, e in json.load(open(path)).items():
        times[int(epoch)] = max(times.get(int(epoch), 0), e["duration_seconds"])
        for level in e.get("cache", [])[:-1]:  # the source is last
            files += level["files_copied"]
            nbytes += level["bytes_copied"]
print("| %s | %s | %d | %.1f |" % (scope, " / ".join("%.2f" % times[k] for k in sorted(times)),
                                   files, nbytes / 1048576))
PYEOF
done
