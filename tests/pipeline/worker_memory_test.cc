// The pytorch pipeline's memory (worker processes, pipeline/worker_pipeline.h): batch regions and
// read buffers sized from the options, samples read straight into their slot, the collate limit,
// the bounded read buffer and its ring, and a consumer that reads no byte.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "pipeline/bounded_read_buffer.h"
#include "pipeline/read_scratch.h"
#include "pipeline/worker_channel.h"
#include "pipeline/worker_pipeline_test_util.h"

namespace dlio {
namespace {

using testing::FakeSource;
using testing::TempDir;
using worker_test::DrainChecked;
using worker_test::Fixture;
using worker_test::NoChildren;
using worker_test::Own;
using worker_test::PlanOf;

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

// Reads `epochs` epochs of batches of 4 `sample`-byte samples from a pipeline that collates
// nothing: each batch whole (Batch::bytes), in plan order, no byte of it in its slot.
void DrainUncollated(Pipeline* p, const std::vector<SampleRef>& plan, uint64_t epochs,
                     uint64_t sample) {
  for (uint64_t epoch = 0; epoch < epochs; ++epoch) {
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
  DrainUncollated(p.get(), plan, 2, sample);
  CHECK(p->stats().worker_read_buffer_bytes == pipeline_internal::BoundedReadBuffer::kRingBytes);
  CHECK(p->stats().buffer_growths == 0);
  REQUIRE(p->Stop().ok());
  REQUIRE(NoChildren());
}

TEST_CASE("pytorch pipeline: with nothing collated a streamed sample goes through a 256 KiB ring",
          "[pipeline][pytorch]") {
  // No bound asked for (bounded_read_bytes 0), nothing collated, a format that streams its
  // samples: each worker reads every sample whole through a reader thread's ring
  // (ReadScratch::kRingBytes of memory), as the threaded pipeline does, and holds no read buffer
  // of a sample's size. A format that reads a sample back keeps a whole sample's buffer.
  Fixture fx;
  const uint64_t sample = 3 << 20;
  FakeSource source(2, 4, sample);
  const auto plan = PlanOf(source);
  PipelineOptions o = FourByTwoWorkers();
  o.deliver_sample_bytes = false;
  o.samples_stream = true;
  o.reserve_sample_bytes = 1 << 20;  // outgrown by the first sample: the span grows, not the ring
  const uint64_t ring = pipeline_internal::BoundedReadBuffer::PhysicalBytesFor(
      0, pipeline_internal::ReadScratch::kRingBytes);
  auto p = fx.Make(o, &source);
  CHECK(p->stats().reserved_bytes == 2 * ring);
  DrainUncollated(p.get(), plan, 2, sample);
  CHECK(p->stats().worker_read_buffer_bytes == ring);
  REQUIRE(p->Stop().ok());

  o.samples_stream = false;
  auto whole = fx.Make(o, &source);
  DrainUncollated(whole.get(), plan, 1, sample);
  CHECK(whole->stats().worker_read_buffer_bytes >= sample);
  REQUIRE(whole->Stop().ok());
  REQUIRE(NoChildren());
}

}  // namespace
}  // namespace dlio
