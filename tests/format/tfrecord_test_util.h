// Helpers of the tfrecord tests (tfrecord_*_test.cc): specs, an independent walk of the framing,
// and the read requests a reader made.
#pragma once

#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "dlio/format.h"
#include "dlio/storage.h"
#include "dlio/tracer.h"
#include "format/format_test_util.h"
#include "format/io_util.h"
#include "format/tfrecord/crc32c.h"
#include "format/tfrecord/example_wire.h"
#include "format/tfrecord/tfrecord.h"
#include "test_util.h"

namespace dlio::testing {

// These tests hold the native reader (index, direct reads of large records); the tf.data model,
// the format's default, has its own tests (tests/io_models/tfdata_test.cc).
inline FormatOptions NativeOptions() {
  FormatOptions o;
  o.io_model = IoModel::kNative;
  return o;
}

using format_internal::Crc32c;
using format_internal::Crc32cExtend;
using format_internal::Crc32cExtendFolding;
using format_internal::Crc32cExtendHardware;
using format_internal::Crc32cExtendPortable;
using format_internal::ExampleFeature;
using format_internal::FrameTfRecord;
using format_internal::Le64;
using format_internal::MaskCrc32c;
using format_internal::SerializeExample;
using format_internal::UnmaskCrc32c;

inline const uint8_t* U8(const std::string& s) {
  return reinterpret_cast<const uint8_t*>(s.data());
}

inline FileSpec Spec(std::vector<uint64_t> sizes, uint64_t seed = 7) {
  FileSpec spec;
  spec.seed = seed;
  spec.sample_sizes = std::move(sizes);
  return spec;
}

// Records of a file by an independent walk of the framing: (offset, payload).
inline std::vector<std::pair<uint64_t, std::string>> Records(const std::string& bytes) {
  std::vector<std::pair<uint64_t, std::string>> out;
  for (uint64_t pos = 0; pos + 12 <= bytes.size();) {
    const uint64_t len = Le64(U8(bytes) + pos);
    out.emplace_back(pos, bytes.substr(pos + 12, len));
    pos += 16 + len;
  }
  return out;
}

inline std::vector<TraceEvent> PreadsSince(MemoryTracer* tracer, size_t from) {
  std::vector<TraceEvent> out;
  auto events = tracer->Events();
  for (size_t i = from; i < events.size(); ++i) {
    if (std::string(events[i].name) == "pread") out.push_back(events[i]);
  }
  return out;
}

// The whole file, read through dlio's storage (works for the memory storage too).
inline std::string FileBytes(Storage* storage, const std::string& path) {
  auto file = storage->Open(path, OpenMode::kRead);
  if (!file.ok()) return "";
  std::string out(*storage->FileSize(path), '\0');
  if (!(*file)->ReadExactAt(0, out.size(), out.data()).ok()) return "";
  return out;
}

// The file offsets where each record's sample bytes end, by FindSampleBytes on whole payloads.
inline std::vector<uint64_t> SampleEnds(const std::string& bytes) {
  std::vector<uint64_t> out;
  for (const auto& [offset, payload] : Records(bytes)) {
    format_internal::SampleSpan span;
    const char* error = nullptr;
    uint64_t at = 0;
    if (format_internal::FindSampleBytes(U8(payload), payload.size(), payload.size(), &span, &error,
                                         &at) != format_internal::ExampleScan::kFound) {
      return {};
    }
    out.push_back(offset + 12 + span.offset + span.size);
  }
  return out;
}

// Requests that follow each other: each starts where the previous one ended.
inline bool Consecutive(const std::vector<TraceEvent>& reads) {
  for (size_t k = 1; k < reads.size(); ++k) {
    if (reads[k].offset != reads[k - 1].offset + reads[k - 1].count) return false;
  }
  return true;
}

inline bool EndsAt(const std::vector<TraceEvent>& reads, uint64_t end) {
  for (const TraceEvent& e : reads) {
    if (static_cast<uint64_t>(e.offset + e.count) == end) return true;
  }
  return false;
}

}  // namespace dlio::testing
