#include "dlio/side_io.h"

#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "dlio/registries.h"
#include "dlio/storage.h"
#include "dlio/tracer.h"

namespace dlio {
namespace {

struct Fixture {
  Registries registries;
  MemoryTracer tracer;
  std::unique_ptr<Storage> storage = NewMemoryStorage();
  Fixture() {
    REQUIRE(RegisterBuiltins(&registries).ok());
    storage->Bind(SystemClock(), &tracer);
  }
  // The side-file reads traced so far: (offset, count) in order.
  std::vector<std::pair<int64_t, int64_t>> Reads(const std::string& path) {
    std::vector<std::pair<int64_t, int64_t>> out;
    for (const auto& e : tracer.Events()) {
      if (std::string(e.name) == "pread" && tracer.FileName(e.file_id) == path) {
        out.emplace_back(e.offset, e.count);
      }
    }
    return out;
  }
  // (offset, count, ret) of the side-file reads, and how many times it was opened.
  std::vector<std::vector<int64_t>> Requests(const std::string& path, int* opens) {
    std::vector<std::vector<int64_t>> out;
    *opens = 0;
    for (const auto& e : tracer.Events()) {
      if (tracer.FileName(e.file_id) != path) continue;
      if (std::string(e.name) == "pread") out.push_back({e.offset, e.count, e.ret});
      *opens += std::string(e.name) == "open64";
    }
    return out;
  }
};

SideIoOptions ReadOptions(SideIoSchedule schedule, uint64_t reads) {
  SideIoOptions o;
  o.read_file = "data/side.bin";
  o.read_file_size = 4096;
  o.read_size = 500;
  o.reads = reads;
  o.schedule = schedule;
  o.seed = 7;
  return o;
}

TEST_CASE("side I/O: per_step reads before every step, random offsets inside the file") {
  Fixture f;
  const SideIoOptions o = ReadOptions(SideIoSchedule::kPerStep, 3);
  REQUIRE(GenerateSideFile(o, f.registries, f.storage.get()).ok());
  CHECK(*f.storage->FileSize("data/side.bin") == 4096);
  CHECK(*f.storage->List("data") == std::vector<std::string>{"side.bin"});  // no temporary
  REQUIRE(GenerateSideFile(o, f.registries, f.storage.get()).ok());         // present: kept
  auto side = SideIo::Make(o, f.storage.get());
  REQUIRE(side.ok());
  REQUIRE((*side)->BeforeTraining().ok());
  CHECK((*side)->reads_done() == 0);
  for (uint64_t step = 0; step < 5; ++step) REQUIRE((*side)->BeforeStep(step).ok());
  CHECK((*side)->reads_done() == 15);
  CHECK((*side)->bytes_read() == 15 * 500);
  const auto reads = f.Reads("data/side.bin");
  REQUIRE(reads.size() == 15);
  std::set<int64_t> offsets;
  for (const auto& [offset, count] : reads) {
    CHECK(count == 500);
    CHECK(offset >= 0);
    CHECK(offset + count <= 4096);
    offsets.insert(offset);
  }
  CHECK(offsets.size() > 10);
  REQUIRE((*side)->AfterTraining().ok());  // closes; nothing to write
}

TEST_CASE(
    "side I/O: spread draws `reads` reads over the run's steps, before_training reads first") {
  Fixture f;
  SideIoOptions o = ReadOptions(SideIoSchedule::kSpread, 50);
  REQUIRE(GenerateSideFile(o, f.registries, f.storage.get()).ok());
  auto side = std::move(SideIo::Make(o, f.storage.get())).value();
  REQUIRE(side->BeforeTraining().ok());
  side->SetRunSteps(100);
  side->SetRunSteps(7);  // ignored: the steps were drawn
  std::map<uint64_t, uint64_t> per_step;
  for (uint64_t step = 0; step < 100; ++step) {
    const uint64_t before = side->reads_done();
    REQUIRE(side->BeforeStep(step).ok());
    if (side->reads_done() > before) per_step[step] = side->reads_done() - before;
  }
  CHECK(side->reads_done() == 50);
  CHECK(per_step.size() > 20);  // spread, not bunched

  Fixture g;
  o = ReadOptions(SideIoSchedule::kBeforeTraining, 4);
  o.access = SideIoAccess::kSequential;
  REQUIRE(GenerateSideFile(o, g.registries, g.storage.get()).ok());
  auto early = std::move(SideIo::Make(o, g.storage.get())).value();
  REQUIRE(early->BeforeTraining().ok());
  CHECK(early->reads_done() == 4);
  REQUIRE(early->BeforeStep(0).ok());
  CHECK(early->reads_done() == 4);
  // Sequential: consecutive offsets, wrapping before the end (4096 / 500 = 8 whole reads).
  const auto reads = g.Reads("data/side.bin");
  REQUIRE(reads.size() == 4);
  for (size_t i = 0; i < reads.size(); ++i) CHECK(reads[i].first == static_cast<int64_t>(500 * i));
}

TEST_CASE("side I/O: whole-file passes make the requests of Python's buffered reader") {
  using Requests = std::vector<std::vector<int64_t>>;
  Fixture f;
  SideIoOptions o = ReadOptions(SideIoSchedule::kBeforeTraining, 2);
  o.access = SideIoAccess::kWhole;
  o.read_file_size = 5000;
  o.read_size = 5001;  // f.read(): the file's size + 1, then 1 more, which gets nothing
  REQUIRE(GenerateSideFile(o, f.registries, f.storage.get()).ok());
  auto side = std::move(SideIo::Make(o, f.storage.get())).value();
  REQUIRE(side->BeforeTraining().ok());
  int opens = 0;
  const Requests twice = {{0, 5001, 5000}, {5000, 1, 0}, {0, 5001, 5000}, {5000, 1, 0}};
  CHECK(f.Requests("data/side.bin", &opens) == twice);
  CHECK(opens == 2);  // opened (and closed) per pass
  CHECK(side->reads_done() == 4);
  CHECK(side->bytes_read() == 10000);
  REQUIRE(side->BeforeStep(0).ok());
  CHECK(side->reads_done() == 4);
  REQUIRE(side->AfterTraining().ok());

  // pandas' parser: chunks of 2048 filled by asking for the rest, then 1 more request at the end.
  Fixture g;
  o = ReadOptions(SideIoSchedule::kPerStep, 1);
  o.access = SideIoAccess::kWhole;
  o.read_file_size = 5000;
  o.read_size = 2048;
  o.end_reads = 1;
  REQUIRE(GenerateSideFile(o, g.registries, g.storage.get()).ok());
  auto pandas = std::move(SideIo::Make(o, g.storage.get())).value();
  REQUIRE(pandas->BeforeTraining().ok());
  CHECK(pandas->reads_done() == 0);
  REQUIRE(pandas->BeforeStep(0).ok());
  const Requests pass = {
      {0, 2048, 2048}, {2048, 2048, 2048}, {4096, 2048, 904}, {5000, 1144, 0}, {5000, 2048, 0}};
  CHECK(g.Requests("data/side.bin", &opens) == pass);
  CHECK(opens == 1);

  // A missing file is found by the first pass, named; end_reads without whole is refused.
  o.read_file = "data/missing.json";
  auto missing = std::move(SideIo::Make(o, g.storage.get())).value();
  REQUIRE(missing->BeforeTraining().ok());
  const Status status = missing->BeforeStep(0);
  CHECK(status.code() == StatusCode::kNotFound);
  CHECK(status.message().find("data/missing.json") != std::string::npos);
  o.access = SideIoAccess::kSequential;
  const auto refused = SideIo::Make(o, g.storage.get());
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().find("side_io.end_reads") != std::string::npos);
}

TEST_CASE("side I/O: the side file in a format, a missing file is an error naming it") {
  Fixture f;
  SideIoOptions o = ReadOptions(SideIoSchedule::kPerStep, 1);
  o.read_file_format = "npy";
  REQUIRE(GenerateSideFile(o, f.registries, f.storage.get()).ok());
  auto npy = f.storage->Open("data/side.bin", OpenMode::kRead);
  REQUIRE(npy.ok());
  uint8_t magic[6];
  REQUIRE((*npy)->ReadExactAt(0, 6, magic).ok());
  CHECK(std::string(reinterpret_cast<char*>(magic) + 1, 5) == "NUMPY");
  CHECK(*(*npy)->Size() > 4096);  // one 4096-byte sample plus the header

  o.read_file_format = "no_such_format";
  o.read_file = "data/other.bin";
  Status bad = GenerateSideFile(o, f.registries, f.storage.get());
  CHECK(bad.message().find("side_io.read_file_format") != std::string::npos);
  CHECK(*f.storage->List("data") == std::vector<std::string>{"side.bin"});

  o.read_file = "data/missing.bin";
  auto side = std::move(SideIo::Make(o, f.storage.get())).value();
  Status missing = side->BeforeTraining();
  CHECK(missing.code() == StatusCode::kNotFound);
  CHECK(missing.message().find("data/missing.bin") != std::string::npos);
  CHECK(missing.message().find("side_io.read_file") != std::string::npos);
}

TEST_CASE("side I/O: the end-of-run write is exact, in requests, valid JSON for .json") {
  Fixture f;
  SideIoOptions o;
  o.write_file = "out/model-0.json";
  o.write_bytes = 100000;
  o.write_request_size = 32768;
  auto side = std::move(SideIo::Make(o, f.storage.get())).value();
  REQUIRE(side->BeforeTraining().ok());
  REQUIRE(side->AfterTraining().ok());
  CHECK(side->bytes_written() == 100000);
  auto file = f.storage->Open("out/model-0.json", OpenMode::kRead);
  REQUIRE(file.ok());
  std::string text(100000, '\0');
  REQUIRE((*file)->ReadExactAt(0, text.size(), text.data()).ok());
  CHECK_NOTHROW(nlohmann::json::parse(text));
  int writes = 0;
  for (const auto& e : f.tracer.Events()) {
    if (std::string(e.name) == "pwrite") {
      ++writes;
      CHECK(e.count <= 32768);
    }
  }
  CHECK(writes == 4);  // 3 x 32768 + 1696
  // A second run replaces its own output.
  REQUIRE(side->AfterTraining().ok());
  CHECK(*f.storage->FileSize("out/model-0.json") == 100000);
  CHECK(*f.storage->List("out") == std::vector<std::string>{"model-0.json"});
}

TEST_CASE("SideIoOptionsFor resolves paths and {rank}") {
  WorkloadConfig c;
  c.dataset.data_folder = "/d";
  c.output.folder = "/o";
  c.side_io.read_file = "shots.txt";
  c.side_io.write_bytes = 1;
  c.side_io.write_file = "model-{rank}.json";
  auto o = SideIoOptionsFor(c, 3);
  REQUIRE(o.ok());
  CHECK(o->read_file == "/d/shots.txt");
  CHECK(o->write_file == "/o/model-3.json");
  CHECK(o->seed != SideIoOptionsFor(c, 2)->seed);            // per-rank offsets
  CHECK(o->file_seed == SideIoOptionsFor(c, 2)->file_seed);  // one side file
  c.side_io.read_file = "/abs/shots.txt";
  CHECK(SideIoOptionsFor(c, 0)->read_file == "/abs/shots.txt");
  c.side_io.access = SideIoAccess::kSequential;
  CHECK(SideIoOptionsFor(c, 0)->access == SideIoAccess::kSequential);
  c.side_io.access = SideIoAccess::kWhole;
  c.side_io.end_reads = 2;
  CHECK(SideIoOptionsFor(c, 0)->end_reads == 2);
}

}  // namespace
}  // namespace dlio
