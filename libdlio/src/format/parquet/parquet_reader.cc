// The parquet reader (native request model). Open reads the tail (8 bytes: footer length and
// "PAR1") then the footer in one read, decodes it and checks every row group's chunk ranges and
// row counts against the file before any sample is read. A sample is one row: ReadSample finds
// the row group holding it, reads the selected columns' chunks of that group (one read per chunk,
// through the Storage, so traces and stats see them), decodes their pages and returns the row's
// values of the selected columns, concatenated in column order. Decoded row groups are kept in a
// small per-reader cache (the fork's row_group_cache_size is 4; kCachedGroups here, and at most
// kCacheBytes of decoded values beyond the newest group, so flux-sized groups of ~600 MB do not
// pile up), so the rows of a group cost one read of each chunk. Fixed-width values of PLAIN pages
// stored uncompressed without nulls are not copied out of the bytes read (the group keeps them:
// DecodedColumn::spans), so such a row costs the read and its copy into the sample, no more; and
// when the caller reads no byte (SampleBuffer::views_allowed) a row of one column is handed as a
// view of the group's bytes, which the buffer keeps alive, without the copy. The next rows of the
// group such a buffer holds are served from it without the cache's lock while that group is still
// the cache's most recent one (ServeFromHeld), and a dropped group's chunk buffers are read into
// again by the next group's reads (ChunkBufferPool) instead of fresh memory, whose pages fault.
// A caller that reads no byte and lends a landing buffer (SampleBuffer::landing: a pipeline reader
// thread's) has the native chunks read into it instead, every group into the same warm pages, as
// fio reads into one buffer; such a group's in-place values are then good only until the next
// read there, so a caller that copies rows reads the group again into memory of its own.
// Threads sharing a reader read a group once: one that misses a group another is reading waits
// for that read (Group), as arrow's one reader of a file would read it once. ViewsOfHeld serves a
// run of rows of the held group at once, as ServeFromHeld serves each.
// Under reader.io_model pyarrow the footer and a group's chunks are read with pyarrow's requests
// instead (io_models/pyarrow_read.h).
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <list>
#include <mutex>
#include <utility>

#include "format/io_util.h"
#include "format/parquet/parquet_codec.h"
#include "format/parquet/parquet_footer.h"
#include "format/parquet/parquet_meta.h"
#include "format/parquet/parquet_pages.h"
#include "format/parquet/parquet_schema.h"
#include "format/parquet/parquet_writer.h"
#include "io_models/pyarrow_read.h"

namespace dlio::format_internal::parquet {
namespace {

constexpr size_t kCachedGroups = 4;
constexpr uint64_t kCacheBytes = 256u << 20;

// The chunk buffers of a row group nobody holds any more, kept (one group's, of at most
// kSpareBytes) for the next group's reads: re-reading into memory already mapped saves the page
// faults of fresh memory. Its owners are the reader and the groups it read (a group may outlive
// its reader in a SampleBuffer's view). Thread-safe.
class ChunkBufferPool {
 public:
  static constexpr uint64_t kSpareBytes = kCacheBytes / kCachedGroups;

  // The spare buffers (none when there are none), resized to `n`.
  std::vector<UnsetBytes> Take(size_t n) {
    std::vector<UnsetBytes> out;
    {
      std::lock_guard<std::mutex> lock(mu_);
      out.swap(spare_);
    }
    out.resize(n);
    return out;
  }
  // Keeps `*bytes` when no spare is kept and they are small enough; frees them otherwise.
  void Give(std::vector<UnsetBytes>* bytes) {
    uint64_t total = 0;
    for (const UnsetBytes& b : *bytes) total += b.capacity();
    if (total == 0 || total > kSpareBytes) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (spare_.empty()) spare_.swap(*bytes);
  }

 private:
  std::mutex mu_;
  std::vector<UnsetBytes> spare_;
};

// One row group, decoded: the selected columns' values.
struct DecodedGroup {
  uint64_t index = 0;
  uint64_t rows = 0;
  std::vector<DecodedColumn> columns;  // in selected_ order
  std::vector<UnsetBytes> read;        // the chunks' bytes, kept when a column's spans point there
  std::shared_ptr<const AlignedBuffer> landed;  // or the landing buffer they were read into
  uint64_t bytes = 0;  // decoded values and read bytes held (a landed group's counted as its own)
  // Whether rows of the group are good only to callers that read no byte: its spans point into a
  // landing buffer that later reads overwrite.
  bool bytes_transient() const { return landed != nullptr; }
};

// Where a chunk lies: [begin, begin + size).
struct ChunkRange {
  uint64_t begin = 0, size = 0;
};

// How the reader fetches a row group's chunks (native, or one of pyarrow's ways).
struct FetchMode {
  bool pyarrow = false;
  PyarrowRead read = PyarrowRead::kFork;
  Storage* storage = nullptr;  // the fork's reads open the file again
  bool direct = false;
};

Result<ChunkRange> CheckChunk(const ColumnChunk& cc, const ColumnLayout& col, size_t g,
                              uint64_t data_end, const std::string& path, uint64_t max_decoded) {
  const ColumnMetaData& m = cc.meta;
  auto bad = [&](const std::string& what, int64_t at) {
    return Status::Corruption(path, ": row group ", g, ", column '", col.name, "': ", what,
                              " (offset ", at, ")");
  };
  if (!cc.has_meta) return bad("no column metadata (external column chunks are not supported)", 0);
  if (m.type != col.element.type) return bad("chunk type differs from the schema's", 0);
  int64_t begin = m.data_page_offset;
  if (m.dictionary_page_offset > 0 && m.dictionary_page_offset < begin) {
    begin = m.dictionary_page_offset;
  }
  if (begin < static_cast<int64_t>(kMagicBytes) || m.total_compressed_size <= 0 ||
      static_cast<uint64_t>(begin) > data_end ||
      static_cast<uint64_t>(m.total_compressed_size) > data_end - static_cast<uint64_t>(begin)) {
    return bad("chunk of " + std::to_string(m.total_compressed_size) +
                   " bytes lies outside the data before the footer at " + std::to_string(data_end),
               begin);
  }
  if (m.total_uncompressed_size < 0 ||
      static_cast<uint64_t>(m.total_uncompressed_size) > max_decoded) {
    return bad("uncompressed size " + std::to_string(m.total_uncompressed_size) +
                   " exceeds reader.max_decoded_bytes " + std::to_string(max_decoded),
               begin);
  }
  return ChunkRange{static_cast<uint64_t>(begin), static_cast<uint64_t>(m.total_compressed_size)};
}

class ParquetReader final : public FormatReader {
 public:
  ParquetReader(std::unique_ptr<File> file, uint64_t size, FileMetaData meta,
                std::vector<ColumnLayout> columns, std::vector<size_t> selected,
                std::vector<std::vector<ChunkRange>> ranges, uint64_t max_decoded, FetchMode fetch)
      : file_(std::move(file)),
        path_(file_->path()),
        file_size_(size),
        meta_(std::move(meta)),
        columns_(std::move(columns)),
        selected_(std::move(selected)),
        ranges_(std::move(ranges)),
        max_decoded_(max_decoded),
        fetch_(fetch) {
    uint64_t start = 0;
    for (const RowGroup& g : meta_.row_groups) {
      starts_.push_back(start);
      start += static_cast<uint64_t>(g.num_rows);
    }
    for (size_t c : selected_) {
      fixed_row_bytes_ += columns_[c].width;
      has_variable_ = has_variable_ || columns_[c].width == 0;
    }
    var_sizes_.resize(meta_.row_groups.size());
    reading_.assign(meta_.row_groups.size(), 0);
  }

  uint64_t num_samples() const override { return static_cast<uint64_t>(meta_.num_rows); }

  // Exact. With byte_array columns the row's group is read and decoded on first use (as
  // ReadSample would), and its rows' sizes kept (8 bytes a row); 0 when that fails (the error
  // resurfaces when the sample is read).
  uint64_t sample_size(uint64_t i) const override {
    if (i >= num_samples()) return 0;
    if (!has_variable_) return fixed_row_bytes_;
    const size_t g = GroupOf(i);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!var_sizes_[g].empty()) return fixed_row_bytes_ + var_sizes_[g][i - starts_[g]];
    }
    if (!Group(g, nullptr).ok()) return 0;
    std::lock_guard<std::mutex> lock(mu_);
    return fixed_row_bytes_ + var_sizes_[g][i - starts_[g]];
  }

  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    if (ServeFromHeld(i, out)) return Status::OK();
    DLIO_RETURN_NOT_OK(CheckSampleIndex(path_, i, num_samples()));
    const size_t g = GroupOf(i);
    DLIO_ASSIGN_OR_RETURN(std::shared_ptr<const DecodedGroup> group, Group(g, out));
    const uint64_t row = i - starts_[g];
    if (out->views_allowed() && selected_.size() == 1) {  // the row's bytes lie in one place
      const uint8_t* at = ValueAt(*group, 0, row);
      const uint64_t len = ValueBytes(*group, 0, row);
      out->SetView(at, len, std::move(group));
      return Status::OK();
    }
    uint64_t n = 0;
    for (size_t k = 0; k < selected_.size(); ++k) n += ValueBytes(*group, k, row);
    DLIO_RETURN_NOT_OK(out->Resize(n));
    // A landed group's bytes may be another group's by now (and being written by another
    // thread): to a caller that reads no byte a copy of them is worth no more than none.
    if (group->bytes_transient()) return Status::OK();
    uint8_t* dst = out->data();
    for (size_t k = 0; k < selected_.size(); ++k) {
      const uint64_t len = ValueBytes(*group, k, row);
      if (len != 0) std::memcpy(dst, ValueAt(*group, k, row), len);
      dst += len;
    }
    return Status::OK();
  }

  // ServeFromHeld for rows first.. of the held group, at once.
  uint64_t ViewsOfHeld(uint64_t first, uint64_t n, SampleBuffer* out, SampleSpan* spans) override {
    const void* held = out->view_keeper();
    if (held == nullptr || held != front_.load(std::memory_order_acquire)) return 0;
    const DecodedGroup& group = *static_cast<const DecodedGroup*>(held);
    const uint64_t start = starts_[group.index];
    if (first < start || first - start >= group.rows) return 0;
    const uint64_t row = first - start;
    n = std::min(n, group.rows - row);
    const uint64_t w = columns_[selected_[0]].width;
    for (uint64_t r = 0; r < n;) {
      if (w == 0) {
        spans[r] = SampleSpan{ValueAt(group, 0, row + r), ValueBytes(group, 0, row + r)};
        ++r;
        continue;
      }
      // A page's rows lie back to back: one lookup for all of them.
      const uint8_t* at = group.columns[0].Fixed(row + r, w);
      const uint64_t m = std::min(n - r, group.columns[0].FixedRunFrom(row + r, group.rows));
      for (uint64_t q = 0; q < m; ++q) spans[r + q] = SampleSpan{at + q * w, w};
      r += m;
    }
    if (n > 0) out->MoveView(spans[n - 1].data, spans[n - 1].size);
    return n;
  }

  std::string DescribeJson() const override;

 private:
  // Row i as a view of the group `out` already holds a view of, when that is this reader's most
  // recent group (front_) and holds row i: the locked lookup would find it at the cache's front
  // and leave the cache as it is, so skipping it changes nothing but the lock and the counts.
  // Two live objects never share an address, so a buffer whose keeper is front_ holds that group.
  bool ServeFromHeld(uint64_t i, SampleBuffer* out) const {
    const void* held = out->view_keeper();
    if (held == nullptr || held != front_.load(std::memory_order_acquire)) return false;
    const DecodedGroup& group = *static_cast<const DecodedGroup*>(held);
    const uint64_t first = starts_[group.index];
    if (i < first || i - first >= group.rows) return false;
    out->MoveView(ValueAt(group, 0, i - first), ValueBytes(group, 0, i - first));
    return true;
  }

  size_t GroupOf(uint64_t i) const {
    return static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), i) -
                               starts_.begin() - 1);
  }

  const uint8_t* ValueAt(const DecodedGroup& group, size_t k, uint64_t row) const {
    const DecodedColumn& d = group.columns[k];
    const uint64_t w = columns_[selected_[k]].width;
    return w != 0 ? d.Fixed(row, w) : d.data.data() + d.offsets[row];
  }

  uint64_t ValueBytes(const DecodedGroup& group, size_t k, uint64_t row) const {
    const uint64_t w = columns_[selected_[k]].width;
    if (w != 0) return w;
    const DecodedColumn& d = group.columns[k];
    return d.offsets[row + 1] - d.offsets[row];
  }

  // Group g from the cache, or read (into `out`'s landing buffer when it lends one, the native
  // model's, and reads no byte). `out` null: only the group's sizes are wanted. A caller that
  // copies rows passes over a cached group whose bytes were landed (they may have been
  // overwritten), and reads it again. One thread reads a group at a time: another that misses it
  // meanwhile waits for that read and takes its group from the cache (as arrow's one reader of a
  // file reads a group once), or reads it itself when that read failed or left nothing it can use.
  Result<std::shared_ptr<const DecodedGroup>> Group(size_t g, SampleBuffer* out) const {
    const bool copies = out != nullptr && !out->views_allowed();
    {
      std::unique_lock<std::mutex> lock(mu_);
      while (true) {
        if (auto hit = CachedLocked(g, copies)) return hit;
        if (reading_[g] == 0) break;
        group_read_.wait(lock);
      }
      reading_[g] = 1;
    }
    auto fresh = ReadSized(g, out);
    std::lock_guard<std::mutex> lock(mu_);
    reading_[g] = 0;
    group_read_.notify_all();
    if (!fresh.ok()) return fresh.status();
    if (!fresh->second.empty()) var_sizes_[g] = std::move(fresh->second);
    cache_.push_front(fresh->first);
    front_.store(fresh->first.get(), std::memory_order_release);
    cached_bytes_ += fresh->first->bytes;
    while (cache_.size() > kCachedGroups || (cache_.size() > 1 && cached_bytes_ > kCacheBytes)) {
      cached_bytes_ -= cache_.back()->bytes;
      cache_.pop_back();
    }
    return std::move(fresh->first);
  }

  // Group g from the cache (mu_ held), moved to its front; null when absent (or, for a caller
  // that `copies` rows, landed).
  std::shared_ptr<const DecodedGroup> CachedLocked(size_t g, bool copies) const {
    for (auto it = cache_.begin(); it != cache_.end(); ++it) {
      if ((*it)->index != g || (copies && (*it)->bytes_transient())) continue;
      if (it != cache_.begin()) {
        cache_.splice(cache_.begin(), cache_, it);
        front_.store(it->get(), std::memory_order_release);
      }
      return *it;
    }
    return nullptr;
  }

  // ReadGroup for Group, with its rows' sizes when a selected column is a byte_array and they are
  // not known yet (else empty).
  Result<std::pair<std::shared_ptr<const DecodedGroup>, std::vector<uint64_t>>> ReadSized(
      size_t g, SampleBuffer* out) const {
    const bool land = out != nullptr && out->views_allowed() && out->landing() && !fetch_.pyarrow;
    DLIO_ASSIGN_OR_RETURN(std::shared_ptr<const DecodedGroup> fresh,
                          ReadGroup(g, land ? out : nullptr));
    std::vector<uint64_t> sizes;
    bool known = true;
    {
      std::lock_guard<std::mutex> lock(mu_);
      known = !var_sizes_[g].empty();
    }
    if (has_variable_ && !known) {
      const uint64_t rows = static_cast<uint64_t>(meta_.row_groups[g].num_rows);
      sizes.assign(rows, 0);
      for (size_t k = 0; k < selected_.size(); ++k) {
        if (columns_[selected_[k]].width != 0) continue;
        for (uint64_t r = 0; r < rows; ++r) sizes[r] += ValueBytes(*fresh, k, r);
      }
    }
    return std::make_pair(std::move(fresh), std::move(sizes));
  }

  // A new group, whose chunk buffers go back to the pool when its last holder lets it go.
  std::shared_ptr<DecodedGroup> NewGroup(size_t g) const {
    std::shared_ptr<ChunkBufferPool> pool = pool_;
    std::shared_ptr<DecodedGroup> group(new DecodedGroup, [pool](DecodedGroup* d) {
      pool->Give(&d->read);
      delete d;
    });
    group->index = g;
    group->rows = static_cast<uint64_t>(meta_.row_groups[g].num_rows);
    return group;
  }

  // Reads group g's chunks, one request each (pyarrow's requests under that model), into
  // `lender`'s landing buffer back to back when given, else into buffers of the group's own (a
  // dropped group's when the pool has them), and decodes them.
  Result<std::shared_ptr<const DecodedGroup>> ReadGroup(size_t g, SampleBuffer* lender) const {
    std::shared_ptr<DecodedGroup> group = NewGroup(g);
    std::vector<io_models::ByteRange> chunks;
    for (size_t c : selected_) chunks.push_back({ranges_[g][c].begin, ranges_[g][c].size});
    const std::vector<io_models::ByteRange> requests =
        fetch_.pyarrow ? io_models::RowGroupRequests(chunks, fetch_.read) : chunks;
    std::vector<UnsetBytes> bytes;
    std::vector<const uint8_t*> at(requests.size());  // where request r's bytes are
    std::shared_ptr<AlignedBuffer> landing;
    if (lender != nullptr) {
      DLIO_ASSIGN_OR_RETURN(landing, FetchInto(requests, lender, &at));
    } else {
      bytes = pool_->Take(requests.size());
      for (size_t r = 0; r < requests.size(); ++r) {
        DLIO_RETURN_NOT_OK(Fetch(requests[r], &bytes[r]));
        at[r] = bytes[r].data();
      }
    }
    bool in_place = false;
    for (size_t k = 0; k < selected_.size(); ++k) {
      // The request that holds the whole chunk (a file's metadata may claim chunks that overlap
      // or straddle the coalesced requests: none then holds it).
      size_t r = 0;
      auto holds = [&](const io_models::ByteRange& q) {
        return q.offset <= chunks[k].offset &&
               chunks[k].offset + chunks[k].length <= q.offset + q.length;
      };
      while (r < requests.size() && !holds(requests[r])) ++r;
      if (r == requests.size()) {
        return Status::Corruption(path_, ": row group ", g, "'s column chunk at offset ",
                                  chunks[k].offset, " (", chunks[k].length,
                                  " bytes) overlaps another chunk of the group");
      }
      DLIO_ASSIGN_OR_RETURN(
          DecodedColumn d,
          DecodeOne(g, selected_[k], at[r] + (chunks[k].offset - requests[r].offset)));
      group->bytes += d.data.size() + d.offsets.size() * sizeof(uint64_t);
      in_place = in_place || !d.spans.empty();
      group->columns.push_back(std::move(d));
    }
    if (in_place) {  // a column's values stayed in the bytes read (PLAIN, uncompressed)
      for (const io_models::ByteRange& q : requests) group->bytes += q.length;
      group->read = std::move(bytes);
      group->landed = landing;
    } else {
      pool_->Give(&bytes);
    }
    return std::shared_ptr<const DecodedGroup>(std::move(group));
  }

  // The native requests (ReadAt of the open file) into `lender`'s landing buffer, one after
  // another; returns that buffer. One too small is replaced by a larger one, not grown: groups
  // read into it earlier may still point into it (they keep it alive).
  Result<std::shared_ptr<AlignedBuffer>> FetchInto(
      const std::vector<io_models::ByteRange>& requests, SampleBuffer* lender,
      std::vector<const uint8_t*>* at) const {
    uint64_t total = 0;
    for (const io_models::ByteRange& q : requests) total += q.length;
    std::shared_ptr<AlignedBuffer> landing = lender->landing();
    if (landing->capacity() < total) {
      landing = std::make_shared<AlignedBuffer>();
      lender->set_landing(landing);
    }
    DLIO_RETURN_NOT_OK(landing->Resize(total));
    uint8_t* dst = landing->data();
    for (size_t r = 0; r < requests.size(); ++r) {
      DLIO_RETURN_NOT_OK(ReadRange(file_.get(), requests[r].offset, requests[r].length, 0, dst));
      (*at)[r] = dst;
      dst += requests[r].length;
    }
    return landing;
  }

  // One request: a ReadAt of the open file, or the fork's buffered read of a file opened again.
  Status Fetch(const io_models::ByteRange& r, UnsetBytes* out) const {
    if (out->capacity() < r.length) UnsetBytes().swap(*out);  // no copy of the old bytes
    out->resize(r.length);
    if (fetch_.pyarrow && fetch_.read == PyarrowRead::kFork) {
      return io_models::ReadForkSpan(fetch_.storage, path_, r, fetch_.direct, out->data());
    }
    return ReadRange(file_.get(), r.offset, r.length, 0, out->data());
  }

  Result<DecodedColumn> DecodeOne(size_t g, size_t c, const uint8_t* bytes) const {
    const ColumnChunk& cc = meta_.row_groups[g].columns[c];
    ChunkInfo info;
    info.column = &columns_[c];
    info.codec = cc.meta.codec;
    info.rows = static_cast<uint64_t>(meta_.row_groups[g].num_rows);
    info.file_offset = ranges_[g][c].begin;
    info.chunk_uncompressed = static_cast<uint64_t>(cc.meta.total_uncompressed_size);
    info.max_decoded = max_decoded_;
    info.in_place = true;  // ReadGroup keeps the bytes read when a column's values stay there
    info.path = path_;
    return DecodeChunk(info, bytes, ranges_[g][c].size);
  }

  std::unique_ptr<File> file_;
  std::string path_;
  uint64_t file_size_;
  FileMetaData meta_;
  std::vector<ColumnLayout> columns_;
  std::vector<size_t> selected_;                 // indices into columns_, in file order
  std::vector<std::vector<ChunkRange>> ranges_;  // [row group][column]
  std::vector<uint64_t> starts_;                 // first row of each row group
  uint64_t fixed_row_bytes_ = 0;
  uint64_t max_decoded_;
  bool has_variable_ = false;  // a selected column is a byte_array
  mutable std::mutex mu_;
  mutable std::vector<std::vector<uint64_t>>
      var_sizes_;  // [group][row] byte_array bytes, once read
  mutable std::list<std::shared_ptr<const DecodedGroup>> cache_;  // most recent first
  mutable uint64_t cached_bytes_ = 0;                             // sum of cache_'s bytes
  mutable std::atomic<const void*> front_{nullptr};  // cache_.front().get(), for ServeFromHeld
  mutable std::vector<uint8_t> reading_;             // [group] 1 while a thread reads it (mu_)
  mutable std::condition_variable group_read_;       // a read of a group ended
  std::shared_ptr<ChunkBufferPool> pool_ = std::make_shared<ChunkBufferPool>();
  FetchMode fetch_;
};

std::string ParquetReader::DescribeJson() const {
  std::string cols = "[";
  for (size_t c = 0; c < columns_.size(); ++c) {
    const ColumnLayout& l = columns_[c];
    const bool read = std::find(selected_.begin(), selected_.end(), c) != selected_.end();
    cols += std::string(c ? "," : "") + "{\"name\":" + JsonString(l.name) +
            ",\"type\":" + JsonString(PhysicalTypeName(l.element.type)) +
            ",\"width\":" + std::to_string(l.width) +
            ",\"optional\":" + (l.element.repetition == kOptional ? "true" : "false") +
            ",\"read\":" + (read ? "true" : "false") + "}";
  }
  cols += "]";
  std::string codecs;
  if (!meta_.row_groups.empty() && !meta_.row_groups[0].columns.empty()) {
    codecs = CodecName(meta_.row_groups[0].columns[0].meta.codec);
  }
  std::vector<std::string> problems;
  uint64_t rows_min = 0, rows_max = 0;
  for (size_t g = 0; g < meta_.row_groups.size(); ++g) {
    const uint64_t r = static_cast<uint64_t>(meta_.row_groups[g].num_rows);
    rows_min = g == 0 ? r : std::min(rows_min, r);
    rows_max = std::max(rows_max, r);
  }
  return "{\"format\":\"parquet\",\"path\":" + JsonString(path_) +
         ",\"file_size\":" + std::to_string(file_size_) +
         ",\"created_by\":" + JsonString(meta_.created_by) +
         ",\"num_rows\":" + std::to_string(meta_.num_rows) +
         ",\"row_groups\":{\"count\":" + std::to_string(meta_.row_groups.size()) +
         ",\"rows_min\":" + std::to_string(rows_min) + ",\"rows_max\":" + std::to_string(rows_max) +
         "},\"codec\":" + JsonString(codecs) + ",\"columns\":" + cols + "," +
         SampleSizesJson(num_samples(), *this) + ProblemsJson(problems) + "}";
}

}  // namespace

Result<std::unique_ptr<FormatReader>> OpenParquet(Storage* storage, const std::string& path,
                                                  const FormatOptions& options, bool pyarrow) {
  DLIO_ASSIGN_OR_RETURN(SizedFile opened, OpenSized(storage, path, options));
  std::unique_ptr<File> file = std::move(opened.file);
  const uint64_t size = opened.size;
  uint64_t data_end = 0;
  const uint64_t tail = pyarrow ? io_models::kPyarrowFooterReadSize : kTailBytes;
  DLIO_ASSIGN_OR_RETURN(FileMetaData meta, ReadFooter(file.get(), size, path, tail, &data_end));
  DLIO_RETURN_NOT_OK(CheckRows(meta, path, data_end));
  DLIO_ASSIGN_OR_RETURN(std::vector<ColumnLayout> columns, FileLayout(meta, path));
  std::vector<std::vector<ChunkRange>> ranges(meta.row_groups.size());
  for (size_t g = 0; g < meta.row_groups.size(); ++g) {
    const RowGroup& rg = meta.row_groups[g];
    if (rg.columns.size() != columns.size()) {
      return Status::Corruption(path, ": row group ", g, " has ", rg.columns.size(),
                                " column chunks for ", columns.size(),
                                " columns (footer at offset ", data_end, ")");
    }
    for (size_t c = 0; c < columns.size(); ++c) {
      DLIO_ASSIGN_OR_RETURN(ChunkRange r, CheckChunk(rg.columns[c], columns[c], g, data_end, path,
                                                     options.max_decoded_bytes));
      ranges[g].push_back(r);
    }
  }
  const ParquetOptions pq = options.formats.Value<ParquetOptions>();
  DLIO_ASSIGN_OR_RETURN(std::vector<size_t> selected, SelectColumns(columns, pq, path));
  return std::unique_ptr<FormatReader>(
      new ParquetReader(std::move(file), size, std::move(meta), std::move(columns),
                        std::move(selected), std::move(ranges), options.max_decoded_bytes,
                        FetchMode{pyarrow, pq.pyarrow_read, storage, options.direct}));
}

}  // namespace dlio::format_internal::parquet
