// csv: CANDLE-style text rows of float32 values, one sample per row. The stored sample is the
// row's text (without its line end); Decode parses it into float32 values.
//
// native: Open scans the file once (requests of transfer_size, 0 = 1 MiB) and keeps each row's
// offset and length, so a sample read is one ranged read of exactly that row.
// pandas (reader.io_model): Open loads the whole file with pandas.read_csv's requests
// (pandas_read.h), closes it, and serves the rows from memory.
#include <algorithm>
#include <charconv>
#include <cstring>
#include <vector>

#include "format/content.h"
#include "format/csv/csv_options.h"
#include "format/formats.h"
#include "format/io_util.h"
#include "io_models/model_readers.h"
#include "io_models/pandas_read.h"

namespace dlio::format_internal {
namespace {

// Open-time scan request size when transfer_size is 0 (one request for a whole big file would
// need a buffer of its size).
constexpr uint64_t kScanChunk = 1u << 20;
// The first line is kept (to decide whether it is a header) up to this many bytes; past it, the
// decision is made on its complete fields so far, so a huge line costs no memory.
constexpr size_t kMaxHeaderProbe = 1u << 20;
// Values generated per block while writing a row.
constexpr size_t kValueBlock = 4096;
// Room one printed value may need (shortest float32 repr is at most 15 characters) plus a comma.
constexpr size_t kMaxValueChars = 32;

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// Parses [b, e) as a float32 after trimming blanks; false when it is not exactly one number.
bool ParseField(const char* b, const char* e, float* v) {
  while (b < e && IsBlank(*b)) ++b;
  while (e > b && IsBlank(e[-1])) --e;
  if (b < e && *b == '+') ++b;  // from_chars rejects the sign pandas accepts
  if (b == e) return false;
  const auto [p, ec] = std::from_chars(b, e, *v);
  return ec == std::errc() && p == e;
}

// Whether `line` is exactly the header pandas writes for a frame with its default column names:
// "0,1,...,k-1" (to_csv(index=False)); with the index column, ",0,1,...,k-1", whose empty first
// field already marks it as a header.
bool IsPandasDefaultHeader(const std::string& line) {
  uint64_t column = 0;
  size_t pos = 0;
  for (;;) {
    const std::string name = std::to_string(column++);
    if (line.compare(pos, name.size(), name) != 0) return false;
    pos += name.size();
    if (pos == line.size()) return true;
    if (line[pos] != ',') return false;
    ++pos;
  }
}

// Whether every field of a line is a number (a header line is not).
bool AllNumeric(const std::string& line) {
  const char* p = line.data();
  const char* end = p + line.size();
  float v;
  for (;;) {
    const char* comma = static_cast<const char*>(std::memchr(p, ',', end - p));
    const char* stop = comma ? comma : end;
    if (!ParseField(p, stop, &v)) return false;
    if (!comma) return true;
    p = comma + 1;
  }
}

class CsvReader final : public FormatReader {
 public:
  CsvReader(std::string path, std::unique_ptr<File> file, uint64_t file_size,
            std::vector<uint64_t> offsets, std::vector<uint64_t> sizes, uint64_t columns,
            bool header, bool index_column, uint64_t transfer_size, std::vector<char> contents)
      : path_(std::move(path)),
        file_(std::move(file)),
        file_size_(file_size),
        offsets_(std::move(offsets)),
        sizes_(std::move(sizes)),
        columns_(columns),
        header_(header),
        index_column_(index_column),
        transfer_size_(transfer_size),
        contents_(std::move(contents)),
        in_memory_(!file_) {}

  uint64_t num_samples() const override { return offsets_.size(); }
  uint64_t sample_size(uint64_t i) const override { return i < sizes_.size() ? sizes_[i] : 0; }

  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    DLIO_RETURN_NOT_OK(CheckSampleIndex(path_, i, offsets_.size()));
    DLIO_RETURN_NOT_OK(out->Resize(sizes_[i]));
    if (in_memory_) {
      std::memcpy(out->data(), contents_.data() + offsets_[i], sizes_[i]);
      return Status::OK();
    }
    return ReadRange(file_.get(), offsets_[i], sizes_[i], transfer_size_, out->data());
  }

  std::string DescribeJson() const override {
    uint64_t mn = 0, mx = 0;
    for (size_t i = 0; i < sizes_.size(); ++i) {
      mn = i == 0 ? sizes_[i] : std::min(mn, sizes_[i]);
      mx = std::max(mx, sizes_[i]);
    }
    return "{\"format\":\"csv\",\"path\":" + JsonString(path_) +
           ",\"file_size\":" + std::to_string(file_size_) + "," +
           SampleSizesJson(offsets_.size(), *this) +
           ",\"rows\":" + std::to_string(offsets_.size()) +
           ",\"columns\":" + std::to_string(columns_) +
           ",\"header\":" + (header_ ? "true" : "false") +
           ",\"index_column\":" + (index_column_ ? "true" : "false") +
           ",\"row_size\":{\"min\":" + std::to_string(mn) + ",\"max\":" + std::to_string(mx) +
           "},\"decoded_sample_size\":" + std::to_string(columns_ * 4) +
           ProblemsJson(offsets_.empty()
                            ? std::vector<std::string>{path_ + ": no data rows (samples)"}
                            : std::vector<std::string>{}) +
           "}";
  }

 private:
  std::string path_;
  std::unique_ptr<File> file_;  // null under the pandas model (the file is closed after loading)
  uint64_t file_size_;
  std::vector<uint64_t> offsets_, sizes_;  // of each row's text, line end excluded
  uint64_t columns_;
  bool header_, index_column_;
  uint64_t transfer_size_;
  std::vector<char> contents_;  // the whole file, under the pandas model
  bool in_memory_;
};

// The open-time scan: splits the file into lines, checks they all have the first line's column
// count, and decides whether the first line is a header.
class CsvScanner {
 public:
  CsvScanner(const std::string& path, bool force_header)
      : path_(path), force_header_(force_header) {}

  // Feeds the bytes at [pos, pos + n).
  Status Feed(uint64_t pos, const char* data, size_t n) {
    const char* p = data;
    const char* end = data + n;
    while (p < end) {
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', end - p));
      const char* stop = nl ? nl : end;
      commas_ += static_cast<uint64_t>(std::count(p, stop, ','));
      if (collect_first_) KeepFirstLine(p, stop);
      if (stop > p) last_ = stop[-1];
      if (!nl) break;
      DLIO_RETURN_NOT_OK(EndLine(pos + static_cast<uint64_t>(nl - data)));
      p = nl + 1;
      line_start_ = pos + static_cast<uint64_t>(p - data);
    }
    return Status::OK();
  }

  // Ends a last line that has no line end.
  Status Finish(uint64_t file_size) {
    if (line_start_ < file_size) DLIO_RETURN_NOT_OK(EndLine(file_size));
    return Status::OK();
  }

  std::vector<uint64_t> offsets, sizes;
  uint64_t columns = 0;
  bool header = false;
  bool index_column = false;  // the header's first field is empty: pandas' unnamed index

 private:
  Status EndLine(uint64_t nl_pos) {
    uint64_t len = nl_pos - line_start_;
    if (len > 0 && last_ == '\r') --len;  // CRLF files: the sample excludes the \r
    ++line_no_;
    const uint64_t start = line_start_;
    const uint64_t cols = commas_ + 1;
    commas_ = 0;
    last_ = '\0';
    if (len == 0) {  // blank lines are skipped, as pandas does
      first_line_.clear();
      first_line_cut_ = false;
      return Status::OK();
    }
    if (collect_first_) {
      collect_first_ = false;
      columns = cols;
      first_line_no_ = line_no_;
      if (first_line_cut_) {
        first_line_.resize(std::min(first_line_.size(), first_line_.rfind(',')));
      } else if (!first_line_.empty() && first_line_.back() == '\r') {
        first_line_.pop_back();
      }
      header = force_header_ || !AllNumeric(first_line_) || IsPandasDefaultHeader(first_line_);
      index_column = header && cols > 1 && !first_line_.empty() && first_line_.front() == ',';
      first_line_.clear();
      first_line_.shrink_to_fit();
      if (header) return Status::OK();
    } else if (cols != columns) {
      return Status::Corruption(path_, ": line ", line_no_, " at offset ", start, " has ", cols,
                                " columns, line ", first_line_no_, " has ", columns);
    }
    offsets.push_back(start);
    sizes.push_back(len);
    return Status::OK();
  }

  void KeepFirstLine(const char* p, const char* stop) {
    const size_t room = kMaxHeaderProbe - std::min(kMaxHeaderProbe, first_line_.size());
    const size_t n = static_cast<size_t>(stop - p);
    first_line_.append(p, std::min(n, room));
    if (n > room) first_line_cut_ = true;
  }

  const std::string& path_;
  bool force_header_;
  bool collect_first_ = true, first_line_cut_ = false;
  std::string first_line_;
  uint64_t line_start_ = 0, line_no_ = 0, first_line_no_ = 0, commas_ = 0;
  char last_ = '\0';
};

Status DecodeRow(const uint8_t* data, size_t size, SampleBuffer* out) {
  const char* p = reinterpret_cast<const char*>(data);
  const char* end = p + size;
  const size_t columns = 1 + static_cast<size_t>(std::count(p, end, ','));
  DLIO_RETURN_NOT_OK(out->Resize(columns * sizeof(float)));
  float* dst = reinterpret_cast<float*>(out->data());  // SampleBuffer is 64-byte aligned
  for (size_t c = 0;; ++c) {
    const char* comma = static_cast<const char*>(std::memchr(p, ',', end - p));
    const char* stop = comma ? comma : end;
    if (!ParseField(p, stop, dst + c)) {
      const size_t show = std::min<size_t>(static_cast<size_t>(stop - p), 40);
      return Status::Corruption("csv row: column ", c, " ('", std::string(p, show),
                                (show < static_cast<size_t>(stop - p) ? "..." : ""), "') at byte ",
                                p - reinterpret_cast<const char*>(data),
                                " of the row is not a float32 number");
    }
    if (!comma) break;
    p = comma + 1;
  }
  return Status::OK();
}

// Values per written row: DLIO's product of record_dims (a 0 dimension counted as 1) when they
// are set, else one float32 value per 4 bytes of the `record`-byte sample (at least one).
uint64_t RowColumns(const FormatOptions& options, uint64_t record) {
  if (options.record_dims.empty()) return std::max<uint64_t>(1, record / 4);
  uint64_t columns = 1;
  for (const uint64_t d : options.record_dims) columns *= std::max<uint64_t>(1, d);
  return columns;
}

class CsvFormat final : public Format {
 public:
  CsvFormat() { readers_.Add(IoModel::kNative, OpenNative).Add(IoModel::kPandas, OpenPandas); }

  std::string name() const override { return "csv"; }
  std::string extension() const override { return "csv"; }
  // Every row of a file needs the same column count.
  bool variable_sample_sizes() const override { return false; }
  bool exact_sample_sizes() const override { return false; }
  // ~10.6 bytes of text per float32 value (docs/formats.md, csv).
  double stored_bytes_per_record_byte(uint32_t) const override { return 2.65; }
  bool has_decoder() const override { return true; }

  Status Decode(const uint8_t* data, size_t size, SampleBuffer* out) const override {
    return DecodeRow(data, size, out);
  }

  Status Write(Storage* storage, const std::string& path, const FileSpec& spec,
               const FormatOptions& options) const override {
    DLIO_ASSIGN_OR_RETURN(const uint64_t record, UniformSampleSize(spec, path, "csv"));
    const uint64_t columns = RowColumns(options, record);
    const bool header = options.formats.Value<CsvOptions>().header;
    DLIO_ASSIGN_OR_RETURN(auto file, storage->Open(path, OpenMode::kCreateNew));
    std::vector<char> buf(kWriteChunk);
    size_t fill = 0;
    uint64_t pos = 0;
    auto flush = [&]() -> Status {
      DLIO_RETURN_NOT_OK(file->WriteAt(pos, buf.data(), fill));
      pos += fill;
      fill = 0;
      return Status::OK();
    };
    auto write_all = [&]() -> Status {
      if (header && !spec.sample_sizes.empty()) {
        for (uint64_t c = 0; c < columns; ++c) {
          if (buf.size() - fill < kMaxValueChars) DLIO_RETURN_NOT_OK(flush());
          if (c > 0) buf[fill++] = ',';
          buf[fill++] = 'c';
          fill = static_cast<size_t>(
              std::to_chars(buf.data() + fill, buf.data() + buf.size(), c).ptr - buf.data());
        }
        buf[fill++] = '\n';
      }
      std::vector<float> values(static_cast<size_t>(std::min<uint64_t>(columns, kValueBlock)));
      for (uint64_t i = 0; i < spec.sample_sizes.size(); ++i) {
        for (uint64_t c0 = 0; c0 < columns; c0 += values.size()) {
          const size_t n = static_cast<size_t>(std::min<uint64_t>(values.size(), columns - c0));
          FillSampleFloats(spec.seed, i, c0, values.data(), n);
          for (size_t k = 0; k < n; ++k) {
            if (buf.size() - fill < kMaxValueChars) DLIO_RETURN_NOT_OK(flush());
            if (c0 + k > 0) buf[fill++] = ',';
            if (i == 0 && columns == 1 && !header && values[k] == 0.0f) {
              // "0" would be pandas' default header of a one-column frame: a reader (ours,
              // pandas') would take this first row for a header.
              std::memcpy(buf.data() + fill, "0.0", 3);
              fill += 3;
              continue;
            }
            // Shortest representation that reads back as the same float32.
            fill = static_cast<size_t>(
                std::to_chars(buf.data() + fill, buf.data() + buf.size(), values[k]).ptr -
                buf.data());
          }
        }
        if (buf.size() == fill) DLIO_RETURN_NOT_OK(flush());
        buf[fill++] = '\n';
      }
      if (fill > 0) DLIO_RETURN_NOT_OK(flush());
      return file->Close();
    };
    Status st = write_all();
    if (!st.ok()) {
      file.reset();
      RemoveQuietly(storage, path);
    }
    return st;
  }

  FormatCapabilities capabilities() const override {
    FormatCapabilities c;
    c.io_models = {IoModel::kPandas};
    return c;
  }
  std::vector<IoModel> reader_models() const override { return readers_.models(); }

  Result<std::unique_ptr<FormatReader>> Open(Storage* storage, const std::string& path,
                                             const FormatOptions& options) const override {
    return readers_.Open(capabilities(), storage, path, options);
  }

 private:
  // native: the file scanned in transfer_size requests (ScanFile), the rows then read at their
  // offsets.
  static Result<std::unique_ptr<FormatReader>> OpenNative(Storage* storage, const std::string& path,
                                                          const FormatOptions& options) {
    DLIO_ASSIGN_OR_RETURN(SizedFile opened, OpenSized(storage, path, options));
    std::unique_ptr<File> file = std::move(opened.file);
    const uint64_t size = opened.size;
    CsvScanner scan(path, options.formats.Value<CsvOptions>().header);
    DLIO_RETURN_NOT_OK(ScanFile(file.get(), size, options.transfer_size, &scan));
    return MakeReader(path, std::move(file), size, &scan, {}, options);
  }

  // pandas: the whole file read with pandas.read_csv's requests (pandas_read.h), closed, and
  // served from memory.
  static Result<std::unique_ptr<FormatReader>> OpenPandas(Storage* storage, const std::string& path,
                                                          const FormatOptions& options) {
    DLIO_ASSIGN_OR_RETURN(SizedFile opened, OpenSized(storage, path, options));
    std::unique_ptr<File> file = std::move(opened.file);
    const uint64_t size = opened.size;
    // Room for the last requests past the end too (at most ~4 chunks: UTF-8's 4 bytes per
    // character), so the file is not copied when they come.
    std::vector<char> contents;
    contents.reserve(static_cast<size_t>(size + 5 * kPandasChunkChars));
    DLIO_RETURN_NOT_OK(ReadLikePandas(file.get(), &contents, options.framework_client_costs));
    DLIO_RETURN_NOT_OK(file->Close());
    CsvScanner scan(path, options.formats.Value<CsvOptions>().header);
    DLIO_RETURN_NOT_OK(scan.Feed(0, contents.data(), contents.size()));
    const uint64_t read = contents.size();  // before the move below
    return MakeReader(path, nullptr, read, &scan, std::move(contents), options);
  }

  // The reader over what a scan found (`file`: null when `contents` holds the file).
  static Result<std::unique_ptr<FormatReader>> MakeReader(const std::string& path,
                                                          std::unique_ptr<File> file, uint64_t size,
                                                          CsvScanner* scan,
                                                          std::vector<char> contents,
                                                          const FormatOptions& options) {
    DLIO_RETURN_NOT_OK(scan->Finish(size));
    return std::unique_ptr<FormatReader>(
        new CsvReader(path, std::move(file), size, std::move(scan->offsets), std::move(scan->sizes),
                      scan->columns, scan->header, scan->index_column, options.transfer_size,
                      std::move(contents)));
  }

  // The native open-time scan: the file in requests of transfer_size (0 = 1 MiB).
  static Status ScanFile(File* file, uint64_t size, uint64_t transfer_size, CsvScanner* scan) {
    const uint64_t step = transfer_size == 0 ? kScanChunk : transfer_size;
    std::vector<char> chunk(
        static_cast<size_t>(std::min<uint64_t>(step, std::max<uint64_t>(size, 1))));
    for (uint64_t pos = 0; pos < size;) {
      const size_t len = static_cast<size_t>(std::min<uint64_t>(chunk.size(), size - pos));
      DLIO_RETURN_NOT_OK(file->ReadExactAt(pos, len, chunk.data()));
      DLIO_RETURN_NOT_OK(scan->Feed(pos, chunk.data(), len));
      pos += len;
    }
    return Status::OK();
  }

  io_models::ModelReaders readers_;
};

}  // namespace

std::unique_ptr<Format> NewCsvFormat() { return std::make_unique<CsvFormat>(); }

}  // namespace dlio::format_internal
