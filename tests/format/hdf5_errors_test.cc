// hdf5: bad files (truncated, garbage, impossible extents, headers libhdf5 crashes on) and full
// disks: errors naming the file, never a crash or a hang.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "format/full_storage.h"
#include "format/hdf5/hdf5_metadata_guard.h"
#include "format/hdf5/hdf5_options.h"
#include "format/hdf5_test_util.h"
#include "format/io_util.h"
#include "test_util.h"

namespace dlio::testing {
namespace {

TEST_CASE("hdf5 errors: truncated, garbage, missing, out of range", "[format][hdf5][errors]") {
  TempDir tmp;
  auto storage = BoundPosixStorage();
  auto format = Hdf5();
  const FileSpec spec = Fixed(10, 4000);
  const std::string good = tmp / "good.h5";
  REQUIRE(format->Write(storage.get(), good, spec, {}).ok());

  SECTION("truncated file") {
    const std::string path = tmp / "cut.h5";
    std::filesystem::copy_file(good, path);
    std::filesystem::resize_file(path, std::filesystem::file_size(good) / 2);
    auto r = format->Open(storage.get(), path, {});
    REQUIRE(r.status().code() == StatusCode::kCorruption);
    INFO(r.status().message());
    CHECK(Has(r.status().message(), path));
    CHECK(Has(r.status().message(),
              "truncated file: eof = " + std::to_string(std::filesystem::file_size(path))));
  }
  SECTION("garbage bytes") {
    const std::string path = tmp / "junk.h5";
    WriteTextFile(path, std::string(5000, 'x'));
    auto r = format->Open(storage.get(), path, {});
    REQUIRE(r.status().code() == StatusCode::kCorruption);
    INFO(r.status().message());
    CHECK(Has(r.status().message(), path));
    CHECK(Has(r.status().message(), "signature"));
  }
  SECTION("missing file") {
    auto r = format->Open(storage.get(), tmp / "none.h5", {});
    REQUIRE(r.status().code() == StatusCode::kNotFound);
    CHECK(Has(r.status().message(), tmp / "none.h5"));
  }
  SECTION("damaged gzip chunk") {
    const std::string path = tmp / "z.h5";
    FormatOptions o;
    o.compression = "gzip";
    o.formats.Get<Hdf5Options>().chunk_samples = 1;
    o.formats.Get<Hdf5Options>().enable_chunking = true;
    REQUIRE(format->Write(storage.get(), path, spec, o).ok());
    // The chunks fill the middle of the file: garble one of them.
    PatchBytes(path, static_cast<long>(std::filesystem::file_size(path) / 2),
               std::string(64, '\0'));
    auto r = format->Open(storage.get(), path, o);
    REQUIRE(r.ok());
    SampleBuffer buf;
    int failures = 0;
    for (uint64_t i = 0; i < 10; ++i) {
      Status st = (*r)->ReadSample(i, &buf);
      if (st.ok()) {
        REQUIRE(BufferString(buf) == ExpectedSample(spec, i));
        continue;
      }
      ++failures;
      INFO(st.ToString());
      CHECK(st.code() == StatusCode::kCorruption);
      CHECK(Has(st.message(), path + ": reading sample " + std::to_string(i)));
      CHECK(Has(st.message(), "inflate() failed"));
      CHECK(Has(st.message(), "its chunk at file offset "));
    }
    CHECK(failures == 1);
  }
  SECTION("sample index out of range") {
    auto r = format->Open(storage.get(), good, {});
    REQUIRE(r.ok());
    SampleBuffer buf;
    Status st = (*r)->ReadSample(10, &buf);
    REQUIRE(st.code() == StatusCode::kOutOfRange);
    CHECK(Has(st.message(), "sample 10 of 10"));
  }
  SECTION("writing over an existing file") {
    Status st = format->Write(storage.get(), good, spec, {});
    REQUIRE(st.code() == StatusCode::kAlreadyExists);
    auto r = format->Open(storage.get(), good, {});
    REQUIRE(r.ok());  // untouched
  }
}

// Writes each layout on disks too small for it, from empty up to a few bytes short of what it
// needs, so the disk fills at every stage: creating the file, writing samples, flushing a chunk
// cache when a dataset closes, flushing metadata when the file closes. Returns the first write
// that did not fail cleanly (ResourceExhausted naming the file, nothing left behind), or "".
std::string FillDiskAtEveryStage() {
  auto format = MakeFormatByName("hdf5");
  if (format == nullptr) return "no hdf5 format";
  FormatOptions contiguous, gzip, meta;
  gzip.compression = "gzip";
  gzip.formats.Get<Hdf5Options>().enable_chunking = true;
  gzip.formats.Get<Hdf5Options>().chunk_size = 4096;
  meta.formats.Get<Hdf5Options>().metadata_file = true;
  meta.formats.Get<Hdf5Options>().enable_chunking = true;
  meta.formats.Get<Hdf5Options>().chunk_size = 8192;
  const std::vector<std::pair<FileSpec, FormatOptions>> cases = {{Fixed(6, 3000), contiguous},
                                                                 {Fixed(6, 3000), gzip},
                                                                 {Variable(8), gzip},
                                                                 {Variable(8), meta}};
  for (const auto& [spec, o] : cases) {
    FullStorage roomy(1 << 30);
    if (!format->Write(&roomy, "/a.h5", spec, o).ok()) return "the write fails on a roomy disk";
    const uint64_t needed = roomy.used();
    std::vector<uint64_t> capacities;
    for (uint64_t c = 0; c < needed; c += std::max<uint64_t>(1, needed / 60))
      capacities.push_back(c);
    for (uint64_t short_by = 1; short_by <= 8 && short_by <= needed; ++short_by) {
      capacities.push_back(needed - short_by);
    }
    for (uint64_t capacity : capacities) {
      FullStorage full(capacity);
      const Status st = format->Write(&full, "/a.h5", spec, o);
      const std::string where = "capacity " + std::to_string(capacity) + " of " +
                                std::to_string(needed) + ", chunk_size " +
                                std::to_string(Hdf5Of(o.formats).chunk_size) + ": ";
      if (st.code() != StatusCode::kResourceExhausted || !Has(st.message(), "/a.h5") ||
          !Has(st.message(), "No space left on device")) {
        return where + st.ToString();
      }
      if (*full.Exists("/a.h5") || *full.Exists("/a.h5.meta.h5") || full.used() != 0) {
        return where + "left " + std::to_string(full.used()) + " bytes behind";
      }
    }
  }
  return "";
}

TEST_CASE("hdf5 on a full disk: an error naming the file, nothing left, a clean exit",
          "[format][hdf5][enospc]") {
  // In a child that then exits normally, so libhdf5's exit handler runs: libhdf5 1.10 keeps the
  // id of a file whose close failed (the disk was full), its exit handler closed that freed file
  // again, and the process died of SIGSEGV after printing the right error.
  std::cout.flush();
  std::fflush(nullptr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) std::exit(FillDiskAtEveryStage().empty() ? 0 : 3);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  INFO("child " << (WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                        : "exit " + std::to_string(WEXITSTATUS(status))));
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  // The same in this process, to see what went wrong.
  const std::string problem = FillDiskAtEveryStage();
  INFO(problem);
  CHECK(problem.empty());
}

// Little-endian bytes of `v`, as HDF5 stores dimensions.
std::string Le64(uint64_t v) {
  std::string s;
  format_internal::PutLe64(&s, v);
  return s;
}

// Replaces every occurrence (at least one) of `from` in the file at `path` by `to`.
void Replace(const std::string& path, const std::string& from, const std::string& to) {
  REQUIRE(from.size() == to.size());
  const std::string bytes = ReadTextFile(path);
  size_t at = bytes.find(from);
  REQUIRE(at != std::string::npos);
  for (; at != std::string::npos; at = bytes.find(from, at + from.size())) {
    PatchBytes(path, static_cast<long>(at), to);
  }
}

// The dataspace message of a dataset of `dims` (version 1, max dims = dims).
std::string Space(const std::vector<uint64_t>& dims) {
  std::string s("\x01\x00\x01\x00\x00\x00\x00\x00", 8);
  s[1] = static_cast<char>(dims.size());
  for (int k = 0; k < 2; ++k) {
    for (uint64_t d : dims) s += Le64(d);
  }
  return s;
}

TEST_CASE("hdf5 extents the file does not store are Corruption", "[format][hdf5][extent]") {
  TempDir tmp;
  auto storage = BoundPosixStorage();
  auto format = Hdf5();
  FormatOptions gzip;
  gzip.compression = "gzip";
  gzip.formats.Get<Hdf5Options>().enable_chunking = true;
  gzip.formats.Get<Hdf5Options>().chunk_size = 128;
  for (const auto& [name, o] :
       {std::pair{"contiguous", FormatOptions{}}, std::pair{"gzip", gzip}}) {
    for (const uint64_t rows : {uint64_t{1} << 50, uint64_t{1} << 62, uint64_t{5}}) {
      INFO(name << " rows " << rows);
      const std::string path = tmp / (std::string(name) + std::to_string(rows) + ".h5");
      REQUIRE(format->Write(storage.get(), path, Fixed(4, 64), o).ok());
      Replace(path, Space({4, 64}), Space({rows, 64}));
      auto r = format->Open(storage.get(), path, o);
      if (rows == 5 && o.compression == "gzip") {
        // One row more than written: within what the file could hold, so the reader opens it
        // (the missing chunk reads as the fill value), and inspect says what is missing.
        REQUIRE(r.ok());
        const std::string json = (*r)->DescribeJson();
        INFO(json);
        CHECK(Has(json, "\"problems\":["));
        CHECK(Has(json, path + ": /records: 1 of its 3 chunks are not stored"));
        CHECK(Has(json, path + ": /labels has 4 entries for 5 samples"));
        continue;
      }
      REQUIRE(r.status().code() == StatusCode::kCorruption);
      INFO(r.status().message());
      CHECK(Has(r.status().message(),
                path + ": /records declares shape [" + std::to_string(rows) + ",64]"));
      if (rows == uint64_t{1} << 62) {
        CHECK(Has(r.status().message(), "more than 2^62 bytes"));
      } else if (o.compression == "gzip") {
        CHECK(Has(r.status().message(), "of the file hold even compressed 1032:1"));
      } else {
        CHECK(Has(r.status().message(), "but stores 256 bytes"));
      }
    }
  }
  SECTION("rows larger than 2^62 bytes, even with no rows") {
    const std::string path = tmp / "wide.h5";
    REQUIRE(format->Write(storage.get(), path, Fixed(4, 64), {}).ok());
    const uint64_t wide = (uint64_t{1} << 62) + 1;
    Replace(path, Space({4, 64}), Space({0, wide}));
    auto r = format->Open(storage.get(), path, {});
    INFO(r.status().ToString());
    REQUIRE(r.status().code() == StatusCode::kCorruption);
    CHECK(Has(r.status().message(),
              path + ": /records declares rows of shape [" + std::to_string(wide) + "]"));
  }
  SECTION("a sample dataset libhdf5 cannot open is Corruption, not a missing dataset") {
    const std::string path = tmp / "wider.h5";
    REQUIRE(format->Write(storage.get(), path, Fixed(4, 64), {}).ok());
    Replace(path, Space({4, 64}), Space({0, uint64_t{1} << 63}));
    auto r = format->Open(storage.get(), path, {});
    INFO(r.status().ToString());
    REQUIRE(r.status().code() == StatusCode::kCorruption);
    CHECK(Has(r.status().message(), path + ": /records: cannot open: HDF5: "));
  }
  SECTION("/offsets longer than stored: no allocation of its declared size") {
    const std::string path = tmp / "var.h5";
    REQUIRE(format->Write(storage.get(), path, Variable(6), {}).ok());
    // /offsets, /sizes and /labels are [6]: /offsets comes first.
    const std::string bytes = ReadTextFile(path);
    const size_t at = bytes.find(Space({6}));
    REQUIRE(at != std::string::npos);
    PatchBytes(path, static_cast<long>(at), Space({uint64_t{1} << 40}));
    auto r = format->Open(storage.get(), path, {});
    REQUIRE(r.status().code() == StatusCode::kCorruption);
    CHECK(Has(r.status().message(), path + ": /offsets declares shape [1099511627776]"));
  }
}

TEST_CASE("hdf5 describes a file without visiting every sample", "[format][hdf5][extent]") {
  TempDir tmp;
  auto storage = BoundPosixStorage();
  const std::string path = tmp / "empty_rows.h5";
  REQUIRE(Hdf5()->Write(storage.get(), path, Fixed(3, 0), {}).ok());
  // 2^50 samples of 0 bytes: a valid extent (0 bytes stored), which a loop over the samples
  // would never finish describing.
  Replace(path, Space({3, 0}), Space({uint64_t{1} << 50, 0}));
  auto r = Hdf5()->Open(storage.get(), path, {});
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  REQUIRE((*r)->num_samples() == uint64_t{1} << 50);
  const std::string json = (*r)->DescribeJson();
  INFO(json);
  CHECK(Has(json, "\"num_samples\":1125899906842624,\"sample_size\":{\"min\":0,\"max\":0,"));
  CHECK(Has(json, path + ": /labels has 3 entries for 1125899906842624 samples"));
}

TEST_CASE("hdf5 inspect reports an unreadable /labels in problems", "[format][hdf5][problems]") {
  TempDir tmp;
  auto storage = BoundPosixStorage();
  const std::string path = tmp / "a.h5";
  REQUIRE(Hdf5()->Write(storage.get(), path, Fixed(4, 64), {}).ok());
  {
    auto good = Hdf5()->Open(storage.get(), path, {});
    REQUIRE(good.ok());
    CHECK_FALSE(Has((*good)->DescribeJson(), "problems"));
  }
  // The datatype message of /labels (int64 LE, the file's only signed type): class 15 does not
  // exist, so the dataset cannot be opened.
  const std::string int64_le("\x10\x08\x00\x00\x08\x00\x00\x00\x00\x00\x40\x00", 12);
  Replace(path, int64_le, "\x1f" + int64_le.substr(1));
  auto r = Hdf5()->Open(storage.get(), path, {});
  INFO(r.status().ToString());
  REQUIRE(r.ok());  // the samples are fine
  const std::string json = (*r)->DescribeJson();
  INFO(json);
  CHECK(Has(json, "\"problems\":[\"" + path + ": /labels: cannot open: HDF5: "));
  SampleBuffer buf;
  CHECK((*r)->ReadSample(3, &buf).ok());
}

TEST_CASE("hdf5 refuses headers libhdf5 accepts and then crashes on", "[format][hdf5][flips]") {
  // One flipped byte each (tests/format/data/hdf5/README.md): libhdf5 1.10.8 opens these and
  // then reads past its buffers (SIGSEGV in h5dump and h5py too) or loops.
  const std::string dir = std::string(DLIO_SOURCE_DIR) + "/tests/format/data/hdf5/";
  auto storage = BoundPosixStorage();
  auto format = Hdf5();
  auto original = format->Open(storage.get(), dir + "original.h5", {});
  REQUIRE(original.ok());
  REQUIRE((*original)->num_samples() == 4);
  for (const auto& [name, message] :
       {std::pair{"flip_chunk_dim.h5",
                  ": /records: chunk [2,16777280] does not fit shape [4,64] (max [4,64])"},
        std::pair{"flip_element_size.h5", ": /records: integer elements of 4097 bytes"},
        std::pair{"flip_rank.h5", ": /records: chunks of rank 2 in a dataset of rank 0"}}) {
    const std::string path = dir + name;
    auto r = format->Open(storage.get(), path, {});
    INFO(r.status().ToString());
    REQUIRE(r.status().code() == StatusCode::kCorruption);
    CHECK(r.status().message() == path + message);
  }
}

TEST_CASE("hdf5 cuts a link name that runs past its local heap", "[format][hdf5][heap]") {
  // libhdf5 1.10.8 copies a name out of the root group's local heap up to its NUL, past the heap
  // when the name has none (a heap over-read the fuzz stage found). original.h5's heap: 88 bytes,
  // "" at 0, "records" at 8, "labels" at 16, a free block from 24. Without its free list, "labels"
  // runs to the end of the heap unterminated; the driver ends the heap with a NUL, so the name is
  // the 71 bytes inside it.
  TempDir tmp;
  const std::string path = tmp / "heap.h5";
  std::filesystem::copy_file(std::string(DLIO_SOURCE_DIR) + "/tests/format/data/hdf5/original.h5",
                             path);
  const std::string bytes = ReadTextFile(path);
  const size_t heap = bytes.find("HEAP");
  REQUIRE(heap != std::string::npos);
  REQUIRE(bytes.substr(heap + 8, 8) == Le64(88));
  const uint64_t segment =
      format_internal::Le64(reinterpret_cast<const uint8_t*>(bytes.data()) + heap + 24);
  REQUIRE(bytes.substr(segment + 16, 7) == std::string("labels\0", 7));
  PatchBytes(path, static_cast<long>(heap + 16), Le64(1));  // no free list
  PatchBytes(path, static_cast<long>(segment + 16), std::string(72, 'L'));

  auto storage = BoundPosixStorage();
  auto r = Hdf5()->Open(storage.get(), path, {});
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  SampleBuffer buf;
  CHECK((*r)->ReadSample(3, &buf).ok());
  const std::string json = (*r)->DescribeJson();
  INFO(json);
  CHECK(Has(json, "{\"name\":\"/records\""));
  CHECK(Has(json, "{\"name\":\"/" + std::string(71, 'L') + "\""));
  CHECK_FALSE(Has(json, std::string(72, 'L')));
}

TEST_CASE("hdf5 refuses a local heap that claims more than the file", "[format][hdf5][heap]") {
  // libhdf5 1.10.8 allocates the size a heap's header claims before it reads it (terabytes
  // from one flipped byte, fatal under AddressSanitizer).
  TempDir tmp;
  const std::string path = tmp / "heap.h5";
  std::filesystem::copy_file(std::string(DLIO_SOURCE_DIR) + "/tests/format/data/hdf5/original.h5",
                             path);
  const size_t heap = ReadTextFile(path).find("HEAP");
  REQUIRE(heap != std::string::npos);
  PatchBytes(path, static_cast<long>(heap + 8), Le64(uint64_t{1} << 45));
  auto storage = BoundPosixStorage();
  auto r = Hdf5()->Open(storage.get(), path, {});
  REQUIRE(r.status().code() == StatusCode::kCorruption);
  INFO(r.status().message());
  CHECK(Has(r.status().message(), path + ": the root group cannot be listed: "));
  CHECK(Has(r.status().message(), StrCat(path, ": the local heap at file offset ", heap,
                                         " claims 35184372088832 bytes at "
                                         "file offset 712, past the allocated end of the file (")));
}

TEST_CASE("hdf5 refuses a group whose symbol table points past the file", "[format][hdf5][heap]") {
  // The root group's symbol table message (object header at 96): B-tree at 136, name heap at
  // 680. libhdf5 1.10.8 protects a heap at an undefined address by copying from a null pointer.
  TempDir tmp;
  const std::string path = tmp / "stab.h5";
  std::filesystem::copy_file(std::string(DLIO_SOURCE_DIR) + "/tests/format/data/hdf5/original.h5",
                             path);
  const std::string message("\x11\x00\x10\x00\x00\x00\x00\x00", 8);
  Replace(path, message + Le64(136) + Le64(680), message + Le64(136) + Le64(~uint64_t{0}));
  auto storage = BoundPosixStorage();
  auto r = Hdf5()->Open(storage.get(), path, {});
  REQUIRE(r.status().code() == StatusCode::kCorruption);
  INFO(r.status().message());
  CHECK(Has(r.status().message(),
            path + ": the object header at file offset 96 gives its group's B-tree at file "
                   "offset 136 and name heap at 18446744073709551615, past the allocated end of "
                   "the file ("));
}

TEST_CASE("hdf5 metadata guard joins a first chunk read in two, and only then",
          "[format][hdf5][heap]") {
  // libhdf5 reads a version 1 object header 512 bytes at a time, then the rest of a longer first
  // chunk at the end of that read: the rest is messages, not a header of its own.
  using format_internal::hdf5::MetadataGuard;
  constexpr uint64_t kHeader = 800, kEoa = 100'000;
  auto message = [](uint16_t type, const std::string& data) {
    std::string m(8, '\0');
    m[0] = static_cast<char>(type & 0xff);
    m[1] = static_cast<char>(type >> 8);
    m[2] = static_cast<char>(data.size() & 0xff);
    m[3] = static_cast<char>(data.size() >> 8);
    return m + data;
  };
  // A null message filling the first read, then a symbol table message in the rest.
  auto chunk_with_stab = [&](uint64_t heap) {
    return message(0, std::string(512 - 16 - 8 + 8, '\0')) + message(0x11, Le64(136) + Le64(heap));
  };
  auto header = [](const std::string& chunk) {
    std::string h("\x01\x00\x01\x00\x01\x00\x00\x00", 8);
    return h + Le64(chunk.size()).substr(0, 4) + std::string(4, '\0') + chunk;
  };
  auto read = [](MetadataGuard* g, uint64_t addr, std::string bytes) {
    return g->OnRead(MetadataGuard::Kind::kObjectHeader, addr,
                     reinterpret_cast<uint8_t*>(bytes.data()), bytes.size(), kEoa, "f.h5");
  };
  {
    const std::string file = header(chunk_with_stab(~uint64_t{0}));
    MetadataGuard g;
    CHECK(read(&g, kHeader, file.substr(0, 512)).ok());
    const Status s = read(&g, kHeader + 512, file.substr(512));
    CHECK(s.code() == StatusCode::kCorruption);
    CHECK_THAT(s.message(), Catch::Contains("f.h5: the object header at file offset 800 gives "));
  }
  {
    // A rest that starts like a header prefix (01 00) whose "first chunk" would not fit the file.
    std::string chunk = chunk_with_stab(680);
    chunk.replace(
        512 - 16, 16,
        std::string("\x01\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff\x7f", 12) + std::string(4, '\0'));
    const std::string file = header(chunk);
    MetadataGuard g;
    CHECK(read(&g, kHeader, file.substr(0, 512)).ok());
    CHECK(read(&g, kHeader + 512, file.substr(512)).ok());
    // Read as one header instead, its claimed first chunk is refused.
    MetadataGuard alone;
    const Status s = read(&alone, kHeader + 512, file.substr(512));
    CHECK(s.code() == StatusCode::kCorruption);
    CHECK_THAT(s.message(), Catch::Contains("claims a first chunk of 2147483647 bytes"));
  }
  {
    // A first chunk whose rest libhdf5 never read (another header was read next): the pending
    // bytes are dropped, and a later read at that address is a header of its own.
    const std::string file = header(chunk_with_stab(~uint64_t{0}));
    MetadataGuard g;
    CHECK(read(&g, kHeader, file.substr(0, 512)).ok());
    CHECK(read(&g, 5000, header(message(0, std::string(8, '\0')))).ok());
    CHECK(read(&g, kHeader + 512, file.substr(512)).ok());  // joined, this would be refused
  }
}

}  // namespace
}  // namespace dlio::testing
