// The memory of a bytes object as CPython allocates it for read(n): PyBytes_FromStringAndSize
// takes 33 + n bytes (PyBytesObject's header, the data at offset 32, a trailing NUL) from
// PyObject_Malloc, which passes anything above 512 bytes to the C library's malloc. Reading into
// such a block, rather than into memory the reader keeps, lets glibc make the choices it makes
// for Python: a new mapping at or above its (dynamic) mmap threshold, heap pages trimmed and
// grown again, or a block just freed. Which one decides most of what a large read costs: the
// kernel copies into pages that fault in on first touch (about 130 us for 256 KiB here) or into
// warm ones (about 20 us).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace dlio::pyio {

class PythonBytes {
 public:
  static constexpr size_t kHeaderBytes = 32;  // offsetof(PyBytesObject, ob_sval)

  explicit PythonBytes(size_t n)
      : block_(static_cast<uint8_t*>(std::malloc(kHeaderBytes + n + 1))) {}
  ~PythonBytes() { std::free(block_); }
  PythonBytes(const PythonBytes&) = delete;
  PythonBytes& operator=(const PythonBytes&) = delete;

  // The data; null when malloc failed (the caller then reads into its own memory).
  uint8_t* data() const { return block_ == nullptr ? nullptr : block_ + kHeaderBytes; }

 private:
  uint8_t* block_;
};

}  // namespace dlio::pyio
