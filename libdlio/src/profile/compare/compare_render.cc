// Text and JSON renderings of a TraceComparison (profile_compare.h; keys in docs/profiling.md).
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "dlio/profile_compare.h"

namespace dlio {
namespace {

// A contribution below this does not make a feature "differ" (rounding noise of the cosine).
constexpr double kDiffersAbove = 1e-4;

std::string Fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string JsonNumber(double v) { return Fmt("%.12g", v); }

// A JSON string; bytes that are not UTF-8 (labels are paths) become U+FFFD.
std::string JsonString(std::string_view s) {
  return nlohmann::json(std::string(s))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string KsText(const char* what, const KsResult& ks) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "  %-22s D = %.4f  (n %lld / %lld", what, ks.d,
                static_cast<long long>(ks.n_a), static_cast<long long>(ks.n_b));
  std::string s = buf;
  if (ks.d_crit_05 > 0) {
    s += Fmt(", differ at the 5%% level above %.4f", ks.d_crit_05);
    s += ks.d > ks.d_crit_05 ? ": differ" : ": alike";
  }
  return s + ")\n";
}

std::string KsJson(const KsResult& ks) {
  return "{\"d\": " + JsonNumber(ks.d) + ", \"n_a\": " + std::to_string(ks.n_a) +
         ", \"n_b\": " + std::to_string(ks.n_b) + ", \"d_crit_05\": " + JsonNumber(ks.d_crit_05) +
         "}";
}

// "N reads, M writes at POSIX, STDIO": what a run's figures count, and at which call level.
std::string RunText(int64_t reads, int64_t writes, const std::vector<std::string>& levels) {
  std::string s = std::to_string(reads) + " reads, " + std::to_string(writes) + " writes";
  for (size_t i = 0; i < levels.size(); ++i) s += (i ? ", " : " at ") + levels[i];
  return s;
}

// ", N events on F files left out (runtime and launchers' I/O: P by path, S scratch)".
std::string LeftOutText(const RuntimeIoLeftOut& l) {
  if (l.events == 0) return "";
  return ", " + std::to_string(l.events) + " events on " +
         std::to_string(l.files + l.scratch_files) + " files left out as the runtime's I/O (" +
         std::to_string(l.files) + " by path, " + std::to_string(l.scratch_files) + " scratch)";
}

std::string RunJson(const std::string& label, int64_t reads, int64_t writes,
                    const std::vector<std::string>& levels, const RuntimeIoLeftOut& left_out) {
  std::string s = "{\"label\": " + JsonString(label) + ", \"reads\": " + std::to_string(reads) +
                  ", \"writes\": " + std::to_string(writes) + ", \"levels\": [";
  for (size_t i = 0; i < levels.size(); ++i) s += (i ? ", " : "") + JsonString(levels[i]);
  return s + "], \"left_out\": {\"files\": " + std::to_string(left_out.files) +
         ", \"scratch_files\": " + std::to_string(left_out.scratch_files) +
         ", \"events\": " + std::to_string(left_out.events) + "}}";
}

std::vector<CompareFeature> Differing(const TraceComparison& c) {
  std::vector<CompareFeature> out;
  for (CompareFeature f : c.ByContribution()) {
    if (c.features[static_cast<int>(f)].contribution > kDiffersAbove) out.push_back(f);
  }
  return out;
}

}  // namespace

std::string ComparisonText(const TraceComparison& c) {
  std::string s = std::string(kComparisonTextTitle) + "\nA: " + c.label_a + " (" +
                  RunText(c.reads_a, c.writes_a, c.levels_a) + LeftOutText(c.left_out_a) + ")\n";
  s += "B: " + c.label_b + " (" + RunText(c.reads_b, c.writes_b, c.levels_b) +
       LeftOutText(c.left_out_b) + ")\n";
  s += Fmt("similarity: %.4f", c.similarity);
  s += "  (cosine of the features divided by max(A, B); the DLIO paper: 0.94-0.97)\n";
  s +=
      c.level == "kernel"
          ? "level: kernel (system calls; a stdio call counts as the reads and writes beneath it)\n"
          : "level: call (a run records stdio calls without the system calls beneath them)\n";
  s += c.writes_scored ? "(read and write features, at the call levels above)\n\n"
                       : "(read features only: neither run writes)\n\n";
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-20s %-7s %14s %14s %6s %6s %10s %8s\n", "feature", "unit", "A",
                "B", "A/max", "B/max", "B/A", "costs");
  s += buf;
  for (CompareFeature f : c.ByContribution()) {
    if (!c.writes_scored && static_cast<int>(f) >= kReadFeatureCount) continue;
    const FeatureComparison& r = c.features[static_cast<int>(f)];
    std::snprintf(buf, sizeof buf, "%-20s %-7s %14.6g %14.6g %6.3f %6.3f %10.4g %8.4f%s\n",
                  std::string(CompareFeatureName(f)).c_str(),
                  std::string(CompareFeatureUnit(f)).c_str(), r.a, r.b, r.norm_a, r.norm_b, r.ratio,
                  r.contribution, r.contribution > kDiffersAbove ? "  <- differs" : "");
    s += buf;
  }
  s += "(costs: how much the similarity would rise if that feature alone were equal)\n\n";
  s += "Kolmogorov-Smirnov distances (0 same distribution, 1 disjoint):\n";
  s += KsText("request sizes", c.request_size_ks);
  s += KsText("inter-request gaps", c.gap_ks);
  if (c.writes_scored) s += KsText("write request sizes", c.write_size_ks);
  return s;
}

std::string ComparisonJson(const TraceComparison& c) {
  std::string s =
      "{\n  \"a\": " + RunJson(c.label_a, c.reads_a, c.writes_a, c.levels_a, c.left_out_a) + ",\n";
  s += "  \"b\": " + RunJson(c.label_b, c.reads_b, c.writes_b, c.levels_b, c.left_out_b) + ",\n";
  s += "  \"similarity\": " + JsonNumber(c.similarity) + ",\n";
  s += std::string("  \"writes_scored\": ") + (c.writes_scored ? "true" : "false") + ",\n";
  s += "  \"level\": " + JsonString(c.level) + ",\n";
  s += "  \"features\": {";
  for (size_t i = 0; i < c.features.size(); ++i) {
    const FeatureComparison& r = c.features[i];
    s += i ? ",\n    " : "\n    ";
    s += JsonString(CompareFeatureName(r.feature)) +
         ": {\"unit\": " + JsonString(CompareFeatureUnit(r.feature)) +
         ", \"a\": " + JsonNumber(r.a) + ", \"b\": " + JsonNumber(r.b) +
         ", \"norm_a\": " + JsonNumber(r.norm_a) + ", \"norm_b\": " + JsonNumber(r.norm_b) +
         ", \"ratio\": " + JsonNumber(r.ratio) + ", \"rel_diff\": " + JsonNumber(r.rel_diff) +
         ", \"contribution\": " + JsonNumber(r.contribution) + "}";
  }
  s += "\n  },\n  \"most_different\": [";
  const auto differing = Differing(c);
  for (size_t i = 0; i < differing.size(); ++i) {
    s += (i ? ", " : "") + JsonString(CompareFeatureName(differing[i]));
  }
  s += "],\n  \"ks\": {\"request_size\": " + KsJson(c.request_size_ks) +
       ", \"inter_request_gap_us\": " + KsJson(c.gap_ks) +
       ", \"write_size\": " + KsJson(c.write_size_ks) + "}\n}\n";
  return s;
}

}  // namespace dlio
