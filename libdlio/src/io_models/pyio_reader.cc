#include "io_models/pyio_reader.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "dlio/clock.h"
#include "dlio/str_cat.h"
#include "dlio/tracer.h"
#include "io_models/pyio/buffered_reader.h"
#include "io_models/pyio/request_storage.h"
#include "io_models/pyio_options.h"

namespace dlio::io_models {
namespace {

// The calls of the program pyio emulates, on one Python file object, into a sample buffer.
class PyioCalls {
 public:
  // `crop_at`: where a crop (pyio.crop_bytes > 0) begins, in [head, size - crop_bytes].
  PyioCalls(pyio::BufferedReader* fp, uint64_t size, const PyioOptions& pyio, bool python_bytes,
            const std::string& format_name, uint64_t crop_at = 0)
      : fp_(fp),
        size_(size),
        pyio_(pyio),
        python_bytes_(python_bytes),
        format_(format_name),
        crop_at_(crop_at) {}

  // The whole file into `out`, resized to hold it and the last call's request past the end,
  // then the calls that find the end (pyio.end_reads); returns the bytes the calls loaded.
  Result<uint64_t> Load(SampleBuffer* out) const {
    DLIO_ASSIGN_OR_RETURN(const uint64_t got, LoadCalls(out));
    DLIO_RETURN_NOT_OK(ReadEnd(got));
    return got;
  }

 private:
  // The head, then the crop, the body and its tail, one call for the rest, or the chunks.
  Result<uint64_t> LoadCalls(SampleBuffer* out) const {
    // A whole chunk (or crop) past the end, or readall's extra byte.
    DLIO_RETURN_NOT_OK(out->Resize(
        static_cast<size_t>(size_ + std::max<uint64_t>({pyio_.read_size, pyio_.crop_bytes, 1}))));
    uint64_t have = 0;
    if (pyio_.head_bytes > 0) {
      const size_t head = static_cast<size_t>(std::min(pyio_.head_bytes, size_));
      DLIO_ASSIGN_OR_RETURN(have, Read(head, out->data()));
    }
    if (pyio_.crop_bytes > 0) return ReadCrop(have, out);
    if (pyio_.tail_bytes > 0) return ReadBodyAndTail(have, out);
    if (pyio_.read_size == 0) {
      DLIO_ASSIGN_OR_RETURN(const size_t got, ReadRest(have, out));
      return have + got;
    }
    DLIO_ASSIGN_OR_RETURN(const uint64_t got, ReadChunks(have, out));
    return have + got;
  }

  // pyio.end_reads calls of f.read(1) once the calls loaded `loaded` bytes (the whole file): each
  // a buffer fill at the end that returns nothing, as a reader looking for another member or
  // variable makes. Corruption naming the file when one finds more.
  Status ReadEnd(uint64_t loaded) const {
    for (uint64_t k = 0; k < pyio_.end_reads; ++k) {
      uint8_t byte = 0;
      DLIO_ASSIGN_OR_RETURN(const size_t got, Read(1, &byte));
      if (got != 0) {
        return Status::Corruption(fp_->file()->path(), ": ", format_, " file of ", size_,
                                  " bytes holds more at offset ", loaded,
                                  " while io_model pyio looked for its end (did it change?)");
      }
    }
    return Status::OK();
  }

  // f.read(n): through a new bytes object under client_costs framework, else straight.
  Result<size_t> Read(size_t n, uint8_t* dst) const {
    return python_bytes_ ? fp_->Read(n, dst) : fp_->ReadInto(n, dst);
  }

  // One call for the rest of the file, after `have` bytes: f.read() or f.readinto(rest).
  Result<size_t> ReadRest(uint64_t have, SampleBuffer* out) const {
    uint8_t* dst = out->data() + have;
    const size_t room = out->size() - static_cast<size_t>(have);
    if (readinto()) return fp_->Readinto(static_cast<size_t>(size_ - have), dst);
    if (!python_bytes_) return fp_->ReadAllInto(dst, room);
    // readall's new bytes object, its pages faulting in within the reads, as CPython's do
    DLIO_ASSIGN_OR_RETURN(const pyio::PythonBytes bytes, fp_->ReadAllObject());
    if (bytes.size() > room) {
      return Status::ResourceExhausted(fp_->file()->path(), ": the file grew past ", size_,
                                       " bytes while it was read whole");
    }
    if (bytes.size() > 0) std::memcpy(dst, bytes.data(), bytes.size());
    return bytes.size();
  }

  // After `have` bytes, the body (all but the tail_bytes last) in one call (f.readinto of a
  // buffer that size, or f.read(n)), or in calls of read_size bytes, the last one what is left
  // of it (a reader that knows the body's length from a header and reads it in chunks, as
  // scipy.io.loadmat reads a variable's data in 128 KiB calls); then f.read(tail_bytes), or
  // calls of tail_read_size bytes until the tail is read: a pickle's array, then its last
  // opcodes. Corruption naming the file when the file is shorter than its head and tail.
  Result<uint64_t> ReadBodyAndTail(uint64_t have, SampleBuffer* out) const {
    if (size_ < have + pyio_.tail_bytes) {
      return Status::Corruption(fp_->file()->path(), ": ", format_, " file of ", size_,
                                " bytes is shorter than reader.pyio_head_bytes + pyio_tail_bytes (",
                                pyio_.head_bytes, " + ", pyio_.tail_bytes, ")");
    }
    const size_t body = static_cast<size_t>(size_ - have - pyio_.tail_bytes);
    uint8_t* dst = out->data() + have;
    DLIO_ASSIGN_OR_RETURN(const size_t got, ReadBody(body, dst));
    if (got != body) {
      return Status::Corruption(fp_->file()->path(), ": ", format_, " file ended at offset ",
                                have + got, " of ", size_,
                                " while io_model pyio's reads loaded it");
    }
    DLIO_ASSIGN_OR_RETURN(const uint64_t tail, ReadTail(dst + body));
    return have + body + tail;
  }

  // f.seek(crop_at), then one f.read(crop_bytes) (or f.readinto of a buffer that size) to its
  // place in `out`; returns the bytes the head and the crop loaded. A file too short for the crop
  // after its head (dlio's own files are drawn in size, and can be) is cropped from the head to
  // its end, the call as the program makes it coming back short, as at the end of any file.
  // Corruption naming the file when the crop comes back shorter than the file says.
  Result<uint64_t> ReadCrop(uint64_t have, SampleBuffer* out) const {
    const uint64_t crop = pyio_.crop_bytes;
    const bool fits = size_ >= have + crop;
    const uint64_t at = fits ? std::clamp(crop_at_, have, size_ - crop) : have;
    const uint64_t want = fits ? crop : size_ - have;
    DLIO_RETURN_NOT_OK(fp_->Seek(static_cast<int64_t>(at), 0).status());
    uint8_t* dst = out->data() + at;
    const size_t n = static_cast<size_t>(crop);
    DLIO_ASSIGN_OR_RETURN(const size_t got, readinto() ? fp_->Readinto(n, dst) : Read(n, dst));
    if (got != want) {
      return Status::Corruption(fp_->file()->path(), ": ", format_, " file ended at offset ",
                                at + got, " of ", size_,
                                " while io_model pyio's crop read it (did it change?)");
    }
    return have + got;
  }

  // `body` bytes into `dst`: one call, or calls of read_size bytes until they are read or one
  // returns nothing (the file shrank). Returns the bytes read.
  Result<size_t> ReadBody(size_t body, uint8_t* dst) const {
    const size_t call = pyio_.read_size == 0 ? body : static_cast<size_t>(pyio_.read_size);
    size_t got_total = 0;
    do {
      const size_t n = std::min(call, body - got_total);
      DLIO_ASSIGN_OR_RETURN(const size_t got, readinto() ? fp_->Readinto(n, dst + got_total)
                                                         : Read(n, dst + got_total));
      if (got == 0) break;
      got_total += got;
    } while (got_total < body);
    return got_total;
  }

  // The tail_bytes last bytes into `dst`: one f.read, or f.read(tail_read_size) calls until they
  // are read or one returns nothing (the file shrank). Returns the bytes read.
  Result<uint64_t> ReadTail(uint8_t* dst) const {
    const uint64_t call = pyio_.tail_read_size == 0 ? pyio_.tail_bytes : pyio_.tail_read_size;
    uint64_t got_total = 0;
    while (got_total < pyio_.tail_bytes) {
      const size_t n = static_cast<size_t>(std::min(call, pyio_.tail_bytes - got_total));
      DLIO_ASSIGN_OR_RETURN(const size_t got, Read(n, dst + got_total));
      if (got == 0) break;
      got_total += got;
    }
    return got_total;
  }

  // Calls of read_size bytes after `have` bytes until one returns nothing.
  Result<uint64_t> ReadChunks(uint64_t have, SampleBuffer* out) const {
    const size_t n = static_cast<size_t>(pyio_.read_size);
    uint64_t got_total = 0;
    for (;;) {
      const uint64_t at = have + got_total;
      if (at + n > out->size()) {
        return Status::Corruption(fp_->file()->path(), ": ", format_, " file of ", size_,
                                  " bytes holds more at offset ", at,
                                  " while io_model pyio's reads loaded it (did it change?)");
      }
      uint8_t* dst = out->data() + at;
      DLIO_ASSIGN_OR_RETURN(const size_t got, Call(n, dst));
      if (got == 0) return got_total;
      got_total += got;
    }
  }

  bool readinto() const { return pyio_.call == PyioCall::kReadinto; }

  // One call of a chunked loop: f.read(n), f.readinto(b) of n bytes, or f.read1(n).
  Result<size_t> Call(size_t n, uint8_t* dst) const {
    switch (pyio_.call) {
      case PyioCall::kReadinto:
        return fp_->Readinto(n, dst);
      case PyioCall::kRead1:
        return fp_->Read1(n, dst, python_bytes_);
      case PyioCall::kRead:
        break;
    }
    return Read(n, dst);
  }

  pyio::BufferedReader* fp_;
  uint64_t size_;
  const PyioOptions& pyio_;
  bool python_bytes_;
  const std::string& format_;
  uint64_t crop_at_;
};

class PyioReader final : public WholeFileReader {
 public:
  PyioReader(OpenedWholeFile f, PyioOptions pyio, bool python_bytes, WholeFileCheck check)
      : WholeFileReader(std::move(f.file), f.size, f.buffer_size, python_bytes, std::move(check)),
        pyio_(pyio) {}

 protected:
  const char* model_name() const override { return "pyio"; }
  std::string DescribeModel() const override {
    return StrCat(",\"head_bytes\":", pyio_.head_bytes, ",\"read_size\":", pyio_.read_size,
                  ",\"call\":\"", EnumName(pyio_.call), "\"", ",\"tail_bytes\":", pyio_.tail_bytes,
                  ",\"tail_read_size\":", pyio_.tail_read_size,
                  ",\"crop_bytes\":", pyio_.crop_bytes, ",\"end_reads\":", pyio_.end_reads);
  }
  Result<uint64_t> Load(pyio::BufferedReader* fp, SampleBuffer* out) const override {
    const uint64_t head = std::min(pyio_.head_bytes, size());
    const uint64_t at = pyio_.crop_bytes == 0
                            ? 0
                            : PyioCropOffset(path(), draws_++, size(), head, pyio_.crop_bytes);
    return PyioCalls(fp, size(), pyio_, python_bytes(), format_name(), at).Load(out);
  }
  bool LoadsWholeFile() const override { return pyio_.crop_bytes == 0; }

 private:
  PyioOptions pyio_;
  mutable std::atomic<uint64_t> draws_{0};  // crops drawn (ReadSample may run at once)
};

}  // namespace

Result<std::unique_ptr<FormatReader>> OpenPyioReader(Storage* storage, const std::string& path,
                                                     const FormatOptions& options,
                                                     WholeFileCheck check) {
  DLIO_ASSIGN_OR_RETURN(OpenedWholeFile f, OpenWholeFile(storage, path, options));
  return std::unique_ptr<FormatReader>(
      new PyioReader(std::move(f), options.formats.Value<PyioOptions>(),
                     options.framework_client_costs, std::move(check)));
}

}  // namespace dlio::io_models

namespace dlio {

Result<std::vector<std::pair<uint64_t, uint64_t>>> PyioReadRequests(
    uint64_t file_size, size_t buffer_size, uint64_t head_bytes, uint64_t read_size, PyioCall call,
    uint64_t tail_bytes, uint64_t tail_read_size, uint64_t crop_bytes, uint64_t crop_at,
    uint64_t end_reads) {
  const PyioOptions pyio{head_bytes,     read_size,  call,     tail_bytes,
                         tail_read_size, crop_bytes, end_reads};
  // A file with a size and no bytes, read with the calls under a recorder.
  auto storage = pyio::NewSizedFileStorage(file_size);
  const std::string path = "/pyio";
  pyio::ReadRecorder recorder;
  storage->Bind(SystemClock(), &recorder);
  DLIO_ASSIGN_OR_RETURN(auto file, storage->Open(path, OpenMode::kRead));
  pyio::BufferedReader fp(file.get(), buffer_size);
  const std::string name = "pyio";
  SampleBuffer out;
  DLIO_RETURN_NOT_OK(
      io_models::PyioCalls(&fp, file_size, pyio, false, name, crop_at).Load(&out).status());
  return std::move(recorder.reads);
}

uint64_t PyioCropOffset(const std::string& path, uint64_t draw, uint64_t file_size,
                        uint64_t head_bytes, uint64_t crop_bytes) {
  if (file_size < head_bytes + crop_bytes) return head_bytes;  // read from the head to the end
  // splitmix64 of the path's hash and the draw
  uint64_t z = std::hash<std::string>{}(path) + (draw + 1) * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return head_bytes + z % (file_size - head_bytes - crop_bytes + 1);
}

}  // namespace dlio
