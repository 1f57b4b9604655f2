#include <algorithm>

#include "report/charts.h"
#include "report/svg.h"

namespace dlio::report {
namespace {

std::string EpochBars(const std::vector<double>& values, const std::string& y_title,
                      const std::string& color, const std::string& what, double fixed_top) {
  double top = fixed_top;
  for (double v : values) top = std::max(top, v);
  const int n = static_cast<int>(values.size());
  std::vector<std::string> labels;
  for (int i = 0; i < n; ++i) labels.push_back(std::to_string(i + 1));
  Plot plot(kChartWidth / 2 - 8, 220, 0, n, 0, NiceCeil(top));
  plot.CategoryAxes(labels, "epoch", y_title);
  for (int i = 0; i < n; ++i) {
    plot.Bar(i + 0.15, i + 0.85, values[i], color,
             "epoch " + std::to_string(i + 1) + ": " + FormatNumber(values[i], 6) + " " + what);
  }
  return plot.Svg(y_title + " per epoch");
}

}  // namespace

std::string EpochSection(const RunSummary& run) {
  const std::string title = "dlio run: per-epoch throughput and accelerator utilization";
  std::string about = "<p class=\"about\">From <code>" + Escape(run.source) +
                      "</code>: metric.train_throughput_samples_per_second[] and "
                      "metric.train_au_percentage[] (docs/metrics.md).</p>";
  if (run.throughput_samples_s.empty() && run.au_percentage.empty()) {
    return Section("epochs", title, about + Note("No training epochs in this run's summary."));
  }
  std::string charts = "<div class=\"pair\">";
  charts += run.throughput_samples_s.empty()
                ? Note("No throughput in this run's summary.")
                : EpochBars(run.throughput_samples_s, "throughput (samples/s)", kReadColor,
                            "samples/s", 0);
  charts += run.au_percentage.empty()
                ? Note("No AU in this run's summary.")
                : EpochBars(run.au_percentage, "AU (%)", kComputeColor, "%", 100);
  return Section("epochs", title, about + charts + "</div>");
}

}  // namespace dlio::report
