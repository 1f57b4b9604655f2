// End-to-end tests of dlio-run under mpiexec: generation split over ranks, aggregated reports,
// per-rank outputs and traces, every sample read exactly once, prompt aborts, checkpoints.
// The shared-file storages (mpiio, parallel HDF5) are in dlio_run_mpi_storage_test.cc.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "e2e/mpi_run.h"

namespace fs = std::filesystem;
using dlio::testing::CommandResult;
using dlio::testing::ReadPfwEvents;
using dlio::testing::ReadTextFile;
using dlio::testing::RunCommand;
using dlio::testing::TempDir;
using json = nlohmann::json;
using dlio::testing::DlioRun;
using dlio::testing::mpi_e2e::Count;
using dlio::testing::mpi_e2e::Folders;
using dlio::testing::mpi_e2e::Item;
using dlio::testing::mpi_e2e::Launch;
using dlio::testing::mpi_e2e::LoadJson;
using dlio::testing::mpi_e2e::MpiRun;
using dlio::testing::mpi_e2e::SamplesRead;
using dlio::testing::mpi_e2e::TinyArgs;
using dlio::testing::mpi_e2e::TraceOf;

TEST_CASE("mpiexec -n 2: generation split, aggregated summary, per-rank files, merged trace") {
  TempDir dir;
  auto run = MpiRun(2, TinyArgs(dir) + " --trace");
  INFO(run.result.output);
  REQUIRE(run.result.exit_code == 0);
  // Rank 0 alone prints the summary.
  CHECK(Count(run.result.output, "outputs: ") == 1);
  CHECK(run.result.output.find("on 2 ranks") != std::string::npos);

  json s = LoadJson(dir / "out/summary.json");
  CHECK(s["num_accelerators"] == 2);
  const json& ranks = s["ranks"];
  REQUIRE(ranks.size() == 2);
  // File i is written by rank i mod 2.
  CHECK(ranks[0]["files_generated"] == 3);
  CHECK(ranks[1]["files_generated"] == 3);
  CHECK(s["generate"]["files_written"] == 6);
  // DLIO's aggregation: AU is the mean over ranks, throughput and bandwidth the sum.
  const json& m = s["metric"];
  for (size_t e = 0; e < 2; ++e) {
    const double au0 = ranks[0]["au_percentage"][e], au1 = ranks[1]["au_percentage"][e];
    const double tp0 = ranks[0]["throughput_samples_per_second"][e];
    const double tp1 = ranks[1]["throughput_samples_per_second"][e];
    CHECK(m["train_au_percentage"][e].get<double>() == Approx((au0 + au1) / 2));
    CHECK(m["train_throughput_samples_per_second"][e].get<double>() == Approx(tp0 + tp1));
    CHECK(ranks[0]["steps"][e] == 3);  // 12 samples / 2 ranks / batch 2
    CHECK(ranks[1]["samples"][e] == 6);
  }
  CHECK(s["io"]["read_bytes"].get<uint64_t>() >= 2ull * 12 * 16384);

  for (const char* f : {"0_per_epoch_stats.json", "1_per_epoch_stats.json", "0_output.json",
                        "1_output.json", "trace-0-of-2.pfw", "trace-1-of-2.pfw", "summary.json"}) {
    CHECK(fs::exists(dir / "out/" + f));
  }
  json out1 = LoadJson(dir / "out/1_output.json");
  CHECK(out1["2"]["load"]["block1"].size() == 3);

  auto merged = RunCommand(DlioRun() + " trace-merge " + dir / "out/merged.pfw" + " " +
                           dir / "out/trace-0-of-2.pfw " + dir / "out/trace-1-of-2.pfw");
  INFO(merged.output);
  REQUIRE(merged.exit_code == 0);
  json all = LoadJson(dir / "out/merged.pfw");  // one valid JSON array
  REQUIRE(all.is_array());
  std::set<int64_t> pids, ids;
  std::set<std::string> process_names, thread_names;
  for (const json& e : all) {
    pids.insert(e["pid"].get<int64_t>());
    ids.insert(e["id"].get<int64_t>());
    if (e["name"] == "process_name") process_names.insert(e["args"]["name"].get<std::string>());
    if (e["name"] == "thread_name") thread_names.insert(e["args"]["name"].get<std::string>());
  }
  CHECK(pids == std::set<int64_t>{1, 2});  // rank + 1: no pid 0
  CHECK(ids.size() == all.size());
  CHECK(process_names == std::set<std::string>{"dlio rank 0", "dlio rank 1"});
  CHECK(thread_names.count("dlio-run") == 1);  // the main thread of each rank
  CHECK(thread_names.count("dlio-reader-0") == 1);
}

TEST_CASE("every sample is read exactly once per epoch with 1, 2, 3 and 4 ranks") {
  // 7 files x 3 samples = 21: uneven for every rank count and batch size 2.
  const std::string dataset =
      " --set dataset.num_files_train=7 --set dataset.num_samples_per_file=3"
      " --set dataset.record_length_bytes=4096 --set reader.batch_size=2 --set train.epochs=2"
      " --set train.computation_time=0.0002 --set reader.file_shuffle=seed"
      " --set reader.sample_shuffle=seed --trace";
  struct Case {
    int ranks;
    std::string extra;
  };
  const std::vector<Case> cases = {
      {1, " --set reader.drop_last=false"},
      {2, " --set reader.drop_last=false"},
      {3, " --set reader.drop_last=false --set reader.sharding=round_robin"},
      {3, " --set reader.drop_last=false --set train.barrier_per_step=false"},
      {4, " --set reader.drop_last=false --set reader.read_threads=2"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.ranks, c.extra);
    TempDir dir;
    auto run = MpiRun(c.ranks, Folders(dir) + dataset + c.extra);
    INFO(run.result.output);
    REQUIRE(run.result.exit_code == 0);
    std::map<Item, int> reads;
    for (int r = 0; r < c.ranks; ++r) {
      for (const Item& item : SamplesRead(dir / TraceOf(r, c.ranks))) {
        ++reads[item];
      }
    }
    for (int64_t epoch = 1; epoch <= 2; ++epoch) {  // trace epochs count from 1
      std::set<std::pair<std::string, int64_t>> seen;
      for (const auto& [item, n] : reads) {
        if (std::get<0>(item) != epoch) continue;
        CHECK(n == 1);  // never twice
        seen.emplace(std::get<1>(item), std::get<2>(item));
      }
      CHECK(seen.size() == 21);  // and none left out
    }
  }

  SECTION("with drop_last the ranks read equal whole batches, each sample at most once") {
    TempDir dir;
    auto run = MpiRun(3, Folders(dir) + dataset);
    INFO(run.result.output);
    REQUIRE(run.result.exit_code == 0);
    std::map<Item, int> reads;
    for (int r = 0; r < 3; ++r) {
      const auto items = SamplesRead(dir / TraceOf(r, 3));
      CHECK(items.size() == 2u * 3 * 2);  // 21 / 3 = 7 samples -> 3 batches of 2, per epoch
      for (const Item& item : items) ++reads[item];
    }
    for (const auto& [item, n] : reads) CHECK(n == 1);
  }
}

TEST_CASE("webdataset under mpiexec: whole shards per rank, every sample once per epoch") {
  // 7 shards x 3 samples over 2 and 3 ranks: samples are split by shard (WebDataset's
  // split_by_node), so each shard is read by exactly one rank per epoch, and over the ranks every
  // sample exactly once; the shard order is shuffled per epoch.
  const std::string dataset =
      " --set dataset.format=webdataset --set dataset.num_files_train=7"
      " --set dataset.num_samples_per_file=3 --set dataset.record_length_bytes=4096"
      " --set reader.batch_size=2 --set train.epochs=2 --set train.computation_time=0.0002"
      " --set reader.file_shuffle=seed --set reader.sample_shuffle=seed"
      " --set reader.shuffle_size=4 --set reader.drop_last=false --set reader.read_threads=2"
      " --trace";
  for (int ranks : {2, 3}) {
    CAPTURE(ranks);
    TempDir dir;
    auto run = MpiRun(ranks, Folders(dir) + dataset);
    INFO(run.result.output);
    REQUIRE(run.result.exit_code == 0);
    std::map<Item, int> reads;
    std::map<std::pair<int64_t, std::string>, std::set<int>> readers;  // (epoch, shard) -> ranks
    for (int r = 0; r < ranks; ++r) {
      for (const Item& item : SamplesRead(dir / TraceOf(r, ranks))) {
        ++reads[item];
        readers[{std::get<0>(item), std::get<1>(item)}].insert(r);
      }
    }
    CHECK(reads.size() == 2u * 21);  // every sample of both epochs
    for (const auto& [item, n] : reads) CHECK(n == 1);
    CHECK(readers.size() == 2u * 7);
    for (const auto& [shard, by] : readers) CHECK(by.size() == 1);
  }
}

TEST_CASE("mpiexec -n 2 x 2 accelerator threads read what 4 plain ranks read, rank for rank") {
  // train.accelerators_per_process: process p's thread k is rank 2p + k of 4, so its shard, its
  // trace (trace-<rank>-of-4.pfw) and its row of summary.json's ranks are those of plain rank 2p +
  // k.
  const std::string dataset =
      " --set dataset.num_files_train=7 --set dataset.num_samples_per_file=3"
      " --set dataset.record_length_bytes=4096 --set reader.batch_size=2 --set train.epochs=2"
      " --set train.computation_time=0.0002 --set reader.file_shuffle=seed"
      " --set reader.sample_shuffle=seed --set reader.drop_last=false --trace";
  TempDir plain_dir, threads_dir;
  auto plain = MpiRun(4, Folders(plain_dir) + dataset);
  INFO(plain.result.output);
  REQUIRE(plain.result.exit_code == 0);
  auto threads =
      MpiRun(2, Folders(threads_dir) + dataset + " --set train.accelerators_per_process=2");
  INFO(threads.result.output);
  REQUIRE(threads.result.exit_code == 0);
  CHECK(Count(threads.result.output, "outputs: ") == 1);
  CHECK(threads.result.output.find("on 4 ranks (2 processes x 2 accelerator threads)") !=
        std::string::npos);
  std::map<Item, int> reads;
  for (int r = 0; r < 4; ++r) {
    CAPTURE(r);
    const std::string trace = TraceOf(r, 4);
    const auto mine = SamplesRead(threads_dir / trace);
    // The two runs' folders differ: compare file names.
    auto names = [](std::vector<Item> items) {
      for (Item& i : items) std::get<1>(i) = fs::path(std::get<1>(i)).filename().string();
      std::sort(items.begin(), items.end());
      return items;
    };
    const auto sorted_mine = names(mine), sorted_plain = names(SamplesRead(plain_dir / trace));
    CHECK(!sorted_mine.empty());
    CHECK(sorted_mine == sorted_plain);
    for (const Item& item : mine) ++reads[item];
  }
  for (int64_t epoch = 1; epoch <= 2; ++epoch) {
    std::set<std::pair<std::string, int64_t>> seen;
    for (const auto& [item, n] : reads) {
      if (std::get<0>(item) != epoch) continue;
      CHECK(n == 1);
      seen.emplace(std::get<1>(item), std::get<2>(item));
    }
    CHECK(seen.size() == 21);
  }
  json s = LoadJson(threads_dir / "out/summary.json");
  CHECK(s["num_accelerators"] == 4);
  CHECK(s["accelerators_per_process"] == 2);
  CHECK(s["num_processes"] == 2);
  REQUIRE(s["ranks"].size() == 4);
  for (int r = 0; r < 4; ++r) CHECK(s["ranks"][r]["rank"] == r);

  SECTION("a bad file read by one accelerator thread ends the whole job promptly") {
    const std::string victim = threads_dir / "data/train/img_6_of_7.npz";
    REQUIRE(fs::exists(victim));
    REQUIRE(truncate(victim.c_str(), 100) == 0);
    auto bad = MpiRun(2, Folders(threads_dir) + dataset + " --no-generate" +
                             " --set train.accelerators_per_process=2 --set train.epochs=50"
                             " --set train.computation_time=0.02");
    INFO(bad.result.output);
    CHECK(bad.result.exit_code != 0);
    CHECK(bad.result.exit_code != 124);
    CHECK(bad.seconds < 30);
    CHECK(bad.result.output.find("aborting the job") != std::string::npos);
    CHECK(bad.result.output.find(victim) != std::string::npos);
  }
}

TEST_CASE("one rank's bad file ends the whole job promptly, naming the rank and the file") {
  TempDir dir;
  const std::string args = Folders(dir) +
                           " --set dataset.num_files_train=4 --set dataset.num_samples_per_file=2"
                           " --set dataset.record_length_bytes=8192 --set reader.batch_size=1"
                           " --set train.epochs=20 --set train.computation_time=0.05"
                           " --set reader.file_shuffle=off --set reader.sample_shuffle=off";
  REQUIRE(MpiRun(2, args + " --no-train").result.exit_code == 0);
  // Block sharding without shuffling: rank 1 reads files 2 and 3. Cut file 3 short.
  const std::string victim = dir / "data/train/img_3_of_4.npz";
  REQUIRE(fs::exists(victim));
  REQUIRE(truncate(victim.c_str(), 100) == 0);
  auto run = MpiRun(2, args + " --no-generate");
  INFO(run.result.output);
  CHECK(run.result.exit_code != 0);
  CHECK(run.result.exit_code != 124);  // not the guard's timeout
  // Rank 0 alone would train 20 epochs x 4 steps x 50 ms = 4 s; the abort comes well before.
  CHECK(run.seconds < 30);
  CHECK(run.result.output.find("dlio rank 1 of 2: aborting the job") != std::string::npos);
  CHECK(run.result.output.find(victim) != std::string::npos);

  SECTION("Comm::Abort releases a rank waiting in a barrier the aborting rank never joins") {
    auto probe = Launch(std::string(DLIO_MPIEXEC) + " -n 2 " + DLIO_MPI_COMM_TEST + " '[.abort]'");
    INFO(probe.result.output);
    CHECK(probe.result.exit_code != 0);
    CHECK(probe.result.exit_code != 124);
    CHECK(probe.seconds < 30);
    CHECK(probe.result.output.find("dlio rank 1 of 2: aborting the job") != std::string::npos);
    CHECK(probe.result.output.find("/data/broken_file.npz") != std::string::npos);
    CHECK(probe.result.output.find("the barrier returned") == std::string::npos);
  }
}

TEST_CASE("checkpoints under mpiexec: every rank's files, or rank 0's only") {
  for (const std::string mode : {"all", "root"}) {
    CAPTURE(mode);
    TempDir dir;
    auto run = MpiRun(2, TinyArgs(dir) +
                             " --set workflow.checkpoint=true"
                             " --set checkpoint.checkpoint_after_epoch=1"
                             " --set checkpoint.rank_mode=" +
                             mode);
    INFO(run.result.output);
    REQUIRE(run.result.exit_code == 0);
    std::set<std::string> prefixes;
    for (const auto& e : fs::recursive_directory_iterator(dir / "ckpt")) {
      if (!e.is_regular_file()) continue;
      const std::string name = e.path().filename().string();
      if (name.rfind(".dlio-complete-rank", 0) == 0) continue;  // the per-rank manifests
      prefixes.insert(name.substr(0, name.find('-')));
    }
    if (mode == "all") {
      CHECK(prefixes == std::set<std::string>{"rank0", "rank1"});
    } else {
      CHECK(prefixes == std::set<std::string>{"rank0"});
    }
    json s = LoadJson(dir / "out/summary.json");
    const uint64_t per_rank = 2 * 1024 + 4096 + 65536 + 4 * 1024 * 1024;  // the paper's files
    CHECK(s["metric"]["checkpoint_size_bytes"] == (mode == "all" ? 2 : 1) * per_rank);
  }
}

TEST_CASE(
    "DLIO-paper workloads under mpiexec -n 2: CANDLE's ranks each read the whole file, "
    "DFFN's a different third, climate_seg writes a model file per rank") {
  TempDir candle;
  auto run = MpiRun(2, Folders(candle) +
                           " --workload candle --trace --set scale=0.04 --set train.epochs=2"
                           " --set train.computation_time=0.0005");
  INFO(run.result.output);
  REQUIRE(run.result.exit_code == 0);
  // sharding none: both ranks load the same 40 rows (2 steps of 20 of the 45).
  std::set<int64_t> rows[2];
  for (int r = 0; r < 2; ++r) {
    for (const auto& [epoch, file, index] : SamplesRead(candle / TraceOf(r, 2))) {
      rows[r].insert(index);
    }
    CHECK(rows[r].size() == 40);
  }
  CHECK(rows[0] == rows[1]);

  TempDir dffn;
  run = MpiRun(2, Folders(dffn) +
                      " --workload dffn --trace --set scale=0.02"
                      " --set train.computation_time=0.0005");
  INFO(run.result.output);
  REQUIRE(run.result.exit_code == 0);
  std::set<int64_t> third[2];
  for (int r = 0; r < 2; ++r) {
    for (const auto& [epoch, file, index] : SamplesRead(dffn / TraceOf(r, 2))) {
      third[r].insert(index);
    }
    CHECK(third[r].size() == 3 * 32);  // 3 steps of 32 from each rank's third (125 of 374)
  }
  CHECK(third[0] != third[1]);  // each rank draws its own third

  TempDir climate;
  run = MpiRun(2, Folders(climate) + " --workload climate_seg --set train.computation_time=0.0005");
  INFO(run.result.output);
  REQUIRE(run.result.exit_code == 0);
  for (int r = 0; r < 2; ++r) {
    const std::string model = climate / ("out/model-" + std::to_string(r) + ".json");
    REQUIRE(fs::exists(model));
    CHECK(fs::file_size(model) == 4u << 20);
  }
}

TEST_CASE("under mpiexec a run that cannot work here is refused on every rank with exit 2") {
  TempDir dir;
  // 12 samples over 2 ranks: 6 each, fewer than a batch of 7.
  auto steps = MpiRun(2, TinyArgs(dir) + " --set reader.batch_size=7");
  INFO(steps.result.output);
  CHECK(steps.result.exit_code == 2);
  CHECK(steps.result.output.find("fewer than reader.batch_size 7") != std::string::npos);
  CHECK(steps.result.output.find("(rank 0 of 2)") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "data"));

  auto memory = MpiRun(2, TinyArgs(dir) + " --set dataset.num_files_train=1e8");
  INFO(memory.result.output);
  CHECK(memory.result.exit_code == 2);
  CHECK(memory.result.output.find("dataset.num_files_train: the run needs at least") !=
        std::string::npos);
  CHECK(memory.result.output.find("x 2 ranks on this host") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "data"));
}

TEST_CASE("mpiexec -n 2 with reader.io_model pytorch: forked workers per rank, every sample once") {
  TempDir dir;
  auto run = MpiRun(
      2, TinyArgs(dir) + " --trace --set reader.io_model=pytorch --set reader.read_threads=2");
  INFO(run.result.output);
  REQUIRE(run.result.exit_code == 0);
  // Each rank's two worker processes wrote their own trace; together they read every sample of
  // the dataset once per epoch, and the ranks' own traces read none.
  std::vector<std::string> traces{dir / TraceOf(0, 2), dir / TraceOf(1, 2)};
  std::map<int, int> workers_per_rank;
  std::multiset<Item> items;
  for (const auto& e : fs::directory_iterator(dir / "out")) {
    const std::string name = e.path().filename().string();
    if (name.find("-worker-") == std::string::npos) continue;
    ++workers_per_rank[name[6] - '0'];
    traces.push_back(e.path().string());
    for (const Item& item : SamplesRead(e.path().string())) items.insert(item);
  }
  CHECK(workers_per_rank == std::map<int, int>{{0, 2}, {1, 2}});
  CHECK(SamplesRead(dir / TraceOf(0, 2)).empty());
  REQUIRE(items.size() == 2u * 12);
  for (const Item& item : items) CHECK(items.count(item) == 1);
  // The workers' reads count in the rank's I/O.
  json s = LoadJson(dir / "out/summary.json");
  CHECK(s["io"]["read_bytes"].get<uint64_t>() >= 2ull * 12 * 16384);
  // trace-merge keeps the workers' OS pids beside the ranks'.
  std::string inputs;
  for (const auto& t : traces) inputs += " " + t;
  auto merged = RunCommand(DlioRun() + " trace-merge " + dir / "out/merged.pfw" + inputs);
  INFO(merged.output);
  REQUIRE(merged.exit_code == 0);
  std::set<int64_t> pids;
  for (const json& e : ReadPfwEvents(dir / "out/merged.pfw")) pids.insert(e.value("pid", 0));
  CHECK(pids.size() == 6);
}
