#include "sweep_resume.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "dlio/metrics.h"

namespace dlio_run {
namespace {

using json = nlohmann::json;

double Number(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

dlio::SweepMeasurement FromJson(const json& p) {
  dlio::SweepMeasurement m;
  m.au_percent = Number(p, "au_percent");
  m.samples_per_s = Number(p, "samples_per_second");
  m.bytes_per_s = Number(p, "io_MB_per_second") * dlio::kMB;
  if (p.contains("epoch_seconds") && p["epoch_seconds"].is_array()) {
    for (const auto& s : p["epoch_seconds"])
      m.epoch_seconds.push_back(s.is_number() ? s.get<double>() : 0);
  }
  m.accelerators = static_cast<uint64_t>(Number(p, "num_accelerators"));
  m.has_steady = p.contains("steady_au_percent");
  m.first_epoch_au_percent = Number(p, "first_epoch_au_percent");
  m.first_epoch_samples_per_s = Number(p, "first_epoch_samples_per_second");
  m.steady_au_percent = Number(p, "steady_au_percent");
  m.steady_samples_per_s = Number(p, "steady_samples_per_second");
  m.output_folder = p.value("output_folder", "");
  m.config_digest = p.value("config_digest", "");
  m.resumed = true;
  return m;
}

}  // namespace

dlio::Result<std::map<std::string, dlio::SweepMeasurement>> ReadEarlierSweep(
    const std::string& sweep_json) {
  std::map<std::string, dlio::SweepMeasurement> points;
  std::error_code ec;
  if (!std::filesystem::exists(sweep_json, ec)) return points;
  std::ifstream in(sweep_json, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  const json j = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (!in || j.is_discarded() || !j.is_object() ||
      j.value("generator", "") != dlio::kSweepGeneratorTag || !j["points"].is_array()) {
    return dlio::Status::Corruption(sweep_json, ": not the sweep.json of a dlio-run sweep");
  }
  for (const json& p : j["points"]) {
    if (!p.is_object() || p.value("status", "") != "ok" || !p["name"].is_string()) continue;
    points[p["name"].get<std::string>()] = FromJson(p);
  }
  return points;
}

std::string ConfigDigest(const dlio::WorkloadConfig& config) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a, 64 bits
  for (char c : dlio::ConfigToJson(config)) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace dlio_run
