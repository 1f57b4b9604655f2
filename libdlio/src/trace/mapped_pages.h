// Which pages of a memory mapping this process has mapped in, from /proc/self/pagemap: what is
// observable of mmap'd reading, which issues no read calls. Shared by dlio's storage (File::Map)
// and libdlio_preload.so, so both record "mmap.touched" the same way. Header-only; raw syscalls
// and no allocation, so the preload can run it inside a hook.
//
// What the present bit means: the page table entry of that page is present in this process, i.e.
// the process faulted on it or the kernel mapped it alongside a fault: fault-around maps up to
// 16 (fault_around_bytes / page size) page-cache pages of the aligned window around a read fault,
// and a large folio of the page cache may be mapped whole (up to a 2 MiB PMD). So "mapped" >=
// "touched", by up to that window. It is per process (a forked child starts with no pages of a
// shared file mapping), unlike mincore(2), which reports page-cache residency of any process.
#pragma once

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

namespace dlio::mapped_pages {

inline constexpr uint64_t kPresentBit = uint64_t{1} << 63;

// Calls run(first_page, pages) (page indexes relative to `addr`, which must be page-aligned) for
// each maximal run of present pages in [addr, addr + len), in order. False when /proc/self/pagemap
// cannot be opened or read (no procfs): nothing, or the runs before the failure, were reported.
// Thread-safe.
template <typename Run>
bool ForEachPresentRun(const void* addr, size_t len, Run run) {
  const long page_size = sysconf(_SC_PAGESIZE);
  if (page_size <= 0 || addr == nullptr || len == 0) return len == 0;
  const uint64_t page = static_cast<uint64_t>(page_size);
  const uint64_t first_vpage = reinterpret_cast<uintptr_t>(addr) / page;
  const uint64_t pages = (len + page - 1) / page;
  const long fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  constexpr uint64_t kBatch = 512;
  uint64_t entries[kBatch];
  uint64_t run_start = 0, run_len = 0;
  bool ok = true;
  for (uint64_t at = 0; at < pages && ok;) {
    const uint64_t n = pages - at < kBatch ? pages - at : kBatch;
    const long got = syscall(SYS_pread64, fd, entries, n * 8, (first_vpage + at) * 8);
    if (got <= 0 || got % 8 != 0) {
      ok = false;
      break;
    }
    for (uint64_t i = 0; i < static_cast<uint64_t>(got) / 8; ++i) {
      if ((entries[i] & kPresentBit) != 0) {
        if (run_len == 0) run_start = at + i;
        ++run_len;
      } else if (run_len > 0) {
        run(run_start, run_len);
        run_len = 0;
      }
    }
    at += static_cast<uint64_t>(got) / 8;
  }
  if (ok && run_len > 0) run(run_start, run_len);
  syscall(SYS_close, fd);
  return ok;
}

}  // namespace dlio::mapped_pages
