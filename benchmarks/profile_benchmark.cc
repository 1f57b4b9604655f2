// Import and analysis rates of the profile module on a trace written by dlio's own tracer
// (1 M pread events over 1024 files). Items are events: items_per_second is events/s.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "dlio/profile.h"
#include "dlio/tracer.h"

namespace {

constexpr int64_t kEvents = 1000000;

// Writes the trace once per process; removed at exit.
const std::string& TracePath(bool gzip) {
  static std::string paths[2];
  std::string& path = paths[gzip ? 1 : 0];
  if (!path.empty()) return path;
  path = "/tmp/dlio_profile_benchmark_" + std::to_string(getpid()) + (gzip ? ".pfw.gz" : ".pfw");
  dlio::TraceFileOptions options;
  options.path = path;
  options.pid = 1;
  auto tracer = std::move(dlio::MakeTraceFileTracer(options)).value();
  int32_t files[1024];
  for (int i = 0; i < 1024; ++i) {
    files[i] = tracer->InternFile("/data/train/img_" + std::to_string(i) + "_of_1024.npz");
  }
  for (int64_t i = 0; i < kEvents; ++i) {
    dlio::TraceEvent e;
    e.name = "pread";
    e.cat = "POSIX";
    e.start_us = 1700000000000000 + i * 3;
    e.dur_us = 2 + i % 7;
    e.file_id = files[i % 1024];
    e.offset = (i / 1024 % 16) * 262144;
    e.count = e.ret = 262144;
    e.epoch = 1;
    e.step = i / 16;
    tracer->Record(e);
  }
  if (!tracer->Flush().ok()) std::abort();
  std::atexit([] {
    for (const auto& p : paths) {
      if (!p.empty()) std::remove(p.c_str());
    }
  });
  return path;
}

void BM_ImportPfw(benchmark::State& state) {
  const std::string& path = TracePath(state.range(0) != 0);
  for (auto _ : state) {
    dlio::ProfileTrace trace;
    auto stats = dlio::ImportPfw(path, &trace);
    if (!stats.ok()) state.SkipWithError(stats.status().ToString().c_str());
    benchmark::DoNotOptimize(trace.size());
  }
  state.SetItemsProcessed(state.iterations() * kEvents);
}
BENCHMARK(BM_ImportPfw)->Arg(0)->Arg(1)->ArgName("gzip")->Unit(benchmark::kMillisecond);

void BM_ComputeFileCounters(benchmark::State& state) {
  dlio::ProfileTrace trace;
  if (!dlio::ImportPfw(TracePath(false), &trace).ok()) std::abort();
  for (auto _ : state) benchmark::DoNotOptimize(dlio::ComputeFileCounters(trace));
  state.SetItemsProcessed(state.iterations() * kEvents);
}
BENCHMARK(BM_ComputeFileCounters)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
