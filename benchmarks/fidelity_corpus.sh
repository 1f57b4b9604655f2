#!/usr/bin/env bash
# The targets of dlio issue 26 over the whole corpus: every real program of tests/fidelity/programs
# through the closed loop (tests/fidelity/closed_loop.sh) under four conditions, its profile taken
# with --data-dir and without (NO_DATA_DIR=1: fit must find the dataset in the whole trace), on a
# quiet host and beside CPU hogs (HOGS: busy loops beside the real program's and the emulation's
# traced runs). Prints a Markdown table, one row per program and condition: similarity, request-size
# KS distance, reads, writes and bytes written of the real run and the emulation, and whether the
# row meets the targets (similarity >= 0.97, KS < 0.1, reads and writes within 5%, bytes written
# within 5%; a count of 0 must be 0). A loop that fails (fit, generation or emulation) is a row
# saying so; a program whose Python modules are missing is a row saying which. A program with a
# `CHECKPOINT_NAMES = 'DIR'` line (lightning_steps_ckpt) also has its checkpoint file names checked
# (closed_loop.sh): a loop whose emulated checkpoint folder does not hold exactly the program's
# names fails. Ends with how many
# rows meet every target and the load average. Run it alone: the loops are timed.
#
#   benchmarks/fidelity_corpus.sh [BUILD_DIR] [WORKDIR]
#
# Environment knobs (defaults in brackets): PROGRAMS [every program in tests/fidelity/programs,
# that is every .py there with a __main__ block], HOGS [2], PYTHON [/usr/bin/python3],
# SETTLE_CACHE [0; 1 settles each dataset's page cache before a traced run: closed_loop.sh]. Each
# loop's folders stay under WORKDIR [/tmp/dlio-fidelity-corpus]/<program>-<condition>, its stderr
# beside them in <program>-<condition>.err.
set -euo pipefail

BUILD="${1:-build}"
WORK="${2:-/tmp/dlio-fidelity-corpus}"
PYTHON="${PYTHON:-/usr/bin/python3}"
HOGS="${HOGS:-2}"
SRC="$(cd "$(dirname "$0")/.." && pwd)"
PROGRAM_DIR="$SRC/tests/fidelity/programs"
# shellcheck source=lib_bench.sh
. "$(dirname "$0")/lib_bench.sh"
bench_fidelity_tools "$BUILD"
PROGRAMS="${PROGRAMS:-$(bench_corpus_programs "$PROGRAM_DIR")}"

# One table row from closed_loop.sh's last line (its JSON): the figures and the targets' verdict.
row_of() {
  "$PYTHON" -c 'import json, sys
c = json.loads(sys.stdin.read().strip().splitlines()[-1])
def near(real, emulated):
    return emulated == real if real == 0 else abs(emulated - real) <= 0.05 * real
def pair(key):
    real, emulated = c[key + "_real"], c[key + "_emulated"]
    return "%d / %d %s" % (real, emulated, "yes" if near(real, emulated) else "**no**"), near(real, emulated)
missed = []
if c["similarity"] < 0.97: missed.append("similarity")
if c["ks_request_size"] >= 0.1: missed.append("KS")
cells = []
for key, name in (("reads", "reads"), ("writes", "writes"), ("bytes_written", "bytes written")):
    text, ok = pair(key)
    cells.append(text)
    if not ok: missed.append(name)
verdict = "met" if not missed else "not met: " + ", ".join(missed)
print(" | ".join(["%.3f" % c["similarity"], "%.3f" % c["ks_request_size"]] + cells +
                 [verdict, ", ".join(c["most_different"])]))'
}

mkdir -p "$WORK"
echo "| program | condition | similarity | KS request size | reads real / emulated, within 5% | writes real / emulated, within 5% | bytes written real / emulated, within 5% | targets | most different |"
echo "|---|---|---|---|---|---|---|---|---|"
rows=0 met=0 skipped=0
for program in $PROGRAMS; do
  if [[ ! -f $PROGRAM_DIR/$program.py ]]; then
    echo "| $program | | no $PROGRAM_DIR/$program.py | | | | | | |"
    continue
  fi
  modules="$(bench_program_modules "$PYTHON" "$PROGRAM_DIR" "$program")"
  for condition in data-dir no-data-dir data-dir+hogs no-data-dir+hogs; do
    no_data_dir=0 hogs=0
    [[ $condition == no-data-dir* ]] && no_data_dir=1
    [[ $condition == *+hogs ]] && hogs=$HOGS
    label="${condition/+hogs/, $HOGS hogs}"
    out="$WORK/$program-$condition"
    rc=0
    line=$(NO_DATA_DIR=$no_data_dir HOGS=$hogs REQUIRE_MODULES="$modules" REPLACE_WORKDIR=1 \
      DLIO_PRELOAD_LIB="$PRELOAD" bash "$SRC/tests/fidelity/closed_loop.sh" "$DLIO_RUN" "$PYTHON" \
      "$PROGRAM_DIR/$program.py" "$out" 2> "$out.err") || rc=$?
    if ((rc == 77)); then
      skipped=$((skipped + 1))
      echo "| $program | $label | skipped: $(tail -n1 "$out.err" | sed 's/.*skipped: //') | | | | | | |"
      continue
    fi
    rows=$((rows + 1))
    if ((rc != 0)); then
      echo "| $program | $label | failed (exit $rc): $(tail -n1 "$out.err" | tr '|' '/') | | | | | | |"
      continue
    fi
    row="$(row_of <<< "$line")"
    [[ $row == *" | met | "* ]] && met=$((met + 1))
    echo "| $program | $label | $row |"
  done
done
echo
echo "rows meeting every target: $met of $rows loops run, $skipped skipped (HOGS=$HOGS, PYTHON=$PYTHON)"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
