// AnalysisJson: the analysis with the stable keys of docs/profiling.md ("dlio-run analyze").
#include <nlohmann/json.hpp>

#include "dlio/profile_analysis.h"

namespace dlio {
namespace {

using Json = nlohmann::ordered_json;

Json SizesJson(const SizeStats& s) {
  return Json{{"count", s.count}, {"min", s.min}, {"p25", s.p25}, {"median", s.median},
              {"mean", s.mean},   {"p75", s.p75}, {"max", s.max}, {"total", s.total}};
}

Json BinsJson(const std::array<int64_t, 10>& bins) {
  Json j = Json::object();
  for (int b = 0; b < 10; ++b) j[std::string(DarshanSizeBinName(b))] = bins[b];
  return j;
}

Json PairsJson(const std::vector<std::pair<int64_t, int64_t>>& pairs, const char* key) {
  Json j = Json::array();
  for (const auto& [value, count] : pairs) j.push_back(Json{{key, value}, {"count", count}});
  return j;
}

Json FileJson(const FileAnalysis& f) {
  const FileCounters& c = f.counters;
  return Json{{"path", c.path},
              {"pattern", AccessPatternName(f.pattern)},
              {"opens", c.opens},
              {"closes", c.closes},
              {"reads", c.reads},
              {"writes", c.writes},
              {"seeks", c.seeks},
              {"stats", c.stats},
              {"syncs", c.syncs},
              {"mmaps", c.mmaps},
              {"bytes_read", c.bytes_read},
              {"bytes_written", c.bytes_written},
              {"max_byte_read", c.max_byte_read},
              {"max_byte_written", c.max_byte_written},
              {"seq_reads", c.seq_reads},
              {"consec_reads", c.consec_reads},
              {"seq_writes", c.seq_writes},
              {"consec_writes", c.consec_writes},
              {"rw_switches", c.rw_switches},
              {"size_read_bins", BinsJson(c.size_read_bins)},
              {"size_write_bins", BinsJson(c.size_write_bins)},
              {"common_access", PairsJson(c.common_access, "size")},
              {"common_strides", PairsJson(c.common_strides, "stride")},
              {"read_time_s", c.read_time_s},
              {"write_time_s", c.write_time_s},
              {"meta_time_s", c.meta_time_s},
              {"pids", c.pids}};
}

Json FunctionJson(const FunctionStats& f) {
  return Json{{"name", f.name},   {"category", f.category}, {"kind", OpKindName(f.kind)},
              {"count", f.count}, {"time_s", f.time_s},     {"size", SizesJson(f.size)}};
}

Json ProcessJson(const ProcessAnalysis& p) {
  return Json{{"pid", p.pid},
              {"name", p.name},
              {"threads", p.threads},
              {"events", p.events},
              {"io_time_s", p.io_time_s},
              {"unoverlapped_io_time_s", p.unoverlapped_io_time_s},
              {"bytes_read", p.bytes_read},
              {"bytes_written", p.bytes_written}};
}

Json BucketJson(const TimelineBucket& b) {
  return Json{{"start_us", b.start_us},     {"read_ops", b.read_ops},
              {"write_ops", b.write_ops},   {"metadata_ops", b.metadata_ops},
              {"bytes_read", b.bytes_read}, {"bytes_written", b.bytes_written},
              {"io_busy_s", b.io_busy_s}};
}

template <typename T, typename F>
Json ArrayJson(const std::vector<T>& items, F to_json) {
  Json j = Json::array();
  for (const auto& item : items) j.push_back(to_json(item));
  return j;
}

}  // namespace

std::string AnalysisJson(const TraceAnalysis& a) {
  Json j = Json{{"format", "dlio-analysis"},
                {"version", 1},
                {"events", a.events},
                {"start_us", a.start_us},
                {"end_us", a.end_us},
                {"job_time_s", a.job_time_s},
                {"io_time_s", a.io_time_s},
                {"io_wall_time_s", a.io_wall_time_s},
                {"unoverlapped_io_time_s", a.unoverlapped_io_time_s},
                {"compute_time_s", a.compute_time_s},
                {"app_time_s", a.app_time_s},
                {"has_app_events", a.has_app_events},
                {"bytes_read", a.bytes_read},
                {"bytes_written", a.bytes_written},
                {"read_bandwidth_mib_s", a.read_bandwidth_mib_s},
                {"write_bandwidth_mib_s", a.write_bandwidth_mib_s},
                {"files", a.files},
                {"processes", a.processes},
                {"threads", a.threads},
                {"data_ops", a.data_ops},
                {"metadata_ops", a.metadata_ops},
                {"data_time_s", a.data_time_s},
                {"metadata_time_s", a.metadata_time_s},
                {"dxt_posix_only", a.dxt_posix_only},
                {"ignored_mpiio_events", a.ignored_mpiio_events},
                {"read_sizes", SizesJson(a.read_sizes)},
                {"write_sizes", SizesJson(a.write_sizes)},
                {"functions", ArrayJson(a.functions, FunctionJson)},
                {"files_detail", ArrayJson(a.files_detail, FileJson)},
                {"process_detail", ArrayJson(a.process_detail, ProcessJson)},
                {"timeline_bucket_us", a.timeline_bucket_us},
                {"timeline", ArrayJson(a.timeline, BucketJson)}};
  // Paths in traces need not be UTF-8: invalid bytes become U+FFFD (dump would throw).
  return j.dump(1, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace dlio
