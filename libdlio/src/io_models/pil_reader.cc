#include "io_models/pil_reader.h"

#include <utility>

#include "dlio/str_cat.h"
#include "io_models/pil_calls.h"
#include "io_models/pil_png_load.h"

namespace dlio::io_models {
namespace {

// The bytes Image.open's header parse takes through the buffer (its prefix read, `fp.read(16)`);
// any count up to the buffer size makes the same one fill.
constexpr size_t kPilPrefixBytes = 16;

// JpegImagePlugin's load: read(65536) until the file is loaded.
Result<uint64_t> LoadJpegAsPil(PilCalls* calls, uint64_t size) {
  while (calls->loaded() < size) {
    DLIO_ASSIGN_OR_RETURN(const size_t got, calls->Read(kPilReadBytes));
    if (got == 0) break;
  }
  return calls->loaded();
}

class PilReader final : public WholeFileReader {
 public:
  PilReader(OpenedWholeFile f, bool python_bytes, WholeFileCheck check, PilPlugin plugin)
      : WholeFileReader(std::move(f.file), f.size, f.buffer_size, python_bytes, std::move(check)),
        plugin_(plugin) {}

 protected:
  const char* model_name() const override { return "pil"; }
  std::string DescribeModel() const override {
    return StrCat(",\"plugin\":\"", plugin_ == PilPlugin::kPng ? "png" : "jpeg",
                  "\",\"read_bytes\":", kPilReadBytes);
  }

  // Image.open's prefix read and rewind (inside the buffer), then the plugin's calls.
  Result<uint64_t> Load(pyio::BufferedReader* fp, SampleBuffer* out) const override {
    // Room for the last read's full request past the end, which finds nothing there.
    const size_t capacity = static_cast<size_t>(size()) + kPilReadBytes;
    DLIO_RETURN_NOT_OK(out->Resize(capacity));
    PilCalls calls(fp, out, capacity, python_bytes());
    DLIO_RETURN_NOT_OK(calls.PrefixAndRewind());
    if (plugin_ == PilPlugin::kPng) return LoadPngAsPil(&calls);
    return LoadJpegAsPil(&calls, size());
  }

 private:
  PilPlugin plugin_;
};

}  // namespace

Result<size_t> PilCalls::Read(size_t n) {
  if (n > capacity_ - loaded_) {
    return Status::Corruption(path(), ": a read of ", n, " bytes at offset ", loaded_,
                              " runs past the end of the file (a length field out of range)");
  }
  uint8_t* dst = out_->data() + loaded_;
  DLIO_ASSIGN_OR_RETURN(const size_t got,
                        python_bytes_ ? fp_->Read(n, dst) : fp_->ReadInto(n, dst));
  loaded_ += got;
  return got;
}

Status PilCalls::PrefixAndRewind() {
  DLIO_RETURN_NOT_OK(Seek(0));
  DLIO_RETURN_NOT_OK(Read(kPilPrefixBytes).status());
  return Seek(0);
}

Status PilCalls::Tell() { return fp_->Tell().status(); }

Status PilCalls::Seek(uint64_t offset) {
  DLIO_RETURN_NOT_OK(fp_->Seek(static_cast<int64_t>(offset), 0).status());
  loaded_ = offset;
  return Status::OK();
}

Result<std::unique_ptr<FormatReader>> OpenPilReader(Storage* storage, const std::string& path,
                                                    const FormatOptions& options,
                                                    WholeFileCheck check, PilPlugin plugin) {
  DLIO_ASSIGN_OR_RETURN(OpenedWholeFile f, OpenWholeFile(storage, path, options));
  return std::unique_ptr<FormatReader>(
      new PilReader(std::move(f), options.framework_client_costs, std::move(check), plugin));
}

}  // namespace dlio::io_models
