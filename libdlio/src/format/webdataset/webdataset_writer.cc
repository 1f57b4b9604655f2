// The webdataset writer: per sample a member of the sample's bytes (`.jpg` by default) and one
// member of its label in decimal per other extension (`.cls`), each behind tarfile's header, then
// two zero blocks and zeros up to a whole 10240-byte record, as tarfile.close() and GNU tar end an
// archive.
#include <algorithm>
#include <cctype>
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

Result<std::vector<std::string>> MemberExtensions(const std::string& members) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= members.size()) {
    const size_t comma = std::min(members.find(',', start), members.size());
    std::string ext = members.substr(start, comma - start);
    start = comma + 1;
    const bool spelled =
        !ext.empty() && ext.size() <= 64 && std::all_of(ext.begin(), ext.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
        });
    if (!spelled) {
      return Status::InvalidArgument("dataset.webdataset_members: \"", ext, "\" in \"", members,
                                     "\" is not an extension (1 to 64 letters, digits, '_', '-' "
                                     "or '.', comma-separated)");
    }
    if (std::find(out.begin(), out.end(), ext) != out.end()) {
      return Status::InvalidArgument("dataset.webdataset_members: \"", ext,
                                     "\" is named twice in \"", members,
                                     "\" (a sample's members need distinct names)");
    }
    out.push_back(std::move(ext));
  }
  if (out.size() > kMaxMembers) {
    return Status::InvalidArgument("dataset.webdataset_members: ", out.size(), " extensions in \"",
                                   members, "\"; at most ", kMaxMembers);
  }
  return out;
}

Status WriteShard(File* file, const FileSpec& spec, const std::vector<std::string>& extensions) {
  if (extensions.empty()) return Status::InvalidArgument("webdataset: no member extensions");
  ShardWriter w(file);
  const tar::MemberMeta meta;
  std::string header;
  for (uint64_t i = 0; i < spec.sample_sizes.size(); ++i) {
    const std::string key = SampleKeyOf(i);
    const uint64_t size = spec.sample_sizes[i];
    header.clear();
    tar::AppendMemberHeader(&header, key + "." + extensions[0], size, meta);
    DLIO_RETURN_NOT_OK(w.Append(header));
    DLIO_RETURN_NOT_OK(w.AppendSample(spec.seed, i, size));
    const std::string label = std::to_string(SampleLabel(spec.seed, i));
    for (size_t e = 1; e < extensions.size(); ++e) {
      header.clear();
      tar::AppendMemberHeader(&header, key + "." + extensions[e], label.size(), meta);
      header += label;
      header.append(tar::PadToBlock(label.size()) - label.size(), '\0');
      DLIO_RETURN_NOT_OK(w.Append(header));
    }
  }
  return w.Finish();
}

}  // namespace dlio::format_internal::webdataset
