// The process-wide side of HDF5: one lock around every HDF5 call, error capture, id handles.
//
// Why a process-wide mutex: Debian's libhdf5 (1.10.8, openmpi flavour) is built without
// --enable-threadsafe, so two threads inside the library at once corrupt its global state (id
// tables, free lists, the metadata cache). Every HDF5 call of dlio, including the callbacks of
// our file driver that run inside them, happens while one Hdf5Call holds the lock. This is the
// one mutable global of the hdf5 format, forced by the C library; concurrent ReadSample calls on
// hdf5 files are therefore serialized (h5py serializes the same way with its own global lock).
#pragma once

#include <hdf5.h>

#include <mutex>
#include <string>

#include "dlio/status.h"

namespace dlio::format_internal {

// Holds the HDF5 lock for a sequence of HDF5 calls (RAII). While held, HDF5's automatic error
// printing is off (restored afterwards, so other HDF5 users in the process keep their handler),
// and Storage errors met by the dlio driver are recorded here. Not reentrant: never construct
// one while the same thread holds another.
class Hdf5Call {
 public:
  Hdf5Call();
  ~Hdf5Call();
  Hdf5Call(const Hdf5Call&) = delete;
  Hdf5Call& operator=(const Hdf5Call&) = delete;

  // Internal error when the library or our driver could not be initialised; OK otherwise.
  const Status& init_status() const;
  // The error of an HDF5 call that just failed: the Storage error the driver met if there was
  // one (its code, e.g. NotFound or IOError, with `what` as context), else `code` with
  // "<what>: <HDF5 error stack, innermost first>". Clears HDF5's error stack.
  Status Error(StatusCode code, const std::string& what);
  // Drops HDF5's error stack and any recorded Storage error (after an expected failure).
  void Clear();

 private:
  std::unique_lock<std::mutex> lock_;
  H5E_auto2_t saved_func_ = nullptr;
  void* saved_data_ = nullptr;
  Status storage_error_;
};

// Called by the driver (inside an HDF5 call, so under the lock): keeps the first Storage error
// of the current Hdf5Call.
void RecordStorageError(const Status& status);

// True while an id is being released (Hid::Close). libhdf5 1.10 keeps the id of an object whose
// close failed, pointing at the object it has already freed, and its exit handler closes that
// id again and crashes (a disk that fills during a write did this). So the driver never fails
// HDF5 while an id is released: it records the Storage error (RecordStorageError) and reports
// success, and Hid::Close returns -1 so the caller still sees the failure.
bool ReleasingId();

// H5Idec_ref of `id` with Storage errors deferred as ReleasingId() says; -1 when HDF5 failed or
// the current Hdf5Call holds a Storage error (the call's Error() then reports it).
herr_t ReleaseId(hid_t id);

// The id of the dlio file driver (registered once per process), or H5I_INVALID_HID. Call only
// inside an Hdf5Call.
hid_t DlioDriverId();

// An owned HDF5 id, released with H5Idec_ref. Create, use and destroy only inside an Hdf5Call.
class Hid {
 public:
  Hid() = default;
  explicit Hid(hid_t id) : id_(id) {}
  ~Hid() { Reset(); }
  Hid(Hid&& other) noexcept : id_(other.id_) { other.id_ = H5I_INVALID_HID; }
  Hid& operator=(Hid&& other) noexcept {
    if (this != &other) {
      Reset();
      id_ = other.id_;
      other.id_ = H5I_INVALID_HID;
    }
    return *this;
  }
  Hid(const Hid&) = delete;
  Hid& operator=(const Hid&) = delete;

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  // Releases the id (ReleaseId): negative when HDF5 failed, or a write it made while closing
  // (flushing a file or a chunk cache) failed; the Hdf5Call's Error() says why.
  herr_t Close() {
    herr_t r = 0;
    if (id_ >= 0) r = ReleaseId(id_);
    id_ = H5I_INVALID_HID;
    return r;
  }
  // Releases the id on paths that already failed, or where a failure cannot matter (readers); a
  // Storage error met stays recorded in the Hdf5Call.
  void Reset() { (void)Close(); }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

}  // namespace dlio::format_internal
