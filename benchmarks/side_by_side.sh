#!/usr/bin/env bash
# Issue 23's targets, measured side by side in one run: the same files in the page cache (warmed
# with `cat` right before every run of every tool), the tools alternated run by run (the order
# rotates each round), one Markdown table at the end with each figure's range over the rounds and
# each ratio computed within a round. docs/performance.md, "Side by side".
#
#   benchmarks/side_by_side.sh [DLIO_RUN] [WORKDIR]
#
# Cases (CASES, default "fio cosmo h5 unet memory"):
#   fio    384 x 1 MiB npz, pytorch loader, 2 read threads, batch 4: dlio's default and native
#          MiB/s (train_io_mean_MiB_per_second) against fio (psync, 1 MiB requests, 2 jobs over
#          the same files, --invalidate=0). Target: default >= 0.9x fio. Two rows say where the
#          default's time goes: prefetch4 (reader.prefetch_size 4: PyTorch's prefetch_factor is
#          ceil(prefetch_size / read_threads), 1 by default here, so each worker waits for the main
#          process after every batch) and threads (io_model=numpy: the default's requests on
#          dlio's reader threads instead of DataLoader worker processes).
#   cosmo  cosmoflow-like npz, 1024 x 2.8 MB (stdev 71 kB), batch 1, 4 read threads, pytorch loader
#   h5     the cosmo sizes as hdf5 (256 files, one sample of 2.8 MB each: dataset 'records'), same
#          loader; the real DataLoader reads each sample with h5py (real_dataloader.py --format
#          hdf5): calibrates the h5py model's client_costs=framework against the real stack (no
#          Python DLIO row yet, though dlio now names hdf5 files .hdf5 as the Python DLIO lists them)
#   unet   unet3d-like npz, 32 x 146.6 MB (stdev 0, resize 2 MiB), batch 4, 4 read threads
#          (4.4 GiB), pytorch loader
#          both: samples/s of dlio's default, io_model=native, client_costs=framework, a real
#          PyTorch DataLoader (benchmarks/real_dataloader.py: same files, workers, batch; np.load
#          per sample) and the Python DLIO. Targets: default >= 4x real, >= 0.8x native, >= 10x
#          (cosmo) and >= 4x (unet) the Python DLIO. unet adds the real DataLoader collating only
#          the first record_length_bytes_resize bytes of each sample (what DLIO's reader hands its
#          loader, and what dlio's pytorch workers collate): the least a real loop pays.
#   memory the cosmo files with 5.51 ms compute (CosmoFlow A100), 1 read thread per accelerator:
#          peak memory of the whole process tree (benchmarks/tree_rss.py: summed RSS and PSS) of
#          one dlio-run with train.accelerators_per_process=MEM_ACCELERATORS, per accelerator,
#          beside one Python DLIO rank (one accelerator: its main process and loader workers).
# Every tool reads the same workload YAML (WORKDIR/conf/workload/sbs_<case>.yaml, written here):
# dlio-run with --config, the Python DLIO with --config-dir/workload=.
#
# Environment knobs (defaults in brackets):
#   REPEAT [2] rounds   EPOCHS [3] per run   MEM_ACCELERATORS [16]   MEM_EPOCHS [2]
#   PYDLIO [""]: the Python DLIO's folder as ../shared/PYTHON_DLIO.md installs it (e.g.
#     /work/pydlio); unset or not importable: its rows are skipped with a message
#   MAX_LOAD [""]: before each round wait (at most WAIT_SECONDS [300]) for the 1-minute load
#     average to fall below it
#   KEEP [0]: 1 keeps the temporary work folder
# WORKDIR: without it, a fresh temporary folder, removed at the end (unless KEEP=1); with it, the
# datasets generated there are kept and reused by the next run (the script never removes a folder
# it did not make). Needs fio, GNU time is not needed; /usr/bin/python3 with numpy, torch, psutil.
set -euo pipefail
# shellcheck source=lib_bench.sh
. "$(dirname "$0")/lib_bench.sh"

DLIO_RUN="${1:-build/apps/dlio-run/dlio-run}"
CASES="${CASES:-fio cosmo h5 unet memory}"
REPEAT="${REPEAT:-2}"
EPOCHS="${EPOCHS:-3}"
MEM_ACCELERATORS="${MEM_ACCELERATORS:-16}"
MEM_EPOCHS="${MEM_EPOCHS:-2}"
PYDLIO="${PYDLIO:-}"

[[ -x $DLIO_RUN ]] || bench_die "dlio-run not found at $DLIO_RUN (build it: cmake --build build --target dlio-run)"
DLIO_RUN=$(realpath "$DLIO_RUN")
"$BENCH_PY" -c "import numpy, torch, psutil" 2>/dev/null ||
  bench_die "$BENCH_PY lacks numpy, torch or psutil (Debian: python3-numpy python3-torch python3-psutil)"
HAVE_FIO=1
command -v fio >/dev/null || HAVE_FIO=0
HAVE_PYDLIO=1
PYDLIO_WHY=$(bench_pydlio_check) || HAVE_PYDLIO=0
bench_setup_work "${2:-}"
W=$BENCH_WORK
mkdir -p "$W/conf/workload" "$W/out"
RESULTS="$W/results-$(date -u +%Y%m%dT%H%M%S).tsv"
: >"$RESULTS"

# conf_of CASE: writes the case's workload YAML (DLIO's schema; both tools read it), prints its path.
conf_of() {
  local c=$1 f="$W/conf/workload/sbs_$1.yaml" ds rd
  case $c in
    fio)
      ds="format: npz, num_files_train: 384, num_samples_per_file: 1, record_length_bytes: 1048576"
      rd="data_loader: pytorch, read_threads: 2, batch_size: 4" ;;
    cosmo | memory)
      c=cosmo f="$W/conf/workload/sbs_cosmo.yaml"
      ds="format: npz, num_files_train: 1024, num_samples_per_file: 1, record_length_bytes: 2828486, record_length_bytes_stdev: 71311"
      rd="data_loader: pytorch, read_threads: 4, batch_size: 1, file_shuffle: seed, sample_shuffle: seed" ;;
    h5)
      ds="format: hdf5, num_files_train: 256, num_samples_per_file: 1, record_length_bytes: 2828486, record_length_bytes_stdev: 71311"
      rd="data_loader: pytorch, read_threads: 4, batch_size: 1, file_shuffle: seed, sample_shuffle: seed" ;;
    unet)
      ds="format: npz, num_files_train: 32, num_samples_per_file: 1, record_length_bytes: 146600628, record_length_bytes_stdev: 0, record_length_bytes_resize: 2097152"
      rd="data_loader: pytorch, read_threads: 4, batch_size: 4, file_shuffle: seed, sample_shuffle: seed" ;;
  esac
  cat >"$f.tmp" <<EOF
# written by benchmarks/side_by_side.sh
model: {name: sbs_$c}
framework: pytorch
workflow: {generate_data: False, train: True, checkpoint: False}
dataset: {data_folder: $W/data/$c, num_files_eval: 0, $ds}
reader: {$rd}
train: {epochs: $EPOCHS, computation_time: 0}
EOF
  mv "$f.tmp" "$f"
  echo "$f"
}

data_of() { [[ $1 == memory ]] && echo "$W/data/cosmo" || echo "$W/data/$1"; }

generate() {
  local c=$1 conf data
  conf=$(conf_of "$c")
  data=$(data_of "$c")
  if [[ ! -d $data/train ]]; then
    echo "generating $data ..."
    "$DLIO_RUN" --config "$conf" --quiet --generate --no-train -o "$W/out/gen-$c" \
      >"$W/out/gen-$c.log" 2>&1 || { tail "$W/out/gen-$c.log" >&2; bench_die "generation of $c failed"; }
  fi
  mkdir -p "$data/valid"  # the Python DLIO lists it even with num_files_eval 0
}

record() { printf '%s\t%s\t%s\t%s\n' "$@" >>"$RESULTS"; }  # case label round value

failed() {  # failed LOG: why a run failed, on stderr
  echo "  failed; the end of $1:" >&2
  tail -5 "$1" >&2 || true
}

# run_one CASE LABEL ROUND: one run, its figure into the results.
run_one() {
  local c=$1 label=$2 r=$3 conf out data v=""
  conf="$W/conf/workload/sbs_$c.yaml"
  data=$(data_of "$c")
  out="$W/out/r$r-$c-$label"
  rm -rf -- "$out"  # a run folder of this script's own (same name: a rerun in the same WORKDIR)
  local threads batch files
  threads=$(grep -o 'read_threads: [0-9]*' "$conf" | cut -d' ' -f2)
  batch=$(grep -o 'batch_size: [0-9]*' "$conf" | cut -d' ' -f2)
  files=$(grep -o 'num_files_train: [0-9]*' "$conf" | cut -d' ' -f2)
  local dlio=("$DLIO_RUN" --config "$conf" --quiet --no-generate -o "$out" --set output.progress=false)
  local metric=train_throughput_mean_samples_per_second
  [[ $c == fio ]] && metric=train_io_mean_MiB_per_second
  bench_warm "$data/train"
  case $label in
    default) "${dlio[@]}" >"$out.log" 2>&1 && v=$(bench_metric "$out/summary.json" "$metric") ;;
    native) "${dlio[@]}" --set reader.io_model=native >"$out.log" 2>&1 &&
      v=$(bench_metric "$out/summary.json" "$metric") ;;
    prefetch4) "${dlio[@]}" --set reader.prefetch_size=4 >"$out.log" 2>&1 &&
      v=$(bench_metric "$out/summary.json" "$metric") ;;
    threads) "${dlio[@]}" --set reader.io_model=numpy >"$out.log" 2>&1 &&
      v=$(bench_metric "$out/summary.json" "$metric") ;;
    framework) "${dlio[@]}" --set reader.client_costs=framework >"$out.log" 2>&1 &&
      v=$(bench_metric "$out/summary.json" "$metric") ;;
    fio)
      local list=()
      mapfile -t list < <(find "$data/train" -type f -name '*.npz' | sort)
      v=$(bench_fio_gib "$threads" 1048576 "$EPOCHS" "${list[@]}" 2>"$out.log") &&
        v=$("$BENCH_PY" -c "print('%.1f' % ($v * 1024))") ;;
    real | realresize)
      local resize=0
      [[ $label == realresize ]] && resize=$(grep -o 'record_length_bytes_resize: [0-9]*' "$conf" | cut -d' ' -f2)
      "$BENCH_PY" "$BENCH_DIR/real_dataloader.py" "$data/train" --workers "$threads" \
      --format "$(grep -o 'format: [a-z0-9]*' "$conf" | cut -d' ' -f2)" \
      --batch "$batch" --epochs "$EPOCHS" --files "$files" --collate-bytes "$resize" \
      --json "$out.json" >"$out.log" 2>&1 &&
      v=$("$BENCH_PY" -c "import json, sys; print('%.2f' % json.load(open(sys.argv[1]))['samples_per_second'])" "$out.json") ;;
    pydlio) bench_pydlio_run "$W/conf" "sbs_$c" "$out" 1 &&
      v=$(bench_metric "$out/summary.json" "$metric") ;;
  esac
  if [[ -z $v ]]; then
    failed "$out.log"
    v=failed
  fi
  echo "  $c $label: $v"
  record "$c" "$label" "$r" "$v"
}

# memory_one TOOL ROUND: peak memory of one run's process tree.
memory_one() {
  local tool=$1 r=$2 conf="$W/conf/workload/sbs_cosmo.yaml" out="$W/out/r$2-memory-$1" per
  rm -rf -- "$out"
  bench_warm "$W/data/cosmo/train"
  local mem=("$BENCH_PY" "$BENCH_DIR/tree_rss.py" "$out.mem.json" --)
  local ok=1
  if [[ $tool == dlio ]]; then
    per=$MEM_ACCELERATORS
    "${mem[@]}" "$DLIO_RUN" --config "$conf" --quiet --no-generate -o "$out" \
      --set output.progress=false --set train.computation_time=0.00551 \
      --set "train.epochs=$MEM_EPOCHS" --set reader.read_threads=1 \
      --set "train.accelerators_per_process=$MEM_ACCELERATORS" >"$out.log" 2>&1 || ok=0
  else
    per=1
    BENCH_PYDLIO_WRAP=("${mem[@]}")
    bench_pydlio_run "$W/conf" sbs_cosmo "$out" 1 ++workload.train.computation_time=0.00551 \
      "++workload.train.epochs=$MEM_EPOCHS" || ok=0
    BENCH_PYDLIO_WRAP=()
  fi
  if ((ok == 0)) || [[ ! -s $out.mem.json ]]; then
    failed "$out.log"
    record memory "$tool" "$r" failed
    return
  fi
  local fig
  fig=$("$BENCH_PY" - "$out.mem.json" "$per" "$out/summary.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); k = int(sys.argv[2])
try:
    au = "%.1f%%" % json.load(open(sys.argv[3]))["metric"]["train_au_mean_percentage"]
except (OSError, ValueError, KeyError):
    au = "?"
print("%d|%.0f|%.0f|%.0f|%d|%s" % (k, m["pss_sum_kib"] / 1024 / k, m["rss_sum_kib"] / 1024 / k,
                                   m["rss_max_kib"] / 1024, m["processes"], au))
PY
)
  echo "  memory $tool: accelerators|PSS MiB/acc|RSS MiB/acc|largest RSS MiB|processes|AU = $fig"
  record memory "$tool" "$r" "$fig"
}

labels_of() {
  case $1 in
    fio) echo default native fio prefetch4 threads ;;
    cosmo) echo default native framework real pydlio ;;
    h5) echo default native framework real ;;  # no Python DLIO row (not measured yet)
    unet) echo default native framework real pydlio realresize ;;
    memory) echo dlio pydlio ;;
  esac
}

echo "dlio-run: $DLIO_RUN ($("$DLIO_RUN" --version 2>/dev/null | head -1)); work: $W"
echo "rounds: $REPEAT, epochs: $EPOCHS; $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
((HAVE_PYDLIO)) || echo "$PYDLIO_WHY"
((HAVE_FIO)) || echo "fio is not installed (apt-get install fio): the fio column is skipped"
for c in $CASES; do
  case $c in fio | cosmo | h5 | unet | memory) ;; *) bench_die "unknown case $c (fio, cosmo, h5, unet, memory)" ;; esac
  generate "$c"
done
sync

for ((r = 1; r <= REPEAT; ++r)); do
  echo "round $r: $(bench_wait_quiet)"
  record load - "$r" "$(cut -d' ' -f1 /proc/loadavg)"
  for c in $CASES; do
    read -r -a labels <<<"$(labels_of "$c")"
    n=${#labels[@]}
    for ((i = 0; i < n; ++i)); do
      label=${labels[$(((i + r - 1) % n))]}
      if [[ $label == pydlio ]] && ((!HAVE_PYDLIO)); then continue; fi
      if [[ $label == fio ]] && ((!HAVE_FIO)); then continue; fi
      if [[ $c == memory ]]; then memory_one "$label" "$r"; else run_one "$c" "$label" "$r"; fi
    done
  done
done
echo "load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
echo
"$BENCH_PY" "$BENCH_DIR/side_by_side_table.py" "$RESULTS" "$MEM_ACCELERATORS"
echo
echo "raw figures: $RESULTS$( ((BENCH_WORK_OWNED)) && [[ ${KEEP:-0} != 1 ]] && echo ' (removed with the work folder; KEEP=1 keeps it)')"
