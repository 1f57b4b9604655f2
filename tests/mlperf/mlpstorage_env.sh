# shellcheck shell=bash
# Sourced by tests/mlperf/mlpstorage_test.sh and benchmarks/mlpstorage_memory.sh: a private copy of
# mlcommons/storage that Debian's python3 can run unmodified.
#
#   mlpstorage_env STORAGE_DIR WORK_DIR
#
# copies STORAGE_DIR's mlpstorage/ and configs/ into WORK_DIR/storage (Python's caches and whatever
# mlpstorage writes stay out of the original tree), writes a stand-in for pyarrow (not a Debian
# package: mlpstorage/benchmarks/base.py imports pyarrow.ipc.open_stream and never calls it), and
# exports HOME, PYTHONPATH and Open MPI's oversubscription for the mlpstorage that follows.
mlpstorage_env() {
  local storage=$1 work=$2
  mkdir -p "$work/storage" "$work/home" "$work/stub/pyarrow"
  cp -r "$storage/mlpstorage" "$storage/configs" "$work/storage/"
  : >"$work/stub/pyarrow/__init__.py"
  cat >"$work/stub/pyarrow/ipc.py" <<'PY'
"""Stand-in for pyarrow.ipc: mlpstorage imports open_stream and never calls it."""


def open_stream(*args, **kwargs):
    raise NotImplementedError("pyarrow stand-in of dlio's MLPerf Storage scripts")
PY
  export HOME="$work/home" PYTHONPATH="$work/stub:$work/storage" PYTHONDONTWRITEBYTECODE=1
  export OMPI_MCA_rmaps_base_oversubscribe=1
}
