// reader.io_model numpy held against numpy itself: Debian's python3 runs np.load(path)['x'] (npz)
// or np.load(path) (npy) under libdlio_preload.so, and dlio's npz/npy readers open the same files
// and read samples of them under a MemoryTracer. The requests must be equal row by row, the open
// of each file included: opens and reads, offsets and sizes, in order. The read(2) calls dlio
// makes are counted too (/proc/thread-self/io), so a raw read that returns short at the end of a
// file costs one call, as Python's. numpy_strace_test.cc holds the same loads under strace.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "dlio/clock.h"
#include "dlio/format.h"
#include "dlio/storage.h"
#include "numpy_test_util.h"

namespace dlio::numpy_test {
namespace {

using io_model_test::kOpensReadsSeeks;
using io_model_test::ToString;
using io_model_test::TracePythonProgram;

TEST_CASE("numpy model: dlio's npz reads are np.load's, request for request") {
  if (!io_model_test::PythonHas("numpy")) return;
  TempDir tmp;
  const Files f = MakeFiles(tmp);
  const ProfileTrace real = TracePythonProgram(LoadArgs(tmp, f), f.data, tmp / "prof");
  const std::vector<Request> python = RequestsOf(real, f.data, kOpensReadsSeeks);
  for (const std::string& name : f.names) {
    if (!IsNpz(name)) continue;
    const std::vector<Request> want = OfFile(python, name);
    int64_t calls = 0;
    const std::vector<Request> got =
        DlioSampleRequests(f.data, name, IoModel::kNumpy, kOpensReadsSeeks, &calls);
    INFO(name << "\nnp.load:\n" << ToString(want) << "dlio:\n" << ToString(got));
    CHECK(want.size() > 6);
    CHECK(got == want);  // the open included: it is the first np.load
    // One read(2) per row, as Python's FileIO: no second pread after a read that ends short.
    if (calls >= 0) CHECK(calls == static_cast<int64_t>(ReadRows(want)));
    // auto picks numpy for npz; native reads differently.
    CHECK(DlioSampleRequests(f.data, name, IoModel::kAuto, kOpensReadsSeeks) == want);
    CHECK_FALSE(DlioSampleRequests(f.data, name, IoModel::kNative, kOpensReadsSeeks) == want);
  }
}

TEST_CASE("numpy model: dlio's npy reads are np.load's (Python's buffer, then fromfile's fread)") {
  if (!io_model_test::PythonHas("numpy")) return;
  TempDir tmp;
  const Files f = MakeFiles(tmp);
  const ProfileTrace real = TracePythonProgram(LoadArgs(tmp, f), f.data, tmp / "prof");
  const std::vector<Request> python = RequestsOf(real, f.data, kOpensAndReads);
  for (const std::string& name : f.names) {
    if (name.compare(name.size() - 4, 4, ".npy") != 0) continue;
    // The interposer sees Python's read(2) calls, then numpy.fromfile's one fread of the data
    // (its fseeko64 calls too: the kernel's lseeks are compared in the strace test below).
    const std::vector<Request> want = OfFile(python, name);
    const std::vector<Request> got =
        DlioSampleRequests(f.data, name, IoModel::kNumpy, kOpensAndReads);
    INFO(name << "\nnp.load:\n" << ToString(want) << "dlio:\n" << ToString(got));
    REQUIRE(want.size() >= 3);
    REQUIRE(got.size() >= want.size());
    CHECK(std::equal(want.begin(), want.end() - 1, got.begin()));
    // dlio issues the read(2) calls glibc makes for that fread: from the block holding its first
    // byte to (at least) its last.
    const Request& fread = want.back();
    const int64_t block = 4096;
    int64_t at = fread.offset / block * block;
    size_t i = want.size() - 1;
    if (fread.offset != at) {  // fseek reads exactly up to the data, fseek(0, SEEK_CUR) again
      CHECK(got[i] == Request{name, OpKind::kRead, at, fread.offset - at});
      ++i;
    }
    for (; i < got.size(); ++i) {
      CHECK(got[i].offset == at);
      at += got[i].size;
    }
    CHECK(at >= fread.offset + fread.size);
  }
}

TEST_CASE("numpy model: a file opened and read per sample costs np.load per sample, no more") {
  if (!io_model_test::PythonHas("numpy")) return;
  TempDir tmp;
  const Files f = MakeFiles(tmp);
  const std::string script = tmp / "sequence.py";
  testing::WriteTextFile(script, kSequenceScript);
  std::string args = "'" + script + "' 2";
  for (const std::string& n : f.names) args += " '" + f.data + "/" + n + "'";
  const ProfileTrace real = TracePythonProgram(args, f.data, tmp / "prof");
  const std::vector<Request> python = RequestsOf(real, f.data, kOpensReadsSeeks);
  for (const std::string& name : f.names) {
    const std::vector<Request> want = OfFile(python, name);
    int64_t calls = 0;
    const std::vector<Request> got =
        DlioFileRequests(f.data, name, IoModel::kNumpy, kOpensReadsSeeks, 2, false, &calls);
    INFO(name << "\n2 x np.load:\n"
              << ToString(want) << "dlio (open, samples 0 and 1):\n"
              << ToString(got));
    REQUIRE(std::count_if(want.begin(), want.end(),
                          [](const Request& r) { return r.kind == OpKind::kOpen; }) == 2);
    if (IsNpz(name)) {
      CHECK(got == want);
      if (calls >= 0) CHECK(calls == static_cast<int64_t>(ReadRows(want)));
      // The fstats too: FileIO's at each open, and FileIO.readall's under zipfile's end record.
      const KindFilter with_stats{{OpKind::kOpen, OpKind::kRead, OpKind::kSeek, OpKind::kStat}};
      const std::vector<Request> want_stats = OfFile(RequestsOf(real, f.data, with_stats), name);
      const std::vector<Request> got_stats =
          DlioFileRequests(f.data, name, IoModel::kNumpy, with_stats, 2, false);
      INFO("with fstats, np.load:\n" << ToString(want_stats) << "dlio:\n" << ToString(got_stats));
      CHECK(got_stats == want_stats);
      CHECK(std::count_if(want_stats.begin(), want_stats.end(),
                          [](const Request& r) { return r.kind == OpKind::kStat; }) == 4);
    } else {  // the interposer sees fromfile's fread as one row (see the npy case above): the
              // opens and np.load's magic reads must still match, one per load
      auto loads = [](const std::vector<Request>& rows) {
        std::vector<Request> out;
        for (size_t i = 0; i < rows.size(); ++i) {
          if (rows[i].kind == OpKind::kOpen) out.push_back(rows[i]);
          if (i > 0 && rows[i - 1].kind == OpKind::kOpen) out.push_back(rows[i]);
        }
        return out;
      };
      CHECK(loads(got) == loads(want));
    }
  }
}

TEST_CASE("numpy model: with keep_arrays, opening and reading every sample is one np.load") {
  if (!io_model_test::PythonHas("numpy")) return;
  TempDir tmp;
  const Files f = MakeFiles(tmp);
  const ProfileTrace real = TracePythonProgram(LoadArgs(tmp, f), f.data, tmp / "prof");
  const std::vector<Request> python = RequestsOf(real, f.data, kOpensReadsSeeks);
  for (const std::string& name : f.names) {
    if (!IsNpz(name)) continue;
    const std::vector<Request> want = OfFile(python, name);
    MemoryTracer probe;
    auto storage = testing::BoundPosixStorage(&probe);
    FormatOptions options;
    auto reader =
        testing::MakeFormatByName("npz")->Open(storage.get(), f.data + "/" + name, options);
    REQUIRE(reader.ok());
    const uint64_t n = std::min<uint64_t>((*reader)->num_samples(), 3);
    const std::vector<Request> got =
        DlioFileRequests(f.data, name, IoModel::kNumpy, kOpensReadsSeeks, n, /*keep=*/true);
    INFO(name << "\nnp.load:\n" << ToString(want) << "dlio:\n" << ToString(got));
    CHECK(got == want);
  }
}

TEST_CASE("numpy model: client_costs none issues framework's requests, for the same bytes") {
  // reader.client_costs none reads into reused buffers with no bytes objects, copies or CRC;
  // what reaches the storage must not change: opens, reads, offsets and sizes, in order, and
  // the read(2) calls they cost, for stored and deflated members, npy files, one sample or
  // every sample of a file, with and without keep_arrays.
  if (!io_model_test::PythonHas("numpy")) return;
  TempDir tmp;
  const Files f = MakeFiles(tmp);
  const KindFilter all{{OpKind::kOpen, OpKind::kRead, OpKind::kClose, OpKind::kStat}};
  for (const std::string& name : f.names) {
    for (const bool keep : {false, true}) {
      for (const uint64_t samples : {uint64_t{1}, uint64_t{3}}) {
        int64_t none_calls = 0, framework_calls = 0;
        std::vector<uint8_t> none_bytes, framework_bytes;
        const std::vector<Request> none =
            DlioFileRequests(f.data, name, IoModel::kNumpy, all, samples, keep, &none_calls,
                             /*framework=*/false, &none_bytes);
        const std::vector<Request> framework =
            DlioFileRequests(f.data, name, IoModel::kNumpy, all, samples, keep, &framework_calls,
                             /*framework=*/true, &framework_bytes);
        INFO(name << " keep " << keep << " samples " << samples << "\nframework:\n"
                  << ToString(framework) << "none:\n"
                  << ToString(none));
        CHECK(framework.size() > 3);
        CHECK(none == framework);
        CHECK(none_calls == framework_calls);
        CHECK(none_bytes == framework_bytes);
      }
    }
  }
}

TEST_CASE("numpy model: inspect still describes the file, and errors name it") {
  TempDir tmp;
  auto storage = testing::BoundPosixStorage();
  FileSpec spec;
  spec.sample_sizes.assign(3, 1000);
  FormatOptions options;
  const std::string path = tmp / "a.npz";
  REQUIRE(testing::MakeFormatByName("npz")->Write(storage.get(), path, spec, options).ok());
  auto reader = testing::MakeFormatByName("npz")->Open(storage.get(), path, options);
  REQUIRE(reader.ok());
  CHECK((*reader)->num_samples() == 3);
  const std::string json = (*reader)->DescribeJson();
  CHECK(json.find("\"sample_member\":\"x.npy\"") != std::string::npos);
  testing::WriteTextFile(tmp / "bad.npz", "PK\x03\x04 not really a zip");
  auto bad = testing::MakeFormatByName("npz")->Open(storage.get(), tmp / "bad.npz", options);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find(tmp / "bad.npz") != std::string::npos);
  // A header that claims a terabyte over a short file: Corruption naming it, nothing allocated.
  std::string dict = "{'descr': '|u1', 'fortran_order': False, 'shape': (1099511627776,), }";
  while ((10 + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::string npy = std::string("\x93NUMPY\x01\x00", 8);
  npy += static_cast<char>(dict.size() & 0xff);
  npy += static_cast<char>(dict.size() >> 8);
  npy += dict + "some data";
  testing::WriteTextFile(tmp / "huge.npy", npy);
  auto huge = testing::MakeFormatByName("npy")->Open(storage.get(), tmp / "huge.npy", options);
  REQUIRE_FALSE(huge.ok());
  CHECK(huge.status().code() == StatusCode::kCorruption);
  CHECK(huge.status().message().find(tmp / "huge.npy") != std::string::npos);
}

TEST_CASE("numpy model: a sample buffer that keeps np.load's array holds it until the next load") {
  // A loop that drops the array once it has the sample frees it at once (the default); code that
  // keeps it (`x = np.load(path)['x']` until x is rebound, a DataLoader worker until the collate,
  // which takes them with TakeHeld) frees it later: where they are freed decides whether the
  // next large read lands in fresh pages.
  if (!io_model_test::PythonHas("numpy")) return;
  TempDir tmp;
  const Files f = MakeFiles(tmp);
  const auto npz = std::find_if(f.names.begin(), f.names.end(), IsNpz);
  REQUIRE(npz != f.names.end());
  auto storage = NewPosixStorage({});
  FormatOptions options;
  options.io_model = IoModel::kNumpy;
  options.framework_client_costs = true;  // without it no array is held: it is reused
  auto reader = testing::MakeFormatByName("npz")->Open(storage.get(), f.data + "/" + *npz, options);
  REQUIRE(reader.ok());
  SampleBuffer dropped;  // by default the array is freed once the sample is out of it
  REQUIRE((*reader)->ReadSample(0, &dropped).ok());
  CHECK(dropped.TakeHeld() == nullptr);
  SampleBuffer out;
  out.KeepHeld(true);
  REQUIRE((*reader)->ReadSample(0, &out).ok());
  std::shared_ptr<const void> first = out.TakeHeld();
  REQUIRE(first != nullptr);
  CHECK(out.TakeHeld() == nullptr);
  const std::weak_ptr<const void> watched = first;
  out.Hold(std::move(first));
  REQUIRE((*reader)->ReadSample(0, &out).ok());  // a new np.load
  CHECK(watched.expired());
  CHECK(out.TakeHeld() != nullptr);
}

}  // namespace
}  // namespace dlio::numpy_test
