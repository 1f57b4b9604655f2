#include "io_models/whole_file_reader.h"

#include <utility>

#include "dlio/str_cat.h"
#include "format/io_util.h"

namespace dlio::io_models {

WholeFileReader::WholeFileReader(std::unique_ptr<File> file, uint64_t size, size_t buffer_size,
                                 bool python_bytes, WholeFileCheck check)
    : file_(std::move(file)),
      size_(size),
      buffer_size_(buffer_size),
      python_bytes_(python_bytes),
      check_(std::move(check)) {}

Status WholeFileReader::ReadSample(uint64_t i, SampleBuffer* out) {
  if (i != 0) {
    return Status::OutOfRange(path(), ": sample ", i, " of a file holding 1 (", format_name(),
                              " under io_model ", model_name(), ": one sample per file)");
  }
  pyio::BufferedReader fp(file_.get(), buffer_size_);
  DLIO_ASSIGN_OR_RETURN(const uint64_t have, Load(&fp, out));
  if (!LoadsWholeFile()) {  // a part of the file (pyio's crop), checked by the model's Load
    return out->Resize(static_cast<size_t>(size_));
  }
  if (have != size_) {
    return Status::Corruption(path(), ": ", format_name(), " file of ", size_,
                              " bytes ended at offset ", have, " while io_model ", model_name(),
                              "'s reads loaded it (did it change?)");
  }
  DLIO_RETURN_NOT_OK(out->Resize(static_cast<size_t>(size_)));
  if (check_.check == nullptr) return Status::OK();
  return check_.check(path(), out->data(), static_cast<size_t>(size_));
}

std::string WholeFileReader::DescribeJson() const {
  return StrCat("{\"format\":\"", format_name(),
                "\",\"path\":", format_internal::JsonString(path()), ",\"io_model\":\"",
                model_name(), "\",\"file_size\":", size_, ",\"buffer_size\":", buffer_size_,
                DescribeModel(), "}");
}

Result<OpenedWholeFile> OpenWholeFile(Storage* storage, const std::string& path,
                                      const FormatOptions& options) {
  DLIO_ASSIGN_OR_RETURN(format_internal::SizedFile sized,
                        format_internal::OpenSized(storage, path, options));
  OpenedWholeFile opened;
  opened.file = std::move(sized.file);
  opened.size = sized.size;
  opened.buffer_size = pyio::PythonBufferSize(storage, *opened.file);
  return opened;
}

}  // namespace dlio::io_models
