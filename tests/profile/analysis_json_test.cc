#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <set>

#include "dlio/profile_analysis.h"
#include "profile/analysis_test_util.h"

namespace dlio {
namespace {

using testing::AddEvent;

std::set<std::string> Keys(const nlohmann::json& j) {
  std::set<std::string> keys;
  for (const auto& item : j.items()) keys.insert(item.key());
  return keys;
}

// The stable keys of docs/profiling.md ("JSON keys"): a key added must be documented and added
// here; a key renamed or removed breaks consumers.
TEST_CASE("AnalysisJson has exactly the documented keys") {
  ProfileTrace t;
  AddEvent(&t, 1, 1, "open", 0, 1, "/d/a", -1, -1, 3);
  AddEvent(&t, 1, 1, "pread64", 1, 4, "/d/a", 0, 10, 10);
  AddEvent(&t, 1, 1, "ai.compute.step", 2, 10);
  const TraceAnalysis a = AnalyzeTrace(t);
  const nlohmann::json j = nlohmann::json::parse(AnalysisJson(a));
  CHECK(Keys(j) == std::set<std::string>{"format",
                                         "version",
                                         "events",
                                         "start_us",
                                         "end_us",
                                         "job_time_s",
                                         "io_time_s",
                                         "io_wall_time_s",
                                         "unoverlapped_io_time_s",
                                         "compute_time_s",
                                         "app_time_s",
                                         "has_app_events",
                                         "bytes_read",
                                         "bytes_written",
                                         "read_bandwidth_mib_s",
                                         "write_bandwidth_mib_s",
                                         "files",
                                         "processes",
                                         "threads",
                                         "data_ops",
                                         "metadata_ops",
                                         "data_time_s",
                                         "metadata_time_s",
                                         "dxt_posix_only",
                                         "ignored_mpiio_events",
                                         "read_sizes",
                                         "write_sizes",
                                         "functions",
                                         "files_detail",
                                         "process_detail",
                                         "timeline_bucket_us",
                                         "timeline"});
  const std::set<std::string> size_keys = {"count", "min", "p25", "median",
                                           "mean",  "p75", "max", "total"};
  CHECK(Keys(j["read_sizes"]) == size_keys);
  REQUIRE(j["functions"].size() == 3);
  CHECK(Keys(j["functions"][0]) ==
        std::set<std::string>{"name", "category", "kind", "count", "time_s", "size"});
  CHECK(Keys(j["functions"][0]["size"]) == size_keys);
  REQUIRE(j["files_detail"].size() == 1);
  const auto& f = j["files_detail"][0];
  CHECK(Keys(f) == std::set<std::string>{"path",
                                         "pattern",
                                         "opens",
                                         "closes",
                                         "reads",
                                         "writes",
                                         "seeks",
                                         "stats",
                                         "syncs",
                                         "mmaps",
                                         "bytes_read",
                                         "bytes_written",
                                         "max_byte_read",
                                         "max_byte_written",
                                         "seq_reads",
                                         "consec_reads",
                                         "seq_writes",
                                         "consec_writes",
                                         "rw_switches",
                                         "size_read_bins",
                                         "size_write_bins",
                                         "common_access",
                                         "common_strides",
                                         "read_time_s",
                                         "write_time_s",
                                         "meta_time_s",
                                         "pids"});
  CHECK(Keys(f["size_read_bins"]) == std::set<std::string>{"0_100", "100_1K", "1K_10K", "10K_100K",
                                                           "100K_1M", "1M_4M", "4M_10M", "10M_100M",
                                                           "100M_1G", "1G_PLUS"});
  REQUIRE(f["common_access"].size() == 1);
  CHECK(Keys(f["common_access"][0]) == std::set<std::string>{"size", "count"});
  CHECK(Keys(f["common_strides"][0]) == std::set<std::string>{"stride", "count"});
  REQUIRE(j["process_detail"].size() == 1);
  CHECK(Keys(j["process_detail"][0]) == std::set<std::string>{"pid", "name", "threads", "events",
                                                              "io_time_s", "unoverlapped_io_time_s",
                                                              "bytes_read", "bytes_written"});
  REQUIRE(!j["timeline"].empty());
  CHECK(Keys(j["timeline"][0]) == std::set<std::string>{"start_us", "read_ops", "write_ops",
                                                        "metadata_ops", "bytes_read",
                                                        "bytes_written", "io_busy_s"});
  // Values, not only keys.
  CHECK(j["format"] == "dlio-analysis");
  CHECK(j["version"] == 1);
  CHECK(j["bytes_read"] == 10);
  CHECK(j["files_detail"][0]["pattern"] == "sequential");
  CHECK(j["files_detail"][0]["size_read_bins"]["0_100"] == 1);
  CHECK(j["functions"][2]["name"] == "pread64");
  CHECK(j["functions"][2]["kind"] == "read");
  CHECK(j["io_wall_time_s"].get<double>() == Approx(5e-6));
  CHECK(j["unoverlapped_io_time_s"].get<double>() == Approx(2e-6));  // [0,5) minus [2,12)
}

TEST_CASE("AnalysisText names every headline figure") {
  ProfileTrace t;
  AddEvent(&t, 1, 1, "pread64", 0, 4, "/d/a", 0, 10, 10);
  const std::string text = AnalysisText(AnalyzeTrace(t));
  for (const char* label : {"job time", "I/O time", "I/O wall time", "unoverlapped I/O", "read ",
                            "written", "data ops", "metadata ops", "Functions", "Processes",
                            "Darshan size bins", "Access patterns", "Timeline", "/d/a"}) {
    CHECK_THAT(text, Catch::Contains(label));
  }
}

}  // namespace
}  // namespace dlio
