// Helpers of the pytorch pipeline's tests (worker_pipeline_test.cc, worker_memory_test.cc): a
// pipeline built from the registry with worker traces under a temporary folder, the plan of a
// FakeSource, an epoch drained and checked, and whether any child process is left.
#pragma once

#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "dlio/pipeline.h"
#include "dlio/registries.h"
#include "dlio/tracer.h"
#include "pipeline/fake_source.h"
#include "pipeline/pytorch_options.h"
#include "test_util.h"

namespace dlio::worker_test {

using testing::FakeSource;
using testing::TempDir;

// The pytorch pipeline's own options in `o` (pipeline/pytorch_options.h).
inline PytorchLoaderOptions& Own(PipelineOptions& o) {
  return o.sections.Get<PytorchLoaderOptions>();
}

inline std::vector<SampleRef> PlanOf(const FakeSource& source) {
  std::vector<SampleRef> plan;
  for (uint32_t f = 0; f < source.num_files(); ++f) {
    for (uint64_t i = 0; i < source.samples_per_file()[f]; ++i) plan.push_back({f, i});
  }
  return plan;
}

struct Fixture {
  TempDir dir;
  MemoryTracer tracer;  // enabled: the workers write their own traces under dir
  std::unique_ptr<Pipeline> Make(PipelineOptions options, DataSource* source) {
    Registries registries;
    REQUIRE(RegisterBuiltinPipelines(&registries.pipelines).ok());
    auto factory = registries.pipelines.Get("pytorch");
    REQUIRE(factory.ok());
    PipelineEnv env;
    env.source = source;
    env.tracer = &tracer;
    options.name = "pytorch";
    Own(options).worker_trace_prefix = dir / "trace-0";
    auto pipeline = (*factory)(options, env);
    INFO(pipeline.status().ToString());
    REQUIRE(pipeline.ok());
    return std::move(pipeline).value();
  }
  // Worker trace files, by the OS pid in their names.
  std::map<int, std::string> WorkerTraces() const {
    static const std::regex kName(R"(trace-0-worker-(\d+)-(\d+)\.pfw)");
    std::map<int, std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
      std::smatch m;
      const std::string name = e.path().filename().string();
      if (std::regex_match(name, m, kName)) out[std::stoi(m[2].str())] = e.path().string();
    }
    return out;
  }
  std::map<int, std::string> WaitForWorkers(size_t n) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    auto traces = WorkerTraces();
    while (traces.size() < n && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      traces = WorkerTraces();
    }
    return traces;
  }
};

inline bool NoChildren() { return ::waitpid(-1, nullptr, WNOHANG) == -1 && errno == ECHILD; }

// Reads an epoch; every batch in plan order with the right bytes.
inline void DrainChecked(Pipeline* p, const FakeSource& source, const std::vector<SampleRef>& plan,
                         uint64_t batch_size) {
  BatchLease lease;
  bool end = false;
  uint64_t next = 0;
  int64_t k = 0;
  while (true) {
    Status st = p->Next(&lease, &end);
    INFO(st.ToString());
    REQUIRE(st.ok());
    if (end) break;
    REQUIRE(lease->index == k++);
    for (const Sample& s : lease->samples) {
      REQUIRE(s.ref == plan[next++]);
      REQUIRE(source.Matches(s.ref, s.data, s.size));
    }
  }
  REQUIRE(next == plan.size() / batch_size * batch_size);
}

}  // namespace dlio::worker_test
