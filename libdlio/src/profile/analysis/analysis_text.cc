// AnalysisText: the human-readable summary `dlio-run analyze` prints.
#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>

#include "dlio/profile_analysis.h"
#include "dlio/units.h"

namespace dlio {
namespace {

constexpr size_t kMaxFileRows = 20;

void Appendf(std::string* out, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void Appendf(std::string* out, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  const int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (static_cast<size_t>(n) < sizeof buf) {
    out->append(buf, static_cast<size_t>(n));
    return;
  }
  std::string big(static_cast<size_t>(n) + 1, '\0');
  va_start(ap, fmt);
  std::vsnprintf(big.data(), big.size(), fmt, ap);
  va_end(ap);
  big.resize(static_cast<size_t>(n));
  out->append(big);
}

double Percent(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

void Summary(const TraceAnalysis& a, std::string* out) {
  Appendf(out,
          "events            %" PRId64 " (%" PRId64 " processes, %" PRId64 " threads, %" PRId64
          " files)\n",
          a.events, a.processes, a.threads, a.files);
  Appendf(out, "job time          %.6f s\n", a.job_time_s);
  Appendf(out, "I/O time          %.6f s (sum of durations over all threads)\n", a.io_time_s);
  Appendf(out, "I/O wall time     %.6f s (%.1f%% of the job; union of I/O intervals)\n",
          a.io_wall_time_s, Percent(a.io_wall_time_s, a.job_time_s));
  if (a.has_app_events) {
    Appendf(out, "compute time      %.6f s (union of compute events)\n", a.compute_time_s);
    Appendf(out, "application time  %.6f s (union of application events)\n", a.app_time_s);
  } else {
    Appendf(out, "compute time      - (the trace has no application events)\n");
  }
  Appendf(out, "unoverlapped I/O  %.6f s (I/O wall time not hidden behind compute)\n",
          a.unoverlapped_io_time_s);
  Appendf(out, "read              %" PRId64 " B (%.2f MiB) at %.2f MiB/s\n", a.bytes_read,
          static_cast<double>(a.bytes_read) / kMiB, a.read_bandwidth_mib_s);
  Appendf(out, "written           %" PRId64 " B (%.2f MiB) at %.2f MiB/s\n", a.bytes_written,
          static_cast<double>(a.bytes_written) / kMiB, a.write_bandwidth_mib_s);
  Appendf(out, "data ops          %" PRId64 " in %.6f s\n", a.data_ops, a.data_time_s);
  Appendf(out, "metadata ops      %" PRId64 " in %.6f s\n", a.metadata_ops, a.metadata_time_s);
  if (a.dxt_posix_only) {
    Appendf(out,
            "note              DXT trace with POSIX and MPI-IO rows: figures count the POSIX "
            "rows only (%" PRId64 " MPI-IO rows ignored)\n",
            a.ignored_mpiio_events);
  }
}

void SizesRow(const char* label, const SizeStats& s, std::string* out) {
  Appendf(out,
          "  %-8s %10" PRId64 " %10" PRId64 " %10" PRId64 " %12.1f %10" PRId64 " %10" PRId64
          " %10" PRId64 "\n",
          label, s.count, s.min, s.p25, s.mean, s.median, s.p75, s.max);
}

void Functions(const TraceAnalysis& a, std::string* out) {
  Appendf(out,
          "\nRequest sizes (bytes)  count        min        p25         mean     median"
          "        p75        max\n");
  SizesRow("read", a.read_sizes, out);
  SizesRow("write", a.write_sizes, out);
  Appendf(out, "\nFunctions\n  %-28s %-10s %-8s %10s %12s %10s %10s %12s %10s %10s %10s\n", "name",
          "category", "kind", "count", "time_s", "size_min", "size_p25", "size_mean", "median",
          "size_p75", "size_max");
  for (const auto& f : a.functions) {
    const SizeStats& s = f.size;
    Appendf(out,
            "  %-28s %-10s %-8s %10" PRId64 " %12.6f %10" PRId64 " %10" PRId64 " %12.1f %10" PRId64
            " %10" PRId64 " %10" PRId64 "\n",
            f.name.c_str(), f.category.c_str(), std::string(OpKindName(f.kind)).c_str(), f.count,
            f.time_s, s.min, s.p25, s.mean, s.median, s.p75, s.max);
  }
}

void Processes(const TraceAnalysis& a, std::string* out) {
  Appendf(out, "\nProcesses\n  %-8s %-24s %7s %10s %12s %14s %14s %14s\n", "pid", "name", "threads",
          "events", "io_time_s", "unoverlap_s", "bytes_read", "bytes_written");
  for (const auto& p : a.process_detail) {
    Appendf(out,
            "  %-8d %-24s %7" PRId64 " %10" PRId64 " %12.6f %14.6f %14" PRId64 " %14" PRId64 "\n",
            p.pid, p.name.c_str(), p.threads, p.events, p.io_time_s, p.unoverlapped_io_time_s,
            p.bytes_read, p.bytes_written);
  }
}

void Files(const TraceAnalysis& a, std::string* out) {
  std::array<int64_t, 4> patterns{};
  std::array<int64_t, 10> read_bins{}, write_bins{};
  for (const auto& f : a.files_detail) {
    ++patterns[static_cast<size_t>(f.pattern)];
    for (int b = 0; b < 10; ++b) {
      read_bins[b] += f.counters.size_read_bins[b];
      write_bins[b] += f.counters.size_write_bins[b];
    }
  }
  Appendf(out,
          "\nAccess patterns   %" PRId64 " sequential, %" PRId64 " strided, %" PRId64
          " random, %" PRId64 " without reads or writes\n",
          patterns[1], patterns[2], patterns[3], patterns[0]);
  Appendf(out, "\nDarshan size bins  %12s %12s\n", "reads", "writes");
  for (int b = 0; b < 10; ++b) {
    Appendf(out, "  %-16s %12" PRId64 " %12" PRId64 "\n",
            std::string(DarshanSizeBinName(b)).c_str(), read_bins[b], write_bins[b]);
  }
  std::vector<const FileAnalysis*> files;
  for (const auto& f : a.files_detail) files.push_back(&f);
  std::stable_sort(files.begin(), files.end(), [](const FileAnalysis* x, const FileAnalysis* y) {
    return x->counters.bytes_read + x->counters.bytes_written >
           y->counters.bytes_read + y->counters.bytes_written;
  });
  Appendf(out, "\nFiles (most bytes first%s)\n",
          files.size() > kMaxFileRows ? "; --json lists every file" : "");
  Appendf(out, "  %-10s %6s %8s %8s %14s %14s %8s %8s %8s %6s %6s  %s\n", "pattern", "opens",
          "reads", "writes", "bytes_read", "bytes_written", "seq_rd", "consec", "rw_sw", "seeks",
          "stats", "path");
  for (size_t i = 0; i < files.size() && i < kMaxFileRows; ++i) {
    const FileCounters& c = files[i]->counters;
    Appendf(out,
            "  %-10s %6" PRId64 " %8" PRId64 " %8" PRId64 " %14" PRId64 " %14" PRId64 " %8" PRId64
            " %8" PRId64 " %8" PRId64 " %6" PRId64 " %6" PRId64 "  %s\n",
            std::string(AccessPatternName(files[i]->pattern)).c_str(), c.opens, c.reads, c.writes,
            c.bytes_read, c.bytes_written, c.seq_reads, c.consec_reads, c.rw_switches, c.seeks,
            c.stats, c.path.c_str());
  }
  if (files.size() > kMaxFileRows) {
    Appendf(out, "  ... %zu more files\n", files.size() - kMaxFileRows);
  }
}

void Timeline(const TraceAnalysis& a, std::string* out) {
  Appendf(out, "\nTimeline (buckets of %" PRId64 " us from the first event)\n",
          a.timeline_bucket_us);
  Appendf(out, "  %12s %10s %10s %10s %14s %14s %10s\n", "t_s", "read_ops", "write_ops", "meta_ops",
          "MiB_read", "MiB_written", "io_busy_s");
  for (const auto& b : a.timeline) {
    Appendf(out, "  %12.6f %10" PRId64 " %10" PRId64 " %10" PRId64 " %14.3f %14.3f %10.6f\n",
            static_cast<double>(b.start_us - a.start_us) / 1e6, b.read_ops, b.write_ops,
            b.metadata_ops, b.bytes_read / kMiB, b.bytes_written / kMiB, b.io_busy_s);
  }
}

}  // namespace

std::string AnalysisText(const TraceAnalysis& a) {
  std::string out(kAnalysisTextTitle);
  out += "\n";
  Summary(a, &out);
  Functions(a, &out);
  Processes(a, &out);
  Files(a, &out);
  Timeline(a, &out);
  return out;
}

}  // namespace dlio
