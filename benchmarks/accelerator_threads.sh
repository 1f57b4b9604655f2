#!/usr/bin/env bash
# How many emulated accelerators one process keeps above the AU target with
# train.accelerators_per_process (one training thread per accelerator, a sleeping step barrier), on
# a cosmoflow-like workload: MLPerf Storage's cosmoflow_a100 preset (batch 1, 5.51 ms compute, AU
# target 70%) with npz files of ~2.8 MB, from the page cache (the dataset is generated, then read
# once before the runs). Prints a Markdown table, one row per run:
#   processes x K | read threads | AU mean % | lowest accelerator's AU % | samples/s | MB/s |
#   load + barrier per step (us, mean over accelerators and steps)
# AU and samples/s are summary.json's train_au_mean_percentage / train_throughput_mean_*; the
# lowest AU is the mean over epochs of train_au_min_accelerator_percentage; load and barrier come
# from every rank's {rank}_output.json (all steps, the first included).
#
#   benchmarks/accelerator_threads.sh [DLIO_RUN] [WORKDIR]
#
# Environment knobs (defaults in brackets):
#   FILES [1024]  EPOCHS [3]  KS ["4 8 12 16 20"]  READ_THREADS ["4"]  COMPUTE [0.00551]
#   PROCESSES [1]: more than 1 runs `mpirun --oversubscribe -n PROCESSES` with K threads each
#   MPIRUN_ARGS [""]: e.g. "--mca mpi_yield_when_idle 1"   EXTRA [""]: more --set options
set -euo pipefail

DLIO_RUN="${1:-build/apps/dlio-run/dlio-run}"
WORK="${2:-/tmp/dlio-accelerators}"
FILES="${FILES:-1024}"
EPOCHS="${EPOCHS:-3}"
KS="${KS:-4 8 12 16 20}"
READ_THREADS="${READ_THREADS:-4}"
COMPUTE="${COMPUTE:-0.00551}"
PROCESSES="${PROCESSES:-1}"
MPIRUN_ARGS="${MPIRUN_ARGS:-}"
EXTRA="${EXTRA:-}"
PY=/usr/bin/python3

[[ -x "$DLIO_RUN" ]] || { echo "dlio-run not found at $DLIO_RUN" >&2; exit 2; }
mkdir -p "$WORK"
common=(--workload cosmoflow_a100 --quiet
  --set "dataset.data_folder=$WORK/data-$FILES" --set "dataset.num_files_train=$FILES"
  --set dataset.format=npz --set "train.epochs=$EPOCHS" --set "train.computation_time=$COMPUTE"
  --set output.progress=false)
# shellcheck disable=SC2206
extra=($EXTRA)

"$DLIO_RUN" "${common[@]}" --set "output.folder=$WORK/gen" --generate --no-train >"$WORK/gen.log" 2>&1 ||
  { cat "$WORK/gen.log" >&2; exit 1; }
cat "$WORK/data-$FILES"/train/* >/dev/null  # into the page cache

launch=()
if (( PROCESSES > 1 )); then
  # shellcheck disable=SC2206
  launch=(mpirun --oversubscribe --bind-to none -n "$PROCESSES" $MPIRUN_ARGS)
fi

echo "| processes x K | read threads | AU mean | lowest accelerator's AU | samples/s | MB/s | load + barrier per step (us) |"
echo "|---|---|---|---|---|---|---|"
for threads in $READ_THREADS; do
  for k in $KS; do
    out="$WORK/out-p$PROCESSES-k$k-t$threads"
    rm -rf "$out"
    "${launch[@]}" "$DLIO_RUN" "${common[@]}" "${extra[@]}" --no-generate \
      --set "output.folder=$out" --set "train.accelerators_per_process=$k" \
      --set "reader.read_threads=$threads" >"$out.log" 2>&1 ||
      { echo "| $PROCESSES x $k | $threads | failed: see $out.log |"; continue; }
    "$PY" - "$out" "$PROCESSES" "$k" "$threads" <<'EOF'
import glob, json, sys
out, p, k, t = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
s = json.load(open(out + "/summary.json"))
m = s["metric"]
lowest = m["train_au_min_accelerator_percentage"]
overhead = []
for f in glob.glob(out + "/*_output.json"):
    for key, epoch in json.load(open(f)).items():
        if not key.isdigit():
            continue  # host keys
        for block, loads in epoch["load"].items():  # blockN and eval, as DLIO
            overhead += [l + b for l, b in zip(loads, epoch["barrier"][block])]
print("| %s x %s | %s | %.1f%% | %.1f%% | %.0f | %.0f | %.0f |" % (
    p, k, t, m["train_au_mean_percentage"], sum(lowest) / len(lowest),
    m["train_throughput_mean_samples_per_second"], m["train_io_mean_SI_MB_per_second"],
    1e6 * sum(overhead) / max(1, len(overhead))))
EOF
  done
done
