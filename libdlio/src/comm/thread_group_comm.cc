// The accelerator threads' Comms: collectives combined in the process, then one call on the
// process Comm by the last thread to arrive.
#include "dlio/thread_group_comm.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "dlio/str_cat.h"

namespace dlio {
namespace {

enum class Op { kSum, kMax, kMin };

constexpr uint32_t kStopped = 1;
constexpr uint32_t kGeneration = 2;

double Apply(Op op, double a, double b) {
  switch (op) {
    case Op::kSum:
      return a + b;
    case Op::kMax:
      return a > b ? a : b;
    case Op::kMin:
      return a < b ? a : b;
  }
  return a;
}

// K strings as one: each as an 8-byte length then its bytes.
std::string Pack(const std::vector<std::string>& strings) {
  std::string out;
  for (const auto& s : strings) {
    const uint64_t n = s.size();
    out.append(reinterpret_cast<const char*>(&n), sizeof n);
    out += s;
  }
  return out;
}

Status Unpack(const std::string& packed, size_t count, std::vector<std::string>* out) {
  size_t pos = 0;
  for (size_t i = 0; i < count; ++i) {
    uint64_t n = 0;
    if (packed.size() - pos < sizeof n) return Status::Internal("thread group Gather: short pack");
    std::memcpy(&n, packed.data() + pos, sizeof n);
    pos += sizeof n;
    if (packed.size() - pos < n) return Status::Internal("thread group Gather: short pack");
    out->push_back(packed.substr(pos, n));
    pos += n;
  }
  return Status::OK();
}

}  // namespace

// What the K threads share. Every member below mu_ is guarded by it.
class ThreadGroupComms::Group {
 public:
  Group(Comm* process, int n)
      : process_(process),
        n_(n),
        numbers_(static_cast<size_t>(n)),
        strings_(static_cast<size_t>(n)),
        roots_(static_cast<size_t>(n)),
        problems_(static_cast<size_t>(n)) {}

  int n() const { return n_; }
  Comm* process() const { return process_; }
  int Rank(int k) const { return process_->rank() * n_ + k; }
  int Size() const { return process_->size() * n_; }

  Status Barrier(int k) {
    return Rendezvous(
        k, [] {}, [this] { return process_->Barrier(); }, [] {});
  }

  Status Reduce(int k, Op op, std::vector<double>* values) {
    return Rendezvous(
        k,
        [&] {
          if (values == nullptr) {
            problems_[k] = "values is null";
          } else {
            numbers_[k] = *values;
          }
        },
        [this, op] { return Combine(op); }, [&] { *values = result_numbers_; });
  }

  Status Gather(int k, const std::string& mine, int root, std::vector<std::string>* out) {
    return Rendezvous(
        k,
        [&] {
          strings_[k] = mine;
          roots_[k] = root;
          if (out == nullptr && Rank(k) == root) problems_[k] = "out is null on the root";
        },
        [this] { return GatherAll(); },
        [&] {
          if (Rank(k) == roots_[k]) *out = std::move(result_strings_);
        });
  }

  Status Broadcast(int k, std::string* value, int root) {
    return Rendezvous(
        k,
        [&] {
          roots_[k] = root;
          if (value == nullptr) {
            problems_[k] = "value is null";
          } else if (Rank(k) == root) {
            strings_[k] = *value;
          }
        },
        [this] { return BroadcastAll(); }, [&] { *value = result_string_; });
  }

  void Stop(const Status& status, int rank) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!stop_.ok()) return;
      stop_ = status.ok() ? Status::Internal("Abort called with an ok status") : status;
      stop_rank_ = rank;
      word_.fetch_or(kStopped, std::memory_order_release);
    }
    word_.notify_all();
  }

  // The process Comm's Abort, one thread at a time (the MPI Comm's is not thread-safe).
  void AbortProcess(const Status& status) {
    std::lock_guard<std::mutex> lock(abort_mu_);
    process_->Abort(status);
  }

  Status stop_status() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stop_;
  }

 private:
  // One collective: each thread deposits its arguments (`contribute`, under mu_), the last one
  // to arrive runs `complete` (the process-level call) for all, and each thread takes its result
  // (`collect`). The others sleep meanwhile on word_ (a futex: one wake-up each, no mutex to
  // reacquire). They read the results without the lock: the last thread wrote them before its
  // release of word_, and nothing changes them until every thread has arrived at the next
  // collective.
  template <typename Contribute, typename Complete, typename Collect>
  Status Rendezvous(int k, Contribute contribute, Complete complete, Collect collect) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!stop_.ok()) return Stopped(k);
    contribute();
    const uint32_t word = word_.load(std::memory_order_relaxed);
    if (++arrived_ == n_) {
      arrived_ = 0;
      result_ = CheckProblems();
      if (result_.ok()) result_ = complete();
      for (auto& p : problems_) p.clear();
      Status result = result_;
      if (result.ok()) collect();
      word_.fetch_add(kGeneration, std::memory_order_release);
      lock.unlock();
      word_.notify_all();
      return result;
    }
    lock.unlock();
    uint32_t now = word;
    while (now == word) {
      word_.wait(word, std::memory_order_acquire);
      now = word_.load(std::memory_order_acquire);
    }
    if ((now & ~kStopped) == (word & ~kStopped)) {  // woken by Stop, not by the last thread
      lock.lock();
      return Stopped(k);
    }
    if (!result_.ok()) return result_;
    collect();
    return Status::OK();
  }

  Status Stopped(int k) const {
    return Status::Cancelled("rank ", Rank(k), " stopped: rank ", stop_rank_,
                             " failed: ", stop_.ToString());
  }

  Status CheckProblems() const {
    for (int k = 0; k < n_; ++k) {
      if (!problems_[k].empty()) {
        return Status::InvalidArgument("thread group comm: rank ", Rank(k), ": ", problems_[k]);
      }
    }
    return Status::OK();
  }

  Status CheckRoots(const char* what) const {
    for (int k = 0; k < n_; ++k) {
      if (roots_[k] != roots_[0]) {
        return Status::InvalidArgument("thread group comm ", what, ": rank ", Rank(k),
                                       " gave root ", roots_[k], ", rank ", Rank(0), " gave ",
                                       roots_[0]);
      }
    }
    if (roots_[0] < 0 || roots_[0] >= Size()) {
      return Status::InvalidArgument("thread group comm ", what, ": root ", roots_[0],
                                     " is not a rank of a world of ", Size());
    }
    return Status::OK();
  }

  Status Combine(Op op) {
    result_numbers_ = numbers_[0];
    for (int k = 1; k < n_; ++k) {
      const std::vector<double>& theirs = numbers_[k];
      if (theirs.size() != result_numbers_.size()) {
        return Status::InvalidArgument("thread group comm: rank ", Rank(k), " reduces ",
                                       theirs.size(), " values, rank ", Rank(0), " ",
                                       result_numbers_.size());
      }
      for (size_t i = 0; i < theirs.size(); ++i) {
        result_numbers_[i] = Apply(op, result_numbers_[i], theirs[i]);
      }
    }
    switch (op) {
      case Op::kSum:
        return process_->AllReduceSum(&result_numbers_);
      case Op::kMax:
        return process_->AllReduceMax(&result_numbers_);
      case Op::kMin:
        return process_->AllReduceMin(&result_numbers_);
    }
    return Status::OK();
  }

  Status GatherAll() {
    DLIO_RETURN_NOT_OK(CheckRoots("Gather"));
    const int root_process = roots_[0] / n_;
    if (process_->size() == 1) {
      result_strings_ = strings_;
      return Status::OK();
    }
    std::vector<std::string> packs;
    DLIO_RETURN_NOT_OK(process_->Gather(Pack(strings_), root_process, &packs));
    result_strings_.clear();
    if (process_->rank() != root_process) return Status::OK();
    for (const auto& p : packs)
      DLIO_RETURN_NOT_OK(Unpack(p, static_cast<size_t>(n_), &result_strings_));
    return Status::OK();
  }

  Status BroadcastAll() {
    DLIO_RETURN_NOT_OK(CheckRoots("Broadcast"));
    const int root_process = roots_[0] / n_;
    result_string_ = process_->rank() == root_process ? strings_[roots_[0] % n_] : std::string();
    return process_->Broadcast(&result_string_, root_process);
  }

  Comm* const process_;
  const int n_;
  mutable std::mutex mu_;
  std::mutex abort_mu_;  // held while calling process_->Abort
  int arrived_ = 0;
  // Bit 0: the group is stopped. Bits 1..: the number of completed collectives (mod 2^31).
  std::atomic<uint32_t> word_{0};
  Status stop_;
  int stop_rank_ = -1;
  Status result_;
  std::vector<std::vector<double>> numbers_;
  std::vector<std::string> strings_;
  std::vector<int> roots_;
  std::vector<std::string> problems_;
  std::vector<double> result_numbers_;
  std::vector<std::string> result_strings_;
  std::string result_string_;
};

// Thread k's Comm.
class ThreadGroupComms::Member final : public Comm {
 public:
  Member(Group* group, int k) : group_(group), k_(k) {}
  int rank() const override { return group_->Rank(k_); }
  int size() const override { return group_->Size(); }
  std::string name() const override { return group_->process()->name() + "+threads"; }
  Status Barrier() override { return group_->Barrier(k_); }
  Status AllReduceSum(std::vector<double>* values) override {
    return group_->Reduce(k_, Op::kSum, values);
  }
  Status AllReduceMax(std::vector<double>* values) override {
    return group_->Reduce(k_, Op::kMax, values);
  }
  Status AllReduceMin(std::vector<double>* values) override {
    return group_->Reduce(k_, Op::kMin, values);
  }
  Status Gather(const std::string& mine, int root, std::vector<std::string>* out) override {
    return group_->Gather(k_, mine, root, out);
  }
  Status Broadcast(std::string* value, int root) override {
    return group_->Broadcast(k_, value, root);
  }
  // The other processes' ranks would wait forever in their next collective: the process Comm's
  // Abort ends them (MPI_Abort, which does not return). It comes first, so that the threads the
  // stop wakes (whose Cancelled would also abort) cannot end the job with their status instead.
  void Abort(const Status& status) override {
    if (group_->process()->size() > 1) group_->AbortProcess(status);
    group_->Stop(status, rank());
  }
  Status abort_status() const override { return group_->stop_status(); }

 private:
  Group* const group_;
  const int k_;
};

ThreadGroupComms::ThreadGroupComms(Comm* process, int threads)
    : group_(std::make_unique<Group>(process, threads < 1 ? 1 : threads)) {
  for (int k = 0; k < group_->n(); ++k) comms_.push_back(std::make_unique<Member>(group_.get(), k));
}

ThreadGroupComms::~ThreadGroupComms() = default;

int ThreadGroupComms::threads() const { return group_->n(); }
Comm* ThreadGroupComms::comm(int k) const { return comms_[static_cast<size_t>(k)].get(); }
void ThreadGroupComms::Stop(const Status& status, int rank) { group_->Stop(status, rank); }
Status ThreadGroupComms::stop_status() const { return group_->stop_status(); }

}  // namespace dlio
