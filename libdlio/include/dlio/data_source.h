// DataSource: the bytes of sample i of file f, and how many samples each file holds.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dlio/format.h"
#include "dlio/status.h"
#include "dlio/storage.h"

namespace dlio {

// Which sample: file index (into the DataSource's file list) and sample index within the file.
struct SampleRef {
  uint32_t file = 0;
  uint64_t index = 0;
  bool operator==(const SampleRef& o) const { return file == o.file && index == o.index; }
  bool operator<(const SampleRef& o) const {
    return file != o.file ? file < o.file : index < o.index;
  }
};

// Thread safety: Read() is safe for concurrent use from many threads.
class DataSource {
 public:
  virtual ~DataSource() = default;
  virtual size_t num_files() const = 0;
  virtual const std::string& file_path(uint32_t file) const = 0;
  // Samples in each file, in file order (the sampler plans over this).
  virtual const std::vector<uint64_t>& samples_per_file() const = 0;
  // Reads one sample into `out`. Errors name the file and sample.
  virtual Status Read(SampleRef ref, SampleBuffer* out) = 0;
  // Drops open readers (end of an epoch); the next Read reopens.
  virtual void CloseAll() {}
};

struct FormatDataSourceOptions {
  FormatOptions format;
  // When > 0, plan with this sample count for every file instead of opening each file up front
  // (DLIO's num_samples_per_file; avoids a metadata storm on 500k-file datasets). Each file is
  // checked when it is first opened: one that holds another count fails the Read with
  // InvalidArgument naming the file, dataset.num_samples_per_file and both counts.
  uint64_t samples_per_file = 0;
  size_t max_open_files = 64;  // readers kept open (LRU); a reopen is traced like any open
};

// A Format reader bound to a Storage over a list of files. Does not own storage or format.
Result<std::unique_ptr<DataSource>> MakeFormatDataSource(Storage* storage, const Format* format,
                                                         std::vector<std::string> files,
                                                         const FormatDataSourceOptions& options);

}  // namespace dlio
