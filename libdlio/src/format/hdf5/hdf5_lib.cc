#include "format/hdf5/hdf5_lib.h"

#include <algorithm>
#include <vector>

#include "format/hdf5/hdf5_vfd.h"

namespace dlio::format_internal {
namespace {

// The process-wide HDF5 state (see the header for why it exists). Leaked on purpose so readers
// destroyed during static destruction still find it.
struct Hdf5Process {
  std::mutex mu;
  // Registration of the driver class: once per process, and HDF5 hands out one id for it.
  std::once_flag once;
  hid_t driver = H5I_INVALID_HID;
  Status init_status;
  // The Storage-error slot of the Hdf5Call that holds `mu` (nullptr when none does).
  Status* current_error = nullptr;
  // Inside ReleaseId (see ReleasingId).
  bool releasing = false;
};

Hdf5Process& Process() {
  static Hdf5Process* const p = new Hdf5Process;
  return *p;
}

// HDF5's "unable to open file" carries "time = <ctime()>\n, " (a timestamp and a newline):
// drop it so messages stay on one line and deterministic.
std::string CleanDescription(std::string d) {
  const size_t t = d.find("time = ");
  if (t != std::string::npos) {
    const size_t nl = d.find('\n', t);
    if (nl != std::string::npos) {
      size_t end = nl + 1;
      if (d.compare(end, 2, ", ") == 0) end += 2;
      d.erase(t, end - t);
    }
  }
  for (char& c : d) {
    if (c == '\n') c = ' ';
  }
  while (!d.empty() && (d.back() == ' ' || d.back() == ':' || d.back() == ',')) d.pop_back();
  return d;
}

herr_t CollectError(unsigned /*n*/, const H5E_error2_t* e, void* data) {
  auto* out = static_cast<std::vector<std::string>*>(data);
  std::string d = CleanDescription(e->desc ? e->desc : "");
  if (d.empty()) {
    char buf[160];
    if (H5Eget_msg(e->min_num, nullptr, buf, sizeof buf) > 0) d = buf;
  }
  if (!d.empty() && (out->empty() || out->back() != d)) out->push_back(std::move(d));
  return 0;
}

}  // namespace

Hdf5Call::Hdf5Call() : lock_(Process().mu) {
  Hdf5Process& p = Process();
  std::call_once(p.once, [&p] {
    if (H5open() < 0) {
      p.init_status = Status::Internal("HDF5 library failed to initialise (H5open)");
      return;
    }
    p.driver = RegisterDlioDriver();
    if (p.driver < 0) {
      p.init_status =
          Status::Internal("HDF5 refused to register dlio's file driver (H5FDregister)");
    }
  });
  H5Eget_auto2(H5E_DEFAULT, &saved_func_, &saved_data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  p.current_error = &storage_error_;
}

Hdf5Call::~Hdf5Call() {
  Hdf5Process& p = Process();
  p.current_error = nullptr;
  H5Eclear2(H5E_DEFAULT);
  H5Eset_auto2(H5E_DEFAULT, saved_func_, saved_data_);
}

const Status& Hdf5Call::init_status() const { return Process().init_status; }

Status Hdf5Call::Error(StatusCode code, const std::string& what) {
  if (!storage_error_.ok()) {
    Status s(storage_error_.code(), what + ": " + storage_error_.message());
    Clear();
    return s;
  }
  std::vector<std::string> stack;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, &CollectError, &stack);
  std::string msg = what;
  if (!stack.empty()) {
    msg += ": HDF5: ";
    // The innermost entries say what is wrong (e.g. "truncated file: eof = 1024, ... stored_eof
    // = 4096"); the outer ones repeat "unable to open file" up to the API call.
    const size_t keep = std::min<size_t>(stack.size(), 4);
    for (size_t i = 0; i < keep; ++i) {
      if (i) msg += "; ";
      msg += stack[i];
    }
  }
  Clear();
  return Status(code, std::move(msg));
}

void Hdf5Call::Clear() {
  H5Eclear2(H5E_DEFAULT);
  storage_error_ = Status::OK();
}

void RecordStorageError(const Status& status) {
  Status* slot = Process().current_error;
  if (slot != nullptr && slot->ok()) *slot = status;
}

bool ReleasingId() { return Process().releasing; }

herr_t ReleaseId(hid_t id) {
  Hdf5Process& p = Process();
  const bool outer = p.releasing;
  p.releasing = true;
  const herr_t r = H5Idec_ref(id);
  p.releasing = outer;
  const bool storage_failed = p.current_error != nullptr && !p.current_error->ok();
  return r < 0 || storage_failed ? -1 : 0;
}

hid_t DlioDriverId() { return Process().driver; }

}  // namespace dlio::format_internal
