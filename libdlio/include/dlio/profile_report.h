// An I/O profile as one self-contained HTML page: inline SVG charts (bandwidth and operations over
// time, Darshan request-size bins, offset vs time per file, per-thread activity lanes, per-epoch
// throughput and AU of a dlio run), summary cards and a per-file table of Darshan counters.
// Nothing in the page is fetched from the network and it needs no script: hover text is SVG
// <title>. Every string taken from the trace (paths, names) is escaped.
//
// Thread safety: the functions are pure; they read their arguments and return values.
#ifndef DLIO_PROFILE_REPORT_H_
#define DLIO_PROFILE_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dlio/profile.h"
#include "dlio/profile_analysis.h"
#include "dlio/status.h"

namespace dlio {

// Per-epoch figures of a dlio run, from its summary.json.
struct RunSummary {
  std::string source;                        // the summary.json it came from (shown in the page)
  std::vector<double> au_percentage;         // metric.train_au_percentage[]
  std::vector<double> throughput_samples_s;  // metric.train_throughput_samples_per_second[]
};

// Reads metric.train_au_percentage[] and metric.train_throughput_samples_per_second[] from a dlio
// run's summary.json. NotFound when the file is missing; Corruption naming the file when it is not
// JSON or a key holds something other than an array of numbers (a missing key gives an empty
// list: a run without training has none).
Result<RunSummary> ReadRunSummary(const std::string& summary_json_path);

struct ReportOptions {
  // Page title and heading.
  std::string title = "dlio I/O profile";
  // Where the trace came from (file or directory names), listed under the heading.
  std::vector<std::string> sources;
  // A dlio run's per-epoch figures: adds the throughput and AU charts.
  std::optional<RunSummary> run;
  // Offset-vs-time charts for at most this many files (those with the most bytes moved).
  int max_offset_files = 6;
  // Points drawn per offset-vs-time chart; more are thinned (first to one per pixel, then evenly)
  // and the page says so. Bounds the page size whatever the trace size.
  int64_t max_points_per_file = 4000;
  // Activity lanes for at most this many threads (the busiest); the page says when cut.
  int max_lanes = 48;
  // Rows of the per-file table (the files with the most bytes moved).
  int max_table_files = 200;
};

// In the <head> of every page RenderHtmlReport writes: how a tool tells its own report (which it
// may replace) from another file.
inline constexpr char kReportGeneratorTag[] =
    "<meta name=\"generator\" content=\"dlio-run report\">";

// The report page. `analysis` must be AnalyzeTrace(trace) (the timeline, counters and totals
// come from it; offsets and activity lanes from the trace's events). An empty trace gives a
// page that says so in place of each chart.
std::string RenderHtmlReport(const ProfileTrace& trace, const TraceAnalysis& analysis,
                             const ReportOptions& options = {});

}  // namespace dlio

#endif  // DLIO_PROFILE_REPORT_H_
