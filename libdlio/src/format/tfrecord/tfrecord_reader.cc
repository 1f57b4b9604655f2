// tfrecord reader.
//
// generator. Beside each file, "<file>.idx" in DALI's text index format.
//
// Reading. Records are located at Open: from the .idx when TfrecordOptions::use_index and it
// exists (validated: records must tile the file from offset 0), else by scanning the 12-byte
// headers (one small pread per record, data skipped). ReadSample then reads whole records in one
// of two ways:
//  - Streaming, like tf.data's buffered reader: the reader keeps a cursor (the next record) and
//    a buffer of transfer_size bytes. A read of the cursor's record, or of a record that starts
//    inside the buffered bytes, continues the stream: requests at consecutive offsets, so a
//    sequential pass reads every byte once. A record already wholly in the buffer is a copy.
//    Small records (payload under max(kDirectMin, transfer_size)) read on in requests of
//    exactly transfer_size, tf.data's pattern (whole requests' worth go straight into the
//    sample buffer, the rest through the stream buffer). Large ones are read around the
//    buffer: their sample bytes in requests of at most transfer_size that end where the sample
//    ends, straight into the caller's SampleBuffer, then one request for the rest of the record
//    that reads on over the next record's header and Example prefix (kHeadBytes), so the next
//    large record needs no request of its own for them. Each byte is still read once.
//  - Random access: any other record is read on its own, and the cursor moves after it (a
//    seek), so a sequential pass may start anywhere (and a new pass over the file restarts the
//    stream). Small records: [offset, offset + record size) in transfer_size requests into the
//    SampleBuffer, the sample then moved to its front. Large ones: the head (kHeadBytes), the
//    sample bytes in transfer_size requests straight into the SampleBuffer, then the rest. With
//    several read threads on one sequential order, a thread that arrives late usually finds its
//    record still in the buffer; if not, its read is a seek and the stream resumes after it,
//    costing at most the buffered bytes. (An earlier version let late reads leave the cursor
//    alone; on files of few records that kept a second pass from ever streaming again.)
// Concurrency: the cursor and buffer are guarded by a mutex held across the stream's I/O (a
// stream is inherently serial); random reads decide under the mutex and read outside it with
// File::ReadAt into the caller's buffer, so they proceed in parallel.
//
// Every record is checked (length field against the index, both CRCs when verify) and its
// Example parsed by FindSampleBytes on the record's head (header + first kPeekBytes of the
// payload, in a local array). The sample bytes then go to the front of the SampleBuffer and the
// rest of the payload with the data CRC just past them (in the same buffer's capacity), so each
// byte is copied once, and the data CRC is extended over each piece as it is read, while it is
// in cache. A record whose head does not place the sample (foreign Examples) is read whole into
// the SampleBuffer and the sample moved to the front. No allocation per sample once the
// buffers have grown to the largest record.
//
// sample_size(i) is the size of the sample bytes, which only the record's Example can tell: it is
// learned by every ReadSample, or on first use by a pread of the record's first 512 bytes (all
// our writer's records need), and cached. Nothing on the hot path calls it.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <mutex>

#include "format/io_util.h"
#include "format/tfrecord/crc32c.h"
#include "format/tfrecord/example_wire.h"
#include "format/tfrecord/tfrecord.h"
#include "format/tfrecord/tfrecord_records.h"

namespace dlio::format_internal {
namespace {

constexpr size_t kPeekBytes = 512;
// A record's header and payload prefix: enough to place our writer's samples.
constexpr uint64_t kHeadBytes = kTfRecordHeaderBytes + kPeekBytes;
// Records of at least this many payload bytes, and at least transfer_size, are read around the
// stream buffer, their sample bytes straight into the caller's buffer (see StreamRecord). Below
// 64 KiB the request or two more per record would cost more than the copy they save; below
// transfer_size, several records share a request in tf.data's pattern, which we keep: direct
// reads would multiply the requests the storage sees (resnet50's 112 KiB samples with 256 KiB
// requests: 2 per sample instead of 0.45).
constexpr uint64_t kDirectMin = 64 << 10;
// StreamCopy's `ahead` for "whole transfer_size requests".
constexpr uint64_t kWholeRequests = std::numeric_limits<uint64_t>::max();
constexpr uint64_t kUnknown = std::numeric_limits<uint64_t>::max();

class TfRecordReader final : public FormatReader {
 public:
  TfRecordReader(std::unique_ptr<File> file, uint64_t file_size, RecordTable table,
                 std::string idx_path, bool index_found, bool index_used,
                 const FormatOptions& options)
      : file_(std::move(file)),
        path_(file_->path()),
        file_size_(file_size),
        offsets_(std::move(table.offsets)),
        lengths_(std::move(table.lengths)),
        sizes_(offsets_.size()),
        idx_path_(std::move(idx_path)),
        index_found_(index_found),
        index_used_(index_used),
        verify_(options.verify),
        transfer_(options.transfer_size == 0 ? kTfRecordDefaultTransfer : options.transfer_size),
        direct_min_(std::max(kDirectMin, transfer_)),
        buf_(4096) {
    for (auto& s : sizes_) s.store(kUnknown, std::memory_order_relaxed);
  }

  uint64_t num_samples() const override { return offsets_.size(); }

  uint64_t sample_size(uint64_t i) const override {
    if (i >= offsets_.size()) return 0;
    const uint64_t known = sizes_[i].load(std::memory_order_relaxed);
    if (known != kUnknown) return known;
    auto peeked = PeekSampleSize(i);
    return peeked.ok() ? *peeked : 0;  // the error resurfaces when the sample is read
  }

  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    DLIO_RETURN_NOT_OK(CheckSampleIndex(path_, i, offsets_.size()));
    const uint64_t off = offsets_[i], rec = lengths_[i] + kTfRecordFramingBytes;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (off >= buf_begin_ && off <= buf_end_ && (i >= next_ || rec <= buf_end_ - off)) {
        // In the buffer, or the stream goes on to it (skipping what lies between).
        Status st = StreamRecord(i, out);
        if (i >= next_) next_ = i + 1;
        if (!st.ok()) buf_begin_ = buf_end_ = off;  // next time, start over from a clean seek
        return st;
      }
      next_ = i + 1;  // a seek: the stream resumes after record i
      buf_begin_ = buf_end_ = off + rec;
    }
    if (lengths_[i] >= direct_min_) return RandomRecordDirect(i, out);
    DLIO_RETURN_NOT_OK(out->Resize(rec));
    DLIO_RETURN_NOT_OK(ReadRange(file_.get(), off, rec, transfer_, out->data()));
    return FinishRecord(i, out);
  }

  std::string DescribeJson() const override {
    std::vector<std::string> problems;
    const std::string check = CheckAllRecords(&problems);
    uint64_t min_rec = 0, max_rec = 0;
    for (size_t i = 0; i < lengths_.size(); ++i) {
      const uint64_t r = lengths_[i] + kTfRecordFramingBytes;
      min_rec = i == 0 ? r : std::min(min_rec, r);
      max_rec = std::max(max_rec, r);
    }
    return "{\"format\":\"tfrecord\",\"path\":" + JsonString(path_) +
           ",\"file_size\":" + std::to_string(file_size_) +
           ",\"num_records\":" + std::to_string(offsets_.size()) + "," +
           SampleSizesJson(offsets_.size(), *this) +
           ",\"record_size\":{\"min\":" + std::to_string(min_rec) +
           ",\"max\":" + std::to_string(max_rec) +
           "},\"index\":{\"path\":" + JsonString(idx_path_) +
           ",\"found\":" + (index_found_ ? "true" : "false") +
           ",\"used\":" + (index_used_ ? "true" : "false") + "},\"features\":" + FeaturesJson() +
           ",\"crc_check\":" + check + ProblemsJson(problems) + "}";
  }

 private:
  // Copies file bytes [from, from + n) of record i to dst, from the stream buffer and then by
  // reading on from buf_end_. Each request is transfer_size bytes, or fewer when `ahead` (the
  // bytes wanted past this copy) is smaller: a request that holds only bytes of this copy goes
  // straight into dst, one that reaches past it goes through the buffer. With `crc`, extends
  // *crc over each piece as it lands (while it is in cache). Requires buf_begin_ <= from <=
  // buf_end_ (or n == 0).
  Status StreamCopy(uint64_t i, uint64_t from, uint64_t n, uint8_t* dst, uint64_t ahead,
                    uint32_t* crc) {
    if (n == 0) return Status::OK();
    if (from < buf_end_) {
      const uint64_t k = std::min(n, buf_end_ - from);
      std::memcpy(dst, buf_.data() + (from - buf_begin_), k);
      if (crc != nullptr) *crc = Crc32cExtend(*crc, dst, k);
      dst += k;
      n -= k;
    }
    while (n > 0) {
      const uint64_t want = n >= transfer_ || ahead >= transfer_ - n ? transfer_ : n + ahead;
      const uint64_t at = buf_end_;
      if (want <= n) {  // all of it is ours: straight into the destination
        DLIO_ASSIGN_OR_RETURN(size_t got, file_->ReadAt(at, want, dst));
        if (got < want) return Truncated(i, at + got);
        buf_begin_ = buf_end_ = at + want;
        if (crc != nullptr) *crc = Crc32cExtend(*crc, dst, want);
        dst += want;
        n -= want;
        continue;
      }
      if (buf_.size() < want) DLIO_RETURN_NOT_OK(buf_.Resize(want));
      buf_begin_ = at;  // the buffer is about to be overwritten
      DLIO_ASSIGN_OR_RETURN(size_t got, file_->ReadAt(at, want, buf_.data()));
      buf_end_ = at + got;
      if (got < n) return Truncated(i, at + got);
      std::memcpy(dst, buf_.data(), n);
      if (crc != nullptr) *crc = Crc32cExtend(*crc, dst, n);
      n = 0;
    }
    return Status::OK();
  }

  // Record i through the stream, each byte copied once: the header and the payload's first
  // kPeekBytes into a local array, where the sample's position is found, then ReadSplit.
  // Payloads whose sample the prefix cannot place take the general path (whole record into
  // `out`, then FinishRecord). Small records read on in whole transfer_size requests, as
  // tf.data does; large ones (direct_min_) stop each request where the piece ends, so the sample
  // bytes are read straight into `out`, and the request that ends the record reads on over the
  // next record's head, so that a large record costs no request for its head.
  Status StreamRecord(uint64_t i, SampleBuffer* out) {
    const uint64_t off = offsets_[i], len = lengths_[i];
    const bool large = len >= direct_min_;
    const uint64_t piece_ahead = large ? 0 : kWholeRequests;
    const uint64_t last_ahead = large ? kHeadBytes : kWholeRequests;
    uint8_t head[kHeadBytes];
    const uint64_t plen = std::min<uint64_t>(len, kPeekBytes);
    DLIO_RETURN_NOT_OK(StreamCopy(i, off, kTfRecordHeaderBytes + plen, head, piece_ahead, nullptr));
    SampleSpan span;
    if (!FindInHead(i, head, plen, &span)) {
      const uint64_t rec = len + kTfRecordFramingBytes, have = kTfRecordHeaderBytes + plen;
      DLIO_RETURN_NOT_OK(out->Resize(rec));
      std::memcpy(out->data(), head, have);
      DLIO_RETURN_NOT_OK(
          StreamCopy(i, off + have, rec - have, out->data() + have, last_ahead, nullptr));
      return FinishRecord(i, out);
    }
    return ReadSplit(i, head, plen, span, out,
                     [&](uint64_t from, uint64_t n, uint8_t* dst, bool last, uint32_t* crc) {
                       return StreamCopy(i, from, n, dst, last ? last_ahead : piece_ahead, crc);
                     });
  }

  // A large record read on its own (random access), the same way without the stream buffer:
  // a request for the head, the sample bytes in transfer_size requests straight into `out`,
  // one for the rest of the record.
  Status RandomRecordDirect(uint64_t i, SampleBuffer* out) {
    const uint64_t off = offsets_[i], len = lengths_[i];
    uint8_t head[kHeadBytes];
    const uint64_t plen = std::min<uint64_t>(len, kPeekBytes), have = kTfRecordHeaderBytes + plen;
    DLIO_RETURN_NOT_OK(ReadPieces(i, off, have, head, nullptr));
    SampleSpan span;
    if (!FindInHead(i, head, plen, &span)) {
      const uint64_t rec = len + kTfRecordFramingBytes;
      DLIO_RETURN_NOT_OK(out->Resize(rec));
      std::memcpy(out->data(), head, have);
      DLIO_RETURN_NOT_OK(ReadPieces(i, off + have, rec - have, out->data() + have, nullptr));
      return FinishRecord(i, out);
    }
    return ReadSplit(i, head, plen, span, out,
                     [&](uint64_t from, uint64_t n, uint8_t* dst, bool, uint32_t* crc) {
                       return ReadPieces(i, from, n, dst, crc);
                     });
  }

  // File bytes [from, from + n) of record i into dst in transfer_size requests (the last
  // shorter), extending *crc over each piece when `crc`.
  Status ReadPieces(uint64_t i, uint64_t from, uint64_t n, uint8_t* dst, uint32_t* crc) const {
    for (uint64_t done = 0; done < n;) {
      const uint64_t k = std::min(transfer_, n - done);
      DLIO_ASSIGN_OR_RETURN(size_t got, file_->ReadAt(from + done, k, dst + done));
      if (got < k) return Truncated(i, from + done + got);
      if (crc != nullptr) *crc = Crc32cExtend(*crc, dst + done, k);
      done += k;
    }
    return Status::OK();
  }

  // Whether head (the record's 12 header bytes and the payload's first plen) has the expected
  // length field and places the sample; if not, the caller reads the whole record and
  // FinishRecord says what is wrong.
  bool FindInHead(uint64_t i, const uint8_t* head, uint64_t plen, SampleSpan* span) const {
    const char* error = nullptr;
    uint64_t error_at = 0;
    return Le64(head) == lengths_[i] &&
           FindSampleBytes(head + kTfRecordHeaderBytes, plen, lengths_[i], span, &error,
                           &error_at) == ExampleScan::kFound;
  }

  // Given record i's head (see FindInHead) and its sample's span, reads the rest of the record
  // with read(from, n, dst, last, crc): the sample bytes to the front of `out`, then the payload
  // after them and the data CRC (`last`) to the bytes past the sample in `out` (its capacity is
  // reused, so nothing is allocated). With verify, the data CRC is extended over the prefix,
  // the sample pieces as they are read, and the rest.
  template <typename Read>
  Status ReadSplit(uint64_t i, const uint8_t* head, uint64_t plen, const SampleSpan& span,
                   SampleBuffer* out, Read read) {
    const uint64_t off = offsets_[i], len = lengths_[i];
    const uint8_t* prefix = head + kTfRecordHeaderBytes;
    // span.offset <= plen: the bytes field's length was read from the prefix.
    const uint64_t n = span.size, in_prefix = std::min(n, plen - span.offset);
    const uint64_t rest_from = std::max(plen, span.offset + n);  // payload offset
    const uint64_t rest = len - rest_from + 4;                   // with the data CRC
    DLIO_RETURN_NOT_OK(out->Resize(n + rest));
    uint8_t* sample = out->data();
    if (in_prefix > 0) std::memcpy(sample, prefix + span.offset, in_prefix);
    uint32_t crc = verify_ ? Crc32c(prefix, plen) : 0;
    DLIO_RETURN_NOT_OK(read(off + kTfRecordHeaderBytes + span.offset + in_prefix, n - in_prefix,
                            sample + in_prefix, false, verify_ ? &crc : nullptr));
    DLIO_RETURN_NOT_OK(
        read(off + kTfRecordHeaderBytes + rest_from, rest, sample + n, true, nullptr));
    if (verify_) {
      DLIO_RETURN_NOT_OK(CheckCrc(head, 8, head + 8, path_, i, off, "length", off));
      crc = Crc32cExtend(crc, sample + n, rest - 4);
      const uint32_t expect = UnmaskCrc32c(Le32(sample + n + rest - 4));
      if (crc != expect) {
        return Status::Corruption(RecordAt(path_, i, off), ": data CRC mismatch over bytes [",
                                  off + kTfRecordHeaderBytes, ", ",
                                  off + kTfRecordHeaderBytes + len, ") (stored ", Hex32(expect),
                                  ", computed ", Hex32(crc), ")");
      }
    }
    sizes_[i].store(n, std::memory_order_relaxed);
    return out->Resize(n);  // shrinks: keeps the bytes, never reallocates
  }

  Status Truncated(uint64_t i, uint64_t end) const {
    return Status::Corruption(RecordAt(path_, i, offsets_[i]), ": truncated: the file ends at ",
                              end, " inside a record of ", lengths_[i] + kTfRecordFramingBytes,
                              " bytes");
  }

  // Checks record i, read whole into r (size lengths_[i] + 16); sets *span to its sample bytes.
  Status CheckRecord(uint64_t i, const uint8_t* r, bool verify, SampleSpan* span) const {
    const uint64_t off = offsets_[i], len = lengths_[i];
    if (Le64(r) != len) {
      return Status::Corruption(
          RecordAt(path_, i, off), ": length field says ", Le64(r), " bytes but ",
          (index_used_ ? "the index " + idx_path_ : std::string("the scan at open")), " says ",
          len);
    }
    if (verify) {
      DLIO_RETURN_NOT_OK(CheckCrc(r, 8, r + 8, path_, i, off, "length", off));
      DLIO_RETURN_NOT_OK(CheckCrc(r + kTfRecordHeaderBytes, len, r + kTfRecordHeaderBytes + len,
                                  path_, i, off, "data", off + kTfRecordHeaderBytes));
    }
    const char* error = nullptr;
    uint64_t error_at = 0;
    if (FindSampleBytes(r + kTfRecordHeaderBytes, len, len, span, &error, &error_at) !=
        ExampleScan::kFound) {
      return Status::Corruption(RecordAt(path_, i, off), ": tf.train.Example at offset ",
                                off + kTfRecordHeaderBytes + error_at, ": ", error);
    }
    sizes_[i].store(span->size, std::memory_order_relaxed);
    return Status::OK();
  }

  Status FinishRecord(uint64_t i, SampleBuffer* out) {
    SampleSpan span;
    DLIO_RETURN_NOT_OK(CheckRecord(i, out->data(), verify_, &span));
    std::memmove(out->data(), out->data() + kTfRecordHeaderBytes + span.offset, span.size);
    return out->Resize(span.size);  // shrinks: keeps the bytes, never reallocates
  }

  Result<uint64_t> PeekSampleSize(uint64_t i) const {
    const uint64_t len = lengths_[i], at = offsets_[i] + kTfRecordHeaderBytes;
    uint8_t head[kPeekBytes];
    const size_t n = static_cast<size_t>(std::min<uint64_t>(len, kPeekBytes));
    DLIO_RETURN_NOT_OK(file_->ReadExactAt(at, n, head));
    SampleSpan span;
    const char* error = nullptr;
    uint64_t error_at = 0;
    ExampleScan r = FindSampleBytes(head, n, len, &span, &error, &error_at);
    if (r == ExampleScan::kNeedMore) {
      std::vector<uint8_t> all(len);
      DLIO_RETURN_NOT_OK(ReadRange(file_.get(), at, len, transfer_, all.data()));
      r = FindSampleBytes(all.data(), len, len, &span, &error, &error_at);
    }
    if (r != ExampleScan::kFound) {
      return Status::Corruption(RecordAt(path_, i, offsets_[i]), ": tf.train.Example at offset ",
                                at + error_at, ": ", error);
    }
    sizes_[i].store(span.size, std::memory_order_relaxed);
    return span.size;
  }

  // Reads every record and checks both CRCs and the Example (what `inspect` reports).
  // The "crc_check" object; a failure is also appended to `problems` (inspect exits 1).
  std::string CheckAllRecords(std::vector<std::string>* problems) const {
    std::vector<uint8_t> rec;
    for (uint64_t i = 0; i < offsets_.size(); ++i) {
      rec.resize(lengths_[i] + kTfRecordFramingBytes);
      SampleSpan span;
      Status st = ReadRange(file_.get(), offsets_[i], rec.size(), transfer_, rec.data());
      if (st.ok()) st = CheckRecord(i, rec.data(), /*verify=*/true, &span);
      if (!st.ok()) {
        problems->push_back(st.ToString());
        return "{\"ok\":false,\"records_checked\":" + std::to_string(i) +
               ",\"error\":" + JsonString(st.ToString()) + "}";
      }
    }
    return "{\"ok\":true,\"records_checked\":" + std::to_string(offsets_.size()) + "}";
  }

  // The first record's features, decoded with the generated classes.
  std::string FeaturesJson() const {
    if (offsets_.empty()) return "[]";
    std::vector<uint8_t> payload(lengths_[0]);
    if (!ReadRange(file_.get(), kTfRecordHeaderBytes, payload.size(), transfer_, payload.data())
             .ok()) {
      return "null";
    }
    auto features = ParseExample(payload.data(), payload.size());
    if (!features.ok()) return "null";
    std::string out;
    for (const ExampleFeature& f : *features) {
      const char* kind = f.kind == ExampleFeature::Kind::kBytes   ? "bytes_list"
                         : f.kind == ExampleFeature::Kind::kFloat ? "float_list"
                                                                  : "int64_list";
      const size_t count = f.kind == ExampleFeature::Kind::kBytes   ? f.bytes.size()
                           : f.kind == ExampleFeature::Kind::kFloat ? f.floats.size()
                                                                    : f.ints.size();
      out += std::string(out.empty() ? "" : ",") + "{\"key\":" + JsonString(f.key) +
             ",\"kind\":\"" + kind + "\",\"values\":" + std::to_string(count) + "}";
    }
    return "[" + out + "]";
  }

  std::unique_ptr<File> file_;
  const std::string path_;
  const uint64_t file_size_;
  const std::vector<uint64_t> offsets_, lengths_;
  mutable std::vector<std::atomic<uint64_t>> sizes_;  // sample bytes per record, or kUnknown
  const std::string idx_path_;
  const bool index_found_, index_used_, verify_;
  const uint64_t transfer_;
  const uint64_t direct_min_;  // payload bytes from which a record is large (kDirectMin)

  std::mutex mu_;      // guards the stream below
  uint64_t next_ = 0;  // the record the stream is positioned at
  // buf_ holds file bytes [buf_begin_, buf_end_); the stream reads on from buf_end_.
  AlignedBuffer buf_;
  uint64_t buf_begin_ = 0, buf_end_ = 0;
};

}  // namespace

std::unique_ptr<FormatReader> NewTfRecordReader(std::unique_ptr<File> file, uint64_t file_size,
                                                RecordTable table, std::string idx_path,
                                                bool index_found, bool index_used,
                                                const FormatOptions& options) {
  return std::make_unique<TfRecordReader>(std::move(file), file_size, std::move(table),
                                          std::move(idx_path), index_found, index_used, options);
}

}  // namespace dlio::format_internal
