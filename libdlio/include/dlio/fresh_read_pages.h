// Fresh pages under a run's large reads (reader.fresh_page_share): a program that reads each
// sample into new memory (np.load's array, a bytes object per read, pickle's bytearray) has part
// of the pages its reads fill faulted in by the kernel, zeroed, inside the timed read; glibc
// decides which, from the program's other allocations. dlio reads into its own buffers, whose
// pages stay in memory. To give its reads the program's cost per request, this drops pages of a
// read's destination before the read is issued, so that the share of the pages its reads fill
// that fault in within them is at least the program's (the LD_PRELOAD tracer's `minflt` counts,
// which `dlio-run fit` turns into the share). Pages already out of memory count toward it, so a
// model that allocates as the framework does is only topped up.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace dlio {

class FreshReadPages {
 public:
  // Reads of fewer bytes are left alone: the tracer counts faults in reads of 16 KiB or more.
  static constexpr size_t kMinBytes = size_t{16} << 10;

  // `share` in [0, 1]: the least share of the pages reads fill that fault in within them.
  explicit FreshReadPages(double share);

  // Before a read of up to `n` bytes into `buf`: drops whole pages of [buf, buf + n) from this
  // process (private memory: MADV_DONTNEED; shared memory: MADV_REMOVE, so that the page is
  // allocated and zeroed anew, not found in the shared file) until the pages out of memory over
  // all reads so far reach the share. Their contents are lost: call it only on memory the read
  // is about to fill. Safe for concurrent use; keeps no lock, so a forked child may use it.
  void BeforeRead(void* buf, size_t n);

  double share() const { return share_; }
  // Pages of the reads so far, and how many were out of memory when they were issued.
  uint64_t pages() const { return pages_.load(std::memory_order_relaxed); }
  uint64_t fresh() const { return fresh_.load(std::memory_order_relaxed); }

 private:
  // Pages of [from, from + count pages) not in memory.
  uint64_t CountAbsent(uintptr_t from, uint64_t count) const;
  // Drops the first `drop` pages of [from, from + count pages) that are in memory; returns how
  // many it dropped.
  uint64_t DropResident(uintptr_t from, uint64_t count, uint64_t drop) const;

  double share_;
  size_t page_;
  std::atomic<uint64_t> pages_{0}, fresh_{0};
};

}  // namespace dlio
