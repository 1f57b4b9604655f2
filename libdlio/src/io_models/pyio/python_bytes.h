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
#include <cstring>
#include <utility>

namespace dlio::pyio {

class PythonBytes {
 public:
  static constexpr size_t kHeaderBytes = 32;  // offsetof(PyBytesObject, ob_sval)

  PythonBytes() = default;  // b'': no block
  explicit PythonBytes(size_t n)
      : block_(static_cast<uint8_t*>(std::malloc(kHeaderBytes + n + 1))),
        size_(block_ == nullptr ? 0 : n) {}
  ~PythonBytes() { std::free(block_); }
  PythonBytes(PythonBytes&& o) noexcept : block_(o.block_), size_(o.size_) {
    o.block_ = nullptr;
    o.size_ = 0;
  }
  PythonBytes& operator=(PythonBytes&& o) noexcept {
    if (this != &o) {
      std::free(block_);  // the old object dies when the name is bound to the new one
      block_ = o.block_;
      size_ = o.size_;
      o.block_ = nullptr;
      o.size_ = 0;
    }
    return *this;
  }
  PythonBytes(const PythonBytes&) = delete;
  PythonBytes& operator=(const PythonBytes&) = delete;

  // The data; null for b'' and when malloc failed (the caller then reads into its own memory).
  uint8_t* data() const { return block_ == nullptr ? nullptr : block_ + kHeaderBytes; }
  size_t size() const { return size_; }
  // Whether a block of `n` bytes was asked for and not had (Python's MemoryError).
  bool failed(size_t n) const { return n > 0 && block_ == nullptr; }
  // A short read: CPython resizes the object to what was read (the block stays where it is).
  void Shrink(size_t n) { size_ = n < size_ ? n : size_; }
  // _PyBytes_Resize of an object no one else holds (FileIO.readall growing its result): realloc,
  // so the bytes so far stay and no new byte is touched; false when the C library has no memory
  // for it (the object is then left as it was).
  bool Resize(size_t n) {
    auto* grown = static_cast<uint8_t*>(std::realloc(block_, kHeaderBytes + n + 1));
    if (grown == nullptr) return false;
    block_ = grown;
    size_ = n;
    return true;
  }

  // `a += b`: `b` itself when `a` is empty (CPython returns the other operand), else a new
  // object holding both; the operands die when the result is bound.
  static PythonBytes Concat(PythonBytes a, PythonBytes b) {
    if (a.size() == 0) return b;
    if (b.size() == 0) return a;
    PythonBytes out(a.size() + b.size());
    if (out.data() == nullptr) return out;
    std::memcpy(out.data(), a.data(), a.size());
    std::memcpy(out.data() + a.size(), b.data(), b.size());
    return out;
  }
  // `s[from:to]`: `s` itself for the whole object, else a new one.
  static PythonBytes Slice(PythonBytes* s, size_t from, size_t to) {
    to = to < s->size() ? to : s->size();
    if (from == 0 && to == s->size()) return std::move(*s);
    PythonBytes out(to > from ? to - from : 0);
    if (out.size() > 0) std::memcpy(out.data(), s->data() + from, out.size());
    return out;
  }

 private:
  uint8_t* block_ = nullptr;
  size_t size_ = 0;
};

}  // namespace dlio::pyio
