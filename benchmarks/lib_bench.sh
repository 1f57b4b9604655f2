# shellcheck shell=bash
# Helpers shared by the benchmark scripts (sourced, not run): a work folder that is removed only
# when the script made it, the page-cache warm-up, summary.json figures, fio over the same files,
# the load average, the fidelity scripts' dlio-run and preload library, and the Python DLIO
# (argonne-lcf/dlio_benchmark, ../shared/PYTHON_DLIO.md).
#
# A script sources it with  . "$(dirname "$0")/lib_bench.sh"  after `set -euo pipefail`.

# shellcheck disable=SC2034  # BENCH_PY and BENCH_DIR are for the scripts that source this
BENCH_PY=/usr/bin/python3  # Debian's python3: numpy, torch, psutil (the pyenv python3 lacks them)
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH_WORK=""
BENCH_WORK_OWNED=0

bench_die() {
  echo "$(basename "$0"): $*" >&2
  exit 2
}

# bench_setup_work [DIR]: BENCH_WORK = DIR (made if missing, never removed: data generated there is
# reused by the next run), or a fresh mktemp folder removed at exit unless KEEP=1.
bench_setup_work() {
  if [[ -n ${1:-} ]]; then
    BENCH_WORK=$1
    mkdir -p "$BENCH_WORK"
  else
    BENCH_WORK=$(mktemp -d "${TMPDIR:-/tmp}/dlio-bench.XXXXXX")
    BENCH_WORK_OWNED=1
  fi
  trap bench_cleanup EXIT
  trap 'exit 130' INT TERM
}

bench_cleanup() {
  local rc=$?
  # Children still running (a run interrupted by a signal): end them, by their ids only.
  local pids
  pids=$(jobs -p || true)
  if [[ -n $pids ]]; then
    # shellcheck disable=SC2086
    kill $pids 2>/dev/null || true
    wait 2>/dev/null || true
  fi
  if [[ $BENCH_WORK_OWNED == 1 && ${KEEP:-0} != 1 && -d $BENCH_WORK ]]; then
    rm -rf -- "$BENCH_WORK"
  elif [[ $BENCH_WORK_OWNED == 1 ]]; then
    echo "kept $BENCH_WORK" >&2
  fi
  return "$rc"
}

# bench_warm PATH...: read every file under the paths into the page cache (this VM pages out page
# cache left idle for about a minute, so every tool's run is preceded by one).
bench_warm() {
  find "$@" -type f -print0 | xargs -0 cat >/dev/null
}

bench_load() { cut -d' ' -f1 /proc/loadavg; }

# bench_fidelity_tools BUILD_DIR: DLIO_RUN and PRELOAD (libdlio_preload.so) of that build, for the
# scripts that run tests/fidelity/closed_loop.sh; exits 2 when either is missing.
bench_fidelity_tools() {
  DLIO_RUN="$1/apps/dlio-run/dlio-run"
  PRELOAD="$(find "$1" -name 'libdlio_preload.so' -print -quit 2> /dev/null || true)"
  [[ -x $DLIO_RUN ]] || bench_die "no $DLIO_RUN (build first)"
  [[ -n $PRELOAD ]] || bench_die "no libdlio_preload.so under $1"
}

# bench_wait_quiet: when MAX_LOAD is set, wait (at most WAIT_SECONDS [300]) until the 1-minute load
# average is below it. Prints the load average either way.
bench_wait_quiet() {
  local waited=0
  if [[ -n ${MAX_LOAD:-} ]]; then
    until awk -v l="$(bench_load)" -v m="$MAX_LOAD" 'BEGIN { exit !(l < m) }'; do
      ((waited += 10))
      ((waited > ${WAIT_SECONDS:-300})) && break
      sleep 10
    done
  fi
  echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
}

# bench_metric SUMMARY_JSON KEY [FORMAT]: summary.json's metric.KEY ("" when absent).
bench_metric() {
  "$BENCH_PY" - "$1" "$2" "${3:-%.2f}" <<'PY'
import json, sys
path, key, fmt = sys.argv[1:]
try:
    v = json.load(open(path))["metric"].get(key)
except (OSError, ValueError, KeyError):
    v = None
print("" if v is None else fmt % v)
PY
}

# bench_fio_gib THREADS XFER LOOPS FILE...: fio's buffered read bandwidth (GiB/s) over the files
# in one invocation: THREADS jobs, each over its share of the files as one colon-separated list
# (fio reads a job's files round-robin, whole, headers included); --invalidate=0 keeps the page
# cache fio would otherwise drop. Files of one folder are named relative to it (--directory): fio
# refuses an option value longer than 4096 characters.
bench_fio_gib() {
  local threads=$1 xfer=$2 loops=$3
  shift 3
  local paths=("$@") args=() out t i list dir
  dir=$(dirname "${paths[0]}")
  for ((i = 0; i < ${#paths[@]}; ++i)); do
    [[ $(dirname "${paths[$i]}") == "$dir" ]] || { dir=""; break; }
  done
  if [[ -n $dir ]]; then
    args+=(--directory="$dir")
    for ((i = 0; i < ${#paths[@]}; ++i)); do paths[i]=$(basename "${paths[$i]}"); done
  fi
  for ((t = 0; t < threads; ++t)); do
    list=""
    for ((i = t; i < ${#paths[@]}; i += threads)); do list+="${list:+:}${paths[$i]}"; done
    ((${#list} <= 4096)) || { echo "bench_fio_gib: a job's file list exceeds fio's 4096 characters" >&2; return 1; }
    args+=(--name="r$t" --filename="$list")
  done
  out=$(fio --ioengine=psync --rw=read --bs="$xfer" --invalidate=0 --loops="$loops" \
    --group_reporting --output-format=json "${args[@]}")
  echo "$out" | "$BENCH_PY" -c 'import json,sys; t=sys.stdin.read(); d=json.loads(t[t.index("{"):]); print("%.3f" % (d["jobs"][0]["read"]["bw_bytes"] / 2**30))'
}

# bench_pydlio_check: 0 when $PYDLIO holds an installed Python DLIO (PYTHON_DLIO.md's layout) that
# imports; else prints why not (the caller skips its rows).
bench_pydlio_check() {
  if [[ -z ${PYDLIO:-} ]]; then
    echo "PYDLIO is not set: Python DLIO rows skipped (install it as ../shared/PYTHON_DLIO.md says, then PYDLIO=/its/folder)"
    return 1
  fi
  if ! PYTHONPATH=$(bench_pydlio_path) "$BENCH_PY" -c "import dlio_benchmark.main, hydra" 2>/dev/null; then
    echo "PYDLIO=$PYDLIO: dlio_benchmark or hydra does not import with $BENCH_PY: Python DLIO rows skipped"
    return 1
  fi
}

bench_pydlio_path() {
  echo "$PYDLIO/dlio_benchmark-src:$PYDLIO/hydra-src:$PYDLIO/pydftracer-src/python"
}

# bench_pydlio_run CONF_DIR WORKLOAD OUT NP [OVERRIDE...]: one Python DLIO run of
# CONF_DIR/workload/WORKLOAD.yaml, NP ranks (mpirun --bind-to none when NP > 1: Open MPI binds
# ranks to one core at np <= 2 and DLIO's forked workers would share it), output in OUT (log in
# OUT.log). Hydra writes hydra_log/ into the current folder, so it runs in OUT's parent. A command
# prefix in the array BENCH_PYDLIO_WRAP (e.g. benchmarks/tree_rss.py OUT.json --) wraps the run.
BENCH_PYDLIO_WRAP=()
bench_pydlio_run() {
  local conf=$1 workload=$2 out=$3 np=$4
  shift 4
  local launch=()
  if ((np > 1)); then
    launch=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$np"
      -x PYTHONPATH -x DFTRACER_ENABLE)
  fi
  mkdir -p "$(dirname "$out")"
  (cd "$(dirname "$out")" &&
    PYTHONPATH=$(bench_pydlio_path) DFTRACER_ENABLE=0 "${BENCH_PYDLIO_WRAP[@]}" "${launch[@]}" "$BENCH_PY" -m dlio_benchmark.main \
      --config-dir "$conf" "workload=$workload" "++workload.output.folder=$out" "$@") \
    >"$out.log" 2>&1
}

# bench_corpus_programs PROGRAM_DIR: the corpus's programs (every .py there with a __main__ block),
# by name without .py, space-separated.
bench_corpus_programs() {
  grep -l '__main__' "$1"/*.py | xargs -n1 basename | sed 's/\.py$//' | tr '\n' ' '
}

# bench_program_modules PYTHON PROGRAM_DIR PROGRAM: the modules PROGRAM imports (its own and its
# sibling modules' imports, at any depth) that are neither the standard library's nor a sibling
# file: what closed_loop.sh's REQUIRE_MODULES checks.
bench_program_modules() {
  "$1" - "$2" "$3" <<'PY'
import ast, os, sys
folder, seen, found = sys.argv[1], set(), set()
def walk(name):
    if name in seen:
        return
    seen.add(name)
    for node in ast.walk(ast.parse(open(os.path.join(folder, name + ".py")).read())):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
        for top in (n.split(".")[0] for n in names):
            if os.path.exists(os.path.join(folder, top + ".py")):
                walk(top)
            elif top not in sys.stdlib_module_names:
                found.add(top)
walk(sys.argv[2])
print(" ".join(sorted(found)))
PY
}
