// torch.load's requests (io_models/pyio/torch_stream_reader.h) on a layout whose requests were
// worked out by hand from CPython's BufferedReader and miniz; the layout dlio computes for its
// torch.save files (TorchSaveLayout) against the bytes it writes; and the torch_save
// checkpointer's read-back, which loads with those requests and checks the tensors' bytes.
// Against the real torch.load under strace: tests/io_models/torch_load_strace_test.cc.
#include <sys/resource.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/file_checkpointer.h"
#include "checkpoint/torch_save_options.h"
#include "dlio/checkpointer.h"
#include "dlio/clock.h"
#include "dlio/storage.h"
#include "format/torch/torch_save_file.h"
#include "io_models/pyio/buffered_reader.h"
#include "io_models/pyio/torch_stream_reader.h"
#include "test_util.h"

namespace dlio {
namespace {

// The block size Python's open() would see for `path` (through an open, as the models take it).
uint64_t BlockSizeOf(Storage* storage, const std::string& path) {
  auto file = storage->Open(path, OpenMode::kRead);
  REQUIRE(file.ok());
  return pyio::HostBlockSize(storage, **file);
}

using Requests = std::vector<std::pair<uint64_t, uint64_t>>;
using Record = pyio::TorchZipRecord;

// A layout with torch.save's end records: the zip64 end record, its locator, the end record.
pyio::TorchZipLayout Layout(uint64_t file_size, Record pickle, std::vector<Record> storages,
                            Record version, uint64_t central_directory) {
  pyio::TorchZipLayout z;
  z.file_size = file_size;
  z.pickle = pickle;
  z.storages = std::move(storages);
  z.version = version;
  z.end_record = file_size - 22;
  z.zip64_end_record = z.end_record - 20 - 56;
  z.central_directory = central_directory;
  z.central_directory_size = z.zip64_end_record - central_directory;
  return z;
}

TEST_CASE("torch.load requests: a hand-worked layout, 4 KiB Python buffer") {
  // The central directory (13700, 6202 bytes) is more than a buffer.
  const auto z =
      Layout(20000, {0, 64, 200}, {{300, 384, 3000}, {3400, 3456, 10000}, {13500, 13568, 0}},
             {13600, 13664, 2}, 13700);
  auto got = pyio::TorchLoadRequests(z, 4096);
  INFO(got.status().ToString());
  REQUIRE(got.ok());
  const Requests want = {
      {0, 4096},      // _is_zipfile's read(1): a buffer fill
      {0, 4096},      // seek(0, SEEK_END) dropped the buffer: the "PYTORCH1" check refills it
      {15904, 4096},  // miniz's end record search: the last 4096 bytes
      {19978, 4096},  // the end record (the search consumed the buffer: a raw seek, a fill)
      {19958, 4096},  // the zip64 locator, 20 bytes before it
      {19902, 4096},  // the zip64 end record (76 bytes back: outside what is buffered)
      {13700, 6202},  // the central directory, more than a buffer: one readinto straight
      {13600, 4096},  // getRecord("version"): its header fills the buffer, its data is in it
      {0, 4096},      // data.pkl: the same; storage 0's header and data are in that buffer too
      {4096, 9360},   // storage 1: 640 bytes buffered, the rest in one read; storage 2 is empty
  };
  CHECK(*got == want);

  // An 8 KiB buffer (st_blksize 8192): fewer, larger fills.
  auto eight = pyio::TorchLoadRequests(z, 8192);
  REQUIRE(eight.ok());
  // The central directory now fits a buffer; what it leaves buffered starts 100 bytes after
  // version's header, so that is one more fill; storage 1 ends within one fill of the buffer.
  const Requests want8 = {{0, 8192},     {0, 8192},     {15904, 8192}, {19978, 8192}, {19958, 8192},
                          {19902, 8192}, {13700, 8192}, {13600, 8192}, {0, 8192},     {8192, 8192}};
  CHECK(*eight == want8);
}

TEST_CASE("torch.load requests: a file under 4 KiB is searched from offset 0") {
  const auto z = Layout(738, {0, 64, 165}, {{245, 320, 12}}, {348, 448, 2}, 466);
  auto got = pyio::TorchLoadRequests(z, 4096);
  REQUIRE(got.ok());
  // torch.load of torch.save({'w': torch.zeros(3)}) as strace shows it (tiny.pt, 738 bytes):
  // the search reads what the magic check buffered, then every record is a seek outside it.
  const Requests want = {{0, 4096},   {0, 4096},   {716, 4096}, {696, 4096},
                         {640, 4096}, {466, 4096}, {348, 4096}, {0, 4096}};
  CHECK(*got == want);
}

torch_save::TorchStateDict Parse(const std::string& tensors) {
  auto sd = torch_save::ParseTorchStateDict(tensors, "");
  INFO(sd.status().ToString());
  REQUIRE(sd.ok());
  return std::move(sd).value();
}

uint32_t Le32(const std::string& s, uint64_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(s[at + i]);
  return v;
}

TEST_CASE("TorchSaveLayout: where the file dlio writes puts its records") {
  testing::TempDir tmp;
  const auto sd = Parse("a:3, b:40x40, c:, d:5:fp16, e:1, f:2, g:3, h:4, i:5, j:6, k:7, l:8");
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), nullptr);
  const std::string path = tmp / "m.pt";
  {
    auto f = storage->Open(path, OpenMode::kCreateNew);
    REQUIRE(f.ok());
    REQUIRE(torch_save::WriteTorchSave(f->get(), "m", sd, [](uint64_t o, size_t n, char* d) {
              for (size_t k = 0; k < n; ++k) d[k] = static_cast<char>((o + k) * 13);
            }).ok());
    REQUIRE((*f)->Close().ok());
  }
  const std::string bytes = testing::ReadTextFile(path);
  const pyio::TorchZipLayout z = torch_save::TorchSaveLayout("m", sd);
  REQUIRE(z.file_size == bytes.size());
  CHECK(bytes.compare(z.end_record, 4, "PK\x05\x06") == 0);
  CHECK(bytes.compare(z.end_record - 20, 4, "PK\x06\x07") == 0);
  CHECK(bytes.compare(z.zip64_end_record, 4, "PK\x06\x06") == 0);
  CHECK(Le32(bytes, z.end_record + 12) == z.central_directory_size);
  CHECK(Le32(bytes, z.end_record + 16) == z.central_directory);
  CHECK(bytes.compare(z.pickle.data_offset, 2, "\x80\x02") == 0);  // pickle protocol 2
  CHECK(bytes.compare(z.version.data_offset, 2, "3\n") == 0);
  REQUIRE(z.storages.size() == sd.tensors.size());
  for (size_t key = 0; key < z.storages.size(); ++key) {
    const pyio::TorchZipRecord& r = z.storages[key];
    INFO("data/" << key);
    CHECK(bytes.compare(r.header_offset, 4, "PK\x03\x04") == 0);
    const std::string name = "m/data/" + std::to_string(key);
    CHECK(bytes.compare(r.header_offset + 30, name.size(), name) == 0);
    CHECK(r.data_offset % 64 == 0);
    CHECK(r.size == sd.tensors[key].bytes());
    CHECK(static_cast<uint8_t>(bytes[r.data_offset]) == static_cast<uint8_t>(r.data_offset * 13));
  }
  // Records are in file order data/0, data/1, data/10, data/11, data/2, ...: key 10 lies before
  // key 2, while torch.load reads them by key.
  CHECK(z.storages[10].header_offset < z.storages[2].header_offset);
}

TEST_CASE("torch_save checkpointer: read-back makes torch.load's requests and checks the tensors") {
  testing::TempDir tmp;
  MemoryTracer tracer;
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), &tracer);
  CheckpointOptions options;
  options.folder = tmp / "ckpt";
  options.read_back = true;
  options.transfer_size = 1000;  // the tensors' pattern repeats every 1000 bytes
  options.sections.Get<TorchSaveOptions>().state_dict = "w:700x10, b:10, s:";
  auto made =
      checkpoint_internal::MakeTorchSaveCheckpointer(options, {storage.get(), SystemClock()});
  REQUIRE(made.ok());
  auto saved = (*made)->Save(0, 1);
  INFO(saved.status().ToString());
  REQUIRE(saved.ok());
  const std::string path = saved->files.at(0).path;
  Requests reads;
  for (const TraceEvent& e : tracer.Events()) {
    if (std::string(e.name).find("read") != std::string::npos) {
      CHECK(tracer.FileName(e.file_id) == path);
      reads.emplace_back(static_cast<uint64_t>(e.offset), static_cast<uint64_t>(e.count));
    }
  }
  const auto sd = Parse(options.sections.Get<TorchSaveOptions>().state_dict);
  const auto z = torch_save::TorchSaveLayout("model-rank0", sd);
  auto want = pyio::TorchLoadRequests(z, pyio::PythonBufferSize(BlockSizeOf(storage.get(), path)));
  REQUIRE(want.ok());
  CHECK(reads == *want);
  CHECK(reads.size() > 8);  // not transfer_size pieces: 28 KiB would be 29 of them

  // A flipped byte inside tensor w's data: the load names the file and the offset.
  const uint64_t bad = z.storages[0].data_offset + 4321;
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    char c = 0;
    f.seekg(static_cast<std::streamoff>(bad));
    f.get(c);
    f.seekp(static_cast<std::streamoff>(bad));
    f.put(static_cast<char>(c ^ 0x5a));
  }
  auto loaded = (*made)->Load(0);
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.status().ToString().find(path + ": content differs at offset " +
                                        std::to_string(bad)) != std::string::npos);
}

long MinorFaults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// reader.client_costs framework: storages past torch's mmap threshold are read into fresh pages,
// as torch.load's new storages are: the same requests and checks, but the pages fault in within
// the load (a 2 MiB storage is 512 pages of 4 KiB; a warm load reuses one buffer and faults few).
TEST_CASE("torch_save checkpointer: fresh storages fault their pages in, with the same requests") {
  testing::TempDir tmp;
  auto storage = NewPosixStorage({});
  MemoryTracer tracer;
  storage->Bind(SystemClock(), &tracer);
  const auto requests_of = [&](size_t from) {
    Requests reads;
    const auto events = tracer.Events();
    for (size_t k = from; k < events.size(); ++k) {
      if (std::string(events[k].name).find("read") != std::string::npos) {
        reads.emplace_back(static_cast<uint64_t>(events[k].offset),
                           static_cast<uint64_t>(events[k].count));
      }
    }
    return reads;
  };
  CheckpointOptions options;
  options.folder = tmp / "ckpt";
  options.sections.Get<TorchSaveOptions>().state_dict =
      "w:512x1024, b:1024";  // a 2 MiB storage and a 4 KiB one
  auto warm =
      checkpoint_internal::MakeTorchSaveCheckpointer(options, {storage.get(), SystemClock()});
  REQUIRE(warm.ok());
  REQUIRE((*warm)->Save(0, 1).ok());
  REQUIRE((*warm)->Load(0).ok());  // its buffer grows to the storage's size
  size_t mark = tracer.Events().size();
  long before = MinorFaults();
  REQUIRE((*warm)->Load(0).ok());
  const long warm_faults = MinorFaults() - before;
  const Requests warm_reads = requests_of(mark);

  options.framework_client_costs = true;  // fresh pages past PythonImportThreshold(kPytorch)
  auto fresh =
      checkpoint_internal::MakeTorchSaveCheckpointer(options, {storage.get(), SystemClock()});
  REQUIRE(fresh.ok());
  REQUIRE((*fresh)->Load(0).ok());  // the read buffer for headers and small records, warmed
  mark = tracer.Events().size();
  before = MinorFaults();
  auto loaded = (*fresh)->Load(0);
  const long fresh_faults = MinorFaults() - before;
  INFO(loaded.status().ToString());
  REQUIRE(loaded.ok());
  CHECK(requests_of(mark) == warm_reads);
  INFO("warm " << warm_faults << " fresh " << fresh_faults);
  CHECK(fresh_faults >= warm_faults + 256);
}

}  // namespace
}  // namespace dlio
