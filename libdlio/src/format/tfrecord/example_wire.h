// Finding the sample bytes inside a serialized tf.train.Example by walking the protobuf wire
// format by hand. This is the reader's hot path: it allocates nothing and copies nothing (the
// generated classes would copy every bytes value into a std::string per sample, and an Arena
// would still copy), and it can work on a prefix of the payload, which is how a reader learns a
// sample's size from the record's first bytes. The generated classes remain the reference: the
// writer, `inspect` and the tests use them.
//
// Which feature is the sample: the feature keyed "image" whose kind is a bytes_list with at
// least one value; else the first such bytes_list feature in serialized order. The sample is the
// list's first value. Where protobuf would merge repeated occurrences of a field (a key twice in
// the map, two kinds in one Feature), the first occurrence wins; TensorFlow's and protobuf's
// writers never emit such repeats.
#pragma once

#include <cstdint>

namespace dlio::format_internal {

struct SampleSpan {
  uint64_t offset = 0;  // of the sample's first byte, from the start of the payload
  uint64_t size = 0;
};

enum class ExampleScan {
  kFound,     // *span is set
  kNeedMore,  // the answer lies past the `avail` bytes given; retry with the whole payload
  kError,     // *error and *error_at (payload offset) say what is wrong
};

// Scans payload[0, total), of which the first `avail` (<= total) bytes are at `p`. `error` is a
// static string (no allocation).
ExampleScan FindSampleBytes(const uint8_t* p, uint64_t avail, uint64_t total, SampleSpan* span,
                            const char** error, uint64_t* error_at);

}  // namespace dlio::format_internal
