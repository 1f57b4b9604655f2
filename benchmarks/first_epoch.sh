#!/usr/bin/env bash
# Epoch 1 against the later epochs on a unet3d-like workload (MLPerf Storage's unet3d_h100 preset:
# npz files of one 146.6 MB sample, batch 4, 4 read threads, no compute), with the data in the page
# cache, so what differs between epochs is dlio's own cost (memory it allocates, processes it
# forks), not the storage. Prints a Markdown table, one row per run:
#   pipeline | epoch 1 (s) | epochs 2..N (s, mean) | epoch 1 speed / steady | DLIO samples/s:
#   epoch 1 / steady | buffers prepared (GiB in s, untimed) | max RSS (GiB)
# Epoch times are {rank}_per_epoch_stats.json's durations (whole epochs: every epoch reads the same
# samples, so steady time / epoch 1 time is epoch 1's speed relative to the steady state); the
# DLIO ratio uses summary.json's train_throughput_samples_per_second, which leaves out each
# epoch's first train.excluded_start_steps (1) steps. max RSS is GNU time's (the largest of dlio-run
# and its worker processes). Target: epoch 1 within 10% of the steady state (ratios >= 0.90).
#
#   benchmarks/first_epoch.sh [DLIO_RUN] [WORKDIR]
#
# Environment knobs (defaults in brackets):
#   FILES [32]  SAMPLE_BYTES [146600628]  STDEV [0] (dataset.record_length_bytes_stdev)
#   BATCH [4]  READ_THREADS [4]  EPOCHS [4]  REPEAT [3]
#   PIPELINES ["native pytorch"]: pytorch = DLIO's PyTorch DataLoader (worker processes, the
#     preset's default); native = the threaded pipeline (reader.io_model native); plain = no
#     dlio: a Python loop that reads every file whole into one buffer touched beforehand, EPOCHS
#     passes (the machine's own first-pass cost, the reference for the others: the DLIO and
#     buffer columns are "-"); npload = no dlio either: np.load of every file (numpy's zipfile
#     reads and a fresh array per file, as the Python I/O models emulate), EPOCHS passes
#   IDLE [0]: seconds to sleep before each run. On a VM with free page reporting
#     (virtio_balloon), memory a process freed goes back to the host within seconds and its next
#     first touch is slow again (0.3-0.65 GB/s here): IDLE=20 makes every run a "cold" one, as
#     the first run after a pause is.
# The dataset is scaled down (FILES lowered) until it and the pipelines' buffers fit in half of
# MemAvailable, so that the page cache holds every file; the script says when it does so.
set -euo pipefail

DLIO_RUN="${1:-build/apps/dlio-run/dlio-run}"
WORK="${2:-/tmp/dlio-first-epoch}"
FILES="${FILES:-32}"
SAMPLE_BYTES="${SAMPLE_BYTES:-146600628}"
STDEV="${STDEV:-0}"
BATCH="${BATCH:-4}"
READ_THREADS="${READ_THREADS:-4}"
EPOCHS="${EPOCHS:-4}"
REPEAT="${REPEAT:-3}"
PIPELINES="${PIPELINES:-native pytorch}"
IDLE="${IDLE:-0}"
PY=/usr/bin/python3

[[ -x "$DLIO_RUN" ]] || { echo "dlio-run not found at $DLIO_RUN" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "GNU time (/usr/bin/time) is needed for max RSS" >&2; exit 2; }
mkdir -p "$WORK"

# The dataset plus the pytorch pipeline's shared memory (read_threads x 2 slots x a batch, and a
# read buffer per worker) must fit in half of the available memory.
avail_kib=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
buffers=$(( READ_THREADS * (2 * BATCH + 1) * SAMPLE_BYTES ))
while (( FILES > 2 * BATCH && (FILES * SAMPLE_BYTES + buffers) / 1024 > avail_kib / 2 )); do
  FILES=$(( FILES / 2 ))
  echo "scaled down to $FILES files to fit in half of MemAvailable ($((avail_kib / 1024)) MiB)" >&2
done

common=(--workload unet3d_h100 --quiet
  --set "dataset.data_folder=$WORK/data" --set "dataset.num_files_train=$FILES"
  --set "dataset.record_length_bytes=$SAMPLE_BYTES"
  --set "dataset.record_length_bytes_stdev=$STDEV"
  --set "reader.batch_size=$BATCH" --set "reader.read_threads=$READ_THREADS"
  --set "train.computation_time=0" --set "train.epochs=$EPOCHS"
  --set "workflow.checkpoint=false" --set "output.progress=false")

"$DLIO_RUN" "${common[@]}" --set "output.folder=$WORK/gen" --generate --no-train >/dev/null
sync  # the generated files written back: no writeback competes with the runs
cat "$WORK"/data/train/* >/dev/null  # into the page cache

# The references, without dlio: plain = every file read whole (one preadv) into a buffer touched
# before the first pass; npload = np.load of every file.
plain_loop() {
  /usr/bin/time -o "$WORK/rss" -f "%M" "$PY" - "$WORK/data/train" "$EPOCHS" "$1" \
    >"$WORK/plain" <<'EOF'
import glob, os, sys, time
files = sorted(glob.glob(sys.argv[1] + "/*"))
buf = bytearray(max(os.path.getsize(f) for f in files))
view = memoryview(buf)
for i in range(0, len(buf), 4096):
    buf[i] = 1
def read_whole(f):
    fd = os.open(f, os.O_RDONLY)
    os.preadv(fd, [view], 0)
    os.close(fd)
def np_load(f):
    import numpy
    with numpy.load(f) as z:
        for name in z.files:
            z[name]
load = np_load if sys.argv[3] == "npload" else read_whole
for _ in range(int(sys.argv[2])):
    start = time.perf_counter()
    for f in files:
        load(f)
    print(time.perf_counter() - start)
EOF
  "$PY" - "$WORK/plain" "$(tail -1 "$WORK/rss")" "$1" <<'EOF'
import sys
secs = [float(x) for x in open(sys.argv[1])]
steady = sum(secs[1:]) / len(secs[1:]) if len(secs) > 1 else 0.0
print("| %s | %.2f | %.2f | %.3f | - | - | %.2f GiB |" % (
    sys.argv[3], secs[0], steady, steady / secs[0] if secs[0] > 0 else 0.0,
    int(sys.argv[2]) / 2**20))
EOF
}

echo "| pipeline | epoch 1 (s) | epochs 2..$EPOCHS (s, mean) | epoch 1 speed / steady | DLIO samples/s: epoch 1 / steady | buffers prepared (untimed) | max RSS |"
echo "|---|---|---|---|---|---|---|"
for pipeline in $PIPELINES; do
  case "$pipeline" in
    pytorch) extra=(--set "reader.io_model=auto") ;;
    native) extra=(--set "reader.io_model=native") ;;
    plain | npload) extra=() ;;
    *) echo "unknown pipeline '$pipeline' (pytorch, native, plain or npload)" >&2; exit 2 ;;
  esac
  for ((r = 1; r <= REPEAT; r++)); do
    out="$WORK/out-$pipeline-$r"
    sleep "$IDLE"
    if [[ "$pipeline" == plain || "$pipeline" == npload ]]; then
      plain_loop "$pipeline"
      continue
    fi
    /usr/bin/time -o "$WORK/rss" -f "%M" "$DLIO_RUN" "${common[@]}" "${extra[@]}" \
      --set "output.folder=$out" >/dev/null 2>&1
    rss_kib=$(tail -1 "$WORK/rss")
    "$PY" - "$out" "$pipeline" "$rss_kib" <<'EOF'
import json, sys
out, pipeline, rss_kib = sys.argv[1], sys.argv[2], int(sys.argv[3])
m = json.load(open(out + "/summary.json"))["metric"]
stats = json.load(open(out + "/0_per_epoch_stats.json"))
secs = [stats[k]["duration_seconds"] for k in sorted((k for k in stats if k.isdigit()), key=int)]
tp = m["train_throughput_samples_per_second"]
def steady(v):
    return sum(v[1:]) / len(v[1:]) if len(v) > 1 else 0.0
speed = steady(secs) / secs[0] if secs[0] > 0 else 0.0  # same samples each epoch
dlio = tp[0] / steady(tp) if steady(tp) > 0 else 0.0
if "buffer_prepared_bytes" in m:
    prepared = "%.2f GiB in %.2f s" % (m["buffer_prepared_bytes"] / 2**30, m["buffer_prepare_seconds"])
else:
    prepared = "(not reported)"
print("| %s | %.2f | %.2f | %.3f | %.3f | %s | %.2f GiB |" % (
    pipeline, secs[0], steady(secs), speed, dlio, prepared, rss_kib / 2**20))
EOF
  done
done
