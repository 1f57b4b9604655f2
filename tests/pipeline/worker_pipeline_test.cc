// The pytorch pipeline (worker processes, pipeline/worker_pipeline.h): order and bytes, whole
// batches per worker process, the prefetch_factor bound, persistent vs re-forked workers, errors
// in order, a killed worker, and an early Stop, all with no child process left behind.
#include "pipeline/worker_pipeline.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "dlio/pipeline.h"
#include "dlio/registries.h"
#include "dlio/tracer.h"
#include "pipeline/bounded_read_buffer.h"
#include "pipeline/fake_source.h"
#include "pipeline/pytorch_options.h"
#include "pipeline/worker_channel.h"
#include "test_util.h"

namespace dlio {
namespace {

using testing::FakeSource;
using testing::TempDir;

// The pytorch pipeline's own options in `o` (pipeline/pytorch_options.h).
PytorchLoaderOptions& Own(PipelineOptions& o) { return o.sections.Get<PytorchLoaderOptions>(); }

std::vector<SampleRef> PlanOf(const FakeSource& source) {
  std::vector<SampleRef> plan;
  for (uint32_t f = 0; f < source.num_files(); ++f) {
    for (uint64_t i = 0; i < source.samples_per_file()[f]; ++i) plan.push_back({f, i});
  }
  return plan;
}

struct Fixture {
  TempDir dir;
  MemoryTracer tracer;  // enabled: the workers write their own traces under dir
  std::unique_ptr<Pipeline> Make(PipelineOptions options, DataSource* source) {
    Registries registries;
    REQUIRE(RegisterBuiltinPipelines(&registries.pipelines).ok());
    auto factory = registries.pipelines.Get("pytorch");
    REQUIRE(factory.ok());
    PipelineEnv env;
    env.source = source;
    env.tracer = &tracer;
    options.name = "pytorch";
    Own(options).worker_trace_prefix = dir / "trace-0";
    auto pipeline = (*factory)(options, env);
    INFO(pipeline.status().ToString());
    REQUIRE(pipeline.ok());
    return std::move(pipeline).value();
  }
  // Worker trace files, by the OS pid in their names.
  std::map<int, std::string> WorkerTraces() const {
    static const std::regex kName(R"(trace-0-worker-(\d+)-(\d+)\.pfw)");
    std::map<int, std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
      std::smatch m;
      const std::string name = e.path().filename().string();
      if (std::regex_match(name, m, kName)) out[std::stoi(m[2].str())] = e.path().string();
    }
    return out;
  }
  std::map<int, std::string> WaitForWorkers(size_t n) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    auto traces = WorkerTraces();
    while (traces.size() < n && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      traces = WorkerTraces();
    }
    return traces;
  }
};

// The steps (batch k + 1) whose samples one worker trace shows read, with the sample count.
std::map<int64_t, int> StepsIn(const std::string& path, int* worker_pid, std::string* name,
                               std::set<int>* tids = nullptr) {
  std::ifstream in(path);
  std::string line;
  std::map<int64_t, int> steps;
  while (std::getline(in, line)) {
    if (line == "[" || line == "]" || line.empty()) continue;
    if (line.back() == ',') line.pop_back();
    const auto e = nlohmann::json::parse(line);
    if (e.value("ph", "") == "M" && e.value("name", "") == "process_name") {
      *worker_pid = e.value("pid", 0);
      *name = e["args"].value("name", "");
    }
    if (e.value("name", "") != "item") continue;
    ++steps[e["args"].value("step", int64_t{-1})];
    if (tids != nullptr) tids->insert(e.value("tid", 0));
  }
  return steps;
}

bool NoChildren() { return ::waitpid(-1, nullptr, WNOHANG) == -1 && errno == ECHILD; }

// Reads an epoch; every batch in plan order with the right bytes.
void DrainChecked(Pipeline* p, const FakeSource& source, const std::vector<SampleRef>& plan,
                  uint64_t batch_size) {
  BatchLease lease;
  bool end = false;
  uint64_t next = 0;
  int64_t k = 0;
  while (true) {
    Status st = p->Next(&lease, &end);
    INFO(st.ToString());
    REQUIRE(st.ok());
    if (end) break;
    REQUIRE(lease->index == k++);
    for (const Sample& s : lease->samples) {
      REQUIRE(s.ref == plan[next++]);
      REQUIRE(source.Matches(s.ref, s.data, s.size));
    }
  }
  REQUIRE(next == plan.size() / batch_size * batch_size);
}

TEST_CASE("pytorch pipeline: batches in plan order with their bytes, whole batches per worker",
          "[pipeline][pytorch]") {
  const uint64_t workers = GENERATE(1, 2, 3);
  const uint64_t batch = GENERATE(1, 4);
  Fixture fx;
  FakeSource source(5, 7);  // 35 samples of varying sizes
  std::vector<SampleRef> plan = PlanOf(source);
  std::reverse(plan.begin(), plan.end());
  PipelineOptions o;
  o.batch_size = batch;
  o.read_threads = workers;
  o.prefetch_size = 2;
  auto p = fx.Make(o, &source);
  REQUIRE(p->StartEpoch(0, plan).ok());
  DrainChecked(p.get(), source, plan, batch);
  REQUIRE(p->Stop().ok());
  REQUIRE(NoChildren());

  const auto traces = fx.WorkerTraces();
  REQUIRE(traces.size() == workers);  // k distinct worker processes
  std::set<int64_t> all_steps;
  for (const auto& [pid, path] : traces) {
    int traced_pid = 0;
    std::string name;
    const auto steps = StepsIn(path, &traced_pid, &name);
    REQUIRE(traced_pid == pid);  // the OS pid, named first so trace-merge keeps it
    const std::regex worker_name(R"(dlio rank 0 worker (\d+))");
    std::smatch m;
    REQUIRE(std::regex_match(name, m, worker_name));
    const uint64_t w = std::stoull(m[1].str());
    for (const auto& [step, samples] : steps) {
      REQUIRE(static_cast<uint64_t>(step - 1) % workers == w);  // batch i by worker i % k
      REQUIRE(static_cast<uint64_t>(samples) == batch);         // the whole batch
      REQUIRE(all_steps.insert(step).second);
    }
  }
  REQUIRE(all_steps.size() == plan.size() / batch);
}

TEST_CASE("pytorch pipeline: prefetch_factor batches per worker, no more", "[pipeline][pytorch]") {
  const uint64_t workers = GENERATE(1, 2);
  const uint64_t prefetch_size = GENERATE(0, 2, 6);
  const uint64_t factor = PytorchPrefetchFactor(prefetch_size, workers);
  Fixture fx;
  FakeSource source(4, 16);
  PipelineOptions o;
  o.batch_size = 2;
  o.read_threads = workers;
  o.prefetch_size = prefetch_size;
  auto p = fx.Make(o, &source);
  REQUIRE(p->StartEpoch(0, PlanOf(source)).ok());
  // No Next: the workers read what they were sent, then wait.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  REQUIRE(p->Stop().ok());
  REQUIRE(NoChildren());
  std::set<int64_t> steps_read;
  for (const auto& [pid, path] : fx.WorkerTraces()) {
    int traced_pid = 0;
    std::string name;
    const auto steps = StepsIn(path, &traced_pid, &name);
    REQUIRE(steps.size() == factor);
    for (const auto& [step, n] : steps) steps_read.insert(step);
  }
  REQUIRE(steps_read.size() == factor * workers);
  REQUIRE(*steps_read.rbegin() == static_cast<int64_t>(factor * workers));
  CHECK(PytorchPrefetchFactor(0, 4) == 2);  // DLIO: prefetch_size 0 -> torch's default 2
  CHECK(PytorchPrefetchFactor(5, 2) == 3);  // ceil(prefetch_size / read_threads)
}

TEST_CASE("pytorch pipeline: workers re-forked every epoch unless persistent",
          "[pipeline][pytorch]") {
  const bool persistent = GENERATE(true, false);
  Fixture fx;
  FakeSource source(3, 8);
  const auto plan = PlanOf(source);
  PipelineOptions o;
  o.batch_size = 3;
  o.read_threads = 2;
  Own(o).persistent_workers = persistent;
  auto p = fx.Make(o, &source);
  for (uint64_t epoch = 0; epoch < 3; ++epoch) {
    REQUIRE(p->StartEpoch(epoch, plan).ok());
    DrainChecked(p.get(), source, plan, 3);
    // A DataLoader iterator ends its workers once exhausted (not persistent ones).
    REQUIRE(NoChildren() == !persistent);
  }
  REQUIRE(p->Stop().ok());
  REQUIRE(NoChildren());
  const auto traces = fx.WorkerTraces();
  REQUIRE(traces.size() == (persistent ? 2u : 6u));
  for (const auto& [pid, path] : traces) {
    // The worker's own thread id, even when the main process had traced (and cached its own
    // thread id) before forking it.
    int traced_pid = 0;
    std::string name;
    std::set<int> tids;
    StepsIn(path, &traced_pid, &name, &tids);
    REQUIRE(tids == std::set<int>{pid});
  }
}

TEST_CASE("pytorch pipeline: regions and read buffers sized from the options never grow",
          "[pipeline][pytorch]") {
  Fixture fx;
  FakeSource source(4, 8, /*fixed_size=*/100000);
  const auto plan = PlanOf(source);
  PipelineOptions o;
  o.batch_size = 4;
  o.read_threads = 2;
  o.prefetch_size = 2;  // prefetch_factor 1: 2 slots per worker
  o.reserve_sample_bytes = 100000;
  Own(o).reserve_batch_bytes = 400000;
  o.framework_client_costs = true;  // read buffers are read into, then collated from
  auto p = fx.Make(o, &source);
  // Persistent workers are forked (and have their memory mapped) before the first epoch.
  REQUIRE(!NoChildren());
  // Per slot: header and sample table, the batch's bytes, 64 bytes of alignment per sample.
  const uint64_t region = pipeline_internal::DataOffset(4) + 400000 + 4 * 64;
  CHECK(p->stats().reserved_bytes == 2 * 2 * region + 2 * 100000);
  CHECK(p->stats().buffers_allocated == 2 * 2 + 2);
  for (uint64_t epoch = 0; epoch < 3; ++epoch) {
    REQUIRE(p->StartEpoch(epoch, plan).ok());
    DrainChecked(p.get(), source, plan, 4);
  }
  CHECK(p->stats().samples_read == 96);
  CHECK(p->stats().buffer_growths == 0);
  REQUIRE(p->Stop().ok());
  REQUIRE(NoChildren());

  // Without the reservation each worker grows its read buffer once, and each of the 4 regions
  // grows once (from 64 KiB), all in epoch 1.
  o.reserve_sample_bytes = Own(o).reserve_batch_bytes = 0;
  auto lazy = fx.Make(o, &source);
  CHECK(lazy->stats().reserved_bytes == 0);
  REQUIRE(lazy->StartEpoch(0, plan).ok());
  DrainChecked(lazy.get(), source, plan, 4);
  CHECK(lazy->stats().buffer_growths == 2 + 2 * 2);
  REQUIRE(lazy->StartEpoch(1, plan).ok());
  DrainChecked(lazy.get(), source, plan, 4);
  CHECK(lazy->stats().buffer_growths == 2 + 2 * 2);
  REQUIRE(lazy->Stop().ok());
  REQUIRE(NoChildren());
}

// Batches of 4 samples from 2 workers, each with 2 slots (prefetch_factor 1).
PipelineOptions FourByTwoWorkers() {
  PipelineOptions o;
  o.batch_size = 4;
  o.read_threads = 2;
  o.prefetch_size = 2;
  return o;
}

// Epochs [from, to) of `p`, each checked; the pipeline's buffer growths after them.
uint64_t GrowthsAfterEpochs(Pipeline* p, const FakeSource& source,
                            const std::vector<SampleRef>& plan, uint64_t from, uint64_t to) {
  for (uint64_t epoch = from; epoch < to; ++epoch) {
    REQUIRE(p->StartEpoch(epoch, plan).ok());
    DrainChecked(p, source, plan, 4);
  }
  return p->stats().buffer_growths;
}

TEST_CASE("pytorch pipeline: without the client costs a worker reads into its batch's slot",
          "[pipeline][pytorch]") {
  // reader.client_costs none: no read buffer of its own, no collate copy, so with slots sized
  // for the batch nothing is allocated or grown in any epoch; without them each slot grows in
  // epoch 1 only.
  Fixture fx;
  FakeSource source(4, 8, /*fixed_size=*/100000);
  const auto plan = PlanOf(source);
  PipelineOptions o = FourByTwoWorkers();
  Own(o).reserve_batch_bytes = 400000;
  auto p = fx.Make(o, &source);
  const uint64_t region = pipeline_internal::DataOffset(4) + 400000 + 4 * 64;
  CHECK(p->stats().reserved_bytes == 2 * 2 * region);  // no read buffers
  CHECK(p->stats().buffers_allocated == 2 * 2);
  CHECK(GrowthsAfterEpochs(p.get(), source, plan, 0, 3) == 0);
  REQUIRE(p->Stop().ok());

  Own(o).reserve_batch_bytes = 0;
  auto lazy = fx.Make(o, &source);
  const uint64_t first_epoch = GrowthsAfterEpochs(lazy.get(), source, plan, 0, 1);
  CHECK(first_epoch > 0);
  CHECK(GrowthsAfterEpochs(lazy.get(), source, plan, 1, 3) == first_epoch);
  REQUIRE(lazy->Stop().ok());
  REQUIRE(NoChildren());
}

// One epoch of batches of 4 samples of `sample` bytes each collated to their first `head`.
void DrainCollated(Pipeline* p, const std::vector<SampleRef>& plan, uint64_t epoch, uint64_t sample,
                   uint64_t head) {
  REQUIRE(p->StartEpoch(epoch, plan).ok());
  BatchLease lease;
  bool end = false;
  uint64_t next = 0;
  while (true) {
    REQUIRE(p->Next(&lease, &end).ok());
    if (end) break;
    CHECK(lease->bytes == 4 * sample);  // read whole
    for (const Sample& s : lease->samples) {
      REQUIRE(s.ref == plan[next++]);
      REQUIRE(s.size == head);
      CHECK(s.data[0] == FakeSource::ByteAt(s.ref, 0));
      CHECK(s.data[head - 1] == FakeSource::ByteAt(s.ref, head - 1));
    }
  }
  CHECK(next == plan.size());
}

TEST_CASE("pytorch pipeline: a batch holds at most collate_limit_bytes a sample",
          "[pipeline][pytorch]") {
  // DLIO's loader hands PyTorch its resized array (dataset.record_length_bytes_resize), not the
  // sample it read: the collate copies no more than that, with or without the client costs
  // (the slots never hold more than the framework's batch), and Batch::bytes still counts the
  // bytes read.
  Fixture fx;
  FakeSource source(4, 4, /*fixed_size=*/100000);
  const auto plan = PlanOf(source);
  for (const bool framework : {true, false}) {
    CAPTURE(framework);
    PipelineOptions o = FourByTwoWorkers();
    o.framework_client_costs = framework;
    Own(o).collate_limit_bytes = 1000;
    o.reserve_sample_bytes = 100000;  // a read buffer per worker
    Own(o).reserve_batch_bytes = 4 * 1000;
    auto p = fx.Make(o, &source);
    DrainCollated(p.get(), plan, 0, 100000, 1000);
    // The slots stayed at the collated size: no batch grew them to whole samples.
    CHECK(p->stats().buffer_growths == 0);
    REQUIRE(p->Stop().ok());
  }
  // Without a limit (and without the client costs) the whole sample is in the slot: it was read
  // there.
  PipelineOptions o = FourByTwoWorkers();
  auto whole = fx.Make(o, &source);
  REQUIRE(whole->StartEpoch(0, plan).ok());
  DrainChecked(whole.get(), source, plan, 4);
  REQUIRE(whole->Stop().ok());
  REQUIRE(NoChildren());
}

// Proportional set size of this process's shared memory, from /proc/self/smaps_rollup (bytes).
uint64_t PssShmemBytes() {
  std::ifstream in("/proc/self/smaps_rollup");
  std::string key;
  uint64_t kib = 0;
  while (in >> key) {
    if (key == "Pss_Shmem:" && in >> kib) return kib * 1024;
    in.ignore(1 << 10, '\n');
  }
  return 0;
}

TEST_CASE("bounded read buffer: one read of a whole sample, memory of the head and one ring",
          "[pipeline][pytorch]") {
  // The storage's request is unchanged (one pread of the whole 8 MiB sample into one buffer);
  // the memory behind the buffer is its 64 KiB head and one ring, and the head holds the
  // sample's first bytes as read.
  TempDir dir;
  const std::string path = dir / "sample.bin";
  const uint64_t size = uint64_t{8} << 20;
  {
    std::vector<char> bytes(size);
    for (uint64_t i = 0; i < size; ++i) bytes[i] = static_cast<char>(i * 13 + (i >> 12));
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(size));
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  const uint64_t before = PssShmemBytes();
  pipeline_internal::BoundedReadBuffer buffer;
  const uint64_t ring = 256 << 10;
  REQUIRE(buffer.Init("test-read", 64 << 10, ring, 1 << 20).ok());
  REQUIRE(buffer.Cover(size).ok());  // outgrown: the span grows over the same memory
  REQUIRE(buffer.span() >= size);
  CHECK(buffer.physical_bytes() == (64 << 10) + ring);
  CHECK(::pread(fd, buffer.data(), size, 0) == static_cast<ssize_t>(size));
  ::close(fd);
  for (uint64_t i = 0; i < (64 << 10); ++i) {
    if (buffer.data()[i] != static_cast<uint8_t>(i * 13 + (i >> 12))) FAIL("head byte " << i);
  }
  // The last bytes read are in the ring, intact.
  const uint64_t last = size - 1;
  CHECK(buffer.data()[last] == static_cast<uint8_t>(last * 13 + (last >> 12)));
  const uint64_t after = PssShmemBytes();
  CHECK(after - before <= buffer.physical_bytes() + (16 << 10));
  CHECK(after - before < size / 4);
}

TEST_CASE("pytorch pipeline: a bounded read buffer keeps a worker's memory below a sample",
          "[pipeline][pytorch]") {
  // Samples of 3 MiB, 64 KiB collated: each worker reads them whole into a buffer of 64 KiB +
  // 1 MiB of memory (a first span of 1 MiB, outgrown in the first batch) and collates their
  // first 64 KiB intact. Without the bound the worker's buffer holds a whole sample.
  Fixture fx;
  const uint64_t sample = 3 << 20, head = 64 << 10;
  FakeSource source(2, 4, sample);
  const auto plan = PlanOf(source);
  PipelineOptions o = FourByTwoWorkers();
  Own(o).collate_limit_bytes = head;
  Own(o).bounded_read_bytes = head;
  o.reserve_sample_bytes = 1 << 20;
  const uint64_t physical = pipeline_internal::BoundedReadBuffer::PhysicalBytesFor(
      head, pipeline_internal::BoundedReadBuffer::kRingBytes);
  auto p = fx.Make(o, &source);
  CHECK(p->stats().reserved_bytes == 2 * physical);
  DrainCollated(p.get(), plan, 0, sample, head);
  DrainCollated(p.get(), plan, 1, sample, head);
  CHECK(p->stats().worker_read_buffer_bytes == physical);
  CHECK(physical < sample / 2);
  REQUIRE(p->Stop().ok());

  Own(o).bounded_read_bytes = 0;
  auto whole = fx.Make(o, &source);
  DrainCollated(whole.get(), plan, 0, sample, head);
  CHECK(whole->stats().worker_read_buffer_bytes >= sample);
  REQUIRE(whole->Stop().ok());
  REQUIRE(NoChildren());
}

TEST_CASE("pytorch pipeline: a consumer that reads no byte gets nothing collated",
          "[pipeline][pytorch]") {
  // deliver_sample_bytes false (dlio-run): every sample is still read whole (Batch::bytes), no
  // byte is collated into the slots, and a bounded buffer keeps no head: one ring per worker.
  Fixture fx;
  const uint64_t sample = 3 << 20;
  FakeSource source(2, 4, sample);
  const auto plan = PlanOf(source);
  PipelineOptions o = FourByTwoWorkers();
  o.deliver_sample_bytes = false;
  Own(o).collate_limit_bytes = 64 << 10;
  Own(o).bounded_read_bytes = 64 << 10;
  o.reserve_sample_bytes = sample;
  auto p = fx.Make(o, &source);
  for (uint64_t epoch = 0; epoch < 2; ++epoch) {
    REQUIRE(p->StartEpoch(epoch, plan).ok());
    BatchLease lease;
    bool end = false;
    uint64_t next = 0;
    while (p->Next(&lease, &end).ok() && !end) {
      CHECK(lease->bytes == 4 * sample);
      for (const Sample& s : lease->samples) {
        REQUIRE(s.ref == plan[next++]);
        CHECK(s.size == 0);
      }
    }
    CHECK(next == plan.size());
  }
  CHECK(p->stats().worker_read_buffer_bytes == pipeline_internal::BoundedReadBuffer::kRingBytes);
  CHECK(p->stats().buffer_growths == 0);
  REQUIRE(p->Stop().ok());
  REQUIRE(NoChildren());
}

TEST_CASE("pytorch pipeline: a worker's read error arrives in order, naming the file",
          "[pipeline][pytorch]") {
  Fixture fx;
  FakeSource source(4, 6);
  source.FailAt({2, 3});  // plan position 15: batch 3 with batch_size 4
  const auto plan = PlanOf(source);
  PipelineOptions o;
  o.batch_size = 4;
  o.read_threads = 2;
  auto p = fx.Make(o, &source);
  REQUIRE(p->StartEpoch(0, plan).ok());
  BatchLease lease;
  bool end = false;
  for (int k = 0; k < 3; ++k) {
    REQUIRE(p->Next(&lease, &end).ok());
    REQUIRE(lease->index == k);
  }
  Status st = p->Next(&lease, &end);
  REQUIRE(st.code() == StatusCode::kIOError);
  REQUIRE_THAT(st.message(), Catch::Contains("data/file_2.bin") &&
                                 Catch::Contains("injected failure") &&
                                 Catch::Contains("batch 3") && Catch::Contains("pytorch worker 1"));
  REQUIRE(p->Next(&lease, &end).code() == StatusCode::kIOError);  // sticky
  // The next epoch works again (the failure is gone from a fresh fork's copy only when cleared
  // before it; the persistent workers keep their copy, so read around it).
  std::vector<SampleRef> good(plan.begin(), plan.begin() + 12);
  REQUIRE(p->StartEpoch(1, good).ok());
  DrainChecked(p.get(), source, good, 4);
  REQUIRE(p->Stop().ok());
  REQUIRE(NoChildren());
}

TEST_CASE("pytorch pipeline: a killed worker is an error, not a hang", "[pipeline][pytorch]") {
  Fixture fx;
  FakeSource source(4, 8);
  source.set_delay_us(20000);
  PipelineOptions o;
  o.batch_size = 4;
  o.read_threads = 2;
  auto p = fx.Make(o, &source);
  REQUIRE(p->StartEpoch(0, PlanOf(source)).ok());
  const auto traces = fx.WaitForWorkers(2);
  REQUIRE(traces.size() == 2);
  for (const auto& [pid, path] : traces) REQUIRE(::kill(pid, SIGKILL) == 0);
  auto next = std::async(std::launch::async, [&] {
    BatchLease lease;
    bool end = false;
    return p->Next(&lease, &end);
  });
  REQUIRE(next.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
  const Status st = next.get();
  REQUIRE(st.code() == StatusCode::kIOError);
  REQUIRE_THAT(st.message(), Catch::Contains("killed by signal 9") && Catch::Contains("batch 0") &&
                                 Catch::Contains("data/file_0.bin"));
  // A new epoch forks new workers.
  source.set_delay_us(0);
  const auto plan = PlanOf(source);
  REQUIRE(p->StartEpoch(1, plan).ok());
  DrainChecked(p.get(), source, plan, 4);
  REQUIRE(p->Stop().ok());
  REQUIRE(NoChildren());
}

TEST_CASE("pytorch pipeline: Stop from another thread ends a blocked Next and every worker",
          "[pipeline][pytorch]") {
  Fixture fx;
  FakeSource source(2, 64);
  source.set_delay_us(200000);  // 0.2 s per sample: the prefetched batches would take seconds
  PipelineOptions o;
  o.batch_size = 8;
  o.read_threads = 2;
  o.prefetch_size = 4;
  auto p = fx.Make(o, &source);
  REQUIRE(p->StartEpoch(0, PlanOf(source)).ok());
  auto next = std::async(std::launch::async, [&] {
    BatchLease lease;
    bool end = false;
    return p->Next(&lease, &end);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto start = std::chrono::steady_clock::now();
  REQUIRE(p->Stop().ok());
  REQUIRE(next.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  REQUIRE(next.get().code() == StatusCode::kCancelled);
  REQUIRE(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  REQUIRE(NoChildren());
  REQUIRE(p->StartEpoch(1, PlanOf(source)).code() == StatusCode::kFailedPrecondition);
}

TEST_CASE("pytorch pipeline: read_threads 0 reads in the main process", "[pipeline][pytorch]") {
  Fixture fx;
  FakeSource source(3, 5);
  const auto plan = PlanOf(source);
  PipelineOptions o;
  o.batch_size = 2;
  o.read_threads = 0;
  auto p = fx.Make(o, &source);
  REQUIRE(p->StartEpoch(0, plan).ok());
  DrainChecked(p.get(), source, plan, 2);
  REQUIRE(source.reads() == 14);  // counted here: no fork
  REQUIRE(fx.WorkerTraces().empty());
}

}  // namespace
}  // namespace dlio
