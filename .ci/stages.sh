# The stages of `./setup.sh test` (sourced by setup.sh, which sets BUILD_DIR and JOBS and has
# installed the packages). docs/testing.md says what each stage checks and what it costs.
#
#   run_test_stages [ctest args...]   runs $DLIO_TEST_STAGES in order, goes on after a failing
#                                     stage (DLIO_FAIL_FAST=1: stops), prints each stage's wall
#                                     and CPU time and fails if any stage failed.

ASAN_BUILD_DIR="${ASAN_BUILD_DIR:-${BUILD_DIR}-asan}"
TSAN_BUILD_DIR="${TSAN_BUILD_DIR:-${BUILD_DIR}-tsan}"
SANITIZER_CC="${SANITIZER_CC:-clang-14}"
SANITIZER_CXX="${SANITIZER_CXX:-clang++-14}"
FUZZ_SECONDS="${DLIO_FUZZ_SECONDS:-30}"
SANITIZER_DIR="$PWD/tests/sanitizers"

# Open MPI refuses root unless told; MPI tests run under mpiexec as separate ctest entries.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# format: every tracked C/C++ file as clang-format 14 would write it with the repo's .clang-format.
stage_format() {
  local fmt
  fmt="$(command -v clang-format-14 || true)"
  if [ -z "$fmt" ]; then
    echo "format: clang-format-14 is not installed" >&2
    return 1
  fi
  local files=()
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -d '' files < <(git ls-files -z -- '*.cc' '*.h' '*.c')
  else
    mapfile -d '' files < <(find apps benchmarks bindings examples libdlio tests \
      \( -name '*.cc' -o -name '*.h' -o -name '*.c' \) -print0 | sort -z)
  fi
  # Many files per clang-format run: starting one (loading its libraries) costs ~0.1 s, more than
  # formatting a file (one run per file took 55 s of CI, these 5-10 s). --dry-run prints
  # "FILE:LINE:COL: error: code should be clang-formatted" for each difference.
  local out differ=()
  out="$(printf '%s\0' "${files[@]}" | xargs -0 -n 128 "$fmt" --style=file --dry-run -Werror 2>&1)" ||
    true
  mapfile -t differ < <(sed -n \
    's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' <<<"$out" | sort -u)
  echo "format: ${#files[@]} files checked with $("$fmt" --version | head -1)"
  # Any other error (a file it cannot read, a bad .clang-format) fails the stage as well.
  local other
  other="$(grep -e 'error:' <<<"$out" | grep -v -e 'code should be clang-formatted' || true)"
  if [ -n "$other" ]; then
    echo "format: clang-format failed:"
    head -20 <<<"$other"
    return 1
  fi
  [ ${#differ[@]} -eq 0 ] && return 0
  echo "format: ${#differ[@]} files differ from .clang-format:"
  printf '  %s\n' "${differ[@]}"
  for f in "${differ[@]:0:3}"; do
    diff -u "$f" <("$fmt" --style=file "$f") --label "$f" --label "$f (formatted)" | head -40
  done
  echo "format: fix with: clang-format-14 -i --style=file <files>"
  return 1
}

# release: the README's build with every part on, warnings as errors, and the whole suite.
stage_release() {
  configure -DDLIO_BUILD_TESTS=ON -DDLIO_BUILD_BENCHMARKS=ON -DDLIO_BUILD_EXAMPLES=ON \
    -DDLIO_BUILD_BINDINGS=ON -DDLIO_WERROR=ON
  cmake --build "$BUILD_DIR" -j "$JOBS"
  ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" "$@"
}

# Sanitizer builds: clang, -O1 with line tables (readable stacks, assertions on).
configure_sanitized() {
  local dir="$1"
  shift
  cmake -S . -B "$dir" -DCMAKE_C_COMPILER="$SANITIZER_CC" -DCMAKE_CXX_COMPILER="$SANITIZER_CXX" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DDLIO_BUILD_TESTS=ON \
    -DDLIO_BUILD_BENCHMARKS=OFF -DDLIO_BUILD_EXAMPLES=OFF -DDLIO_WERROR=OFF "$@"
}

sanitizer_env() {
  local symbolizer=/usr/lib/llvm-14/bin/llvm-symbolizer
  [ -x "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH="$symbolizer"
  # Leaks are checked; Open MPI's and HDF5's own allocations at exit are suppressed by name.
  export ASAN_OPTIONS="detect_leaks=1:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1"
  export LSAN_OPTIONS="suppressions=$SANITIZER_DIR/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$SANITIZER_DIR/tsan.supp"
}

configure_asan() {
  configure_sanitized "$ASAN_BUILD_DIR" -DDLIO_SANITIZE=address,undefined -DDLIO_FUZZ=ON \
    -DDLIO_BUILD_BINDINGS=ON
}

# asan: AddressSanitizer + UndefinedBehaviorSanitizer (halting) over the whole suite. The same
# build carries libFuzzer's coverage and builds the fuzz targets for the fuzz stage.
stage_asan() {
  configure_asan
  cmake --build "$ASAN_BUILD_DIR" -j "$JOBS"
  sanitizer_env
  local rc=0
  ctest --test-dir "$ASAN_BUILD_DIR" --output-on-failure -j "$JOBS" -LE mpi "$@" || rc=$?
  # LeakSanitizer's tracer crashes (signal 11, at the same address every time) while it stops
  # Open MPI's progress threads at exit of some multi-rank tests, failing tests that passed. MPI
  # tests therefore run with AddressSanitizer and UBSan but without the exit-time leak check; the
  # same code paths run leak-checked in the serial tests.
  ASAN_OPTIONS="${ASAN_OPTIONS/detect_leaks=1/detect_leaks=0}" \
    ctest --test-dir "$ASAN_BUILD_DIR" --output-on-failure -j "$JOBS" -L mpi "$@" || rc=$?
  return "$rc"
}

# tsan: ThreadSanitizer over the tests of the threaded modules (pipeline, storage, serial comm).
TSAN_TARGETS=(pipeline_test storage_test comm_test)
stage_tsan() {
  # File by file (no unity build): each of those modules' files then compiles with only the
  # headers it includes itself.
  configure_sanitized "$TSAN_BUILD_DIR" -DDLIO_SANITIZE=thread -DDLIO_WITH_MPI=OFF \
    -DDLIO_WITH_HDF5=OFF -DDLIO_BUILD_BINDINGS=OFF -DDLIO_UNITY_BUILD=OFF
  cmake --build "$TSAN_BUILD_DIR" -j "$JOBS" --target "${TSAN_TARGETS[@]}"
  sanitizer_env
  local regex
  regex="^($(IFS='|'; echo "${TSAN_TARGETS[*]}")):"
  ctest --test-dir "$TSAN_BUILD_DIR" --output-on-failure -j "$JOBS" -R "$regex"
}

# fuzz: each libFuzzer target for FUZZ_SECONDS from its seed corpus and regression inputs,
# JOBS targets at a time. The seed is fixed (DLIO_FUZZ_SEED, default 1) so a run is repeatable.
stage_fuzz() {
  configure_asan >/dev/null
  local targets
  targets="$("$ASAN_BUILD_DIR/tests/dlio_fuzz_replay" --list 2>/dev/null | sed 's/^targets: //')" ||
    true
  if [ -z "$targets" ]; then
    cmake --build "$ASAN_BUILD_DIR" -j "$JOBS" --target dlio_fuzz_replay
    targets="$("$ASAN_BUILD_DIR/tests/dlio_fuzz_replay" --list | sed 's/^targets: //')"
  fi
  local bins=()
  for t in $targets; do bins+=("dlio_fuzz_$t"); done
  cmake --build "$ASAN_BUILD_DIR" -j "$JOBS" --target "${bins[@]}"
  sanitizer_env
  local seed="${DLIO_FUZZ_SEED:-1}"
  [ "$seed" = random ] && seed=0  # libFuzzer picks one
  local out="$ASAN_BUILD_DIR/fuzz"
  rm -rf "$out"
  mkdir -p "$out"
  local running=0
  for t in $targets; do
    if [ "$running" -ge "$JOBS" ]; then
      wait -n || true
      running=$((running - 1))
    fi
    fuzz_target "$t" "$seed" "$out" &
    running=$((running + 1))
  done
  wait || true
  if ! fuzz_report "$out" $targets; then
    # An escape hatch for the lead, never the default: findings are printed, the stage passes.
    [ "${DLIO_FUZZ_ADVISORY:-0}" = 1 ] && echo "fuzz: DLIO_FUZZ_ADVISORY=1: findings do not fail" && return 0
    return 1
  fi
}

# fuzz_target NAME SEED OUT_DIR: one libFuzzer run; its log and exit code go to OUT_DIR.
fuzz_target() {
  local t="$1" seed="$2" out="$3"
  local src="tests/fuzz"
  local dirs=("$out/$t.corpus" "$src/corpus/$t")
  [ -d "$src/regressions/$t" ] && dirs+=("$src/regressions/$t")
  mkdir -p "$out/$t.corpus" "$out/$t.artifacts"
  local rc=0
  "$ASAN_BUILD_DIR/tests/dlio_fuzz_$t" -seed="$seed" -max_total_time="$FUZZ_SECONDS" \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$out/$t.artifacts/" "${dirs[@]}" >"$out/$t.log" 2>&1 || rc=$?
  echo "$rc" >"$out/$t.rc"
}

# fuzz_report OUT_DIR TARGET...: executions per second per target; failures with their input.
fuzz_report() {
  local out="$1"
  shift
  local failed=0
  printf 'fuzz: %-15s %10s %9s %7s %s\n' target runs "exec/s" corpus result
  for t in "$@"; do
    local rc runs eps corpus
    rc="$(cat "$out/$t.rc" 2>/dev/null || echo 1)"
    runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t.log" | tail -1)"
    eps="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$out/$t.log" | tail -1)"
    corpus="$(find "$out/$t.corpus" -type f | wc -l)"
    printf 'fuzz: %-15s %10s %9s %7s %s\n' "$t" "${runs:-?}" "${eps:-?}" "$corpus" \
      "$([ "$rc" = 0 ] && echo ok || echo "FAILED (exit $rc)")"
    [ "$rc" = 0 ] && continue
    if finding_in_libhdf5 "$out/$t.log"; then
      echo "---- fuzz $t: stopped on a crash inside libhdf5 (a libhdf5 defect, not failing):"
      grep -m1 -E 'ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)' "$out/$t.log"
      grep -m1 -E '^ +#[0-9]+ .*libhdf5' "$out/$t.log"
      continue
    fi
    failed=1
    echo "---- fuzz $t: end of its log ($out/$t.log)"
    tail -n 60 "$out/$t.log"
    for a in "$out/$t.artifacts"/*; do
      [ -f "$a" ] || continue
      echo "---- fuzz $t: input $(basename "$a") ($(stat -c %s "$a") bytes), base64; save it as"
      echo "     tests/fuzz/regressions/$t/<name> (base64 -d) and replay: dlio_fuzz_replay $t <file>"
      head -c 65536 "$a" | base64 -w 100
    done
  done
  return "$failed"
}

# finding_in_libhdf5 LOG: true when the first sanitizer report in LOG crashed inside libhdf5: the
# first frame of its stack that is not the C library, the sanitizer runtime, libFuzzer or the
# allocator lies in libhdf5*.so. libhdf5 1.10 trusts on-disk sizes and offsets (h5dump crashes
# on the same files); dlio's own frames above it do not make the crash ours. Saved such inputs
# live in tests/fuzz/crashes/hdf5/.
finding_in_libhdf5() {
  awk '
    /ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer|UndefinedBehaviorSanitizer)/ { seen = 1; next }
    seen && /^ +#[0-9]+ / {
      if ($0 ~ /libc\.so|\/sysdeps\/|__interceptor_|__asan|__sanitizer|__lsan|fuzzer::|libclang_rt| in (malloc|calloc|realloc|free|operator new)/) next
      # An interceptor (strdup, memmove, ...) of the runtime linked into the fuzz binary: no
      # source file, only an offset in the binary. dlio frames always carry file:line.
      if ($0 ~ / in [^ ]+ \([^ ]*\/dlio_fuzz_[a-z0-9_]+\+0x[0-9a-f]+\)/) next
      exit ($0 ~ /libhdf5[^ ]*\.so/ ? 0 : 1)
    }
    END { if (!seen) exit 1 }
  ' "$1"
}

# Sets CPU_SECONDS to the CPU time (user + sys) this shell's finished children used so far
# (`times` must run in this shell, not in a command substitution's subshell).
CPU_TIMES_FILE="$(mktemp)"
STAGE_LOG_DIR="$(mktemp -d)"  # each stage's output (run_test_stages, stage_failures)
trap 'rm -f "$CPU_TIMES_FILE"; rm -rf "$STAGE_LOG_DIR"' EXIT
children_cpu_seconds() {
  times >"$CPU_TIMES_FILE"
  CPU_SECONDS="$(tail -1 "$CPU_TIMES_FILE" | awk '{
    t = 0
    for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); t += p[1] * 60 + p[2] }
    printf "%.1f", t }')"
}

# About how many GiB a stage's build tree takes from scratch (measured on a fresh clone: release
# ~1.5 with the tests' data, asan ~8.2, one 35-80 MB executable per test, tsan ~0.2, fuzz's corpora
# under asan's tree), plus ccache's objects.
declare -A STAGE_DISK_GIB=([format]=0 [release]=3 [asan]=10 [tsan]=1 [fuzz]=1)

# Warns (does not fail) when the file system of the build trees has less free space than the stage
# usually takes: a compiler or linker that runs out of it dies with "No space left on device" or a
# bus error (a mapped output file), which this names beforehand.
check_disk_for_stage() {
  local need="${STAGE_DISK_GIB[$1]:-0}" free_kib
  [ "$need" -gt 0 ] || return 0
  free_kib="$(df -Pk . 2>/dev/null | awk 'NR == 2 { print $4 }')"
  [ -n "$free_kib" ] || return 0
  if [ "$free_kib" -lt $((need * 1024 * 1024)) ]; then
    echo "setup: warning: $(awk -v k="$free_kib" 'BEGIN { printf "%.1f", k / 1048576 }') GiB free" \
      "on $(df -P . | awk 'NR == 2 { print $6 }') before stage $1, which usually takes about" \
      "$need GiB (build trees under $PWD): it may fail for want of space" >&2
  fi
}

# stage_failures LOG: what a failed stage's output says failed, at most 40 lines, each indented
# under the stage's line of the summary: ctest's "The following tests FAILED" entries (every
# ctest run of the stage), the fuzz targets that failed, the files that differ from .clang-format,
# then the first 4 of Catch2's failed assertions (file:line, the assertion and its expansion) and
# the first 4 sanitizer reports' headlines.
stage_failures() {
  awk '
    /^The following tests FAILED:/ { listing = 1; next }
    listing && /^[ \t]+[0-9]+ - / { sub(/^[ \t]+/, ""); print "    failed: " $0; next }
    { listing = 0 }
    /^fuzz: [a-z0-9_]+ .*FAILED/ { print "    failed: " $0 }
    /^format: [0-9]+ files differ/ { print "    " $0 }
    # Catch2: "/path/x_test.cc:123: FAILED:", the assertion, "with expansion:", its values.
    /^[^ ].*:[0-9]+: FAILED:$/ {
      if (++asserts <= 4) { line = $0; sub(/^.*\//, "", line); detail[asserts] = "    at " line; take = 3 }
      next
    }
    take > 0 && asserts <= 4 {
      if ($0 ~ /^(with message|[-.=]{10})/) { take = 0; next }
      t = $0; sub(/^[ \t]+/, "", t); if (t != "") detail[asserts] = detail[asserts] " " t; take--
    }
    /(ERROR: [A-Za-z]+Sanitizer|WARNING: ThreadSanitizer|: runtime error: )/ && ++reports <= 4 {
      line = $0; sub(/^==[0-9]+==/, "", line); report[reports] = "    " line
    }
    END {
      for (i = 1; i <= asserts && i <= 4; i++) print detail[i]
      for (i = 1; i <= reports && i <= 4; i++) print report[i]
    }
  ' "$1" | head -n 40
}

run_test_stages() {
  local stages="${DLIO_TEST_STAGES:-format release asan tsan fuzz}"
  [ "${DLIO_QUICK:-0}" = 1 ] && stages="format release"
  stages="${stages//,/ }"
  local s
  for s in $stages; do
    if ! declare -F "stage_$s" >/dev/null; then
      echo "setup: unknown stage '$s' (stages: format release asan tsan fuzz)" >&2
      return 2
    fi
  done
  local passed=0 failed=0 report=()
  for s in $stages; do
    echo "==== setup: stage $s"
    check_disk_for_stage "$s"
    local wall0 cpu0 rc
    wall0="$(date +%s)"
    children_cpu_seconds
    cpu0="$CPU_SECONDS"
    # The stage's output also goes to a file, from which the summary names what failed: a CI
    # log is often read from its end, where a failed test of an early stage is long gone.
    local stage_log="$STAGE_LOG_DIR/$s.log"
    set +e
    (
      set -e
      "stage_$s" "$@"
    ) 2>&1 | tee "$stage_log"
    rc=${PIPESTATUS[0]}
    set -e
    local wall=$(($(date +%s) - wall0)) cpu
    children_cpu_seconds
    cpu="$(awk -v a="$CPU_SECONDS" -v b="$cpu0" 'BEGIN { printf "%.0f", a - b }')"
    report+=("$(printf '%-8s %-6s %6s s wall %7s s CPU (user+sys)' "$s" \
      "$([ $rc = 0 ] && echo ok || echo FAILED)" "$wall" "$cpu")")
    if [ $rc = 0 ]; then
      passed=$((passed + 1))
    else
      mapfile -t -O "${#report[@]}" report < <(stage_failures "$stage_log")
      failed=$((failed + 1))
      [ "${DLIO_FAIL_FAST:-0}" = 1 ] && break
    fi
  done
  echo "==== setup: summary"
  printf '  %s\n' "${report[@]}"
  echo "  disk: $(df -Ph . | awk 'NR == 2 { print $4 " free of " $2 " on " $6 }')"
  echo "stages: $passed passed, $failed failed"
  [ $failed = 0 ]
}
