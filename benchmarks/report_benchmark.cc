// Rendering rate and page size of the HTML report on a large in-memory trace: 8 threads reading
// 1024 files (half sequential, half random offsets) with a compute event every 8 reads. Items
// are trace events (items_per_second: events/s); counter page_MiB is the size of the page, which
// the point cap of the offset charts bounds whatever the event count.
#include <benchmark/benchmark.h>

#include <string>

#include "dlio/profile.h"
#include "dlio/profile_analysis.h"
#include "dlio/profile_report.h"

namespace {

dlio::ProfileTrace MakeTrace(int64_t events) {
  dlio::ProfileTrace trace;
  trace.Reserve(static_cast<size_t>(events));
  std::vector<std::string> files;
  for (int i = 0; i < 1024; ++i) files.push_back("/data/train/img_" + std::to_string(i) + ".npz");
  uint64_t x = 88172645463325252ULL;
  for (int64_t i = 0; i < events; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    dlio::ProfileEvent e;
    e.pid = 1000;
    e.tid = 1000 + static_cast<int32_t>(i % 8);
    e.start_us = 1'700'000'000'000'000 + i * 2;
    if (i % 9 == 8) {
      e.name = "ai.compute.step";
      e.category = "ai";
      e.dur_us = 12;
      e.kind = dlio::OpKind::kOther;
    } else {
      const int file = static_cast<int>((i / 64) % 1024);
      e.name = "pread64";
      e.category = "POSIX";
      e.path = files[file];
      e.dur_us = 3;
      e.size = e.ret = 262144;
      e.offset = file % 2 == 0 ? (i % 64) * 262144 : static_cast<int64_t>(x % 64) * 262144;
      e.kind = dlio::OpKind::kRead;
    }
    trace.Add(e);
  }
  return trace;
}

void BM_RenderHtmlReport(benchmark::State& state) {
  const dlio::ProfileTrace trace = MakeTrace(state.range(0));
  const dlio::TraceAnalysis analysis = dlio::AnalyzeTrace(trace);
  size_t bytes = 0;
  for (auto _ : state) {
    const std::string page = dlio::RenderHtmlReport(trace, analysis);
    bytes = page.size();
    benchmark::DoNotOptimize(page.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.counters["page_MiB"] = static_cast<double>(bytes) / (1024.0 * 1024.0);
}
BENCHMARK(BM_RenderHtmlReport)->Arg(1'000'000)->Arg(10'000'000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
