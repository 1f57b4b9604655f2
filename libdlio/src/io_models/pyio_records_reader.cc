#include "io_models/pyio_records_reader.h"

#include <mutex>
#include <utility>

#include "dlio/str_cat.h"
#include "format/io_util.h"
#include "io_models/pyio/buffered_reader.h"
#include "io_models/pyio_options.h"
#include "io_models/whole_file_reader.h"

namespace dlio::io_models {
namespace {

class PyioRecordsReader final : public FormatReader {
 public:
  PyioRecordsReader(OpenedWholeFile f, uint64_t samples, PyioCall call, bool python_bytes)
      : file_(std::move(f.file)),
        size_(f.size),
        samples_(samples),
        record_(f.size / samples),
        call_(call),
        python_bytes_(python_bytes),
        fp_(file_.get(), f.buffer_size) {}

  uint64_t num_samples() const override { return samples_; }
  uint64_t sample_size(uint64_t i) const override { return i < samples_ ? record_ : 0; }

  // f.seek(i * record); f.read(record) (or f.readinto of a buffer that size).
  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    DLIO_RETURN_NOT_OK(format_internal::CheckSampleIndex(file_->path(), i, samples_));
    DLIO_RETURN_NOT_OK(out->Resize(static_cast<size_t>(record_)));
    const uint64_t at = i * record_;
    const size_t n = static_cast<size_t>(record_);
    std::lock_guard<std::mutex> lock(mu_);
    DLIO_RETURN_NOT_OK(fp_.Seek(static_cast<int64_t>(at), 0).status());
    Result<size_t> got = call_ == PyioCall::kReadinto ? fp_.Readinto(n, out->data())
                         : python_bytes_              ? fp_.Read(n, out->data())
                                                      : fp_.ReadInto(n, out->data());
    DLIO_RETURN_NOT_OK(got.status());
    if (*got != n) {
      return Status::Corruption(file_->path(), ": the file ended at offset ", at + *got,
                                " inside record ", i, " of ", samples_, " (", record_,
                                " bytes each, from a size of ", size_, " at open: did it change?)");
    }
    return Status::OK();
  }

  std::string DescribeJson() const override {
    return StrCat("{\"format\":\"raw\",\"path\":", format_internal::JsonString(file_->path()),
                  ",\"file_size\":", size_, ",\"io_model\":\"pyio\",\"call\":\"", EnumName(call_),
                  "\",", format_internal::FixedSampleSizesJson(samples_, record_), "}");
  }

 private:
  std::unique_ptr<File> file_;
  uint64_t size_, samples_, record_;
  PyioCall call_;
  bool python_bytes_;
  std::mutex mu_;  // the Python file object's lock: one call at a time
  pyio::BufferedReader fp_;
};

}  // namespace

Result<std::unique_ptr<FormatReader>> OpenPyioRecordsReader(Storage* storage,
                                                            const std::string& path,
                                                            const FormatOptions& options,
                                                            const std::string& format_name,
                                                            uint64_t samples) {
  const PyioOptions& pyio = options.formats.Value<PyioOptions>();
  if (const char* key = PyioWholeFileKey(pyio)) {
    return Status::InvalidArgument(
        path, ": reader.", key, " describes a whole-file load, but io_model pyio reads this ",
        format_name, " file as ", samples,
        " records (dataset.num_samples_per_file), each with f.seek and one call");
  }
  if (pyio.call == PyioCall::kRead1) {
    return Status::InvalidArgument(path,
                                   ": reader.pyio_call read1 is for chunked loops; a record is "
                                   "read with f.read or f.readinto (reader.pyio_call)");
  }
  DLIO_ASSIGN_OR_RETURN(OpenedWholeFile f, OpenWholeFile(storage, path, options));
  if (samples == 0 || f.size % samples != 0) {
    return Status::Corruption(
        path, ": ", f.size, " bytes do not split into ", samples,
        " equal records (dataset.num_samples_per_file): ", samples == 0 ? f.size : f.size % samples,
        " bytes left over at offset ", samples == 0 ? 0 : f.size - f.size % samples);
  }
  return std::unique_ptr<FormatReader>(
      new PyioRecordsReader(std::move(f), samples, pyio.call, options.framework_client_costs));
}

}  // namespace dlio::io_models
