// Readers whose one sample is a whole file loaded through Python's buffered file by a model's
// calls (the pil and pyio models): what they share, and what the format checks of the bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "dlio/format.h"
#include "dlio/status.h"
#include "dlio/storage.h"
#include "io_models/pyio/buffered_reader.h"

namespace dlio::io_models {

// What the reader checks of the bytes it loaded: the format's name for errors, and whether the
// file is one of that format (Corruption naming the file and the offset otherwise); no check
// when `check` is null.
struct WholeFileCheck {
  std::string format_name;
  Status (*check)(const std::string& path, const uint8_t* data, size_t size) = nullptr;
};

// One sample per file, the file's bytes. ReadSample(0) builds a BufferedReader of `buffer_size`
// over the file, lets the model Load the whole file with its calls, and fails naming the file
// when the calls loaded another size than fstat gave at open (the file changed) or the check
// fails (unless the model loads part of the file: LoadsWholeFile). Each ReadSample has its own
// BufferedReader, so reads of one reader may run at once.
class WholeFileReader : public FormatReader {
 public:
  WholeFileReader(std::unique_ptr<File> file, uint64_t size, size_t buffer_size, bool python_bytes,
                  WholeFileCheck check);

  uint64_t num_samples() const override { return 1; }
  uint64_t sample_size(uint64_t) const override { return size_; }
  Status ReadSample(uint64_t i, SampleBuffer* out) final;
  std::string DescribeJson() const final;

 protected:
  // The model's calls: the whole file into `out` (resized to hold it and what the last call asks
  // past the end); returns the bytes they loaded.
  virtual Result<uint64_t> Load(pyio::BufferedReader* fp, SampleBuffer* out) const = 0;
  virtual const char* model_name() const = 0;
  // The model's own fields for DescribeJson (",\"key\":value..."), after the shared ones.
  virtual std::string DescribeModel() const = 0;
  // Whether Load reads every byte of the file; a model that reads part of it (pyio's crop) checks
  // what it read itself, and neither the size check nor `check` (which needs the whole file) runs.
  virtual bool LoadsWholeFile() const { return true; }

  const std::string& path() const { return file_->path(); }
  const std::string& format_name() const { return check_.format_name; }
  uint64_t size() const { return size_; }
  // reader.client_costs framework: each read goes through a new bytes object, copied.
  bool python_bytes() const { return python_bytes_; }

 private:
  std::unique_ptr<File> file_;
  uint64_t size_;
  size_t buffer_size_;
  bool python_bytes_;
  WholeFileCheck check_;
};

// Opens `path` as `open(path, "rb")` does (open and fstat); the size and the buffer size
// (st_blksize) a WholeFileReader is made with.
struct OpenedWholeFile {
  std::unique_ptr<File> file;
  uint64_t size = 0;
  size_t buffer_size = 0;
};
Result<OpenedWholeFile> OpenWholeFile(Storage* storage, const std::string& path,
                                      const FormatOptions& options);

}  // namespace dlio::io_models
