#include "format/parquet/parquet_chunk.h"

#include <algorithm>
#include <climits>
#include <vector>

#include "format/io_util.h"
#include "format/parquet/parquet_codec.h"
#include "format/parquet/parquet_dict.h"

namespace dlio::format_internal::parquet {

Status Sink::Append(const std::string& s) {
  buf_.append(s);
  return buf_.size() >= kWriteChunk ? Flush() : Status::OK();
}

Status Sink::Flush() {
  if (buf_.empty()) return Status::OK();
  DLIO_RETURN_NOT_OK(file_->WriteAt(written_, buf_.data(), buf_.size()));
  written_ += buf_.size();
  buf_.clear();
  return Status::OK();
}

namespace {

constexpr uint64_t kMaxPage = INT32_MAX;  // a page header's sizes are int32

// Rows a write batch takes. Arrow batches a list column's leaf values (1,024 of them) and ends a
// batch on a row boundary: ceil(1024 / values a row) rows.
uint64_t BatchRows(const ColumnLayout& c) {
  if (c.list_values == 0) return kWriteBatchRows;
  return std::max<uint64_t>(1, (kWriteBatchRows + c.list_values - 1) / c.list_values);
}

// One column chunk being written. Requires external synchronization.
class ChunkWriter {
 public:
  ChunkWriter(Sink* sink, const ColumnLayout& c, const ChunkOptions& o, ColumnChunk* chunk)
      : sink_(sink),
        c_(c),
        o_(o),
        chunk_(chunk),
        dict_mode_(o.use_dictionary && c.list_values == 0),
        batch_rows_(BatchRows(c)),
        dict_(c.width == 0) {}

  Status Run(uint64_t index, uint64_t first, uint64_t last);

 private:
  Result<uint64_t> Batch(uint64_t index, uint64_t first, uint64_t last);
  bool Fits(const std::string& value) const;
  uint64_t PageEstimate() const;
  Status CutPage();
  Status EndDictionary();
  Status Emit(PageHeader h, const std::string& body);

  Sink* sink_;
  const ColumnLayout& c_;
  ChunkOptions o_;
  ColumnChunk* chunk_;
  bool dict_mode_;  // values still go to the dictionary (never for list columns: parquet_chunk.h)
  uint64_t batch_rows_;
  bool wrote_dict_ = false;
  DictionaryBuilder dict_;
  std::vector<uint32_t> indices_;  // dictionary mode: the page's indices
  std::string plain_;              // PLAIN mode: the page's values
  uint64_t page_rows_ = 0;
  std::vector<std::string> held_;  // data pages waiting for the dictionary page
};

Status ChunkWriter::Run(uint64_t index, uint64_t first, uint64_t last) {
  ColumnMetaData& m = chunk_->meta;
  chunk_->has_meta = true;
  chunk_->file_offset = static_cast<int64_t>(sink_->offset());
  m.type = c_.element.type;
  m.path = {c_.name};
  m.codec = o_.codec;
  m.num_values = static_cast<int64_t>(last - first);
  m.data_page_offset = -1;
  for (uint64_t r = first; r < last;) {
    const uint64_t limit = std::min(last, r + std::min(batch_rows_, kMaxRowsPerPage - page_rows_));
    DLIO_ASSIGN_OR_RETURN(uint64_t end, Batch(index, r, limit));
    const bool cut_short = end < limit;  // the next value would take a page past 2 GiB
    if (PageEstimate() >= kPageBytes || page_rows_ >= kMaxRowsPerPage ||
        (cut_short && !dict_mode_)) {
      DLIO_RETURN_NOT_OK(CutPage());
    }
    if (dict_mode_ && (dict_.plain_bytes() >= kDictionaryPageLimit || cut_short)) {
      DLIO_RETURN_NOT_OK(EndDictionary());  // Arrow's FallbackToPlainEncoding
    }
    r = end;
  }
  if (dict_mode_) DLIO_RETURN_NOT_OK(EndDictionary());
  DLIO_RETURN_NOT_OK(CutPage());
  // As Arrow lists them: the dictionary page's, RLE (levels, listed even when there are none),
  // then the data pages'.
  if (wrote_dict_) {
    m.encodings = {kPlain, kRle, kRleDictionary};
  } else {
    m.encodings = {kRle, kPlain};
  }
  return Status::OK();
}

// Adds rows [first, last) (one write batch); returns where it stopped: `last`, or the row whose
// value would take the dictionary or the page past 2 GiB.
Result<uint64_t> ChunkWriter::Batch(uint64_t index, uint64_t first, uint64_t last) {
  std::string value(c_.width != 0 ? c_.width : c_.value_size, '\0');
  for (uint64_t row = first; row < last; ++row) {
    FillColumnValue(c_, index, o_.seed, row, reinterpret_cast<uint8_t*>(value.data()));
    if (!Fits(value)) return row;
    if (dict_mode_) {
      indices_.push_back(dict_.Put(value));
    } else {
      if (c_.width == 0) PutLe32(&plain_, static_cast<uint32_t>(value.size()));
      plain_.append(value);
    }
    ++page_rows_;
  }
  return last;
}

// Whether `value` can join without a page past 2 GiB (an empty page or dictionary takes any
// value; one of more than 2 GiB is refused when its page is written).
bool ChunkWriter::Fits(const std::string& value) const {
  if (dict_mode_) {
    return dict_.entries() == 0 || dict_.plain_bytes() + dict_.Cost(value.size()) <= kMaxPage ||
           dict_.Contains(value);
  }
  return page_rows_ == 0 || plain_.size() + value.size() + 4 <= kMaxPage;
}

uint64_t ChunkWriter::PageEstimate() const {
  return dict_mode_ ? IndexPageBound(indices_.size(), IndexBitWidth(dict_.entries()))
                    : plain_.size();
}

Status ChunkWriter::CutPage() {
  if (page_rows_ == 0) return Status::OK();
  PageHeader h;
  h.num_values = static_cast<int32_t>(page_rows_);
  std::string body;
  if (dict_mode_) {
    const int bw = IndexBitWidth(dict_.entries());
    body.push_back(static_cast<char>(bw));
    EncodeRleHybrid(indices_, bw, &body);
    h.encoding = kRleDictionary;
    indices_.clear();
  } else {
    body.swap(plain_);
    h.encoding = kPlain;
  }
  page_rows_ = 0;
  return Emit(h, body);
}

// Writes the pending indices as a page, the dictionary page, then the held data pages; values
// that follow are PLAIN.
Status ChunkWriter::EndDictionary() {
  DLIO_RETURN_NOT_OK(CutPage());
  dict_mode_ = false;
  wrote_dict_ = true;
  PageHeader h;
  h.type = kDictionaryPage;
  h.num_values = static_cast<int32_t>(dict_.entries());
  h.encoding = kPlain;
  chunk_->meta.dictionary_page_offset = static_cast<int64_t>(sink_->offset());
  DLIO_RETURN_NOT_OK(Emit(h, dict_.PlainPage()));
  if (!held_.empty()) chunk_->meta.data_page_offset = static_cast<int64_t>(sink_->offset());
  for (std::string& page : held_) {
    DLIO_RETURN_NOT_OK(sink_->Append(page));
    std::string().swap(page);
  }
  held_.clear();
  dict_ = DictionaryBuilder(c_.width == 0);
  return Status::OK();
}

// Compresses `body` and writes it with its header, or holds it while the dictionary is open.
Status ChunkWriter::Emit(PageHeader h, const std::string& body) {
  std::string page;
  DLIO_RETURN_NOT_OK(
      CompressPage(o_.codec, reinterpret_cast<const uint8_t*>(body.data()), body.size(), &page));
  if (body.size() > kMaxPage || page.size() > kMaxPage) {
    return Status::InvalidArgument("parquet page of ", body.size(),
                                   " bytes exceeds 2 GiB (a row of column '", c_.name,
                                   "' is too large)");
  }
  h.uncompressed_size = static_cast<int32_t>(body.size());
  h.compressed_size = static_cast<int32_t>(page.size());
  std::string bytes = EncodePageHeader(h);
  ColumnMetaData& m = chunk_->meta;
  m.total_uncompressed_size += static_cast<int64_t>(bytes.size() + body.size());
  m.total_compressed_size += static_cast<int64_t>(bytes.size() + page.size());
  bytes.append(page);
  if (h.type != kDictionaryPage && dict_mode_) {
    held_.push_back(std::move(bytes));
    return Status::OK();
  }
  if (h.type != kDictionaryPage && m.data_page_offset < 0) {
    m.data_page_offset = static_cast<int64_t>(sink_->offset());
  }
  return sink_->Append(bytes);
}

}  // namespace

Status WriteColumnChunk(Sink* sink, const ColumnLayout& c, uint64_t index, const ChunkOptions& o,
                        uint64_t first, uint64_t last, ColumnChunk* chunk) {
  ChunkWriter w(sink, c, o, chunk);
  return w.Run(index, first, last);
}

}  // namespace dlio::format_internal::parquet
