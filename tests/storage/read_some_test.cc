// File::ReadSomeAt: one read request (a single pread on posix), short wherever the kernel returns
// short, counted and traced as ReadAt; decorators (FileWrapper, slow) forward it as one request.
// File::Seek goes through FileWrapper and slow to the inner lseek, traced once.
// File::ReadTwoAt: two adjacent ranges into two buffers, one request (a preadv) on posix and two
// elsewhere. The read(2) calls are counted from /proc/thread-self/io (syscr), which every pread
// and preadv increments.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "dlio/registries.h"
#include "dlio/storage.h"
#include "dlio/storage_wrapper.h"
#include "fake_clock.h"
#include "file_events.h"
#include "read_calls.h"
#include "storage/slow_options.h"
#include "test_util.h"

namespace dlio {
namespace {

using testing::EventsNamed;
using testing::ReadCalls;

void WriteBytes(Storage* storage, const std::string& path, size_t n) {
  testing::WriteFileBytes(storage, path, n, 7);
}

TEST_CASE("posix ReadSomeAt: one pread, short at the end of the file, traced and counted once") {
  testing::TempDir tmp;
  MemoryTracer tracer;
  auto storage = NewPosixStorage(StorageOptions{});
  storage->Bind(SystemClock(), &tracer);
  const std::string path = tmp / "f.bin";
  WriteBytes(storage.get(), path, 1049034);
  auto f = storage->Open(path, OpenMode::kRead);
  REQUIRE(f.ok());
  std::vector<uint8_t> buf(4096);
  ReadCalls calls;
  const IoStats before = storage->stats();
  const int64_t t0 = calls.Now();
  auto got = (*f)->ReadSomeAt(1048992, 4096, buf.data());
  const int64_t some_calls = calls.Since(t0);
  REQUIRE(got.ok());
  CHECK(*got == 42);
  CHECK(buf[0] == 7);
  CHECK(storage->stats().read_ops == before.read_ops + 1);
  CHECK(storage->stats().read_bytes == before.read_bytes + 42);
  const std::vector<TraceEvent> preads = EventsNamed(tracer, "pread");
  REQUIRE(preads.size() == 1);
  CHECK(preads[0].offset == 1048992);
  CHECK(preads[0].count == 4096);
  CHECK(preads[0].ret == 42);
  // Past the end: 0, still one request.
  CHECK(*(*f)->ReadSomeAt(2000000, 10, buf.data()) == 0);
  if (!calls.available()) return;  // no per-thread I/O counters here: the rest is the kernel's
  CHECK(some_calls == 1);
  // ReadAt keeps reading to n or the end: the same short read costs two preads.
  const int64_t t1 = calls.Now();
  CHECK(*(*f)->ReadAt(1048992, 4096, buf.data()) == 42);
  CHECK(calls.Since(t1) == 2);
}

// Bytes i * 7 + 3 (mod 256) at offset i.
void WritePattern(Storage* storage, const std::string& path, size_t n) {
  auto f = storage->Open(path, OpenMode::kWrite);
  REQUIRE(f.ok());
  std::vector<uint8_t> data(n);
  for (size_t i = 0; i < n; ++i) data[i] = static_cast<uint8_t>(i * 7 + 3);
  REQUIRE((*f)->WriteAt(0, data.data(), n).ok());
  REQUIRE((*f)->Close().ok());
}

bool HoldsPattern(const std::vector<uint8_t>& buf, size_t n, uint64_t from) {
  for (size_t i = 0; i < n; ++i) {
    if (buf[i] != static_cast<uint8_t>((from + i) * 7 + 3)) return false;
  }
  return true;
}

TEST_CASE("posix ReadTwoAt: one preadv of both ranges, traced and counted once, short at the end") {
  testing::TempDir tmp;
  MemoryTracer tracer;
  auto storage = NewPosixStorage(StorageOptions{});
  storage->Bind(SystemClock(), &tracer);
  const std::string path = tmp / "f.bin";
  WritePattern(storage.get(), path, 100000);
  auto f = storage->Open(path, OpenMode::kRead);
  REQUIRE(f.ok());
  std::vector<uint8_t> a(5000), b(3000);
  ReadCalls calls;
  const IoStats before = storage->stats();
  const int64_t t0 = calls.Now();
  auto got = (*f)->ReadTwoAt(1000, 5000, a.data(), 3000, b.data());
  const int64_t two_calls = calls.Since(t0);
  REQUIRE(got.ok());
  CHECK(*got == 8000);
  CHECK(HoldsPattern(a, 5000, 1000));
  CHECK(HoldsPattern(b, 3000, 6000));
  CHECK(storage->stats().read_ops == before.read_ops + 1);
  CHECK(storage->stats().read_bytes == before.read_bytes + 8000);
  std::vector<TraceEvent> reads = EventsNamed(tracer, "pread");
  REQUIRE(reads.size() == 1);
  CHECK(reads[0].offset == 1000);
  CHECK(reads[0].count == 8000);
  CHECK(reads[0].ret == 8000);
  // The file ends inside the second range, then inside the first.
  CHECK(*(*f)->ReadTwoAt(99000, 500, a.data(), 1000, b.data()) == 1000);
  CHECK(HoldsPattern(b, 500, 99500));
  CHECK(*(*f)->ReadTwoAt(99800, 500, a.data(), 100, b.data()) == 200);
  CHECK(HoldsPattern(a, 200, 99800));
  CHECK(*(*f)->ReadTwoAt(200000, 10, a.data(), 10, b.data()) == 0);
  reads = EventsNamed(tracer, "pread");
  REQUIRE(reads.size() == 4);
  CHECK(reads[1].count == 1500);
  CHECK(reads[1].ret == 1000);
  if (calls.available()) CHECK(two_calls == 1);
}

TEST_CASE("ReadTwoAt reads each range with ReadAt where the backend has no vectored read") {
  MemoryTracer tracer;
  auto storage = NewMemoryStorage();
  storage->Bind(SystemClock(), &tracer);
  WritePattern(storage.get(), "/f.bin", 10000);
  auto f = storage->Open("/f.bin", OpenMode::kRead);
  REQUIRE(f.ok());
  std::vector<uint8_t> a(4000), b(2000);
  CHECK(*(*f)->ReadTwoAt(100, 4000, a.data(), 2000, b.data()) == 6000);
  CHECK(HoldsPattern(a, 4000, 100));
  CHECK(HoldsPattern(b, 2000, 4100));
  const std::vector<TraceEvent> reads = EventsNamed(tracer, "pread");
  REQUIRE(reads.size() == 2);
  CHECK(reads[0].offset == 100);
  CHECK(reads[0].count == 4000);
  CHECK(reads[1].offset == 4100);
  CHECK(reads[1].count == 2000);
  // Short in the first range: the second is not asked for.
  CHECK(*(*f)->ReadTwoAt(9000, 4000, a.data(), 2000, b.data()) == 1000);
  CHECK(EventsNamed(tracer, "pread").size() == 3);
}

// A decorator that changes nothing: FileWrapper's own forwarding.
class PassThrough final : public StorageWrapper {
 public:
  explicit PassThrough(std::unique_ptr<Storage> inner) : StorageWrapper("pass", std::move(inner)) {}

 protected:
  Result<std::unique_ptr<File>> DoOpen(const std::string& path, OpenMode mode,
                                       const FileOptions& options) override {
    DLIO_ASSIGN_OR_RETURN(auto f, StorageWrapper::DoOpen(path, mode, options));
    return std::unique_ptr<File>(new FileWrapper(std::move(f)));
  }
};

TEST_CASE("FileWrapper and slow forward ReadSomeAt as one request of the file they wrap") {
  testing::TempDir tmp;
  const std::string path = tmp / "f.bin";
  {
    auto posix = NewPosixStorage(StorageOptions{});
    WriteBytes(posix.get(), path, 1049034);
  }
  ReadCalls calls;
  std::vector<uint8_t> buf(4096);
  SECTION("FileWrapper") {
    auto inner = NewPosixStorage(StorageOptions{});
    Storage* inner_ptr = inner.get();
    PassThrough wrapper(std::move(inner));
    MemoryTracer tracer;
    wrapper.Bind(SystemClock(), &tracer);
    auto f = wrapper.Open(path, OpenMode::kRead);
    REQUIRE(f.ok());
    REQUIRE(*(*f)->ReadSomeAt(0, 1, buf.data()) == 1);  // the tracer's first event reads too
    const int64_t t0 = calls.Now();
    CHECK(*(*f)->ReadSomeAt(1048992, 4096, buf.data()) == 42);
    const int64_t reads = calls.Since(t0);
    if (calls.available()) CHECK(reads == 1);
    CHECK(inner_ptr->stats().read_ops == 2);  // reached the inner file's ReadSomeAt
    CHECK(wrapper.stats().read_bytes == 43);
    REQUIRE(EventsNamed(tracer, "pread").size() == 2);
    // Seek reaches the inner file's lseek, traced once.
    CHECK((*f)->DescriptorSeeks());
    CHECK(*(*f)->Seek(-42, SEEK_END) == 1048992);
    CHECK(EventsNamed(tracer, kSeekCallName).size() == 1);
  }
  SECTION("slow over posix: one delay, one pread") {
    StorageOptions o;
    o.name = "slow";
    o.backends.Get<SlowOptions>().inner = "posix";
    o.backends.Get<SlowOptions>().latency_us = 70;
    Registries registries;
    REQUIRE(RegisterBuiltinStorages(&registries.storages).ok());
    testing::FakeClock clock(1000);
    MemoryTracer tracer;
    auto slow = MakeStorage(o, registries.storages, &clock, &tracer);
    REQUIRE(slow.ok());
    auto f = (*slow)->Open(path, OpenMode::kRead);
    REQUIRE(f.ok());
    REQUIRE(*(*f)->ReadSomeAt(0, 1, buf.data()) == 1);  // the tracer's first event reads too
    const int64_t t0 = calls.Now();
    CHECK(*(*f)->ReadSomeAt(1048992, 4096, buf.data()) == 42);
    const int64_t reads = calls.Since(t0);
    if (calls.available()) CHECK(reads == 1);
    CHECK(clock.sleeps() == std::vector<int64_t>{70000, 70000});
    const std::vector<TraceEvent> preads = EventsNamed(tracer, "pread");
    REQUIRE(preads.size() == 2);
    CHECK(preads[1].ret == 42);
    CHECK(*(*f)->Seek(-42, SEEK_END) == 1048992);
    const std::vector<TraceEvent> seeks = EventsNamed(tracer, kSeekCallName);
    REQUIRE(seeks.size() == 1);
    CHECK(seeks[0].ret == 1048992);
  }
  SECTION("stdio: one fread, short at the end") {
    auto stdio = NewStdioStorage();
    MemoryTracer tracer;
    stdio->Bind(SystemClock(), &tracer);
    auto f = stdio->Open(path, OpenMode::kRead);
    REQUIRE(f.ok());
    CHECK(*(*f)->ReadSomeAt(1048992, 4096, buf.data()) == 42);
    const std::vector<TraceEvent> freads = EventsNamed(tracer, "fread");
    REQUIRE(freads.size() == 1);
    CHECK(freads[0].ret == 42);
    CHECK_FALSE((*f)->DescriptorSeeks());  // reads are fseeko + fread: the offset is computed
    CHECK(*(*f)->Seek(-42, SEEK_END) == 1048992);
    CHECK(EventsNamed(tracer, kSeekCallName).empty());
  }
}

}  // namespace
}  // namespace dlio
