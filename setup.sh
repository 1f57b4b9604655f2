#!/usr/bin/env bash
# One-step set-up for dlio on Debian 12 (run as root, or with sudo available).
#
#   ./setup.sh run    install what is missing, build (Release), run the default workload
#   ./setup.sh test   install what is missing, build (Release, with tests), run every test
#   ./setup.sh build  install and build only
#
# Environment: BUILD_DIR (default ./build), JOBS (default: nproc), DLIO_SKIP_INSTALL=1 to skip apt.
set -euo pipefail

cd "$(dirname "$0")"
mode="${1:-run}"
shift || true
BUILD_DIR="${BUILD_DIR:-build}"
JOBS="${JOBS:-$(nproc)}"

# Debian packages the project builds and tests with.
PACKAGES=(
  build-essential cmake pkg-config ccache git
  zlib1g-dev libprotobuf-dev protobuf-compiler libhdf5-openmpi-dev hdf5-tools
  libopenmpi-dev openmpi-bin
  libspdlog-dev nlohmann-json3-dev libyaml-cpp-dev libcli11-dev
  catch2 libbenchmark-dev
  libjpeg62-turbo-dev libpng-dev
  fio file python3 python3-numpy python3-h5py python3-pandas python3-protobuf python3-pil
)

install_missing() {
  [ "${DLIO_SKIP_INSTALL:-0}" = 1 ] && return 0
  local missing=()
  for p in "${PACKAGES[@]}"; do
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
    install_missing
    configure -DDLIO_BUILD_TESTS=OFF -DDLIO_BUILD_BENCHMARKS=OFF -DDLIO_BUILD_EXAMPLES=OFF
    cmake --build "$BUILD_DIR" --target dlio-run -j "$JOBS"
    exec "$BUILD_DIR/apps/dlio-run/dlio-run" "$@"
    ;;
  test)
    install_missing
    configure -DDLIO_BUILD_TESTS=ON -DDLIO_BUILD_BENCHMARKS=ON -DDLIO_BUILD_EXAMPLES=ON
    cmake --build "$BUILD_DIR" -j "$JOBS"
    # Open MPI refuses root unless told; MPI tests run under mpiexec as separate ctest entries.
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" "$@"
    ;;
  build)
    install_missing
    configure "$@"
    cmake --build "$BUILD_DIR" -j "$JOBS"
    ;;
  *)
    echo "usage: $0 run|test|build [args...]" >&2
    exit 2
    ;;
esac
