// File::ReadSomeAt: one read request (a single pread on posix), short wherever the kernel returns
// short, counted and traced as ReadAt; decorators (FileWrapper, slow) forward it as one request.
// The read(2) calls are counted from /proc/thread-self/io (syscr), which every pread increments.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "dlio/registries.h"
#include "dlio/storage.h"
#include "dlio/storage_wrapper.h"
#include "fake_clock.h"
#include "storage/slow_options.h"
#include "test_util.h"

namespace dlio {
namespace {

// Read system calls made by this thread so far (-1 when the kernel does not say). Each call
// costs one pread of its own, which ReadsSince subtracts.
class ReadCalls {
 public:
  ReadCalls() : fd_(::open("/proc/thread-self/io", O_RDONLY)) {}
  ~ReadCalls() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool available() { return fd_ >= 0 && Now() >= 0; }
  int64_t Now() {
    char buf[512] = {};
    if (fd_ < 0 || ::pread(fd_, buf, sizeof(buf) - 1, 0) <= 0) return -1;
    const std::string s(buf);
    const size_t at = s.find("syscr: ");
    return at == std::string::npos ? -1 : std::stoll(s.substr(at + 7));
  }
  // Read calls between `before` (a Now()) and now, without this call's own.
  int64_t ReadsSince(int64_t before) { return Now() - before - 1; }

 private:
  int fd_;
};

std::vector<TraceEvent> Named(const MemoryTracer& tracer, const std::string& name) {
  std::vector<TraceEvent> out;
  for (const TraceEvent& e : tracer.Events()) {
    if (name == e.name) out.push_back(e);
  }
  return out;
}

void WriteBytes(Storage* storage, const std::string& path, size_t n) {
  auto f = storage->Open(path, OpenMode::kWrite);
  REQUIRE(f.ok());
  const std::vector<uint8_t> data(n, 7);
  REQUIRE((*f)->WriteAt(0, data.data(), n).ok());
  REQUIRE((*f)->Close().ok());
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
  const int64_t some_calls = calls.ReadsSince(t0);
  REQUIRE(got.ok());
  CHECK(*got == 42);
  CHECK(buf[0] == 7);
  CHECK(storage->stats().read_ops == before.read_ops + 1);
  CHECK(storage->stats().read_bytes == before.read_bytes + 42);
  const std::vector<TraceEvent> preads = Named(tracer, "pread");
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
  CHECK(calls.ReadsSince(t1) == 2);
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
    const int64_t reads = calls.ReadsSince(t0);
    if (calls.available()) CHECK(reads == 1);
    CHECK(inner_ptr->stats().read_ops == 2);  // reached the inner file's ReadSomeAt
    CHECK(wrapper.stats().read_bytes == 43);
    REQUIRE(Named(tracer, "pread").size() == 2);
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
    const int64_t reads = calls.ReadsSince(t0);
    if (calls.available()) CHECK(reads == 1);
    CHECK(clock.sleeps() == std::vector<int64_t>{70000, 70000});
    const std::vector<TraceEvent> preads = Named(tracer, "pread");
    REQUIRE(preads.size() == 2);
    CHECK(preads[1].ret == 42);
  }
  SECTION("stdio: one fread, short at the end") {
    auto stdio = NewStdioStorage();
    MemoryTracer tracer;
    stdio->Bind(SystemClock(), &tracer);
    auto f = stdio->Open(path, OpenMode::kRead);
    REQUIRE(f.ok());
    CHECK(*(*f)->ReadSomeAt(1048992, 4096, buf.data()) == 42);
    const std::vector<TraceEvent> freads = Named(tracer, "fread");
    REQUIRE(freads.size() == 1);
    CHECK(freads[0].ret == 42);
  }
}

}  // namespace
}  // namespace dlio
