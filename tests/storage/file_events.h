// Helpers of the storage tests that count a File's calls: a file of some bytes written through
// a storage, and the events of one call name a MemoryTracer holds.
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "dlio/storage.h"
#include "dlio/tracer.h"

namespace dlio::testing {

// The events of `tracer` whose name is `name`, in recording order.
inline std::vector<TraceEvent> EventsNamed(const MemoryTracer& tracer, const std::string& name) {
  std::vector<TraceEvent> out;
  for (const TraceEvent& e : tracer.Events()) {
    if (name == e.name) out.push_back(e);
  }
  return out;
}

// `n` bytes of value `byte` written to `path` through `storage`.
inline void WriteFileBytes(Storage* storage, const std::string& path, size_t n, uint8_t byte) {
  auto f = storage->Open(path, OpenMode::kWrite);
  REQUIRE(f.ok());
  const std::vector<uint8_t> data(n, byte);
  REQUIRE((*f)->WriteAt(0, data.data(), n).ok());
  REQUIRE((*f)->Close().ok());
}

}  // namespace dlio::testing
