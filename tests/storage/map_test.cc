// File::Map: an fstat of the descriptor for the size (as Python's mmap.mmap makes one), then the
// mapping of the whole file, both traced, so that the traced calls are the kernel's; a storage
// that cannot map files refuses naming the file and traces nothing.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "dlio/storage.h"
#include "file_events.h"
#include "test_util.h"

namespace dlio {
namespace {

TEST_CASE("File::Map on posix: a traced fstat, then the whole file mapped") {
  testing::TempDir tmp;
  MemoryTracer tracer;
  auto storage = NewPosixStorage(StorageOptions{});
  storage->Bind(SystemClock(), &tracer);
  const std::string path = tmp / "f.bin";
  testing::WriteFileBytes(storage.get(), path, 20000, 5);
  auto f = storage->Open(path, OpenMode::kRead);
  REQUIRE(f.ok());
  // The open's own size first (Python's FileIO fstat), then the mapping's.
  REQUIRE(*(*f)->Size() == 20000);
  const size_t before = tracer.Events().size();
  auto m = (*f)->Map();
  REQUIRE(m.ok());
  CHECK((*m)->size() == 20000);
  const std::vector<TraceEvent> events = tracer.Events();
  REQUIRE(events.size() == before + 2);
  CHECK(events[before].name == std::string("fstat"));
  CHECK(events[before].ret == 0);
  CHECK(events[before + 1].name == std::string(kMmapCallName));
  CHECK(events[before + 1].offset == 0);
  CHECK(events[before + 1].count == 20000);
  CHECK(events[before].file_id == events[before + 1].file_id);
  REQUIRE((*f)->Close().ok());
  CHECK((*f)->Map().status().code() == StatusCode::kFailedPrecondition);
}

TEST_CASE("File::Map where files cannot be mapped: Unimplemented naming the file, nothing traced") {
  MemoryTracer tracer;
  auto storage = NewMemoryStorage();
  storage->Bind(SystemClock(), &tracer);
  testing::WriteFileBytes(storage.get(), "/m.bin", 100, 1);
  auto f = storage->Open("/m.bin", OpenMode::kRead);
  REQUIRE(f.ok());
  const size_t before = tracer.Events().size();
  auto m = (*f)->Map();
  REQUIRE_FALSE(m.ok());
  CHECK(m.status().code() == StatusCode::kUnimplemented);
  CHECK(m.status().ToString().find("/m.bin") != std::string::npos);
  CHECK(tracer.Events().size() == before);
}

}  // namespace
}  // namespace dlio
