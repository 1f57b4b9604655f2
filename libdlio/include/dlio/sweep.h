// A parameter sweep: a workload run once per point of a grid (the cartesian product of the values
// of some config keys), or MLPerf Storage's upward search for the largest value of one key that
// still meets an AU target. The library plans the grid, decides which points run (the search's
// stopping rule) and renders the results (CSV, JSON, SVG, HTML, a text table); running a point is
// the caller's (`dlio-run sweep` calls RunWorkload), so the rule is testable with a fake runner.
//
// Thread safety: the functions are pure, except RunSweep, which calls its runner from the
// caller's thread, one point after another.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dlio/status.h"

namespace dlio {

// One varied config key and its values, in the order given.
struct SweepAxis {
  std::string key;                  // e.g. "reader.read_threads" (no ++workload. prefix)
  std::vector<std::string> values;  // raw text, as an override's value
};

// Parses "KEY=v1,v2,..." (a leading "++workload." or "workload." on KEY is dropped, as for
// overrides). A value "LO:HI" or "LO:HI:STEP" of integers stands for LO, LO+STEP, ... up to HI
// (e.g. "1:4,8,16:32:8" is 1,2,3,4,8,16,24,32). InvalidArgument naming `spec` when '=' or KEY is
// missing, a value is empty (",,", a trailing comma) or repeated, or a range is empty. Whether KEY
// and the values are valid config is the config's business (ApplyOverride); this checks only the
// syntax.
Result<SweepAxis> ParseSweepAxis(std::string_view spec);

// The largest grid RunSweep accepts (a typo such as a missing comma in a range of numbers is
// more likely than a sweep this long).
inline constexpr uint64_t kMaxSweepPoints = 10000;

// InvalidArgument when there is no axis, a key is varied twice, or the grid has more than
// kMaxSweepPoints points.
Status CheckSweepAxes(const std::vector<SweepAxis>& axes);

// For the search: the last axis's values sorted in increasing numeric order. InvalidArgument
// naming the key and the value when a value is not a number.
Status SortLastAxisForSearch(std::vector<SweepAxis>* axes);

// One grid point: one value per axis, in the axes' order.
struct SweepPoint {
  std::vector<std::string> values;
};

// Every point of the cartesian product, the last axis varying fastest.
std::vector<SweepPoint> ExpandSweepGrid(const std::vector<SweepAxis>& axes);

// The point as overrides: "key=value" per axis.
std::vector<std::string> SweepOverrides(const std::vector<SweepAxis>& axes,
                                        const SweepPoint& point);

// "key=value" per axis joined by ", " (for messages and tables).
std::string SweepPointLabel(const std::vector<SweepAxis>& axes, const SweepPoint& point);

// The point's folder name: "key=value" per axis joined by "__", e.g.
// "reader.read_threads=4__train.computation_time=0.01". Only [A-Za-z0-9._=+-] are kept; any other
// byte (and a leading '.' or '-') becomes '_', and then (or when the name would pass 160 bytes) a
// hash of the exact point is appended ("~1a2b3c4d"), so the name depends on the point alone and two
// points never share it.
std::string SweepPointName(const std::vector<SweepAxis>& axes, const SweepPoint& point);

// What one point's run measured (RunReport's figures, as summary.json reports them).
struct SweepMeasurement {
  double au_percent = 0;     // train AU: mean over epochs of the mean over ranks
  double samples_per_s = 0;  // mean over epochs of the sum over ranks
  double bytes_per_s = 0;    // the same for the bytes read
  std::vector<double> epoch_seconds;
  uint64_t accelerators = 0;  // summary.json's num_accelerators (0: not known)
  bool has_steady = false;    // 2 epochs or more: the first and the steady figures apart
  double first_epoch_au_percent = 0, first_epoch_samples_per_s = 0;
  double steady_au_percent = 0, steady_samples_per_s = 0;
  std::string output_folder;  // where the point's summary.json is
  // Identifies the point's whole config (the caller's choice, e.g. a hash of ConfigToJson): a
  // resumed sweep takes over an earlier point only when it matches. "" when not known.
  std::string config_digest;
  bool resumed = false;  // taken over from an earlier sweep, not run again
};

// Runs one point (its index in ExpandSweepGrid's order). An error is recorded with the point.
using SweepPointRunner =
    std::function<Result<SweepMeasurement>(const SweepPoint& point, size_t index)>;

struct SweepResult;

struct SweepPlan {
  std::vector<SweepAxis> axes;  // checked (CheckSweepAxes); sorted for a search
  // The search: along the last axis, for each combination of the other axes' values, points run
  // in increasing order until the first whose AU is below this percentage (or fails); the later
  // points of that line are skipped. Unset: every point runs.
  std::optional<double> until_au_below;
  bool fail_fast = false;  // stop the whole sweep at the first point that fails
  // Called after each point that ran (progress lines, rewriting the tables). Optional.
  std::function<void(const SweepResult&)> on_point;
};

struct SweepPointResult {
  size_t index = 0;  // in ExpandSweepGrid's order
  SweepPoint point;
  std::string name;   // SweepPointName
  std::string error;  // empty: the point ran and `m` holds its figures
  SweepMeasurement m;
  bool meets_target = false;  // a search: ran and AU >= until_au_below
  bool ok() const { return error.empty(); }
};

// One line of the search: the other axes' values and how far the last axis got.
struct SweepSearchLine {
  std::vector<std::string> fixed;         // the values of every axis but the last
  std::optional<std::string> best;        // the largest value meeting the target (none met: unset)
  std::optional<std::string> stopped_at;  // the first value that did not (unset: all met)
  std::string stop_reason;                // "au_below", "error", "all_met", "not_run" (--fail-fast)
};

struct SweepResult {
  std::vector<SweepAxis> axes;
  std::optional<double> until_au_below;
  std::vector<SweepPointResult> points;  // the points that ran, in order
  std::vector<SweepSearchLine> search;   // a search: one line per combination of the others
  bool stopped_early = false;            // fail_fast ended the sweep at a failed point
  size_t grid_points = 0;                // points in the grid (those that ran or were skipped)
  size_t failed() const;
};

// Runs the plan's points one after another through `run` (see SweepPlan for the search and
// fail_fast). The result lists each point that ran with its error or figures. Never fails: a
// point's error is recorded with it.
SweepResult RunSweep(const SweepPlan& plan, const SweepPointRunner& run);

// The tables. The first line of the CSV and the "generator" member of the JSON carry
// kSweepGeneratorTag, by which a later sweep recognises the files it may replace.
inline constexpr char kSweepGeneratorTag[] = "dlio-run sweep";
// One row per point that ran: index, name, one column per axis, status, AU, samples/s, MB/s,
// epochs, epoch seconds (';'-separated), first-epoch and steady figures, meets_target (a search),
// output folder, error. Fields are quoted as RFC 4180 says when needed.
std::string SweepCsv(const SweepResult& result);
// {"generator", "axes", "until_au_below", "grid_points", "stopped_early", "points": [...],
//  "search": {"key", "target_au_percent", "best" (with one line), "lines": [...]}}.
std::string SweepJson(const SweepResult& result);
// The table printed at the end, then SweepSearchText.
std::string SweepTable(const SweepResult& result);
// The search's answer, a line per combination of the other axes: "largest KEY with AU >= X%
// [with K=V, ...]: VALUE (why it stopped)"; "" without a search.
std::string SweepSearchText(const SweepResult& result);
// AU and throughput against the last axis, one line per combination of the other axes, the
// target as a dashed line: one standalone SVG image (two charts stacked).
std::string SweepSvg(const SweepResult& result);
// The two charts and the table as one self-contained HTML page (the profiling report's style).
std::string SweepHtml(const SweepResult& result, const std::string& title);

}  // namespace dlio
