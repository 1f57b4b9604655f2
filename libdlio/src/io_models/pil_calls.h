// The calls a Pillow plugin makes on its file, each appended to the sample: what the pil model's
// loaders (pil_reader.cc, pil_png_load.cc) share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "dlio/format.h"
#include "dlio/status.h"
#include "io_models/pyio/buffered_reader.h"

namespace dlio::io_models {

// fp.read(n) calls reading a file front to back into `out`, which holds `capacity` bytes. Under
// reader.client_costs framework each read goes through a bytes object, copied (Python's read
// returns one). Requires external synchronization (one owner).
class PilCalls {
 public:
  PilCalls(pyio::BufferedReader* fp, SampleBuffer* out, size_t capacity, bool python_bytes)
      : fp_(fp), out_(out), capacity_(capacity), python_bytes_(python_bytes) {}

  // fp.read(n) into the next bytes of the sample; returns the count (short only at the end).
  // Corruption naming the file when the sample has no room for `n` more bytes (a length field
  // that runs far past the end of the file).
  Result<size_t> Read(size_t n);
  // Image.open's fp.seek(0) (an lseek: nothing is buffered yet), prefix read (fp.read(16)) and
  // the rewind before the plugin's own calls (inside the buffer).
  Status PrefixAndRewind();
  // fp.seek(offset): no request when `offset` is inside the buffer, else an lseek.
  Status Seek(uint64_t offset);
  // fp.tell(): one lseek(0, SEEK_CUR).
  Status Tell();

  uint64_t loaded() const { return loaded_; }
  uint8_t* at(uint64_t offset) const { return out_->data() + offset; }
  const std::string& path() const { return fp_->file()->path(); }

 private:
  pyio::BufferedReader* fp_;
  SampleBuffer* out_;
  size_t capacity_;
  bool python_bytes_;
  uint64_t loaded_ = 0;  // bytes read so far, the sample's first
};

}  // namespace dlio::io_models
