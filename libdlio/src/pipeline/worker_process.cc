#include "pipeline/worker_process.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "core/thread_name.h"
#include "core/thread_priority.h"
#include "dlio/ai_events.h"
#include "dlio/tracer.h"
#include "pipeline/bounded_read_buffer.h"

namespace dlio::pipeline_internal {
namespace {

class Worker {
 public:
  explicit Worker(const WorkerSetup& setup)
      : s_(setup),
        dist_(setup.preprocess_time, MixSeed(setup.seed, setup.rank, 0x3070, setup.worker)),
        preprocess_(setup.decoder != nullptr || !setup.preprocess_time.AlwaysZero()) {
    if (s_.read_buffer != nullptr && s_.read_buffer->Refresh().ok() &&
        s_.read_buffer->mapped() > 0) {
      buffer_.Borrow(s_.read_buffer->data(), s_.read_buffer->mapped());
    }
    buffer_.KeepHeld(true);  // what the Dataset returned lives until the batch is collated
  }

  void StartTracing() {
    if (!s_.trace_prefix.empty()) {
      TraceFileOptions to;
      to.path = StrCat(s_.trace_prefix, "-worker-", s_.worker, "-", ::getpid(), ".pfw",
                       s_.trace_gzip ? ".gz" : "");
      to.pid = static_cast<int32_t>(::getpid());
      to.process_name =
          "dlio rank " + std::to_string(s_.rank) + " worker " + std::to_string(s_.worker);
      to.name_process_first = true;
      auto made = MakeTraceFileTracer(to);
      if (made.ok()) {
        tracer_ = std::move(made).value();
      } else {
        setup_error_ = made.status();
      }
    }
    // Never the main process's tracer: its copy here shares the main process's trace file.
    if (s_.storage != nullptr) s_.storage->Bind(s_.clock, tracer_.get());
  }

  // Maps this worker's memory into its page tables before any batch (a worker's first writes
  // would otherwise fault in every page of its regions), then tells the main process it is ready.
  bool Ready() {
    Status status = setup_error_;
    for (SharedRegion* region : s_.regions) {
      if (status.ok()) status = region->Refresh();
      if (status.ok()) status = region->Populate();
    }
    if (status.ok() && s_.read_buffer != nullptr) status = s_.read_buffer->Populate();
    if (status.ok() && s_.read_ring > 0) {
      // Nothing collated: no byte of a sample needs memory of its own.
      const uint64_t head = Collates() ? s_.bounded_read : 0;
      status = bounded_.Init(StrCat("dlio-worker-", s_.worker, "-read"), head, s_.read_ring,
                             std::max(s_.read_span, head));
      if (status.ok()) buffer_.Borrow(bounded_.data(), bounded_.span());
    }
    if (!status.ok()) setup_error_ = status;  // reported with the first batch
    WorkerResult ready;
    ready.k = kWorkerReady;
    return WriteFull(s_.channel, &ready, sizeof ready).ok();
  }

  // Serves commands until told to stop or the channel closes.
  void Serve() {
    while (true) {
      WorkerCommand cmd;
      if (!ReadFull(s_.channel, &cmd, sizeof cmd).ok() || cmd.type != kCommandBatch) return;
      if (Stopping()) return;
      WorkerResult result;
      result.k = cmd.k;
      result.slot = cmd.slot;
      const IoStats before = s_.storage != nullptr ? s_.storage->stats() : IoStats();
      Status status = setup_error_;
      buffer_growths_ = 0;
      if (status.ok()) {
        status = cmd.slot < s_.regions.size()
                     ? RunBatch(cmd, s_.regions[cmd.slot], &result)
                     : Status::Internal("pipeline 'pytorch': no slot ", cmd.slot);
      }
      std::string message = status.message();
      if (message.size() > kMaxResultMessage) message.resize(kMaxResultMessage);
      if (s_.storage != nullptr) {
        const IoStats after = s_.storage->stats();
        result.read_ops = after.read_ops - before.read_ops;
        result.read_bytes = after.read_bytes - before.read_bytes;
        result.opens = after.opens - before.opens;
        result.closes = after.closes - before.closes;
      }
      result.code = static_cast<int32_t>(status.code());
      result.message_size = static_cast<uint32_t>(message.size());
      result.buffer_growths = buffer_growths_;
      result.read_buffer_bytes = ReadBufferBytes();
      if (cmd.slot < s_.regions.size()) result.region_size = s_.regions[cmd.slot]->mapped();
      std::string out(reinterpret_cast<const char*>(&result), sizeof result);
      out += message;
      if (!WriteFull(s_.channel, out.data(), out.size()).ok()) return;
    }
  }

  void Finish() {
    if (tracer_) (void)tracer_->Flush();
    tracer_.reset();  // writes the footer
  }

 private:
  Status RunBatch(const WorkerCommand& cmd, SharedRegion* region, WorkerResult* result) {
    DLIO_RETURN_NOT_OK(region->Refresh());
    const uint64_t n = cmd.count;
    if (region->mapped() < DataOffset(n)) {
      return Status::Internal("pipeline 'pytorch': slot region smaller than its batch");
    }
    refs_.resize(n);
    held_.clear();  // a batch that failed may have left some
    std::memcpy(refs_.data(), region->data() + RefsOffset(), n * sizeof(RegionRef));
    uint64_t offset = DataOffset(n);
    result->read_start_ns = s_.clock->NowNanos();
    for (uint64_t j = 0; j < n; ++j) {
      if (Stopping()) return Status::Cancelled("pipeline 'pytorch': worker stopped");
      const SampleRef ref{refs_[j].file, refs_[j].index};
      if (!s_.framework_client_costs && s_.collate_limit == 0 && s_.deliver) {
        DLIO_RETURN_NOT_OK(ReadIntoSlot(region, offset));
      }
      Status status = ReadOne(cmd, ref, &result->bytes_read);
      if (!status.ok()) {
        const std::string path =
            ref.file < s_.source->num_files() ? s_.source->file_path(ref.file) : "<no such file>";
        return status.WithContext(StrCat("pipeline: sample ", ref.index, " of file ", ref.file,
                                         " (", path, ") in batch ", cmd.k, " of epoch ", cmd.epoch,
                                         ", read by pytorch worker ", s_.worker, " (pid ",
                                         ::getpid(), ")"));
      }
      // The Dataset's return value stays in the batch's list until the collate below.
      held_.push_back(buffer_.TakeHeld());
      const SampleBuffer& bytes = delivered_ != nullptr ? *delivered_ : buffer_;
      // The collate step: the sample is copied into the batch's shared memory, at most
      // collate_limit bytes of it (DLIO's resized array), whatever the client costs. Without
      // the client costs and without a limit it was read there, unless it outgrew the slot (or
      // was decoded); with a limit it was read into the worker's reused buffer. Nothing is
      // collated when the consumer reads no byte and the framework's costs are not asked for.
      uint64_t size = Collates() ? bytes.size() : 0;
      if (s_.collate_limit > 0) size = std::min(size, s_.collate_limit);
      largest_ = std::max(largest_, size);
      const bool in_place = bytes.data() == region->data() + offset;
      if (!in_place) DLIO_RETURN_NOT_OK(region->Reserve(offset + size));
      if (!in_place && size > 0) std::memcpy(region->data() + offset, bytes.data(), size);
      auto* samples = reinterpret_cast<RegionSample*>(region->data() + SamplesOffset(n));
      samples[j] = RegionSample{offset, size, buffer_.size()};
      offset = (offset + size + 63) & ~uint64_t{63};
      DLIO_RETURN_NOT_OK(bounded_.Reclaim(&buffer_));
    }
    held_.clear();  // collated: the samples' arrays are freed
    result->read_end_ns = s_.clock->NowNanos();
    auto* header = reinterpret_cast<RegionHeader*>(region->data());
    header->count = n;
    header->data_end = offset;
    return Status::OK();
  }

  // Whether samples' bytes are copied into the batch's slot
  // (PipelineOptions::deliver_sample_bytes).
  bool Collates() const { return s_.deliver || s_.framework_client_costs; }

  // Without the client costs the next sample is read straight into the batch's slot, at
  // `offset`: the slot is made large enough for the largest sample seen so far (a larger one is
  // read into the heap and copied, and the slot grows for the next time).
  Status ReadIntoSlot(SharedRegion* region, uint64_t offset) {
    DLIO_RETURN_NOT_OK(region->Reserve(offset + largest_));
    buffer_.Borrow(region->data() + offset, region->mapped() - offset);
    return Status::OK();
  }

  // The memory the worker reads samples into, as it stands between batches (WorkerResult).
  uint64_t ReadBufferBytes() const {
    if (bounded_.data() != nullptr && buffer_.data() == bounded_.data()) {
      return bounded_.physical_bytes();
    }
    return std::max<uint64_t>(buffer_.capacity(), decoded_.capacity());
  }

  Status ReadOne(const WorkerCommand& cmd, const SampleRef& ref, uint64_t* bytes_read) {
    const int64_t wall_start = tracer_ ? s_.clock->WallMicros() : 0;
    const int64_t start = s_.clock->NowNanos();
    const size_t capacity = buffer_.capacity();
    Status status = s_.source->Read(ref, &buffer_);
    if (buffer_.capacity() != capacity) ++buffer_growths_;
    if (tracer_) {
      TraceEvent event = ai_events::AiSpan(
          ai_events::kDataCat, ai_events::kItem, wall_start, (s_.clock->NowNanos() - start) / 1000,
          static_cast<int64_t>(cmd.epoch) + 1, cmd.k + 1, static_cast<int64_t>(ref.index));
      event.file_id = ref.file < s_.source->num_files()
                          ? tracer_->InternFile(s_.source->file_path(ref.file))
                          : -1;
      event.ret = status.ok() ? static_cast<int64_t>(buffer_.size()) : -1;
      tracer_->Record(event);
    }
    DLIO_RETURN_NOT_OK(status);
    *bytes_read += buffer_.size();
    return Preprocess(cmd, ref);
  }

  Status Preprocess(const WorkerCommand& cmd, const SampleRef& ref) {
    delivered_ = nullptr;
    const int64_t wall_start = tracer_ ? s_.clock->WallMicros() : 0;
    if (s_.decoder != nullptr) {
      const size_t capacity = decoded_.capacity();
      DLIO_RETURN_NOT_OK(s_.decoder->DecodeWithLimit(buffer_.data(), buffer_.size(),
                                                     s_.max_decoded_bytes, &decoded_));
      if (decoded_.capacity() != capacity) ++buffer_growths_;
      delivered_ = &decoded_;
    }
    // Without preprocessing the draw is skipped, but DLIO's reader traces every sample's
    // preprocess, an empty one included.
    const auto nanos = preprocess_ ? static_cast<int64_t>(dist_.Next() * 1e9) : 0;
    if (nanos > 0) {
      if (s_.preprocess_spin) {
        s_.clock->SpinForNanos(nanos);
      } else {
        s_.clock->SleepForNanos(nanos);
      }
    }
    if (tracer_) {
      tracer_->Record(ai_events::AiSpan(ai_events::kDataCat, ai_events::kPreprocess, wall_start,
                                        s_.clock->WallMicros() - wall_start,
                                        static_cast<int64_t>(cmd.epoch) + 1, cmd.k + 1,
                                        static_cast<int64_t>(ref.index)));
    }
    return Status::OK();
  }

  bool Stopping() const {
    return s_.stop_flag != nullptr && s_.stop_flag->load(std::memory_order_relaxed) != 0;
  }

  const WorkerSetup& s_;
  Distribution dist_;
  const bool preprocess_;
  std::unique_ptr<Tracer> tracer_;
  Status setup_error_;
  std::vector<RegionRef> refs_;
  BoundedReadBuffer bounded_;  // buffer_'s memory when s_.read_ring > 0
  SampleBuffer buffer_;
  SampleBuffer decoded_;
  const SampleBuffer* delivered_ = nullptr;
  std::vector<std::shared_ptr<const void>> held_;  // the batch's samples until collated
  uint32_t buffer_growths_ = 0;  // of buffer_ and decoded_ during the current batch
  uint64_t largest_ = 0;         // the largest sample collated so far
};

}  // namespace

void RunWorkerProcess(const WorkerSetup& setup) {
  // A worker must not outlive the main process (PyTorch's workers watch their parent too).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != setup.parent) ::_exit(1);
  ::signal(SIGPIPE, SIG_IGN);
  NameThisThread("dlio-worker", setup.worker);
  LowerThisThreadPriority(setup.nice);
  {
    Worker worker(setup);
    worker.StartTracing();
    if (worker.Ready()) worker.Serve();
    worker.Finish();
  }
  ::_exit(0);
}

}  // namespace dlio::pipeline_internal
