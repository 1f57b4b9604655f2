#!/usr/bin/env bash
# Dlio issue 26's "fit gives the same workload for the same program at load 0 and at load 4":
# every real program of tests/fidelity/programs profiled on a quiet host and again beside HOGS CPU
# hogs (tests/fidelity/closed_loop.sh with FIT_ONLY=1: profile, then `dlio-run fit`; the MPI
# programs under mpiexec, as closed_loop.sh runs them), the two fitted workloads compared key by
# key (benchmarks/fit_yaml_diff.py). Keys that are timing by nature are left out:
# train.computation_time (its mean and its stdev), the time a step computes, which a loaded host
# stretches; reader.fresh_page_share (a share of page faults, counts not times) agrees within
# 0.05. Prints a Markdown table, one row per program: the keys that differ, each as
# "key: quiet value -> loaded value" (values cut at 60 characters), or "same"; then how many
# programs fit the same and the load average. Run it alone: the quiet runs must be quiet.
#
#   benchmarks/fit_load.sh [BUILD_DIR] [WORKDIR]
#
# Environment knobs (defaults in brackets): PROGRAMS [every program in tests/fidelity/programs
# with a __main__ block], HOGS [4], NO_DATA_DIR [0; 1: profile without --data-dir, fit finds the
# dataset in the whole trace], PYTHON [/usr/bin/python3]. Each run's folders stay under
# WORKDIR [/tmp/dlio-fit-load]/<program>-quiet and <program>-hogs<N> (real/, fit.yaml), its
# stderr beside them in <folder>.err.
set -euo pipefail

BUILD="${1:-build}"
WORK="${2:-/tmp/dlio-fit-load}"
PYTHON="${PYTHON:-/usr/bin/python3}"
HOGS="${HOGS:-4}"
SRC="$(cd "$(dirname "$0")/.." && pwd)"
PROGRAM_DIR="$SRC/tests/fidelity/programs"
IGNORED_KEYS=(train.computation_time)
# shellcheck source=lib_bench.sh
. "$(dirname "$0")/lib_bench.sh"
bench_fidelity_tools "$BUILD"
PROGRAMS="${PROGRAMS:-$(bench_corpus_programs "$PROGRAM_DIR")}"

# fit_beside PROGRAM MODULES HOGS FOLDER: PROGRAM profiled beside HOGS hogs and fitted into
# WORK/FOLDER; exit status closed_loop.sh's (77: a module is missing).
fit_beside() {
  NO_DATA_DIR=${NO_DATA_DIR:-0} HOGS=$3 FIT_ONLY=1 REQUIRE_MODULES="$2" REPLACE_WORKDIR=1 \
    DLIO_PRELOAD_LIB="$PRELOAD" bash "$SRC/tests/fidelity/closed_loop.sh" "$DLIO_RUN" "$PYTHON" \
    "$PROGRAM_DIR/$1.py" "$WORK/$4" > /dev/null 2> "$WORK/$4.err"
}

mkdir -p "$WORK"
echo "| program | keys that differ (quiet value -> value beside $HOGS hogs) |"
echo "|---|---|"
rows=0 same=0
for program in $PROGRAMS; do
  modules="$(bench_program_modules "$PYTHON" "$PROGRAM_DIR" "$program")"
  rc=0
  fit_beside "$program" "$modules" 0 "$program-quiet" || rc=$?
  ((rc == 0)) && { fit_beside "$program" "$modules" "$HOGS" "$program-hogs$HOGS" || rc=$?; }
  if ((rc == 77)); then
    echo "| $program | skipped: $(tail -n1 "$WORK/$program-quiet.err" | sed 's/.*skipped: //') |"
    continue
  fi
  rows=$((rows + 1))
  if ((rc != 0)); then
    echo "| $program | failed (exit $rc): see $WORK/$program-*.err |"
    continue
  fi
  diff=$("$PYTHON" "$SRC/benchmarks/fit_yaml_diff.py" "$WORK/$program-quiet/fit.yaml" \
    "$WORK/$program-hogs$HOGS/fit.yaml" "${IGNORED_KEYS[@]}" |
    sed -E 's/: (.{60}).*( -> )/: \1...\2/; s/( -> .{60}).+$/\1.../' | tr '|' '/' |
    paste -sd';' - | sed 's/;/; /g')
  [[ -z $diff ]] && { same=$((same + 1)); diff=same; }
  echo "| $program | $diff |"
done
echo
echo "programs fitted the same quiet and beside $HOGS hogs: $same of $rows (ignoring" \
  "${IGNORED_KEYS[*]}; NO_DATA_DIR=${NO_DATA_DIR:-0}, PYTHON=$PYTHON)"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
