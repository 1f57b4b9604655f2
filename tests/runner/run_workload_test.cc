// RunWorkload in process: memory storage, the serial Comm and a fake clock, so every step count,
// checkpoint and AU figure below is computed by hand from the config (one case runs two ranks on
// threads, over posix files in a temp dir, each rank with its own fake clock).
//
// The dataset of every case: 5 npz files of 2 samples (10 samples), batches of 4. Time moves only
// when the run sleeps: reader.preprocess_time (10 ms per sample, read inline on the loop's thread),
// train.computation_time (500 ms per step) and the recording checkpointer's saves.
#include <catch2/catch.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>
#include <utility>
#include <vector>

#include "dlio/registries.h"
#include "dlio/runner.h"
#include "fake_clock.h"
#include "runner/thread_comm.h"
#include "test_util.h"

namespace {

using dlio::testing::FakeClock;

constexpr int64_t kMs = 1'000'000;                        // nanoseconds
constexpr int64_t kWallOriginUs = 1'700'000'000'000'000;  // FakeClock's WallMicros() at 0

// One Save as the runner asked for it.
struct SaveCall {
  uint64_t epoch = 0;
  int64_t step = 0;
  bool operator==(const SaveCall& o) const { return epoch == o.epoch && step == o.step; }
};

// Records every Save and lets it take durations[i] of fake time (the last one repeats).
class RecordingCheckpointer final : public dlio::Checkpointer {
 public:
  RecordingCheckpointer(const FakeClock* clock, std::vector<int64_t> durations,
                        std::vector<SaveCall>* calls)
      : clock_(clock), durations_(std::move(durations)), calls_(calls) {}

  dlio::Result<dlio::CheckpointResult> Save(uint64_t epoch, int64_t step) override {
    dlio::CheckpointResult r;
    r.id = calls_->size();
    const int64_t ns = durations_.empty() ? 0 : durations_[std::min(r.id, durations_.size() - 1)];
    clock_->Advance(ns);
    r.write_ns = ns;
    r.bytes_written = 1000;
    calls_->push_back({epoch, step});
    return r;
  }
  dlio::Result<dlio::CheckpointResult> Load(uint64_t id) override {
    return dlio::Status::Unimplemented("load of checkpoint ", id);
  }

 private:
  const FakeClock* clock_;
  std::vector<int64_t> durations_;
  std::vector<SaveCall>* calls_;
};

// Finds the four complete checkpoints an earlier run left (ids 0-3) and records what it loads.
class ShelfCheckpointer final : public dlio::Checkpointer {
 public:
  explicit ShelfCheckpointer(std::vector<uint64_t>* loads) : loads_(loads) {}
  dlio::Result<dlio::CheckpointResult> Save(uint64_t, int64_t) override {
    return dlio::Status::Unimplemented("save");
  }
  dlio::Result<dlio::CheckpointResult> Load(uint64_t id) override {
    loads_->push_back(id);
    dlio::CheckpointResult r;
    r.id = id;
    return r;
  }
  uint64_t next_id() const override { return 4; }

 private:
  std::vector<uint64_t>* loads_;
};

struct Fixture {
  FakeClock clock{0, kWallOriginUs};
  dlio::Registries registries;
  std::vector<SaveCall> saves;
  std::vector<int64_t> save_durations;  // of fake time per save (see RecordingCheckpointer)
  dlio::WorkloadConfig config;

  Fixture() {
    REQUIRE(dlio::RegisterBuiltins(&registries).ok());
    REQUIRE(registries.checkpointers.Register({"recording", "test", "", Recording()}).ok());
    config.storage.storage_type = "memory";
    config.dataset.data_folder = "/data";
    config.dataset.format = "npz";
    config.dataset.num_files_train = 5;
    config.dataset.num_samples_per_file = 2;
    config.dataset.record_length_bytes = 64;
    config.workflow.generate_data = true;
    config.workflow.train = true;
    config.reader.batch_size = 4;
    config.reader.read_threads = 0;  // reads and preprocessing on the loop's thread: deterministic
    config.reader.computation_threads = 0;
    config.reader.preprocess_time.mean = 0.010;
    config.train.computation_time.mean = 0.5;
    config.train.epochs = 2;
    config.train.excluded_start_steps = 0;
    config.checkpoint.checkpoint_folder = "/checkpoints";
    config.checkpoint.type = "recording";
  }

  // Builds a RecordingCheckpointer into `saves`.
  dlio::CheckpointerFactory Recording() {
    return [this](const dlio::CheckpointOptions&,
                  const dlio::CheckpointEnv&) -> dlio::Result<std::unique_ptr<dlio::Checkpointer>> {
      return std::unique_ptr<dlio::Checkpointer>(
          std::make_unique<RecordingCheckpointer>(&clock, save_durations, &saves));
    };
  }

  // On `comm` (serial when null).
  dlio::Result<dlio::RunReport> Run(dlio::Comm* comm = nullptr) {
    dlio::RunEnv env;
    env.comm = comm;
    env.registries = &registries;
    env.clock = &clock;
    env.write_outputs = false;
    env.abort_on_error = false;  // a failing rank returns; the other's barrier times out
    return dlio::RunWorkload(config, env);
  }
};

std::vector<uint64_t> SamplesPerStep(const dlio::EpochReport& e) {
  std::vector<uint64_t> out;
  for (const auto& s : e.steps) out.push_back(s.samples);
  return out;
}

}  // namespace

TEST_CASE("RunWorkload takes floor(samples / batch) steps per epoch with drop_last") {
  Fixture fx;
  fx.config.reader.drop_last = true;
  auto report = fx.Run();
  REQUIRE(report.ok());
  REQUIRE(report->epochs.size() == 2);
  for (const auto& e : report->epochs) {
    CHECK(SamplesPerStep(e) == std::vector<uint64_t>{4, 4});
    CHECK(e.metrics.steps == 2);
    CHECK(e.metrics.samples == 8);
    CHECK(e.metrics.bytes == 8 * 64);
  }
  CHECK(report->epochs[0].epoch == 1);
  CHECK(report->epochs[1].epoch == 2);
  CHECK(report->eval_epochs.empty());
  CHECK(report->checkpoints.empty());
}

TEST_CASE("RunWorkload keeps the final partial batch without drop_last") {
  Fixture fx;
  fx.config.reader.drop_last = false;
  auto report = fx.Run();
  REQUIRE(report.ok());
  REQUIRE(report->epochs.size() == 2);
  for (const auto& e : report->epochs) {
    CHECK(SamplesPerStep(e) == std::vector<uint64_t>{4, 4, 2});
    CHECK(e.metrics.samples == 10);
  }
}

TEST_CASE("RunWorkload caps the steps at train.total_training_steps") {
  Fixture fx;
  fx.config.reader.drop_last = false;
  fx.config.train.total_training_steps = 2;
  auto report = fx.Run();
  REQUIRE(report.ok());
  REQUIRE(report->epochs.size() == 2);
  for (const auto& e : report->epochs) CHECK(SamplesPerStep(e) == std::vector<uint64_t>{4, 4});
}

TEST_CASE("RunWorkload on two ranks: the rank with the shorter shard takes idle steps") {
  // 5 samples over 2 ranks in batches of 1: rank 0 reads 3, rank 1 reads 2 and then waits one
  // idle step per epoch in the barrier. Both ranks count it: the saves every 3 global steps fall on
  // rank 1's idle steps. Each rank has its own fake clock; waiting in a barrier takes none of it.
  dlio::testing::TempDir dir;
  dlio::testing::ThreadCommHub hub(2);
  std::vector<std::unique_ptr<Fixture>> ranks;
  std::vector<std::unique_ptr<dlio::Comm>> comms;
  for (int r = 0; r < 2; ++r) {
    ranks.push_back(std::make_unique<Fixture>());
    comms.push_back(hub.Rank(r));
    dlio::WorkloadConfig& c = ranks.back()->config;
    c.storage.storage_type = "posix";  // one dataset for both ranks
    c.dataset.data_folder = dir / "data";
    c.checkpoint.checkpoint_folder = dir / "checkpoints";
    c.dataset.num_files_train = 5;
    c.dataset.num_samples_per_file = 1;
    c.reader.batch_size = 1;
    c.reader.drop_last = false;
    c.workflow.checkpoint = true;
    c.checkpoint.steps_between_checkpoints = 3;
  }
  std::vector<dlio::Result<dlio::RunReport>> reports(2, dlio::Status::Internal("not run"));
  std::thread rank1([&] { reports[1] = ranks[1]->Run(comms[1].get()); });
  reports[0] = ranks[0]->Run(comms[0].get());
  rank1.join();
  for (int r = 0; r < 2; ++r) {
    CAPTURE(r);
    INFO(reports[r].status().ToString());
    REQUIRE(reports[r].ok());
    const dlio::RunReport& report = *reports[r];
    CHECK(report.rank == r);
    CHECK(report.world == 2);
    REQUIRE(report.epochs.size() == 2);
    const uint64_t real = r == 0 ? 3 : 2;  // steps with a batch; the epoch has 3
    for (const auto& e : report.epochs) {
      CHECK(e.steps.size() == real);
      CHECK(e.metrics.samples == real);
      CHECK(e.metrics.duration_s == Approx(real * 0.510));
      CHECK(e.metrics.au_percent == Approx(100.0 * 500 / 510));
      CHECK(e.samples_per_s_sum == Approx(3 / 1.53 + 2 / 1.02));  // summed over the ranks
    }
    CHECK(ranks[r]->saves == std::vector<SaveCall>{{1, 3}, {2, 6}});
  }
}

TEST_CASE("RunWorkload on one rank takes no idle step: every step has a batch and compute") {
  // Idle steps (a rank whose shard ran out waits in the barrier) need a world of several ranks;
  // on one rank each step the epoch counts is a step with a batch, its load and its compute.
  Fixture fx;
  fx.config.reader.drop_last = false;
  auto report = fx.Run();
  REQUIRE(report.ok());
  for (const auto& e : report->epochs) {
    REQUIRE(e.steps.size() == 3);
    for (const auto& s : e.steps) {
      CHECK(s.samples > 0);
      CHECK(s.compute_ns == 500 * kMs);
      CHECK(s.barrier_ns == 0);
    }
  }
}

TEST_CASE("RunWorkload's AU is compute time over the epoch's time on the injected clock") {
  Fixture fx;
  fx.config.reader.drop_last = false;
  SECTION("every step counted") {
    // Steps of 4, 4, 2 samples: load 40 + 40 + 20 ms, compute 3 x 500 ms, epoch 1600 ms.
    auto report = fx.Run();
    REQUIRE(report.ok());
    for (const auto& e : report->epochs) {
      REQUIRE(e.steps.size() == 3);
      CHECK(e.steps[0].load_ns == 40 * kMs);
      CHECK(e.steps[1].load_ns == 40 * kMs);
      CHECK(e.steps[2].load_ns == 20 * kMs);
      CHECK(e.metrics.duration_s == Approx(1.6));
      CHECK(e.metrics.compute_s == Approx(1.5));
      CHECK(e.metrics.au_percent == Approx(100.0 * 1500 / 1600));
      CHECK(e.au_percent_mean == Approx(100.0 * 1500 / 1600));
      CHECK(e.samples_per_s_sum == Approx(10 / 1.6));
    }
    // Epochs start and end on the injected clock's wall time (generation took no fake time).
    CHECK(report->epochs[0].start_us == kWallOriginUs);
    CHECK(report->epochs[0].end_us == kWallOriginUs + 1'600'000);
    CHECK(report->epochs[1].start_us == kWallOriginUs + 1'600'000);
    CHECK(report->epochs[1].end_us == kWallOriginUs + 3'200'000);
    CHECK(report->au_mean_percent == Approx(93.75));
    CHECK(report->au_stdev_percent == Approx(0).margin(1e-9));
    CHECK(report->au_met);  // metric.au 0.90
  }
  SECTION("the first step excluded") {
    // The excluded step's 40 + 500 ms leave the block: AU = 1000 / (1600 - 540).
    fx.config.train.excluded_start_steps = 1;
    fx.config.metric.au = 0.95;
    auto report = fx.Run();
    REQUIRE(report.ok());
    for (const auto& e : report->epochs) {
      CHECK(e.metrics.steps_counted == 2);
      CHECK(e.metrics.duration_s == Approx(1.06));
      CHECK(e.metrics.au_percent == Approx(100.0 * 1000 / 1060));
      CHECK(e.samples_per_s_sum == Approx(6 / 1.06));
    }
    CHECK(report->au_mean_percent == Approx(100.0 * 1000 / 1060));
    CHECK_FALSE(report->au_met);  // 94.3% < 95%
  }
}

TEST_CASE("RunWorkload saves at the step cadence counting steps across epochs") {
  Fixture fx;
  fx.config.reader.drop_last = false;  // 3 steps per epoch: global steps 1-3, 4-6, 7-9
  fx.config.train.epochs = 3;
  fx.config.workflow.checkpoint = true;
  fx.config.checkpoint.steps_between_checkpoints = 2;
  fx.save_durations = {250 * kMs};
  auto report = fx.Run();
  REQUIRE(report.ok());
  CHECK(fx.saves == std::vector<SaveCall>{{1, 2}, {2, 4}, {2, 6}, {3, 8}});
  CHECK(report->checkpoints.size() == 4);
  CHECK(report->checkpoint_type == "recording");
  REQUIRE(report->epochs.size() == 3);
  CHECK(report->epochs[0].checkpoint_ns == 250 * kMs);
  CHECK(report->epochs[1].checkpoint_ns == 500 * kMs);
  CHECK(report->epochs[2].checkpoint_ns == 250 * kMs);
  // Time spent saving inside an epoch is not part of the block AU is computed over.
  for (const auto& e : report->epochs) {
    CHECK(e.metrics.au_percent == Approx(100.0 * 1500 / 1600));
  }
  // DLIO's blocks end at each save: epoch 2 (global steps 4-6, saves after 4 and 6) has a block of
  // step 4 (40 + 500 ms), one of steps 5-6 (540 + 520 ms) and, as DLIO, an empty last one.
  const dlio::EpochReport& e2 = report->epochs[1];
  REQUIRE(e2.blocks.size() == 3);
  CHECK(e2.blocks[0].steps == 1);
  CHECK(e2.blocks[1].first_step == 1);
  CHECK(e2.blocks[1].steps == 2);
  CHECK(e2.blocks[2].steps == 0);
  CHECK(e2.blocks[0].end_us - e2.blocks[0].start_us == 540'000);
  CHECK(e2.blocks[1].start_us == e2.blocks[0].end_us + 250'000);  // the save between them
  CHECK(e2.blocks[1].end_us - e2.blocks[1].start_us == 1'060'000);
  CHECK(e2.blocks[1].metrics.au_percent == Approx(100.0 * 1000 / 1060));
  REQUIRE(e2.saves.size() == 2);
  CHECK(e2.saves[0].block == 1);
  CHECK(e2.saves[0].index == 1);  // the run's second save
  CHECK(e2.saves[1].block == 2);
  CHECK(e2.saves[1].end_us - e2.saves[1].start_us == 250'000);
  CHECK(report->epochs[0].blocks.size() == 2);  // steps 1-2, save, step 3
}

TEST_CASE("RunWorkload counts each epoch's steps for a checkpointer declaring DLIO's cadence") {
  Fixture fx;
  // Its entry, not its name, says so: registered under a name of its own.
  dlio::CheckpointerCapabilities dlio_cadence;
  dlio_cadence.dlio_cadence = true;
  REQUIRE(fx.registries.checkpointers
              .Register({"recording_dlio", "test", "", fx.Recording(), dlio_cadence})
              .ok());
  fx.config.checkpoint.type = "recording_dlio";
  fx.config.reader.drop_last = false;  // 3 steps per epoch, counted 1-3 in each
  fx.config.train.epochs = 3;
  fx.config.workflow.checkpoint = true;
  fx.config.checkpoint.steps_between_checkpoints = 2;
  auto report = fx.Run();
  REQUIRE(report.ok());
  CHECK(fx.saves == std::vector<SaveCall>{{1, 2}, {2, 2}, {3, 2}});
  CHECK(report->checkpoint_type == "recording_dlio");
}

TEST_CASE("a checkpoint-only run reads the first checkpoints when the entry declares DLIO's") {
  for (const bool dlio_cadence : {false, true}) {
    CAPTURE(dlio_cadence);
    Fixture fx;
    std::vector<uint64_t> loads;
    dlio::CheckpointerCapabilities declared;
    declared.dlio_cadence = dlio_cadence;
    auto shelf =
        [&loads](const dlio::CheckpointOptions&,
                 const dlio::CheckpointEnv&) -> dlio::Result<std::unique_ptr<dlio::Checkpointer>> {
      return std::unique_ptr<dlio::Checkpointer>(std::make_unique<ShelfCheckpointer>(&loads));
    };
    REQUIRE(fx.registries.checkpointers.Register({"shelf", "test", "", shelf, declared}).ok());
    fx.config.checkpoint.type = "shelf";
    fx.config.workflow.generate_data = false;
    fx.config.workflow.train = false;
    fx.config.workflow.checkpoint = true;
    fx.config.checkpoint.num_checkpoints_write = 0;
    fx.config.checkpoint.num_checkpoints_read = 2;
    auto report = fx.Run();
    REQUIRE(report.ok());
    // DLIO reads global_epoch1_step1..N, the first ones; otherwise the newest.
    CHECK(loads == (dlio_cadence ? std::vector<uint64_t>{0, 1} : std::vector<uint64_t>{2, 3}));
  }
}

TEST_CASE("RunWorkload saves after the epochs the epoch cadence names") {
  Fixture fx;
  fx.config.reader.drop_last = false;
  fx.config.train.epochs = 5;
  fx.config.workflow.checkpoint = true;
  fx.config.checkpoint.checkpoint_after_epoch = 2;
  fx.config.checkpoint.epochs_between_checkpoints = 2;
  fx.save_durations = {250 * kMs};
  auto report = fx.Run();
  REQUIRE(report.ok());
  // After epochs 2 and 4, at the global step that ends them (3 steps per epoch).
  CHECK(fx.saves == std::vector<SaveCall>{{2, 6}, {4, 12}});
  for (const auto& e : report->epochs) {
    CHECK(e.checkpoint_ns == 0);  // saved after the epoch's block
    CHECK(e.metrics.au_percent == Approx(100.0 * 1500 / 1600));
    // One block per epoch; DLIO names an epoch-cadence save after it: save_ckpt1.
    REQUIRE(e.blocks.size() == 1);
    CHECK(e.blocks[0].steps == 3);
    CHECK(e.saves.size() == (e.epoch == 2 || e.epoch == 4 ? 1u : 0u));
    for (const auto& s : e.saves) CHECK(s.block == 1);
  }
}

TEST_CASE("RunWorkload saves no checkpoint without workflow.checkpoint") {
  Fixture fx;
  fx.config.checkpoint.steps_between_checkpoints = 1;
  auto report = fx.Run();
  REQUIRE(report.ok());
  CHECK(fx.saves.empty());
  CHECK(report->checkpoints.empty());
  CHECK(report->checkpoint_saves_all.empty());
}

TEST_CASE("RunWorkload reports the longest checkpoint save, not the mean") {
  Fixture fx;
  fx.config.reader.drop_last = true;  // 2 steps per epoch
  fx.config.train.epochs = 3;
  fx.config.workflow.checkpoint = true;
  fx.config.checkpoint.steps_between_checkpoints = 2;
  fx.save_durations = {1000 * kMs, 3000 * kMs, 2000 * kMs};
  auto report = fx.Run();
  REQUIRE(report.ok());
  REQUIRE(report->checkpoint_saves_all.size() == 3);
  CHECK(report->checkpoint_saves_all[0].seconds == Approx(1.0));
  CHECK(report->checkpoint_saves_all[1].seconds == Approx(3.0));
  CHECK(report->checkpoint_saves_all[2].seconds == Approx(2.0));
  CHECK(report->checkpoint_max_duration_s == Approx(3.0));  // the mean would be 2
  CHECK(report->checkpoint_bytes_total == 1000);            // per save, one rank
}

TEST_CASE("summary.json reports epoch 1 apart from the steady state, and the buffers prepared") {
  Fixture fx;
  fx.config.reader.drop_last = true;  // 2 steps of 4 samples per epoch
  fx.config.train.epochs = 3;
  auto report = fx.Run();
  REQUIRE(report.ok());
  const auto summary = nlohmann::json::parse(report->summary_json);
  const auto& m = summary["metric"];
  // Every epoch: 2 steps of 40 ms of reads (4 x 10 ms, inline) and 500 ms of compute.
  CHECK(m["train_first_epoch_au_percentage"].get<double>() == Approx(100.0 * 1000 / 1080));
  CHECK(m["train_first_epoch_throughput_samples_per_second"].get<double>() == Approx(8 / 1.08));
  CHECK(m["train_first_epoch_io_SI_MB_per_second"].get<double>() == Approx(8 * 64 / 1.08 / 1e6));
  CHECK(m["train_steady_au_mean_percentage"].get<double>() == Approx(100.0 * 1000 / 1080));
  CHECK(m["train_steady_throughput_mean_samples_per_second"].get<double>() == Approx(8 / 1.08));
  CHECK(m["train_steady_io_mean_SI_MB_per_second"].get<double>() == Approx(8 * 64 / 1.08 / 1e6));
  CHECK(m["train_first_epoch_to_steady_throughput_ratio"].get<double>() == Approx(1.0));
  // dlio-run's loop reads no sample byte: the reader (the consumer, reading inline) reads every
  // sample into one buffer of its own, the 256 KiB ring of a format whose readers stream samples
  // (ReadScratch::kRingBytes), touched before epoch 1 (the fake clock does not move while the
  // pipeline is built).
  CHECK(m["buffer_prepared_bytes"].get<uint64_t>() == uint64_t{256} << 10);
  CHECK(m["buffer_prepare_seconds"].get<double>() == 0.0);
  CHECK(report->summary_text.find("first epoch: AU 92.59%, 7.4 samples/s; steady state (epochs "
                                  "2-3): AU 92.59%, 7.4 samples/s (first/steady 1.000)") !=
        std::string::npos);
}

TEST_CASE("summary.json's steady state is epochs 2..N and epoch 1 is the first of them") {
  Fixture fx;
  fx.config.reader.drop_last = true;
  fx.config.train.epochs = 4;
  fx.config.train.computation_time.type = dlio::DistributionSpec::Type::kUniform;
  fx.config.train.computation_time.min = 0.1;
  fx.config.train.computation_time.max = 0.9;
  auto report = fx.Run();
  REQUIRE(report.ok());
  const auto summary = nlohmann::json::parse(report->summary_json);
  const auto& m = summary["metric"];
  const auto au = m["train_au_percentage"].get<std::vector<double>>();
  const auto tp = m["train_throughput_samples_per_second"].get<std::vector<double>>();
  REQUIRE(au.size() == 4);
  REQUIRE(tp[0] != Approx(tp[1]));  // the epochs differ
  CHECK(m["train_first_epoch_au_percentage"].get<double>() == Approx(au[0]));
  CHECK(m["train_first_epoch_throughput_samples_per_second"].get<double>() == Approx(tp[0]));
  CHECK(m["train_steady_au_mean_percentage"].get<double>() == Approx((au[1] + au[2] + au[3]) / 3));
  const double steady = (tp[1] + tp[2] + tp[3]) / 3;
  CHECK(m["train_steady_throughput_mean_samples_per_second"].get<double>() == Approx(steady));
  CHECK(m["train_first_epoch_to_steady_throughput_ratio"].get<double>() == Approx(tp[0] / steady));

  // One epoch: no steady state to report.
  fx.config.train.epochs = 1;
  auto one = fx.Run();
  REQUIRE(one.ok());
  const auto m1 = nlohmann::json::parse(one->summary_json)["metric"];
  CHECK(m1.contains("train_first_epoch_au_percentage"));
  CHECK(!m1.contains("train_steady_au_mean_percentage"));
  CHECK(!m1.contains("train_first_epoch_to_steady_throughput_ratio"));
}
