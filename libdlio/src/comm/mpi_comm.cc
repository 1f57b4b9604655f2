// The MPI Comm. With storage/mpiio_storage.cc, the only file that includes mpi.h (through
// comm/mpi_util.h); without DLIO_WITH_MPI the factory is a stub that names the build option.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dlio/comm.h"

#if defined(DLIO_WITH_MPI)
#include "comm/mpi_util.h"
#endif

namespace dlio {

#if defined(DLIO_WITH_MPI)
namespace {

using mpi_internal::FitsMpiCount;
using mpi_internal::kMaxMpiCount;
using mpi_internal::MpiCount;
using mpi_internal::MpiStatus;

// MPI_Test calls a sleeping barrier makes back to back before it starts sleeping.
constexpr int kBusyPolls = 16;

class MpiComm final : public Comm {
 public:
  MpiComm(MPI_Comm comm, bool finalize, int rank, int size)
      : comm_(comm), finalize_(finalize), rank_(rank), size_(size) {}

  ~MpiComm() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    MPI_Comm_free(&comm_);
    if (finalize_) MPI_Finalize();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "mpi"; }

  Status Barrier() override {
    if (barrier_wait_ == BarrierWait::kSpin) return MpiStatus(MPI_Barrier(comm_), "MPI_Barrier");
    return SleepingBarrier();
  }
  void set_barrier_wait(BarrierWait wait) override { barrier_wait_ = wait; }

  Result<std::unique_ptr<Comm>> SplitNode() override {
    MPI_Comm node = MPI_COMM_NULL;
    int rc = MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
    int rank = 0, size = 1;
    if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(node, &rank);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_size(node, &size);
    if (rc != MPI_SUCCESS) {
      if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
      return MpiStatus(rc, "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)");
    }
    auto out = std::make_unique<MpiComm>(node, /*finalize=*/false, rank, size);
    out->set_barrier_wait(barrier_wait_);
    return std::unique_ptr<Comm>(std::move(out));
  }

  Status AllReduceSum(std::vector<double>* values) override {
    return AllReduce(values, MPI_SUM, "MPI_Allreduce(sum)");
  }
  Status AllReduceMax(std::vector<double>* values) override {
    return AllReduce(values, MPI_MAX, "MPI_Allreduce(max)");
  }
  Status AllReduceMin(std::vector<double>* values) override {
    return AllReduce(values, MPI_MIN, "MPI_Allreduce(min)");
  }

  Status Gather(const std::string& mine, int root, std::vector<std::string>* out) override {
    DLIO_RETURN_NOT_OK(CheckRoot(root, "Gather"));
    if (out == nullptr && rank_ == root) {
      return Status::InvalidArgument("mpi comm Gather: out is null on the root");
    }
    // Every rank learns every size, so all of them agree on whether the total fits.
    const uint64_t my_size = mine.size();
    std::vector<uint64_t> sizes(static_cast<size_t>(size_));
    DLIO_RETURN_NOT_OK(
        MpiStatus(MPI_Allgather(&my_size, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, comm_),
                  "MPI_Allgather (Gather sizes)"));
    uint64_t total = 0;
    for (uint64_t s : sizes) total += s;
    if (!FitsMpiCount(total)) {
      return Status::InvalidArgument("mpi comm Gather: ", total,
                                     " bytes over all ranks, more than MPI_Gatherv's 2 GiB");
    }
    std::vector<int> counts, displs;
    std::string all;
    if (rank_ == root) {
      counts.resize(sizes.size());
      displs.resize(sizes.size());
      int offset = 0;
      for (size_t r = 0; r < sizes.size(); ++r) {
        counts[r] = static_cast<int>(sizes[r]);
        displs[r] = offset;
        offset += counts[r];
      }
      all.resize(total);
    }
    DLIO_RETURN_NOT_OK(
        MpiStatus(MPI_Gatherv(mine.data(), static_cast<int>(my_size), MPI_CHAR, all.data(),
                              counts.data(), displs.data(), MPI_CHAR, root, comm_),
                  "MPI_Gatherv"));
    if (rank_ == root) {
      out->clear();
      out->reserve(sizes.size());
      for (size_t r = 0; r < sizes.size(); ++r) {
        out->push_back(all.substr(static_cast<size_t>(displs[r]), sizes[r]));
      }
    }
    return Status::OK();
  }

  Status Broadcast(std::string* value, int root) override {
    DLIO_RETURN_NOT_OK(CheckRoot(root, "Broadcast"));
    if (value == nullptr) return Status::InvalidArgument("mpi comm Broadcast: value is null");
    uint64_t n = rank_ == root ? value->size() : 0;
    DLIO_RETURN_NOT_OK(MpiStatus(MPI_Bcast(&n, 1, MPI_UINT64_T, root, comm_), "MPI_Bcast (size)"));
    if (rank_ != root) value->resize(n);
    for (uint64_t done = 0; done < n; done += kMaxMpiCount) {
      const int count = MpiCount(n - done);
      DLIO_RETURN_NOT_OK(
          MpiStatus(MPI_Bcast(value->data() + done, count, MPI_CHAR, root, comm_), "MPI_Bcast"));
    }
    return Status::OK();
  }

  void Abort(const Status& status) override {
    if (abort_status_.ok()) {
      abort_status_ = status.ok() ? Status::Internal("Abort called with an ok status") : status;
    }
    std::fprintf(stderr, "dlio rank %d of %d: aborting the job: %s\n", rank_, size_,
                 abort_status_.ToString().c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  Status abort_status() const override { return abort_status_; }
  const void* mpi_comm_handle() const override { return mpi_internal::MpiHandleOf(comm_); }

 private:
  Status AllReduce(std::vector<double>* values, MPI_Op op, const char* what) {
    if (values == nullptr) return Status::InvalidArgument("mpi comm reduction: values is null");
    if (!FitsMpiCount(values->size())) {
      return Status::InvalidArgument("mpi comm reduction: too many values");
    }
    return MpiStatus(MPI_Allreduce(MPI_IN_PLACE, values->data(), static_cast<int>(values->size()),
                                   MPI_DOUBLE, op, comm_),
                     what);
  }

  // MPI_Ibarrier polled with MPI_Test. The first polls come back to back (the other ranks are
  // often already there); then each poll sleeps, 20 us at first and doubling up to 200 us, so
  // that a rank that arrived early gives its core to the ranks still computing.
  Status SleepingBarrier() {
    MPI_Request request = MPI_REQUEST_NULL;
    DLIO_RETURN_NOT_OK(MpiStatus(MPI_Ibarrier(comm_, &request), "MPI_Ibarrier"));
    auto sleep = std::chrono::microseconds(20);
    for (int polls = 0;; ++polls) {
      int done = 0;
      DLIO_RETURN_NOT_OK(MpiStatus(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test"));
      if (done) return Status::OK();
      if (polls < kBusyPolls) continue;
      std::this_thread::sleep_for(sleep);
      sleep = std::min(sleep * 2, std::chrono::microseconds(200));
    }
  }

  Status CheckRoot(int root, const char* what) const {
    if (root < 0 || root >= size_) {
      return Status::InvalidArgument("mpi comm ", what, ": root ", root,
                                     " is not a rank of a world of ", size_);
    }
    return Status::OK();
  }

  MPI_Comm comm_;
  const bool finalize_;
  const int rank_, size_;
  BarrierWait barrier_wait_ = BarrierWait::kSleep;
  Status abort_status_;
};

}  // namespace

Result<std::unique_ptr<Comm>> MakeMpiComm(int* argc, char*** argv) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized) return Status::FailedPrecondition("MPI was already finalized in this process");
  bool we_initialized = false;
  if (!initialized) {
    int provided = MPI_THREAD_SINGLE;
    const int rc = MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    if (rc != MPI_SUCCESS) return MpiStatus(rc, "MPI_Init_thread");
    we_initialized = true;
  }
  MPI_Comm comm = MPI_COMM_NULL;
  int rc = MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(comm, &rank);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_size(comm, &size);
  if (rc != MPI_SUCCESS) {
    Status st = MpiStatus(rc, "MPI_Comm_dup(MPI_COMM_WORLD)");
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
    if (we_initialized) MPI_Finalize();
    return st;
  }
  return std::unique_ptr<Comm>(std::make_unique<MpiComm>(comm, we_initialized, rank, size));
}

bool BuiltWithMpi() { return true; }

bool MpiInitialized() { return mpi_internal::MpiUsable(); }

#else  // !DLIO_WITH_MPI

Result<std::unique_ptr<Comm>> MakeMpiComm(int*, char***) {
  return Status::Unimplemented(
      "the MPI comm is not built into this dlio: reconfigure with -DDLIO_WITH_MPI=ON");
}

bool BuiltWithMpi() { return false; }
bool MpiInitialized() { return false; }

#endif

}  // namespace dlio
