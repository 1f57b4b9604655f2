#include "storage/s3/s3_stats_block.h"

#include <nlohmann/json.hpp>
#include <string>

namespace dlio::s3 {

StatsBlock S3StatsBlock(const S3Stats& s) {
  const nlohmann::json j = {
      {"requests", s.requests()},
      {"get", s.get},
      {"put", s.put},
      {"head", s.head},
      {"list", s.list},
      {"delete", s.del},
      {"multipart", s.multipart},
      {"copy", s.copy},
      {"bytes_down", s.bytes_down},
      {"bytes_up", s.bytes_up},
      {"retries", s.retries},
      {"errors", s.errors},
      {"get_latency_ms", {{"p50", s.get_p50_ms}, {"p90", s.get_p90_ms}, {"p99", s.get_p99_ms}}}};
  StatsBlock block;
  block.name = "s3";
  block.epoch_json = j.dump();
  block.progress = "s3 " + std::to_string(s.requests()) + " requests (" +
                   std::to_string(s.retries) + " retries)";
  return block;
}

}  // namespace dlio::s3
