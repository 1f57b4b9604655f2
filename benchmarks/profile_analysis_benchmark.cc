// AnalyzeTrace on a 10 M-event synthetic training trace (8 threads, 1024 files; per thread and
// step: open, 5 preads of 256 KiB, close, a compute event), in memory and with the import of the
// same events from a .pfw written by dlio's own tracer. Items are events: items_per_second is
// events/s.
//
//   build/benchmarks/profile_analysis_benchmark --benchmark_filter=Analyze
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "dlio/profile_analysis.h"
#include "dlio/tracer.h"

namespace {

constexpr int64_t kEvents = 10000000;
constexpr int64_t kBlock = 262144;

// Event i of the synthetic trace.
dlio::TraceEvent Synthetic(int64_t i, const int32_t* file_ids) {
  dlio::TraceEvent e;
  const int64_t thread = i % 8;
  const int64_t k = i / 8 % 8;  // position in the thread's step
  e.tid = static_cast<int32_t>(100 + thread);
  e.start_us = 1700000000000000 + i * 3;
  e.dur_us = 2 + i % 7;
  e.file_id = file_ids[(i / 64 + thread * 128) % 1024];
  e.epoch = 1;
  if (k == 0) {
    e.name = "open64";
    e.cat = "POSIX";
    e.ret = 3;
  } else if (k <= 5) {
    e.name = "pread";
    e.cat = "POSIX";
    e.offset = (k - 1) * kBlock;
    e.count = e.ret = kBlock;
  } else if (k == 6) {
    e.name = "close";
    e.cat = "POSIX";
    e.ret = 0;
  } else {
    e.name = "ai.compute.step";
    e.cat = "ai";
    e.file_id = -1;
    e.dur_us = 50;
  }
  return e;
}

// The synthetic events straight into a ProfileTrace: 4 processes of 2 threads.
const dlio::ProfileTrace& MemoryTrace() {
  static dlio::ProfileTrace* trace = [] {
    auto* t = new dlio::ProfileTrace;
    t->Reserve(kEvents);
    std::vector<std::string> paths;
    int32_t ids[1024];
    for (int i = 0; i < 1024; ++i) {
      paths.push_back("/data/train/img_" + std::to_string(i) + "_of_1024.npz");
      ids[i] = i;
    }
    for (int64_t i = 0; i < kEvents; ++i) {
      const dlio::TraceEvent e = Synthetic(i, ids);
      dlio::ProfileEvent p;
      p.pid = 1 + (e.tid - 100) / 2;
      p.tid = e.tid;
      p.name = e.name;
      p.category = e.cat;
      p.path = e.file_id >= 0 ? std::string_view(paths[e.file_id]) : std::string_view();
      p.start_us = e.start_us;
      p.dur_us = e.dur_us;
      p.offset = e.offset;
      p.size = e.count;
      p.ret = e.ret;
      p.kind = dlio::OpKindOfCall(p.name);
      t->Add(p);
    }
    return t;
  }();
  return *trace;
}

// The same events as a .pfw (one process), written once; removed at exit.
const std::string& TracePath() {
  static std::string path;
  if (!path.empty()) return path;
  path = "/tmp/dlio_profile_analysis_benchmark_" + std::to_string(getpid()) + ".pfw";
  dlio::TraceFileOptions options;
  options.path = path;
  options.pid = 1;
  auto tracer = std::move(dlio::MakeTraceFileTracer(options)).value();
  int32_t ids[1024];
  for (int i = 0; i < 1024; ++i) {
    ids[i] = tracer->InternFile("/data/train/img_" + std::to_string(i) + "_of_1024.npz");
  }
  for (int64_t i = 0; i < kEvents; ++i) tracer->Record(Synthetic(i, ids));
  if (!tracer->Flush().ok()) std::abort();
  std::atexit([] { std::remove(path.c_str()); });
  return path;
}

void BM_AnalyzeTrace(benchmark::State& state) {
  const dlio::ProfileTrace& trace = MemoryTrace();
  for (auto _ : state) benchmark::DoNotOptimize(dlio::AnalyzeTrace(trace));
  state.SetItemsProcessed(state.iterations() * kEvents);
}
BENCHMARK(BM_AnalyzeTrace)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_ImportAndAnalyze(benchmark::State& state) {
  const std::string& path = TracePath();
  for (auto _ : state) {
    dlio::ProfileTrace trace;
    auto stats = dlio::ImportTrace(path, &trace);
    if (!stats.ok()) state.SkipWithError(stats.status().ToString().c_str());
    benchmark::DoNotOptimize(dlio::AnalyzeTrace(trace));
  }
  state.SetItemsProcessed(state.iterations() * kEvents);
}
BENCHMARK(BM_ImportAndAnalyze)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
