// Helpers of the hdf5 tests (hdf5_test.cc, hdf5_errors_test.cc).
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "dlio/format.h"
#include "dlio/storage.h"
#include "dlio/tracer.h"
#include "format/format_test_util.h"

namespace dlio::testing {

inline std::unique_ptr<Format> Hdf5() {
  auto f = MakeFormatByName("hdf5");
  REQUIRE(f != nullptr);
  return f;
}

inline FileSpec Spec(std::vector<uint64_t> sizes, uint64_t seed = 7) {
  FileSpec spec;
  spec.seed = seed;
  spec.sample_sizes = std::move(sizes);
  return spec;
}

inline FileSpec Fixed(uint64_t n, uint64_t size, uint64_t seed = 7) {
  return Spec(std::vector<uint64_t>(n, size), seed);
}

inline FileSpec Variable(uint64_t n, uint64_t seed = 7) {
  std::vector<uint64_t> sizes;
  for (uint64_t i = 0; i < n; ++i) sizes.push_back(1 + (i * 7919) % 5000);
  return Spec(std::move(sizes), seed);
}

// Writes `spec`, reopens it and checks every sample (backwards), returning the reader's JSON.
inline std::string RoundTrip(Storage* storage, const std::string& path, const FileSpec& spec,
                             const FormatOptions& options) {
  auto format = Hdf5();
  Status st = format->Write(storage, path, spec, options);
  INFO(st.ToString());
  REQUIRE(st.ok());
  auto reader = format->Open(storage, path, options);
  INFO(reader.status().ToString());
  REQUIRE(reader.ok());
  REQUIRE((*reader)->num_samples() == spec.sample_sizes.size());
  SampleBuffer buf;
  for (uint64_t i = spec.sample_sizes.size(); i-- > 0;) {
    REQUIRE((*reader)->sample_size(i) == spec.sample_sizes[i]);
    Status r = (*reader)->ReadSample(i, &buf);
    INFO(r.ToString());
    REQUIRE(r.ok());
    REQUIRE(BufferString(buf) == ExpectedSample(spec, i));
  }
  return (*reader)->DescribeJson();
}

inline bool Has(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// The reads of `path` recorded since event number `from`.
inline std::vector<TraceEvent> ReadsOf(const MemoryTracer& tracer, size_t from,
                                       const std::string& path) {
  std::vector<TraceEvent> out;
  const auto events = tracer.Events();
  for (size_t k = from; k < events.size(); ++k) {
    if (std::string(events[k].name) == "pread" && tracer.FileName(events[k].file_id) == path) {
      out.push_back(events[k]);
    }
  }
  return out;
}

}  // namespace dlio::testing
