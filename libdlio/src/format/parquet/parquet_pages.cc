#include "format/parquet/parquet_pages.h"

#include <algorithm>
#include <cstring>

#include "format/io_util.h"
#include "format/parquet/parquet_codec.h"
#include "format/parquet/parquet_values.h"

namespace dlio::format_internal::parquet {
namespace {

Status PageError(const ChunkInfo& info, uint64_t offset, const std::string& what) {
  return Status::Corruption(info.path, ": column '", info.column->name, "': page at offset ",
                            offset, ": ", what);
}

// The state of one chunk being decoded.
struct ChunkState {
  const ChunkInfo& info;
  DecodedColumn out;
  uint64_t row = 0;                      // next row slot
  const uint8_t* page = nullptr;         // the current page's bytes, decompressed: the chunk's own
  uint64_t page_size = 0;                //   bytes when stored uncompressed, else page_buffer's
  const uint8_t* page_stored = nullptr;  // the page's body when `page` is it (not a copy)
  std::vector<uint8_t> page_buffer;      // a compressed page, decompressed
  bool in_place = false;                 // rows so far are in out.spans (ChunkInfo::in_place)
  std::vector<uint8_t> dict;             // dictionary values (fixed width: width each)
  std::vector<uint64_t> dict_offs;       // byte_array dictionary: value bounds
  bool has_dict = false;
};

// Copies the rows held in place so far into out.data; the chunk's rows are copied from here on.
void LeavePlace(ChunkState* s) {
  const uint64_t w = s->info.column->width;
  s->out.data.resize(s->info.rows * w);  // every row's slot is written (PutValue, PutNull)
  const std::vector<ValueSpan>& spans = s->out.spans;
  for (size_t k = 0; k < spans.size(); ++k) {
    const uint64_t end = k + 1 < spans.size() ? spans[k + 1].first_row : s->row;
    std::memcpy(s->out.data.data() + spans[k].first_row * w, spans[k].values,
                (end - spans[k].first_row) * w);
  }
  s->out.spans.clear();
  s->in_place = false;
}

// A PLAIN page of `count` fixed-width values at p, stored uncompressed and without nulls, is
// kept where it is while the chunk is held in place.
bool KeepInPlace(ChunkState* s, const uint8_t* p, const uint8_t* end, int32_t encoding,
                 uint64_t count, uint64_t non_null) {
  const uint64_t w = s->info.column->width;
  if (!s->in_place || encoding != kPlain || non_null != count || s->page != s->page_stored ||
      count > static_cast<uint64_t>(end - p) / w) {
    return false;
  }
  if (count != 0) s->out.spans.push_back({s->row, p});
  s->row += count;
  return true;
}

// Stores value `v` (its bytes) into row slot `row`.
void PutValue(ChunkState* s, const uint8_t* v, uint64_t len) {
  const uint64_t w = s->info.column->width;
  if (w == 0) {
    s->out.data.insert(s->out.data.end(), v, v + len);
    return;
  }
  uint8_t* slot = s->out.data.data() + s->row * w;
  std::memcpy(slot, v, std::min(w, len));  // value readers give `w` bytes: anything else is cut
  if (len < w) std::memset(slot + len, 0, w - len);  // or zero-padded
}

// Row slot `row` of a null: zeros (fixed width) or nothing (byte_array: an empty value).
void PutNull(ChunkState* s) {
  const uint64_t w = s->info.column->width;
  if (w != 0) std::memset(s->out.data.data() + s->row * w, 0, w);
}

void EndRow(ChunkState* s) {
  ++s->row;
  if (s->info.column->width == 0) s->out.offsets.push_back(s->out.data.size());
}

// Dictionary-encoded values of one data page: `defined[k]` says whether row k of the page has one.
Status PutDictionaryValues(ChunkState* s, const uint8_t* p, const uint8_t* end,
                           const std::vector<bool>& defined, uint64_t non_null, uint64_t offset) {
  const ColumnLayout& c = *s->info.column;
  if (!s->has_dict) return PageError(s->info, offset, "dictionary page missing");
  if (p >= end) return PageError(s->info, offset, "no index bit width");
  const int bw = *p++;
  if (bw > 32) return PageError(s->info, offset, "index bit width " + std::to_string(bw));
  std::vector<uint32_t> idx;
  DLIO_RETURN_NOT_OK(DecodeRleHybrid(p, end, bw, non_null, &idx, s->info.path, offset));
  const uint64_t dict_n = c.width != 0 ? s->dict.size() / c.width : s->dict_offs.size() / 2;
  uint64_t k = 0;
  for (bool d : defined) {
    if (d) {
      if (idx[k] >= dict_n) {
        return PageError(s->info, offset,
                         "dictionary index " + std::to_string(idx[k]) + " past " +
                             std::to_string(dict_n) + " entries");
      }
      if (c.width != 0) {
        PutValue(s, s->dict.data() + idx[k] * c.width, c.width);
      } else {
        PutValue(s, s->dict.data() + s->dict_offs[2 * idx[k]],
                 s->dict_offs[2 * idx[k] + 1] - s->dict_offs[2 * idx[k]]);
      }
      ++k;
    } else {
      PutNull(s);
    }
    EndRow(s);
  }
  return Status::OK();
}

// The values of one data page in any other encoding (parquet_values.h).
Status PutPageValues(ChunkState* s, const uint8_t* p, const uint8_t* end, int32_t encoding,
                     const std::vector<bool>& defined, uint64_t non_null, uint64_t offset) {
  if (KeepInPlace(s, p, end, encoding, defined.size(), non_null)) return Status::OK();
  if (s->in_place) LeavePlace(s);
  if (encoding == kPlainDictionary || encoding == kRleDictionary) {
    return PutDictionaryValues(s, p, end, defined, non_null, offset);
  }
  const ColumnLayout& c = *s->info.column;
  // byte_array values rebuilt by DELTA_BYTE_ARRAY count against what the column already holds.
  const uint64_t budget = c.width != 0 || s->out.data.size() > s->info.max_decoded
                              ? s->info.max_decoded
                              : s->info.max_decoded - s->out.data.size();
  DLIO_ASSIGN_OR_RETURN(
      std::unique_ptr<ValueReader> values,
      OpenValues(encoding, c, p, end, non_null, budget, ValueSite{s->info.path, c.name, offset}));
  const uint8_t* v = nullptr;
  uint64_t len = 0;
  for (bool d : defined) {
    if (d) {
      DLIO_RETURN_NOT_OK(values->Next(&v, &len));
      PutValue(s, v, len);
    } else {
      PutNull(s);
    }
    EndRow(s);
  }
  return Status::OK();
}

// Definition levels of `n` values (OPTIONAL columns: max level 1) from [p, end); sets defined
// and returns the bytes they took (v1: with their 4-byte length).
Result<uint64_t> ReadLevels(const ChunkState& s, const uint8_t* p, const uint8_t* end, uint64_t n,
                            int64_t v2_bytes, std::vector<bool>* defined, uint64_t* non_null,
                            uint64_t offset) {
  defined->assign(n, true);
  *non_null = n;
  if (s.info.column->element.repetition != kOptional) return uint64_t{0};
  uint64_t len = 0, skip = 0;
  if (v2_bytes >= 0) {
    len = static_cast<uint64_t>(v2_bytes);
  } else {
    if (end - p < 4) return PageError(s.info, offset, "definition levels past the page end");
    len = Le32(p);
    skip = 4;
  }
  if (len > static_cast<uint64_t>(end - p) - skip) {
    return PageError(s.info, offset,
                     "definition levels of " + std::to_string(len) + " bytes past the page end");
  }
  std::vector<uint8_t> levels;
  DLIO_RETURN_NOT_OK(DecodeRleHybrid(p + skip, p + skip + len, 1, n, &levels, s.info.path, offset));
  *non_null = 0;
  for (uint64_t i = 0; i < n; ++i) {
    (*defined)[i] = levels[i] != 0;
    *non_null += levels[i] != 0;
  }
  return skip + len;
}

Status DictionaryPage(ChunkState* s, const PageHeader& h, uint64_t offset) {
  const ColumnLayout& c = *s->info.column;
  const uint8_t* p = s->page;
  const uint64_t n = static_cast<uint64_t>(std::max(h.num_values, 0));
  // Dictionary entries are PLAIN: n of them fit the page (byte arrays: checked one by one).
  DLIO_ASSIGN_OR_RETURN(std::unique_ptr<ValueReader> values,
                        OpenValues(kPlain, c, p, p + s->page_size, n, s->info.max_decoded,
                                   ValueSite{s->info.path, c.name, offset}));
  s->dict.clear();
  s->dict_offs.clear();
  const uint8_t* v = nullptr;
  uint64_t len = 0;
  for (uint64_t k = 0; k < n; ++k) {
    DLIO_RETURN_NOT_OK(values->Next(&v, &len));
    if (c.width == 0) s->dict_offs.push_back(s->dict.size());
    s->dict.insert(s->dict.end(), v, v + len);
    if (c.width == 0) s->dict_offs.push_back(s->dict.size());
  }
  s->has_dict = true;
  return Status::OK();
}

// Points s->page at the page body [body, body + h.compressed_size), decompressed: at the body
// itself when it is stored uncompressed (no copy), else at s->page_buffer.
Status LoadPage(ChunkState* s, const PageHeader& h, const uint8_t* body, uint64_t offset) {
  const uint64_t size = static_cast<uint64_t>(h.uncompressed_size);
  if (size > s->info.chunk_uncompressed) {
    return PageError(s->info, offset,
                     "uncompressed size " + std::to_string(size) + " exceeds the chunk's " +
                         std::to_string(s->info.chunk_uncompressed) + " bytes");
  }
  const uint64_t levels = h.type == kDataPageV2 ? static_cast<uint64_t>(h.def_levels_bytes) +
                                                      static_cast<uint64_t>(h.rep_levels_bytes)
                                                : 0;
  if (levels > size || levels > static_cast<uint64_t>(h.compressed_size)) {
    return PageError(s->info, offset, "level bytes exceed the page");
  }
  const bool compressed = h.type != kDataPageV2 || h.v2_compressed;
  const int32_t codec = compressed ? s->info.codec : kUncompressed;
  if (codec == kUncompressed) {
    if (static_cast<uint64_t>(h.compressed_size) != size) {
      return PageError(s->info, offset, "uncompressed page sizes disagree");
    }
    s->page = body;
    s->page_stored = body;
    s->page_size = size;
    return Status::OK();
  }
  s->page_buffer.resize(size);
  if (levels != 0) std::memcpy(s->page_buffer.data(), body, levels);
  s->page = s->page_buffer.data();
  s->page_stored = nullptr;
  s->page_size = size;
  return DecompressPage(codec, body + levels, static_cast<size_t>(h.compressed_size) - levels,
                        s->page_buffer.data() + levels, size - levels, s->info.path, offset);
}

Status DataPage(ChunkState* s, const PageHeader& h, uint64_t offset) {
  if (!h.has_data_header) return PageError(s->info, offset, "data page without its header");
  if (h.num_values < 0 || static_cast<uint64_t>(h.num_values) > s->info.rows - s->row) {
    return PageError(s->info, offset,
                     std::to_string(h.num_values) + " values past the row group's " +
                         std::to_string(s->info.rows) + " rows");
  }
  const uint8_t* p = s->page;
  const uint8_t* end = p + s->page_size;
  std::vector<bool> defined;
  uint64_t non_null = 0;
  if (h.type == kDataPageV2 && h.rep_levels_bytes != 0) {
    return PageError(s->info, offset, "repetition levels in a flat column");
  }
  DLIO_ASSIGN_OR_RETURN(uint64_t used, ReadLevels(*s, p, end, static_cast<uint64_t>(h.num_values),
                                                  h.type == kDataPageV2 ? h.def_levels_bytes : -1,
                                                  &defined, &non_null, offset));
  return PutPageValues(s, p + used, end, h.encoding, defined, non_null, offset);
}

}  // namespace

const uint8_t* DecodedColumn::Fixed(uint64_t row, uint64_t width) const {
  if (spans.empty()) return data.data() + row * width;
  auto after = std::upper_bound(spans.begin(), spans.end(), row,
                                [](uint64_t r, const ValueSpan& v) { return r < v.first_row; });
  const ValueSpan& span = *(after - 1);  // spans[0].first_row is 0: rows start in place
  return span.values + (row - span.first_row) * width;
}

uint64_t DecodedColumn::FixedRunFrom(uint64_t row, uint64_t rows) const {
  auto after = std::upper_bound(spans.begin(), spans.end(), row,
                                [](uint64_t r, const ValueSpan& v) { return r < v.first_row; });
  const uint64_t end = after == spans.end() ? rows : after->first_row;
  return end > row ? end - row : 0;
}

Result<DecodedColumn> DecodeChunk(const ChunkInfo& info, const uint8_t* data, size_t n) {
  ChunkState s{info, {}, 0, nullptr, 0, nullptr, {}, false, {}, {}, false};
  const uint64_t width = info.column->width;
  if (width != 0) {
    if (info.rows > info.max_decoded / width) {
      return Status::Corruption(info.path, ": column '", info.column->name, "' at offset ",
                                info.file_offset, ": ", info.rows, " rows of ", width,
                                " bytes exceed reader.max_decoded_bytes (", info.max_decoded, ")");
    }
    s.in_place = info.in_place && info.column->element.type != kBoolean;  // BOOLEAN: bits
    if (!s.in_place) s.out.data.resize(info.rows * width);       // every slot is written (PutValue)
  } else if (info.rows > info.max_decoded / sizeof(uint64_t)) {  // a row's offset: 8 bytes
    return Status::Corruption(
        info.path, ": column '", info.column->name, "' at offset ", info.file_offset, ": ",
        info.rows, " byte_array rows exceed reader.max_decoded_bytes (", info.max_decoded, ")");
  } else {
    s.out.offsets.push_back(0);
  }
  size_t pos = 0;
  while (s.row < info.rows) {
    const uint64_t offset = info.file_offset + pos;
    if (pos >= n) return PageError(info, offset, "chunk ends before its rows");
    size_t used = 0;
    DLIO_ASSIGN_OR_RETURN(PageHeader h,
                          DecodePageHeader(data + pos, n - pos, info.path, offset, &used));
    pos += used;
    if (static_cast<uint64_t>(h.compressed_size) > n - pos) {
      return PageError(
          info, offset,
          "compressed size " + std::to_string(h.compressed_size) + " past the chunk end");
    }
    if (h.type == kDataPage || h.type == kDataPageV2 || h.type == kDictionaryPage) {
      DLIO_RETURN_NOT_OK(LoadPage(&s, h, data + pos, offset));
      if (h.type == kDictionaryPage) {
        DLIO_RETURN_NOT_OK(DictionaryPage(&s, h, offset));
      } else {
        DLIO_RETURN_NOT_OK(DataPage(&s, h, offset));
      }
    }
    pos += static_cast<size_t>(h.compressed_size);
  }
  return std::move(s.out);
}

namespace {

template <typename T>
Status RleHybrid(const uint8_t* p, const uint8_t* end, int bit_width, uint64_t count,
                 std::vector<T>* out, const std::string& path, uint64_t offset) {
  out->clear();
  out->reserve(std::min<uint64_t>(count, 1u << 20));  // runs may expand; count is bounded by rows
  const uint64_t value_bytes = static_cast<uint64_t>((bit_width + 7) / 8);
  const uint32_t mask = bit_width == 32 ? 0xffffffffu : ((1u << bit_width) - 1);
  while (out->size() < count) {
    uint64_t header = 0;
    for (int shift = 0;; shift += 7) {
      if (p >= end || shift > 63) {
        return Status::Corruption(path, ": page at offset ", offset, ": truncated RLE run");
      }
      header |= static_cast<uint64_t>(*p & 0x7f) << shift;
      if ((*p++ & 0x80) == 0) break;
    }
    if ((header & 1) == 0) {  // an RLE run: a value repeated header/2 times
      if (static_cast<uint64_t>(end - p) < value_bytes) {
        return Status::Corruption(path, ": page at offset ", offset, ": truncated RLE value");
      }
      uint32_t v = 0;
      for (uint64_t k = 0; k < value_bytes; ++k) v |= static_cast<uint32_t>(p[k]) << (8 * k);
      p += value_bytes;
      const uint64_t run = std::min<uint64_t>(header >> 1, count - out->size());
      out->insert(out->end(), run, static_cast<T>(v & mask));
      continue;
    }
    const uint64_t groups = header >> 1;  // bit-packed: groups of 8 values
    if (groups > static_cast<uint64_t>(end - p) ||
        groups * bit_width > static_cast<uint64_t>(end - p)) {
      return Status::Corruption(path, ": page at offset ", offset, ": bit-packed run past the end");
    }
    uint64_t bit = 0;
    for (uint64_t k = 0; k < groups * 8 && out->size() < count; ++k) {
      uint64_t v = 0;
      for (int b = 0; b < bit_width; ++b, ++bit)
        v |= static_cast<uint64_t>((p[bit / 8] >> (bit % 8)) & 1) << b;
      out->push_back(static_cast<T>(v));
    }
    p += groups * static_cast<uint64_t>(bit_width);
  }
  return Status::OK();
}

}  // namespace

Status DecodeRleHybrid(const uint8_t* p, const uint8_t* end, int bit_width, uint64_t count,
                       std::vector<uint32_t>* out, const std::string& path, uint64_t offset) {
  return RleHybrid(p, end, bit_width, count, out, path, offset);
}

Status DecodeRleHybrid(const uint8_t* p, const uint8_t* end, int bit_width, uint64_t count,
                       std::vector<uint8_t>* out, const std::string& path, uint64_t offset) {
  return RleHybrid(p, end, bit_width, count, out, path, offset);
}

}  // namespace dlio::format_internal::parquet
