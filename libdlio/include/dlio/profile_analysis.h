// What VaniDL and DFAnalyzer report about a trace, computed on a ProfileTrace with Darshan's
// definitions: job and I/O times (unoverlapped I/O from interval unions), bytes and bandwidth,
// per-file Darshan counters with an access pattern, per-function size statistics, metadata vs
// data operations and a timeline. Rendered as text or as JSON with stable keys
// (docs/profiling.md lists them).
//
// Thread safety: the functions are pure; they read the trace and return values.
#ifndef DLIO_PROFILE_ANALYSIS_H_
#define DLIO_PROFILE_ANALYSIS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dlio/profile.h"
#include "dlio/status.h"

namespace dlio {

// Reads a trace file into `trace`, choosing the importer by content (not by name): gzip or JSON
// ("[" or "{") -> ImportPfw; darshan-dxt-parser text -> ImportDxt; strace lines -> ImportStrace.
// A directory imports every *.pfw / *.pfw.gz in it (a `dlio-run profile` or `--trace` output).
// Unknown content fails with InvalidArgument naming the file; so does a path that is not a
// regular file or directory (a FIFO, a device: refused without blocking), and a `*.pfw` entry of
// a directory that is not one. After the import, the durations, sizes and byte counts (positive
// ret) of all the trace's events must each add up to at most kMaxTraceTotal (else Corruption
// naming the path), so no sum an analysis, comparison or fit computes overflows.
Result<ImportStats> ImportTrace(const std::string& path, ProfileTrace* trace);

// The most the durations (us), the sizes or the byte counts of one trace's events may add up to.
inline constexpr int64_t kMaxTraceTotal = int64_t{1} << 62;

// Which application events (kind kOther) are compute: "compute" in the name or the category, in
// any case (dlio's ai.compute.step, DFTracer's category "compute" with names forward/backward,
// DLIO-benchmark's "TorchFramework.compute"). The answer is remembered per string id.
class ComputeClassifier {
 public:
  explicit ComputeClassifier(const ProfileTrace& trace) : trace_(trace) {}
  // Whether event i is an application event that is compute.
  bool IsCompute(size_t i);

 private:
  bool Names(int32_t string_id);
  const ProfileTrace& trace_;
  std::vector<int8_t> known_;  // by string id: -1 unknown, 0 no, 1 yes
};

struct AnalysisOptions {
  // Width of a timeline bucket in microseconds; 0 chooses one giving ~100 buckets.
  int64_t timeline_bucket_us = 0;
};

// Order statistics of request sizes (nearest-rank percentiles on the sorted sizes).
struct SizeStats {
  int64_t count = 0;
  int64_t min = 0, p25 = 0, median = 0, p75 = 0, max = 0;
  double mean = 0;
  int64_t total = 0;
};

// One call name ("pread64", "fread", ...): how often, how long, and the sizes it requested.
struct FunctionStats {
  std::string name;
  std::string category;
  OpKind kind = OpKind::kOther;
  int64_t count = 0;
  double time_s = 0;  // sum of durations
  SizeStats size;     // over events with a known size
};

// Of one file, from the gaps between consecutive reads/writes of each process in time order
// (gap = offset - end of the previous transfer; an open starts a new sequence; processes pooled).
enum class AccessPattern {
  kNone,        // no reads or writes
  kSequential,  // every transfer starts at or past the previous one's end (no gap < 0), and the
                // most common gap is 0 or covers fewer than half of the gaps
  kStrided,     // one non-zero gap (the dominant stride) covers at least half of the gaps
  kRandom,      // anything else (some transfer moves backward, no dominant stride)
};
std::string_view AccessPatternName(AccessPattern p);

struct FileAnalysis {
  FileCounters counters;
  AccessPattern pattern = AccessPattern::kNone;
};

struct ProcessAnalysis {
  int32_t pid = 0;
  std::string name;
  int64_t threads = 0;
  int64_t events = 0;
  double io_time_s = 0;               // sum of I/O event durations of the process
  double unoverlapped_io_time_s = 0;  // union of its I/O intervals minus its compute intervals
  int64_t bytes_read = 0, bytes_written = 0;
};

// One timeline bucket [start_us, start_us + width): an operation spanning k buckets counts in each
// of them; bytes and busy time are split in proportion to the overlap.
struct TimelineBucket {
  int64_t start_us = 0;
  int64_t read_ops = 0, write_ops = 0, metadata_ops = 0;
  double bytes_read = 0, bytes_written = 0;
  double io_busy_s = 0;  // union of I/O intervals inside the bucket
};

struct TraceAnalysis {
  int64_t events = 0;
  int64_t start_us = 0, end_us = 0;  // first event start, last event end
  double job_time_s = 0;
  double io_time_s = 0;               // sum of durations of I/O (data + metadata) events
  double io_wall_time_s = 0;          // union of every I/O interval, all threads and processes
  double unoverlapped_io_time_s = 0;  // io_wall minus the union of compute intervals
  double compute_time_s = 0;          // union of compute events (0 without application events)
  double app_time_s = 0;              // union of all application (non-I/O) events
  bool has_app_events = false;
  int64_t bytes_read = 0, bytes_written = 0;
  double read_bandwidth_mib_s = 0, write_bandwidth_mib_s = 0;  // bytes / io_wall of that kind
  int64_t files = 0, processes = 0, threads = 0;
  int64_t data_ops = 0, metadata_ops = 0;
  double data_time_s = 0, metadata_time_s = 0;
  SizeStats read_sizes, write_sizes;
  std::vector<FunctionStats> functions;         // by name
  std::vector<FileAnalysis> files_detail;       // by path
  std::vector<ProcessAnalysis> process_detail;  // by pid
  int64_t timeline_bucket_us = 0;
  std::vector<TimelineBucket> timeline;
  // A DXT trace with both DXT_POSIX and DXT_MPIIO rows records each transfer twice: then only the
  // POSIX rows count as I/O (bytes, ops, times, files) and the MPI-IO rows are counted here.
  bool dxt_posix_only = false;
  int64_t ignored_mpiio_events = 0;
};

TraceAnalysis AnalyzeTrace(const ProfileTrace& trace, const AnalysisOptions& options = {});

// The first line of AnalysisText (how an earlier output is recognised before it is replaced).
inline constexpr std::string_view kAnalysisTextTitle = "dlio I/O analysis";
// Human-readable summary (what `dlio-run analyze` prints), starting with kAnalysisTextTitle.
std::string AnalysisText(const TraceAnalysis& analysis);
// JSON with the stable keys of docs/profiling.md (what `dlio-run analyze --json` prints).
std::string AnalysisJson(const TraceAnalysis& analysis);

}  // namespace dlio

#endif  // DLIO_PROFILE_ANALYSIS_H_
