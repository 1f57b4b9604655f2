#!/usr/bin/env bash
# The shape of MONARCH's experiment with dlio's tiered storage (docs/caching.md): a dataset about
# twice the fast tier's capacity on an emulated parallel file system (`slow`: a latency per call
# and a bandwidth cap), shuffled reads, several epochs; epoch times and tier hit rates for no
# cache, monarch, lru, clairvoyant and clairvoyant_static, and the lower bound with every file in memory (the same
# files read from the page cache, no latency). Prints a Markdown table, one row per policy:
#   policy | epoch 1 .. N (s) | tier hit rate per epoch (%) | source fetches per epoch (files: copies
#   plus opens the source served) | bytes copied (MiB)
# and writes WORKDIR/cache_epochs.svg (epoch time against epoch, one line per policy) and
# WORKDIR/cache_epochs.json (the figures). Epoch times are {rank}_per_epoch_stats.json's
# durations; hit rates are the fast tier's hits / opens of each epoch (its "cache" entries).
# The files are opened anew each epoch (reader.reopen_files_each_epoch), as a framework that loads
# a file per sample does: the cache decides where a file is served from when it is opened.
#
#   benchmarks/cache_epochs.sh [DLIO_RUN] [WORKDIR]
#
# Environment knobs (defaults in brackets):
#   FILES [96]  SAMPLE_BYTES [1048576] (npz, one sample per file)  EPOCHS [5]
#   LATENCY_US [2000]  BANDWIDTH_MIB_S [200]: the slow source (per call; per-call bandwidth cap)
#   TIER_FRACTION [0.5]: the memory tier's capacity as a fraction of the dataset's bytes
#   TIER_THREADS [4]: the tier's copy threads   READ_THREADS [4]  BATCH [4]  COMPUTE [0]
#   POLICIES ["none monarch lru clairvoyant clairvoyant_static memory"]   IO_MODEL [native]
set -euo pipefail

DLIO_RUN="${1:-build/apps/dlio-run/dlio-run}"
WORK="${2:-/tmp/dlio-cache-epochs}"
FILES="${FILES:-96}"
SAMPLE_BYTES="${SAMPLE_BYTES:-1048576}"
EPOCHS="${EPOCHS:-5}"
LATENCY_US="${LATENCY_US:-2000}"
BANDWIDTH_MIB_S="${BANDWIDTH_MIB_S:-200}"
TIER_FRACTION="${TIER_FRACTION:-0.5}"
TIER_THREADS="${TIER_THREADS:-4}"
READ_THREADS="${READ_THREADS:-4}"
BATCH="${BATCH:-4}"
COMPUTE="${COMPUTE:-0}"
POLICIES="${POLICIES:-none monarch lru clairvoyant clairvoyant_static memory}"
IO_MODEL="${IO_MODEL:-native}"
PY=/usr/bin/python3

[[ -x "$DLIO_RUN" ]] || { echo "dlio-run not found at $DLIO_RUN" >&2; exit 2; }
mkdir -p "$WORK"

common=(--quiet
  --set dataset.format=npz --set "dataset.data_folder=$WORK/data"
  --set "dataset.num_files_train=$FILES" --set dataset.num_samples_per_file=1
  --set "dataset.record_length_bytes=$SAMPLE_BYTES" --set dataset.record_length_bytes_stdev=0
  --set "reader.batch_size=$BATCH" --set "reader.read_threads=$READ_THREADS"
  --set reader.file_shuffle=seed --set reader.sample_shuffle=seed
  --set "reader.io_model=$IO_MODEL" --set reader.data_loader=dlio
  --set reader.reopen_files_each_epoch=true
  --set "train.epochs=$EPOCHS" --set "train.computation_time=$COMPUTE"
  --set workflow.checkpoint=false --set output.progress=false --set metric.mlperf_rules=off)
slow=(--set "storage.slow_latency_us=$LATENCY_US" --set "storage.slow_bandwidth_mib_s=$BANDWIDTH_MIB_S")

run() {  # dlio-run quietly: its warnings (a dataset smaller than 5x memory) shown only on failure
  "$DLIO_RUN" "$@" >"$WORK/run.log" 2>&1 || { cat "$WORK/run.log" >&2; exit 1; }
}
run "${common[@]}" --set "output.folder=$WORK/gen" --generate --no-train
sync
dataset_bytes=$(du -sb "$WORK/data/train" | cut -f1)
capacity=$("$PY" -c "print(int($dataset_bytes * $TIER_FRACTION))")
tier="[{type: memory, capacity_bytes: $capacity, threads: $TIER_THREADS}]"
echo "dataset: $FILES files, $((dataset_bytes / 1048576)) MiB; memory tier: $((capacity / 1048576)) MiB;" \
  "source: slow, ${LATENCY_US} us per call, ${BANDWIDTH_MIB_S} MiB/s" >&2

for policy in $POLICIES; do
  case "$policy" in
    none) storage=(--set storage.storage_type=slow "${slow[@]}") ;;
    memory)
      cat "$WORK"/data/train/* >/dev/null  # the lower bound: every file in the page cache
      storage=(--set storage.storage_type=posix) ;;
    monarch | lru | clairvoyant | clairvoyant_static)
      storage=(--set storage.storage_type=tiered --set storage.tiered_source=slow "${slow[@]}"
        --set "storage.cache_policy=$policy" --set "storage.tiers=$tier") ;;
    *) echo "unknown policy '$policy' (none, monarch, lru, clairvoyant, clairvoyant_static, memory)" >&2; exit 2 ;;
  esac
  run "${common[@]}" "${storage[@]}" --set "output.folder=$WORK/out-$policy"
done

"$PY" - "$WORK" "$POLICIES" "$LATENCY_US" "$BANDWIDTH_MIB_S" "$capacity" "$dataset_bytes" <<'EOF'
import json, sys
work, policies = sys.argv[1], sys.argv[2].split()
latency, bandwidth, capacity, dataset = sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
rows = {}
for p in policies:
    stats = json.load(open("%s/out-%s/0_per_epoch_stats.json" % (work, p)))
    epochs = sorted((k for k in stats if k.isdigit()), key=int)
    secs = [stats[k]["duration_seconds"] for k in epochs]
    hits, fetches, copied = [], [], 0
    for k in epochs:
        levels = stats[k].get("cache")
        if not levels:
            continue
        fast, tiers, source = levels[0], levels[:-1], levels[-1]
        opens = fast["hits"] + fast["misses"]
        hits.append(100.0 * fast["hits"] / opens if opens else 0.0)
        copied += fast["bytes_copied"]
        # Whole-file reads of the source: copies, and opens the source served (an open counted
        # there but read through a copy made during it is one fetch, the copy).
        fetches.append(sum(t["files_copied"] - t["read_through"] for t in tiers) + source["hits"])
    rows[p] = {"epoch_seconds": secs, "hit_percent": hits, "source_fetches": fetches,
               "bytes_copied": copied}
n = max(len(r["epoch_seconds"]) for r in rows.values())
print("| policy | " + " | ".join("epoch %d (s)" % (i + 1) for i in range(n)) +
      " | tier hits per epoch (%) | source fetches per epoch (files) | copied (MiB) |")
print("|---|" + "---|" * (n + 3))
for p, r in rows.items():
    hits = ", ".join("%.0f" % h for h in r["hit_percent"]) or "-"
    fetches = ", ".join("%d" % f for f in r["source_fetches"]) or "-"
    copied = "%.0f" % (r["bytes_copied"] / 2**20) if r["hit_percent"] else "-"
    print("| %s | %s | %s | %s | %s |" % (p, " | ".join("%.2f" % s for s in r["epoch_seconds"]),
                                          hits, fetches, copied))
json.dump({"source": {"latency_us": float(latency), "bandwidth_mib_s": float(bandwidth)},
           "tier_capacity_bytes": capacity, "dataset_bytes": dataset, "policies": rows},
          open(work + "/cache_epochs.json", "w"), indent=1)

# The plot: epoch time against epoch, one line per policy.
W, H, L, R, T, B = 660, 360, 60, 150, 30, 45
top = max(max(r["epoch_seconds"]) for r in rows.values()) * 1.1 or 1.0
colors = {"none": "#888888", "monarch": "#d62728", "lru": "#ff7f0e", "clairvoyant": "#2ca02c",
          "clairvoyant_static": "#9467bd", "memory": "#1f77b4"}
def x(i): return L + (W - L - R) * (i / max(n - 1, 1))
def y(v): return T + (H - T - B) * (1 - v / top)
svg = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
       'font-size="12"><rect width="100%%" height="100%%" fill="white"/>' % (W, H),
       '<text x="%d" y="18" font-size="13">Epoch time by cache policy (dataset %d MiB, tier %d '
       'MiB, source %s us + %s MiB/s)</text>' % (8, dataset >> 20, capacity >> 20, latency,
                                                   bandwidth)]
for k in range(5):
    v = top * k / 4
    svg.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>' % (L, W - R, y(v), y(v)))
    svg.append('<text x="%d" y="%.1f" text-anchor="end">%.2f</text>' % (L - 6, y(v) + 4, v))
for i in range(n):
    svg.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (x(i), H - B + 18, i + 1))
svg.append('<text x="%d" y="%d" text-anchor="middle">epoch</text>' % ((L + W - R) / 2, H - 8))
svg.append('<text x="14" y="%d" transform="rotate(-90 14 %d)" text-anchor="middle">seconds'
           '</text>' % ((T + H - B) / 2, (T + H - B) / 2))
for j, (p, r) in enumerate(rows.items()):
    c = colors.get(p, "#9467bd")
    pts = " ".join("%.1f,%.1f" % (x(i), y(s)) for i, s in enumerate(r["epoch_seconds"]))
    svg.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>' % (c, pts))
    for i, s in enumerate(r["epoch_seconds"]):
        svg.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (x(i), y(s), c))
    svg.append('<rect x="%d" y="%d" width="14" height="3" fill="%s"/><text x="%d" y="%d">%s'
               '</text>' % (W - R + 12, T + 10 + 20 * j, c, W - R + 30, T + 15 + 20 * j, p))
svg.append("</svg>")
open(work + "/cache_epochs.svg", "w").write("\n".join(svg) + "\n")
EOF
echo "wrote $WORK/cache_epochs.svg and $WORK/cache_epochs.json" >&2
