// The sweep's tables: CSV, JSON and the text table printed at the end.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "dlio/sweep.h"
#include "dlio/units.h"

namespace dlio {
namespace {

using json = nlohmann::json;

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// A value as JSON: an integer or a number when its text is one, else the text.
json ValueJson(const std::string& v) {
  if (v.empty()) return v;
  size_t used = 0;
  try {
    if (v.find_first_of(".eE") == std::string::npos) {
      const long long n = std::stoll(v, &used);
      if (used == v.size()) return n;
    } else {
      const double d = std::stod(v, &used);
      if (used == v.size() && std::isfinite(d)) return d;
    }
  } catch (const std::exception&) {
  }
  return v;
}

json ValuesJson(const std::vector<SweepAxis>& axes, const std::vector<std::string>& values) {
  json o = json::object();
  for (size_t i = 0; i < axes.size() && i < values.size(); ++i) {
    o[axes[i].key] = ValueJson(values[i]);
  }
  return o;
}

json PointJson(const SweepResult& r, const SweepPointResult& p) {
  json j;
  j["index"] = p.index;
  j["name"] = p.name;
  j["values"] = ValuesJson(r.axes, p.point.values);
  j["status"] = p.ok() ? "ok" : "error";
  if (!p.ok()) {
    j["error"] = p.error;
    return j;
  }
  const SweepMeasurement& m = p.m;
  j["au_percent"] = m.au_percent;
  j["samples_per_second"] = m.samples_per_s;
  j["io_MB_per_second"] = m.bytes_per_s / kMB;
  j["epoch_seconds"] = m.epoch_seconds;
  if (m.accelerators > 0) j["num_accelerators"] = m.accelerators;
  if (m.has_steady) {
    j["first_epoch_au_percent"] = m.first_epoch_au_percent;
    j["first_epoch_samples_per_second"] = m.first_epoch_samples_per_s;
    j["steady_au_percent"] = m.steady_au_percent;
    j["steady_samples_per_second"] = m.steady_samples_per_s;
  }
  if (r.until_au_below) j["meets_target"] = p.meets_target;
  j["output_folder"] = m.output_folder;
  if (!m.config_digest.empty()) j["config_digest"] = m.config_digest;
  if (m.resumed) j["resumed"] = true;
  return j;
}

json SearchJson(const SweepResult& r) {
  json s;
  s["key"] = r.axes.back().key;
  s["target_au_percent"] = *r.until_au_below;
  s["lines"] = json::array();
  for (const auto& line : r.search) {
    json l;
    l["fixed"] = ValuesJson(r.axes, line.fixed);
    l["best"] = line.best ? ValueJson(*line.best) : json(nullptr);
    l["stopped_at"] = line.stopped_at ? ValueJson(*line.stopped_at) : json(nullptr);
    l["stop_reason"] = line.stop_reason;
    s["lines"].push_back(std::move(l));
  }
  if (r.search.size() == 1) s["best"] = s["lines"][0]["best"];
  return s;
}

std::string Pad(const std::string& s, size_t width, bool right) {
  if (s.size() >= width) return s;
  const std::string fill(width - s.size(), ' ');
  return right ? fill + s : s + fill;
}

}  // namespace

std::string SweepCsv(const SweepResult& r) {
  std::ostringstream o;
  o << "index,name";
  for (const auto& a : r.axes) o << "," << CsvField(a.key);
  o << ",status,au_percent,samples_per_second,io_MB_per_second,epochs,epoch_seconds,"
       "first_epoch_au_percent,first_epoch_samples_per_second,steady_au_percent,"
       "steady_samples_per_second,num_accelerators,meets_target,output_folder,error\n";
  for (const auto& p : r.points) {
    o << p.index << "," << CsvField(p.name);
    for (const auto& v : p.point.values) o << "," << CsvField(v);
    o << "," << (p.ok() ? "ok" : "error") << ",";
    const SweepMeasurement& m = p.m;
    if (p.ok()) {
      std::string seconds;
      for (double s : m.epoch_seconds) {
        if (!seconds.empty()) seconds += ";";
        seconds += Fixed(s, 4);
      }
      o << Fixed(m.au_percent, 3) << "," << Fixed(m.samples_per_s, 3) << ","
        << Fixed(m.bytes_per_s / kMB, 3) << "," << m.epoch_seconds.size() << "," << seconds;
      if (m.has_steady) {
        o << "," << Fixed(m.first_epoch_au_percent, 3) << ","
          << Fixed(m.first_epoch_samples_per_s, 3) << "," << Fixed(m.steady_au_percent, 3) << ","
          << Fixed(m.steady_samples_per_s, 3);
      } else {
        o << ",,,,";
      }
      o << "," << (m.accelerators > 0 ? std::to_string(m.accelerators) : "");
    } else {
      o << ",,,,,,,,,";
    }
    o << "," << (r.until_au_below && p.ok() ? (p.meets_target ? "true" : "false") : "");
    o << "," << CsvField(m.output_folder) << "," << CsvField(p.error) << "\n";
  }
  return o.str();
}

std::string SweepJson(const SweepResult& r) {
  json j;
  j["generator"] = kSweepGeneratorTag;
  j["axes"] = json::array();
  for (const auto& a : r.axes) {
    json values = json::array();
    for (const auto& v : a.values) values.push_back(ValueJson(v));
    j["axes"].push_back({{"key", a.key}, {"values", values}});
  }
  j["until_au_below"] = r.until_au_below ? json(*r.until_au_below) : json(nullptr);
  j["grid_points"] = r.grid_points;
  j["points_run"] = r.points.size();
  j["points_failed"] = r.failed();
  j["stopped_early"] = r.stopped_early;
  j["points"] = json::array();
  for (const auto& p : r.points) j["points"].push_back(PointJson(r, p));
  if (r.until_au_below && !r.axes.empty()) j["search"] = SearchJson(r);
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string SweepSearchText(const SweepResult& r) {
  std::ostringstream o;
  for (const auto& s : r.search) {
    std::string fixed;
    for (size_t i = 0; i < s.fixed.size(); ++i) {
      fixed += (i ? ", " : " with ") + r.axes[i].key + "=" + s.fixed[i];
    }
    o << "largest " << r.axes.back().key << " with AU >= " << Fixed(*r.until_au_below, 1) << "%"
      << fixed << ": " << (s.best ? *s.best : "none");
    if (s.stop_reason == "au_below") o << " (AU below the target at " << *s.stopped_at << ")";
    if (s.stop_reason == "error") o << " (" << *s.stopped_at << " failed)";
    if (s.stop_reason == "all_met") o << " (every value met the target: try larger ones)";
    if (s.stop_reason == "not_run" || s.stop_reason == "incomplete") o << " (not finished)";
    o << "\n";
  }
  return o.str();
}

std::string SweepTable(const SweepResult& r) {
  std::vector<std::string> head = {"point"};
  for (const auto& a : r.axes) head.push_back(a.key);
  for (const char* h : {"AU %", "samples/s", "MB/s", "epoch 1 AU %", "steady AU %"}) {
    head.push_back(h);
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : r.points) {
    std::vector<std::string> row = {std::to_string(p.index) + (p.m.resumed ? "*" : "")};
    for (const auto& v : p.point.values) row.push_back(v);
    if (p.ok()) {
      row.push_back(Fixed(p.m.au_percent, 2) +
                    (r.until_au_below ? (p.meets_target ? " ok" : " low") : ""));
      row.push_back(Fixed(p.m.samples_per_s, 1));
      row.push_back(Fixed(p.m.bytes_per_s / kMB, 1));
      row.push_back(p.m.has_steady ? Fixed(p.m.first_epoch_au_percent, 2) : "-");
      row.push_back(p.m.has_steady ? Fixed(p.m.steady_au_percent, 2) : "-");
    } else {
      row.push_back("error: " + p.error);
    }
    rows.push_back(std::move(row));
  }
  std::vector<size_t> width(head.size(), 0);
  for (size_t c = 0; c < head.size(); ++c) width[c] = head[c].size();
  for (const auto& row : rows) {
    // An error row's last cell runs on past the columns: it sets no width.
    const size_t sized = row.size() == head.size() ? row.size() : row.size() - 1;
    for (size_t c = 0; c < sized; ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::ostringstream o;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (size_t c = 0; c < cells.size(); ++c) {
      const bool last = c + 1 == cells.size();
      s += (c ? "  " : "") +
           (last && cells.size() < head.size() ? cells[c] : Pad(cells[c], width[c], c > 0));
    }
    o << s << "\n";
  };
  line(head);
  for (const auto& row : rows) line(row);
  if (std::any_of(r.points.begin(), r.points.end(), [](const auto& p) { return p.m.resumed; })) {
    o << "* taken over from the earlier sweep (--resume), not run again\n";
  }
  const size_t skipped = r.grid_points - r.points.size();
  if (skipped > 0) {
    o << skipped << " of " << r.grid_points << " grid points not run"
      << (r.stopped_early ? " (--fail-fast stopped the sweep)" : " (the search stopped)") << "\n";
  }
  o << SweepSearchText(r);
  return o.str();
}

}  // namespace dlio
