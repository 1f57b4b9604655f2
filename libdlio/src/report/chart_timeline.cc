#include <algorithm>

#include "dlio/units.h"
#include "report/charts.h"
#include "report/svg.h"

namespace dlio::report {
namespace {

std::string BandwidthChart(const TraceAnalysis& a, const Unit& t) {
  const double width_s = a.timeline_bucket_us / 1e6;
  Points reads, writes;
  double top = 0;
  for (const auto& b : a.timeline) {
    const double x = (b.start_us - a.start_us) / 1e6 / t.scale;
    const double r = b.bytes_read / kMiB / width_s, w = b.bytes_written / kMiB / width_s;
    // A step per bucket: the rate holds over its whole width.
    reads.emplace_back(x, r);
    reads.emplace_back(x + width_s / t.scale, r);
    writes.emplace_back(x, w);
    writes.emplace_back(x + width_s / t.scale, w);
    top = std::max({top, r, w});
  }
  const double x_end = reads.empty() ? 1 : reads.back().first;
  Plot plot(kChartWidth, 240, 0, x_end, 0, NiceCeil(top));
  plot.Axes("time since start (" + t.name + ")", "bandwidth (MiB/s)");
  plot.Line(reads, kReadColor, true, "read MiB/s");
  plot.Line(writes, kWriteColor, true, "write MiB/s");
  plot.Legend({{kReadColor, "read"}, {kWriteColor, "write"}});
  return plot.Svg("Bandwidth over time");
}

std::string OpsChart(const TraceAnalysis& a, const Unit& t) {
  const double width_s = a.timeline_bucket_us / 1e6;
  Points reads, writes, meta;
  double top = 0;
  for (const auto& b : a.timeline) {
    const double x0 = (b.start_us - a.start_us) / 1e6 / t.scale, x1 = x0 + width_s / t.scale;
    const double r = b.read_ops / width_s, w = b.write_ops / width_s, m = b.metadata_ops / width_s;
    for (double x : {x0, x1}) {
      reads.emplace_back(x, r);
      writes.emplace_back(x, w);
      meta.emplace_back(x, m);
    }
    top = std::max({top, r, w, m});
  }
  const double x_end = reads.empty() ? 1 : reads.back().first;
  Plot plot(kChartWidth, 240, 0, x_end, 0, NiceCeil(top));
  plot.Axes("time since start (" + t.name + ")", "operations/s");
  plot.Line(reads, kReadColor, false, "reads/s");
  plot.Line(writes, kWriteColor, false, "writes/s");
  plot.Line(meta, kMetaColor, false, "metadata operations/s");
  plot.Legend({{kReadColor, "read"}, {kWriteColor, "write"}, {kMetaColor, "metadata"}});
  return plot.Svg("Operations over time");
}

}  // namespace

std::string TimelineSection(const TraceAnalysis& a) {
  const std::string title = "Bandwidth and operations over time";
  if (a.timeline.empty() || a.timeline_bucket_us <= 0) {
    return Section("timeline", title, Note("No I/O operations over time in this trace."));
  }
  const double span_s = (a.timeline.back().start_us + a.timeline_bucket_us - a.start_us) / 1e6;
  const Unit t = SecondUnit(span_s);
  const std::string about =
      "<p class=\"about\">Per bucket of " + Escape(FormatSeconds(a.timeline_bucket_us / 1e6)) +
      ": bytes moved and operations started or running in it, divided by its width (an operation "
      "spanning several buckets counts in each, its bytes split in proportion).</p>";
  return Section("timeline", title, about + BandwidthChart(a, t) + OpsChart(a, t));
}

}  // namespace dlio::report
