// How the pytorch pipeline's main process and its worker processes talk: one socketpair per
// worker for small fixed-size messages, and one shared-memory region (a memfd, mapped MAP_SHARED
// by both) per batch slot for everything of variable size: the batch's SampleRefs going out, the
// sample sizes and bytes coming back. As in PyTorch, a worker builds a whole batch and its result
// lands in shared memory the main process reads without a copy.
//
// Region layout (offsets in bytes):
//   [0, 64)                         RegionHeader
//   [64, 64 + 16n)                  n RegionRef (the batch's samples, written by the main process)
//   then n x RegionSample           per sample: data offset, size, bytes read (by the worker)
//   then the samples' bytes         each at a 64-byte aligned offset (by the worker)
// Regions only grow (ftruncate), so a mapping never loses its pages under the other process.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "dlio/status.h"

namespace dlio::pipeline_internal {

struct RegionHeader {
  uint64_t count = 0;  // samples in the batch
  uint64_t data_end = 0;
  uint64_t reserved[6] = {};
};
struct RegionRef {
  uint32_t file = 0;
  uint32_t pad = 0;
  uint64_t index = 0;
};
struct RegionSample {
  uint64_t offset = 0;      // of the sample's bytes from the region's start
  uint64_t size = 0;        // bytes delivered (decoded bytes when the pipeline decodes)
  uint64_t bytes_read = 0;  // bytes read from storage
};
static_assert(sizeof(RegionHeader) == 64 && sizeof(RegionRef) == 16 && sizeof(RegionSample) == 24);

inline uint64_t RefsOffset() { return sizeof(RegionHeader); }
inline uint64_t SamplesOffset(uint64_t count) { return RefsOffset() + count * sizeof(RegionRef); }
inline uint64_t DataOffset(uint64_t count) {
  return (SamplesOffset(count) + count * sizeof(RegionSample) + 63) & ~uint64_t{63};
}

// A memfd mapped MAP_SHARED. Created by the main process before it forks, so every worker
// inherits it; each process keeps its own mapping and remaps when the other grew the file.
// Requires external synchronization (one process at a time works on a slot's region).
class SharedRegion {
 public:
  SharedRegion() = default;
  ~SharedRegion();
  SharedRegion(const SharedRegion&) = delete;
  SharedRegion& operator=(const SharedRegion&) = delete;

  Status Create(const std::string& name);
  // Makes at least `bytes` usable here, growing the file (never shrinking it) when needed.
  Status Reserve(uint64_t bytes);
  // Grows the file to at least `bytes` (exactly, not to a power of two) and has the kernel
  // allocate and clear its pages now (fallocate), without mapping them into this process: a
  // process that later writes there finds the pages in place instead of faulting in new ones.
  Status Prefault(uint64_t bytes);
  // Fills this process's page tables for the whole mapping, writable (MADV_POPULATE_WRITE),
  // without changing a byte, so the first writes here take no page fault. A kernel without it
  // (before Linux 5.14) leaves the faults to the first writes.
  Status Populate();
  // Maps the whole file again when the other process grew it.
  Status Refresh();
  uint8_t* data() const { return data_; }
  uint64_t mapped() const { return mapped_; }
  int fd() const { return fd_; }
  // Drops the mapping and the descriptor (a worker closes the regions of other workers).
  void Close();

 private:
  Status MapSize(uint64_t bytes);
  int fd_ = -1;
  uint8_t* data_ = nullptr;
  uint64_t mapped_ = 0;
  std::string name_;
};

// Main process -> worker.
struct WorkerCommand {
  uint32_t type = 0;  // kCommandBatch or kCommandStop
  uint32_t slot = 0;  // region of the batch (an index into the worker's own regions)
  int64_t k = 0;      // batch number within the epoch
  uint64_t epoch = 0;
  uint64_t count = 0;  // samples
};
constexpr uint32_t kCommandBatch = 1;
constexpr uint32_t kCommandStop = 2;

// The first message of every worker, once its memory is mapped and populated: a WorkerResult with
// k == kWorkerReady (and no message), which Spawn waits for.
constexpr int64_t kWorkerReady = -1;

// Worker -> main process; followed by `message_size` bytes of the error message.
struct WorkerResult {
  int64_t k = 0;
  uint32_t slot = 0;
  int32_t code = 0;  // StatusCode
  uint64_t bytes_read = 0;
  uint64_t region_size = 0;  // the region's file size after the worker wrote the batch
  int64_t read_start_ns = 0;
  int64_t read_end_ns = 0;
  uint32_t message_size = 0;
  uint32_t buffer_growths = 0;  // times the worker's own sample buffers grew for this batch
  uint32_t pad = 0;
  // The memory the worker reads samples into after this batch: a bounded read buffer's (head +
  // ring, whatever the span), else its buffers' capacity.
  uint64_t read_buffer_bytes = 0;
  // The worker storage's calls for this batch (Storage::stats() after minus before), which the
  // main process adds to its own storage's counters.
  uint64_t read_ops = 0, read_bytes = 0, opens = 0, closes = 0;
};
constexpr uint32_t kMaxResultMessage = 4096;

// Blocking whole-buffer I/O on a stream socket (EINTR retried, no SIGPIPE). ReadFull returns
// OutOfRange at a clean end of stream before the first byte.
Status WriteFull(int fd, const void* data, size_t size);
Status ReadFull(int fd, void* data, size_t size);

}  // namespace dlio::pipeline_internal
