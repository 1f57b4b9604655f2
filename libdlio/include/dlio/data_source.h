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

// One thread's memory of the file it read last, so that a DataSource can serve the next sample of
// that file without its shared lookup (FormatDataSource: the open reader, without taking the lock
// while nothing changed the order of its open files). Made by DataSource::NewCursor; used by one
// thread at a time (not thread-safe) and dropped before its DataSource. It may keep the last file's
// reader open after the DataSource let it go (an eviction, CloseAll) until it reads another file
// or is dropped, as a Read in progress keeps it.
class DataSourceCursor {
 public:
  virtual ~DataSourceCursor() = default;
};

// Thread safety: Read() and ReadWith() are safe for concurrent use from many threads.
class DataSource {
 public:
  virtual ~DataSource() = default;
  virtual size_t num_files() const = 0;
  virtual const std::string& file_path(uint32_t file) const = 0;
  // Samples in each file, in file order (the sampler plans over this).
  virtual const std::vector<uint64_t>& samples_per_file() const = 0;
  // Reads one sample into `out`. Errors name the file and sample.
  virtual Status Read(SampleRef ref, SampleBuffer* out) = 0;
  // A cursor for one thread's reads through ReadWith (nullptr: this source keeps none).
  virtual std::unique_ptr<DataSourceCursor> NewCursor() { return nullptr; }
  // Read through `cursor` (from this source's NewCursor, or nullptr): the same bytes, errors and
  // requests to storage as Read(ref, out), in the same order.
  virtual Status ReadWith(SampleRef ref, SampleBuffer* out, DataSourceCursor* cursor) {
    (void)cursor;
    return Read(ref, out);
  }
  // Samples first, first + 1, ... (at most n) of first.file as views of what `out` holds, read
  // through `cursor`: FormatReader::ViewsOfHeld of the cursor's reader when ReadWith of each
  // would reach that reader without a lookup, else none. Returns how many it served.
  virtual uint64_t ViewsOfHeld(SampleRef first, uint64_t n, SampleBuffer* out,
                               DataSourceCursor* cursor, SampleSpan* spans) {
    (void)first, (void)n, (void)out, (void)cursor, (void)spans;
    return 0;
  }
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
  // Each Read opens the sample's file for that sample alone and closes it after (no reader is
  // kept, max_open_files does not apply): a program whose every sample load opens its file
  // (reader.open_per_sample).
  bool open_per_sample = false;
  // When the source is made, every file is opened once as its reader opens it, read as a
  // program that only learns about it reads it (FormatReader::ReadOpenedFileFacts), and closed,
  // in the file list's order, before any sample is read: a Dataset's __init__ that opens each
  // file to count its samples (fastMRI's SliceDataset; reader.open_files_at_start). The counts
  // come from these opens when samples_per_file is 0.
  bool open_files_at_start = false;
};

// A Format reader bound to a Storage over a list of files. Does not own storage or format.
Result<std::unique_ptr<DataSource>> MakeFormatDataSource(Storage* storage, const Format* format,
                                                         std::vector<std::string> files,
                                                         const FormatDataSourceOptions& options);

}  // namespace dlio
