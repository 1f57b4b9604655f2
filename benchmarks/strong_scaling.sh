#!/usr/bin/env bash
# Strong scaling of dlio-run under MPI: the same dataset read by 1, 2, 4, ... ranks, for a
# file-per-process workload (npz, each rank reads whole files of its own) and shared-file
# workloads (one indexed_binary file read by every rank with POSIX, and one npz file read with
# MPI-IO collective reads). Prints a Markdown table:
#   workload | ranks | time (s) | samples/s | MiB/s | efficiency
# time = the slowest rank's training time (sum of its epoch durations); samples/s = DLIO's
# aggregate (sum over ranks, mean over epochs); efficiency = samples/s at N / (N x samples/s at 1)
# (relative to the first entry of RANKS, scaled by N / that entry, when it is not 1).
#
#   benchmarks/strong_scaling.sh [DLIO_RUN] [WORKDIR]
#
# Environment knobs (defaults in brackets):
#   RANKS ["1 2 4"]  FILES [64]  SAMPLES_PER_FILE [16]  SAMPLE_BYTES [262144]  BATCH [8]
#   EPOCHS [3]  COMPUTE [0] (seconds per step; 0 = pure I/O)  READ_THREADS [1]  ODIRECT [0]
#   REPEAT [3] (each point is the median of REPEAT runs)  WORKLOADS ["fpp shared shared_mpiio"]
#   MPIEXEC [mpiexec; for Open MPI plus --allow-run-as-root --oversubscribe --bind-to none
#            --mca mpi_yield_when_idle 1: a rank waiting in a barrier then yields its core to the
#            read threads of its own and the other ranks instead of spinning, which matters as
#            soon as ranks x threads outnumber the cores]
# The shared-file workloads hold the same bytes as the file-per-process one
# (FILES x SAMPLES_PER_FILE samples) in one file. With ODIRECT=0 the data is read from the page
# cache (it was just generated), so the table measures dlio's own scaling; ODIRECT=1 reads the
# device for the POSIX workloads.
set -euo pipefail

DLIO_RUN="${1:-build/apps/dlio-run/dlio-run}"
WORK="${2:-/tmp/dlio-strong-scaling}"
RANKS="${RANKS:-1 2 4}"
FILES="${FILES:-64}"
SAMPLES_PER_FILE="${SAMPLES_PER_FILE:-16}"
SAMPLE_BYTES="${SAMPLE_BYTES:-262144}"
BATCH="${BATCH:-8}"
EPOCHS="${EPOCHS:-3}"
COMPUTE="${COMPUTE:-0}"
READ_THREADS="${READ_THREADS:-1}"
ODIRECT="${ODIRECT:-0}"
REPEAT="${REPEAT:-3}"
WORKLOADS="${WORKLOADS:-fpp shared shared_mpiio}"
PY=/usr/bin/python3

if [[ -z "${MPIEXEC:-}" ]]; then
  MPIEXEC=mpiexec
  if mpiexec --version 2>/dev/null | grep -qE "Open MPI|OpenRTE"; then
    MPIEXEC="mpiexec --allow-run-as-root --oversubscribe --bind-to none --mca mpi_yield_when_idle 1"
  fi
fi
[[ -x "$DLIO_RUN" ]] || { echo "dlio-run not found at $DLIO_RUN" >&2; exit 2; }
mkdir -p "$WORK"

TOTAL=$((FILES * SAMPLES_PER_FILE))
common=(--quiet
  --set "dataset.record_length_bytes=$SAMPLE_BYTES" --set "reader.batch_size=$BATCH"
  --set "reader.read_threads=$READ_THREADS" --set "reader.computation_threads=0"
  --set "reader.file_shuffle=off" --set "reader.sample_shuffle=off"
  --set "train.computation_time=$COMPUTE" --set "train.epochs=$EPOCHS"
  --set "train.excluded_start_steps=0" --set "workflow.checkpoint=false"
  --set "output.progress=false")

# The dataset and reader settings of each workload.
workload_args() {
  case "$1" in
    fpp)
      echo --set dataset.format=npz --set dataset.num_files_train=$FILES \
        --set dataset.num_samples_per_file=$SAMPLES_PER_FILE \
        --set reader.odirect=$([[ $ODIRECT == 1 ]] && echo true || echo false) ;;
    shared)
      echo --set dataset.format=indexed_binary --set dataset.num_files_train=1 \
        --set dataset.num_samples_per_file=$TOTAL \
        --set reader.odirect=$([[ $ODIRECT == 1 ]] && echo true || echo false) ;;
    shared_mpiio)
      echo --set dataset.format=npz --set dataset.num_files_train=1 \
        --set dataset.num_samples_per_file=$TOTAL --set storage.storage_type=mpiio \
        --set storage.mpiio_collective=true --set reader.pipeline=sync \
        --set reader.read_threads=0 ;;
    *) echo "unknown workload $1" >&2; exit 2 ;;
  esac
}

describe() {
  case "$1" in
    fpp) echo "file per process (npz, $FILES files)" ;;
    shared) echo "shared file (indexed_binary, POSIX)" ;;
    shared_mpiio) echo "shared file (npz, MPI-IO collective)" ;;
  esac
}

# Prints "time samples_per_s bytes_per_s" of one finished run's output folder.
measure() {
  "$PY" - "$1" <<'EOF'
import glob, json, os, sys
out = sys.argv[1]
summary = json.load(open(os.path.join(out, "summary.json")))
slowest = 0.0
for path in glob.glob(os.path.join(out, "*_per_epoch_stats.json")):
    stats = json.load(open(path))
    slowest = max(slowest, sum(v["duration_seconds"] for k, v in stats.items() if k.isdigit()))
m = summary["metric"]
print(f'{slowest:.4f} {m["train_throughput_mean_samples_per_second"]:.2f} '
      f'{m["train_io_mean_MiB_per_second"]:.2f}')
EOF
}

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "| workload | ranks | time (s) | samples/s | MiB/s | efficiency |"
echo "|---|---:|---:|---:|---:|---:|"
for w in $WORKLOADS; do
  # One dataset per shape, so changing a knob never meets an old dataset of another shape.
  dir="$WORK/$w-${FILES}x${SAMPLES_PER_FILE}x${SAMPLE_BYTES}"
  data="$dir/data"
  read -r -a wargs <<<"$(workload_args "$w")"
  # Generate once, with as many ranks as the largest run (generation is split over ranks).
  max_ranks=$(echo $RANKS | tr ' ' '\n' | sort -n | tail -1)
  $MPIEXEC -n "$max_ranks" "$DLIO_RUN" "${common[@]}" "${wargs[@]}" \
    --set "dataset.data_folder=$data" --set "output.folder=$dir/gen" --generate --no-train \
    >/dev/null
  base="" base_n=""
  for n in $RANKS; do
    times=() rates=() mibs=()
    for ((i = 0; i < REPEAT; i++)); do
      out="$dir/out-$n-$i"
      rm -rf "$out"
      $MPIEXEC -n "$n" "$DLIO_RUN" "${common[@]}" "${wargs[@]}" --no-generate \
        --set "dataset.data_folder=$data" --set "output.folder=$out" >/dev/null
      read -r t r b <<<"$(measure "$out")"
      times+=("$t") rates+=("$r") mibs+=("$b")
    done
    t=$(printf '%s\n' "${times[@]}" | median)
    r=$(printf '%s\n' "${rates[@]}" | median)
    b=$(printf '%s\n' "${mibs[@]}" | median)
    [[ -z "$base" ]] && base="$r" base_n="$n"
    eff=$(awk -v r="$r" -v b="$base" -v n="$n" -v n0="$base_n" \
      'BEGIN {printf "%.2f", r / (n / n0 * b)}')
    printf '| %s | %d | %.3f | %.0f | %.1f | %s |\n' "$(describe "$w")" "$n" "$t" "$r" "$b" "$eff"
  done
done
