// One suite, run against every registered storage (posix, memory, slow over posix, stdio; mpiio
// when MPI is initialized, i.e. in storage_mpi_test under mpiexec).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "dlio/comm.h"
#include "dlio/registries.h"
#include "dlio/storage.h"
#include "dlio/tracer.h"
#include "fake_clock.h"
#include "storage/slow_options.h"
#include "test_util.h"

namespace dlio {
namespace {

std::vector<std::string> StorageNames() {
  Registries registries;
  REQUIRE(RegisterBuiltinStorages(&registries.storages).ok());
  std::vector<std::string> names;
  for (const auto& e : registries.storages.List()) {
    if (e.name == "mpiio" && !MpiInitialized()) continue;  // needs MPI: see storage_mpi_test
    if (e.name == "s3") continue;  // needs a server and has no host paths: s3_storage_test
    names.push_back(e.name);
  }
  return names;
}

// A storage under test plus the directory it may use.
struct Backend {
  std::unique_ptr<testing::TempDir> tmp;
  Registries registries;
  std::unique_ptr<Storage> storage;
  std::string root;
  std::string operator/(const std::string& name) const { return root + "/" + name; }
};

std::unique_ptr<Backend> MakeBackend(const std::string& name, Tracer* tracer = nullptr,
                                     const Clock* clock = SystemClock()) {
  auto b = std::make_unique<Backend>();
  b->tmp = std::make_unique<testing::TempDir>();
  REQUIRE(RegisterBuiltinStorages(&b->registries.storages).ok());
  StorageOptions options;
  options.name = name;
  options.backends.Get<SlowOptions>().inner = "posix";
  options.backends.Get<SlowOptions>().latency_us = 0;
  auto storage = MakeStorage(options, b->registries.storages, clock, tracer);
  REQUIRE(storage.ok());
  b->storage = std::move(storage).value();
  b->root = b->tmp->path() + "/root";
  REQUIRE(b->storage->CreateDirs(b->root).ok());
  return b;
}

std::vector<uint8_t> Pattern(size_t n, uint8_t seed = 7) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>((i * 131 + seed) ^ (i >> 8));
  return v;
}

void WriteWhole(Storage& s, const std::string& path, const std::vector<uint8_t>& bytes,
                OpenMode mode = OpenMode::kWrite) {
  auto f = s.Open(path, mode);
  REQUIRE(f.ok());
  REQUIRE((*f)->WriteAt(0, bytes.data(), bytes.size()).ok());
  REQUIRE((*f)->Close().ok());
}

std::vector<uint8_t> ReadWhole(Storage& s, const std::string& path) {
  auto f = s.Open(path, OpenMode::kRead);
  REQUIRE(f.ok());
  auto size = (*f)->Size();
  REQUIRE(size.ok());
  std::vector<uint8_t> out(*size);
  REQUIRE((*f)->ReadExactAt(0, out.size(), out.data()).ok());
  return out;
}

TEST_CASE("storage conformance: write/read round trip with exact bytes") {
  const std::string name = GENERATE(from_range(StorageNames()));
  CAPTURE(name);
  auto b = MakeBackend(name);
  Storage& s = *b->storage;
  const auto data = Pattern(10000);
  {
    auto f = s.Open(*b / "f.bin", OpenMode::kCreateNew);
    REQUIRE(f.ok());
    REQUIRE((*f)->WriteAt(0, data.data(), 4000).ok());
    REQUIRE((*f)->WriteAt(4000, data.data() + 4000, 6000).ok());
    REQUIRE((*f)->Sync().ok());
    REQUIRE((*f)->Close().ok());
    REQUIRE((*f)->Close().ok());  // idempotent
  }
  CHECK(ReadWhole(s, *b / "f.bin") == data);
  CHECK(*s.FileSize(*b / "f.bin") == 10000);
  CHECK(*s.Exists(*b / "f.bin"));
  CHECK_FALSE(*s.IsDirectory(*b / "f.bin"));

  auto f = s.Open(*b / "f.bin", OpenMode::kRead);
  REQUIRE(f.ok());
  std::vector<uint8_t> part(100);
  auto got = (*f)->ReadAt(1234, 100, part.data());
  REQUIRE(got.ok());
  CHECK(*got == 100);
  CHECK(std::equal(part.begin(), part.end(), data.begin() + 1234));
}

TEST_CASE("storage conformance: short read only at end of file") {
  const std::string name = GENERATE(from_range(StorageNames()));
  CAPTURE(name);
  auto b = MakeBackend(name);
  const auto data = Pattern(10000);
  WriteWhole(*b->storage, *b / "f.bin", data);
  auto f = b->storage->Open(*b / "f.bin", OpenMode::kRead);
  REQUIRE(f.ok());
  std::vector<uint8_t> buf(100);
  auto got = (*f)->ReadAt(9990, 100, buf.data());
  REQUIRE(got.ok());
  CHECK(*got == 10);
  CHECK(std::equal(buf.begin(), buf.begin() + 10, data.begin() + 9990));
  got = (*f)->ReadAt(20000, 10, buf.data());
  REQUIRE(got.ok());
  CHECK(*got == 0);

  Status st = (*f)->ReadExactAt(9990, 100, buf.data());
  CHECK(st.code() == StatusCode::kCorruption);
  CHECK_THAT(st.message(), Catch::Contains(*b / "f.bin"));
  CHECK_THAT(st.message(), Catch::Contains("offset 9990"));
  CHECK_THAT(st.message(), Catch::Contains("got 10"));
}

TEST_CASE("storage conformance: open modes") {
  const std::string name = GENERATE(from_range(StorageNames()));
  CAPTURE(name);
  auto b = MakeBackend(name);
  Storage& s = *b->storage;
  const auto data = Pattern(300);
  WriteWhole(s, *b / "keep.bin", data);

  auto again = s.Open(*b / "keep.bin", OpenMode::kCreateNew);
  CHECK(again.status().code() == StatusCode::kAlreadyExists);
  CHECK_THAT(again.status().message(), Catch::Contains(*b / "keep.bin"));
  CHECK(ReadWhole(s, *b / "keep.bin") == data);  // not clobbered

  auto missing = s.Open(*b / "missing.bin", OpenMode::kRead);
  CHECK(missing.status().code() == StatusCode::kNotFound);
  CHECK_THAT(missing.status().message(), Catch::Contains(*b / "missing.bin"));
  CHECK(s.FileSize(*b / "missing.bin").status().code() == StatusCode::kNotFound);
  CHECK_FALSE(*s.Exists(*b / "missing.bin"));

  {  // kReadWrite keeps contents
    auto f = s.Open(*b / "keep.bin", OpenMode::kReadWrite);
    REQUIRE(f.ok());
    const uint8_t x = 0xAB;
    REQUIRE((*f)->WriteAt(5, &x, 1).ok());
  }
  auto expect = data;
  expect[5] = 0xAB;
  CHECK(ReadWhole(s, *b / "keep.bin") == expect);

  {  // kWrite truncates
    auto f = s.Open(*b / "keep.bin", OpenMode::kWrite);
    REQUIRE(f.ok());
    CHECK(*(*f)->Size() == 0);
  }
  CHECK(*s.FileSize(*b / "keep.bin") == 0);

  // A read-only handle refuses writes.
  auto ro = s.Open(*b / "keep.bin", OpenMode::kRead);
  REQUIRE(ro.ok());
  CHECK_FALSE((*ro)->WriteAt(0, data.data(), 10).ok());
}

TEST_CASE("storage conformance: directories, List, Rename, Remove") {
  const std::string name = GENERATE(from_range(StorageNames()));
  CAPTURE(name);
  auto b = MakeBackend(name);
  Storage& s = *b->storage;
  REQUIRE(s.CreateDirs(*b / "x/y/z").ok());
  REQUIRE(s.CreateDirs(*b / "x/y/z").ok());  // idempotent like mkdir -p
  CHECK(*s.IsDirectory(*b / "x/y"));
  CHECK(*s.Exists(*b / "x/y/z"));
  WriteWhole(s, *b / "c", Pattern(3));
  WriteWhole(s, *b / "a", Pattern(1));
  WriteWhole(s, *b / "b", Pattern(2));
  auto names = s.List(b->root);
  REQUIRE(names.ok());
  CHECK(*names == std::vector<std::string>{"a", "b", "c", "x"});
  CHECK(s.List(*b / "nope").status().code() == StatusCode::kNotFound);
  CHECK(s.CreateDirs(*b / "a/sub").code() != StatusCode::kOk);  // a is a file

  // Rename replaces the target atomically.
  REQUIRE(s.Rename(*b / "a", *b / "b").ok());
  CHECK_FALSE(*s.Exists(*b / "a"));
  CHECK(ReadWhole(s, *b / "b") == Pattern(1));
  CHECK(s.Rename(*b / "a", *b / "q").code() == StatusCode::kNotFound);

  // Remove deletes files, never directories.
  REQUIRE(s.Remove(*b / "b").ok());
  CHECK_FALSE(*s.Exists(*b / "b"));
  CHECK(s.Remove(*b / "b").code() == StatusCode::kNotFound);
  Status dir_remove = s.Remove(*b / "x");
  CHECK_FALSE(dir_remove.ok());
  CHECK_THAT(dir_remove.message(), Catch::Contains(*b / "x"));
  CHECK(*s.IsDirectory(*b / "x"));

  CHECK_FALSE(s.RemoveEmptyDir(*b / "x/y").ok());  // not empty
  REQUIRE(s.RemoveEmptyDir(*b / "x/y/z").ok());
  CHECK_FALSE(*s.Exists(*b / "x/y/z"));
  CHECK(s.SyncDir(b->root).ok());
  CHECK(*s.List(b->root) == std::vector<std::string>{"c", "x"});
}

TEST_CASE("storage conformance: TryLock excludes a second holder until released") {
  const std::string name = GENERATE(from_range(StorageNames()));
  CAPTURE(name);
  auto b = MakeBackend(name);
  Storage& s = *b->storage;
  auto first = s.TryLock(*b / "lock");
  INFO(first.status().ToString());
  REQUIRE(first.ok());
  REQUIRE(*first != nullptr);
  CHECK(*s.Exists(*b / "lock"));  // created, empty
  CHECK(*s.FileSize(*b / "lock") == 0);
  auto second = s.TryLock(*b / "lock");
  REQUIRE(second.ok());
  CHECK(*second == nullptr);               // held
  WriteWhole(s, *b / "lock", Pattern(5));  // the holder may write into it
  first->reset();
  auto third = s.TryLock(*b / "lock");
  REQUIRE(third.ok());
  REQUIRE(*third != nullptr);
  CHECK(ReadWhole(s, *b / "lock") == Pattern(5));  // an existing lock file keeps its bytes
  // A holder that removes the file before releasing it: the next TryLock takes a new file.
  REQUIRE(s.Remove(*b / "lock").ok());
  third->reset();
  auto fourth = s.TryLock(*b / "lock");
  REQUIRE(fourth.ok());
  CHECK(*fourth != nullptr);
  CHECK(*s.Exists(*b / "lock"));
  CHECK_FALSE(s.TryLock(b->root).ok());  // a directory is no lock file
}

TEST_CASE("storage conformance: concurrent ReadAt from 4 threads") {
  const std::string name = GENERATE(from_range(StorageNames()));
  CAPTURE(name);
  auto b = MakeBackend(name);
  const auto data = Pattern(1 << 18);
  WriteWhole(*b->storage, *b / "big.bin", data);
  auto f = b->storage->Open(*b / "big.bin", OpenMode::kRead);
  REQUIRE(f.ok());
  File* file = f->get();
  std::vector<int> bad(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::vector<uint8_t> buf(4096);
      for (int i = 0; i < 200; ++i) {
        const uint64_t off = (static_cast<uint64_t>(i) * 7919 + t * 1013) % (data.size() - 4096);
        auto got = file->ReadAt(off, 4096, buf.data());
        if (!got.ok() || *got != 4096 ||
            !std::equal(buf.begin(), buf.end(), data.begin() + static_cast<long>(off))) {
          ++bad[t];
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(bad == std::vector<int>(4, 0));
  CHECK(b->storage->stats().read_ops == 800);
  CHECK(b->storage->stats().read_bytes == 800 * 4096);
}

TEST_CASE("storage conformance: IoStats count ops and bytes exactly") {
  const std::string name = GENERATE(from_range(StorageNames()));
  CAPTURE(name);
  auto b = MakeBackend(name);
  Storage& s = *b->storage;
  const auto data = Pattern(300);
  {
    auto f = s.Open(*b / "s.bin", OpenMode::kWrite);
    REQUIRE(f.ok());
    for (int i = 0; i < 3; ++i) REQUIRE((*f)->WriteAt(i * 100, data.data() + i * 100, 100).ok());
    REQUIRE((*f)->Sync().ok());
  }  // destruction closes
  {
    auto f = s.Open(*b / "s.bin", OpenMode::kRead);
    REQUIRE(f.ok());
    std::vector<uint8_t> buf(300);
    REQUIRE((*f)->ReadAt(0, 200, buf.data()).ok());
    REQUIRE((*f)->ReadAt(250, 200, buf.data()).ok());  // short: 50 bytes
    REQUIRE((*f)->Close().ok());
  }
  IoStats st = s.stats();
  CHECK(st.opens == 2);
  CHECK(st.closes == 2);
  CHECK(st.write_ops == 3);
  CHECK(st.write_bytes == 300);
  CHECK(st.read_ops == 2);
  CHECK(st.read_bytes == 250);
  CHECK(st.syncs == 1);
}

TEST_CASE("storage conformance: tracing records pread offset, count, ret and file name") {
  const std::string name = GENERATE(from_range(StorageNames()));
  CAPTURE(name);
  MemoryTracer tracer;
  auto b = MakeBackend(name, &tracer);
  const auto data = Pattern(5000);
  WriteWhole(*b->storage, *b / "t.bin", data);
  {
    auto f = b->storage->Open(*b / "t.bin", OpenMode::kRead);
    REQUIRE(f.ok());
    std::vector<uint8_t> buf(4000);
    REQUIRE(*(*f)->ReadAt(1500, 4000, buf.data()) == 3500);
  }
  // The stdio backend names its calls as the C library's (and its category STDIO).
  const bool stdio = name == "stdio";
  std::vector<TraceEvent> preads, opens, closes, pwrites;
  for (const auto& e : tracer.Events()) {
    const std::string n = e.name;
    if (n == (stdio ? "fread" : "pread")) preads.push_back(e);
    if (n == (stdio ? "fopen" : "open64")) opens.push_back(e);
    if (n == (stdio ? "fclose" : "close")) closes.push_back(e);
    if (n == (stdio ? "fwrite" : "pwrite")) pwrites.push_back(e);
  }
  REQUIRE(preads.size() == 1);  // slow: only the outer layer traces
  CHECK(preads[0].offset == 1500);
  CHECK(preads[0].count == 4000);
  CHECK(preads[0].ret == 3500);
  CHECK(std::string(preads[0].cat) == (stdio ? "STDIO" : name == "mpiio" ? "MPIIO" : "POSIX"));
  CHECK(preads[0].dur_us >= 0);
  CHECK(preads[0].start_us > 0);
  CHECK(preads[0].tid != 0);
  CHECK(tracer.FileName(preads[0].file_id) == *b / "t.bin");
  REQUIRE(pwrites.size() == 1);
  CHECK(pwrites[0].count == 5000);
  CHECK(pwrites[0].ret == 5000);
  CHECK(pwrites[0].offset == 0);
  CHECK(pwrites[0].file_id == preads[0].file_id);
  CHECK(opens.size() == 2);
  CHECK(closes.size() == 2);
}

TEST_CASE("storage conformance: trace times come from the bound clock, wall time included") {
  const std::string name = GENERATE(from_range(StorageNames()));
  CAPTURE(name);
  MemoryTracer tracer;
  const int64_t wall_origin_us = 123'456'789;  // 1970: no real clock says this
  testing::FakeClock clock(0, wall_origin_us);
  auto b = MakeBackend(name, &tracer, &clock);
  WriteWhole(*b->storage, *b / "t.bin", Pattern(100));
  const auto events = tracer.Events();
  REQUIRE(!events.empty());
  for (const TraceEvent& e : events) {
    CAPTURE(e.name);
    CHECK(e.start_us == wall_origin_us);  // the fake clock does not move: a real one would
    CHECK(e.dur_us == 0);
  }
}

TEST_CASE("storage conformance: WriteFileAtomically replaces the file and leaves no temporary") {
  const std::string name = GENERATE(from_range(StorageNames()));
  CAPTURE(name);
  auto b = MakeBackend(name);
  Storage& s = *b->storage;
  REQUIRE(WriteFileAtomically(&s, *b / "f.json", "first").ok());
  CHECK(ReadWhole(s, *b / "f.json") == std::vector<uint8_t>{'f', 'i', 'r', 's', 't'});
  const IoStats before = s.stats();
  REQUIRE(WriteFileAtomically(&s, *b / "f.json", "2nd", AtomicSync::kFileAndDir).ok());
  CHECK(ReadWhole(s, *b / "f.json") == std::vector<uint8_t>{'2', 'n', 'd'});
  CHECK(s.stats().syncs > before.syncs);  // the file's fsync
  REQUIRE(WriteFileAtomically(&s, *b / "empty", "").ok());
  CHECK(*s.FileSize(*b / "empty") == 0);
  CHECK(*s.List(b->root) == std::vector<std::string>{"empty", "f.json"});
}

TEST_CASE("storage conformance: a failed WriteFileAtomically keeps the old file, no temporary") {
  const std::string name = GENERATE(from_range(StorageNames()));
  CAPTURE(name);
  auto b = MakeBackend(name);
  Storage& s = *b->storage;
  WriteWhole(s, *b / "keep", Pattern(10));
  std::string tmp_seen;
  Status failed = WriteFileAtomically(&s, *b / "keep", [&](File* file) -> Status {
    tmp_seen = file->path();
    const auto half = Pattern(4);
    REQUIRE(file->WriteAt(0, half.data(), half.size()).ok());
    return Status::ResourceExhausted("disk full (injected)");
  });
  CHECK(failed.code() == StatusCode::kResourceExhausted);
  CHECK_THAT(failed.message(), Catch::Contains(*b / "keep") && Catch::Contains("disk full"));
  // The temporary was beside the file, named after it, and is gone.
  CHECK(tmp_seen.rfind(*b / "keep.tmp-", 0) == 0);
  CHECK(ReadWhole(s, *b / "keep") == Pattern(10));
  CHECK(*s.List(b->root) == std::vector<std::string>{"keep"});

  // A writer that creates the file itself (as formats do) gets a path that does not exist yet.
  Status at = WriteFileAtomicallyAt(&s, *b / "fmt.bin", [&](const std::string& tmp) -> Status {
    CHECK_FALSE(*s.Exists(tmp));
    WriteWhole(s, tmp, Pattern(3), OpenMode::kCreateNew);
    return Status::IOError("encoder failed (injected)");
  });
  CHECK(at.code() == StatusCode::kIOError);
  CHECK(*s.List(b->root) == std::vector<std::string>{"keep"});
  REQUIRE(WriteFileAtomicallyAt(&s, *b / "fmt.bin", [&](const std::string& tmp) {
            WriteWhole(s, tmp, Pattern(3), OpenMode::kCreateNew);
            return Status::OK();
          }).ok());
  CHECK(ReadWhole(s, *b / "fmt.bin") == Pattern(3));
}

TEST_CASE("storage conformance: concurrent WriteFileAtomically to one path never tears it") {
  const std::string name = GENERATE(from_range(StorageNames()));
  CAPTURE(name);
  auto b = MakeBackend(name);
  Storage& s = *b->storage;
  std::vector<std::thread> threads;
  std::vector<Status> results(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const std::string text(1000 + t, static_cast<char>('a' + t));
      results[t] = WriteFileAtomically(&s, *b / "shared", text);
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& r : results) CHECK(r.ok());
  const auto bytes = ReadWhole(s, *b / "shared");
  REQUIRE(bytes.size() >= 1000);
  const int t = static_cast<int>(bytes.size()) - 1000;  // one writer's whole content
  CHECK(bytes == std::vector<uint8_t>(bytes.size(), static_cast<uint8_t>('a' + t)));
  CHECK(*s.List(b->root) == std::vector<std::string>{"shared"});
}

}  // namespace
}  // namespace dlio
