// File::Seek: posix issues one lseek(2) of the descriptor per call, returns the kernel's new
// offset, traced as "lseek64" with the offset asked (-1 when negative, as libdlio_preload.so
// records); reads stay positioned and leave the offset alone.
// Backends without descriptors compute the offset and trace nothing. Targets before the start
// and bad whence values are InvalidArgument naming the file.
#include <catch2/catch.hpp>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "dlio/storage.h"
#include "file_events.h"
#include "test_util.h"

namespace dlio {
namespace {

std::vector<TraceEvent> Seeks(const MemoryTracer& tracer) {
  return testing::EventsNamed(tracer, kSeekCallName);
}

TEST_CASE("File::Seek on posix: one lseek per call, traced with the offset asked") {
  testing::TempDir tmp;
  MemoryTracer tracer;
  auto storage = NewPosixStorage(StorageOptions{});
  storage->Bind(SystemClock(), &tracer);
  const std::string path = tmp / "f.bin";
  testing::WriteFileBytes(storage.get(), path, 20000, 5);
  auto f = storage->Open(path, OpenMode::kRead);
  REQUIRE(f.ok());
  CHECK(*(*f)->Seek(0, SEEK_CUR) == 0);
  CHECK(*(*f)->Seek(10000, SEEK_SET) == 10000);
  CHECK(*(*f)->Seek(-22, SEEK_END) == 19978);
  // A positioned read leaves the descriptor's offset where the last seek put it.
  std::vector<uint8_t> buf(100);
  REQUIRE(*(*f)->ReadAt(0, buf.size(), buf.data()) == 100);
  CHECK(*(*f)->Seek(2, SEEK_CUR) == 19980);
  const Result<uint64_t> before = (*f)->Seek(-20001, SEEK_END);
  CHECK(before.status().code() == StatusCode::kInvalidArgument);
  CHECK(before.status().ToString().find(path) != std::string::npos);
  CHECK((*f)->Seek(0, 7).status().code() == StatusCode::kInvalidArgument);
  const std::vector<TraceEvent> seeks = Seeks(tracer);
  REQUIRE(seeks.size() == 5);  // the bad whence reaches no lseek
  const std::vector<int64_t> offsets{0, 10000, -1, 2, -1}, rets{0, 10000, 19978, 19980, -1};
  for (size_t i = 0; i < seeks.size(); ++i) {
    INFO(i);
    CHECK(seeks[i].offset == offsets[i]);
    CHECK(seeks[i].count == -1);
    CHECK(seeks[i].ret == rets[i]);
    CHECK(seeks[i].file_id == seeks[0].file_id);
  }
  REQUIRE((*f)->Close().ok());
  CHECK((*f)->Seek(0, SEEK_SET).status().code() == StatusCode::kFailedPrecondition);
}

TEST_CASE("File::Seek without a descriptor: the offset computed, no request traced") {
  MemoryTracer tracer;
  auto storage = NewMemoryStorage();
  storage->Bind(SystemClock(), &tracer);
  testing::WriteFileBytes(storage.get(), "/m/f.bin", 300, 5);
  auto f = storage->Open("/m/f.bin", OpenMode::kRead);
  REQUIRE(f.ok());
  CHECK(*(*f)->Seek(100, SEEK_SET) == 100);
  CHECK(*(*f)->Seek(-30, SEEK_CUR) == 70);
  CHECK(*(*f)->Seek(-1, SEEK_END) == 299);
  CHECK((*f)->Seek(-71, SEEK_CUR).status().code() == StatusCode::kOk);  // 299 - 71
  CHECK((*f)->Seek(-300, SEEK_CUR).status().code() == StatusCode::kInvalidArgument);
  CHECK(Seeks(tracer).empty());
}

}  // namespace
}  // namespace dlio
