#!/usr/bin/env bash
# Compile CPU per module: configures a build of this tree without ccache, with a compiler launcher
# that logs each compiler run's user + sys time, builds TARGETS, and prints the CPU seconds and
# compiler runs per target directory. Run it twice, with DLIO_UNITY_BUILD ON and OFF, for the
# unity build's figure in docs/testing.md. Not a test.
#
#   benchmarks/compile_cpu.sh WORKDIR [extra cmake -D arguments...]
#
# Environment: TARGETS ["dlio-run dlio_benchmark"] (what is built; the library's modules come with
# them), JOBS [2], CC/CXX [clang-14 / clang++-14], SANITIZE ["address,undefined"] (empty: none),
# BUILD_TYPE [RelWithDebInfo, with the sanitizer stages' -O1 -gline-tables-only].
# Example: benchmarks/compile_cpu.sh /tmp/cpu-unity -DDLIO_UNITY_BUILD=ON
#          benchmarks/compile_cpu.sh /tmp/cpu-files -DDLIO_UNITY_BUILD=OFF
set -euo pipefail

WORK="${1:?usage: benchmarks/compile_cpu.sh WORKDIR [cmake -D arguments...]}"
shift
TARGETS="${TARGETS:-dlio-run dlio_benchmark}"
JOBS="${JOBS:-2}"
CC="${CC:-clang-14}"
CXX="${CXX:-clang++-14}"
SANITIZE="${SANITIZE-address,undefined}"
BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}"
SRC="$(cd "$(dirname "$0")/.." && pwd)"

[[ -e $WORK ]] && { echo "compile_cpu: $WORK exists (give a new folder)" >&2; exit 2; }
mkdir -p "$WORK"
LOG="$WORK/compile-times.log"
LAUNCHER="$WORK/launcher.sh"
cat >"$LAUNCHER" <<EOF
#!/usr/bin/env bash
# Logs "user sys wall object" for one compiler run.
out=""; prev=""
for a in "\$@"; do [ "\$prev" = "-o" ] && out="\$a"; prev="\$a"; done
exec /usr/bin/time -a -o "$LOG" -f "%U %S %e \$out" "\$@"
EOF
chmod +x "$LAUNCHER"

args=(-S "$SRC" -B "$WORK/build" -DCMAKE_BUILD_TYPE="$BUILD_TYPE"
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX"
  -DCMAKE_C_COMPILER_LAUNCHER="$LAUNCHER" -DCMAKE_CXX_COMPILER_LAUNCHER="$LAUNCHER"
  -DDLIO_BUILD_TESTS=OFF -DDLIO_BUILD_BENCHMARKS=OFF -DDLIO_BUILD_EXAMPLES=OFF)
if [[ $BUILD_TYPE == RelWithDebInfo ]]; then
  args+=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only"
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only")
fi
[[ -n $SANITIZE ]] && args+=(-DDLIO_SANITIZE="$SANITIZE")
cmake "${args[@]}" "$@" >"$WORK/configure.log"
# shellcheck disable=SC2086  # TARGETS is a list
CCACHE_DISABLE=1 cmake --build "$WORK/build" -j "$JOBS" --target $TARGETS >"$WORK/build.log"

echo "compile CPU by target ($(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)):"
awk '{ n = split($4, p, "/"); dir = "?"
       for (i = 1; i <= n; i++) if (p[i] ~ /\.dir$/) { dir = p[i]; break }
       cpu[dir] += $1 + $2; runs[dir]++; total += $1 + $2 }
     END { for (d in cpu) printf "  %-28s %4d runs %8.1f CPU-s\n", d, runs[d], cpu[d]
           printf "  %-28s %13s %8.1f CPU-s\n", "total", "", total }' "$LOG" | sort -k1,1
