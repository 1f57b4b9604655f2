// The pytorch pipeline's worker processes (worker_pipeline.h): forking them, reading their
// results, noticing one that died, and ending and reaping them all.
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "pipeline/worker_pipeline_impl.h"
#include "pipeline/worker_process.h"

namespace dlio::pipeline_internal {
namespace {

constexpr auto kGracePeriod = std::chrono::seconds(2);

// Reaps `pid`, waiting at most until `deadline`; false when it is still running then.
bool ReapBy(pid_t pid, std::chrono::steady_clock::time_point deadline, int* wstatus) {
  while (true) {
    const pid_t r = ::waitpid(pid, wstatus, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::string HowItEnded(int wstatus) {
  if (WIFSIGNALED(wstatus)) {
    const int sig = WTERMSIG(wstatus);
    const char* name = ::strsignal(sig);
    return StrCat("was killed by signal ", sig, " (", name ? name : "?", ")");
  }
  if (WIFEXITED(wstatus)) return StrCat("exited with status ", WEXITSTATUS(wstatus));
  return "ended";
}

}  // namespace

Status WorkerPipeline::Spawn() {
  std::vector<int> child_ends(workers_n_, -1);
  auto close_all = [&] {
    for (size_t w = 0; w < workers_n_; ++w) {
      if (procs_[w].fd >= 0) ::close(procs_[w].fd);
      if (child_ends[w] >= 0) ::close(child_ends[w]);
      procs_[w] = WorkerProc();
    }
  };
  for (size_t w = 0; w < workers_n_; ++w) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
      const int err = errno;
      close_all();
      return Status::FromErrno(err,
                               "pipeline 'pytorch': socketpair for worker " + std::to_string(w));
    }
    procs_[w] = WorkerProc();
    procs_[w].fd = sv[0];
    child_ends[w] = sv[1];
  }
  std::vector<WorkerSetup> setups(workers_n_);
  for (size_t w = 0; w < workers_n_; ++w) {
    WorkerSetup& s = setups[w];
    s.worker = w;
    s.channel = child_ends[w];
    for (size_t i = 0; i < slots_per_worker_; ++i) {
      s.regions.push_back(&slots_[w * slots_per_worker_ + i]->region);
    }
    s.source = source_;
    s.storage = storage_;
    s.clock = clock_;
    s.decoder = decoder_;
    s.max_decoded_bytes = max_decoded_bytes_;
    s.framework_client_costs = options_.framework_client_costs;
    s.collate_limit = loader_.collate_limit_bytes;
    s.deliver = options_.deliver_sample_bytes;
    s.preprocess_time = options_.preprocess_time;
    s.preprocess_spin = options_.preprocess_spin;
    s.seed = options_.seed;
    s.rank = options_.rank;
    s.nice = options_.thread_nice;
    s.trace_prefix = tracer_ ? loader_.worker_trace_prefix : std::string();
    s.trace_gzip = loader_.worker_trace_gzip;
    s.stop_flag = &stop_flags_[w];
    s.read_buffer = w < read_buffers_.size() ? read_buffers_[w].get() : nullptr;
    s.bounded_read = loader_.bounded_read_bytes;
    s.read_span = options_.reserve_sample_bytes;
    s.read_ring = ReadRingBytes();
    s.parent = ::getpid();
  }
  for (size_t w = 0; w < workers_n_; ++w) {
    stop_flags_[w].store(0);
    const pid_t pid = ::fork();
    if (pid < 0) {
      const int err = errno;
      running_ = true;  // end the ones already forked
      EndWorkers();
      close_all();
      return Status::FromErrno(err, "pipeline 'pytorch': fork of worker " + std::to_string(w));
    }
    if (pid == 0) {
      // The child keeps only its own channel and regions.
      ::close(stop_fd_);
      for (size_t i = 0; i < workers_n_; ++i) {
        if (procs_[i].fd >= 0) ::close(procs_[i].fd);
        if (i != w && child_ends[i] >= 0) ::close(child_ends[i]);
        if (i == w) continue;
        if (i < read_buffers_.size()) read_buffers_[i]->Close();
        for (size_t j = 0; j < slots_per_worker_; ++j) {
          slots_[i * slots_per_worker_ + j]->region.Close();
        }
      }
      RunWorkerProcess(setups[w]);
    }
    procs_[w].pid = pid;
    ::close(child_ends[w]);
    child_ends[w] = -1;
  }
  running_ = true;
  // Every worker has its memory in its page tables before the first batch goes out.
  for (size_t w = 0; w < workers_n_; ++w) {
    WorkerResult ready;
    if (!ReadFull(procs_[w].fd, &ready, sizeof ready).ok() || ready.k != kWorkerReady) {
      return WorkerLost(w, "before it was ready");
    }
  }
  return Status::OK();
}

Status WorkerPipeline::Receive(size_t w) {
  WorkerProc& proc = procs_[w];
  if (proc.fd < 0)
    return proc.lost.ok() ? Status::Internal("pipeline: worker not running") : proc.lost;
  pollfd fds[2] = {{proc.fd, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
  while (true) {
    const int r = ::poll(fds, 2, -1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Status::FromErrno(errno, "pipeline 'pytorch': poll");
    if (fds[1].revents != 0 || stopping_.load()) return Status::Cancelled("pipeline: stopped");
    if (fds[0].revents != 0) break;
  }
  WorkerResult result;
  Status got = ReadFull(proc.fd, &result, sizeof result);
  std::string message(got.ok() ? result.message_size : 0, '\0');
  if (got.ok() && result.message_size > kMaxResultMessage) {
    got = Status::Internal("pipeline 'pytorch': oversized message from worker ", w);
  }
  if (got.ok() && !message.empty()) got = ReadFull(proc.fd, message.data(), message.size());
  if (!got.ok()) return WorkerLost(w, "before delivering");
  if (result.slot >= slots_per_worker_) {
    return Status::Internal("pipeline 'pytorch': worker ", w, " reported slot ", result.slot);
  }
  WorkerSlot* slot = slots_[w * slots_per_worker_ + result.slot].get();
  if (slot->state != WorkerSlotState::kDispatched || slot->k != result.k) {
    return Status::Internal("pipeline 'pytorch': worker ", w, " reported batch ", result.k,
                            " that its slot ", result.slot, " does not wait for");
  }
  slot->status =
      result.code == 0 ? Status::OK() : Status(static_cast<StatusCode>(result.code), message);
  if (storage_ != nullptr) {
    IoStats done;
    done.read_ops = result.read_ops;
    done.read_bytes = result.read_bytes;
    done.opens = result.opens;
    done.closes = result.closes;
    storage_->AddOtherProcessStats(done);
  }
  slot->region_size = result.region_size;
  buffer_growths_ += result.buffer_growths;
  worker_read_buffer_bytes_ = std::max(worker_read_buffer_bytes_, result.read_buffer_bytes);
  slot->read_ns = result.read_end_ns - result.read_start_ns;
  slot->state = WorkerSlotState::kReady;
  return Status::OK();
}

Status WorkerPipeline::WorkerLost(size_t w, const std::string& when) {
  WorkerProc& proc = procs_[w];
  if (proc.fd < 0) return proc.lost;
  ::close(proc.fd);
  proc.fd = -1;
  int wstatus = 0;
  std::string how = "closed its channel";
  if (proc.pid > 0) {
    if (!ReapBy(proc.pid, std::chrono::steady_clock::now() + kGracePeriod, &wstatus)) {
      ::kill(proc.pid, SIGKILL);
      ReapBy(proc.pid, std::chrono::steady_clock::time_point::max(), &wstatus);
    }
    how = HowItEnded(wstatus);
  }
  // The batch it owed: the oldest one sent to it.
  int64_t owed = -1;
  for (size_t i = 0; i < slots_per_worker_; ++i) {
    const WorkerSlot& s = *slots_[w * slots_per_worker_ + i];
    if (s.state == WorkerSlotState::kDispatched && (owed < 0 || s.k < owed)) owed = s.k;
  }
  std::string what =
      StrCat("pipeline 'pytorch': worker ", w, " (pid ", proc.pid, ") ", how, " ", when);
  if (owed >= 0) {
    const SampleRef& first = epoch_state_.plan()[static_cast<uint64_t>(owed) * options_.batch_size];
    what +=
        StrCat(" batch ", owed, " of epoch ", epoch_state_.epoch(), " (its first sample: sample ",
               first.index, " of file ", first.file, ", ", source_->file_path(first.file), ")");
  }
  proc.pid = -1;
  proc.lost = Status::IOError(what);
  return proc.lost;
}

void WorkerPipeline::EndWorkers() {
  if (!running_) return;
  for (size_t w = 0; w < workers_n_; ++w) stop_flags_[w].store(1);
  for (auto& proc : procs_) {
    if (proc.fd < 0) continue;
    WorkerCommand stop;
    stop.type = kCommandStop;
    (void)WriteFull(proc.fd, &stop, sizeof stop);
    ::close(proc.fd);
    proc.fd = -1;
  }
  const auto deadline = std::chrono::steady_clock::now() + kGracePeriod;
  for (auto& proc : procs_) {
    if (proc.pid <= 0) continue;
    int wstatus = 0;
    if (!ReapBy(proc.pid, deadline, &wstatus)) {
      ::kill(proc.pid, SIGKILL);
      ReapBy(proc.pid, std::chrono::steady_clock::time_point::max(), &wstatus);
    }
    proc.pid = -1;
  }
  for (auto& proc : procs_) proc = WorkerProc();
  for (auto& slot : slots_) {
    if (slot->state == WorkerSlotState::kDispatched || slot->state == WorkerSlotState::kReady) {
      slot->state = WorkerSlotState::kFree;
    }
  }
  running_ = false;
}

}  // namespace dlio::pipeline_internal
