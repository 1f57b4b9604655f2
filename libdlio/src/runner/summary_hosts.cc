#include "runner/summary_hosts.h"

#include <algorithm>
#include <fstream>
#include <thread>

#include "core/host_memory.h"

namespace dlio {
namespace {

using json = nlohmann::json;

std::string Strip(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

}  // namespace

void AddHostDigest(json* digest) {
  (*digest)["host_memory_bytes"] = HostMemoryBytes();
  (*digest)["host_cpus"] = std::thread::hardware_concurrency();
}

json ProcKeyValues(const std::string& path) {
  json out = json::object();
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    // As DLIO: only lines with exactly one ':' count.
    if (std::count(line.begin(), line.end(), ':') != 1) continue;
    const size_t colon = line.find(':');
    const std::string key = Strip(line.substr(0, colon));
    if (key != "processor") out[key] = Strip(line.substr(colon + 1));
  }
  return out;
}

double DataSizePerHostGB(const WorkloadConfig& config, const std::vector<json>& ranks, int world) {
  const std::string first = ranks.empty() ? "" : ranks[0].value("hostname", std::string());
  const uint64_t per_node =
      static_cast<uint64_t>(std::count_if(ranks.begin(), ranks.end(), [&](const json& r) {
        return r.value("hostname", std::string()) == first;
      }));
  const uint64_t samples = config.dataset.num_samples_per_file * config.dataset.num_files_train;
  return static_cast<double>(per_node) * static_cast<double>(samples / std::max(1, world)) *
         static_cast<double>(config.dataset.record_length_bytes) / kGiB;
}

void AddDlioHostKeys(const WorkloadConfig& config, const std::vector<json>& ranks, int world,
                     json* summary) {
  std::vector<std::string> hosts;
  json memory_gb = json::array(), cpus = json::array();
  for (const auto& r : ranks) {
    const std::string host = r.value("hostname", std::string());
    if (std::find(hosts.begin(), hosts.end(), host) != hosts.end()) continue;
    hosts.push_back(host);
    memory_gb.push_back(r.value("host_memory_bytes", uint64_t{0}) / kGiB);
    cpus.push_back(r.value("host_cpus", uint64_t{0}));
  }
  const double per_host_gb = DataSizePerHostGB(config, ranks, world);
  json caching = json::array();
  for (const auto& m : memory_gb) caching.push_back(m.get<double>() <= per_host_gb ? 0 : 1);
  const json cpuinfo = ProcKeyValues("/proc/cpuinfo");
  (*summary)["host_memory_GB"] = memory_gb;
  (*summary)["host_cpu_count"] = cpus;
  (*summary)["data_size_per_host_GB"] = per_host_gb;
  (*summary)["potential_caching"] = caching;
  (*summary)["host_processor_name"] = cpuinfo.value("model name", std::string());
  (*summary)["host_cpuinfo"] = cpuinfo;
  (*summary)["host_meminfo"] = ProcKeyValues("/proc/meminfo");
}

}  // namespace dlio
