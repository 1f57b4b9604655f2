#!/usr/bin/env bash
# Memory and accelerators per client through MLPerf Storage's own `mlpstorage` (mlcommons/storage,
# unmodified, from the peers folder): `mlpstorage training run --model M --accelerator-type h100
# --num-accelerators N` with `--dlio-bin-path` pointing at dlio's dlio_benchmark, and (PYDLIO set)
# at a two-line wrapper that runs the Python DLIO, on the same files. mlpstorage launches one MPI
# rank per accelerator; a third row runs dlio as one rank holding all N accelerators
# (`train.accelerators_per_process=N`, a parameter MLPerf's CLOSED rules do not list, so that run
# is OPEN/INVALID by them: it shows what one client process can carry).
#
# For each run: the peak summed PSS and RSS of the whole process tree (benchmarks/tree_rss.py;
# mlpstorage's own Python process included, the same for every row), per accelerator, and
# summary.json's AU and throughput. The datasets are shrunk (FILES_*), so every run is INVALID by
# MLPerf's dataset-size rule; samples keep their real sizes, which set the readers' memory.
# cosmoflow_h100's preset reads tfrecord with TensorFlow, which this host's Python lacks: both
# tools read it as npz through the pytorch loader (dataset.format=npz framework=pytorch
# reader.data_loader=pytorch), so that the rows compare.
#
#   benchmarks/mlpstorage_memory.sh [BIN_DIR] [WORKDIR]
#
# BIN_DIR [build/apps/dlio-run] holds dlio_benchmark. Environment knobs (defaults in brackets):
#   CASES ["unet3d cosmoflow"]   NS ["1 2 4"]: accelerator counts (ranks) per case
#   FILES_unet3d [56] FILES_cosmoflow [512]: files generated (unet3d: 146.6 MB samples on average)
#   EPOCHS [2]   PYDLIO [""]: the Python DLIO's folder (../shared/PYTHON_DLIO.md); unset: dlio only
#   PY_NS [NS]: the Python DLIO's accelerator counts (each rank's DataLoader holds whole batches of
#   146.6 MB unet3d samples: keep it to what the host's memory holds)
#   STORAGE [../shared/peers/mlcommons-storage-caa90c9]
set -euo pipefail

BIN="$(cd "${1:-build/apps/dlio-run}" && pwd)"
CASES="${CASES:-unet3d cosmoflow}"
NS="${NS:-1 2 4}"
PY_NS="${PY_NS:-$NS}"
EPOCHS="${EPOCHS:-2}"
PYDLIO="${PYDLIO:-}"
HERE="$(cd "$(dirname "$0")" && pwd)"
STORAGE="${STORAGE:-$HERE/../../shared/peers/mlcommons-storage-caa90c9}"
# shellcheck source=lib_bench.sh
. "$HERE/lib_bench.sh"
PY=$BENCH_PY

[[ -x "$BIN/dlio_benchmark" ]] || bench_die "no dlio_benchmark in $BIN"
[[ -d "$STORAGE/mlpstorage" ]] || bench_die "no mlpstorage in $STORAGE (set STORAGE)"
bench_setup_work "${2:-}"
W=$BENCH_WORK
# shellcheck source=../tests/mlperf/mlpstorage_env.sh
. "$HERE/../tests/mlperf/mlpstorage_env.sh"
mlpstorage_env "$STORAGE" "$W"

PYBIN=""
if [[ -n $PYDLIO ]] && bench_pydlio_check; then
  PYBIN="$W/pydlio-bin"
  mkdir -p "$PYBIN"
  # mlpstorage runs `<bin>/dlio_benchmark <Hydra arguments>` under mpirun.
  cat >"$PYBIN/dlio_benchmark" <<EOF
#!/bin/sh
PYTHONPATH=$(bench_pydlio_path) DFTRACER_ENABLE=0 exec $PY -m dlio_benchmark.main "\$@"
EOF
  chmod +x "$PYBIN/dlio_benchmark"
fi

MEM_GB=$(awk '/MemTotal/ { printf "%d", $2 / 1048576 }' /proc/meminfo)
COMMON=(--allow-run-as-root --oversubscribe --results-dir "$W/results")

case_params() {  # case_params CASE: the --params every run and the generation of CASE share
  local files_var="FILES_$1"
  case $1 in
    unet3d) echo "dataset.num_files_train=${!files_var:-56}" ;;
    cosmoflow)
      echo "dataset.num_files_train=${!files_var:-512} dataset.format=npz framework=pytorch" \
        "reader.data_loader=pytorch"
      ;;
    *) bench_die "unknown case '$1' (unet3d, cosmoflow)" ;;
  esac
}

# one_run TOOL BIN CASE RANKS ACCELERATORS [PARAM...]: one mlpstorage training run of RANKS ranks
# under tree_rss.py; prints a row (memory per accelerator = the tree's over ACCELERATORS).
one_run() {
  local tool=$1 bin=$2 model=$3 n=$4 acc=$5
  shift 5
  local tag="$tool-$model-$n-$RANDOM" params
  read -r -a params <<<"$(case_params "$model")"
  bench_warm "$W/data/$model"
  local rc=0
  "$PY" "$HERE/tree_rss.py" "$W/$tag.rss.json" -- "$PY" -m mlpstorage.main training run \
    --model "$model" --accelerator-type h100 --num-accelerators "$n" \
    --client-host-memory-in-gb "$MEM_GB" --data-dir "$W/data" --checkpoint-folder "$W/ckpt" \
    --dlio-bin-path "$bin" \
    "${COMMON[@]}" --params "${params[@]}" "train.epochs=$EPOCHS" "$@" >"$W/$tag.log" 2>&1 || rc=$?
  local summary
  summary=$(ls -td "$W/results/training/$model/run"/*/ 2>/dev/null | head -1 || true)summary.json
  [[ $rc == 0 && -f $summary ]] || {
    echo "| $tool | $model | $n | $acc | failed (exit $rc, $W/$tag.log) | | | | |"
    return 0
  }
  "$PY" - "$W/$tag.rss.json" "$summary" "$tool" "$model" "$n" "$acc" "$*" <<'PY'
import json, sys
rss, summary, tool, model, ranks, n, extra = sys.argv[1:]
r, m = json.load(open(rss)), json.load(open(summary))["metric"]
n, gib = int(n), 2**20  # tree_rss.py reports KiB
print("| %s%s | %s | %s | %d | %.2f GiB | %.2f GiB | %.2f GiB | %.1f%% | %.1f |" % (
    tool, " (" + extra + ")" if extra else "", model, ranks, n, r["pss_sum_kib"] / gib,
    r["pss_sum_kib"] / gib / n, r["rss_sum_kib"] / gib / n, m["train_au_mean_percentage"],
    m["train_throughput_mean_samples_per_second"]))
PY
}

echo "mlpstorage memory and accelerators: $(date -u +%FT%TZ), $(nproc) CPUs, ${MEM_GB} GiB, $(bench_load)"
echo "| tool | model | ranks | accelerators | PSS (tree) | PSS per accelerator | RSS per accelerator | AU | samples/s |"
echo "|---|---|---|---|---|---|---|---|---|"
for model in $CASES; do
  read -r -a gen <<<"$(case_params "$model")"
  if [[ ! -d "$W/data/$model" ]]; then
    "$PY" -m mlpstorage.main training datagen --model "$model" --num-processes 2 \
      --data-dir "$W/data" --dlio-bin-path "$BIN" "${COMMON[@]}" --params "${gen[@]}" \
      >"$W/datagen-$model.log" 2>&1 || bench_die "datagen of $model failed: $W/datagen-$model.log"
  fi
  for n in $NS; do
    one_run dlio "$BIN" "$model" "$n" "$n"
    if ((n > 1)); then one_run dlio "$BIN" "$model" 1 "$n" "train.accelerators_per_process=$n"; fi
  done
  if [[ -n $PYBIN ]]; then
    for n in $PY_NS; do one_run "Python DLIO" "$PYBIN" "$model" "$n" "$n"; done
  fi
done
