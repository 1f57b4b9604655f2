#!/usr/bin/env bash
# MLPerf Storage's headline figure on this machine: the most emulated accelerators one client
# keeps at or above the workload's AU target, found by `dlio-run sweep --until-au-below` over
# train.accelerators_per_process (one process, K accelerator threads with a sleeping step
# barrier). Cases: cosmoflow (A100 and H100 compute times), unet3d_h100 and resnet50_h100, the
# datasets scaled to fit this machine's page cache (and read once before the sweep, so the
# figures are the emulator's, not the disk's). The reader threads run at nice 10
# (reader.thread_nice: the emulated compute is a sleep, and on few cores the training threads
# must win the cores back from the readers when it ends) and cosmoflow reads with one thread per
# accelerator (docs/performance.md, "Accelerators per process"). Prints a Markdown table with the
# Python DLIO's figures from ../shared/BASELINES.md beside dlio's.
#
#   benchmarks/max_accelerators.sh [DLIO_RUN] [WORKDIR]
#
# Environment knobs (defaults in brackets):
#   CASES ["cosmoflow_a100 cosmoflow_h100 unet3d_h100 resnet50_h100"]
#   EPOCHS [5] (AU includes epoch 1, whose first batches fill the pipeline: with the few steps of
#   a scaled-down dataset (unet3d: 9 an epoch), too few epochs weigh that fill more than MLPerf's
#   500+ steps do)
#   KS_cosmoflow / KS_unet3d / KS_resnet50 (accelerator counts tried, ascending),
#   FILES_cosmoflow / FILES_unet3d / FILES_resnet50 (files generated), NICE [10],
#   COSMOFLOW_FORMAT [npz] (the preset's is tfrecord; the Python DLIO's figure is for npz),
#   IO_MODEL [native] (the emulator's own reads; npz's default, numpy, does zipfile's CRC and
#   copies as Python does: 1.25 ms of CPU per 2.8 MB sample, more than 2 cores have for 16
#   cosmoflow accelerators; IO_MODEL=auto measures the framework models)
set -euo pipefail

DLIO_RUN="${1:-build/apps/dlio-run/dlio-run}"
WORK="${2:-/tmp/dlio-max-accelerators}"
CASES="${CASES:-cosmoflow_a100 cosmoflow_h100 unet3d_h100 resnet50_h100}"
EPOCHS="${EPOCHS:-5}"
NICE="${NICE:-10}"
COSMOFLOW_FORMAT="${COSMOFLOW_FORMAT:-npz}"
IO_MODEL="${IO_MODEL:-native}"
PY=/usr/bin/python3

[[ -x "$DLIO_RUN" ]] || { echo "dlio-run not found at $DLIO_RUN" >&2; exit 2; }
mkdir -p "$WORK"

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
python_dlio_of() {
  case $1 in
    cosmoflow_a100) echo "0 (AU 49-55% with 1 rank, 28-31% with 8; BASELINES.md)" ;;
    *) echo "not measured here" ;;
  esac
}

echo "reader.io_model: $IO_MODEL, reader.thread_nice: $NICE, $EPOCHS epochs"
echo
echo "| workload | AU target | dataset | accelerators tried | max accelerators at the target (dlio) | AU there | samples/s there | Python DLIO |"
echo "|---|---|---|---|---|---|---|---|"
for c in $CASES; do
  files=$(files_of "$c")
  ks=$(ks_of "$c")
  data="$WORK/data-${c%_*}-$files"  # cosmoflow_a100 and _h100 share theirs
  own=()
  if [[ $c == cosmoflow_* ]]; then
    own=(--set "dataset.format=$COSMOFLOW_FORMAT" --set reader.read_threads=1)
    data="$data-$COSMOFLOW_FORMAT"
  fi
  common=(--workload "$c" --quiet "${own[@]}" --set "reader.io_model=$IO_MODEL"
    --set "reader.thread_nice=$NICE"
    --set "dataset.data_folder=$data"
    --set "dataset.num_files_train=$files" --set "train.epochs=$EPOCHS"
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
  "$PY" - "$out/sweep.json" "$c" "$pct" "$files" "$ks" "$(python_dlio_of "$c")" <<'PY'
import json, sys
path, case, pct, files, ks, python = sys.argv[1:]
try:
    s = json.load(open(path))
except (OSError, ValueError) as e:
    print("| %s | %s%% | %s files | %s | failed: %s | | | %s |" % (case, pct, files, ks, e, python))
    sys.exit(0)
best = (s.get("search") or {}).get("best")
row = None
for p in s.get("points", []):
    if best is not None and str(p.get("values", {}).get("train.accelerators_per_process")) == str(best):
        row = p
au = "%.1f%%" % row["au_percent"] if row and row.get("au_percent") is not None else ""
sps = "%.0f" % row["samples_per_second"] if row and row.get("samples_per_second") is not None else ""
print("| %s | %s%% | %s files | %s | %s | %s | %s | %s |" % (
    case, pct, files, ks, best if best is not None else "none", au, sps, python))
PY
done
