# Sources of the runner module (paths relative to libdlio/).
list(APPEND DLIO_SOURCES
  src/runner/metrics.cc
  src/runner/report.cc
  src/runner/runner.cc
  src/runner/side_io.cc
  src/runner/workloads.cc
)
