// webdataset: tar shards of samples as WebDataset's TarWriter writes them (one `<key>.jpg` of the
// sample's bytes and one `<key>.cls` of its decimal label per sample), read as WebDataset's
// tar_file_iterator streams them: members grouped into samples by key (docs/formats.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "dlio/format.h"

namespace dlio::format_internal::webdataset {

// Bytes per request of the tarfile request model: tarfile.open(mode="r|")'s _Stream reads its file
// in requests of bufsize = RECORDSIZE (docs/io_models.md, "tarfile").
inline constexpr uint64_t kTarfileBufsize = 10240;

// The member names of sample `i` of a shard ("sample000012.jpg", "sample000012.cls").
std::string SampleKeyOf(uint64_t i);

// Writes `spec` as a tar shard to `file` (Python tarfile's bytes for the same members).
Status WriteShard(File* file, const FileSpec& spec);

// Opens a shard that is read as one forward stream in requests of `read_size` bytes (`direct`:
// large member data straight into the sample; `python_buffer` > 0: through Python's buffered file
// of that size, as WebDataset opens a shard; tar_stream.h).
// `expected_samples` > 0 is trusted (as WebDataset never counts); 0 counts the samples at open
// with one 512-byte read per header (what `inspect` and the tests need).
Result<std::unique_ptr<FormatReader>> OpenShard(std::unique_ptr<File> file, uint64_t read_size,
                                                uint64_t expected_samples, bool direct,
                                                size_t python_buffer = 0);

}  // namespace dlio::format_internal::webdataset
