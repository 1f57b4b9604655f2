#!/usr/bin/env bash
# One-step set-up for dlio on Debian 12 (run as root, or with sudo available).
#
#   ./setup.sh run    install what is missing, build (Release), run the default workload
#   ./setup.sh test   install what is missing, then every check CI runs, in stages:
#                       format   clang-format 14 over every tracked .cc/.h/.c file
#                       release  Release build of everything, warnings are errors; whole ctest suite
#                       asan     clang AddressSanitizer + UndefinedBehaviorSanitizer build; whole
#                                ctest suite (also builds the libFuzzer targets)
#                       tsan     clang ThreadSanitizer build; pipeline, storage and comm tests
#                       fuzz     every libFuzzer target for DLIO_FUZZ_SECONDS (needs asan's build)
#                     extra arguments go to ctest (./setup.sh test -R config)
#   ./setup.sh build  install and build only
#
# Environment: BUILD_DIR (default ./build; the sanitizer stages use BUILD_DIR-asan and
# BUILD_DIR-tsan), JOBS (default: nproc), DLIO_SKIP_INSTALL=1 to skip apt,
# DLIO_TEST_STAGES (default "format release asan tsan fuzz"; DLIO_QUICK=1 means "format
# release"), DLIO_FAIL_FAST=1 (stop at the first failing stage), DLIO_FUZZ_SECONDS (per target,
# default 45), DLIO_FUZZ_SEED (default 1; "random" for a new one each run), DLIO_FUZZ_ADVISORY=1
# (fuzz findings are printed but do not fail). docs/testing.md says what each stage checks.
set -euo pipefail

cd "$(dirname "$0")"
mode="${1:-run}"
shift || true
BUILD_DIR="${BUILD_DIR:-build}"
JOBS="${JOBS:-$(nproc)}"

# Debian packages the project builds and tests with.
PACKAGES=(
  build-essential cmake pkg-config ccache git lld
  zlib1g-dev libprotobuf-dev protobuf-compiler libhdf5-openmpi-dev hdf5-tools
  libopenmpi-dev openmpi-bin
  libspdlog-dev nlohmann-json3-dev libyaml-cpp-dev libcli11-dev
  catch2 libbenchmark-dev
  libjpeg62-turbo-dev libpng-dev libcurl4-openssl-dev libssl-dev libsnappy-dev libzstd-dev
  liblz4-dev libsqlite3-dev
  fio file sysstat python3 python3-numpy python3-h5py python3-pandas python3-protobuf python3-pil
)
# What `./setup.sh test` adds: the formatter, and clang with its sanitizer and libFuzzer runtimes
# (libclang-rt-14-dev) and llvm-symbolizer (llvm-14) for readable sanitizer stacks; chromium draws
# the HTML report headless (tests/report/report_browser_check.cc); PyTorch, whose DataLoader
# tests/preload traces under `dlio-run profile`; Node.js for s3rver, the S3 server the s3
# storage's tests run on 127.0.0.1 (install_s3rver; Debian's npm only when no npm came with node);
# the openssl command makes the CA and certificate of the s3 tests' https server; mpi4py for the
# MPI data-parallel loader the fidelity closed loop profiles under mpirun
# (tests/fidelity/programs/mpi4py_sharded.py); SciPy for scipy.io.loadmat, the MATLAB-file loader
# the closed loop profiles (tests/fidelity/programs/mat_spawn_loader.py).
TEST_PACKAGES=(clang-format-14 clang-14 libclang-rt-14-dev llvm-14 chromium python3-torch nodejs
  openssl python3-mpi4py python3-scipy)

# s3rver (npm) into .tools/, where tests/storage/s3_server.cc looks for it; once.
install_s3rver() {
  [ -x .tools/node_modules/.bin/s3rver ] && return 0
  command -v npm >/dev/null 2>&1 || install_missing npm
  if ! command -v npm >/dev/null 2>&1; then
    echo "setup: no npm: the s3 storage tests will be skipped" >&2
    return 0
  fi
  echo "setup: installing s3rver@3 into .tools/"
  npm install --prefix .tools --no-audit --no-fund --loglevel=error s3rver@3
}

# hyparquet (a JavaScript parquet reader; hyparquet-compressors adds snappy/zstd/gzip) and
# hyparquet-writer into .tools/, where tests/format/parquet_interop_test.cc looks for them; once.
install_parquet_readers() {
  [ -d .tools/node_modules/hyparquet-writer ] && [ -d .tools/node_modules/hyparquet-compressors ] &&
    [ -d .tools/node_modules/@duckdb/node-api ] && return 0
  if ! command -v npm >/dev/null 2>&1; then
    echo "setup: no npm: the parquet interop tests will be skipped" >&2
    return 0
  fi
  echo "setup: installing hyparquet, hyparquet-compressors, hyparquet-writer, @duckdb/node-api" \
    "into .tools/"
  # @duckdb/node-api's versions are all prerelease-tagged (1.5.6-r.1), which no range matches:
  # pinned exactly. Its prebuilt @duckdb/node-bindings-linux-x64 (68 MB) reads parquet offline.
  npm install --prefix .tools --no-audit --no-fund --loglevel=error hyparquet@1 \
    hyparquet-compressors@1 hyparquet-writer@0.17 @duckdb/node-api@1.5.6-r.1
}

install_missing() {
  [ "${DLIO_SKIP_INSTALL:-0}" = 1 ] && return 0
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "setup: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

configure() {
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release "$@"
}

case "$mode" in
  run)
    install_missing "${PACKAGES[@]}"
    configure -DDLIO_BUILD_TESTS=OFF -DDLIO_BUILD_BENCHMARKS=OFF -DDLIO_BUILD_EXAMPLES=OFF \
      -DDLIO_WERROR=OFF
    # What README's users run: dlio-run, the tracer and cache preloads (`dlio-run profile`, programs
    # of `dlio-run cache-serve`) and the C API under the Python package; not the tests, benchmarks
    # or examples (`./setup.sh build` builds everything).
    cmake --build "$BUILD_DIR" --target dlio-run dlio_preload dlio_cache_preload dlio_c -j "$JOBS"
    exec "$BUILD_DIR/apps/dlio-run/dlio-run" "$@"
    ;;
  test)
    install_missing "${PACKAGES[@]}" "${TEST_PACKAGES[@]}"
    install_s3rver
    install_parquet_readers
    # The stages live in .ci/stages.sh (sourced, so they see BUILD_DIR, JOBS and configure).
    # shellcheck source=.ci/stages.sh
    source .ci/stages.sh
    run_test_stages "$@"
    ;;
  build)
    install_missing "${PACKAGES[@]}"
    configure -DDLIO_WERROR=OFF "$@"
    cmake --build "$BUILD_DIR" -j "$JOBS"
    ;;
  *)
    echo "usage: $0 run|test|build [args...]" >&2
    exit 2
    ;;
esac
