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
//    threads on one file the requests stay TF's serial stream). When the record (or the first
//    record not located yet) is more than kStashRecords records and a buffer beyond the stream,
//    the stream moves there instead (uncompressed files): a shuffled order costs about a
//    record's fills per record, not the bytes in between;
//  - an earlier record no longer kept: the stream restarts at its offset (known: the stream has
//    passed it), as RecordReader repositions its stream (Reset, then skip) when asked for an
//    earlier offset: a fill at the record's offset, and on from there.
// After the file's last planned record the stream looks for the end as TF's next GetNext does:
// a fill at the end of the file when no short fill has been seen yet. Bytes after the last
// expected record mean the file holds more records than dataset.num_samples_per_file.
//
// Compressed files (dataset.compression gzip or zlib: TF's compression_type GZIP / ZLIB) are
// inflated as TF's ZlibInputStream does, on top of the same buffered stream: it asks the buffer
// for up to 256 KiB of input at a time (ZlibCompressionOptions::input_buffer_size) and inflates
// into 256 KiB (output_buffer_size), so the file still sees fills of transfer_size bytes at
// consecutive offsets. Record offsets are then positions in the inflated stream; a restart
// starts the file over from offset 0 and inflates up to the record.
//
// Thread safety: the stream is serial (TF's iterator holds a mutex too): ReadSample locks.
#include <zlib.h>

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
// TF's ZlibCompressionOptions input_buffer_size and output_buffer_size.
constexpr size_t kZlibBuffer = 256 << 10;
// Deflate expands at most ~1032:1, which bounds a compressed file's record lengths.
constexpr uint64_t kMaxInflateRatio = 1032;

class TfRecordStreamReader final : public FormatReader {
 public:
  TfRecordStreamReader(std::unique_ptr<File> file, uint64_t file_size, RecordTable table,
                       uint64_t count, TfRecordCompression compression,
                       const FormatOptions& options)
      : file_(std::move(file)),
        path_(file_->path()),
        file_size_(file_size),
        compression_(compression),
        count_(count),
        offsets_(std::move(table.offsets)),
        lengths_(std::move(table.lengths)),
        sizes_(count),
        verify_(options.verify),
        transfer_(options.transfer_size == 0 ? kTfRecordDefaultTransfer : options.transfer_size),
        buf_(4096) {
    for (auto& s : sizes_) s.store(kUnknown, std::memory_order_relaxed);
  }
  ~TfRecordStreamReader() override {
    if (inflating_) inflateEnd(&zs_);
  }
  TfRecordStreamReader(const TfRecordStreamReader&) = delete;
  TfRecordStreamReader& operator=(const TfRecordStreamReader&) = delete;

  // Sets up inflation for a compressed file and, without a count, counts the records.
  Status Init() {
    if (compression_ != TfRecordCompression::kNone) {
      const int bits = compression_ == TfRecordCompression::kGzip ? 15 + 16 : 15;
      if (inflateInit2(&zs_, bits) != Z_OK) {
        return Status::Internal(path_, ": inflateInit2 failed");
      }
      inflating_ = true;
      zin_.resize(kZlibBuffer);
      zout_.resize(kZlibBuffer);
    }
    return count_ == 0 ? Discover() : Status::OK();
  }

  uint64_t num_samples() const override { return count_; }

  // Learned by reading, else (records already located, uncompressed) peeked with a pread of
  // the record's head, outside the stream; 0 when not known yet. Nothing on the hot path asks.
  uint64_t sample_size(uint64_t i) const override {
    if (i >= count_) return 0;
    const uint64_t known = sizes_[i].load(std::memory_order_relaxed);
    if (known != kUnknown) return known;
    auto peeked = PeekSampleSize(i);
    return peeked.ok() ? *peeked : 0;
  }

  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    DLIO_RETURN_NOT_OK(CheckSampleIndex(path_, i, count_));
    std::lock_guard<std::mutex> lock(mu_);
    if (TakeStashed(i, out)) return Status::OK();
    if (i < next_) {
      DLIO_RETURN_NOT_OK(MoveTo(i));
    } else if (i > next_ && !inflating_) {
      const uint64_t target = std::min<uint64_t>(i, offsets_.size());  // located, or the frontier
      // Gaps of a few records (read threads racing on one file) read on: the serial stream.
      if (target > next_ + kStashRecords && OffsetOf(target) - Tell() > transfer_) {
        DLIO_RETURN_NOT_OK(MoveTo(target));
      }
    }
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

  Result<uint64_t> PeekSampleSize(uint64_t i) const {
    uint64_t at = 0, len = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (inflating_ || i >= offsets_.size()) {
        return Status::FailedPrecondition(path_, " record ", i, " not located yet");
      }
      at = offsets_[i] + kTfRecordHeaderBytes;
      len = lengths_[i];
    }
    std::vector<uint8_t> head(std::min<uint64_t>(len, 512));
    if (!head.empty()) DLIO_RETURN_NOT_OK(file_->ReadExactAt(at, head.size(), head.data()));
    SampleSpan span;
    const char* error = nullptr;
    uint64_t error_at = 0;
    ExampleScan r = FindSampleBytes(head.data(), head.size(), len, &span, &error, &error_at);
    if (r == ExampleScan::kNeedMore) {
      head.resize(len);
      DLIO_RETURN_NOT_OK(file_->ReadExactAt(at, len, head.data()));
      r = FindSampleBytes(head.data(), len, len, &span, &error, &error_at);
    }
    if (r != ExampleScan::kFound) return Status::Corruption(path_, ": record ", i, ": ", error);
    sizes_[i].store(span.size, std::memory_order_relaxed);
    return span.size;
  }

  // The stream's position: the offset of the next byte a record read consumes (in the inflated
  // stream for a compressed file).
  uint64_t Tell() const { return inflating_ ? inflated_at_ : fill_at_ - (limit_ - pos_); }

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

  // The stream's next n bytes of records (ZlibInputStream::ReadNBytes for a compressed file):
  // inflated output first; when inflate makes no progress, more input from the buffered stream
  // (up to kZlibBuffer, the unread input moved to the front). Fewer than n only at the end.
  Result<uint64_t> Pull(uint64_t n, uint8_t* dst) {
    if (!inflating_) return ReadBytes(n, dst);
    uint64_t done = 0;
    while (done < n) {
      if (zout_pos_ < zout_end_) {
        const uint64_t k = std::min<uint64_t>(n - done, zout_end_ - zout_pos_);
        std::memcpy(dst + done, zout_.data() + zout_pos_, k);
        zout_pos_ += k;
        done += k;
        continue;
      }
      zs_.next_out = zout_.data();
      zs_.avail_out = static_cast<uInt>(zout_.size());
      zout_pos_ = 0;
      const int ret = inflate(&zs_, Z_NO_FLUSH);
      if (ret != Z_OK && ret != Z_STREAM_END && ret != Z_BUF_ERROR) {
        return Status::Corruption(
            path_, ": cannot inflate the records after offset ", inflated_at_ + done,
            " of the record stream: ", zs_.msg != nullptr ? zs_.msg : "zlib error");
      }
      if (ret == Z_STREAM_END && compression_ == TfRecordCompression::kGzip) {
        inflateReset(&zs_);  // gzip members may follow one another
      }
      zout_end_ = zout_.size() - zs_.avail_out;
      if (zout_end_ > 0) continue;
      if (zs_.avail_in > 0 && zs_.next_in != zin_.data()) {
        std::memmove(zin_.data(), zs_.next_in, zs_.avail_in);
      }
      const uint64_t want = zin_.size() - zs_.avail_in;
      DLIO_ASSIGN_OR_RETURN(uint64_t got, ReadBytes(want, zin_.data() + zs_.avail_in));
      zs_.next_in = zin_.data();
      zs_.avail_in += static_cast<uInt>(got);
      if (got == 0) break;
    }
    inflated_at_ += done;
    return done;
  }

  // Reads a record header at the stream's position `at`: its data length, or 0 bytes read at
  // the end of the file (*end set).
  Result<uint64_t> ReadHeader(uint64_t i, uint64_t at, bool* end) {
    uint8_t header[kTfRecordHeaderBytes];
    DLIO_ASSIGN_OR_RETURN(uint64_t got, Pull(kTfRecordHeaderBytes, header));
    *end = got == 0;
    if (*end) return uint64_t{0};
    if (got < kTfRecordHeaderBytes) {
      return Status::Corruption(RecordAt(path_, i, at), ": truncated header (", got,
                                " of 12 bytes before the end)");
    }
    if (verify_) DLIO_RETURN_NOT_OK(CheckCrc(header, 8, header + 8, path_, i, at, "length", at));
    const uint64_t len = Le64(header);
    if (inflating_ ? len > std::max<uint64_t>(file_size_, 1) * kMaxInflateRatio
                   : len > file_size_ - at - kTfRecordHeaderBytes ||
                         file_size_ - at - kTfRecordHeaderBytes - len < 4) {
      return Status::Corruption(RecordAt(path_, i, at), ": truncated: a record of ", len,
                                " data bytes cannot fit in the ", file_size_, " bytes of the file");
    }
    if (i < lengths_.size() && lengths_[i] != len) {
      return Status::Corruption(RecordAt(path_, i, at), ": length field says ", len,
                                " bytes but the scan at open said ", lengths_[i]);
    }
    return len;
  }

  // Reads record next_ from the stream into `out` (its sample bytes) and moves on.
  Status ReadNextRecord(SampleBuffer* out) {
    const uint64_t i = next_, at = Tell();
    bool end = false;
    DLIO_ASSIGN_OR_RETURN(uint64_t len, ReadHeader(i, at, &end));
    if (end) return TooFew(i);
    DLIO_RETURN_NOT_OK(out->Resize(len + 4));
    DLIO_ASSIGN_OR_RETURN(uint64_t got, Pull(len + 4, out->data()));
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

  // Starts the stream over at `at` (an uncompressed file: a fill there; a compressed one: from
  // the start of the file, inflating up to `at`).
  Status Reposition(uint64_t at) {
    pos_ = limit_ = 0;
    eof_ = false;
    if (!inflating_) {
      fill_at_ = at;
      return Status::OK();
    }
    fill_at_ = 0;
    inflateReset(&zs_);
    zs_.next_in = zin_.data();
    zs_.avail_in = 0;
    zout_pos_ = zout_end_ = 0;
    inflated_at_ = 0;
    std::vector<uint8_t> skip(std::min<uint64_t>(at, 64 << 10));
    while (inflated_at_ < at) {
      const uint64_t k = std::min<uint64_t>(at - inflated_at_, skip.size());
      DLIO_ASSIGN_OR_RETURN(uint64_t got, Pull(k, skip.data()));
      if (got < k) {
        return Status::Corruption(path_, ": the record stream ends at ", inflated_at_,
                                  " before offset ", at);
      }
    }
    return Status::OK();
  }

  // Where record k starts, for k <= the records located (k == located: after the last one).
  uint64_t OffsetOf(uint64_t k) const {
    if (k < offsets_.size()) return offsets_[k];
    return k == 0 ? 0 : offsets_[k - 1] + lengths_[k - 1] + kTfRecordFramingBytes;
  }

  // The stream starts over at record k (located, or the first not located yet).
  Status MoveTo(uint64_t k) {
    next_ = k;
    ++restarts_;
    return Reposition(OffsetOf(k));
  }

  // Without a trusted count (a compressed file: no scan at offsets): one pass over the records,
  // then the stream starts over.
  Status Discover() {
    std::vector<uint8_t> skip(64 << 10);
    for (uint64_t i = 0;; ++i) {
      const uint64_t at = Tell();
      bool end = false;
      DLIO_ASSIGN_OR_RETURN(uint64_t len, ReadHeader(i, at, &end));
      if (end) break;
      offsets_.push_back(at);
      lengths_.push_back(len);
      for (uint64_t left = len + 4; left > 0;) {
        const uint64_t k = std::min<uint64_t>(left, skip.size());
        DLIO_ASSIGN_OR_RETURN(uint64_t got, Pull(k, skip.data()));
        if (got < k) {
          return Status::Corruption(RecordAt(path_, i, at),
                                    ": truncated: the record stream ends "
                                    "inside a record of ",
                                    len + kTfRecordFramingBytes, " bytes");
        }
        left -= k;
      }
    }
    count_ = offsets_.size();
    sizes_ = std::vector<std::atomic<uint64_t>>(count_);
    for (auto& s : sizes_) s.store(kUnknown, std::memory_order_relaxed);
    return Reposition(0);
  }

  // After the last expected record: TF's next GetNext reads on to the end of the file.
  Status CheckEnd() {
    uint8_t more = 0;
    DLIO_ASSIGN_OR_RETURN(uint64_t got, Pull(1, &more));
    if (got == 0) return Status::OK();
    return Status::InvalidArgument(path_, " holds more than ", count_,
                                   " records: bytes follow record ", count_ - 1, " at offset ",
                                   Tell() - 1, " (dataset.num_samples_per_file is ", count_,
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
  const TfRecordCompression compression_;
  uint64_t count_;  // records planned (dataset.num_samples_per_file, or the scan's count)

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
  // Compressed files: zs_ inflates zin_ (input taken from the buffered stream) into zout_, whose
  // [zout_pos_, zout_end_) is not yet consumed; inflated_at_ is the record-stream position.
  z_stream zs_{};
  bool inflating_ = false;
  std::vector<uint8_t> zin_, zout_;
  uint64_t zout_pos_ = 0, zout_end_ = 0, inflated_at_ = 0;
};

}  // namespace

Result<std::unique_ptr<FormatReader>> NewTfRecordStreamReader(std::unique_ptr<File> file,
                                                              uint64_t file_size, RecordTable table,
                                                              uint64_t count,
                                                              TfRecordCompression compression,
                                                              const FormatOptions& options) {
  auto reader = std::make_unique<TfRecordStreamReader>(std::move(file), file_size, std::move(table),
                                                       count, compression, options);
  DLIO_RETURN_NOT_OK(reader->Init());
  return std::unique_ptr<FormatReader>(std::move(reader));
}

}  // namespace dlio::format_internal
