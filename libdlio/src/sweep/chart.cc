// The sweep's charts (AU and throughput against the last varied key), as a standalone SVG and as
// an HTML page, drawn with the profiling report's SVG primitives.
#include <algorithm>
#include <map>

#include "dlio/sweep.h"
#include "dlio/units.h"
#include "report/charts.h"
#include "report/svg.h"

namespace dlio {
namespace {

using report::Escape;
using report::FormatNumber;
using report::Plot;
using report::Points;

constexpr int kHeight = 280;
constexpr char kTargetColor[] = "#718096";
constexpr const char* kPalette[] = {"#2b6cb0", "#c53030", "#38a169", "#d69e2e",
                                    "#805ad5", "#dd6b20", "#319795", "#d53f8c"};

// One line per combination of the other axes' values, x = the index of the last axis's value.
struct Series {
  std::string label;  // "" with a single axis
  Points au, throughput;
};

std::vector<Series> SeriesOf(const SweepResult& r) {
  std::map<std::vector<std::string>, size_t> index;
  std::vector<Series> out;
  const std::vector<std::string>& xs = r.axes.back().values;
  for (const auto& p : r.points) {
    if (!p.ok()) continue;
    std::vector<std::string> fixed(p.point.values.begin(), p.point.values.end() - 1);
    auto [it, added] = index.emplace(fixed, out.size());
    if (added) {
      Series s;
      for (size_t i = 0; i < fixed.size(); ++i) {
        s.label += (i ? ", " : "") + r.axes[i].key + "=" + fixed[i];
      }
      out.push_back(std::move(s));
    }
    const double x =
        static_cast<double>(std::find(xs.begin(), xs.end(), p.point.values.back()) - xs.begin()) +
        0.5;
    out[it->second].au.emplace_back(x, p.m.au_percent);
    out[it->second].throughput.emplace_back(x, p.m.samples_per_s);
  }
  return out;
}

std::string Chart(const SweepResult& r, const std::vector<Series>& series, bool au) {
  const std::vector<std::string>& xs = r.axes.back().values;
  double top = au ? 100 : 0;
  for (const auto& s : series) {
    for (const auto& [x, y] : au ? s.au : s.throughput) top = std::max(top, y);
  }
  const std::string y_title = au ? "train AU (%)" : "throughput (samples/s)";
  Plot plot(report::kChartWidth, kHeight, 0, static_cast<double>(xs.size()), 0,
            report::NiceCeil(top > 0 ? top : 1));
  plot.CategoryAxes(xs, r.axes.back().key, y_title);
  std::vector<std::pair<std::string, std::string>> legend;
  if (au && r.until_au_below) {
    const double t = *r.until_au_below;
    plot.Line({{0, t}, {static_cast<double>(xs.size()), t}}, kTargetColor, false,
              "target AU " + FormatNumber(t) + "%");
    legend.emplace_back(kTargetColor, "target " + FormatNumber(t) + "%");
  }
  for (size_t i = 0; i < series.size(); ++i) {
    const std::string color = kPalette[i % std::size(kPalette)];
    const Points& points = au ? series[i].au : series[i].throughput;
    const std::string what = series[i].label.empty() ? y_title : series[i].label;
    plot.Line(points, color, false, what);
    plot.Dots(points, color, what);
    if (!series[i].label.empty()) legend.emplace_back(color, series[i].label);
  }
  if (!legend.empty()) plot.Legend(legend);
  return plot.Svg(y_title + " against " + r.axes.back().key);
}

std::string HtmlTable(const SweepResult& r) {
  std::string t = "<div class=\"scroll\"><table><tr><th>point</th>";
  for (const auto& a : r.axes) t += "<th>" + Escape(a.key) + "</th>";
  t += "<th>AU %</th><th>samples/s</th><th>MB/s</th><th>folder</th></tr>\n";
  for (const auto& p : r.points) {
    t += "<tr><td class=\"n\">" + std::to_string(p.index) + "</td>";
    for (const auto& v : p.point.values) t += "<td>" + Escape(v) + "</td>";
    if (p.ok()) {
      t += "<td class=\"n\">" + FormatNumber(p.m.au_percent, 4) + "</td><td class=\"n\">" +
           FormatNumber(p.m.samples_per_s, 5) + "</td><td class=\"n\">" +
           FormatNumber(p.m.bytes_per_s / kMB, 5) + "</td><td>" + Escape(p.name) + "</td>";
    } else {
      t += "<td colspan=\"4\">error: " + Escape(p.error) + "</td>";
    }
    t += "</tr>\n";
  }
  return t + "</table></div>\n";
}

}  // namespace

std::string SweepSvg(const SweepResult& r) {
  if (r.axes.empty()) return "";
  const std::vector<Series> series = SeriesOf(r);
  const std::string w = std::to_string(report::kChartWidth);
  const std::string h = std::to_string(2 * kHeight);
  std::string lower = Chart(r, series, /*au=*/false);
  lower.insert(4, " y=\"" + std::to_string(kHeight) + "\"");  // after "<svg"
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + w + "\" height=\"" + h +
         "\" viewBox=\"0 0 " + w + " " + h + "\"><!-- " + kSweepGeneratorTag + " -->\n<style>" +
         report::PageStyle() + "</style>\n<rect width=\"100%\" height=\"100%\" " +
         "fill=\"#fff\"/>\n" + Chart(r, series, /*au=*/true) + lower + "</svg>\n";
}

std::string SweepHtml(const SweepResult& r, const std::string& title) {
  std::string page = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  page += "<meta name=\"generator\" content=\"" + std::string(kSweepGeneratorTag) + "\">";
  page += "<title>" + Escape(title) + "</title><style>" + report::PageStyle() + "</style></head>\n";
  page += "<body><h1>" + Escape(title) + "</h1>\n";
  if (r.axes.empty()) return page + "</body></html>\n";
  const std::vector<Series> series = SeriesOf(r);
  std::string about =
      "<p class=\"about\">Each point's train AU (mean over epochs of the mean over "
      "ranks) and throughput (samples/s summed over ranks), as its summary.json "
      "reports them (docs/sweep.md).</p>";
  page += report::Section("charts", "AU and throughput against " + r.axes.back().key,
                          about + Chart(r, series, true) + Chart(r, series, false));
  if (!r.search.empty()) {
    page += report::Section("search", "Search", "<pre>" + Escape(SweepSearchText(r)) + "</pre>");
  }
  page += report::Section("points", "Points", HtmlTable(r));
  return page + "</body></html>\n";
}

}  // namespace dlio
