// How alike the I/O of two runs is: the DLIO paper's similarity (CCGrid'21, section V.B) - a
// feature vector per run, each feature divided by the larger of the two runs' values, and the
// cosine of the two normalized vectors - plus two-sample Kolmogorov-Smirnov distances of the
// request-size and inter-request-gap distributions and a per-feature table that shows what
// differs. docs/profiling.md ("dlio-run compare") defines every figure and the JSON keys.
//
// Thread safety: the functions are pure; they read their arguments and return values.
#ifndef DLIO_PROFILE_COMPARE_H_
#define DLIO_PROFILE_COMPARE_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dlio/profile.h"

namespace dlio {

// The features, in the order of the vector. The first kReadFeatureCount are the paper's,
// computed over the reads of the trace (OpKind::kRead events that did not fail; bytes = ret, or
// the requested size when ret is unknown), except kIoTime. The write features after them are
// computed the same way over the writes (OpKind::kWrite) and enter the similarity only when at
// least one of the two runs writes (TraceComparison::writes_scored), so a comparison of two runs
// without writes is the paper's. Every figure is at the call level the trace records (a stdio
// fwrite is one write, not the write calls beneath it; RunFeatures::levels).
enum class CompareFeature : int {
  kIoTime,             // seconds: sum of durations of every I/O event (data and metadata)
  kBytesRead,          // bytes read
  kRequestSizeMin,     // bytes of the smallest read
  kRequestSizeMax,     // bytes of the largest read
  kRequestSizeMean,    // mean bytes per read
  kRequestSizeMedian,  // nearest-rank median (the ceil(n/2)-th smallest)
  kBandwidthPerOp,     // bytes read / sum of read durations (bytes/s); 0 when that sum is 0
  kPctSequential,      // 100 * Darshan sequential reads / reads (ComputeFileCounters)
  kPctConsecutive,     // 100 * Darshan consecutive reads / reads
  kFiles,              // files with at least one read or write
  kWrites,             // write requests
  kBytesWritten,       // bytes written
  kWriteSizeMean,      // mean bytes per write
  kWriteSizeMedian,    // nearest-rank median of the write sizes
  kFilesWritten,       // files with at least one write
};
inline constexpr int kReadFeatureCount = 10;  // kIoTime .. kFiles: the paper's vector
inline constexpr int kCompareFeatureCount = 15;

// Stable name of a feature ("io_time_s", "bytes_read", ...; the JSON keys) and its unit.
std::string_view CompareFeatureName(CompareFeature f);
std::string_view CompareFeatureUnit(CompareFeature f);

// What one run contributes to a comparison.
struct RunFeatures {
  std::array<double, kCompareFeatureCount> values{};  // indexed by CompareFeature
  int64_t reads = 0;
  int64_t writes = 0;
  std::vector<int64_t> request_sizes;  // bytes of every read, sorted
  std::vector<int64_t> write_sizes;    // bytes of every write, sorted
  // The categories (call levels: "POSIX", "STDIO", "MMAP", ...) of the reads and writes the
  // features count, sorted: the level every figure is at.
  std::vector<std::string> levels;
  // Gaps between the starts of consecutive reads of one thread (pid, tid), in microseconds,
  // pooled over threads and sorted. A thread with n reads gives n - 1 gaps.
  std::vector<int64_t> gaps_us;

  double value(CompareFeature f) const { return values[static_cast<int>(f)]; }
};

// The features of a trace (O(n log n) in its events).
RunFeatures ExtractRunFeatures(const ProfileTrace& trace);

// Whether a trace can be scored at the kernel level: it has no stdio reads or writes (category
// "STDIO"), or it holds the kernel requests beneath them (ProfileTrace::stdio_kernel; traces of
// dlio's LD_PRELOAD tracer from 2026-11-30 on).
bool HasKernelLevel(const ProfileTrace& trace);
// `trace` with its stdio reads and writes replaced by the kernel requests beneath them: events
// "read" and "write" of category kStdioKernelCategory ("SYSCALL").
ProfileTrace WithKernelRequests(const ProfileTrace& trace);

// Divides each a[i] and b[i] by max(a[i], b[i]). A feature that is 0 in both runs becomes 1 in
// both: the runs agree on it. Values must be >= 0; a and b have the same size.
void NormalizeByMax(const std::vector<double>& a, const std::vector<double>& b,
                    std::vector<double>* norm_a, std::vector<double>* norm_b);

// a.b / (|a| |b|); 1 when both vectors are all zeros, 0 when exactly one is.
double CosineSimilarity(const std::vector<double>& a, const std::vector<double>& b);

// Two-sample Kolmogorov-Smirnov statistic of two sorted samples.
struct KsResult {
  double d = 0;  // sup over x of |F_a(x) - F_b(x)|, exact on the empirical CDFs
  int64_t n_a = 0, n_b = 0;
  // The distance above which the samples differ at the 5% level (asymptotic:
  // 1.358 * sqrt((n_a + n_b) / (n_a n_b))); 0 when a sample is empty.
  double d_crit_05 = 0;
};
// Both samples sorted ascending (ties allowed). D is 0 when both are empty and 1 when exactly one
// is. O(n_a + n_b).
KsResult KsDistance(const std::vector<int64_t>& sorted_a, const std::vector<int64_t>& sorted_b);

// One row of the per-feature table.
struct FeatureComparison {
  CompareFeature feature = CompareFeature::kIoTime;
  double a = 0, b = 0;            // raw values
  double norm_a = 0, norm_b = 0;  // divided by max(a, b)
  // b / a (0 when a is 0 and b is not; 1 when both are 0).
  double ratio = 1;
  // |norm_a - norm_b| = |a - b| / max(a, b): 0 same, 1 present in one run only.
  double rel_diff = 0;
  // How much the similarity would rise if this feature alone were equal in both runs (B's
  // normalized value set to A's): what the feature costs the cosine.
  double contribution = 0;
};

// What was left out of a run's trace before it was compared: its events on files that are the
// runtime's and launchers' I/O, not the workload's (WithoutRuntimeIo in dlio/profile_fit.h).
struct RuntimeIoLeftOut {
  int64_t files = 0;          // by path pattern (system, temp, launcher and code folders)
  int64_t scratch_files = 0;  // created and deleted within the run (tempfile's probe)
  int64_t events = 0;         // the events on them
};

struct TraceComparison {
  std::string label_a, label_b;  // what was compared (file or directory names)
  double similarity = 1;         // cosine of the normalized feature vectors, in [0, 1]
  // Whether the write features are in the similarity: true when either run writes. When false,
  // their rows are still listed (0 in both runs) with contribution 0.
  bool writes_scored = false;
  std::vector<FeatureComparison> features;  // in CompareFeature order
  KsResult request_size_ks, gap_ks, write_size_ks;
  int64_t reads_a = 0, reads_b = 0, writes_a = 0, writes_b = 0;
  std::vector<std::string> levels_a, levels_b;  // RunFeatures::levels of each run
  // "kernel": both runs scored by what reached the kernel (stdio calls replaced by the system
  // calls beneath them); "call": by the calls the traces record, because a run has stdio calls
  // without the kernel requests beneath them (an older trace).
  std::string level = "call";
  RuntimeIoLeftOut left_out_a, left_out_b;  // set by the caller that filtered the traces
  // Features ordered by contribution, largest first (ties: CompareFeature order).
  std::vector<CompareFeature> ByContribution() const;
};

// Compares two runs' features.
TraceComparison CompareRuns(const RunFeatures& a, const RunFeatures& b);
// ExtractRunFeatures on both, then CompareRuns: at the kernel level (WithKernelRequests) when
// both traces have it (HasKernelLevel), else at the call level.
TraceComparison CompareTraces(const ProfileTrace& a, const ProfileTrace& b);

// Human-readable table, rows by contribution (what `dlio-run compare` prints).
std::string ComparisonText(const TraceComparison& c);
// The first line of ComparisonText (how an earlier output is recognised before it is replaced).
inline constexpr std::string_view kComparisonTextTitle = "dlio I/O comparison";
// JSON with stable keys (what `dlio-run compare --json` prints; docs/profiling.md lists them).
std::string ComparisonJson(const TraceComparison& c);

}  // namespace dlio

#endif  // DLIO_PROFILE_COMPARE_H_
