// webdataset: tar shards of samples as WebDataset's TarWriter writes them (by default one
// `<key>.jpg` of the sample's bytes and one `<key>.cls` of its decimal label per sample; the
// extensions are dataset.webdataset_members), read as WebDataset's tar_file_iterator streams
// them: members grouped into samples by key (docs/formats.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dlio/format.h"

namespace dlio::format_internal::webdataset {

// Bytes per request of the tarfile request model: tarfile.open(mode="r|")'s _Stream reads its file
// in requests of bufsize = RECORDSIZE (docs/io_models.md, "tarfile").
inline constexpr uint64_t kTarfileBufsize = 10240;

// The member names of sample `i` of a shard ("sample000012.jpg", "sample000012.cls").
std::string SampleKeyOf(uint64_t i);

// dataset.webdataset_members split at its commas: 1 to kMaxMembers extensions, each 1 to 64
// characters of letters, digits, '_', '-' and '.', none twice; InvalidArgument naming the key
// and the extension otherwise.
inline constexpr size_t kMaxMembers = 16;
Result<std::vector<std::string>> MemberExtensions(const std::string& members);

// Writes `spec` as a tar shard to `file` (Python tarfile's bytes for the same members): per
// sample a member `<key>.<extensions[0]>` of its bytes, then one `<key>.<ext>` of its label in
// decimal for each other extension.
Status WriteShard(File* file, const FileSpec& spec, const std::vector<std::string>& extensions);

// Opens a shard that is read as one forward stream in requests of `read_size` bytes (`direct`:
// large member data straight into the sample; `python_buffer` > 0: through Python's buffered file
// of that size, as WebDataset opens a shard; tar_stream.h).
// `expected_samples` > 0 is trusted (as WebDataset never counts); 0 counts the samples at open
// with one 512-byte read per header (what `inspect` and the tests need).
Result<std::unique_ptr<FormatReader>> OpenShard(std::unique_ptr<File> file, uint64_t read_size,
                                                uint64_t expected_samples, bool direct,
                                                size_t python_buffer = 0);

}  // namespace dlio::format_internal::webdataset
