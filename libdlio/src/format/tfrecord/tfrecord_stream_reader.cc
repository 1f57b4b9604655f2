// tfrecord under reader.io_model tf.data: each open file is one forward stream, read the way
// TensorFlow's TFRecordDataset reads it (docs/io_models.md, "tf.data", cites the sources):
// RecordReader over a BufferedInputStream of transfer_size bytes (tf.data's buffer_size) over a
// RandomAccessInputStream, so every request is a fill of exactly transfer_size bytes at the
// offset where the previous one ended (the last one short), and records are cut from the
// buffer: a 12-byte header, then the payload and its 4-byte CRC, whatever their size (TF has no
// direct path for large records). No index is opened; records are found as the stream passes
// them.
//
// The order TF reads in is the file's; dlio's plan may ask otherwise:
//  - a later record: the stream reads on through the records before it (TF's shard() and any
//    filter after the dataset read them too); up to kStashRecords of those are kept, so that
//    another read thread asking for one of them right after costs no request (with several
//    threads on one file the requests stay TF's serial stream);
//  - an earlier record no longer kept: the stream restarts at its offset (known: the stream has
//    passed it), as RecordReader repositions its stream (Reset, then skip) when asked for an
//    earlier offset: a fill at the record's offset, and on from there.
// After the file's last planned record the stream looks for the end as TF's next GetNext does:
// a fill at the end of the file when no short fill has been seen yet. Bytes after the last
// expected record mean the file holds more records than dataset.num_samples_per_file.
//
// Thread safety: the stream is serial (TF's iterator holds a mutex too): ReadSample locks.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>

#include "format/io_util.h"
#include "format/tfrecord/crc32c.h"
#include "format/tfrecord/example_wire.h"
#include "format/tfrecord/tfrecord.h"
#include "format/tfrecord/tfrecord_records.h"

namespace dlio::format_internal {
namespace {

constexpr uint64_t kUnknown = std::numeric_limits<uint64_t>::max();
// Records read on past (a later record was asked for) kept for the reads that want them.
constexpr size_t kStashRecords = 8;

class TfRecordStreamReader final : public FormatReader {
 public:
  TfRecordStreamReader(std::unique_ptr<File> file, uint64_t file_size, RecordTable table,
                       uint64_t count, const FormatOptions& options)
      : file_(std::move(file)),
        path_(file_->path()),
        file_size_(file_size),
        count_(count),
        offsets_(std::move(table.offsets)),
        lengths_(std::move(table.lengths)),
        sizes_(count),
        verify_(options.verify),
        transfer_(options.transfer_size == 0 ? kTfRecordDefaultTransfer : options.transfer_size),
        buf_(4096) {
    for (auto& s : sizes_) s.store(kUnknown, std::memory_order_relaxed);
  }

  uint64_t num_samples() const override { return count_; }

  uint64_t sample_size(uint64_t i) const override {
    if (i >= count_) return 0;
    const uint64_t known = sizes_[i].load(std::memory_order_relaxed);
    return known == kUnknown ? 0 : known;  // learned by reading; nothing on the hot path asks
  }

  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    DLIO_RETURN_NOT_OK(CheckSampleIndex(path_, i, count_));
    std::lock_guard<std::mutex> lock(mu_);
    if (TakeStashed(i, out)) return Status::OK();
    if (i < next_) Restart(i);
    while (next_ < i) DLIO_RETURN_NOT_OK(ReadNextRecord(StashSlot(next_)));
    DLIO_RETURN_NOT_OK(ReadNextRecord(out));
    return next_ == count_ ? CheckEnd() : Status::OK();
  }

  std::string DescribeJson() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return "{\"format\":\"tfrecord\",\"path\":" + JsonString(path_) +
           ",\"io_model\":\"tf.data\",\"file_size\":" + std::to_string(file_size_) +
           ",\"num_samples\":" + std::to_string(count_) +
           ",\"records_located\":" + std::to_string(offsets_.size()) +
           ",\"buffer_size\":" + std::to_string(transfer_) +
           ",\"restarts\":" + std::to_string(restarts_) + "}";
  }

 private:
  struct Stashed {
    uint64_t index = kUnknown;
    uint64_t age = 0;
    SampleBuffer bytes;
  };

  // The stream's position: the file offset of the next byte a record read consumes.
  uint64_t Tell() const { return fill_at_ - (limit_ - pos_); }

  // One request of transfer_size bytes at fill_at_ into dst (BufferedInputStream::FillBuffer). A
  // short answer is the end of the file: no request follows it (TF keeps the status).
  Result<uint64_t> Fill(uint8_t* dst) {
    DLIO_ASSIGN_OR_RETURN(size_t got, file_->ReadAt(fill_at_, transfer_, dst));
    fill_at_ += got;
    if (got < transfer_) eof_ = true;
    return got;
  }

  // Copies the stream's next n bytes to dst (BufferedInputStream::ReadNBytes): from the buffer,
  // refilling it when empty. A fill whose bytes all go to dst lands there directly (the same
  // request, one copy less). Returns the bytes copied: fewer than n only at the end of the file.
  Result<uint64_t> ReadBytes(uint64_t n, uint8_t* dst) {
    uint64_t done = 0;
    while (done < n) {
      if (pos_ == limit_) {
        if (eof_) break;
        if (n - done >= transfer_) {
          pos_ = limit_ = 0;
          DLIO_ASSIGN_OR_RETURN(uint64_t got, Fill(dst + done));
          done += got;
          continue;
        }
        if (buf_.size() < transfer_) DLIO_RETURN_NOT_OK(buf_.Resize(transfer_));
        DLIO_ASSIGN_OR_RETURN(limit_, Fill(buf_.data()));
        pos_ = 0;
        if (limit_ == 0) break;
      }
      const uint64_t k = std::min(n - done, limit_ - pos_);
      std::memcpy(dst + done, buf_.data() + pos_, k);
      pos_ += k;
      done += k;
    }
    return done;
  }

  // Reads record next_ from the stream into `out` (its sample bytes) and moves on.
  Status ReadNextRecord(SampleBuffer* out) {
    const uint64_t i = next_, at = Tell();
    uint8_t header[kTfRecordHeaderBytes];
    DLIO_ASSIGN_OR_RETURN(uint64_t got, ReadBytes(kTfRecordHeaderBytes, header));
    if (got == 0) return TooFew(i);
    if (got < kTfRecordHeaderBytes) {
      return Status::Corruption(RecordAt(path_, i, at), ": truncated header (", got,
                                " of 12 bytes before the end)");
    }
    if (verify_) DLIO_RETURN_NOT_OK(CheckCrc(header, 8, header + 8, path_, i, at, "length", at));
    const uint64_t len = Le64(header);
    if (len > file_size_ - at - kTfRecordHeaderBytes ||
        file_size_ - at - kTfRecordHeaderBytes - len < 4) {
      return Status::Corruption(RecordAt(path_, i, at), ": truncated: a record of ", len,
                                " data bytes needs ", len + kTfRecordFramingBytes, " bytes, ",
                                file_size_ - at, " remain in the file");
    }
    if (i < lengths_.size() && lengths_[i] != len) {
      return Status::Corruption(RecordAt(path_, i, at), ": length field says ", len,
                                " bytes but the scan at open said ", lengths_[i]);
    }
    DLIO_RETURN_NOT_OK(out->Resize(len + 4));
    DLIO_ASSIGN_OR_RETURN(got, ReadBytes(len + 4, out->data()));
    if (got < len + 4) {
      return Status::Corruption(RecordAt(path_, i, at), ": truncated: the file ends at ",
                                at + kTfRecordHeaderBytes + got, " inside a record of ",
                                len + kTfRecordFramingBytes, " bytes");
    }
    if (i == offsets_.size()) {
      offsets_.push_back(at);
      lengths_.push_back(len);
    }
    ++next_;
    return TakeSample(i, at, len, out);
  }

  // Checks the data CRC and the Example of record i (payload in `out`) and leaves only the
  // sample bytes in `out`.
  Status TakeSample(uint64_t i, uint64_t at, uint64_t len, SampleBuffer* out) {
    const uint8_t* payload = out->data();
    if (verify_) {
      DLIO_RETURN_NOT_OK(
          CheckCrc(payload, len, payload + len, path_, i, at, "data", at + kTfRecordHeaderBytes));
    }
    SampleSpan span;
    const char* error = nullptr;
    uint64_t error_at = 0;
    if (FindSampleBytes(payload, len, len, &span, &error, &error_at) != ExampleScan::kFound) {
      return Status::Corruption(RecordAt(path_, i, at), ": tf.train.Example at offset ",
                                at + kTfRecordHeaderBytes + error_at, ": ", error);
    }
    std::memmove(out->data(), out->data() + span.offset, span.size);
    sizes_[i].store(span.size, std::memory_order_relaxed);
    return out->Resize(span.size);  // shrinks: keeps the bytes, never reallocates
  }

  // An earlier record: the stream starts over at its offset (the stream has passed it, so the
  // offset is known).
  void Restart(uint64_t i) {
    fill_at_ = offsets_[i];
    pos_ = limit_ = 0;
    eof_ = false;
    next_ = i;
    ++restarts_;
  }

  // After the last expected record: TF's next GetNext reads on to the end of the file.
  Status CheckEnd() {
    if (pos_ == limit_ && !eof_) {
      if (buf_.size() < transfer_) DLIO_RETURN_NOT_OK(buf_.Resize(transfer_));
      DLIO_ASSIGN_OR_RETURN(limit_, Fill(buf_.data()));
      pos_ = 0;
    }
    if (pos_ == limit_) return Status::OK();
    return Status::InvalidArgument(path_, " holds more than ", count_,
                                   " records: bytes follow record ", count_ - 1, " at offset ",
                                   Tell(), " (dataset.num_samples_per_file is ", count_,
                                   "; regenerate the dataset or set the key to match)");
  }

  Status TooFew(uint64_t i) const {
    return Status::InvalidArgument(path_, " holds ", i, " records, but ", count_,
                                   " were expected (dataset.num_samples_per_file; regenerate "
                                   "the dataset or set the key to match)");
  }

  bool TakeStashed(uint64_t i, SampleBuffer* out) {
    for (auto& s : stash_) {
      if (s->index != i) continue;
      if (!out->Resize(s->bytes.size()).ok()) return false;
      std::memcpy(out->data(), s->bytes.data(), s->bytes.size());
      s->index = kUnknown;
      return true;
    }
    return false;
  }

  // A buffer to read record i into while passing it: a free one, else the oldest.
  SampleBuffer* StashSlot(uint64_t i) {
    if (stash_.size() < kStashRecords) stash_.push_back(std::make_unique<Stashed>());
    Stashed* slot = stash_.front().get();
    for (auto& s : stash_) {
      if (s->index == kUnknown) {
        slot = s.get();
        break;
      }
      if (s->age < slot->age) slot = s.get();
    }
    slot->index = i;
    slot->age = ++age_;
    return &slot->bytes;
  }

  std::unique_ptr<File> file_;
  const std::string path_;
  const uint64_t file_size_;
  const uint64_t count_;  // records planned (dataset.num_samples_per_file, or the scan's count)

  mutable std::mutex mu_;                    // guards everything below
  std::vector<uint64_t> offsets_, lengths_;  // records located so far
  mutable std::vector<std::atomic<uint64_t>> sizes_;
  const bool verify_;
  const uint64_t transfer_;
  uint64_t next_ = 0;     // the record at the stream's position
  uint64_t fill_at_ = 0;  // file offset of the next fill
  // buf_ holds the last fill: [pos_, limit_) not yet consumed.
  AlignedBuffer buf_;
  uint64_t pos_ = 0, limit_ = 0;
  bool eof_ = false;  // a fill came back short: the stream has met the end of the file
  uint64_t restarts_ = 0;
  std::vector<std::unique_ptr<Stashed>> stash_;
  uint64_t age_ = 0;
};

}  // namespace

std::unique_ptr<FormatReader> NewTfRecordStreamReader(std::unique_ptr<File> file,
                                                      uint64_t file_size, RecordTable table,
                                                      uint64_t count,
                                                      const FormatOptions& options) {
  return std::make_unique<TfRecordStreamReader>(std::move(file), file_size, std::move(table), count,
                                                options);
}

}  // namespace dlio::format_internal
