// tfrecord writer: tf.train.Example payloads (the generated protobuf classes) framed as
// TensorFlow's TFRecordWriter frames them; the Example helpers of tests and `inspect`.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <limits>

#include "format/content.h"
#include "format/io_util.h"
#include "format/tfrecord/crc32c.h"
#include "format/tfrecord/example.pb.h"
#include "format/tfrecord/tfrecord.h"
#include "format/tfrecord/tfrecord_records.h"

namespace dlio::format_internal {
namespace {

Status SerializeDeterministic(const tfrecord::Example& example, std::string* out) {
  out->clear();
  google::protobuf::io::StringOutputStream stream(out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);  // map keys sorted: "image" before "label"
  if (!example.SerializeToCodedStream(&coded)) {
    return Status::Internal("cannot serialize a tf.train.Example");
  }
  return Status::OK();
}

// Appends records to a file in kWriteChunk writes; records larger than that go straight out.
// Compressed files (TF's GZIP and ZLIB) are one deflate stream of the records, written in
// kWriteChunk pieces.
class RecordWriter {
 public:
  RecordWriter(File* file, TfRecordCompression compression, int level)
      : file_(file), compression_(compression), level_(level) {
    buf_.reserve(kWriteChunk);
  }
  ~RecordWriter() {
    if (deflating_) deflateEnd(&zs_);
  }
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  Status Start() {
    if (compression_ == TfRecordCompression::kNone) return Status::OK();
    // windowBits 15 + 16: a gzip member; 15: the zlib format (TF's ZlibCompressionOptions).
    const int bits = compression_ == TfRecordCompression::kGzip ? 15 + 16 : 15;
    if (deflateInit2(&zs_, level_, Z_DEFLATED, bits, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      return Status::Internal(file_->path(), ": deflateInit2 failed");
    }
    deflating_ = true;
    out_.resize(kWriteChunk);
    return Status::OK();
  }

  Status Append(const std::string& payload) {
    uint8_t head[kTfRecordHeaderBytes], foot[4];
    const uint64_t len = payload.size();
    for (int b = 0; b < 8; ++b) head[b] = static_cast<uint8_t>(len >> (8 * b));
    PutCrc(MaskCrc32c(Crc32c(head, 8)), head + 8);
    PutCrc(MaskCrc32c(Crc32c(reinterpret_cast<const uint8_t*>(payload.data()), len)), foot);
    DLIO_RETURN_NOT_OK(Put(head, sizeof head));
    DLIO_RETURN_NOT_OK(Put(reinterpret_cast<const uint8_t*>(payload.data()), len));
    return Put(foot, sizeof foot);
  }

  Status Flush() {
    if (buf_.empty()) return Status::OK();
    DLIO_RETURN_NOT_OK(Out(buf_.data(), buf_.size(), false));
    buf_.clear();
    return Status::OK();
  }

  // The last bytes, and the end of the deflate stream.
  Status Finish() {
    DLIO_RETURN_NOT_OK(Flush());
    return deflating_ ? Out(nullptr, 0, true) : Status::OK();
  }

  // Offset of the next record in the record stream (before compression).
  uint64_t offset() const { return logical_ + buf_.size(); }

 private:
  static void PutCrc(uint32_t v, uint8_t* p) {
    for (int b = 0; b < 4; ++b) p[b] = static_cast<uint8_t>(v >> (8 * b));
  }

  Status Put(const uint8_t* p, size_t n) {
    if (buf_.size() + n > kWriteChunk) DLIO_RETURN_NOT_OK(Flush());
    if (n >= kWriteChunk) return Out(p, n, false);
    buf_.insert(buf_.end(), p, p + n);
    return Status::OK();
  }

  // Writes record-stream bytes to the file, deflated when compressing (`finish` ends the stream).
  Status Out(const uint8_t* p, size_t n, bool finish) {
    logical_ += n;
    if (!deflating_) {
      DLIO_RETURN_NOT_OK(file_->WriteAt(at_, p, n));
      at_ += n;
      return Status::OK();
    }
    zs_.next_in = const_cast<uint8_t*>(p);  // zlib's API is not const-correct
    zs_.avail_in = static_cast<uInt>(n);
    int ret = Z_OK;
    do {
      zs_.next_out = out_.data();
      zs_.avail_out = static_cast<uInt>(out_.size());
      ret = deflate(&zs_, finish ? Z_FINISH : Z_NO_FLUSH);
      if (ret == Z_STREAM_ERROR) return Status::Internal(file_->path(), ": deflate failed");
      const size_t have = out_.size() - zs_.avail_out;
      if (have > 0) DLIO_RETURN_NOT_OK(file_->WriteAt(at_, out_.data(), have));
      at_ += have;
    } while (zs_.avail_out == 0 || (finish && ret != Z_STREAM_END));
    return Status::OK();
  }

  File* file_;
  const TfRecordCompression compression_;
  const int level_;
  std::vector<uint8_t> buf_;
  uint64_t at_ = 0;       // file offset of the next write
  uint64_t logical_ = 0;  // record-stream bytes written out
  z_stream zs_{};
  bool deflating_ = false;
  std::vector<uint8_t> out_;
};

}  // namespace

Result<TfRecordCompression> ParseTfRecordCompression(const std::string& compression) {
  std::string c;
  for (char ch : compression) c += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (c.empty() || c == "none") return TfRecordCompression::kNone;
  if (c == "gzip") return TfRecordCompression::kGzip;
  if (c == "zlib" || c == "deflate") return TfRecordCompression::kZlib;
  return Status::InvalidArgument("dataset.compression: '", compression,
                                 "' is not supported by tfrecord (use none, gzip, or zlib / "
                                 "deflate: TFRecordDataset's compression_type GZIP and ZLIB)");
}

Status WriteTfRecords(File* file, const FileSpec& spec, const FormatOptions& options,
                      std::string* index) {
  DLIO_ASSIGN_OR_RETURN(TfRecordCompression compression,
                        ParseTfRecordCompression(options.compression));
  tfrecord::Example example;
  auto& features = *example.mutable_features()->mutable_feature();
  std::string* image = features["image"].mutable_bytes_list()->add_value();
  tfrecord::Int64List* label = features["label"].mutable_int64_list();
  label->add_value(0);
  std::string payload;
  RecordWriter writer(file, compression, options.compression_level);
  DLIO_RETURN_NOT_OK(writer.Start());
  for (uint64_t i = 0; i < spec.sample_sizes.size(); ++i) {
    const uint64_t n = spec.sample_sizes[i];
    image->resize(static_cast<size_t>(n));
    FillSampleBytes(spec.seed, i, 0, reinterpret_cast<uint8_t*>(image->data()), image->size());
    label->set_value(0, SampleLabel(spec.seed, i));
    DLIO_RETURN_NOT_OK(SerializeDeterministic(example, &payload));
    *index += std::to_string(writer.offset()) + " " +
              std::to_string(payload.size() + kTfRecordFramingBytes) + "\n";
    DLIO_RETURN_NOT_OK(writer.Append(payload));
  }
  return writer.Finish();
}

std::string FrameTfRecord(std::string_view payload) {
  std::string out;
  PutLe64(&out, payload.size());
  PutLe32(&out, MaskCrc32c(Crc32c(reinterpret_cast<const uint8_t*>(out.data()), 8)));
  out += payload;
  PutLe32(&out,
          MaskCrc32c(Crc32c(reinterpret_cast<const uint8_t*>(payload.data()), payload.size())));
  return out;
}

std::string SerializeExample(const std::vector<ExampleFeature>& features) {
  tfrecord::Example example;
  auto& map = *example.mutable_features()->mutable_feature();
  for (const ExampleFeature& f : features) {
    tfrecord::Feature& feature = map[f.key];
    switch (f.kind) {
      case ExampleFeature::Kind::kBytes:
        for (const std::string& b : f.bytes) feature.mutable_bytes_list()->add_value(b);
        if (f.bytes.empty()) feature.mutable_bytes_list();
        break;
      case ExampleFeature::Kind::kFloat:
        for (float v : f.floats) feature.mutable_float_list()->add_value(v);
        if (f.floats.empty()) feature.mutable_float_list();
        break;
      case ExampleFeature::Kind::kInt64:
        for (int64_t v : f.ints) feature.mutable_int64_list()->add_value(v);
        if (f.ints.empty()) feature.mutable_int64_list();
        break;
    }
  }
  std::string out;
  (void)SerializeDeterministic(example, &out);
  return out;
}

Result<std::vector<ExampleFeature>> ParseExample(const uint8_t* data, size_t n) {
  tfrecord::Example example;
  if (n > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !example.ParseFromArray(data, static_cast<int>(n))) {
    return Status::Corruption("not a serialized tf.train.Example (", n, " bytes)");
  }
  std::vector<ExampleFeature> out;
  for (const auto& [key, feature] : example.features().feature()) {
    ExampleFeature f;
    f.key = key;
    if (feature.has_bytes_list()) {
      f.kind = ExampleFeature::Kind::kBytes;
      f.bytes.assign(feature.bytes_list().value().begin(), feature.bytes_list().value().end());
    } else if (feature.has_float_list()) {
      f.kind = ExampleFeature::Kind::kFloat;
      f.floats.assign(feature.float_list().value().begin(), feature.float_list().value().end());
    } else {
      f.kind = ExampleFeature::Kind::kInt64;
      f.ints.assign(feature.int64_list().value().begin(), feature.int64_list().value().end());
    }
    out.push_back(std::move(f));
  }
  std::sort(out.begin(), out.end(),
            [](const ExampleFeature& a, const ExampleFeature& b) { return a.key < b.key; });
  return out;
}

}  // namespace dlio::format_internal
