// The categories and names of DFTracer's AI-logging events (pydftracer's dftracer.python.ai, the
// schema the Python DLIO traces with and DFAnalyzer counts by), so that name-based analyses of a
// dlio trace count what they count in a Python DLIO trace. The names are "<event>" for a
// decorated call and "<event>.iter" / "<event>.block" for an iteration (ai_common.py's
// get_iter_handle_name / get_iter_block_name).
#pragma once

#include <cstdint>
#include <string_view>

#include "dlio/tracer.h"

namespace dlio::ai_events {

// One span per rank over the whole run (DLIO's `@dft_ai` on DLIOBenchmark.run).
inline constexpr const char* kRootCat = "ai_root";
inline constexpr const char* kRootName = "ai_root";

// cat "pipeline": one "epoch.block" per epoch (its training, evaluation and checkpoints), one
// "train" per training pass and one "evaluate" per evaluation pass.
inline constexpr const char* kPipelineCat = "pipeline";
inline constexpr const char* kEpochBlock = "epoch.block";
inline constexpr const char* kTrain = "train";
inline constexpr const char* kEvaluate = "evaluate";

// cat "dataloader": one "fetch.iter" per batch taken (training and evaluation steps).
inline constexpr const char* kDataLoaderCat = "dataloader";
inline constexpr const char* kFetchIter = "fetch.iter";

// cat "data": one "item" per sample read and one "preprocess" per sample preprocessed.
inline constexpr const char* kDataCat = "data";
inline constexpr const char* kItem = "item";
inline constexpr const char* kPreprocess = "preprocess";

// cat "compute", name "compute": one per step (training and evaluation).
inline constexpr const char* kComputeCat = "compute";
inline constexpr const char* kCompute = "compute";

// cat "checkpoint": one "capture" per checkpoint saved, one "restart" per checkpoint loaded.
inline constexpr const char* kCheckpointCat = "checkpoint";
inline constexpr const char* kCapture = "capture";
inline constexpr const char* kRestart = "restart";

// A span of `cat`/`name` that began at `start_us` (wall clock) and lasted `dur_us`, in trace epoch
// and step `epoch`/`step` (counted from 1; -1: none), of sample or batch `index`. The caller adds
// what else it knows (file_id, ret) and records it.
inline TraceEvent AiSpan(const char* cat, const char* name, int64_t start_us, int64_t dur_us,
                         int64_t epoch, int64_t step, int64_t index) {
  TraceEvent event;
  event.cat = cat;
  event.name = name;
  event.start_us = start_us;
  event.dur_us = dur_us;
  event.epoch = epoch;
  event.step = step;
  event.index = index;
  return event;
}

}  // namespace dlio::ai_events
