// The per-step synchronisation of train.accelerators_per_process: K accelerator threads of one
// process meeting in the thread-group Comm's Barrier (the step barrier), with a serial process
// Comm. Each iteration is one step: every thread arrives, the last wakes the others. Counters:
// us_per_step (wall time of one barrier round for all K threads) and us_per_accelerator (that over
// K). Target: < 20 us per accelerator per step with 16 accelerators (docs/performance.md).
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "dlio/comm.h"
#include "dlio/thread_group_comm.h"

namespace {

// K - 1 helper threads take `steps` barriers each while the benchmark's thread takes its own.
void BM_AcceleratorStepBarrier(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  auto process = dlio::MakeSerialComm();
  dlio::ThreadGroupComms group(process.get(), k);
  const int64_t steps = state.max_iterations;
  std::vector<std::thread> helpers;
  for (int t = 1; t < k; ++t) {
    helpers.emplace_back([&group, t, steps] {
      for (int64_t i = 0; i < steps; ++i) {
        if (!group.comm(t)->Barrier().ok()) return;
      }
    });
  }
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    if (!group.comm(0)->Barrier().ok()) state.SkipWithError("barrier failed");
  }
  const double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  for (auto& h : helpers) h.join();
  const double per_step = us / static_cast<double>(steps);
  state.counters["us_per_step"] = per_step;
  state.counters["us_per_accelerator"] = per_step / k;
}

BENCHMARK(BM_AcceleratorStepBarrier)
    ->ArgName("accelerators")
    ->Arg(1)
    ->Arg(4)
    ->Arg(8)
    ->Arg(16)
    ->Arg(20)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
