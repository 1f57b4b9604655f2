#!/usr/bin/env bash
# The client's CPU per sample: GNU time's user + sys of one dlio-run (with its threads and any
# worker processes) over the samples it read, and the run's AU, for K accelerators in one process
# on the CosmoFlow A100 workload as npz (1024 files of ~2.8 MB, batch 1, 1 read thread per
# accelerator: the files of benchmarks/max_accelerators.sh), read from the page cache. With BEFORE
# set to another dlio-run (e.g. the build before a change), both run alternately, REPEAT rounds.
# Not a test: figures for docs/performance.md.
#
#   benchmarks/client_cpu.sh [DLIO_RUN] [WORKDIR]
#
# Environment: KS ["16 28"] accelerator counts, EPOCHS [5], REPEAT [2], BEFORE [""],
# extra `--set` arguments in SETS [""] (e.g. SETS="reader.io_model=native").
set -euo pipefail

DLIO_RUN="${1:-build/apps/dlio-run/dlio-run}"
WORK="${2:-/tmp/dlio-client-cpu}"
KS="${KS:-16 28}"
EPOCHS="${EPOCHS:-5}"
REPEAT="${REPEAT:-2}"
BEFORE="${BEFORE:-}"
[[ -x /usr/bin/time ]] || { echo "GNU time (/usr/bin/time) is needed" >&2; exit 2; }
mkdir -p "$WORK"
data="$WORK/data-cosmoflow-1024-npz"
common=(--workload cosmoflow_a100 --quiet --set dataset.format=npz --set "dataset.data_folder=$data"
  --set dataset.num_files_train=1024 --set reader.read_threads=1 --set workflow.checkpoint=false
  --set output.progress=false --set "train.epochs=$EPOCHS")
for s in ${SETS:-}; do common+=(--set "$s"); done
if [[ ! -d $data/train ]]; then
  "$DLIO_RUN" "${common[@]}" --set "output.folder=$WORK/gen" --generate --no-train >"$WORK/gen.log" 2>&1
fi
cat "$data"/train/* >/dev/null  # into the page cache

# one BINARY K: prints "cpu_ms_per_sample au_percent"
one() {
  local out="$WORK/out"
  rm -rf -- "$out"
  /usr/bin/time -f "%U %S" -o "$WORK/time" "$1" "${common[@]}" --set "output.folder=$out" \
    --set "train.accelerators_per_process=$2" >"$WORK/run.log" 2>&1 || { tail "$WORK/run.log" >&2; exit 1; }
  /usr/bin/python3 - "$out/summary.json" "$WORK/time" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
user, sys_ = map(float, open(sys.argv[2]).read().split()[-2:])
n = sum(sum(r["samples"]) if isinstance(r["samples"], list) else r["samples"] for r in s["ranks"])
print("%.3f %.1f" % ((user + sys_) * 1000 / n, s["metric"]["train_au_mean_percentage"]))
PY
}

echo "load average $(cut -d' ' -f1-3 /proc/loadavg); $EPOCHS epochs; ${SETS:-default settings}"
echo
echo "| binary | accelerators | round | CPU per sample (ms) | AU |"
echo "|---|---|---|---|---|"
for k in $KS; do
  for ((r = 1; r <= REPEAT; r++)); do
    if [[ -n $BEFORE ]]; then
      read -r cpu au < <(one "$BEFORE" "$k")
      echo "| before | $k | $r | $cpu | $au% |"
    fi
    read -r cpu au < <(one "$DLIO_RUN" "$k")
    echo "| this | $k | $r | $cpu | $au% |"
  done
done
