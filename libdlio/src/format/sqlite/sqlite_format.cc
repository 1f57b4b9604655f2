// sqlite: samples as BLOB rows of an SQLite database, the table a map-style Dataset SELECTs one row
// from per sample (`samples (id INTEGER PRIMARY KEY, label INTEGER, data BLOB)`, ids from 0),
// written and read through libsqlite3 over dlio's storage (sqlite_vfs.h): the storage sees the
// library's own page reads (the B-tree's pages, each BLOB's overflow pages one by one, the change
// counter each read transaction checks), as Python's sqlite3 module makes them with the same
// library. docs/formats.md, "sqlite".
#include <sqlite3.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "dlio/str_cat.h"
#include "format/content.h"
#include "format/formats.h"
#include "format/io_util.h"
#include "format/sqlite/sqlite_vfs.h"

namespace dlio::format_internal {
namespace {

using sqlite::Connection;
using sqlite::SqliteError;
using sqlite::StorageVfs;

constexpr const char* kCreate =
    "CREATE TABLE samples (id INTEGER PRIMARY KEY, label INTEGER, data BLOB)";
constexpr const char* kSelect = "SELECT label, data FROM samples WHERE id = ?";

struct StatementFinalizer {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Statement = std::unique_ptr<sqlite3_stmt, StatementFinalizer>;

Result<Statement> Prepare(sqlite3* db, const StorageVfs& vfs, const std::string& path,
                          const char* sql) {
  sqlite3_stmt* s = nullptr;
  const int rc = sqlite3_prepare_v2(db, sql, -1, &s, nullptr);
  Statement stmt(s);
  if (rc != SQLITE_OK) return SqliteError(db, rc, vfs, path, StrCat("preparing \"", sql, "\""));
  return stmt;
}

Status Exec(sqlite3* db, const StorageVfs& vfs, const std::string& path, const char* sql) {
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
  return rc == SQLITE_OK ? Status::OK() : SqliteError(db, rc, vfs, path, sql);
}

// One row per sample: its id, its label, its bytes (generated into one reused buffer).
Status InsertSamples(sqlite3* db, const StorageVfs& vfs, const std::string& path,
                     const FileSpec& spec) {
  DLIO_ASSIGN_OR_RETURN(
      Statement insert,
      Prepare(db, vfs, path, "INSERT INTO samples (id, label, data) VALUES (?, ?, ?)"));
  std::vector<uint8_t> bytes;
  for (uint64_t i = 0; i < spec.sample_sizes.size(); ++i) {
    bytes.resize(static_cast<size_t>(spec.sample_sizes[i]));
    FillSampleBytes(spec.seed, i, 0, bytes.data(), bytes.size());
    sqlite3_stmt* s = insert.get();
    sqlite3_bind_int64(s, 1, static_cast<sqlite3_int64>(i));
    sqlite3_bind_int64(s, 2, SampleLabel(spec.seed, i));
    sqlite3_bind_blob64(s, 3, bytes.data(), bytes.size(), SQLITE_STATIC);
    const int rc = sqlite3_step(s);
    if (rc != SQLITE_DONE) return SqliteError(db, rc, vfs, path, StrCat("inserting sample ", i));
    sqlite3_reset(s);
  }
  return Status::OK();
}

// The new database: no journal (a half-written file is removed, not rolled back), no syncs
// until the close, temporary structures in memory; the table, then the rows in one transaction.
Status WriteDatabase(Storage* storage, const std::string& path, const FileSpec& spec) {
  StorageVfs vfs(storage, FileOptions{}, /*create=*/true);
  DLIO_ASSIGN_OR_RETURN(Connection db, sqlite::OpenDatabase(vfs, path));
  for (const char* sql : {"PRAGMA journal_mode=OFF", "PRAGMA synchronous=OFF",
                          "PRAGMA temp_store=MEMORY", kCreate, "BEGIN"}) {
    DLIO_RETURN_NOT_OK(Exec(db.get(), vfs, path, sql));
  }
  DLIO_RETURN_NOT_OK(InsertSamples(db.get(), vfs, path, spec));
  DLIO_RETURN_NOT_OK(Exec(db.get(), vfs, path, "COMMIT"));
  const int rc = sqlite3_close(db.release());
  return rc == SQLITE_OK ? Status::OK() : SqliteError(nullptr, rc, vfs, path, "closing");
}

class SqliteReader final : public FormatReader {
 public:
  SqliteReader(Storage* storage, std::string path)
      : path_(std::move(path)), vfs_(storage, FileOptions{}, /*create=*/false) {}

  // Opens the database as sqlite3.connect does (no read yet). With `expected` > 0 the ids are
  // 0 .. expected - 1 and nothing else is read (a Dataset knows its length); else the rows are
  // counted and sized (inspect), ids from the smallest.
  Status Open(uint64_t expected) {
    DLIO_ASSIGN_OR_RETURN(db_, sqlite::OpenDatabase(vfs_, path_));
    if (expected > 0) {
      count_ = expected;
      sizes_ =
          std::vector<std::atomic<uint64_t>>(static_cast<size_t>(expected));  // learned as read
      return Status::OK();
    }
    DLIO_ASSIGN_OR_RETURN(
        Statement rows, Prepare(db_.get(), vfs_, path_,
                                "SELECT id, typeof(data), length(data) FROM samples ORDER BY id"));
    std::vector<uint64_t> sizes;
    int rc = SQLITE_ROW;
    while ((rc = sqlite3_step(rows.get())) == SQLITE_ROW) {
      const sqlite3_int64 id = sqlite3_column_int64(rows.get(), 0);
      if (sizes.empty()) base_ = id;
      if (id != base_ + static_cast<sqlite3_int64>(sizes.size())) {
        return Status::Corruption(path_, ": table samples: id ", id, " follows id ",
                                  base_ + static_cast<sqlite3_int64>(sizes.size()) - 1,
                                  " (the ids must be consecutive)");
      }
      DLIO_RETURN_NOT_OK(
          CheckBlob(id, reinterpret_cast<const char*>(sqlite3_column_text(rows.get(), 1))));
      sizes.push_back(static_cast<uint64_t>(sqlite3_column_int64(rows.get(), 2)));
    }
    if (rc != SQLITE_DONE) return SqliteError(db_.get(), rc, vfs_, path_, "counting the rows");
    count_ = sizes.size();
    sizes_ = std::vector<std::atomic<uint64_t>>(sizes.size());
    for (size_t i = 0; i < sizes.size(); ++i) sizes_[i].store(sizes[i], std::memory_order_relaxed);
    return Status::OK();
  }

  uint64_t num_samples() const override { return count_; }
  // The row's size as inspect counted it or its last read found it (0 before): no lock.
  uint64_t sample_size(uint64_t i) const override {
    return i < sizes_.size() ? sizes_[static_cast<size_t>(i)].load(std::memory_order_relaxed) : 0;
  }

  // SELECT label, data FROM samples WHERE id = ? (prepared once, as Python caches it): a read
  // transaction of its own, the row's pages and its BLOB's overflow pages.
  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    DLIO_RETURN_NOT_OK(CheckSampleIndex(path_, i, count_));
    std::lock_guard<std::mutex> lock(mu_);
    if (!select_) {
      DLIO_ASSIGN_OR_RETURN(select_, Prepare(db_.get(), vfs_, path_, kSelect));
    }
    sqlite3_stmt* s = select_.get();
    const sqlite3_int64 id = base_ + static_cast<sqlite3_int64>(i);
    sqlite3_bind_int64(s, 1, id);
    const int rc = sqlite3_step(s);
    Status st;
    if (rc == SQLITE_ROW) st = CheckBlob(id, sqlite3_column_type(s, 1));
    if (rc == SQLITE_ROW && st.ok()) {
      const auto n = static_cast<size_t>(sqlite3_column_bytes(s, 1));
      const void* blob = sqlite3_column_blob(s, 1);
      st = out->Resize(n);
      if (st.ok() && n > 0) std::memcpy(out->data(), blob, n);
      sizes_[static_cast<size_t>(i)].store(n, std::memory_order_relaxed);
    } else if (rc == SQLITE_DONE) {
      st = Status::Corruption(path_, ": table samples has no row with id ", id, " (sample ", i,
                              " of ", count_, ")");
    } else if (rc != SQLITE_ROW) {
      st = SqliteError(db_.get(), rc, vfs_, path_, StrCat("reading sample ", i));
    }
    sqlite3_reset(s);
    return st;
  }

  std::string DescribeJson() const override {
    std::string pages;
    {
      std::lock_guard<std::mutex> lock(mu_);
      pages =
          StrCat("\"page_size\":", Pragma("page_size"), ",\"page_count\":", Pragma("page_count"));
    }
    return StrCat("{\"format\":\"sqlite\",\"table\":\"samples\",", pages, ",",
                  SampleSizesJson(count_, *this), "}");
  }

 private:
  // A sample is a BLOB (NULL: no bytes); a number or a text is no sample's bytes (length()
  // counts a text's characters, not its bytes).
  Status CheckBlob(sqlite3_int64 id, const char* type) const {
    const std::string t = type == nullptr ? "" : type;
    if (t == "blob" || t == "null") return Status::OK();
    return Status::Corruption(path_, ": table samples: row id ", id, " holds a ", t,
                              " in column data, not a BLOB");
  }
  Status CheckBlob(sqlite3_int64 id, int type) const {
    if (type == SQLITE_BLOB || type == SQLITE_NULL) return Status::OK();
    return CheckBlob(id, type == SQLITE_TEXT ? "text" : type == SQLITE_FLOAT ? "real" : "integer");
  }

  int64_t Pragma(const char* name) const {
    sqlite3_stmt* s = nullptr;
    int64_t v = -1;
    if (sqlite3_prepare_v2(db_.get(), StrCat("PRAGMA ", name).c_str(), -1, &s, nullptr) ==
            SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW) {
      v = sqlite3_column_int64(s, 0);
    }
    sqlite3_finalize(s);
    return v;
  }

  std::string path_;
  StorageVfs vfs_;
  Connection db_;
  mutable std::mutex mu_;  // one connection: one statement at a time
  Statement select_;
  uint64_t count_ = 0;
  sqlite3_int64 base_ = 0;
  std::vector<std::atomic<uint64_t>> sizes_;  // sized once by Open, never resized
};

class SqliteFormat final : public Format {
 public:
  std::string name() const override { return "sqlite"; }
  std::string extension() const override { return "db"; }
  std::vector<std::string> read_extensions() const override { return {"db", "sqlite", "sqlite3"}; }
  bool variable_sample_sizes() const override { return true; }

  Status Write(Storage* storage, const std::string& path, const FileSpec& spec,
               const FormatOptions&) const override {
    Status st = WriteDatabase(storage, path, spec);
    // Never a file we did not create: kCreateNew refused one that was there.
    if (!st.ok() && st.code() != StatusCode::kAlreadyExists) RemoveQuietly(storage, path);
    return st;
  }

  Result<std::unique_ptr<FormatReader>> Open(Storage* storage, const std::string& path,
                                             const FormatOptions& options) const override {
    auto reader = std::make_unique<SqliteReader>(storage, path);
    DLIO_RETURN_NOT_OK(reader->Open(options.samples_per_file));
    return std::unique_ptr<FormatReader>(std::move(reader));
  }
};

}  // namespace

std::unique_ptr<Format> NewSqliteFormat() { return std::make_unique<SqliteFormat>(); }

}  // namespace dlio::format_internal
