#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "dlio/profile_report.h"

namespace dlio {
namespace {

Status ReadNumbers(const nlohmann::json& metric, const std::string& key, const std::string& path,
                   std::vector<double>* out) {
  const auto it = metric.find(key);
  if (it == metric.end() || it->is_null()) return Status::OK();
  if (!it->is_array()) {
    return Status::Corruption(path, ": metric.", key, " is not an array");
  }
  for (size_t i = 0; i < it->size(); ++i) {
    if (!(*it)[i].is_number()) {
      return Status::Corruption(path, ": metric.", key, "[", i, "] is not a number");
    }
    out->push_back((*it)[i].get<double>());
  }
  return Status::OK();
}

}  // namespace

Result<RunSummary> ReadRunSummary(const std::string& summary_json_path) {
  std::ifstream in(summary_json_path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open dlio run summary ", summary_json_path);
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return Status::Corruption(summary_json_path, " is not a JSON object");
  }
  RunSummary run;
  run.source = summary_json_path;
  const auto metric = doc.find("metric");
  if (metric == doc.end()) return run;
  if (!metric->is_object())
    return Status::Corruption(summary_json_path, ": metric is not an object");
  DLIO_RETURN_NOT_OK(
      ReadNumbers(*metric, "train_au_percentage", summary_json_path, &run.au_percentage));
  DLIO_RETURN_NOT_OK(ReadNumbers(*metric, "train_throughput_samples_per_second", summary_json_path,
                                 &run.throughput_samples_s));
  return run;
}

}  // namespace dlio
