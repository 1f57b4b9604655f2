#include <algorithm>

#include "report/charts.h"
#include "report/svg.h"

namespace dlio::report {
namespace {

std::string Card(const std::string& label, const std::string& value, const std::string& hint) {
  return "<div class=\"card\" title=\"" + Escape(hint) + "\"><div class=\"v\">" + Escape(value) +
         "</div><div class=\"k\">" + Escape(label) + "</div></div>";
}

std::string Td(const std::string& s) { return "<td>" + Escape(s) + "</td>"; }
std::string Num(int64_t v) { return "<td class=\"n\">" + std::to_string(v) + "</td>"; }

std::string CommonSizes(const std::vector<std::pair<int64_t, int64_t>>& pairs) {
  std::string s;
  for (const auto& [size, count] : pairs) {
    if (!s.empty()) s += ", ";
    s += std::to_string(size) + " x" + std::to_string(count);
  }
  return s;
}

}  // namespace

EventFilter::EventFilter(const ProfileTrace& trace, const TraceAnalysis& analysis) {
  if (!analysis.dxt_posix_only) return;
  int32_t last = ProfileTrace::kNoString - 1;
  for (int32_t c : trace.category) {
    if (c == last) continue;
    last = c;
    if (c >= 0 && trace.String(c) == kDxtMpiioCategory) {
      mpiio_ = c;
      return;
    }
  }
}

std::string Note(const std::string& text) { return "<p class=\"note\">" + Escape(text) + "</p>"; }

std::string Section(const std::string& id, const std::string& title, const std::string& body) {
  return "<section id=\"" + id + "\"><h2>" + Escape(title) + "</h2>\n" + body + "</section>\n";
}

std::string SummaryCards(const TraceAnalysis& a) {
  const double bw = a.io_wall_time_s > 0 ? (a.bytes_read + a.bytes_written) / a.io_wall_time_s : 0;
  std::string cards = "<div class=\"cards\">";
  cards += Card("job time", FormatSeconds(a.job_time_s), "first event start to last event end");
  cards += Card("I/O time", FormatSeconds(a.io_time_s), "sum of I/O event durations");
  cards += Card("I/O wall time", FormatSeconds(a.io_wall_time_s),
                "union of every I/O interval, all threads");
  cards += Card("unoverlapped I/O", FormatSeconds(a.unoverlapped_io_time_s),
                "I/O wall time not hidden behind compute");
  if (a.has_app_events) {
    cards += Card("compute", FormatSeconds(a.compute_time_s), "union of compute events");
  }
  cards += Card("read", FormatBytes(static_cast<double>(a.bytes_read)), "bytes read");
  cards += Card("written", FormatBytes(static_cast<double>(a.bytes_written)), "bytes written");
  cards += Card("bandwidth", FormatBytes(bw) + "/s", "bytes read and written / I/O wall time");
  cards += Card("files", std::to_string(a.files), "distinct files");
  cards += Card("processes", std::to_string(a.processes), "distinct pids");
  cards += Card("threads", std::to_string(a.threads), "distinct (pid, tid)");
  cards += Card("events", std::to_string(a.events), "events in the trace");
  return cards + "</div>\n";
}

std::string FileTableSection(const TraceAnalysis& a, const ReportOptions& options) {
  const std::string title = "Files (Darshan counters)";
  if (a.files_detail.empty()) return Section("files", title, Note("No files in this trace."));
  std::vector<const FileAnalysis*> files;
  for (const auto& f : a.files_detail) files.push_back(&f);
  std::stable_sort(files.begin(), files.end(), [](const auto* x, const auto* y) {
    return x->counters.bytes_read + x->counters.bytes_written >
           y->counters.bytes_read + y->counters.bytes_written;
  });
  const size_t rows =
      std::min(files.size(), static_cast<size_t>(std::max(0, options.max_table_files)));
  std::string t =
      "<div class=\"scroll\"><table><thead><tr><th>file</th><th>pattern</th><th>opens</th>"
      "<th>reads</th><th>bytes read</th><th>seq. reads</th><th>consec. reads</th><th>writes</th>"
      "<th>bytes written</th><th>r/w switches</th><th>seeks</th><th>stats</th><th>max byte "
      "read</th><th>common sizes</th><th>read time</th></tr></thead><tbody>\n";
  for (size_t i = 0; i < rows; ++i) {
    const auto& c = files[i]->counters;
    t += "<tr>" + Td(c.path) + Td(std::string(AccessPatternName(files[i]->pattern))) +
         Num(c.opens) + Num(c.reads) + Td(FormatBytes(static_cast<double>(c.bytes_read))) +
         Num(c.seq_reads) + Num(c.consec_reads) + Num(c.writes) +
         Td(FormatBytes(static_cast<double>(c.bytes_written))) + Num(c.rw_switches) + Num(c.seeks) +
         Num(c.stats) + Num(c.max_byte_read) + Td(CommonSizes(c.common_access)) +
         Td(FormatSeconds(c.read_time_s)) + "</tr>\n";
  }
  t += "</tbody></table></div>";
  if (rows < files.size()) {
    t += Note("The " + std::to_string(rows) + " files with the most bytes moved, of " +
              std::to_string(files.size()) + ".");
  }
  return Section("files", title, t);
}

std::string FunctionTableSection(const TraceAnalysis& a) {
  const std::string title = "Calls";
  if (a.functions.empty()) return Section("functions", title, Note("No calls in this trace."));
  std::string t =
      "<div class=\"scroll\"><table><thead><tr><th>call</th><th>kind</th><th>count</th>"
      "<th>time</th><th>min size</th><th>p25</th><th>median</th><th>mean</th><th>p75</th>"
      "<th>max size</th></tr></thead><tbody>\n";
  for (const auto& f : a.functions) {
    const bool sized = f.size.count > 0;
    auto size = [&](double v) { return sized ? Td(FormatBytes(v)) : Td("-"); };
    t += "<tr>" + Td(f.name) + Td(std::string(OpKindName(f.kind))) + Num(f.count) +
         Td(FormatSeconds(f.time_s)) + size(static_cast<double>(f.size.min)) +
         size(static_cast<double>(f.size.p25)) + size(static_cast<double>(f.size.median)) +
         size(f.size.mean) + size(static_cast<double>(f.size.p75)) +
         size(static_cast<double>(f.size.max)) + "</tr>\n";
  }
  return Section("functions", title, t + "</tbody></table></div>");
}

}  // namespace dlio::report
