// An SQLite VFS (sqlite3_vfs, version 1: no shared memory, no memory mapping) over a dlio Storage:
// every page read libsqlite3 makes is File::ReadAt at its offset and size, every write WriteAt,
// so the storage sees, and dlio's tracer records, the requests the library itself issues, as
// Python's sqlite3 module (Debian's python3 links the same libsqlite3) issues them through the
// unix VFS. Locks are no-ops: a reader's database is not written while it reads, and the writer
// is alone with its new file. docs/formats.md, "sqlite".
#pragma once

#include <sqlite3.h>

#include <memory>
#include <string>

#include "dlio/status.h"
#include "dlio/storage.h"

namespace dlio::format_internal::sqlite {

// A VFS registered with libsqlite3 under a name of its own for as long as the object lives.
// `create`: the main database is opened with OpenMode::kCreateNew (the writer: never clobbers a
// file), else kRead. Thread-safe to use from the one connection that names it.
class StorageVfs {
 public:
  StorageVfs(Storage* storage, FileOptions options, bool create);
  ~StorageVfs();
  StorageVfs(const StorageVfs&) = delete;
  StorageVfs& operator=(const StorageVfs&) = delete;

  const char* name() const { return name_.c_str(); }
  // The error of the storage call that failed last (libsqlite3 only sees an error code).
  const Status& last_error() const { return last_error_; }

  // For the VFS's C callbacks (sqlite_vfs.cc).
  Storage* storage() const { return storage_; }
  const FileOptions& options() const { return options_; }
  bool create() const { return create_; }
  void set_last_error(Status st) { last_error_ = std::move(st); }

 private:
  Storage* storage_;
  FileOptions options_;
  bool create_;
  std::string name_;
  sqlite3_vfs vfs_{};
  Status last_error_;
};

// Opens `path` with libsqlite3 through `vfs` (read-only unless the VFS creates), with a clear
// error naming the file when the library refuses it. The connection is closed by the deleter.
struct ConnectionCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using Connection = std::unique_ptr<sqlite3, ConnectionCloser>;
Result<Connection> OpenDatabase(const StorageVfs& vfs, const std::string& path);

// Status for an SQLite result code `rc` on `db` while doing `what` with `path` (the library's
// message, and the storage's error when a VFS call failed).
Status SqliteError(sqlite3* db, int rc, const StorageVfs& vfs, const std::string& path,
                   const std::string& what);

}  // namespace dlio::format_internal::sqlite
