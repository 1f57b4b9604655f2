// RunSweep: the points in grid order, and the search's stopping rule.
#include "dlio/sweep.h"

namespace dlio {
namespace {

// The search lines, one per combination of the values of every axis but the last: the points
// [i * line_length, (i + 1) * line_length) of the grid.
std::vector<SweepSearchLine> SearchLines(const std::vector<SweepPoint>& points,
                                         size_t line_length) {
  std::vector<SweepSearchLine> lines;
  for (size_t i = 0; i + line_length <= points.size(); i += line_length) {
    SweepSearchLine line;
    line.fixed.assign(points[i].values.begin(), points[i].values.end() - 1);
    line.stop_reason = "not_run";
    lines.push_back(std::move(line));
  }
  return lines;
}

// MLPerf Storage's rule: the line goes on while the target is met; the first point below it (or
// failing) ends it, and the largest value met so far is the answer.
void UpdateLine(const SweepPointResult& p, double target, bool last_of_line,
                SweepSearchLine* line) {
  const std::string& value = p.point.values.back();
  if (p.ok() && p.m.au_percent >= target) {
    line->best = value;
    line->stop_reason = last_of_line ? "all_met" : "incomplete";
    return;
  }
  line->stopped_at = value;
  line->stop_reason = p.ok() ? "au_below" : "error";
}

}  // namespace

SweepResult RunSweep(const SweepPlan& plan, const SweepPointRunner& run) {
  SweepResult r;
  r.axes = plan.axes;
  r.until_au_below = plan.until_au_below;
  const std::vector<SweepPoint> points = ExpandSweepGrid(plan.axes);
  r.grid_points = points.size();
  const bool search = plan.until_au_below.has_value() && !points.empty();
  const size_t line_length = search ? plan.axes.back().values.size() : 1;
  if (search) r.search = SearchLines(points, line_length);
  for (size_t i = 0; i < points.size() && !r.stopped_early; ++i) {
    SweepSearchLine* line = search ? &r.search[i / line_length] : nullptr;
    if (line != nullptr && line->stopped_at) continue;  // the search ended this line
    SweepPointResult p;
    p.index = i;
    p.point = points[i];
    p.name = SweepPointName(plan.axes, points[i]);
    auto measured = run(points[i], i);
    if (measured.ok()) {
      p.m = std::move(measured).value();
    } else {
      p.error = measured.status().ToString();
      if (p.error.empty()) p.error = "failed";
    }
    if (line != nullptr) {
      UpdateLine(p, *plan.until_au_below, i % line_length == line_length - 1, line);
      p.meets_target = p.ok() && p.m.au_percent >= *plan.until_au_below;
    }
    if (!p.ok() && plan.fail_fast) r.stopped_early = true;
    r.points.push_back(std::move(p));
    if (plan.on_point) plan.on_point(r);
  }
  return r;
}

}  // namespace dlio
