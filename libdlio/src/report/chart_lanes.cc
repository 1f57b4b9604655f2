#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <string_view>

#include "report/charts.h"
#include "report/svg.h"

namespace dlio::report {
namespace {

constexpr int kLaneHeight = 16, kLaneGap = 4;
constexpr size_t kMaxBarsPerLane = 150;  // of one kind

enum LaneClass { kData, kMeta, kCompute, kApp, kClasses };
constexpr std::array<const char*, kClasses> kClassColor = {kReadColor, kMetaColor, kComputeColor,
                                                           kAppColor};
constexpr std::array<const char*, kClasses> kClassName = {"data I/O", "metadata I/O", "compute",
                                                          "application"};

// The class of event i.
LaneClass ClassOf(const ProfileTrace& trace, size_t i, ComputeClassifier* compute) {
  switch (trace.kind[i]) {
    case OpKind::kRead:
    case OpKind::kWrite:
      return kData;
    case OpKind::kOther:
      return compute->IsCompute(i) ? kCompute : kApp;
    default:
      return kMeta;
  }
}

using LaneKey = std::pair<int32_t, int32_t>;  // pid, tid

// Busy microseconds per pixel column of each class: intervals closer than a pixel merge.
struct Lane {
  LaneKey key;
  std::array<std::vector<double>, kClasses> busy_us;
};

std::vector<LaneKey> BusiestLanes(const ProfileTrace& trace, int max_lanes, size_t* all) {
  std::map<LaneKey, int64_t> total;
  // Events come in runs of one thread: look the lane up once per run.
  int64_t* run = nullptr;
  LaneKey run_key;
  for (size_t i = 0; i < trace.size(); ++i) {
    const LaneKey key{trace.pid[i], trace.tid[i]};
    if (run == nullptr || key != run_key) {
      run = &total[key];
      run_key = key;
    }
    *run += std::max<int64_t>(0, trace.dur_us[i]);
  }
  *all = total.size();
  std::vector<std::pair<LaneKey, int64_t>> order(total.begin(), total.end());
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& x, const auto& y) { return x.second > y.second; });
  std::vector<LaneKey> keys;
  for (const auto& [key, busy] : order) {
    if (keys.size() >= static_cast<size_t>(std::max(0, max_lanes))) break;
    keys.push_back(key);
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

void Fill(const ProfileTrace& trace, const EventFilter& filter, int64_t t0, double us_per_px,
          int width, std::vector<Lane>* lanes) {
  std::map<LaneKey, Lane*> index;
  for (auto& lane : *lanes) index[lane.key] = &lane;
  ComputeClassifier compute(trace);
  Lane* lane = nullptr;
  LaneKey lane_key{-1, -1};
  bool looked_up = false;
  for (size_t i = 0; i < trace.size(); ++i) {
    const LaneKey key{trace.pid[i], trace.tid[i]};
    if (!looked_up || key != lane_key) {
      auto it = index.find(key);
      lane = it == index.end() ? nullptr : it->second;
      lane_key = key;
      looked_up = true;
    }
    if (lane == nullptr || filter.Skip(trace, i)) continue;
    auto& busy = lane->busy_us[ClassOf(trace, i, &compute)];
    const double s = static_cast<double>(trace.start_us[i] - t0);
    const double e = s + static_cast<double>(std::max<int64_t>(0, trace.dur_us[i]));
    const int first = std::clamp(static_cast<int>(s / us_per_px), 0, width - 1);
    const int last = std::clamp(static_cast<int>(e / us_per_px), 0, width - 1);
    for (int px = first; px <= last; ++px) {
      const double lo = std::max(s, px * us_per_px), hi = std::min(e, (px + 1) * us_per_px);
      // A zero-length event still marks its pixel.
      busy[px] += std::max(hi - lo, 1e-3);
    }
  }
}

// Runs of busy pixels [first, end) that are at most `gap` idle pixels apart.
std::vector<std::pair<size_t, size_t>> Runs(const std::vector<double>& busy, size_t gap) {
  std::vector<std::pair<size_t, size_t>> runs;
  for (size_t px = 0; px < busy.size(); ++px) {
    if (busy[px] <= 0) continue;
    if (!runs.empty() && px - runs.back().second <= gap) {
      runs.back().second = px + 1;
    } else {
      runs.emplace_back(px, px + 1);
    }
  }
  return runs;
}

void DrawLane(const Lane& lane, double y, double us_per_px, Plot* plot) {
  for (int c : {kApp, kCompute, kMeta, kData}) {
    const auto& busy = lane.busy_us[c];
    const bool io = c == kData || c == kMeta;
    const double top = io ? y + 3 : y, h = io ? kLaneHeight - 6 : kLaneHeight;
    // Bars closer than a pixel merge; a lane with very many bars merges wider gaps, so the page
    // stays small (each bar carries its hover text).
    auto runs = Runs(busy, 0);
    for (size_t gap = 1; runs.size() > kMaxBarsPerLane; gap *= 2) runs = Runs(busy, gap);
    for (const auto& [first, end] : runs) {
      double sum = 0;
      for (size_t px = first; px < end; ++px) sum += busy[px];
      const double t0 = first * us_per_px / 1e6, t1 = end * us_per_px / 1e6;
      const double pct = std::min(100.0, 100 * sum / ((end - first) * us_per_px));
      plot->PixelRect(Plot::kLeft + static_cast<double>(first), top,
                      static_cast<double>(end - first), h, kClassColor[c],
                      std::string(kClassName[c]) + " " + FormatNumber(t0) + "-" + FormatNumber(t1) +
                          " s, " + FormatNumber(pct, 2) + "% busy");
    }
  }
}

std::string LaneLabel(const LaneKey& key) {
  return std::to_string(key.first) + "/" + std::to_string(key.second);
}

std::string LaneTitle(const ProfileTrace& trace, const LaneKey& key) {
  std::string title = "pid " + std::to_string(key.first) + ", tid " + std::to_string(key.second);
  if (auto p = trace.process_names.find(key.first); p != trace.process_names.end()) {
    title += " (" + p->second;
    if (auto t = trace.thread_names.find(key); t != trace.thread_names.end()) {
      title += ", " + t->second;
    }
    title += ")";
  }
  return title;
}

}  // namespace

std::string LanesSection(const ProfileTrace& trace, const TraceAnalysis& a,
                         const ReportOptions& options) {
  const std::string title = "Activity per thread";
  if (trace.size() == 0) return Section("lanes", title, Note("No events in this trace."));
  size_t all = 0;
  const auto keys = BusiestLanes(trace, options.max_lanes, &all);
  const int rows = static_cast<int>(keys.size());
  Plot frame(kChartWidth, 100, 0, 1, 0, 1);
  const int width = frame.inner_width();
  const double span_us = std::max<double>(1, static_cast<double>(a.end_us - a.start_us));
  const double us_per_px = span_us / width;
  std::vector<Lane> lanes(keys.size());
  for (size_t l = 0; l < keys.size(); ++l) {
    lanes[l].key = keys[l];
    for (auto& b : lanes[l].busy_us) b.assign(width, 0);
  }
  Fill(trace, EventFilter(trace, a), a.start_us, us_per_px, width, &lanes);
  const Unit t = SecondUnit(span_us / 1e6);
  const int height = Plot::kTop + rows * (kLaneHeight + kLaneGap) + Plot::kBottom;
  Plot plot(kChartWidth, height, 0, span_us / 1e6 / t.scale, 0, 1);
  plot.XAxis("time since start (" + t.name + ")");
  for (int l = 0; l < rows; ++l) {
    const double y = Plot::kTop + l * (kLaneHeight + kLaneGap) + kLaneGap / 2.0;
    plot.PixelRect(Plot::kLeft, y, width, kLaneHeight, "#f4f6f8", LaneTitle(trace, keys[l]));
    DrawLane(lanes[l], y, us_per_px, &plot);
    plot.PixelText(Plot::kLeft - 6, y + kLaneHeight - 4, LaneLabel(keys[l]), "end");
  }
  plot.Legend({{kReadColor, "data I/O"},
               {kMetaColor, "metadata I/O"},
               {kComputeColor, "compute"},
               {kAppColor, "other application"}});
  std::string about =
      "<p class=\"about\">One lane per thread (pid/tid): when it did data I/O, metadata I/O, "
      "compute (application events with compute in the name or category) and other application "
      "work. Intervals less "
      "than a pixel apart are merged; hover a bar for its time span and how busy it was. I/O "
      "not hidden behind compute: " +
      FormatSeconds(a.unoverlapped_io_time_s) + " of " + FormatSeconds(a.io_wall_time_s) +
      " of I/O wall time.";
  if (all > keys.size()) {
    about += " The " + std::to_string(keys.size()) + " busiest of " + std::to_string(all) +
             " threads are shown.";
  }
  if (!a.has_app_events) about += " This trace has no application events (I/O only).";
  return Section("lanes", title, about + "</p>" + plot.Svg("Activity per thread"));
}

}  // namespace dlio::report
