#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "report/charts.h"
#include "report/svg.h"

namespace dlio::report {
namespace {

constexpr int kHeight = 200;

// The points of one file's chart, one per distinct pixel; what was seen in all.
struct FilePoints {
  const FileAnalysis* file = nullptr;
  double y_max = 1;  // bytes: the end of the furthest transfer
  std::unordered_set<int64_t> read_pixels, write_pixels;
  Points reads, writes;
  int64_t transfers = 0, unknown_offset = 0;
};

// Keeps every k-th point so that at most `cap` remain.
void Thin(Points* p, double factor) {
  if (factor <= 1) return;
  Points kept;
  double next = 0;
  for (size_t i = 0; i < p->size(); ++i) {
    if (static_cast<double>(i) >= next) {
      kept.push_back((*p)[i]);
      next += factor;
    }
  }
  p->swap(kept);
}

std::vector<const FileAnalysis*> TopFiles(const TraceAnalysis& a, int n) {
  std::vector<const FileAnalysis*> files;
  for (const auto& f : a.files_detail) {
    if (f.counters.reads + f.counters.writes > 0) files.push_back(&f);
  }
  std::stable_sort(files.begin(), files.end(), [](const auto* x, const auto* y) {
    return x->counters.bytes_read + x->counters.bytes_written >
           y->counters.bytes_read + y->counters.bytes_written;
  });
  if (files.size() > static_cast<size_t>(std::max(0, n))) files.resize(std::max(0, n));
  return files;
}

// One pass over the events: each transfer of a chosen file becomes a point unless its pixel
// already has one.
void CollectPoints(const ProfileTrace& trace, const TraceAnalysis& a, double span_s,
                   std::vector<FilePoints>* files) {
  std::unordered_map<std::string_view, size_t> by_path;
  for (size_t i = 0; i < files->size(); ++i) by_path[(*files)[i].file->counters.path] = i;
  std::unordered_map<int32_t, int64_t> slot_of_id;  // string id -> file slot, -1 none
  const Plot frame(kChartWidth, kHeight, 0, 1, 0, 1);
  const double w = frame.inner_width(), h = frame.inner_height();
  const EventFilter filter(trace, a);
  for (size_t i = 0; i < trace.size(); ++i) {
    const OpKind kind = trace.kind[i];
    if ((kind != OpKind::kRead && kind != OpKind::kWrite) || trace.path[i] < 0) continue;
    if (filter.Skip(trace, i)) continue;
    auto [it, fresh] = slot_of_id.try_emplace(trace.path[i], -1);
    if (fresh) {
      auto found = by_path.find(trace.String(trace.path[i]));
      if (found != by_path.end()) it->second = static_cast<int64_t>(found->second);
    }
    if (it->second < 0) continue;
    FilePoints& f = (*files)[it->second];
    ++f.transfers;
    if (trace.offset[i] < 0) {
      ++f.unknown_offset;
      continue;
    }
    const double t = (trace.start_us[i] - a.start_us) / 1e6;
    const auto px = static_cast<int64_t>(std::lround(t / span_s * w));
    const auto py = static_cast<int64_t>(std::lround(trace.offset[i] / f.y_max * h));
    const int64_t key = px * 1'000'003 + py;
    const bool read = kind == OpKind::kRead;
    if ((read ? f.read_pixels : f.write_pixels).insert(key).second) {
      (read ? f.reads : f.writes).emplace_back(t, static_cast<double>(trace.offset[i]));
    }
  }
}

std::string FileChart(FilePoints& f, double span_s, const Unit& t, int64_t cap, bool* thinned) {
  const double drawn = static_cast<double>(f.reads.size() + f.writes.size());
  const double factor = cap > 0 && drawn > static_cast<double>(cap) ? drawn / cap : 1;
  Thin(&f.reads, factor);
  Thin(&f.writes, factor);
  const int64_t with_offset = f.transfers - f.unknown_offset;
  const int64_t shown = static_cast<int64_t>(f.reads.size() + f.writes.size());
  const bool cut = shown < with_offset;
  *thinned = *thinned || cut;
  const Unit u = ByteUnit(f.y_max);
  for (auto* pts : {&f.reads, &f.writes}) {
    for (auto& [x, y] : *pts) {
      x /= t.scale;
      y /= u.scale;
    }
  }
  Plot plot(kChartWidth, kHeight, 0, span_s / t.scale, 0, NiceCeil(f.y_max / u.scale));
  plot.Axes("time since start (" + t.name + ")", "offset (" + u.name + ")");
  plot.Dots(f.reads, kReadColor, "reads");
  plot.Dots(f.writes, kWriteColor, "writes");
  plot.Legend({{kReadColor, "read"}, {kWriteColor, "write"}});
  const auto& c = f.file->counters;
  std::string caption = "<h3><code>" + Escape(c.path) + "</code> <span class=\"tag\">" +
                        std::string(AccessPatternName(f.file->pattern)) +
                        "</span></h3><p class=\"about\">" + std::to_string(c.reads) + " reads (" +
                        FormatBytes(c.bytes_read) + "), " + std::to_string(c.writes) + " writes (" +
                        FormatBytes(c.bytes_written) + ")";
  if (cut)
    caption += "; " + std::to_string(shown) + " of " + std::to_string(with_offset) +
               " requests drawn (downsampled)";
  if (f.unknown_offset > 0) {
    caption += "; " + std::to_string(f.unknown_offset) + " without a known offset not drawn";
  }
  return caption + ".</p>" + plot.Svg("Offset vs time: " + c.path);
}

}  // namespace

std::string OffsetSection(const ProfileTrace& trace, const TraceAnalysis& a,
                          const ReportOptions& options) {
  const std::string title = "Offset vs time per file";
  const auto top = TopFiles(a, options.max_offset_files);
  if (top.empty()) return Section("offsets", title, Note("No file reads or writes in this trace."));
  std::vector<FilePoints> files(top.size());
  for (size_t i = 0; i < top.size(); ++i) {
    files[i].file = top[i];
    const auto& c = top[i]->counters;
    files[i].y_max = std::max<double>({1.0, static_cast<double>(c.max_byte_read + 1),
                                       static_cast<double>(c.max_byte_written + 1)});
  }
  const double span_s = std::max(1e-6, (a.end_us - a.start_us) / 1e6);
  CollectPoints(trace, a, span_s, &files);
  const Unit t = SecondUnit(span_s);
  bool thinned = false;
  std::string charts;
  for (auto& f : files) charts += FileChart(f, span_s, t, options.max_points_per_file, &thinned);
  std::string about =
      "<p class=\"about\">Each dot is a request at its start time and file offset: a rising line "
      "is sequential access, a scatter is random. The " +
      std::to_string(files.size()) + " file" + (files.size() == 1 ? "" : "s") +
      " with the most bytes moved";
  const int64_t with_transfers =
      std::count_if(a.files_detail.begin(), a.files_detail.end(),
                    [](const FileAnalysis& f) { return f.counters.reads + f.counters.writes > 0; });
  if (with_transfers > static_cast<int64_t>(files.size())) {
    about += " (of " + std::to_string(with_transfers) + ")";
  }
  about += ".";
  if (thinned) {
    about += " Downsampled: at most one dot per pixel and " +
             std::to_string(options.max_points_per_file) + " per file are drawn.";
  }
  return Section("offsets", title, about + "</p>" + charts);
}

}  // namespace dlio::report
