// A storage of files that have a size and no bytes, for simulating a request model: the requests
// a Python stack would make for a file of a given size (PyioReadRequests) depend on where its
// reads go, never on what they return, so the simulation allocates and copies nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "dlio/storage.h"
#include "dlio/tracer.h"

namespace dlio::pyio {

// Every path opens read-only as a file of `file_size` bytes; a read returns the count a file of
// that size would and leaves the caller's buffer as it was. Everything else is Unimplemented.
std::unique_ptr<Storage> NewSizedFileStorage(uint64_t file_size);

// Remembers the read requests (offset, count) of the files of the storage it is bound to: the
// only calls with an offset and a count. Requires external synchronization.
class ReadRecorder final : public Tracer {
 public:
  bool enabled() const override { return true; }
  int32_t InternFile(std::string_view) override { return 0; }
  void Record(const TraceEvent& e) override {
    if (e.offset >= 0 && e.count >= 0) {
      reads.emplace_back(static_cast<uint64_t>(e.offset), static_cast<uint64_t>(e.count));
    }
  }
  Status Flush() override { return Status::OK(); }
  std::vector<std::pair<uint64_t, uint64_t>> reads;
};

}  // namespace dlio::pyio
