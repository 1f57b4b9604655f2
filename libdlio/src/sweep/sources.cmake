# Sources of the sweep module (paths relative to libdlio/): a workload over a grid of config values,
# MLPerf Storage's AU search, and the sweep's tables and charts.
list(APPEND DLIO_SOURCES
  src/sweep/grid.cc
  src/sweep/run_sweep.cc
  src/sweep/tables.cc
  src/sweep/chart.cc
)
