// The read and write system calls beneath a stdio call, which LD_PRELOAD cannot see (glibc calls
// its own read/write internally). They are derived from the stream's public buffer state (glibc's
// struct _IO_FILE, <bits/types/struct_FILE.h>) before and after the call and the kernel file
// position, following glibc 2.36's libio/fileops.c: _IO_file_xsgetn (fread),
// _IO_new_file_xsputn (fwrite), _IO_new_file_seekoff (fseek) and the flush of fclose. Each
// derivation is a pure function of those inputs; docs/profiling.md ("The kernel level") lists
// what it covers and what it leaves out (such calls get no kernel requests).
#pragma once

#include <stdio.h>

#include <cstdint>

namespace dlio::preload {

// The category and names of the derived requests in the trace (pfw_import keeps them apart from
// the calls: ProfileTrace::stdio_kernel).
inline constexpr char kKernelCategory[] = "SYSCALL";
inline constexpr char kKernelReadName[] = "stdio.read";
inline constexpr char kKernelWriteName[] = "stdio.write";

// What of a FILE decides its system calls; byte counts are pointer differences.
struct StreamState {
  int flags = 0;
  int64_t buf_size = 0;     // _IO_buf_end - _IO_buf_base; 0 before the buffer exists
  int64_t readable = 0;     // _IO_read_end - _IO_read_ptr
  int64_t read_filled = 0;  // _IO_read_end - _IO_buf_base
  int64_t read_pos = 0;     // _IO_read_ptr - _IO_buf_base
  bool has_read_base = false;
  bool read_empty = true;  // _IO_read_base == _IO_read_end
  int64_t pending = 0;     // _IO_write_ptr - _IO_write_base: written, not yet flushed
  int64_t space = 0;       // _IO_write_end - _IO_write_ptr
  int64_t offset = -1;     // _offset: the kernel position glibc knows, -1 unknown
};

StreamState Snapshot(const FILE* f);

struct KernelRequest {
  bool write = false;
  int64_t offset = -1;  // -1: unknown (an O_APPEND stream's flush)
  int64_t count = 0;    // bytes requested
  int64_t ret = 0;      // bytes moved, 0 at end of file, or -errno
};

struct KernelRequests {
  static constexpr int kMax = 8;
  KernelRequest r[kMax];
  int n = 0;
  void Add(bool write, int64_t offset, int64_t count, int64_t ret) {
    if (n < kMax) r[n++] = {write, offset, count, ret};
  }
};

// fread of `want` bytes. Whether it can reach the kernel (else no position is needed).
bool FreadMayRead(const StreamState& before, int64_t want);
// `k0`/`k1`: the kernel position before and after the call; `err`: errno when the call set the
// error flag.
KernelRequests FreadRequests(const StreamState& before, const StreamState& after, int64_t want,
                             int64_t k0, int64_t k1, int err);

// fwrite of `n` bytes. Whether it can reach the kernel.
bool FwriteMayWrite(const StreamState& before, int64_t n);
// `k1`: the kernel position after the call; `err`: errno when the call set the error flag.
KernelRequests FwriteRequests(const StreamState& before, const StreamState& after, int64_t n,
                              int64_t k1, int err);

// fseek family. `k0`: the kernel position before (needed only with unflushed writes), `k1`
// after; `file_size`: the file's size (needed only for a read cut short by the end of file, see
// FseekNeedsSize).
bool FseekNeedsSize(const StreamState& before, const StreamState& after, int whence, int64_t k1);
KernelRequests FseekRequests(const StreamState& before, const StreamState& after, int whence,
                             int64_t k0, int64_t k1, int64_t file_size);

// fclose: the flush of what is buffered, at kernel position `k0`; `ret` the close's (0 or -errno).
KernelRequests FcloseRequests(const StreamState& before, int64_t k0, int64_t ret);

}  // namespace dlio::preload
