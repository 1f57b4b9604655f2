# Sources of the report module (paths relative to libdlio/): the HTML report of an I/O profile.
list(APPEND DLIO_SOURCES
  src/report/svg.cc
  src/report/tables.cc
  src/report/chart_timeline.cc
  src/report/chart_sizes.cc
  src/report/chart_offsets.cc
  src/report/chart_lanes.cc
  src/report/chart_epochs.cc
  src/report/run_summary.cc
  src/report/page.cc
)
