// The Comm of a single process: every collective is trivially complete.
#include <memory>
#include <string>
#include <vector>

#include "dlio/comm.h"

namespace dlio {
namespace {

class SerialComm final : public Comm {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string name() const override { return "serial"; }
  Status Barrier() override { return Status::OK(); }
  Result<std::unique_ptr<Comm>> SplitNode() override { return MakeSerialComm(); }
  Status AllReduceSum(std::vector<double>* values) override { return CheckVector(values); }
  Status AllReduceMax(std::vector<double>* values) override { return CheckVector(values); }
  Status AllReduceMin(std::vector<double>* values) override { return CheckVector(values); }

  Status Gather(const std::string& mine, int root, std::vector<std::string>* out) override {
    DLIO_RETURN_NOT_OK(CheckRoot(root, "Gather"));
    if (out == nullptr) return Status::InvalidArgument("serial comm Gather: out is null");
    out->assign(1, mine);
    return Status::OK();
  }

  Status Broadcast(std::string* value, int root) override {
    DLIO_RETURN_NOT_OK(CheckRoot(root, "Broadcast"));
    if (value == nullptr) return Status::InvalidArgument("serial comm Broadcast: value is null");
    return Status::OK();
  }

  // There is no other process to stop, and the library never exits: keep the first reason so
  // the caller (which returns the error itself) or a test can see it.
  void Abort(const Status& status) override {
    if (abort_status_.ok()) {
      abort_status_ = status.ok() ? Status::Internal("Abort called with an ok status") : status;
    }
  }
  Status abort_status() const override { return abort_status_; }

 private:
  static Status CheckVector(const std::vector<double>* values) {
    if (values == nullptr) return Status::InvalidArgument("serial comm reduction: values is null");
    return Status::OK();
  }
  static Status CheckRoot(int root, const char* what) {
    if (root != 0) {
      return Status::InvalidArgument("serial comm ", what, ": root ", root,
                                     " is not a rank of a world of 1");
    }
    return Status::OK();
  }

  Status abort_status_;
};

}  // namespace

std::unique_ptr<Comm> MakeSerialComm() { return std::make_unique<SerialComm>(); }

}  // namespace dlio
