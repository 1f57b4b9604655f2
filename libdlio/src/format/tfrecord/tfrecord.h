// TFRecord internals shared by the format, its tests and `inspect`. No protobuf types here: only
// the .cc files of this directory include protobuf headers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dlio/status.h"

namespace dlio::format_internal {

// Framing: uint64 length, uint32 masked CRC-32C of those 8 bytes, data, masked CRC-32C of data.
inline constexpr uint64_t kTfRecordHeaderBytes = 12;
inline constexpr uint64_t kTfRecordFramingBytes = 16;
// tf.data's buffered reader size, used when FormatOptions::transfer_size is 0.
inline constexpr uint64_t kTfRecordDefaultTransfer = 262144;

// "<path>.idx": DALI's index (tfrecord2idx), one text line "<offset> <size>\n" per record, size
// counting the framing.
std::string TfRecordIndexPath(const std::string& path);

// One record as TensorFlow's TFRecordWriter frames it.
std::string FrameTfRecord(std::string_view payload);

// A feature of a tf.train.Example, for building and inspecting payloads with the generated
// protobuf classes (tests, `inspect`).
struct ExampleFeature {
  enum class Kind { kBytes, kFloat, kInt64 };
  std::string key;
  Kind kind = Kind::kBytes;
  std::vector<std::string> bytes;
  std::vector<float> floats;
  std::vector<int64_t> ints;
};

// Serialized deterministically (map keys sorted), as our writer does.
std::string SerializeExample(const std::vector<ExampleFeature>& features);
// Features sorted by key; Corruption when the bytes are not an Example.
Result<std::vector<ExampleFeature>> ParseExample(const uint8_t* data, size_t n);

}  // namespace dlio::format_internal
