// Cost of one Tracer::Record() for each tracer, single- and multi-threaded.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "dlio/clock.h"
#include "dlio/tracer.h"

namespace {

dlio::TraceEvent SampleEvent(int32_t file_id) {
  dlio::TraceEvent e;
  e.name = "pread";
  e.cat = "POSIX";
  e.start_us = dlio::SystemClock()->WallMicros();
  e.dur_us = 12;
  e.file_id = file_id;
  e.offset = 1 << 20;
  e.count = 262144;
  e.ret = 262144;
  e.epoch = 1;
  e.step = 10;
  return e;
}

// Shared by the threads of one run; made by Setup and destroyed by Teardown, which Google
// Benchmark runs outside the threads.
std::unique_ptr<dlio::Tracer> shared_tracer;
int32_t shared_file_id = -1;

std::string TracePath() { return "/tmp/dlio-trace-bench-" + std::to_string(getpid()) + ".pfw"; }

void Install(std::unique_ptr<dlio::Tracer> tracer) {
  shared_tracer = std::move(tracer);
  shared_file_id = shared_tracer->InternFile("/data/train/img_000001.npz");
}
void SetupNull(const benchmark::State&) { Install(dlio::MakeNullTracer()); }
void SetupMemory(const benchmark::State&) { Install(std::make_unique<dlio::MemoryTracer>()); }
void SetupFile(const benchmark::State&) {
  dlio::TraceFileOptions o;
  o.path = TracePath();
  Install(dlio::MakeTraceFileTracer(o).value());
}
void SetupGzip(const benchmark::State&) {
  dlio::TraceFileOptions o;
  o.path = TracePath() + ".gz";
  Install(dlio::MakeTraceFileTracer(o).value());
}
void Teardown(const benchmark::State&) {
  (void)shared_tracer->Flush();
  shared_tracer.reset();
  ::unlink(TracePath().c_str());
  ::unlink((TracePath() + ".gz").c_str());
}

void BM_Record(benchmark::State& state) {
  dlio::TraceEvent e = SampleEvent(shared_file_id);
  for (auto _ : state) {
    e.offset += 4096;
    shared_tracer->Record(e);
  }
  state.SetItemsProcessed(state.iterations());
}

// Iterations are capped so the in-memory and on-disk traces stay small (~100 MB).
BENCHMARK(BM_Record)
    ->Name("BM_RecordNull")
    ->Setup(SetupNull)
    ->Teardown(Teardown)
    ->Threads(1)
    ->Threads(4);
BENCHMARK(BM_Record)
    ->Name("BM_RecordMemory")
    ->Setup(SetupMemory)
    ->Teardown(Teardown)
    ->Iterations(500000)
    ->Threads(1)
    ->Threads(4);
BENCHMARK(BM_Record)
    ->Name("BM_RecordFile")
    ->Setup(SetupFile)
    ->Teardown(Teardown)
    ->Iterations(500000)
    ->Threads(1)
    ->Threads(4);
BENCHMARK(BM_Record)
    ->Name("BM_RecordFileGzip")
    ->Setup(SetupGzip)
    ->Teardown(Teardown)
    ->Iterations(200000)
    ->Threads(1);

}  // namespace

BENCHMARK_MAIN();
