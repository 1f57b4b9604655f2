#!/usr/bin/env bash
# MLPerf Storage's headline figure on this machine: the most emulated accelerators one client
# keeps at or above the workload's AU target, found by `dlio-run sweep --until-au-below` over
# train.accelerators_per_process (one process, K accelerator threads with a sleeping step
# barrier). Cases: cosmoflow (A100 and H100 compute times), unet3d_h100 and resnet50_h100, the
# datasets scaled to fit this machine's page cache (and read once before the sweep, so the
# figures are the emulator's, not the disk's). The workloads run with their default settings
# (reader.io_model auto, reader.client_costs none, reader.thread_nice auto: 10 with accelerator
# threads), tuning only what MLPerf Storage's CLOSED rules let a submitter tune (reader.read_threads,
# reader.prefetch_size, reader.transfer_size: Submission_guidelines.md, Table 3): cosmoflow reads
# with one thread per accelerator (docs/performance.md, "Accelerators per process"). With PYDLIO
# set, the Python DLIO's maximum on the same files beside it (its accelerators are MPI ranks:
# `mpirun --bind-to none -np N`, N ascending until AU falls below the target). Prints a Markdown
# table. Checkpoints are off (unet3d's preset writes one after epoch 5): the figure is training's AU.
#
#   benchmarks/max_accelerators.sh [DLIO_RUN] [WORKDIR]
#
# Environment knobs (defaults in brackets):
#   CASES ["cosmoflow_a100 cosmoflow_h100 unet3d_h100 resnet50_h100"]
#   EPOCHS [5] (AU includes epoch 1, whose first batches fill the pipeline: with the few steps of
#   a scaled-down dataset (unet3d: 9 an epoch), too few epochs weigh that fill more than MLPerf's
#   500+ steps do)
#   KS_cosmoflow / KS_unet3d / KS_resnet50 (accelerator counts tried, ascending),
#   FILES_cosmoflow / FILES_unet3d / FILES_resnet50 (files generated),
#   READ_THREADS_cosmoflow [1] / READ_THREADS_unet3d / READ_THREADS_resnet50 [the preset's],
#   PREFETCH / XFER [the preset's]: reader.prefetch_size / reader.transfer_size (CLOSED-tunable)
#   COSMOFLOW_FORMAT [npz] (the preset's is tfrecord; the Python DLIO's figures are for npz: its
#   tfrecord reader needs TensorFlow)
#   IO_MODEL [""] / NICE [""]: override reader.io_model / reader.thread_nice (not CLOSED settings;
#   e.g. IO_MODEL=native NICE=10 for the emulator's own reads)
#   PYDLIO [""]: the Python DLIO's folder (../shared/PYTHON_DLIO.md); unset: its column shows
#   BASELINES.md's figures. PY_NS ["1,2,4,8"]: its rank counts tried
set -euo pipefail

DLIO_RUN="${1:-build/apps/dlio-run/dlio-run}"
WORK="${2:-/tmp/dlio-max-accelerators}"
CASES="${CASES:-cosmoflow_a100 cosmoflow_h100 unet3d_h100 resnet50_h100}"
EPOCHS="${EPOCHS:-5}"
NICE="${NICE:-}"
COSMOFLOW_FORMAT="${COSMOFLOW_FORMAT:-npz}"
IO_MODEL="${IO_MODEL:-}"
PREFETCH="${PREFETCH:-}"
XFER="${XFER:-}"
PYDLIO="${PYDLIO:-}"
PY_NS="${PY_NS:-1,2,4,8}"
# shellcheck source=lib_bench.sh
. "$(dirname "$0")/lib_bench.sh"
PY=$BENCH_PY

[[ -x "$DLIO_RUN" ]] || { echo "dlio-run not found at $DLIO_RUN" >&2; exit 2; }
mkdir -p "$WORK"
HAVE_PYDLIO=1
PYDLIO_WHY=$(bench_pydlio_check) || HAVE_PYDLIO=0

# Per case: files generated (every accelerator needs steps in each epoch at the largest K), the
# accelerator counts tried, the AU target (the preset's), and the Python DLIO's figure.
files_of() {
  case $1 in
    cosmoflow_*) echo "${FILES_cosmoflow:-1024}" ;;  # 2.8 GB
    unet3d_h100) echo "${FILES_unet3d:-64}" ;;       # ~9 GB: 8 accelerators x batch 7 x 1 step
    resnet50_h100) echo "${FILES_resnet50:-24}" ;;   # 30k samples of 112 KiB, ~3.4 GB
  esac
}
ks_of() {
  case $1 in
    cosmoflow_*) echo "${KS_cosmoflow:-1,2,4,8,12,16,20,24,28,32}" ;;
    unet3d_h100) echo "${KS_unet3d:-1,2,3,4,6,8}" ;;
    resnet50_h100) echo "${KS_resnet50:-1,2,4,6,8,12,16}" ;;
  esac
}
target_of() {  # the preset's metric.au, in percent
  case $1 in
    cosmoflow_*) echo 70 ;;
    *) echo 90 ;;
  esac
}
python_dlio_of() {  # BASELINES.md's figure, shown when the Python DLIO is not run here
  case $1 in
    cosmoflow_a100) echo "0 (AU 49-55% with 1 rank, 28-31% with 8; BASELINES.md)" ;;
    *) echo "not measured (PYDLIO unset)" ;;
  esac
}
read_threads_of() {
  case $1 in
    cosmoflow_*) echo "${READ_THREADS_cosmoflow:-1}" ;;
    unet3d_h100) echo "${READ_THREADS_unet3d:-}" ;;
    resnet50_h100) echo "${READ_THREADS_resnet50:-}" ;;
  esac
}

# pydlio_max CASE DATA FILES PCT: the most Python DLIO ranks at AU >= PCT on the same files
# ("0" with the AU of 1 rank when even that misses), or why it was not run.
pydlio_max() {
  local c=$1 data=$2 files=$3 pct=$4 over=() n au best=0 last="" tf=1
  "$PY" -c "import tensorflow" 2>/dev/null || tf=0
  case $c in
    cosmoflow_*)
      if [[ $COSMOFLOW_FORMAT == npz ]]; then
        over=(++workload.framework=pytorch ++workload.reader.data_loader=pytorch ++workload.dataset.format=npz)
      elif ((!tf)); then
        echo "not run: tfrecord needs TensorFlow"; return
      fi ;;
    resnet50_h100) ((tf)) || { echo "not run: its tfrecord reader needs TensorFlow"; return; } ;;
  esac
  [[ -n $PREFETCH ]] && over+=("++workload.reader.prefetch_size=$PREFETCH")
  [[ -n $XFER ]] && over+=("++workload.reader.transfer_size=$XFER")
  mkdir -p "$data/valid"  # the Python DLIO lists it even without eval files
  for n in ${PY_NS//,/ }; do
    local out="$WORK/pydlio-$c-np$n"
    rm -rf -- "$out"
    bench_warm "$data/train"
    bench_pydlio_run "$PYDLIO/dlio_benchmark-src/dlio_benchmark/configs" "$c" "$out" "$n" \
      "++workload.dataset.data_folder=$data" "++workload.dataset.num_files_train=$files" \
      "++workload.train.epochs=$EPOCHS" ++workload.workflow.checkpoint=False "${over[@]}" || { last="$n ranks failed ($out.log)"; break; }
    au=$(bench_metric "$out/summary.json" train_au_mean_percentage %.1f)
    [[ -n $au ]] || { last="$n ranks: no AU ($out.log)"; break; }
    if awk -v a="$au" -v p="$pct" 'BEGIN { exit !(a < p) }'; then
      last="$n misses: $au%"
      break
    fi
    best="$n ($au%)"
  done
  echo "$best${last:+; $last}"
}

echo "reader.io_model: ${IO_MODEL:-default}, reader.thread_nice: ${NICE:-default}, prefetch_size: ${PREFETCH:-default}, transfer_size: ${XFER:-default}, $EPOCHS epochs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
((HAVE_PYDLIO)) || echo "$PYDLIO_WHY"
echo
echo "| workload | AU target | dataset | read threads | accelerators tried | max accelerators at the target (dlio) | AU there | samples/s there | first K below the target: AU | Python DLIO ranks (AU) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for c in $CASES; do
  files=$(files_of "$c")
  ks=$(ks_of "$c")
  data="$WORK/data-${c%_*}-$files"  # cosmoflow_a100 and _h100 share theirs
  own=()
  if [[ $c == cosmoflow_* ]]; then
    own=(--set "dataset.format=$COSMOFLOW_FORMAT")
    data="$data-$COSMOFLOW_FORMAT"
  fi
  rt=$(read_threads_of "$c")
  [[ -n $rt ]] && own+=(--set "reader.read_threads=$rt")
  [[ -n $PREFETCH ]] && own+=(--set "reader.prefetch_size=$PREFETCH")
  [[ -n $XFER ]] && own+=(--set "reader.transfer_size=$XFER")
  [[ -n $IO_MODEL ]] && own+=(--set "reader.io_model=$IO_MODEL")
  [[ -n $NICE ]] && own+=(--set "reader.thread_nice=$NICE")
  common=(--workload "$c" --quiet "${own[@]}"
    --set "dataset.data_folder=$data"
    --set "dataset.num_files_train=$files" --set "train.epochs=$EPOCHS" --set workflow.checkpoint=false
    --set output.progress=false)
  if [[ ! -d $data/train ]]; then
    "$DLIO_RUN" "${common[@]}" --set "output.folder=$WORK/gen-$c" --generate --no-train \
      >"$WORK/gen-$c.log" 2>&1 || { cat "$WORK/gen-$c.log" >&2; exit 1; }
  fi
  cat "$data"/train/* >/dev/null  # into the page cache
  pct=$(target_of "$c")
  out="$WORK/sweep-$c"
  "$DLIO_RUN" sweep "${common[@]}" --no-generate -o "$out" --replace \
    --vary "train.accelerators_per_process=$ks" --until-au-below "$pct" >"$out.log" 2>&1 || true
  if ((HAVE_PYDLIO)); then
    python=$(pydlio_max "$c" "$data" "$files" "$pct")
  else
    python=$(python_dlio_of "$c")
  fi
  "$PY" - "$out/sweep.json" "$c" "$pct" "$files" "${rt:-preset}" "$ks" "$python" <<'PY'
import json, sys
path, case, pct, files, rt, ks, python = sys.argv[1:]
try:
    s = json.load(open(path))
except (OSError, ValueError) as e:
    print("| %s | %s%% | %s files | %s | %s | failed: %s | | | | %s |" % (case, pct, files, rt, ks, e, python))
    sys.exit(0)
best = (s.get("search") or {}).get("best")
row, after = None, None
for p in s.get("points", []):
    k = p.get("values", {}).get("train.accelerators_per_process")
    if best is not None and str(k) == str(best):
        row = p
    elif after is None and (row is not None or best is None):
        after = p  # the first point that missed the target
au = "%.1f%%" % row["au_percent"] if row and row.get("au_percent") is not None else ""
sps = "%.0f" % row["samples_per_second"] if row and row.get("samples_per_second") is not None else ""
nxt = ""
if after is not None:
    k = after.get("values", {}).get("train.accelerators_per_process")
    a = after.get("au_percent")
    nxt = "%s: %s" % (k, "%.1f%%" % a if a is not None else "failed")
print("| %s | %s%% | %s files | %s | %s | %s | %s | %s | %s | %s |" % (
    case, pct, files, rt, ks, best if best is not None else "none", au, sps, nxt, python))
PY
done
