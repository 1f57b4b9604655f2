#include "format/hdf5/hdf5_vfd.h"

#include <cstring>
#include <functional>
#include <string>
#include <type_traits>

#include "format/hdf5/hdf5_metadata_guard.h"

namespace dlio::format_internal {
namespace {

// The driver info carried by a file access property list.
struct DlioFapl {
  Storage* storage;
  FileOptions options;
};

// One open file. HDF5 only sees `pub` (first member, so the casts below are valid).
struct DlioFile {
  H5FD_t pub;
  Storage* storage;
  FileOptions options;
  File* file;  // owned; deleted by Close
  haddr_t eoa;
  haddr_t eof;
  hdf5::MetadataGuard* metadata_guard;  // owned; read-only files only (hdf5_metadata_guard.h)
};
static_assert(std::is_standard_layout_v<DlioFile>);

// Largest address HDF5 may use with this driver (as sec2: the largest off_t).
constexpr haddr_t kMaxAddr = (static_cast<haddr_t>(1) << 63) - 1;

DlioFile* Cast(H5FD_t* f) { return reinterpret_cast<DlioFile*>(f); }
const DlioFile* Cast(const H5FD_t* f) { return reinterpret_cast<const DlioFile*>(f); }

// Pushes `message` on HDF5's error stack, so it appears in Hdf5Call::Error.
herr_t Fail(const char* func, hid_t minor, const std::string& message) {
  H5Epush2(H5E_DEFAULT, __FILE__, func, __LINE__, H5E_ERR_CLS, H5E_VFL, minor, "%s",
           message.c_str());
  return -1;
}

// A Storage error: also recorded, so the caller gets its code (NotFound, IOError, ...) rather
// than the generic one of the HDF5 call that failed.
herr_t Fail(const char* func, hid_t minor, const Status& storage_error) {
  RecordStorageError(storage_error);
  return Fail(func, minor, storage_error.message());
}

// A failed write, truncate or close: while an id is released, recorded and reported to HDF5 as
// success (hdf5_lib.h, ReleasingId: a failing close would leave libhdf5 a dangling id); else
// an HDF5 error carrying the Storage error.
herr_t FailWhileWriting(const char* func, hid_t minor, const Status& storage_error) {
  if (ReleasingId()) {
    RecordStorageError(storage_error);
    return 0;
  }
  return Fail(func, minor, storage_error);
}

void* FaplGet(H5FD_t* f) {
  const DlioFile* d = Cast(f);
  return new DlioFapl{d->storage, d->options};
}
void* FaplCopy(const void* info) { return new DlioFapl(*static_cast<const DlioFapl*>(info)); }
herr_t FaplFree(void* info) {
  delete static_cast<DlioFapl*>(info);
  return 0;
}

H5FD_t* Open(const char* name, unsigned flags, hid_t fapl_id, haddr_t /*maxaddr*/) {
  const auto* info = H5Pget_driver(fapl_id) == DlioDriverId()
                         ? static_cast<const DlioFapl*>(H5Pget_driver_info(fapl_id))
                         : nullptr;
  if (info == nullptr || info->storage == nullptr) {
    Fail("dlio_open", H5E_BADVALUE, "file access property list has no dlio Storage");
    return nullptr;
  }
  Storage* storage = info->storage;
  OpenMode mode = OpenMode::kRead;
  if (flags & H5F_ACC_RDWR) {
    if (flags & H5F_ACC_EXCL) {
      mode = OpenMode::kCreateNew;
    } else if (flags & H5F_ACC_TRUNC) {
      mode = OpenMode::kWrite;
    } else if (flags & H5F_ACC_CREAT) {
      mode = OpenMode::kReadWrite;
    } else {
      // Read-write without create: must exist. HDF5 probes this way before every create, and
      // expects a missing file to fail here (not to be created), so that failure is not recorded.
      auto exists = storage->Exists(name);
      if (!exists.ok() || !*exists) {
        Fail("dlio_open", H5E_CANTOPENFILE, std::string(name) + ": no such file");
        return nullptr;
      }
      mode = OpenMode::kReadWrite;
    }
  }
  auto opened = storage->Open(name, mode, info->options);
  if (!opened.ok()) {
    Fail("dlio_open", H5E_CANTOPENFILE, opened.status());
    return nullptr;
  }
  auto size = (*opened)->Size();
  if (!size.ok()) {
    Fail("dlio_open", H5E_CANTOPENFILE, size.status());
    return nullptr;
  }
  auto* d = new DlioFile{};
  d->storage = storage;
  d->options = info->options;
  d->file = opened->release();
  d->eoa = 0;
  d->eof = *size;
  // Only what a read returns is changed: a writable file could write the byte back.
  d->metadata_guard = mode == OpenMode::kRead ? new hdf5::MetadataGuard : nullptr;
  return &d->pub;
}

// Never fails HDF5 (a failed close leaves libhdf5 1.10 a dangling file id): a Storage error is
// recorded for the Hdf5Call instead.
herr_t Close(H5FD_t* f) {
  DlioFile* d = Cast(f);
  const Status st = d->file->Close();
  delete d->file;
  delete d->metadata_guard;
  delete d;
  if (!st.ok()) RecordStorageError(st);
  return 0;
}

// Same file = same Storage and path: HDF5 then shares one open file between two H5Fopen calls
// of it (two readers of one file in a DataSource) instead of caching it twice.
int Cmp(const H5FD_t* a, const H5FD_t* b) {
  const DlioFile* x = Cast(a);
  const DlioFile* y = Cast(b);
  if (x->storage != y->storage) return std::less<Storage*>()(x->storage, y->storage) ? -1 : 1;
  const int c = x->file->path().compare(y->file->path());
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}

// The features of sec2 (HDF5's default driver, the one h5py uses): metadata accumulation and
// aggregation, small raw data aggregation and the sieve buffer for contiguous datasets, so the
// requests HDF5 issues through us are those it issues to a POSIX file.
herr_t Query(const H5FD_t* /*f*/, unsigned long* flags) {
  *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_DATA_SIEVE |
           H5FD_FEAT_AGGREGATE_SMALLDATA;
  return 0;
}

haddr_t GetEoa(const H5FD_t* f, H5FD_mem_t /*type*/) { return Cast(f)->eoa; }
herr_t SetEoa(H5FD_t* f, H5FD_mem_t /*type*/, haddr_t addr) {
  Cast(f)->eoa = addr;
  return 0;
}
haddr_t GetEof(const H5FD_t* f, H5FD_mem_t /*type*/) { return Cast(f)->eof; }

hdf5::MetadataGuard::Kind GuardKind(H5FD_mem_t type) {
  using Kind = hdf5::MetadataGuard::Kind;
  return type == H5FD_MEM_SUPER   ? Kind::kSuperblock
         : type == H5FD_MEM_OHDR  ? Kind::kObjectHeader
         : type == H5FD_MEM_LHEAP ? Kind::kLocalHeap
                                  : Kind::kOther;
}

herr_t Read(H5FD_t* f, H5FD_mem_t type, hid_t /*dxpl*/, haddr_t addr, size_t size, void* buf) {
  DlioFile* d = Cast(f);
  if (addr == HADDR_UNDEF || addr > kMaxAddr || size > kMaxAddr - addr || addr + size > d->eoa) {
    return Fail("dlio_read", H5E_OVERFLOW,
                StrCat(d->file->path(), ": read of ", size, " bytes at offset ", addr,
                       " is past the allocated end ", d->eoa));
  }
  if (size == 0) return 0;
  auto got = d->file->ReadAt(addr, size, buf);
  if (!got.ok()) return Fail("dlio_read", H5E_READERROR, got.status());
  // Past the end of the file but inside the allocated space reads as zeros (as sec2 does).
  if (*got < size) std::memset(static_cast<uint8_t*>(buf) + *got, 0, size - *got);
  if (d->metadata_guard != nullptr) {
    const Status st = d->metadata_guard->OnRead(GuardKind(type), addr, static_cast<uint8_t*>(buf),
                                                size, d->eoa, d->file->path());
    if (!st.ok()) return Fail("dlio_read", H5E_BADVALUE, st);
  }
  return 0;
}

herr_t Write(H5FD_t* f, H5FD_mem_t /*type*/, hid_t /*dxpl*/, haddr_t addr, size_t size,
             const void* buf) {
  DlioFile* d = Cast(f);
  if (addr == HADDR_UNDEF || addr > kMaxAddr || size > kMaxAddr - addr || addr + size > d->eoa) {
    return FailWhileWriting(
        "dlio_write", H5E_OVERFLOW,
        Status::Internal(d->file->path(), ": HDF5 wrote ", size, " bytes at offset ", addr,
                         ", past the allocated end ", d->eoa));
  }
  if (size == 0) return 0;
  const Status st = d->file->WriteAt(addr, buf, size);
  if (!st.ok()) return FailWhileWriting("dlio_write", H5E_WRITEERROR, st);
  if (addr + size > d->eof) d->eof = addr + size;
  return 0;
}

herr_t Flush(H5FD_t* /*f*/, hid_t /*dxpl*/, hbool_t /*closing*/) { return 0; }

// HDF5 calls this before closing a writable file so that the file ends where its allocated
// space does. Space allocated but never written (rare) is made real with one zero byte at the
// end; a File cannot shrink, and a file longer than its allocated space is valid HDF5.
herr_t Truncate(H5FD_t* f, hid_t /*dxpl*/, hbool_t /*closing*/) {
  DlioFile* d = Cast(f);
  if (d->eoa > d->eof) {
    const uint8_t zero = 0;
    const Status st = d->file->WriteAt(d->eoa - 1, &zero, 1);
    if (!st.ok()) return FailWhileWriting("dlio_truncate", H5E_WRITEERROR, st);
    d->eof = d->eoa;
  }
  return 0;
}

// Advisory locks (sec2's flock) are not taken: a Storage file has no lock of its own. The callbacks
// exist because libhdf5 1.10 marks a file opened for writing in its superblock only for a driver
// with a lock method, and that mark is a write: a new file's superblock is written when it is
// created, as with h5py's default driver (sec2), not only when it is closed.
herr_t Lock(H5FD_t* /*f*/, hbool_t /*rw*/) { return 0; }
herr_t Unlock(H5FD_t* /*f*/) { return 0; }

const H5FD_class_t kDlioDriverClass = {
    .name = "dlio",
    .maxaddr = kMaxAddr,
    .fc_degree = H5F_CLOSE_WEAK,
    .terminate = nullptr,
    .sb_size = nullptr,
    .sb_encode = nullptr,
    .sb_decode = nullptr,
    .fapl_size = sizeof(DlioFapl),
    .fapl_get = &FaplGet,
    .fapl_copy = &FaplCopy,
    .fapl_free = &FaplFree,
    .dxpl_size = 0,
    .dxpl_copy = nullptr,
    .dxpl_free = nullptr,
    .open = &Open,
    .close = &Close,
    .cmp = &Cmp,
    .query = &Query,
    .get_type_map = nullptr,
    .alloc = nullptr,
    .free = nullptr,
    .get_eoa = &GetEoa,
    .set_eoa = &SetEoa,
    .get_eof = &GetEof,
    .get_handle = nullptr,
    .read = &Read,
    .write = &Write,
    .flush = &Flush,
    .truncate = &Truncate,
    .lock = &Lock,
    .unlock = &Unlock,
    .fl_map = H5FD_FLMAP_DICHOTOMY,
};

}  // namespace

hid_t RegisterDlioDriver() { return H5FDregister(&kDlioDriverClass); }

Result<Hid> MakeDlioFapl(Hdf5Call& call, Storage* storage, const FileOptions& options) {
  DLIO_RETURN_NOT_OK(call.init_status());
  Hid fapl(H5Pcreate(H5P_FILE_ACCESS));
  if (!fapl.valid()) return call.Error(StatusCode::kInternal, "H5Pcreate(H5P_FILE_ACCESS)");
  const DlioFapl info{storage, options};
  if (H5Pset_driver(fapl.get(), DlioDriverId(), &info) < 0) {
    return call.Error(StatusCode::kInternal, "H5Pset_driver(dlio)");
  }
  return fapl;
}

}  // namespace dlio::format_internal
