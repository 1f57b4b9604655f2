// The webdataset writer: per sample a `.jpg` member of the sample's bytes and a `.cls` member of
// its label in decimal, each behind tarfile's header, then two zero blocks and zeros up to a
// whole 10240-byte record, as tarfile.close() and GNU tar end an archive.
#include <cstdio>

#include "format/content.h"
#include "format/io_util.h"
#include "format/webdataset/tar_header.h"
#include "format/webdataset/webdataset.h"

namespace dlio::format_internal::webdataset {
namespace {

// Appends to the file in kWriteChunk writes; payloads are generated into the same buffer.
class ShardWriter {
 public:
  explicit ShardWriter(File* file) : file_(file) { buf_.reserve(kWriteChunk); }

  Status Append(const std::string& bytes) {
    buf_.append(bytes);
    return buf_.size() >= kWriteChunk ? Flush() : Status::OK();
  }

  // The member's payload, regenerated piece by piece, and its padding.
  Status AppendSample(uint64_t seed, uint64_t sample, uint64_t size) {
    for (uint64_t done = 0; done < size;) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(size - done, kWriteChunk));
      const size_t at = buf_.size();
      buf_.resize(at + n);
      FillSampleBytes(seed, sample, done, reinterpret_cast<uint8_t*>(buf_.data() + at), n);
      done += n;
      if (buf_.size() >= kWriteChunk) DLIO_RETURN_NOT_OK(Flush());
    }
    return Append(std::string(tar::PadToBlock(size) - size, '\0'));
  }

  Status Finish() {
    const uint64_t end = offset_ + buf_.size() + 2 * tar::kBlock;
    const uint64_t padded = (end + tar::kRecord - 1) / tar::kRecord * tar::kRecord;
    buf_.append(padded - (offset_ + buf_.size()), '\0');
    return Flush();
  }

 private:
  Status Flush() {
    if (buf_.empty()) return Status::OK();
    DLIO_RETURN_NOT_OK(file_->WriteAt(offset_, buf_.data(), buf_.size()));
    offset_ += buf_.size();
    buf_.clear();
    return Status::OK();
  }

  File* file_;
  uint64_t offset_ = 0;
  std::string buf_;
};

}  // namespace

std::string SampleKeyOf(uint64_t i) {
  char key[32];
  std::snprintf(key, sizeof key, "sample%06llu", static_cast<unsigned long long>(i));
  return key;
}

Status WriteShard(File* file, const FileSpec& spec) {
  ShardWriter w(file);
  const tar::MemberMeta meta;
  std::string header;
  for (uint64_t i = 0; i < spec.sample_sizes.size(); ++i) {
    const std::string key = SampleKeyOf(i);
    const uint64_t size = spec.sample_sizes[i];
    header.clear();
    tar::AppendMemberHeader(&header, key + ".jpg", size, meta);
    DLIO_RETURN_NOT_OK(w.Append(header));
    DLIO_RETURN_NOT_OK(w.AppendSample(spec.seed, i, size));
    const std::string label = std::to_string(SampleLabel(spec.seed, i));
    header.clear();
    tar::AppendMemberHeader(&header, key + ".cls", label.size(), meta);
    header += label;
    header.append(tar::PadToBlock(label.size()) - label.size(), '\0');
    DLIO_RETURN_NOT_OK(w.Append(header));
  }
  return w.Finish();
}

}  // namespace dlio::format_internal::webdataset
