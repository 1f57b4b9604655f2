// A Comm over threads of one process, for tests that run several ranks of RunWorkload side by
// side: ThreadCommHub(n).Rank(r) is rank r of n. Every collective is a deposit, a barrier, a read
// and a second barrier, so each rank computes the same result from the same deposits. A barrier
// that waits longer than the hub's timeout fails (Internal) instead of hanging the test when a
// rank left early. The hub outlives its Comms; each Comm is used by one thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "dlio/comm.h"
#include "dlio/status.h"

namespace dlio::testing {

class ThreadCommHub {
 public:
  explicit ThreadCommHub(int size, std::chrono::seconds timeout = std::chrono::seconds(60))
      : size_(size), timeout_(timeout), numbers_(size), strings_(size) {}

  std::unique_ptr<Comm> Rank(int rank);

 private:
  friend class ThreadComm;

  Status Barrier() {
    std::unique_lock<std::mutex> lock(mu_);
    const uint64_t generation = generation_;
    if (++arrived_ == size_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return Status::OK();
    }
    if (!cv_.wait_for(lock, timeout_, [&] { return generation_ != generation; })) {
      return Status::Internal("thread comm: a barrier timed out (a rank left early?)");
    }
    return Status::OK();
  }

  const int size_;
  const std::chrono::seconds timeout_;
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  std::vector<std::vector<double>> numbers_;  // each rank's deposit (reductions)
  std::vector<std::string> strings_;          // each rank's deposit (Gather, Broadcast)
};

class ThreadComm final : public Comm {
 public:
  ThreadComm(ThreadCommHub* hub, int rank) : hub_(hub), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return hub_->size_; }
  std::string name() const override { return "thread"; }
  Status Barrier() override { return hub_->Barrier(); }
  Status AllReduceSum(std::vector<double>* values) override {
    return Reduce(values, [](double a, double b) { return a + b; });
  }
  Status AllReduceMax(std::vector<double>* values) override {
    return Reduce(values, [](double a, double b) { return a > b ? a : b; });
  }
  Status AllReduceMin(std::vector<double>* values) override {
    return Reduce(values, [](double a, double b) { return a < b ? a : b; });
  }
  Status Gather(const std::string& mine, int root, std::vector<std::string>* out) override {
    Deposit(&hub_->strings_, mine);
    DLIO_RETURN_NOT_OK(hub_->Barrier());
    if (rank_ == root) {
      std::lock_guard<std::mutex> lock(hub_->mu_);
      *out = hub_->strings_;
    }
    return hub_->Barrier();
  }
  Status Broadcast(std::string* value, int root) override {
    if (rank_ == root) Deposit(&hub_->strings_, *value);
    DLIO_RETURN_NOT_OK(hub_->Barrier());
    {
      std::lock_guard<std::mutex> lock(hub_->mu_);
      *value = hub_->strings_[root];
    }
    return hub_->Barrier();
  }
  void Abort(const Status& status) override {
    if (abort_status_.ok()) abort_status_ = status;
  }
  Status abort_status() const override { return abort_status_; }

 private:
  template <typename T>
  void Deposit(std::vector<T>* slots, const T& value) {
    std::lock_guard<std::mutex> lock(hub_->mu_);
    (*slots)[rank_] = value;
  }

  Status Reduce(std::vector<double>* values, const std::function<double(double, double)>& op) {
    Deposit(&hub_->numbers_, *values);
    DLIO_RETURN_NOT_OK(hub_->Barrier());
    {
      // In rank order on every rank, so that every rank gets bit-identical sums.
      std::lock_guard<std::mutex> lock(hub_->mu_);
      *values = hub_->numbers_[0];
      for (int r = 1; r < hub_->size_; ++r) {
        const std::vector<double>& theirs = hub_->numbers_[r];
        if (theirs.size() != values->size()) {
          return Status::InvalidArgument("thread comm: reductions of different lengths");
        }
        for (size_t i = 0; i < values->size(); ++i) (*values)[i] = op((*values)[i], theirs[i]);
      }
    }
    return hub_->Barrier();
  }

  ThreadCommHub* hub_;
  const int rank_;
  Status abort_status_;
};

inline std::unique_ptr<Comm> ThreadCommHub::Rank(int rank) {
  return std::make_unique<ThreadComm>(this, rank);
}

}  // namespace dlio::testing
