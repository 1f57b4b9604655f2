// tfrecord: locating records, from the DALI-style index or by scanning the record headers.
#include <cinttypes>
#include <cstdio>

#include "format/io_util.h"
#include "format/tfrecord/crc32c.h"
#include "format/tfrecord/tfrecord.h"
#include "format/tfrecord/tfrecord_records.h"

namespace dlio::format_internal {

std::string Hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08" PRIx32, v);
  return buf;
}

std::string RecordAt(const std::string& path, uint64_t i, uint64_t offset) {
  return StrCat(path, " record ", i, " at offset ", offset);
}

Status CheckCrc(const uint8_t* data, size_t n, const uint8_t* stored, const std::string& path,
                uint64_t i, uint64_t record_offset, const char* what, uint64_t data_offset) {
  const uint32_t computed = Crc32c(data, n), expect = UnmaskCrc32c(Le32(stored));
  if (computed == expect) return Status::OK();
  return Status::Corruption(RecordAt(path, i, record_offset), ": ", what,
                            " CRC mismatch over bytes [", data_offset, ", ", data_offset + n,
                            ") (stored ", Hex32(expect), ", computed ", Hex32(computed), ")");
}

Result<RecordTable> ParseIndex(const std::string& text, const std::string& idx_path,
                               const std::string& path, uint64_t file_size) {
  RecordTable t;
  uint64_t expect = 0, line_no = 0, last_line = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    const std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = StrCat(idx_path, " line ", line_no);
    unsigned long long offset = 0, size = 0;
    int consumed = 0;
    if (std::sscanf(line.c_str(), " %llu %llu %n", &offset, &size, &consumed) != 2 ||
        static_cast<size_t>(consumed) != line.size() || line.find('-') != std::string::npos) {
      return Status::Corruption(where + ": expected \"<offset> <size>\", got \"" + line + "\"");
    }
    if (offset != expect) {
      return Status::Corruption(where, ": record at offset ", offset, ", expected ", expect,
                                " (records follow each other from offset 0)");
    }
    if (size < kTfRecordFramingBytes) {
      return Status::Corruption(where, ": record size ", size,
                                " is less than the 16 bytes of framing");
    }
    if (size > file_size || offset > file_size - size) {
      return Status::Corruption(where, ": record [", offset, ", ", offset + size,
                                ") ends past the end of ", path, " (", file_size, " bytes)");
    }
    t.offsets.push_back(offset);
    t.lengths.push_back(size - kTfRecordFramingBytes);
    expect = offset + size;
    last_line = line_no;
  }
  if (expect != file_size) {
    return Status::Corruption(idx_path, " after line ", last_line, ": the index covers ", expect,
                              " bytes but ", path, " has ", file_size, " (stale index?)");
  }
  return t;
}

// Locates records by their length fields alone: one 12-byte read per record.
Result<RecordTable> ScanRecords(File* file, uint64_t file_size, bool verify) {
  RecordTable t;
  uint8_t h[kTfRecordHeaderBytes];
  for (uint64_t pos = 0, i = 0; pos < file_size; ++i) {
    if (file_size - pos < kTfRecordHeaderBytes) {
      return Status::Corruption(RecordAt(file->path(), i, pos), ": truncated header (",
                                file_size - pos, " of 12 bytes before the end)");
    }
    DLIO_RETURN_NOT_OK(file->ReadExactAt(pos, kTfRecordHeaderBytes, h));
    if (verify) DLIO_RETURN_NOT_OK(CheckCrc(h, 8, h + 8, file->path(), i, pos, "length", pos));
    const uint64_t len = Le64(h);
    if (len > file_size - pos - kTfRecordHeaderBytes ||
        file_size - pos - kTfRecordHeaderBytes - len < 4) {
      return Status::Corruption(RecordAt(file->path(), i, pos), ": truncated: a record of ", len,
                                " data bytes needs ", len + kTfRecordFramingBytes, " bytes, ",
                                file_size - pos, " remain in the file");
    }
    t.offsets.push_back(pos);
    t.lengths.push_back(len);
    pos += len + kTfRecordFramingBytes;
  }
  return t;
}

std::string TfRecordIndexPath(const std::string& path) { return path + ".idx"; }

}  // namespace dlio::format_internal
