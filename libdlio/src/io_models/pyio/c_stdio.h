// A C stdio stream (FILE*) opened for reading, emulated over a dlio File so the raw reads are
// the ones glibc's libio issues (libio/fileops.c: _IO_new_file_seekoff, _IO_file_xsgetn,
// _IO_new_file_underflow): numpy.fromfile reads an .npy's data through one, on a dup of
// Python's descriptor (numpy/core/src/multiarray: npy_PyFile_Dup2, array_fromfile).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "dlio/status.h"
#include "dlio/storage.h"

namespace dlio::pyio {

// The buffer glibc allocates for a regular file: st_blksize when it is below BUFSIZ (8192),
// else BUFSIZ.
size_t GlibcBufferSize(uint64_t st_blksize);

// A FILE* fresh from fdopen (offset unknown, no buffer yet). Requires external synchronization.
class CStdioReader {
 public:
  // `file` must outlive the reader; `buffer_size` > 0 (GlibcBufferSize).
  CStdioReader(File* file, size_t buffer_size);

  // fseeko(offset, SEEK_SET) or, with `from_current`, fseeko(offset, SEEK_CUR), with the
  // lseek(2) calls glibc makes (each a File::Seek; one whence SEEK_CUR is issued as SEEK_SET of
  // its target, dlio's reads being positioned) and, the first time, the fstat of the buffer's
  // allocation (_IO_file_doallocate).
  Status Seek(int64_t offset, bool from_current);
  // ftello: lseek(0, SEEK_CUR) only while the stream does not know its offset (fresh, or after
  // the end of the file); returns the position.
  Result<uint64_t> Tell();
  // fread: up to `n` bytes (fewer only at end of file) into `dst`; returns the count.
  Result<size_t> Read(size_t n, uint8_t* dst);

 private:
  Result<size_t> SysRead(uint8_t* dst, size_t n);  // one read(2) at fd_pos_ (ReadSomeAt)
  Result<bool> Underflow();                        // refills the buffer; false at end of file
  Status Allocate();                               // _IO_doallocbuf's fstat, the first time
  Status SysSeek(uint64_t offset);                 // one lseek(2) to `offset`

  File* file_;
  size_t size_;
  std::vector<uint8_t> buf_;
  size_t read_base_ = 0, read_ptr_ = 0, read_end_ = 0;  // indices into buf_
  int64_t offset_ = -1;                                 // fp->_offset (-1: _IO_pos_BAD)
  uint64_t fd_pos_ = 0;                                 // the descriptor's offset
  bool eof_ = false;
  bool allocated_ = false;
};

}  // namespace dlio::pyio
