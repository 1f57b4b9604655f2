// posix-only behaviour: O_DIRECT with unaligned requests, ENOSPC mapping, error messages.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <future>
#include <string>
#include <vector>

#include "dlio/storage.h"
#include "test_util.h"

namespace dlio {
namespace {

std::vector<uint8_t> PosixPattern(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 2654435761u >> 13);
  return v;
}

// The status flags (fcntl F_GETFL) of this process's one open descriptor of `path`, from
// /proc/self/fdinfo; -1 when none or several are open.
int FlagsOfOpenFile(const std::string& path) {
  int flags = -1, found = 0;
  for (int fd = 0; fd < 4096; ++fd) {
    char link[4096];
    const std::string at = "/proc/self/fd/" + std::to_string(fd);
    const ssize_t n = ::readlink(at.c_str(), link, sizeof link);
    if (n <= 0 || std::string(link, static_cast<size_t>(n)) != path) continue;
    ++found;
    flags = ::fcntl(fd, F_GETFL);
  }
  return found == 1 ? flags : -1;
}

// Opens `path` for reading on another thread; a FIFO must be refused at once, not block until a
// writer appears. If the open blocks anyway, a writer is opened to release it so the test ends.
Status OpenForReadWithin(Storage* storage, const std::string& path, const FileOptions& options) {
  auto opened = std::async(std::launch::async,
                           [&] { return storage->Open(path, OpenMode::kRead, options).status(); });
  if (opened.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    const int writer = ::open(path.c_str(), O_WRONLY);
    Status late = opened.get();
    if (writer >= 0) ::close(writer);
    return Status::Internal(
        "Open blocked on the FIFO (returned only once a writer came: " + late.ToString() + ")");
  }
  return opened.get();
}

TEST_CASE("posix and stdio: reading a FIFO or a device is refused at once, naming the path") {
  testing::TempDir tmp;
  const std::string fifo = tmp / "img_0_of_1.npz";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  StorageOptions direct_options;
  direct_options.direct = true;
  auto posix = NewPosixStorage(StorageOptions{});
  auto direct = NewPosixStorage(direct_options);
  auto stdio = NewStdioStorage();
  for (Storage* storage : {posix.get(), direct.get(), stdio.get()}) {
    INFO(storage->name());
    Status st = OpenForReadWithin(storage, fifo, FileOptions{});
    INFO(st.ToString());
    CHECK(st.code() == StatusCode::kIOError);
    CHECK(st.message().find(fifo + ": not a regular file (a FIFO)") != std::string::npos);
    Status dev = OpenForReadWithin(storage, "/dev/zero", FileOptions{});
    CHECK(dev.message().find("/dev/zero: not a regular file (a character device)") !=
          std::string::npos);
  }
  // A regular file still opens, reads and keeps blocking semantics (O_NONBLOCK cleared).
  const std::string regular = tmp / "r.bin";
  testing::WriteTextFile(regular, "abc");
  for (Storage* storage : {posix.get(), stdio.get()}) {
    auto file = storage->Open(regular, OpenMode::kRead);
    REQUIRE(file.ok());
    const int flags = FlagsOfOpenFile(regular);
    REQUIRE(flags >= 0);
    CHECK((flags & O_NONBLOCK) == 0);
    CHECK((flags & O_ACCMODE) == O_RDONLY);
    char buf[3];
    REQUIRE((*file)->ReadExactAt(0, 3, buf).ok());
    CHECK(std::string(buf, 3) == "abc");
  }
  // O_DIRECT stays set where the file system takes it (tmpfs refuses it at open).
  auto file = direct->Open(regular, OpenMode::kRead);
  if (file.ok()) {
    const int flags = FlagsOfOpenFile(regular);
    REQUIRE(flags >= 0);
    CHECK((flags & O_NONBLOCK) == 0);
    CHECK((flags & O_DIRECT) != 0);
  }
}

TEST_CASE("posix and stdio files carry the block size of their open's fstat") {
  testing::TempDir tmp;
  const std::string path = tmp / "b.bin";
  testing::WriteTextFile(path, "abc");
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  REQUIRE(st.st_blksize > 0);
  auto posix = NewPosixStorage(StorageOptions{});
  auto stdio = NewStdioStorage();
  for (Storage* storage : {posix.get(), stdio.get()}) {
    INFO(storage->name());
    for (OpenMode mode : {OpenMode::kRead, OpenMode::kReadWrite}) {
      auto file = storage->Open(path, mode);
      REQUIRE(file.ok());
      CHECK((*file)->block_size() == static_cast<uint64_t>(st.st_blksize));
    }
  }
  // A backend that learns none at open says 0 (the memory storage has no host file).
  auto memory = NewMemoryStorage();
  REQUIRE(memory->Open("m.bin", OpenMode::kWrite).ok());
  auto m = memory->Open("m.bin", OpenMode::kRead);
  REQUIRE(m.ok());
  CHECK((*m)->block_size() == 0);
}

TEST_CASE("posix: the first Size of a file opened for reading is its open's, later ones fresh") {
  testing::TempDir tmp;
  const std::string path = tmp / "s.bin";
  testing::WriteTextFile(path, "abcd");
  auto storage = NewPosixStorage(StorageOptions{});
  auto file = storage->Open(path, OpenMode::kRead);
  REQUIRE(file.ok());
  testing::WriteTextFile(path,
                         "abcdefgh");  // grows after the open (same inode: truncated, written)
  // The size the open's fstat found, once (what Python's open(path, "rb") learns).
  CHECK((*file)->Size().value() == 4);
  // Then the kernel's.
  CHECK((*file)->Size().value() == 8);
  CHECK((*file)->Size().value() == 8);
  // A file opened for writing asks the kernel every time: its own writes move the size.
  auto written = storage->Open(tmp / "w.bin", OpenMode::kWrite);
  REQUIRE(written.ok());
  CHECK((*written)->Size().value() == 0);
  REQUIRE((*written)->WriteAt(0, "xyz", 3).ok());
  CHECK((*written)->Size().value() == 3);
}

TEST_CASE("posix: O_DIRECT round trip with unaligned offsets, sizes and buffers") {
  testing::TempDir tmp;
  StorageOptions options;
  options.direct = true;
  options.direct_alignment = 4096;
  auto direct = NewPosixStorage(options);
  auto buffered = NewPosixStorage(StorageOptions{});
  CHECK(direct->SupportsDirect());
  const std::string path = tmp / "d.bin";
  const auto data = PosixPattern(3 * 4096 + 123);  // tail not a multiple of the alignment

  auto f = direct->Open(path, OpenMode::kCreateNew);
  if (!f.ok() && f.status().code() == StatusCode::kInvalidArgument) {
    CHECK_THAT(f.status().message(), Catch::Contains("O_DIRECT"));
    WARN("O_DIRECT unsupported on " << tmp.path() << ", skipping: " << f.status().ToString());
    return;
  }
  REQUIRE(f.ok());
  CHECK((*f)->alignment() == 4096);
  // Unaligned caller memory (offset 1 into a vector) for the aligned head.
  std::vector<uint8_t> shifted(data.size() + 1);
  std::memcpy(shifted.data() + 1, data.data(), data.size());
  REQUIRE((*f)->WriteAt(0, shifted.data() + 1, data.size()).ok());
  // An unaligned offset rewrite goes through the buffered twin.
  REQUIRE((*f)->WriteAt(5000, data.data() + 5000, 777).ok());
  REQUIRE((*f)->Sync().ok());
  REQUIRE((*f)->Close().ok());

  CHECK(*buffered->FileSize(path) == data.size());
  {
    auto bf = buffered->Open(path, OpenMode::kRead);
    REQUIRE(bf.ok());
    std::vector<uint8_t> all(data.size());
    REQUIRE((*bf)->ReadExactAt(0, all.size(), all.data()).ok());
    CHECK(all == data);
  }

  auto r = direct->Open(path, OpenMode::kRead, FileOptions{true});
  REQUIRE(r.ok());
  std::vector<uint8_t> buf(data.size() + 8);
  struct Case {
    uint64_t off;
    size_t n;
    size_t buf_shift;
    size_t want;
  };
  const Case cases[] = {
      {0, 4096, 0, 4096},     // aligned offset/size (vector memory may be unaligned)
      {1, 100, 3, 100},       // tiny unaligned
      {4000, 5000, 1, 5000},  // crosses block boundaries
      {12000, 1000, 0, data.size() - 12000},  // short read at EOF through the bounce buffer
      {data.size(), 10, 0, 0},                // at EOF
  };
  for (const Case& c : cases) {
    CAPTURE(c.off, c.n);
    auto got = (*r)->ReadAt(c.off, c.n, buf.data() + c.buf_shift);
    REQUIRE(got.ok());
    CHECK(*got == c.want);
    CHECK(std::equal(buf.begin() + static_cast<long>(c.buf_shift),
                     buf.begin() + static_cast<long>(c.buf_shift + *got),
                     data.begin() + static_cast<long>(c.off)));
  }
  // Fully aligned request into an AlignedBuffer: straight O_DIRECT read, short at EOF.
  AlignedBuffer ab(4096);
  REQUIRE(ab.Resize(2 * 4096).ok());
  CHECK(reinterpret_cast<uintptr_t>(ab.data()) % 4096 == 0);
  auto got = (*r)->ReadAt(2 * 4096, 2 * 4096, ab.data());
  REQUIRE(got.ok());
  CHECK(*got == 4096 + 123);
  CHECK(std::equal(ab.data(), ab.data() + *got, data.begin() + 2 * 4096));
}

TEST_CASE("posix: O_DIRECT on a file system without it names the path") {
  // tmpfs gained O_DIRECT in Linux 6.6; the message is checked only where it is refused.
  if (access("/dev/shm", W_OK) != 0) {
    WARN("no writable /dev/shm");
    return;
  }
  StorageOptions options;
  options.direct = true;
  auto s = NewPosixStorage(options);
  const std::string path = "/dev/shm/dlio-odirect-probe-" + std::to_string(getpid());
  auto f = s->Open(path, OpenMode::kCreateNew);
  if (f.ok()) {
    REQUIRE((*f)->Close().ok());
    REQUIRE(s->Remove(path).ok());
    WARN("tmpfs supports O_DIRECT on this kernel; error path not exercised");
    return;
  }
  CHECK(f.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(f.status().message(), Catch::Contains(path));
  CHECK_THAT(f.status().message(), Catch::Contains("O_DIRECT unsupported"));
  CHECK(access(path.c_str(), F_OK) != 0);  // the kCreateNew file we made is gone
}

TEST_CASE("posix: ENOSPC maps to ResourceExhausted naming the path") {
  if (access("/dev/full", W_OK) != 0) {
    WARN("no /dev/full");
    return;
  }
  auto s = NewPosixStorage(StorageOptions{});
  auto f = s->Open("/dev/full", OpenMode::kReadWrite);
  REQUIRE(f.ok());
  const char bytes[16] = {};
  Status st = (*f)->WriteAt(0, bytes, sizeof bytes);
  CHECK(st.code() == StatusCode::kResourceExhausted);
  CHECK_THAT(st.message(), Catch::Contains("/dev/full"));
  CHECK(s->stats().write_ops == 0);  // failed writes are not counted
}

TEST_CASE("posix: errors name the operation and path") {
  testing::TempDir tmp;
  auto s = NewPosixStorage(StorageOptions{});
  auto f = s->Open(tmp / "nope/x.bin", OpenMode::kWrite);
  CHECK(f.status().code() == StatusCode::kNotFound);
  CHECK_THAT(f.status().message(), Catch::Contains("open " + tmp / "nope/x.bin"));
  CHECK_THAT(s->List(tmp / "nope").status().message(), Catch::Contains(tmp / "nope"));
  auto d = s->Open(tmp.path(), OpenMode::kRead);
  CHECK_FALSE(d.ok());
  CHECK_THAT(d.status().message(), Catch::Contains("Is a directory"));
  // Storage used without MakeStorage still works (bound to the system clock, null tracer).
  REQUIRE(s->CreateDirs(tmp / "a/b").ok());
  CHECK(*s->IsDirectory(tmp / "a/b"));
}

TEST_CASE("posix: closed files refuse I/O") {
  testing::TempDir tmp;
  auto s = NewPosixStorage(StorageOptions{});
  auto f = s->Open(tmp / "c.bin", OpenMode::kWrite);
  REQUIRE(f.ok());
  REQUIRE((*f)->Close().ok());
  char c = 0;
  auto r = (*f)->ReadAt(0, 1, &c);
  CHECK(r.status().code() == StatusCode::kFailedPrecondition);
  CHECK_THAT(r.status().message(), Catch::Contains(tmp / "c.bin"));
}

TEST_CASE("AlignedBuffer grows aligned and moves") {
  AlignedBuffer a(512);
  REQUIRE(a.Resize(100).ok());
  CHECK(a.size() == 100);
  CHECK(a.capacity() >= 100);
  CHECK(reinterpret_cast<uintptr_t>(a.data()) % 512 == 0);
  uint8_t* p = a.data();
  REQUIRE(a.Resize(50).ok());  // never shrinks
  CHECK(a.data() == p);
  AlignedBuffer b(std::move(a));
  CHECK(b.data() == p);
  CHECK(a.data() == nullptr);  // NOLINT(bugprone-use-after-move)
  AlignedBuffer bad(3);
  CHECK(bad.Resize(10).code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dlio
