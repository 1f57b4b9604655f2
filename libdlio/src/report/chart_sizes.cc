#include <algorithm>
#include <array>

#include "report/charts.h"
#include "report/svg.h"

namespace dlio::report {

std::string SizeHistogramSection(const TraceAnalysis& a) {
  const std::string title = "Request sizes (Darshan bins)";
  std::array<int64_t, 10> reads{}, writes{};
  for (const auto& f : a.files_detail) {
    for (int i = 0; i < 10; ++i) {
      reads[i] += f.counters.size_read_bins[i];
      writes[i] += f.counters.size_write_bins[i];
    }
  }
  int64_t top = 0, total = 0;
  for (int i = 0; i < 10; ++i) {
    top = std::max({top, reads[i], writes[i]});
    total += reads[i] + writes[i];
  }
  if (total == 0)
    return Section("sizes", title, Note("No reads or writes of files in this trace."));
  std::vector<std::string> labels;
  for (int i = 0; i < 10; ++i) labels.emplace_back(DarshanSizeBinName(i));
  Plot plot(kChartWidth, 260, 0, 10, 0, NiceCeil(static_cast<double>(top)));
  plot.CategoryAxes(labels, "request size (bytes; K = 1024, M = 1024 K, G = 1024 M)", "requests");
  for (int i = 0; i < 10; ++i) {
    const std::string bin(DarshanSizeBinName(i));
    plot.Bar(i + 0.12, i + 0.5, static_cast<double>(reads[i]), kReadColor,
             std::to_string(reads[i]) + " reads of " + bin + " bytes");
    plot.Bar(i + 0.5, i + 0.88, static_cast<double>(writes[i]), kWriteColor,
             std::to_string(writes[i]) + " writes of " + bin + " bytes");
  }
  plot.Legend({{kReadColor, "reads"}, {kWriteColor, "writes"}});
  const std::string about =
      "<p class=\"about\">Darshan's POSIX_SIZE_READ_* and POSIX_SIZE_WRITE_* counters summed over "
      "files: how many requests fell in each size bin (edges inclusive as in Darshan).</p>";
  return Section("sizes", title, about + plot.Svg("Request-size histogram"));
}

}  // namespace dlio::report
