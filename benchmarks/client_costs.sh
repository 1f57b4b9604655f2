#!/usr/bin/env bash
# reader.client_costs (docs/io_models.md): a workload's default (a framework I/O model, the
# pytorch loader) with client_costs none and framework, beside io_model native, on the same files
# in the page cache; samples/s from summary.json, page faults, CPU and max RSS from GNU time (the
# run and its pytorch workers). Not a test: figures for docs/performance.md, "Client costs".
#
#   benchmarks/client_costs.sh [DLIO_RUN] [WORKDIR] [CASES]
#
# CASES: "mib" (384 x 1 MiB npz, batch 4, 2 pytorch workers: the fio comparison's files) and/or
# "unet" (unet3d_h100 with 32 files of 146.6 MB, stdev 0, batch 4, 4 workers; 4.4 GiB of files)
# and/or "cosmo" (cosmoflow_a100 as npz under the pytorch loader: 1024 files of ~2.8 MB, batch 1,
# 4 workers).
# REPEAT [2] rounds, alternating the settings; EPOCHS [3]; a second binary to compare with, e.g.
# the build before the knob: BEFORE=/path/to/dlio-run (it runs its default and native).
set -euo pipefail

DLIO_RUN="${1:-build/apps/dlio-run/dlio-run}"
WORK="${2:-/tmp/dlio-client-costs}"
CASES="${3:-mib unet cosmo}"
REPEAT="${REPEAT:-2}"
EPOCHS="${EPOCHS:-3}"
BEFORE="${BEFORE:-}"
PY=/usr/bin/python3
[[ -x /usr/bin/time ]] || { echo "GNU time (/usr/bin/time) is needed" >&2; exit 2; }
mkdir -p "$WORK"

args_for() {
  local common=(--quiet --set "train.computation_time=0" --set "train.epochs=$EPOCHS"
    --set workflow.checkpoint=false --set output.progress=false)
  if [[ $1 == unet ]]; then
    echo --workload unet3d_h100 "${common[@]}" --set "dataset.data_folder=$WORK/unet" \
      --set dataset.num_files_train=32 --set dataset.record_length_bytes=146600628 \
      --set dataset.record_length_bytes_stdev=0 --set reader.batch_size=4 \
      --set reader.read_threads=4
  elif [[ $1 == cosmo ]]; then
    echo --workload cosmoflow_a100 "${common[@]}" --set "dataset.data_folder=$WORK/cosmo" \
      --set dataset.num_files_train=1024 --set dataset.format=npz \
      --set reader.data_loader=pytorch
  else
    echo "${common[@]}" --set "dataset.data_folder=$WORK/mib" --set dataset.format=npz \
      --set dataset.num_files_train=384 --set dataset.num_samples_per_file=1 \
      --set dataset.record_length_bytes=1048576 --set reader.data_loader=pytorch \
      --set reader.read_threads=2 --set reader.batch_size=4
  fi
}

# run BINARY CASE LABEL [--set ...]: one line of figures.
run() {
  local bin=$1 case=$2 label=$3 out="$WORK/out-$2-$3"
  shift 3
  cat "$WORK/$case"/train/* >/dev/null  # warm
  # shellcheck disable=SC2046
  /usr/bin/time -o "$out.time" -f "%e s elapsed, %U s user, %S s sys, %R minor faults, %M KiB max RSS" \
    "$bin" $(args_for "$case") --no-generate --set "output.folder=$out" "$@" >/dev/null 2>&1
  printf '%-5s %-22s %s  %s\n' "$case" "$label" "$($PY -c "import json; m = json.load(open('$out/summary.json'))['metric']; print('%7.1f samples/s, steady %7.1f, buffers %.1f s' % (m['train_throughput_mean_samples_per_second'], m['train_steady_throughput_mean_samples_per_second'], m['buffer_prepare_seconds']))")" "$(cat "$out.time")"
}

for case in $CASES; do
  # shellcheck disable=SC2046
  [[ -d "$WORK/$case/train" ]] || "$DLIO_RUN" $(args_for "$case") --generate --no-train \
    --set "output.folder=$WORK/gen-$case" >/dev/null 2>&1
  sync
  for ((r = 1; r <= REPEAT; ++r)); do
    if [[ -n $BEFORE ]]; then
      run "$BEFORE" "$case" before-default
      run "$BEFORE" "$case" before-native --set reader.io_model=native
    fi
    run "$DLIO_RUN" "$case" default
    run "$DLIO_RUN" "$case" client_costs=framework --set reader.client_costs=framework
    run "$DLIO_RUN" "$case" native --set reader.io_model=native
  done
done
