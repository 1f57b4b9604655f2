#include "dlio/fresh_read_pages.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace dlio {
namespace {

// Pages asked of mincore at a time (a 512-byte vector on the stack).
constexpr uint64_t kChunkPages = 512;

// Drops [addr, addr + len) from this process; false when the kernel refused both ways.
bool Drop(uintptr_t addr, size_t len) {
  void* p = reinterpret_cast<void*>(addr);
  // Shared memory (a pytorch worker's slot) keeps its pages in its file under MADV_DONTNEED:
  // MADV_REMOVE frees them. Private memory refuses MADV_REMOVE (EINVAL).
  if (::madvise(p, len, MADV_REMOVE) == 0) return true;
  return ::madvise(p, len, MADV_DONTNEED) == 0;
}

}  // namespace

FreshReadPages::FreshReadPages(double share)
    : share_(std::clamp(share, 0.0, 1.0)),
      page_(static_cast<size_t>(std::max<long>(::sysconf(_SC_PAGESIZE), 1))) {}

void FreshReadPages::BeforeRead(void* buf, size_t n) {
  if (share_ <= 0 || n < kMinBytes || buf == nullptr) return;
  // The read's pages as the tracer's share counts them: its bytes over the page size, rounded up.
  const uint64_t read_pages = (n + page_ - 1) / page_;
  const uint64_t all = pages_.fetch_add(read_pages, std::memory_order_relaxed) + read_pages;
  const auto target = static_cast<uint64_t>(std::llround(share_ * static_cast<double>(all)));
  const uint64_t done = fresh_.load(std::memory_order_relaxed);
  const uint64_t owed = target > done ? target - done : 0;
  // Every page the read touches is counted; only pages it fills whole are dropped (the others
  // hold bytes besides the read's).
  const auto start = reinterpret_cast<uintptr_t>(buf);
  const uintptr_t first = start / page_ * page_;
  const uintptr_t end = (start + n + page_ - 1) / page_ * page_;
  const uint64_t absent = CountAbsent(first, (end - first) / page_);
  uint64_t dropped = 0;
  const uintptr_t whole_first = (start + page_ - 1) / page_ * page_;
  const uintptr_t whole_end = (start + n) / page_ * page_;
  if (owed > absent && whole_end > whole_first) {
    dropped = DropResident(whole_first, (whole_end - whole_first) / page_, owed - absent);
  }
  // Counted again after a drop: memory mapped more than once (a ring of pages mapped over a
  // sample's span) loses a page in every view at once, so more pages may be out than were dropped.
  const uint64_t out = dropped > 0 ? CountAbsent(first, (end - first) / page_) : absent;
  fresh_.fetch_add(out, std::memory_order_relaxed);
}

uint64_t FreshReadPages::CountAbsent(uintptr_t from, uint64_t count) const {
  unsigned char in_memory[kChunkPages];
  uint64_t absent = 0;
  for (uint64_t at = 0; at < count; at += kChunkPages) {
    const uint64_t chunk = std::min(kChunkPages, count - at);
    if (::mincore(reinterpret_cast<void*>(from + at * page_), chunk * page_, in_memory) != 0) {
      break;
    }
    for (uint64_t i = 0; i < chunk; ++i) absent += (in_memory[i] & 1) == 0 ? 1 : 0;
  }
  return absent;
}

uint64_t FreshReadPages::DropResident(uintptr_t from, uint64_t count, uint64_t drop) const {
  unsigned char in_memory[kChunkPages];
  uint64_t dropped = 0;
  uintptr_t run = 0;  // the first of run_pages pages to drop, not dropped yet
  uint64_t run_pages = 0;
  auto flush = [&] {
    if (run_pages > 0 && Drop(run, run_pages * page_)) dropped += run_pages;
    run_pages = 0;
  };
  for (uint64_t at = 0; at < count && dropped + run_pages < drop; at += kChunkPages) {
    const uint64_t chunk = std::min(kChunkPages, count - at);
    const uintptr_t addr = from + at * page_;
    if (::mincore(reinterpret_cast<void*>(addr), chunk * page_, in_memory) != 0) break;
    for (uint64_t i = 0; i < chunk && dropped + run_pages < drop; ++i) {
      if ((in_memory[i] & 1) == 0) {
        flush();  // a run to drop is contiguous
        continue;
      }
      if (run_pages == 0) run = addr + i * page_;
      ++run_pages;
    }
  }
  flush();
  return dropped;
}

}  // namespace dlio
