#include "io_models/pyio_reader.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "dlio/str_cat.h"
#include "format/io_util.h"
#include "io_models/pyio/buffered_reader.h"

namespace dlio::io_models {
namespace {

class PyioReader final : public FormatReader {
 public:
  PyioReader(std::unique_ptr<File> file, uint64_t size, size_t buffer_size, PyioOptions pyio,
             bool python_bytes, WholeFileCheck check)
      : file_(std::move(file)),
        size_(size),
        buffer_size_(buffer_size),
        pyio_(pyio),
        python_bytes_(python_bytes),
        check_(std::move(check)) {}

  uint64_t num_samples() const override { return 1; }
  uint64_t sample_size(uint64_t) const override { return size_; }

  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    if (i != 0) {
      return Status::OutOfRange(file_->path(), ": sample ", i, " of a file holding 1 (",
                                check_.format_name, " under io_model pyio: one sample per file)");
    }
    // Room for the last call's request past the end: a whole chunk, or readall's extra byte.
    DLIO_RETURN_NOT_OK(
        out->Resize(static_cast<size_t>(size_ + std::max<uint64_t>(pyio_.read_size, 1))));
    pyio::BufferedReader fp(file_.get(), buffer_size_);
    uint64_t have = 0;
    if (pyio_.head_bytes > 0) {
      const size_t head = static_cast<size_t>(std::min(pyio_.head_bytes, size_));
      DLIO_ASSIGN_OR_RETURN(have, Read(&fp, head, out->data()));
    }
    if (pyio_.read_size == 0) {
      DLIO_ASSIGN_OR_RETURN(const size_t got, ReadRest(&fp, have, out));
      have += got;
    } else {
      DLIO_ASSIGN_OR_RETURN(const uint64_t got, ReadChunks(&fp, have, out));
      have += got;
    }
    if (have != size_) {
      return Status::Corruption(file_->path(), ": ", check_.format_name, " file of ", size_,
                                " bytes ended at offset ", have,
                                " while io_model pyio's reads loaded it (did it change?)");
    }
    DLIO_RETURN_NOT_OK(out->Resize(static_cast<size_t>(size_)));
    if (check_.check == nullptr) return Status::OK();
    return check_.check(file_->path(), out->data(), static_cast<size_t>(size_));
  }

  std::string DescribeJson() const override {
    return StrCat("{\"format\":\"", check_.format_name,
                  "\",\"path\":", format_internal::JsonString(file_->path()),
                  ",\"io_model\":\"pyio\",\"file_size\":", size_, ",\"buffer_size\":", buffer_size_,
                  ",\"head_bytes\":", pyio_.head_bytes, ",\"read_size\":", pyio_.read_size,
                  ",\"call\":\"", pyio_.readinto ? "readinto" : "read", "\"}");
  }

 private:
  // f.read(n): through a new bytes object under client_costs framework, else straight.
  Result<size_t> Read(pyio::BufferedReader* fp, size_t n, uint8_t* dst) const {
    return python_bytes_ ? fp->Read(n, dst) : fp->ReadInto(n, dst);
  }

  // One call for the rest of the file, after `have` bytes: f.read() or f.readinto(rest).
  Result<size_t> ReadRest(pyio::BufferedReader* fp, uint64_t have, SampleBuffer* out) const {
    uint8_t* dst = out->data() + have;
    const size_t room = out->size() - static_cast<size_t>(have);
    if (pyio_.readinto) return fp->Readinto(static_cast<size_t>(size_ - have), dst);
    if (!python_bytes_) return fp->ReadAllInto(dst, room);
    std::vector<uint8_t> bytes;  // readall's new bytes object
    DLIO_RETURN_NOT_OK(fp->ReadAll(&bytes));
    if (bytes.size() > room) {
      return Status::ResourceExhausted(file_->path(), ": the file grew past ", size_,
                                       " bytes while it was read whole");
    }
    std::copy(bytes.begin(), bytes.end(), dst);
    return bytes.size();
  }

  // Calls of read_size bytes after `have` bytes until one returns nothing.
  Result<uint64_t> ReadChunks(pyio::BufferedReader* fp, uint64_t have, SampleBuffer* out) const {
    const size_t n = static_cast<size_t>(pyio_.read_size);
    uint64_t got_total = 0;
    for (;;) {
      const uint64_t at = have + got_total;
      if (at + n > out->size()) {
        return Status::Corruption(file_->path(), ": ", check_.format_name, " file of ", size_,
                                  " bytes holds more at offset ", at,
                                  " while io_model pyio's reads loaded it (did it change?)");
      }
      uint8_t* dst = out->data() + at;
      DLIO_ASSIGN_OR_RETURN(const size_t got,
                            pyio_.readinto ? fp->Readinto(n, dst) : Read(fp, n, dst));
      if (got == 0) return got_total;
      got_total += got;
    }
  }

  std::unique_ptr<File> file_;
  uint64_t size_;
  size_t buffer_size_;
  PyioOptions pyio_;
  bool python_bytes_;
  WholeFileCheck check_;
};

}  // namespace

Result<std::unique_ptr<FormatReader>> OpenPyioReader(Storage* storage, const std::string& path,
                                                     const FormatOptions& options,
                                                     WholeFileCheck check) {
  FileOptions fo;
  fo.direct = options.direct;
  DLIO_ASSIGN_OR_RETURN(auto file, storage->Open(path, OpenMode::kRead, fo));
  DLIO_ASSIGN_OR_RETURN(const uint64_t size, file->Size());
  const size_t buffer = pyio::PythonBufferSize(pyio::HostBlockSize(storage, path));
  return std::unique_ptr<FormatReader>(new PyioReader(std::move(file), size, buffer, options.pyio,
                                                      options.framework_client_costs,
                                                      std::move(check)));
}

}  // namespace dlio::io_models
