// The eight scientific workloads of the DLIO paper, each run scaled down through dlio-run with
// --trace, checked by the signature the paper describes: request sizes, sequential or random
// order, files per rank, whether reads wait for compute (sync) or overlap it, and the side I/O.
// A workload whose format this build lacks is skipped with a message (see FormatAvailable).
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "dlio/registries.h"
#include "test_util.h"

namespace fs = std::filesystem;
using dlio::testing::ReadTextFile;
using dlio::testing::RunCommand;
using dlio::testing::TempDir;
using json = nlohmann::json;

namespace {

struct Event {
  std::string name, cat, fname;
  int64_t tid = 0, ts = 0, dur = 0, offset = -1, count = -1, ret = -1, index = -1;
  int64_t end() const { return ts + dur; }
};

struct Run {
  int exit_code = -1;
  std::string output;
  std::vector<Event> events;  // ordered by start time
};

// Whether dataset format `name` works in this build: registered, and its factory builds it (hdf5
// stays registered without libhdf5 but then says Unimplemented).
bool FormatAvailable(const std::string& name) {
  dlio::Registries registries;
  if (!dlio::RegisterBuiltins(&registries).ok()) return false;
  auto factory = registries.formats.Get(name);
  return factory.ok() && (*factory)().ok();
}

#define SKIP_WITHOUT_FORMAT(name)                                               \
  if (!FormatAvailable(name)) {                                                 \
    WARN("skipped: format '" << (name)                                          \
                             << "' is not available in this build (not merged " \
                                "yet, or built without it)");                   \
    return;                                                                     \
  }

std::vector<Event> ParseTrace(const std::string& path) {
  std::vector<Event> events;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line == "[" || line == "]") continue;
    if (line.back() == ',') line.pop_back();
    json j = json::parse(line);
    if (j["ph"] != "X") continue;
    Event e;
    e.name = j["name"];
    e.cat = j["cat"];
    e.tid = j["tid"];
    e.ts = j["ts"];
    e.dur = j["dur"];
    const json& a = j["args"];
    if (a.contains("fname")) e.fname = a["fname"];
    if (a.contains("offset")) e.offset = a["offset"];
    if (a.contains("count")) e.count = a["count"];
    if (a.contains("ret")) e.ret = a["ret"];
    if (a.contains("index")) e.index = a["index"];
    events.push_back(std::move(e));
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return a.ts < b.ts; });
  return events;
}

// Runs preset `workload` in `dir` with tracing on; `extra` are more --set overrides.
Run RunWorkload(const TempDir& dir, const std::string& workload, const std::string& extra) {
  const std::string cmd = std::string(DLIO_BINARY_DIR) + "/apps/dlio-run/dlio-run --workload " +
                          workload + " --quiet --trace --set dataset.data_folder=" + dir / "data" +
                          " --set output.folder=" + dir / "out" +
                          " --set checkpoint.checkpoint_folder=" + dir / "ckpt" + " " + extra;
  auto r = RunCommand(cmd);
  Run run;
  run.exit_code = r.exit_code;
  run.output = r.output;
  if (r.exit_code == 0) run.events = ParseTrace(dir / "out/trace-0-of-1.pfw");
  return run;
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Reads of files whose path contains `part`, during training (inside a pipeline "train" span).
std::vector<Event> TrainReads(const Run& run, const std::string& part,
                              const std::string& name = "pread") {
  std::vector<std::pair<int64_t, int64_t>> epochs;
  for (const auto& e : run.events) {
    if (e.name == "train") epochs.emplace_back(e.ts, e.end());
  }
  std::vector<Event> out;
  for (const auto& e : run.events) {
    if (e.name != name || !Contains(e.fname, part)) continue;
    for (const auto& [b, en] : epochs) {
      if (e.ts >= b && e.ts <= en) {
        out.push_back(e);
        break;
      }
    }
  }
  return out;
}

// TFRecord data reads: `reads` without those of the .idx files read at open.
std::vector<Event> WithoutIndex(std::vector<Event> reads) {
  reads.erase(std::remove_if(reads.begin(), reads.end(),
                             [](const Event& e) { return Contains(e.fname, ".idx"); }),
              reads.end());
  return reads;
}

std::vector<Event> Named(const Run& run, const std::string& name) {
  std::vector<Event> out;
  for (const auto& e : run.events) {
    if (e.name == name) out.push_back(e);
  }
  return out;
}

// How many of `reads` start well inside a compute step: 0 for I/O before each step (sync), > 0
// when I/O overlaps compute. The 1 us margins absorb the trace's rounding.
size_t ReadsDuringCompute(const Run& run, const std::vector<Event>& reads) {
  const auto steps = Named(run, "compute");
  size_t n = 0;
  for (const auto& r : reads) {
    for (const auto& s : steps) {
      if (r.ts > s.ts + 1 && r.ts + 1 < s.end()) {
        ++n;
        break;
      }
    }
  }
  return n;
}

// Darshan's counters per file (WORKLOADS.md section 2): the share of reads after the first of
// each file whose offset lies past the previous read's last byte, in time order.
double SequentialShare(const std::vector<Event>& reads) {
  std::map<std::string, int64_t> last_byte;
  uint64_t sequential = 0, counted = 0;
  for (const auto& r : reads) {
    auto it = last_byte.find(r.fname);
    if (it != last_byte.end()) {
      ++counted;
      if (r.offset > it->second) ++sequential;
    }
    last_byte[r.fname] = r.offset + r.count - 1;
  }
  return counted == 0 ? 1.0 : static_cast<double>(sequential) / static_cast<double>(counted);
}

// Share of reads whose requested size is `size`.
double ShareOfSize(const std::vector<Event>& reads, int64_t size) {
  if (reads.empty()) return 0;
  const auto n =
      std::count_if(reads.begin(), reads.end(), [size](const Event& e) { return e.count == size; });
  return static_cast<double>(n) / static_cast<double>(reads.size());
}

// The request size most reads have.
int64_t CommonestSize(const std::vector<Event>& reads) {
  std::map<int64_t, int64_t> n;
  for (const Event& e : reads) ++n[e.count];
  int64_t best = -1, most = 0;
  for (const auto& [size, count] : n) {
    if (count > most) best = size, most = count;
  }
  return best;
}

// Files in the order they are first read.
std::vector<std::string> FirstReadOrder(const std::vector<Event>& reads) {
  std::vector<std::string> order;
  std::set<std::string> seen;
  for (const auto& r : reads) {
    if (seen.insert(r.fname).second) order.push_back(r.fname);
  }
  return order;
}

std::set<int64_t> Tids(const std::vector<Event>& events) {
  std::set<int64_t> tids;
  for (const auto& e : events) tids.insert(e.tid);
  return tids;
}

uint64_t FilesUnder(const std::string& dir, const std::string& extension) {
  uint64_t n = 0;
  if (!fs::exists(dir)) return 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().extension() == extension) ++n;
  }
  return n;
}

}  // namespace

TEST_CASE(
    "cosmic_tagger: one thread reads a shared chunked HDF5 file sequentially before each "
    "step, checkpoints every 50 (scaled) steps") {
  SKIP_WITHOUT_FORMAT("hdf5");
  TempDir dir;
  // 860 samples, 3 steps of 32, a checkpoint every step (50 x 0.02 rounds to 1).
  auto run =
      RunWorkload(dir, "cosmic_tagger", "--set scale=0.02 --set train.computation_time=0.002");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK(FilesUnder(dir / "data", ".hdf5") == 1);  // one shared file, named as DLIO names it
  const auto reads = TrainReads(run, "/data/train/");
  REQUIRE(reads.size() > 3 * 32);
  CHECK(FirstReadOrder(reads).size() == 1);
  // 2 KB chunks: one chunk is the commonest request; none is larger than a few chunks. The rest
  // are h5py's per-sample open (reader.io_model h5py under auto, DLIO's on_demand reader): the
  // superblock and the chunk index's B-tree nodes (2,096 B) read again for each sample.
  CHECK(CommonestSize(reads) == 2048);
  CHECK(ShareOfSize(reads, 2048) > 0.4);
  for (const auto& r : reads) CHECK(r.count <= 8192);
  CHECK(SequentialShare(reads) > 0.8);
  // Sync with one I/O thread: reads on the training thread, never during compute.
  const auto steps = Named(run, "compute");
  REQUIRE(steps.size() == 3);
  CHECK(ReadsDuringCompute(run, reads) == 0);
  CHECK(Tids(reads) == Tids(steps));
  CHECK(Named(run, "capture").size() == 3);
  CHECK(FilesUnder(dir / "ckpt", ".bin") == 3 * 5);
}

TEST_CASE(
    "dffn: random 64 KB chunk reads of a shared HDF5 file plus ~100 B metadata-file "
    "reads, a third of the data per rank, no overlap") {
  SKIP_WITHOUT_FORMAT("hdf5");
  TempDir dir;
  // 374 samples; a third (125) gives 3 batches of 32, fewer than the 8 scaled steps asked for.
  auto run = RunWorkload(dir, "dffn", "--set scale=0.02 --set train.computation_time=0.002");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK(Named(run, "compute").size() == 3);
  CHECK(Named(run, "item").size() == 3 * 32);
  std::vector<Event> data, meta;
  for (const auto& r : TrainReads(run, "/data/train/")) {
    (Contains(r.fname, ".meta.h5") ? meta : data).push_back(r);
  }
  REQUIRE(data.size() >= 2 * 3 * 32);  // 128 KB samples in 64 KB chunks: two chunks each
  CHECK(ShareOfSize(data, 65536) > 0.5);
  CHECK(SequentialShare(data) < 0.8);  // shuffled: reads jump back and forth
  REQUIRE(meta.size() > 10);
  for (const auto& r : meta) CHECK(r.count <= 4096);
  CHECK(std::count_if(meta.begin(), meta.end(), [](const Event& e) { return e.count <= 256; }) >
        static_cast<long>(meta.size() / 2));
  CHECK(ReadsDuringCompute(run, data) == 0);
  CHECK(ReadsDuringCompute(run, meta) == 0);
}

TEST_CASE(
    "cosmoflow: file-per-process TFRecord in 256 KB requests from several threads, "
    "overlapping compute") {
  SKIP_WITHOUT_FORMAT("tfrecord");
  TempDir dir;
  // 8 files of one 16 MiB sample (more than the reads in flight fill), 2 epochs of 8 steps.
  auto run = RunWorkload(dir, "cosmoflow",
                         "--set scale=0.008 --set train.epochs=2 --set train.computation_time=0.03 "
                         "--set reader.preprocess_time=0.003");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK(Named(run, "compute").size() == 16);
  const auto reads = WithoutIndex(TrainReads(run, ".tfrecord"));
  CHECK(FirstReadOrder(reads).size() == 8);
  REQUIRE(reads.size() >= 2 * 8 * 64);  // 16 MiB per sample, 256 KiB per request
  CHECK(ShareOfSize(reads, 262144) > 0.95);
  for (const auto& r : reads) CHECK(r.count <= 262144);
  CHECK(SequentialShare(reads) > 0.9);
  CHECK(Tids(reads).size() >= 2);  // several read threads
  CHECK(ReadsDuringCompute(run, reads) > 0);
  CHECK(Tids(Named(run, "preprocess")).size() >= 2);
}

TEST_CASE(
    "candle: every rank loads the whole CSV into memory before training, then 60 epochs "
    "from memory") {
  TempDir dir;
  // 22 rows of 256 KB: one step of 20 per epoch.
  auto run = RunWorkload(dir, "candle", "--set scale=0.02 --set train.computation_time=0.0005");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK(Named(run, "train").size() == 60);
  const auto steps = Named(run, "compute");
  REQUIRE(steps.size() == 60);
  const auto reads = TrainReads(run, ".csv");
  REQUIRE(!reads.empty());
  for (const auto& r : reads) CHECK(r.end() <= steps.front().ts + 1);  // all before training
  uint64_t bytes = 0;
  for (const auto& r : reads) bytes += static_cast<uint64_t>(r.ret);
  uint64_t file_size = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir / "data")) {
    if (e.path().extension() == ".csv") file_size += fs::file_size(e.path());
  }
  // The whole file once: csv's default model, pandas, loads it as pandas.read_csv does (256 KiB
  // requests, docs/io_models.md) and serves the rows from memory (the native model read it 1.9
  // times: an indexing pass, then the rows training uses).
  CHECK(bytes == file_size);
  CHECK(ShareOfSize(reads, 262144) > 0.8);
  for (const auto& r : reads) CHECK(r.count <= 262144);
}

TEST_CASE(
    "frnn: 2 KB samples of 2 MB NPZ files in random file order, 100 B signal-shot reads "
    "before each step, no overlap") {
  TempDir dir;
  // 6 files of 1024 samples: 6 steps of 1024, each with 16 metadata reads.
  auto run = RunWorkload(dir, "frnn", "--set scale=0.002 --set train.computation_time=0.002");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const auto steps = Named(run, "compute");
  REQUIRE(steps.size() == 6);
  const auto side = TrainReads(run, "signal_shots.txt");
  CHECK(side.size() == 16 * 6);
  for (const auto& r : side) CHECK(r.count == 100);
  std::set<int64_t> offsets;
  for (const auto& r : side) offsets.insert(r.offset);
  CHECK(offsets.size() > 16);  // random offsets, not one spot
  const auto reads = TrainReads(run, ".npz");
  const auto order = FirstReadOrder(reads);
  REQUIRE(order.size() == 6);
  CHECK_FALSE(std::is_sorted(order.begin(), order.end()));  // files in a shuffled order
  CHECK(ShareOfSize(reads, 2048) > 0.9);
  CHECK(ReadsDuringCompute(run, reads) == 0);
  CHECK(ReadsDuringCompute(run, side) == 0);
  // Each step's 16 metadata reads come before that step's compute.
  for (size_t s = 0; s < steps.size(); ++s) {
    const int64_t begin = s == 0 ? 0 : steps[s - 1].end();
    const auto n = std::count_if(side.begin(), side.end(), [&](const Event& e) {
      return e.ts >= begin && e.ts <= steps[s].ts;
    });
    CHECK(n == 16);
  }
}

TEST_CASE(
    "imagenet: TFRecord files in random order, each read sequentially in 256 KB "
    "requests by 2 threads, overlapping compute") {
  SKIP_WITHOUT_FORMAT("tfrecord");
  TempDir dir;
  // 31 files x 31 samples: 30 steps of 32. Enough steps that the readers cannot read the epoch
  // before the first compute: their window reaches 4-6 batches ahead, so with 7 steps a run could
  // read all but two batches early and the rest in the consumer's waits (0 reads during compute
  // in 1 run of 5); with 30, 500-760 of 960 reads fall within compute in every run.
  auto run = RunWorkload(dir, "imagenet", "--set scale=0.03 --set train.computation_time=0.02");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK(Named(run, "compute").size() == 30);
  const auto reads = WithoutIndex(TrainReads(run, ".tfrecord"));
  REQUIRE(!reads.empty());
  // 256 KB transfers: the tfrecord reader reads a record of at least transfer_size (these are
  // 256 KiB + ~40 bytes) straight into the sample buffer in requests of at most 256 KiB that end
  // where the sample ends, plus one small request for the record's tail and the next record's
  // head (docs/formats.md). So the bytes move in 240-256 KiB requests; the rest are < 4 KiB.
  int64_t big_bytes = 0, all_bytes = 0;
  for (const auto& r : reads) {
    const bool big = r.count >= (240 << 10) && r.count <= 262144;
    CHECK((big || r.count < 4096));
    all_bytes += r.count;
    if (big) big_bytes += r.count;
  }
  CHECK(static_cast<double>(big_bytes) > 0.95 * static_cast<double>(all_bytes));
  const auto order = FirstReadOrder(reads);
  CHECK(order.size() >= 30);  // 960 samples of 31-sample files
  CHECK_FALSE(std::is_sorted(order.begin(), order.end()));
  CHECK(SequentialShare(reads) > 0.9);  // sequential within each file
  CHECK(Tids(reads).size() <= 2);
  CHECK(ReadsDuringCompute(run, reads) > 0);
}

TEST_CASE(
    "climate_seg: in-memory data, 50 random 500 B stats-file reads spread over the run, "
    "a 4 MB JSON file per rank at the end") {
  SKIP_WITHOUT_FORMAT("hdf5");
  TempDir dir;
  // 12 steps.
  auto run = RunWorkload(dir, "climate_seg", "--set train.computation_time=0.002");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const auto steps = Named(run, "compute");
  REQUIRE(steps.size() == 12);
  const auto side = TrainReads(run, "stats.h5");
  REQUIRE(side.size() == 50);
  std::set<int64_t> offsets, gaps;
  for (const auto& r : side) {
    CHECK(r.count == 500);
    offsets.insert(r.offset);
    gaps.insert(
        std::count_if(steps.begin(), steps.end(), [&](const Event& s) { return s.end() <= r.ts; }));
  }
  CHECK(offsets.size() > 10);
  CHECK(gaps.size() >= 4);  // spread over the run, not all at once
  for (const auto& e : run.events) {
    CHECK_FALSE((e.name == "pread" && Contains(e.fname, "/data/train/")));  // data in memory
  }
  const std::string model = dir / "out/model-0.json";
  REQUIRE(fs::exists(model));
  CHECK(fs::file_size(model) == 4u << 20);
  CHECK_NOTHROW(json::parse(ReadTextFile(model)));
  uint64_t written = 0;
  for (const auto& e : run.events) {
    if (e.name == "pwrite" && Contains(e.fname, "model-0.json")) {
      written += static_cast<uint64_t>(e.ret);
      CHECK(e.ts >= steps.back().end() - 1);  // after training
    }
  }
  CHECK(written == 4u << 20);
}

TEST_CASE(
    "l2hmc: in-memory data, root-rank STDIO checkpoints of four files, one fwrite each, "
    "every 50 (scaled) steps") {
  TempDir dir;
  // 6 steps, a checkpoint every 2.
  auto run = RunWorkload(dir, "l2hmc", "--set train.computation_time=0.002");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK(Named(run, "compute").size() == 6);
  CHECK(Named(run, "capture").size() == 3);
  const auto fwrites = Named(run, "fwrite");
  REQUIRE(fwrites.size() == 3 * 4);
  std::set<std::string> files;
  for (const auto& w : fwrites) {
    CHECK(w.cat == "STDIO");
    CHECK(w.offset == 0);
    CHECK(w.count == 3 << 20);
    files.insert(w.fname);
  }
  CHECK(files.size() == 12);
  for (const auto& e : run.events) {
    CHECK_FALSE((e.name == "pwrite" && Contains(e.fname, "/ckpt/")));
    CHECK_FALSE((e.name == "pread" && Contains(e.fname, "/data/train/")));
  }
  CHECK(FilesUnder(dir / "ckpt", ".bin") == 12);
}

TEST_CASE("scientific presets: paper parameters at scale 1, scaled counts in the run") {
  // `list workloads` names all eight; the scale line in the log says what was scaled.
  auto list = RunCommand(std::string(DLIO_BINARY_DIR) + "/apps/dlio-run/dlio-run list workloads");
  REQUIRE(list.exit_code == 0);
  for (const char* w : {"cosmic_tagger", "dffn", "cosmoflow", "candle", "frnn", "imagenet",
                        "climate_seg", "l2hmc"}) {
    CHECK(Contains(list.output, w));
  }
  TempDir dir;
  auto run = RunWorkload(dir, "l2hmc", "--set train.computation_time=0.001");
  REQUIRE(run.exit_code == 0);
  const json config = json::parse(ReadTextFile(dir / "out/config.json"));
  CHECK(config["dataset"]["num_samples_per_file"] == 192);  // 4800 x 0.04
  CHECK(config["train"]["total_training_steps"] == 6);      // 150 x 0.04
  CHECK(config["checkpoint"]["steps_between_checkpoints"] == 2);
  CHECK(config["dataset"]["record_length_bytes"] == 4096);  // sizes are not scaled
  CHECK(config["checkpoint"]["model_size_bytes"] == 12582912);
}
