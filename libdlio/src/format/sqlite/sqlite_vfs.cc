#include "format/sqlite/sqlite_vfs.h"

#include <atomic>
#include <cstring>
#include <new>
#include <utility>

#include "dlio/str_cat.h"

namespace dlio::format_internal::sqlite {
namespace {

// The unix VFS's sector size (SQLITE_DEFAULT_SECTOR_SIZE) and device characteristics (its default
// powersafe overwrite): the page writes the library plans depend on them.
constexpr int kSectorSize = 4096;

// The file libsqlite3 allocates (szOsFile bytes) and the VFS fills: its base first.
struct VfsFile {
  sqlite3_file base;
  StorageVfs* vfs;
  File* file;  // owned; closed and deleted by Close
};

VfsFile* Of(sqlite3_file* f) { return reinterpret_cast<VfsFile*>(f); }
StorageVfs* VfsOf(sqlite3_vfs* v) { return static_cast<StorageVfs*>(v->pAppData); }

int Close(sqlite3_file* f) {
  VfsFile* p = Of(f);
  const Status st = p->file->Close();
  delete p->file;
  p->file = nullptr;
  if (!st.ok()) {
    p->vfs->set_last_error(st);
    return SQLITE_IOERR_CLOSE;
  }
  return SQLITE_OK;
}

// One request of `amount` bytes at `offset`; a read past the end is zero-filled, as SQLite asks.
int Read(sqlite3_file* f, void* buf, int amount, sqlite3_int64 offset) {
  VfsFile* p = Of(f);
  const auto n = static_cast<size_t>(amount);
  Result<size_t> got = p->file->ReadAt(static_cast<uint64_t>(offset), n, buf);
  if (!got.ok()) {
    p->vfs->set_last_error(got.status());
    return SQLITE_IOERR_READ;
  }
  if (*got < n) {
    std::memset(static_cast<uint8_t*>(buf) + *got, 0, n - *got);
    return SQLITE_IOERR_SHORT_READ;
  }
  return SQLITE_OK;
}

int Write(sqlite3_file* f, const void* buf, int amount, sqlite3_int64 offset) {
  VfsFile* p = Of(f);
  const Status st =
      p->file->WriteAt(static_cast<uint64_t>(offset), buf, static_cast<size_t>(amount));
  if (!st.ok()) {
    p->vfs->set_last_error(st);
    return SQLITE_IOERR_WRITE;
  }
  return SQLITE_OK;
}

// dlio's File cannot truncate; the writer's new database never shrinks (no journal, no vacuum).
int Truncate(sqlite3_file* f, sqlite3_int64 size) {
  VfsFile* p = Of(f);
  Result<uint64_t> now = p->file->Size();
  if (now.ok() && *now == static_cast<uint64_t>(size)) return SQLITE_OK;
  p->vfs->set_last_error(Status::Unimplemented(p->file->path(), ": truncating to ", size));
  return SQLITE_IOERR_TRUNCATE;
}

int Sync(sqlite3_file* f, int) {
  VfsFile* p = Of(f);
  const Status st = p->file->Sync();
  if (!st.ok()) {
    p->vfs->set_last_error(st);
    return SQLITE_IOERR_FSYNC;
  }
  return SQLITE_OK;
}

int FileSize(sqlite3_file* f, sqlite3_int64* size) {
  VfsFile* p = Of(f);
  Result<uint64_t> n = p->file->Size();
  if (!n.ok()) {
    p->vfs->set_last_error(n.status());
    return SQLITE_IOERR_FSTAT;
  }
  *size = static_cast<sqlite3_int64>(*n);
  return SQLITE_OK;
}

int Lock(sqlite3_file*, int) { return SQLITE_OK; }
int CheckReservedLock(sqlite3_file*, int* reserved) {
  *reserved = 0;
  return SQLITE_OK;
}
int FileControl(sqlite3_file*, int, void*) { return SQLITE_NOTFOUND; }
int SectorSize(sqlite3_file*) { return kSectorSize; }
int DeviceCharacteristics(sqlite3_file*) { return SQLITE_IOCAP_POWERSAFE_OVERWRITE; }

// Version 1: no shared memory (no WAL) and no memory mapping.
sqlite3_io_methods MakeMethods() {
  sqlite3_io_methods m{};
  m.iVersion = 1;
  m.xClose = Close;
  m.xRead = Read;
  m.xWrite = Write;
  m.xTruncate = Truncate;
  m.xSync = Sync;
  m.xFileSize = FileSize;
  m.xLock = Lock;
  m.xUnlock = Lock;
  m.xCheckReservedLock = CheckReservedLock;
  m.xFileControl = FileControl;
  m.xSectorSize = SectorSize;
  m.xDeviceCharacteristics = DeviceCharacteristics;
  return m;
}
const sqlite3_io_methods kMethods = MakeMethods();

// The main database only: temporary files (the writer keeps them in memory) and journals (the
// writer runs without one; readers never write) are refused.
int Open(sqlite3_vfs* v, const char* name, sqlite3_file* f, int flags, int* out_flags) {
  f->pMethods = nullptr;
  StorageVfs* vfs = VfsOf(v);
  if (name == nullptr || (flags & SQLITE_OPEN_MAIN_DB) == 0) {
    vfs->set_last_error(Status::Unimplemented(name == nullptr ? "a temporary file" : name,
                                              ": only the main database is opened"));
    return SQLITE_CANTOPEN;
  }
  const OpenMode mode = vfs->create() ? OpenMode::kCreateNew : OpenMode::kRead;
  Result<std::unique_ptr<File>> file = vfs->storage()->Open(name, mode, vfs->options());
  if (!file.ok()) {
    vfs->set_last_error(file.status());
    return SQLITE_CANTOPEN;
  }
  VfsFile* p = new (Of(f)) VfsFile;
  p->base.pMethods = &kMethods;
  p->vfs = vfs;
  p->file = file->release();
  if (out_flags != nullptr) *out_flags = flags;
  return SQLITE_OK;
}

int Delete(sqlite3_vfs* v, const char* name, int) {
  const Status st = VfsOf(v)->storage()->Remove(name);
  if (st.ok()) return SQLITE_OK;
  VfsOf(v)->set_last_error(st);
  return st.code() == StatusCode::kNotFound ? SQLITE_IOERR_DELETE_NOENT : SQLITE_IOERR_DELETE;
}

// Whether a file exists (the journal and WAL checks of each read transaction): a stat.
int Access(sqlite3_vfs* v, const char* name, int, int* out) {
  Result<bool> exists = VfsOf(v)->storage()->Exists(name);
  if (!exists.ok()) {
    VfsOf(v)->set_last_error(exists.status());
    return SQLITE_IOERR_ACCESS;
  }
  *out = *exists ? 1 : 0;
  return SQLITE_OK;
}

int FullPathname(sqlite3_vfs*, const char* name, int n, char* out) {
  sqlite3_snprintf(n, out, "%s", name);
  return SQLITE_OK;
}

// Randomness, sleep and time are the default VFS's.
sqlite3_vfs* Default() { return sqlite3_vfs_find(nullptr); }
int Randomness(sqlite3_vfs*, int n, char* out) { return Default()->xRandomness(Default(), n, out); }
int Sleep(sqlite3_vfs*, int us) { return Default()->xSleep(Default(), us); }
int CurrentTime(sqlite3_vfs*, double* t) { return Default()->xCurrentTime(Default(), t); }
int GetLastError(sqlite3_vfs*, int n, char* out) {
  return Default()->xGetLastError(Default(), n, out);
}

std::string UniqueName() {
  static std::atomic<uint64_t> next{0};
  return "dlio-storage-" + std::to_string(next.fetch_add(1));
}

}  // namespace

StorageVfs::StorageVfs(Storage* storage, FileOptions options, bool create)
    : storage_(storage), options_(options), create_(create), name_(UniqueName()) {
  vfs_.iVersion = 1;
  vfs_.szOsFile = static_cast<int>(sizeof(VfsFile));
  vfs_.mxPathname = 4096;
  vfs_.zName = name_.c_str();
  vfs_.pAppData = this;
  vfs_.xOpen = Open;
  vfs_.xDelete = Delete;
  vfs_.xAccess = Access;
  vfs_.xFullPathname = FullPathname;
  vfs_.xRandomness = Randomness;
  vfs_.xSleep = Sleep;
  vfs_.xCurrentTime = CurrentTime;
  vfs_.xGetLastError = GetLastError;
  sqlite3_vfs_register(&vfs_, 0);
}

StorageVfs::~StorageVfs() { sqlite3_vfs_unregister(&vfs_); }

Status SqliteError(sqlite3* db, int rc, const StorageVfs& vfs, const std::string& path,
                   const std::string& what) {
  const std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  const std::string storage =
      vfs.last_error().ok() ? "" : StrCat(" (storage: ", vfs.last_error().ToString(), ")");
  const int primary = rc & 0xff;
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) {
    return Status::Corruption(path, ": ", what, ": ", message, storage);
  }
  if (primary == SQLITE_CANTOPEN && vfs.last_error().code() == StatusCode::kAlreadyExists) {
    return Status::AlreadyExists(path, ": ", what, ": ", message, storage);
  }
  return Status::IOError(path, ": ", what, ": ", message, storage);
}

Result<Connection> OpenDatabase(const StorageVfs& vfs, const std::string& path) {
  sqlite3* db = nullptr;
  const int flags =
      vfs.create() ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, vfs.name());
  Connection conn(db);
  if (rc != SQLITE_OK) return SqliteError(db, rc, vfs, path, "opening the database");
  return conn;
}

}  // namespace dlio::format_internal::sqlite
