// Helpers of the parquet tests: the options of a typed multi-column file and the row bytes our
// reader returns for it.
#pragma once

#include <catch2/catch.hpp>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "dlio/format.h"
#include "dlio/storage_wrapper.h"
#include "format/io_util.h"
#include "format/parquet/parquet_meta.h"
#include "format/parquet/parquet_schema.h"
#include "io_models/pyarrow_read.h"

namespace dlio::testing {

// Records the (offset, size) and destination of every read (ReadAt and ReadSomeAt) and counts the
// opens.
class ReadLog final : public StorageWrapper {
 public:
  explicit ReadLog(std::unique_ptr<Storage> inner) : StorageWrapper("readlog", std::move(inner)) {}
  std::vector<std::pair<uint64_t, size_t>> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    opens_ = 0;
    destinations_.clear();
    return std::move(reads_);
  }
  // Where in memory each read since the last Take went, in the same order.
  std::vector<const void*> destinations() {
    std::lock_guard<std::mutex> lock(mu_);
    return destinations_;
  }
  int opens() {
    std::lock_guard<std::mutex> lock(mu_);
    return opens_;
  }

 protected:
  Result<std::unique_ptr<File>> DoOpen(const std::string& path, OpenMode mode,
                                       const FileOptions& options) override {
    DLIO_ASSIGN_OR_RETURN(std::unique_ptr<File> file, StorageWrapper::DoOpen(path, mode, options));
    std::lock_guard<std::mutex> lock(mu_);
    ++opens_;
    return std::unique_ptr<File>(std::make_unique<LoggedFile>(std::move(file), this));
  }

 private:
  class LoggedFile final : public FileWrapper {
   public:
    LoggedFile(std::unique_ptr<File> inner, ReadLog* owner)
        : FileWrapper(std::move(inner)), owner_(owner) {}

   protected:
    Result<size_t> DoReadAt(uint64_t offset, size_t n, void* buf) override {
      owner_->Add(offset, n, buf);
      return FileWrapper::DoReadAt(offset, n, buf);
    }
    Result<size_t> DoReadSomeAt(uint64_t offset, size_t n, void* buf) override {
      owner_->Add(offset, n, buf);
      return FileWrapper::DoReadSomeAt(offset, n, buf);
    }

   private:
    ReadLog* owner_;
  };
  void Add(uint64_t offset, size_t n, const void* dst) {
    std::lock_guard<std::mutex> lock(mu_);
    reads_.emplace_back(offset, n);
    destinations_.push_back(dst);
  }
  std::mutex mu_;
  std::vector<std::pair<uint64_t, size_t>> reads_;
  std::vector<const void*> destinations_;
  int opens_ = 0;
};

// The file's size and decoded footer, read without the log.
struct ParquetLayout {
  uint64_t size = 0;
  uint64_t footer_len = 0;
  format_internal::parquet::FileMetaData meta;
  // Column c's chunk in row group g, as pyarrow's ComputeColumnChunkRange finds it.
  io_models::ByteRange Chunk(size_t g, size_t c) const {
    const format_internal::parquet::ColumnMetaData& m = meta.row_groups[g].columns[c].meta;
    int64_t begin = m.data_page_offset;
    if (m.dictionary_page_offset > 0 && m.dictionary_page_offset < begin) {
      begin = m.dictionary_page_offset;
    }
    return {static_cast<uint64_t>(begin), static_cast<uint64_t>(m.total_compressed_size)};
  }
};

inline ParquetLayout ReadParquetLayout(Storage* s, const std::string& path) {
  auto f = s->Open(path, OpenMode::kRead);
  REQUIRE(f.ok());
  ParquetLayout l;
  l.size = (*f)->Size().value();
  std::vector<uint8_t> b(static_cast<size_t>(l.size));
  REQUIRE((*f)->ReadExactAt(0, b.size(), b.data()).ok());
  l.footer_len = format_internal::Le32(b.data() + b.size() - 8);
  const uint64_t at = l.size - 8 - l.footer_len;
  auto m = format_internal::parquet::DecodeFileMetaData(b.data() + at, l.footer_len, path, at);
  REQUIRE(m.ok());
  l.meta = std::move(*m);
  return l;
}

// Columns of every dtype kind: scalars of each width, a float16 list, byte arrays.
inline std::vector<ParquetColumnOptions> AllKindsColumns() {
  return {{"i8", "int8", 1, true},      {"u16", "uint16", 1, true},  {"i32", "int32", 1, false},
          {"i64", "int64", 1, true},    {"f16", "float16", 1, true}, {"f32", "float32", 1, true},
          {"f64", "float64", 1, false}, {"vec", "float16", 8, true}, {"blob", "binary", 5, true},
          {"txt", "string", 3, true}};
}

// Options of a file of AllKindsColumns() compressed with `codec`.
inline FormatOptions AllKindsOptions(const char* codec, uint64_t row_group_size) {
  FormatOptions o;
  o.compression = codec;
  o.parquet.row_group_size = row_group_size;
  o.parquet.columns = AllKindsColumns();
  return o;
}

// The bytes ReadSample returns for `row`: the read columns' stored values, in column order.
inline std::string ExpectedRow(const ParquetOptions& options, uint64_t seed, uint64_t row,
                               uint64_t sample_size = 0) {
  auto layout = format_internal::parquet::WriterLayout(options, sample_size);
  std::string out;
  for (size_t c = 0; c < layout->size(); ++c) {
    const auto& col = (*layout)[c];
    if (!col.read) continue;
    std::string v(col.width != 0 ? col.width : col.value_size, '\0');
    format_internal::parquet::FillColumnValue(col, c, seed, row,
                                              reinterpret_cast<uint8_t*>(v.data()));
    out += v;
  }
  return out;
}

}  // namespace dlio::testing
