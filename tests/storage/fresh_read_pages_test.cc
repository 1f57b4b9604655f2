// reader.fresh_page_share's pages: counted with mincore, dropped from private and shared memory,
// topped up rather than added to, never outside the read's whole pages; and the page faults a
// posix read then takes inside the call (counts, not times: a loaded host changes nothing).
#include "dlio/fresh_read_pages.h"

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "dlio/storage.h"
#include "test_util.h"

namespace dlio {
namespace {

const size_t kPage = static_cast<size_t>(::sysconf(_SC_PAGESIZE));

// `pages` pages of anonymous memory, every one touched (in memory), unmapped on destruction.
class Mapping {
 public:
  Mapping(size_t pages, int sharing) : bytes_(pages * kPage) {
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, sharing | MAP_ANONYMOUS, -1, 0);
    REQUIRE(p != MAP_FAILED);
    data_ = static_cast<uint8_t*>(p);
    std::memset(data_, 0x5a, bytes_);
  }
  ~Mapping() { ::munmap(data_, bytes_); }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  uint8_t* data() const { return data_; }
  // Pages of [from, from + pages) not in memory.
  size_t Absent(size_t from, size_t pages) const {
    std::vector<unsigned char> in(pages);
    REQUIRE(::mincore(data_ + from * kPage, pages * kPage, in.data()) == 0);
    size_t absent = 0;
    for (unsigned char c : in) absent += (c & 1) == 0 ? 1 : 0;
    return absent;
  }

 private:
  size_t bytes_;
  uint8_t* data_ = nullptr;
};

TEST_CASE("fresh pages: a share of a private read's pages dropped, counted over all reads") {
  Mapping m(64, MAP_PRIVATE);
  FreshReadPages fresh(0.5);
  fresh.BeforeRead(m.data(), 64 * kPage);
  CHECK(m.Absent(0, 64) == 32);
  CHECK(fresh.pages() == 64);
  CHECK(fresh.fresh() == 32);
  // The first pages are the ones dropped; their contents are gone (zero), the rest kept.
  CHECK(m.data()[0] == 0);
  CHECK(m.data()[32 * kPage] == 0x5a);
  // Ten more reads of 17 pages at a share of 0.3: the total, not each read, is held to it.
  Mapping n(17, MAP_PRIVATE);
  FreshReadPages thirty(0.3);
  size_t absent = 0;
  for (int i = 0; i < 10; ++i) {
    std::memset(n.data(), 1, 17 * kPage);  // the read fills them: back in memory
    thirty.BeforeRead(n.data(), 17 * kPage);
    absent += n.Absent(0, 17);
  }
  CHECK(absent == 51);  // 0.3 x 170
  CHECK(thirty.fresh() == 51);
}

TEST_CASE("fresh pages: pages already out of memory count toward the share") {
  Mapping m(64, MAP_PRIVATE);
  REQUIRE(::madvise(m.data() + 40 * kPage, 24 * kPage, MADV_DONTNEED) == 0);
  FreshReadPages fresh(0.5);
  fresh.BeforeRead(m.data(), 64 * kPage);
  CHECK(m.Absent(0, 64) == 32);  // 24 already out, 8 dropped
  CHECK(m.Absent(0, 8) == 8);
  CHECK(fresh.fresh() == 32);
  // More out than the share: none dropped.
  std::memset(m.data(), 1, 64 * kPage);
  REQUIRE(::madvise(m.data(), 48 * kPage, MADV_DONTNEED) == 0);
  fresh.BeforeRead(m.data(), 64 * kPage);
  CHECK(m.Absent(0, 64) == 48);
  CHECK(fresh.fresh() == 80);
}

TEST_CASE("fresh pages: reads under 16 KiB, share 0, and bytes outside the read are left") {
  Mapping m(32, MAP_PRIVATE);
  FreshReadPages fresh(1.0);
  fresh.BeforeRead(m.data(), FreshReadPages::kMinBytes - 1);
  CHECK(m.Absent(0, 32) == 0);
  CHECK(fresh.pages() == 0);
  // The smallest read counted, 16 KiB (the tracer's threshold): its pages dropped.
  Mapping small(8, MAP_PRIVATE);
  FreshReadPages all(1.0);
  all.BeforeRead(small.data(), FreshReadPages::kMinBytes);
  CHECK(small.Absent(0, 8) == FreshReadPages::kMinBytes / kPage);
  CHECK(all.fresh() == FreshReadPages::kMinBytes / kPage);
  FreshReadPages zero(0.0);
  zero.BeforeRead(m.data(), 32 * kPage);
  CHECK(m.Absent(0, 32) == 0);
  // An unaligned read of 20 pages from 100 bytes in: it fills 19 pages whole; the first and the
  // last page it touches hold other bytes and stay.
  fresh.BeforeRead(m.data() + 100, 20 * kPage);
  CHECK(m.Absent(0, 1) == 0);
  CHECK(m.Absent(1, 19) == 19);
  CHECK(m.Absent(20, 12) == 0);
  CHECK(m.data()[99] == 0x5a);
  CHECK(m.data()[20 * kPage + 100] == 0x5a);
}

TEST_CASE("fresh pages: shared memory's pages are freed, not only unmapped") {
  // A pytorch worker's batch slot is shared: MADV_DONTNEED would leave its pages in the shared
  // file (found again, not zeroed, on the next touch); dropped pages read back as zeros.
  Mapping m(16, MAP_SHARED);
  FreshReadPages fresh(0.25);
  fresh.BeforeRead(m.data(), 16 * kPage);
  CHECK(m.Absent(0, 16) == 4);
  CHECK(m.data()[0] == 0);
  CHECK(m.data()[3 * kPage + 7] == 0);
  CHECK(m.data()[4 * kPage] == 0x5a);
}

long MinorFaults() {
  rusage u{};
  ::getrusage(RUSAGE_THREAD, &u);
  return u.ru_minflt;
}

TEST_CASE("fresh pages: a storage's reads fault in the share inside the call") {
  testing::TempDir tmp;
  const std::string path = tmp / "f.bin";
  testing::WriteTextFile(path, std::string(1 << 20, 'x'));
  auto storage = NewPosixStorage(StorageOptions{});
  Mapping into(256, MAP_PRIVATE);
  auto plain = storage->Open(path, OpenMode::kRead);
  REQUIRE(plain.ok());
  long before = MinorFaults();
  REQUIRE((*plain)->ReadAt(0, 1 << 20, into.data()).value() == size_t{1} << 20);
  CHECK(MinorFaults() - before < 16);  // into memory in place: (next to) none
  storage->set_fresh_read_pages(std::make_shared<FreshReadPages>(0.5));
  auto fresh = storage->Open(path, OpenMode::kRead);  // opened after: drops pages
  REQUIRE(fresh.ok());
  before = MinorFaults();
  REQUIRE((*fresh)->ReadAt(0, 1 << 20, into.data()).value() == size_t{1} << 20);
  CHECK(MinorFaults() - before >= 128);  // half of 256 pages, faulted in by the read
  CHECK(into.data()[0] == 'x');          // and filled by it
  CHECK(into.Absent(0, 256) == 0);
  // The file opened before keeps reading in place.
  before = MinorFaults();
  REQUIRE((*plain)->ReadAt(0, 1 << 20, into.data()).value() == size_t{1} << 20);
  CHECK(MinorFaults() - before < 16);
  // Detached: files opened later read in place again.
  storage->set_fresh_read_pages(nullptr);
  auto again = storage->Open(path, OpenMode::kRead);
  REQUIRE(again.ok());
  before = MinorFaults();
  REQUIRE((*again)->ReadAt(0, 1 << 20, into.data()).value() == size_t{1} << 20);
  CHECK(MinorFaults() - before < 16);
}

}  // namespace
}  // namespace dlio
