#!/usr/bin/env bash
# The DLIO paper's closed loop for one real program: profile it, fit a workload to the profile,
# generate that workload's dataset, run the emulation under the same profiler, compare.
#
#   closed_loop.sh DLIO_RUN PYTHON PROGRAM.py WORKDIR [CONFIG.yaml]
#
# PROGRAM.py has two subcommands: `make DIR` writes its dataset under DIR (untraced) and `run DIR`
# is the traced input loop. Without CONFIG.yaml the workload is `dlio-run fit`'s; with it, that
# config is used instead (a hand-written one, for a before/after figure). WORKDIR is created (it
# must not exist) and keeps everything: data/, real/ (the program's profile), fit.yaml,
# emu-data/, emu/ (the emulation's profile), emu-out/ (its dlio output), compare.json.
# Prints compare.json's similarity and KS distances; exits non-zero when a step fails, or (when
# MIN_SIMILARITY / MAX_KS are set in the environment) when the similarity is below MIN_SIMILARITY
# or the request-size KS distance is not below MAX_KS, or (MAX_COUNT_DIFF, a fraction) when the
# emulation's reads, writes, bytes read or bytes written differ from the real run's by more than
# that fraction of the real run's.
# With EXPECT_CLIENT_COSTS=framework (or none) it fails when the fitted reader.client_costs is
# another (none: the key left commented out, dlio's default); with EXPECT_FIT="TEXT" when no line
# of fit.yaml holds TEXT (a key fit must find: 'npz_members: "x.npy,y.npy"'; several texts
# separated by '|', each on some line). With REQUIRE_MODULES="numpy torch
# ..." it exits 77 (skipped) when PYTHON cannot import one of them. With REPLACE_WORKDIR=1 an existing WORKDIR that an earlier run of this script made (it
# holds .closed_loop) is removed first; any other existing WORKDIR is still refused.
# With UNTIMED_SIMILARITY=1, MIN_SIMILARITY bounds the similarity without the two timing features
# (io_time_s and bandwidth_per_op; the cosine of the other features' normalized values, as compare
# computes it): the sanitizer builds set it, since a sanitizer's cost lands in the emulation's
# timing and nowhere else (the printed line then also holds "untimed_similarity").
# With SELF_COMPARE=1 the real program is profiled a second time (real2/, after the emulation) and
# compared with its first run (self.json): its own run-to-run similarity, the ceiling the
# emulation's similarity is read against ("self_similarity" in the printed line). With
# CLIENT_COSTS=none (or framework) the emulation runs with that reader.client_costs, whatever
# the workload says (fit's choice is still checked against EXPECT_CLIENT_COSTS).
# With NO_DATA_DIR=1 the real program (and real2/) is profiled without --data-dir: every file it
# touches is traced (Python's own files, /tmp, caches, DataLoader workers' files), so fit has to
# find the dataset by itself. The emulation is still profiled with --data-dir emu-data: dlio-run
# reading its YAML config and writing its output folder is the driver's, not the emulated
# workload's, so what is compared is what fit made of the whole trace against that workload.
# compare leaves the runtime's own I/O (start-up reads, tempfile probes, system folders) out of
# both profiles, as fit does (docs/profiling.md, "What is scored"; docs/fidelity.md, "The whole
# corpus").
# With RANKS=N (N >= 2; default: the N of a module-level `RANKS = N` line in PROGRAM.py, else 1)
# the real program and the emulation each run as N MPI ranks, every rank under its own
# `dlio-run profile` (one trace per rank in real/ and emu/): `$MPIEXEC -n N dlio-run profile ...
# -- PYTHON PROGRAM.py run DIR`, then `$MPIEXEC -n N dlio-run profile --data-dir emu-data --
# dlio-run --config fit.yaml ...`. MPIEXEC is the launcher and its flags (default mpiexec, with
# Open MPI's "--allow-run-as-root --oversubscribe --bind-to none --mca mpi_yield_when_idle 1",
# the flags CMake gives the MPI tests, when `mpiexec --version` names Open MPI). fit must find
# the N ranks itself (the "traced with N ranks" line of fit.yaml), else the script fails; the
# dataset is generated once, without the launcher.
# With FIT_ONLY=1 (and no CONFIG.yaml) the script stops after fit: WORKDIR keeps data/, real/ and
# fit.yaml, and the last line printed is fit.yaml's path (benchmarks/fit_load.sh).
# With HOGS=N, N CPU hogs (a busy shell loop each) run beside each traced run (the real
# program's, the emulation's, real2/) and are killed when it ends or the script exits.
# With CHECKPOINT_NAMES=DIR (default: the DIR of a module-level `CHECKPOINT_NAMES = 'DIR'` line in
# PROGRAM.py; a folder under the program's data directory that it saves its checkpoints into,
# every file kept), the script fails unless the emulation's checkpoint folder
# (emu-data/checkpoints) holds exactly the names the program's DIR holds (dlio's own dot files
# aside): the framework's file names, written as it writes them.
# With SETTLE_CACHE=1, before each traced run its dataset (data/ for the program, emu-data/ for
# the emulation) is put into one page-cache state by settle_cache.py (written back, dropped, read
# once as `cat` does): how a file was written decides how its pages are cached and what reading
# them costs (2-4.7x per 256 KiB read here), and neither trace shows it (docs/fidelity.md, "How
# the data was written"). The default (0) leaves each dataset as its writer left it: settling moves time, not
# requests, and changes which pages a mapped file's page faults bring in.
# The last line printed is JSON: similarity, KS distances, reads/writes and bytes read/written of
# the real run and of the emulation (compare.json's counts and bytes_read/bytes_written
# features), the three most different features, data_dir (false with NO_DATA_DIR=1), hogs and
# ranks.
set -euo pipefail

if [[ $# -lt 4 || $# -gt 5 ]]; then
  echo "usage: $0 DLIO_RUN PYTHON PROGRAM.py WORKDIR [CONFIG.yaml]" >&2
  exit 2
fi
dlio_run=$1 python=$2 program=$3 work=$4 config=${5:-}
for module in ${REQUIRE_MODULES:-}; do
  if ! "$python" -c "import $module" 2> /dev/null; then
    echo "$0: skipped: $python cannot import $module" >&2
    exit 77
  fi
done
if [[ ${REPLACE_WORKDIR:-0} == 1 && -f $work/.closed_loop ]]; then
  rm -rf "$work"
fi
if [[ -e $work ]]; then
  echo "$0: $work exists; give a new directory" >&2
  exit 2
fi
mkdir -p "$work"
work=$(cd "$work" && pwd)
touch "$work/.closed_loop"

hog_pids=()
start_hogs() {
  local i
  for ((i = 0; i < ${HOGS:-0}; ++i)); do
    sh -c 'while :; do :; done' &
    hog_pids+=($!)
  done
}
stop_hogs() {
  if ((${#hog_pids[@]})); then
    kill "${hog_pids[@]}" 2> /dev/null || true
    wait "${hog_pids[@]}" 2> /dev/null || true
  fi
  hog_pids=()
}
trap stop_hogs EXIT
trap 'stop_hogs; exit 130' INT
trap 'stop_hogs; exit 143' TERM

# settle DIR: with SETTLE_CACHE=1, DIR's files into the page-cache state above.
settle() {
  if [[ ${SETTLE_CACHE:-0} == 1 ]]; then
    "$python" "$(dirname "$0")/settle_cache.py" "$1" > /dev/null
  fi
}

# profile_traced NAME SCOPE... -- COMMAND...: COMMAND traced into $work/NAME beside the hogs,
# restricted to SCOPE (--data-dir DIR, or nothing: every file); its output in NAME.log.
profile_traced() {
  local name=$1 scope=()
  shift
  while [[ $1 != -- ]]; do
    scope+=("$1")
    shift
  done
  shift
  start_hogs
  local rc=0
  "${launcher[@]}" "$dlio_run" profile --output "$work/$name" "${scope[@]}" -- "$@" \
    > "$work/$name.log" 2>&1 || rc=$?
  stop_hogs
  if ((rc != 0)); then
    cat "$work/$name.log" >&2
    exit 1
  fi
}
# The launcher every traced run starts under: none, or MPIEXEC -n RANKS.
launcher=()
ranks=${RANKS:-$(sed -n 's/^RANKS = \([0-9][0-9]*\).*/\1/p' "$program" | head -n 1)}
ranks=${ranks:-1}
if ((ranks > 1)); then
  mpiexec_line=${MPIEXEC:-mpiexec}
  if [[ -z ${MPIEXEC:-} ]] && mpiexec --version 2> /dev/null | grep -q 'Open MPI\|OpenRTE'; then
    mpiexec_line+=" --allow-run-as-root --oversubscribe --bind-to none --mca mpi_yield_when_idle 1"
  fi
  read -r -a launcher <<< "$mpiexec_line"
  launcher+=(-n "$ranks")
fi
real_scope=(--data-dir "$work/data")
if [[ ${NO_DATA_DIR:-0} == 1 ]]; then
  real_scope=()
fi

"$python" "$program" make "$work/data"
settle "$work/data"
profile_traced real "${real_scope[@]}" -- "$python" "$program" run "$work/data"

if [[ -z $config ]]; then
  "$dlio_run" fit "$work/real" -o "$work/fit.yaml"
  config=$work/fit.yaml
  if ((ranks > 1)) && ! grep -q "^# traced with $ranks ranks" "$config"; then
    grep -n '^# traced with' "$config" >&2 || true
    echo "$0: fit did not find the $ranks ranks the program ran as" >&2
    exit 1
  fi
  if [[ -n ${EXPECT_CLIENT_COSTS:-} ]]; then
    # An inferred key is written uncommented; one left at dlio's default (none) is commented out.
    fitted=$(sed -n 's/^ *client_costs: *\([a-z]*\).*/\1/p' "$config")
    if [[ ${fitted:-none} != "$EXPECT_CLIENT_COSTS" ]]; then
      grep -n 'client_costs' "$config" >&2 || true
      echo "$0: fit chose reader.client_costs ${fitted:-none}, expected $EXPECT_CLIENT_COSTS" >&2
      exit 1
    fi
  fi
  if [[ -n ${EXPECT_FIT:-} ]]; then
    IFS='|' read -ra expected <<<"$EXPECT_FIT"
    for text in "${expected[@]}"; do
      if ! grep -qF -- "$text" "$config"; then
        echo "$0: fit.yaml has no line holding '$text'" >&2
        exit 1
      fi
    done
  fi
  if [[ ${FIT_ONLY:-0} == 1 ]]; then
    echo "$config"
    exit 0
  fi
fi

# The emulation's own dataset (generation is not traced), then the traced training run.
common=(--config "$config" --set "dataset.data_folder=$work/emu-data"
        --set "checkpoint.checkpoint_folder=$work/emu-data/checkpoints" --quiet)
if [[ -n ${CLIENT_COSTS:-} ]]; then
  common+=(--set "reader.client_costs=$CLIENT_COSTS")
fi
"$dlio_run" "${common[@]}" --generate --no-train -o "$work/emu-gen" > "$work/emu-gen.log" 2>&1 || {
  cat "$work/emu-gen.log" >&2
  exit 1
}
settle "$work/emu-data"
profile_traced emu --data-dir "$work/emu-data" -- \
  "$dlio_run" "${common[@]}" --no-generate -o "$work/emu-out"
"$dlio_run" compare --json "$work/real" "$work/emu" > "$work/compare.json"
checkpoint_names=${CHECKPOINT_NAMES:-$(sed -n "s/^CHECKPOINT_NAMES = '\([^']*\)'.*/\1/p" "$program" | head -n 1)}
if [[ -n $checkpoint_names ]]; then
  real_names=$(ls -A "$work/data/$checkpoint_names" | grep -v '^\.dlio' | sort)
  emu_names=$(ls -A "$work/emu-data/checkpoints" | grep -v '^\.dlio' | sort)
  if [[ $real_names != "$emu_names" ]]; then
    diff <(echo "$real_names") <(echo "$emu_names") >&2 || true
    echo "$0: the emulation's checkpoint names (>) are not the program's (<)" >&2
    exit 1
  fi
  echo "checkpoint names: $(echo "$real_names" | wc -l) the same as the program's"
fi
self_json=
if [[ ${SELF_COMPARE:-0} == 1 ]]; then
  settle "$work/data"
  profile_traced real2 "${real_scope[@]}" -- "$python" "$program" run "$work/data"
  "$dlio_run" compare --json "$work/real" "$work/real2" > "$work/self.json"
  self_json=$work/self.json
fi
"$python" - "$work/compare.json" "${MIN_SIMILARITY:-}" "${MAX_KS:-}" "$self_json" \
  "${NO_DATA_DIR:-0}" "${HOGS:-0}" "$ranks" "${MAX_COUNT_DIFF:-}" "${UNTIMED_SIMILARITY:-0}" <<'PY'
import json, math, sys
c = json.load(open(sys.argv[1]))
min_similarity, max_ks = sys.argv[2], sys.argv[3]
f = c["features"]
line = {"similarity": c["similarity"], "ks_request_size": c["ks"]["request_size"]["d"],
        "ks_gap": c["ks"]["inter_request_gap_us"]["d"], "reads_real": c["a"]["reads"],
        "reads_emulated": c["b"]["reads"], "most_different": c["most_different"][:3],
        "writes_real": c["a"]["writes"], "writes_emulated": c["b"]["writes"],
        "bytes_read_real": f["bytes_read"]["a"], "bytes_read_emulated": f["bytes_read"]["b"],
        "bytes_written_real": f["bytes_written"]["a"],
        "bytes_written_emulated": f["bytes_written"]["b"],
        "data_dir": sys.argv[5] != "1", "hogs": int(sys.argv[6] or 0),
        "ranks": int(sys.argv[7])}
if sys.argv[4]:
    own = json.load(open(sys.argv[4]))
    line["self_similarity"] = own["similarity"]
    line["self_most_different"] = own["most_different"][:3]
similarity, which = c["similarity"], "similarity"
if sys.argv[9] == "1":
    # compare's cosine over the normalized features, the write features only when it scored them.
    timing = ("io_time_s", "bandwidth_per_op")
    writes = ("writes", "bytes_written", "write_size_mean", "write_size_median", "files_written")
    keys = [k for k in f if k not in timing and (c["writes_scored"] or k not in writes)]
    ab = sum(f[k]["norm_a"] * f[k]["norm_b"] for k in keys)
    norms = math.sqrt(sum(f[k]["norm_a"] ** 2 for k in keys) * sum(f[k]["norm_b"] ** 2 for k in keys))
    similarity, which = (ab / norms if norms else 1.0), "untimed similarity"
    line["untimed_similarity"] = similarity
print(json.dumps(line))
if min_similarity and similarity < float(min_similarity):
    sys.exit("%s %.4f is below %s" % (which, similarity, min_similarity))
if max_ks and c["ks"]["request_size"]["d"] >= float(max_ks):
    sys.exit("request-size KS distance %.4f is not below %s" % (c["ks"]["request_size"]["d"], max_ks))
max_count_diff = sys.argv[8]
if max_count_diff:
    for what in ("reads", "writes", "bytes_read", "bytes_written"):
        real, emulated = line[what + "_real"], line[what + "_emulated"]
        if abs(emulated - real) > float(max_count_diff) * real:
            sys.exit("%s: %d emulated, %d real: more than %s apart" %
                     (what, emulated, real, max_count_diff))
PY
