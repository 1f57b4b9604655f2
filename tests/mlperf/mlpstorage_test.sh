#!/bin/bash
# Acceptance: MLPerf Storage's own `mlpstorage` (mlcommons/storage, unmodified) drives dlio through
# `--dlio-bin-path` (our build's dlio_benchmark) under mpirun with 2 ranks, then its report
# generator classifies the runs. Tiny sizes through --params, so every training run is INVALID by
# MLPerf's rules (disallowed overrides, too few files) and the llama3-8b checkpoint run is CLOSED:
# the verdicts mlpstorage gives the Python DLIO (e1919d7) for the same command lines, measured by
# hand (docs/mlperf.md). Exit 77 (skip) without mlpstorage, mpirun or python3-yaml/psutil.
#
#   mlpstorage_test.sh BIN_DIR STORAGE_DIR PYTHON
set -u
BIN=$1 STORAGE=$2 PY=$3
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
[ -d "$STORAGE/mlpstorage" ] || skip "no mlpstorage in '$STORAGE' (DLIO_PEERS_DIR)"
[ -x "$BIN/dlio_benchmark" ] || fail "no $BIN/dlio_benchmark"
command -v mpirun > /dev/null || skip "mpirun not found"
"$PY" -c "import yaml, psutil" 2> /dev/null || skip "$PY lacks yaml or psutil (python3-yaml, python3-psutil)"

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# shellcheck source=mlpstorage_env.sh
. "$(dirname "$0")/mlpstorage_env.sh"
mlpstorage_env "$STORAGE" "$T"
R="$T/results" D="$T/data" K="$T/checkpoints"
MLPS=("$PY" -m mlpstorage.main)
COMMON=(--allow-run-as-root --oversubscribe --dlio-bin-path "$BIN" --results-dir "$R")
TINY=(dataset.num_files_train=4 dataset.record_length_bytes=4096 dataset.record_length_bytes_stdev=0
      dataset.record_length_bytes_resize=4096)

run() {  # run LOG ARGS...: one mlpstorage command; its output goes to LOG, shown on failure
  local log="$T/$1.log"
  shift
  "${MLPS[@]}" "$@" > "$log" 2>&1 || { cat "$log"; fail "mlpstorage $*"; }
  grep -q "Traceback" "$log" && { cat "$log"; fail "a Python traceback from mlpstorage $*"; }
  return 0
}

for model in unet3d resnet50 cosmoflow; do
  run "$model-datagen" training datagen --model "$model" --num-processes 2 --data-dir "$D" \
      "${COMMON[@]}" --params "${TINY[@]}"
  run "$model-run" training run --model "$model" --accelerator-type h100 --num-accelerators 2 \
      --client-host-memory-in-gb 1 --data-dir "$D" --checkpoint-folder "$K" "${COMMON[@]}" \
      --params "${TINY[@]}" reader.batch_size=1 train.epochs=1 train.computation_time=0
done
# Subset mode (2 of llama3-8b's 8 ranks) needs tensor x pipeline x data >= 2 ranks, as in DLIO.
run llama-checkpoint checkpointing run --model llama3-8b --num-processes 2 \
    --client-host-memory-in-gb 1 --checkpoint-folder "$K" --num-checkpoints-read 1 \
    --num-checkpoints-write 1 "${COMMON[@]}" --params model.num_layers=2 \
    model.transformer.vocab_size=1024 model.transformer.hidden_size=64 \
    model.transformer.ffn_hidden_size=128 model.transformer.num_attention_heads=4 \
    model.transformer.num_kv_heads=2 checkpoint.time_between_checkpoints=0 model.parallelism.tensor=2

# DLIO's run layout: summary.json and Hydra's three files; no summary.json for data generation.
for dir in "$R"/training/*/run/* "$R"/checkpointing/llama3-8b/*; do
  for f in summary.json dlio_config/config.yaml dlio_config/hydra.yaml dlio_config/overrides.yaml; do
    [ -f "$dir/$f" ] || fail "no $f in $dir"
  done
done
for dir in "$R"/training/*/datagen/*; do
  [ -f "$dir/dlio_config/config.yaml" ] || fail "no dlio_config/config.yaml in $dir"
  [ -f "$dir/summary.json" ] && fail "$dir/summary.json: DLIO writes none for data generation"
done
"$PY" - "$R" << 'PY' || fail "summary.json keys"
import glob, json, sys
r = sys.argv[1]
# Every top-level key the Python DLIO writes, and its metric keys (training / checkpointing).
top = ["start", "end", "num_accelerators", "num_hosts", "hostname", "metric", "num_files_train",
       "num_files_eval", "num_samples_per_file", "host_cpu_count", "host_processor_name",
       "potential_caching", "host_cpuinfo", "host_meminfo", "host_memory_GB",
       "data_size_per_host_GB", "epochs"]
train = ["train_au_percentage", "train_au_mean_percentage", "train_au_meet_expectation",
         "train_au_stdev_percentage", "train_throughput_samples_per_second",
         "train_throughput_mean_samples_per_second", "train_throughput_stdev_samples_per_second",
         "train_io_mean_MB_per_second", "train_io_stdev_MB_per_second"]
ckpt = ["save_checkpoint_io_mean_GB_per_second", "save_checkpoint_io_stdev_GB_per_second",
        "save_checkpoint_duration_mean_seconds", "save_checkpoint_duration_stdev_seconds",
        "load_checkpoint_io_mean_GB_per_second", "load_checkpoint_io_stdev_GB_per_second",
        "load_checkpoint_duration_mean_seconds", "load_checkpoint_duration_stdev_seconds",
        "checkpoint_size_GB"]
for pattern, metric in (("training/*/run/*", train), ("checkpointing/*/*", ckpt)):
    for f in glob.glob(f"{r}/{pattern}/summary.json"):
        s = json.load(open(f))
        missing = [k for k in top if k not in s] + [k for k in metric if k not in s["metric"]]
        assert not missing, f"{f}: missing {missing}"
        assert isinstance(s["host_memory_GB"], list) and len(s["host_memory_GB"]) == 1, f
        assert isinstance(s["potential_caching"], list), f
        if "train_io_MiB_per_second" in s["metric"]:  # DLIO's MB is 2^20 bytes
            m = s["metric"]
            assert abs(m["train_io_mean_MB_per_second"] - m["train_io_mean_MiB_per_second"]) < 1e-9
    # checkpoint_size_GB in GiB: 2,880,000 bytes (the Python DLIO's 0.002682209 GB).
    for f in glob.glob(f"{r}/checkpointing/*/*/summary.json"):
        assert abs(json.load(open(f))["metric"]["checkpoint_size_GB"] - 2880000 / 2**30) < 1e-12
PY

run reportgen reports reportgen --results-dir "$R"
log="$T/reportgen.log"
[ -f "$R/results.csv" ] || { cat "$log"; fail "reportgen wrote no results.csv"; }
grep -q "Results Report" "$log" || { cat "$log"; fail "no results table"; }
expect() {  # expect VERDICT-REGEX RUN-DIR-REGEX
  grep -Eq "$1 \($R/$2/[0-9_]+\)" "$log" || { cat "$log"; fail "expected '$1' for $2"; }
}
# The Python DLIO's verdicts for the same command lines (unet3d and llama3-8b measured; resnet50 and
# cosmoflow need TensorFlow, which this host lacks: their rules read only the config).
expect "Benchmark run is INVALID due to 7 issues" training/unet3d/run
expect "Benchmark run is INVALID due to 7 issues" training/resnet50/run
expect "Benchmark run is INVALID due to 7 issues" training/cosmoflow/run
expect "Benchmark run qualifies for CLOSED category" checkpointing/llama3-8b
n=$(grep -c "Found benchmark run" "$log")
[ "$n" = 4 ] || { cat "$log"; fail "reportgen found $n runs, expected 4 (3 training, 1 checkpointing)"; }
echo "PASS: mlpstorage ran dlio_benchmark for unet3d, resnet50, cosmoflow and llama3-8b; reportgen: same verdicts as the Python DLIO"
