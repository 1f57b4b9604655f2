// Records I/O and pipeline events cheaply, for the DFTracer-style trace file and for tests.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dlio/status.h"

namespace dlio {

// One complete event ("ph":"X" in Chrome trace terms). `name` and `cat` must point to
// string literals (or strings that outlive the tracer): the hot path copies pointers only.
// Integer arguments that do not apply are -1, except `ret`.
struct TraceEvent {
  // `ret` of an event that is not a call (an AI span): the trace file writes no "ret".
  static constexpr int64_t kNoRet = INT64_MIN;

  const char* name = "";  // "read", "pread", "open64", "ai.compute.step", ...
  const char* cat = "";   // "POSIX", "STDIO", "ai", "checkpoint", "dlio"
  int64_t start_us = 0;   // wall-clock microseconds (Clock::WallMicros())
  int64_t dur_us = 0;     // microseconds
  int32_t tid = 0;        // filled by the tracer when 0
  int32_t file_id = -1;   // from Tracer::InternFile, or -1
  int64_t offset = -1;    // file offset of the request
  int64_t count = -1;     // bytes requested
  // The call's return value: bytes transferred, 0, a position, or -1 / -errno for a failure;
  // written to a trace file whatever it is (a failure included), unless kNoRet.
  int64_t ret = kNoRet;
  int64_t epoch = -1;
  int64_t step = -1;
  int64_t index = -1;  // sample index, batch index or checkpoint number
};

// Thread safety: every method is safe for concurrent use. Record() takes no global lock on the
// hot path (per-thread buffers) and allocates nothing in steady state.
class Tracer {
 public:
  virtual ~Tracer() = default;
  // False for the null tracer: callers may skip taking timestamps entirely.
  virtual bool enabled() const = 0;
  // Returns a stable small id for `path` (the same id every time for the same path).
  virtual int32_t InternFile(std::string_view path) = 0;
  virtual void Record(const TraceEvent& event) = 0;
  // Writes out buffered events (file sinks). Also called by the destructor.
  virtual Status Flush() = 0;
};

// Discards everything; enabled() == false.
std::unique_ptr<Tracer> MakeNullTracer();

// Keeps events in memory, for tests.
class MemoryTracer : public Tracer {
 public:
  MemoryTracer();
  ~MemoryTracer() override;
  bool enabled() const override { return true; }
  int32_t InternFile(std::string_view path) override;
  void Record(const TraceEvent& event) override;
  Status Flush() override { return Status::OK(); }
  // A copy of all events recorded so far, ordered by start time.
  std::vector<TraceEvent> Events() const;
  // The path behind a file id ("" if unknown).
  std::string FileName(int32_t file_id) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct TraceFileOptions {
  std::string path;                // e.g. "<output>/trace-0.pfw"; ".gz" suffix writes gzip
  int32_t pid = 1;                 // written as "pid" (dlio-run: rank + 1; a viewer wants no 0)
  std::string process_name;        // its process_name metadata ("" -> "dlio pid <pid>")
  size_t buffer_events = 1 << 14;  // events per thread buffer before a flush to the file
  // Also name the process in the first line, as libdlio_preload.so's traces do, so trace-merge
  // keeps `pid` as an OS pid (the pytorch pipeline's worker processes) instead of a rank's.
  bool name_process_first = false;
};

// Writes DFTracer-compatible JSON lines: one {"id","name","cat","pid","tid","ts","dur","ph":"X",
// "args":{...}} per line inside "[" ... "]", with "fname" for file events: Chrome trace-event
// JSON (Perfetto, chrome://tracing, Chrome DevTools).
Result<std::unique_ptr<Tracer>> MakeTraceFileTracer(const TraceFileOptions& options);

struct TraceMergeReport {
  uint64_t events = 0;           // events written (metadata included)
  std::vector<int64_t> pids;     // the pid given to each input, in input order
  uint64_t truncated_lines = 0;  // unparseable last lines skipped (a rank killed mid-write)
};

// Merges trace files (.pfw, or .pfw.gz: gzip is detected from the content) into one at `output`
// (gzip when it ends in ".gz"), so Perfetto shows each input as a process. A trace written by
// libdlio_preload.so (its first event names the process) keeps the OS pid written inside it and
// its process name; several such inputs with one pid (a process before and after exec) are one
// process. Any other input is rank R, from its name ("trace-<R>-of-<N>.pfw[.gz]", or dlio's older
// "trace-<R>.pfw[.gz]") or, failing that, its position i, and gets pid R + 1 (no pid is 0, as
// Perfetto advises) and the process name "dlio rank R". Event ids are renumbered to stay unique.
// Lines "[" and "]" and trailing commas are accepted; an unparseable last line of an input (a rank
// killed mid-write) is skipped and counted; an unparseable line elsewhere is Corruption naming the
// file and line. Two inputs given the same pid are InvalidArgument (except preload traces of one
// process). Written to "<output>.tmp-<owner token>" (created new; removed on failure) and renamed.
// A trace file that could not store its first bytes (a full disk) is removed by its tracer's
// destructor instead of being left empty.
Result<TraceMergeReport> MergeTraceFiles(const std::vector<std::string>& inputs,
                                         const std::string& output);

}  // namespace dlio
