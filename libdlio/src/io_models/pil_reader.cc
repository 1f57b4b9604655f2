#include "io_models/pil_reader.h"

#include <utility>

#include "dlio/str_cat.h"

namespace dlio::io_models {
namespace {

// The bytes Image.open's header parse takes through the buffer (its prefix read, `fp.read(16)`);
// any count up to the buffer size makes the same one fill.
constexpr size_t kPilPrefixBytes = 16;

class PilReader final : public WholeFileReader {
 public:
  using WholeFileReader::WholeFileReader;

 protected:
  const char* model_name() const override { return "pil"; }
  std::string DescribeModel() const override { return StrCat(",\"read_bytes\":", kPilReadBytes); }

  // The header parse, the rewind (inside the buffer), then read(65536) until the file is loaded.
  Result<uint64_t> Load(pyio::BufferedReader* fp, SampleBuffer* out) const override {
    // Room for the last read's full request past the end, which finds nothing there.
    DLIO_RETURN_NOT_OK(out->Resize(static_cast<size_t>(size()) + kPilReadBytes));
    uint8_t prefix[kPilPrefixBytes];
    DLIO_RETURN_NOT_OK(fp->ReadInto(sizeof prefix, prefix).status());
    DLIO_RETURN_NOT_OK(fp->Seek(0, 0).status());
    uint64_t have = 0;
    while (have < size()) {
      uint8_t* dst = out->data() + have;
      DLIO_ASSIGN_OR_RETURN(const size_t got, python_bytes() ? fp->Read(kPilReadBytes, dst)
                                                             : fp->ReadInto(kPilReadBytes, dst));
      if (got == 0) break;
      have += got;
    }
    return have;
  }
};

}  // namespace

Result<std::unique_ptr<FormatReader>> OpenPilReader(Storage* storage, const std::string& path,
                                                    const FormatOptions& options,
                                                    WholeFileCheck check) {
  DLIO_ASSIGN_OR_RETURN(OpenedWholeFile f, OpenWholeFile(storage, path, options));
  return std::unique_ptr<FormatReader>(new PilReader(
      std::move(f.file), f.size, f.buffer_size, options.framework_client_costs, std::move(check)));
}

}  // namespace dlio::io_models
