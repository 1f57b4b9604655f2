// The webdataset reader: a shard is one forward stream (tar_stream.h) cut into samples as
// WebDataset's group_by_keys cuts them: consecutive members sharing a key (the name up to the first
// '.' of its last component) make one sample, whose bytes are its members' data in order. Members
// without a key are skipped, as WebDataset skips them.
//
// The plan may ask for samples out of stream order (several read threads on one shard): a later
// sample reads on, keeping up to kStashSamples skipped samples for the threads that want them; an
// earlier one no longer kept restarts the stream at its first header (known: the stream passed it).
//
// Thread safety: the stream is serial; ReadSample locks.
#include <algorithm>
#include <array>
#include <cstring>
#include <mutex>

#include "format/io_util.h"
#include "format/webdataset/tar_stream.h"
#include "format/webdataset/webdataset.h"

namespace dlio::format_internal::webdataset {
namespace {

constexpr size_t kStashSamples = 8;

class ShardReader final : public FormatReader {
 public:
  ShardReader(std::unique_ptr<File> file, uint64_t file_size, uint64_t read_size, bool direct,
              size_t python_buffer)
      : file_(std::move(file)),
        path_(file_->path()),
        file_size_(file_size),
        read_size_(read_size),
        stream_(file_.get(), file_size, read_size, direct, python_buffer) {}

  // Counts the samples with 512-byte header reads (no expected count), or trusts `expected`.
  Status Init(uint64_t expected) {
    if (expected > 0) {
      count_ = expected;
    } else {
      tar::TarStream scan(file_.get(), file_size_, tar::kBlock);
      Pending pending;
      Sample s;
      std::string extensions;
      while (true) {
        DLIO_ASSIGN_OR_RETURN(bool found, Cut(&scan, &pending, &s, nullptr, &extensions));
        if (!found) break;
        Learn(count_++, s);
        if (count_ == 1) extensions_ = extensions;
        if (extensions != extensions_) mixed_extensions_ = true;
      }
    }
    return Status::OK();
  }

  uint64_t num_samples() const override { return count_; }
  uint64_t sample_size(uint64_t i) const override {
    std::lock_guard<std::mutex> lock(mu_);
    return i < sizes_.size() ? sizes_[i] : 0;
  }

  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    DLIO_RETURN_NOT_OK(CheckSampleIndex(path_, i, count_));
    std::lock_guard<std::mutex> lock(mu_);
    for (Stashed& slot : stash_) {
      if (!slot.used || slot.index != i) continue;
      DLIO_RETURN_NOT_OK(out->Resize(slot.buf.size()));
      if (slot.buf.size() > 0) std::memcpy(out->data(), slot.buf.data(), slot.buf.size());
      slot.used = false;
      return Status::OK();
    }
    if (i < next_) RestartAt(i);
    Status st;
    while (st.ok() && next_ < i) st = ReadOn();
    if (st.ok()) st = ReadNext(out);
    // A failed read leaves the stream inside a sample: the next read starts it over.
    if (!st.ok()) RestartAt(next_ < starts_.size() ? next_ : 0);
    return st;
  }

  std::string DescribeJson() const override {
    std::string j =
        "{\"format\":\"webdataset\",\"members_per_sample\":" + std::to_string(members_per_sample_) +
        ",\"request_bytes\":" + std::to_string(read_size_) + "," + SampleSizesJson(count_, *this);
    // Every sample's members carry the same extensions, which the writer can write: the key that
    // makes it write such shards (dlio-run fit reads it, docs/formats.md "inspect").
    if (!extensions_.empty() && !mixed_extensions_ && MemberExtensions(extensions_).ok()) {
      j += ",\"writer_keys\":{\"dataset.webdataset_members\":" + JsonString(extensions_) + "}";
    }
    return j + "}";
  }

 private:
  struct Pending {
    bool has = false;
    tar::Member m;
  };
  struct Sample {
    uint64_t start = 0, size = 0, members = 0;
  };

  // Cuts the next sample off `s`, its bytes into `out` when not null, its members' extensions
  // comma-separated into `extensions` when not null; false at the archive's end.
  Result<bool> Cut(tar::TarStream* s, Pending* p, Sample* sample, SampleBuffer* out,
                   std::string* extensions = nullptr) {
    std::string_view key;
    while (true) {
      if (!p->has) {
        DLIO_ASSIGN_OR_RETURN(p->has, s->Next(&p->m));
        if (!p->has) return false;
      }
      if (tar::SampleKey(p->m.name, &key)) break;
      DLIO_RETURN_NOT_OK(s->Take(tar::PadToBlock(p->m.size), nullptr));
      p->has = false;
    }
    const std::string sample_key(key);
    *sample = Sample{p->m.header_offset, 0, 0};
    if (extensions != nullptr) extensions->clear();
    std::string_view next_key;
    do {
      if (extensions != nullptr) {
        // The name is the key, a '.', and the extension.
        if (!extensions->empty()) *extensions += ',';
        *extensions += std::string_view(p->m.name).substr(sample_key.size() + 1);
      }
      DLIO_RETURN_NOT_OK(Append(s, p->m, sample->size, out));
      sample->size += p->m.size;
      ++sample->members;
      DLIO_ASSIGN_OR_RETURN(p->has, s->Next(&p->m));
    } while (p->has && tar::SampleKey(p->m.name, &next_key) && next_key == sample_key);
    return true;
  }

  // Appends member m's data to the `have` bytes already in `out` (grown keeping them).
  Status Append(tar::TarStream* s, const tar::Member& m, uint64_t have, SampleBuffer* out) {
    if (out == nullptr) return s->Take(tar::PadToBlock(m.size), nullptr);
    if (have + m.size > out->capacity() && have > 0) {
      std::vector<uint8_t> keep(out->data(), out->data() + have);
      DLIO_RETURN_NOT_OK(out->Resize(have + m.size));
      std::memcpy(out->data(), keep.data(), have);
    } else {
      DLIO_RETURN_NOT_OK(out->Resize(have + m.size));
    }
    DLIO_RETURN_NOT_OK(s->Take(m.size, out->data() + have));
    return s->SkipPadding(m);
  }

  // Moves the stream to sample i's first header (i = 0 or a sample the stream has passed).
  void RestartAt(uint64_t i) {
    stream_.Restart(i == 0 ? 0 : starts_[i]);
    pending_ = {};
    next_ = i;
  }

  void Learn(uint64_t i, const Sample& s) {
    if (i == starts_.size()) {
      starts_.push_back(s.start);
      sizes_.push_back(s.size);
    }
    members_per_sample_ = std::max(members_per_sample_, s.members);
  }

  Status ReadNext(SampleBuffer* out) {
    Sample s;
    DLIO_ASSIGN_OR_RETURN(bool found, Cut(&stream_, &pending_, &s, out));
    if (!found) {
      return Status::Corruption(path_, ": the archive ends at offset ", stream_.Tell(), " after ",
                                next_, " samples, but ", count_, " were expected");
    }
    Learn(next_++, s);
    return Status::OK();
  }

  // Reads the next sample into a stash slot: a free one, else the oldest. The slots' buffers are
  // reused, so reading on allocates nothing once they have grown.
  Status ReadOn() {
    Stashed* slot = &stash_[0];
    for (Stashed& s : stash_) {
      if (!s.used) {
        slot = &s;
        break;
      }
      if (s.age < slot->age) slot = &s;
    }
    slot->used = false;
    slot->index = next_;
    DLIO_RETURN_NOT_OK(ReadNext(&slot->buf));
    slot->used = true;
    slot->age = ++stash_clock_;
    return Status::OK();
  }

  std::unique_ptr<File> file_;
  std::string path_;
  uint64_t file_size_;
  uint64_t read_size_;
  uint64_t count_ = 0;
  mutable std::mutex mu_;  // guards everything below
  tar::TarStream stream_;
  Pending pending_;
  uint64_t next_ = 0;             // the sample the stream is at
  std::vector<uint64_t> starts_;  // first header offset of each sample passed
  std::vector<uint64_t> sizes_;   // and its size
  uint64_t members_per_sample_ = 0;
  std::string extensions_;  // the first sample's members' extensions, when Init counted
  bool mixed_extensions_ = false;
  struct Stashed {
    bool used = false;
    uint64_t index = 0;
    uint64_t age = 0;  // stash_clock_ when filled: the smallest is evicted first
    SampleBuffer buf;
  };
  std::array<Stashed, kStashSamples> stash_;
  uint64_t stash_clock_ = 0;
};

}  // namespace

Result<std::unique_ptr<FormatReader>> OpenShard(std::unique_ptr<File> file, uint64_t read_size,
                                                uint64_t expected_samples, bool direct,
                                                size_t python_buffer) {
  DLIO_ASSIGN_OR_RETURN(uint64_t size, file->Size());
  auto reader =
      std::make_unique<ShardReader>(std::move(file), size, read_size, direct, python_buffer);
  DLIO_RETURN_NOT_OK(reader->Init(expected_samples));
  return std::unique_ptr<FormatReader>(std::move(reader));
}

}  // namespace dlio::format_internal::webdataset
