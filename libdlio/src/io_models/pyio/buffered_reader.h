// Python's binary file as open(path, "rb") builds it: an io.BufferedReader over an io.FileIO,
// emulated over a dlio File so that the raw reads reaching storage are the ones CPython 3.11
// issues (Modules/_io/bufferedio.c, Modules/_io/fileio.c). Only the requests are emulated; the
// bytes are the file's, so callers parse real data. Shared by the Python-library I/O models
// (numpy's np.load, and readers built on Python's file objects).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dlio/status.h"
#include "dlio/storage.h"
#include "io_models/pyio/python_bytes.h"

namespace dlio::pyio {

// io.DEFAULT_BUFFER_SIZE: FileIO's _blksize when the file system reports no block size.
inline constexpr size_t kPythonDefaultBufferSize = 8192;

// The buffer size io.open gives a regular file: its st_blksize when above 1, else 8192.
size_t PythonBufferSize(uint64_t st_blksize);

// st_blksize of the open `file` on this host's file system, as Python's open() takes it from its
// fstat: the block size the backend learned at open (File::block_size: posix, stdio), else a
// stat(2) of its path where the storage's files are host files (mpiio); 4096 (what local file
// systems report) when they are not, or stat fails.
uint64_t HostBlockSize(Storage* storage, const File& file);

// The buffer size io.open gives the open `file`: PythonBufferSize(HostBlockSize(storage, file)).
size_t PythonBufferSize(Storage* storage, const File& file);

// `path` opened as open(path, "rb") opens it before any read: open(2), then FileIO's fstat (a
// failing fstat fails the open, as in Python).
Result<std::unique_ptr<File>> OpenAsPython(Storage* storage, const std::string& path);

// An io.BufferedReader(FileIO) positioned at 0. Raw reads are File::ReadSomeAt at the descriptor's
// offset, one per read(2) CPython makes; every lseek(2) CPython makes is File::Seek: the one of
// open (_buffered_init's raw tell), each tell(), each seek the buffer cannot serve (any seek from
// the end), and FileIO.readall's before its fstat (bufferedio.c, fileio.c of 3.11). dlio's reads
// are positioned, so a seek whence 1 that reaches the kernel is issued as SEEK_SET of the same
// target. Requires external synchronization (one owner), as the Python object does.
class BufferedReader {
 public:
  // open(path, "rb") over `file`: its lseek(0, SEEK_CUR) (CPython ignores its failure, so does
  // this). `file` must outlive the reader; `buffer_size` > 0 (PythonBufferSize).
  BufferedReader(File* file, size_t buffer_size);
  // A reader dlio resumes at `offset` of `file` with no request of its own (no Python open: dlio
  // restarting a stream it had to leave), as if open(path, "rb") had read up to there.
  BufferedReader(File* file, size_t buffer_size, uint64_t resume_at);

  // read(n): up to `n` bytes (fewer only at end of file) into `dst`; returns the count.
  Result<size_t> Read(size_t n, uint8_t* dst);
  // read(n) as the bytes object Python returns (allocated before the read, as CPython does), so
  // that a caller keeps it alive as long as the Python code it emulates does.
  Result<PythonBytes> ReadObject(size_t n);
  // read(n) with the requests of Read and ReadObject, into `dst` with no bytes object between
  // (reader.client_costs none: the storage sees the same calls, the client pays no copy).
  Result<size_t> ReadInto(size_t n, uint8_t* dst);
  // readinto(b) of a writable buffer of `n` bytes (_buffered_readinto_generic): the buffered
  // bytes, then, while more than a buffer's worth is missing, read(2) of all that is missing
  // straight into `dst`, else one fill of the buffer; until `n` bytes or the end of the file.
  // Returns the count.
  Result<size_t> Readinto(size_t n, uint8_t* dst);
  // read1(n) (_io__Buffered_read1_impl): what is buffered, at most `n`, with no read(2); with
  // nothing buffered, one read(2) of `n` straight into the result (the buffer dropped, not
  // filled), as TextIOWrapper's chunk reads for `for line in open(path)`. With `python_bytes`
  // the read lands in a new bytes object first, then is copied (client_costs framework).
  Result<size_t> Read1(size_t n, uint8_t* dst, bool python_bytes);
  // read() without a size: the rest of the file (buffered bytes, then FileIO.readall).
  Status ReadAll(std::vector<uint8_t>* out);
  // read() without a size as the bytes objects Python makes (_bufferedreader_read_all): the
  // buffered bytes as one object, FileIO.readall's, allocated before its reads and left
  // untouched, so its pages fault in within them as CPython's do, and the two joined.
  Result<PythonBytes> ReadAllObject();
  // read() with ReadAll's requests into `capacity` bytes at `dst`, which must hold the rest of
  // the file and one byte more (FileIO.readall asks for one byte past the size fstat gave);
  // ResourceExhausted naming the file when the file grew past that. Returns the count.
  Result<size_t> ReadAllInto(uint8_t* dst, size_t capacity);
  // The file's size as the opener's fstat gave it, for FileSize (a seek from the end learns it
  // too); a readall still makes its own fstat.
  void SetKnownSize(uint64_t size) {
    file_size_ = size;
    size_fresh_ = false;
  }
  // seek(offset, whence) with whence 0 (start), 1 (current) or 2 (end); returns the position.
  // InvalidArgument naming the file for a negative target (Python's OSError, after its lseek).
  Result<uint64_t> Seek(int64_t offset, int whence);
  // tell(): one lseek(0, SEEK_CUR) (CPython asks the raw file every time), the position.
  Result<uint64_t> Tell();
  // The position tell() returns, with no request (dlio's own bookkeeping).
  uint64_t Position() const;
  // Where the raw file's reads left its descriptor (FileIO's offset, ahead of Position() by
  // the buffered bytes).
  uint64_t RawPosition() const { return abs_pos_; }
  // The file's size: one fstat the first time, unless a seek from the end or SetKnownSize gave
  // it; cached after. CPython's FileIO.readall makes an fstat of its own each time: the first
  // readall after this fstat counts it as its own, later ones make another (RawReadAll).
  Result<uint64_t> FileSize();
  File* file() const { return file_; }

 private:
  int64_t ReadAhead() const;  // READAHEAD(): bytes buffered after pos_
  int64_t RawOffset() const;  // RAW_OFFSET(): raw_pos_ - pos_ when both are valid
  size_t MinusLastBlock(size_t n) const;
  Result<size_t> RawRead(uint8_t* dst, size_t n);  // one read(2) at abs_pos_
  Status RawTell();                                // FileIO.tell(): lseek(0, SEEK_CUR)
  // Read past what is buffered (_bufferedreader_read_generic) into dst.
  Result<size_t> ReadGeneric(size_t n, uint8_t* dst);
  Result<size_t> FillBuffer();  // _bufferedreader_fill_buffer
  // ReadAll's requests past the buffered bytes (FileIO.readall): `room(n)` gives memory for n
  // bytes (the same bytes again each time it grows; nullptr: it cannot grow).
  Result<size_t> RawReadAll(const std::function<uint8_t*(size_t)>& room);

  File* file_;
  size_t buffer_size_, buffer_mask_;
  std::vector<uint8_t> buffer_;
  int64_t pos_ = 0;        // next byte of buffer_ to hand out
  int64_t read_end_ = -1;  // end of the valid bytes of buffer_ (-1: no read buffer)
  int64_t raw_pos_ = -1;   // where in buffer_ the descriptor's offset lies (-1: unknown)
  uint64_t abs_pos_ = 0;   // the descriptor's offset
  std::optional<uint64_t> file_size_;
  bool size_fresh_ = false;  // FileSize's fstat not yet counted as a readall's
};

}  // namespace dlio::pyio
