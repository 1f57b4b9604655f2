#!/usr/bin/env bash
# How faithful the closed loops can be on this machine: each real program of tests/fidelity is
# profiled twice and emulated once per round (tests/fidelity/closed_loop.sh with SELF_COMPARE=1),
# and the emulation's similarity to the first run is printed beside the second run's (the
# program's own run-to-run similarity, the ceiling). The timing features (io_time_s,
# bandwidth_per_op) move with the machine; where the program does not reach a similarity against
# itself, the emulation cannot be asked to. Prints a Markdown table, one row per program and round.
#
#   benchmarks/fidelity_ceiling.sh [BUILD_DIR] [WORKDIR]
#
# Environment knobs (defaults in brackets): PROGRAMS [every program the fidelity tests run],
# ROUNDS [3], PYTHON [/usr/bin/python3], CLIENT_COSTS [fit's choice; none or framework: the
# emulation runs with that reader.client_costs instead]. Each round's folders stay under WORKDIR
# [/tmp/dlio-fidelity-ceiling]/<program>-<round>.
set -euo pipefail

BUILD="${1:-build}"
WORK="${2:-/tmp/dlio-fidelity-ceiling}"
PYTHON="${PYTHON:-/usr/bin/python3}"
ROUNDS="${ROUNDS:-3}"
PROGRAMS="${PROGRAMS:-torch_npz_loader torch_npz_augment torch_npz_large torch_save_ckpt pandas_csv tfrecord_stream h5py_crops}"
SRC="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=lib_bench.sh
. "$(dirname "$0")/lib_bench.sh"
bench_fidelity_tools "$BUILD"

# What closed_loop.sh prints last, as "similarity self_similarity ks most_different".
row_of() {
  "$PYTHON" -c 'import json, sys
c = json.loads(sys.stdin.read().strip().splitlines()[-1])
print("%.3f %.3f %.3f %s" % (c["similarity"], c["self_similarity"], c["ks_request_size"],
                              ",".join(c["most_different"])))'
}

mkdir -p "$WORK"
echo "reader.client_costs: ${CLIENT_COSTS:-as fitted}"
echo
echo "| program | round | emulation vs real | real vs real | emulation - real's own | KS request size | most different (emulation) |"
echo "|---|---|---|---|---|---|---|"
for program in $PROGRAMS; do
  for round in $(seq 1 "$ROUNDS"); do
    out="$WORK/$program-$round"
    if ! line=$(SELF_COMPARE=1 REPLACE_WORKDIR=1 DLIO_PRELOAD_LIB="$PRELOAD" \
      bash "$SRC/tests/fidelity/closed_loop.sh" "$DLIO_RUN" "$PYTHON" \
      "$SRC/tests/fidelity/programs/$program.py" "$out" 2> "$WORK/$program-$round.err"); then
      echo "| $program | $round | failed: see $WORK/$program-$round.err | | | | |"
      continue
    fi
    read -r sim own ks diff <<< "$(row_of <<< "$line")"
    delta=$("$PYTHON" -c "print('%+.3f' % ($sim - $own))")
    echo "| $program | $round | $sim | $own | $delta | $ks | $diff |"
  done
done
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
