// The sections of the report page, each an HTML fragment: a heading, a chart (inline SVG) or a
// note saying what the trace lacks. page.cc puts them together.
#pragma once

#include <string>

#include "dlio/profile.h"
#include "dlio/profile_analysis.h"
#include "dlio/profile_report.h"

namespace dlio::report {

// Colours shared by every chart, so a read is the same blue everywhere.
inline constexpr char kReadColor[] = "#2b6cb0";
inline constexpr char kWriteColor[] = "#c53030";
inline constexpr char kMetaColor[] = "#d69e2e";
inline constexpr char kComputeColor[] = "#38a169";
inline constexpr char kAppColor[] = "#a0aec0";

// Chart width in pixels (the page scales it down on narrow screens).
inline constexpr int kChartWidth = 960;

// Which events the charts of single events (offsets, lanes) skip: when the analysis counted only
// the DXT_POSIX rows of a DXT trace that also has DXT_MPIIO rows (each transfer twice), the
// MPI-IO rows.
class EventFilter {
 public:
  EventFilter(const ProfileTrace& trace, const TraceAnalysis& analysis);
  bool Skip(const ProfileTrace& trace, size_t i) const {
    return mpiio_ != ProfileTrace::kNoString && trace.category[i] == mpiio_ &&
           trace.kind[i] != OpKind::kOther;
  }

 private:
  int32_t mpiio_ = ProfileTrace::kNoString;
};

// The CSS of the report page (for other pages drawn with these charts, such as a sweep's).
const char* PageStyle();

// "<p class="note">text</p>" (text escaped).
std::string Note(const std::string& text);
// "<section id=...><h2>title</h2>body</section>".
std::string Section(const std::string& id, const std::string& title, const std::string& body);

std::string SummaryCards(const TraceAnalysis& analysis);
// Bandwidth (MiB/s) and operations per second over time, from analysis.timeline.
std::string TimelineSection(const TraceAnalysis& analysis);
// Reads and writes per Darshan size bin, summed over files.
std::string SizeHistogramSection(const TraceAnalysis& analysis);
// Offset vs time of reads and writes for the files with the most bytes moved.
std::string OffsetSection(const ProfileTrace& trace, const TraceAnalysis& analysis,
                          const ReportOptions& options);
// One lane per thread: data I/O, metadata I/O, compute and other application intervals.
std::string LanesSection(const ProfileTrace& trace, const TraceAnalysis& analysis,
                         const ReportOptions& options);
// Darshan counters per file, and per-function statistics.
std::string FileTableSection(const TraceAnalysis& analysis, const ReportOptions& options);
std::string FunctionTableSection(const TraceAnalysis& analysis);
// Per-epoch throughput and AU of a dlio run.
std::string EpochSection(const RunSummary& run);

}  // namespace dlio::report
