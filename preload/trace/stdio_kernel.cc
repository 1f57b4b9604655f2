#include "stdio_kernel.h"

#include <errno.h>

#include <algorithm>

namespace dlio::preload {
namespace {

// glibc's stream flags (libio/libio.h in its source; only EOF and ERR are in public headers).
constexpr int kNoReads = 0x0004;
constexpr int kEofSeen = 0x0010;
constexpr int kErrSeen = 0x0020;
constexpr int kInBackup = 0x0100;
constexpr int kLineBuf = 0x0200;
constexpr int kPutting = 0x0800;
constexpr int kAppending = 0x1000;

// glibc reads and writes whole buffers of at least this size; smaller ones (an unbuffered
// stream's 1 byte) move the request as it is.
constexpr int64_t kMinAlignedBlock = 128;

int64_t Diff(const char* end, const char* begin) {
  return end != nullptr && begin != nullptr ? static_cast<int64_t>(end - begin) : 0;
}

int64_t WholeBlocks(int64_t bytes, int64_t block) {
  return block >= kMinAlignedBlock ? bytes - bytes % block : bytes;
}

// The read loop of _IO_file_xsgetn after the buffered bytes were copied: `want` bytes still
// wanted, `total` the bytes the kernel delivered (each read gets what is left of it, as a
// regular file's reads do: short only at the end of the file).
void SimulateReads(int64_t want, int64_t block, bool eof, int64_t pos, int64_t total,
                   KernelRequests* out) {
  for (int i = 0; want > 0 && i < KernelRequests::kMax; ++i) {
    if (want < block) {
      if (eof) return;  // __underflow: end of file is sticky (C99)
      const int64_t r = std::min(block, total);
      out->Add(false, pos, block, r);
      if (r == 0) return;
      want -= std::min(want, r);
    } else {
      const int64_t request = WholeBlocks(want, block);
      const int64_t r = std::min(request, total);
      out->Add(false, pos, request, r);
      if (r == 0) return;
      want -= r;
    }
    pos += out->r[out->n - 1].ret;
    total -= out->r[out->n - 1].ret;
  }
}

// Marks the last request failed when the call set the stream's error flag.
void MarkError(const StreamState& before, const StreamState& after, int err, KernelRequests* out) {
  if (out->n > 0 && (after.flags & kErrSeen) != 0 && (before.flags & kErrSeen) == 0) {
    out->r[out->n - 1].ret = -(err > 0 ? err : EIO);
  }
}

}  // namespace

StreamState Snapshot(const FILE* f) {
  StreamState s;
  s.flags = f->_flags;
  s.buf_size = Diff(f->_IO_buf_end, f->_IO_buf_base);
  s.readable = Diff(f->_IO_read_end, f->_IO_read_ptr);
  s.read_filled = Diff(f->_IO_read_end, f->_IO_buf_base);
  s.read_pos = Diff(f->_IO_read_ptr, f->_IO_buf_base);
  s.has_read_base = f->_IO_read_base != nullptr;
  s.read_empty = f->_IO_read_base == f->_IO_read_end;
  s.pending = Diff(f->_IO_write_ptr, f->_IO_write_base);
  s.space = Diff(f->_IO_write_end, f->_IO_write_ptr);
  s.offset = f->_offset;
  return s;
}

bool FreadMayRead(const StreamState& before, int64_t want) {
  // A backup area (ungetc) and input straight after output (undefined in C) are not modelled.
  if ((before.flags & kInBackup) != 0 || before.pending > 0) return false;
  return want > before.readable;
}

KernelRequests FreadRequests(const StreamState& before, const StreamState& after, int64_t want,
                             int64_t k0, int64_t k1, int err) {
  KernelRequests out;
  if (!FreadMayRead(before, want) || k0 < 0 || k1 < k0 || after.buf_size <= 0) return out;
  SimulateReads(want - before.readable, after.buf_size, (before.flags & kEofSeen) != 0, k0, k1 - k0,
                &out);
  MarkError(before, after, err, &out);
  return out;
}

bool FwriteMayWrite(const StreamState& before, int64_t n) {
  // A line-buffered stream flushes at each newline: not modelled.
  if ((before.flags & kLineBuf) != 0) return false;
  return n > before.space;
}

KernelRequests FwriteRequests(const StreamState& before, const StreamState& after, int64_t n,
                              int64_t k1, int err) {
  KernelRequests out;
  if (!FwriteMayWrite(before, n) || after.buf_size <= 0) return out;
  // _IO_new_file_xsputn: fill the buffer's space, flush it (_IO_OVERFLOW), write the whole blocks
  // of the rest directly, buffer the remainder.
  const int64_t copied = std::max<int64_t>(before.space, 0);
  const int64_t flush = ((before.flags & kPutting) != 0 ? before.pending : 0) + copied;
  const int64_t direct = WholeBlocks(n - copied, after.buf_size);
  // The writes end where the kernel position is now (an O_APPEND file's end included).
  const int64_t pos = k1 < 0 ? -1 : k1 - flush - direct;
  if (flush > 0) out.Add(true, pos, flush, flush);
  if (direct > 0) out.Add(true, pos < 0 ? -1 : pos + flush, direct, direct);
  MarkError(before, after, err, &out);
  return out;
}

bool FseekNeedsSize(const StreamState& before, const StreamState& after, int whence, int64_t k1) {
  if ((before.flags & kNoReads) != 0 || after.read_filled > 0) return false;
  if (whence == SEEK_CUR && before.offset < 0) return false;  // straight to lseek
  const int64_t block = after.buf_size;
  if (block <= 0 || k1 < 0) return false;
  const int64_t delta = k1 - (k1 & ~(block - 1));
  return delta != 0 && delta <= block;
}

KernelRequests FseekRequests(const StreamState& before, const StreamState& after, int whence,
                             int64_t k0, int64_t k1, int64_t file_size) {
  KernelRequests out;
  // Unflushed writes are written first (_IO_switch_to_get_mode); the buffer then holds nothing
  // to read, so the target is never found in it.
  const bool putting = before.pending > 0 || (before.flags & kPutting) != 0;
  if (before.pending > 0) {
    out.Add(true, (before.flags & kAppending) != 0 ? -1 : k0, before.pending, before.pending);
  }
  if ((before.flags & kNoReads) != 0 || after.buf_size <= 0 || k1 < 0) return out;
  // POSIX: after fflush the kernel offset is exact, so glibc reads only up to the target.
  const bool exact = before.read_empty && before.pending == 0;
  if (after.read_filled > 0) {
    // Either the target was in the buffer (no read; glibc re-seeks the kernel to _offset) or
    // one read filled the buffer from the block boundary below the target.
    const int64_t target = k1 - (after.read_filled - after.read_pos);
    const int64_t start = before.offset - before.read_filled;
    const bool in_buffer = !putting && before.offset >= 0 && before.has_read_base &&
                           (before.flags & kInBackup) == 0 && k1 == before.offset &&
                           target >= start && target < before.offset;
    if (in_buffer) return out;
    const int64_t request = exact ? after.read_pos : after.buf_size;
    out.Add(false, k1 - after.read_filled, request, after.read_filled);
    return out;
  }
  if (!FseekNeedsSize(before, after, whence, k1) || file_size < 0) return out;
  // The read from the block boundary came back shorter than the way to the target (end of
  // file); glibc then seeks the rest and leaves the buffer empty.
  const int64_t block_start = k1 & ~(after.buf_size - 1);
  const int64_t request = exact ? k1 - block_start : after.buf_size;
  out.Add(false, block_start, request, std::clamp<int64_t>(file_size - block_start, 0, request));
  return out;
}

KernelRequests FcloseRequests(const StreamState& before, int64_t k0, int64_t ret) {
  KernelRequests out;
  if ((before.flags & kPutting) == 0 || before.pending <= 0) return out;
  const int64_t offset = (before.flags & kAppending) != 0 ? -1 : k0;
  out.Add(true, offset, before.pending, ret < 0 ? ret : before.pending);
  return out;
}

}  // namespace dlio::preload
