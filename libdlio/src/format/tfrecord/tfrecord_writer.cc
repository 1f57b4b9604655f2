// tfrecord writer: tf.train.Example payloads (the generated protobuf classes) framed as
// TensorFlow's TFRecordWriter frames them; the Example helpers of tests and `inspect`.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
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
class RecordWriter {
 public:
  explicit RecordWriter(File* file) : file_(file) { buf_.reserve(kWriteChunk); }

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
    DLIO_RETURN_NOT_OK(file_->WriteAt(at_, buf_.data(), buf_.size()));
    at_ += buf_.size();
    buf_.clear();
    return Status::OK();
  }

  uint64_t offset() const { return at_ + buf_.size(); }

 private:
  static void PutCrc(uint32_t v, uint8_t* p) {
    for (int b = 0; b < 4; ++b) p[b] = static_cast<uint8_t>(v >> (8 * b));
  }

  Status Put(const uint8_t* p, size_t n) {
    if (buf_.size() + n > kWriteChunk) DLIO_RETURN_NOT_OK(Flush());
    if (n >= kWriteChunk) {
      DLIO_RETURN_NOT_OK(file_->WriteAt(at_, p, n));
      at_ += n;
      return Status::OK();
    }
    buf_.insert(buf_.end(), p, p + n);
    return Status::OK();
  }

  File* file_;
  std::vector<uint8_t> buf_;
  uint64_t at_ = 0;
};

}  // namespace

Status WriteTfRecords(File* file, const FileSpec& spec, std::string* index) {
  tfrecord::Example example;
  auto& features = *example.mutable_features()->mutable_feature();
  std::string* image = features["image"].mutable_bytes_list()->add_value();
  tfrecord::Int64List* label = features["label"].mutable_int64_list();
  label->add_value(0);
  std::string payload;
  RecordWriter writer(file);
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
  return writer.Flush();
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
