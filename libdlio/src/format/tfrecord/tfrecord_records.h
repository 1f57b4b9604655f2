// The pieces of the tfrecord format, one job per file: locating records (tfrecord_index.cc), the
// reader (tfrecord_reader.cc), the writer and the Example helpers (tfrecord_writer.cc), and the
// Format that ties them together (tfrecord_format.cc). Private to these files.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dlio/format.h"
#include "dlio/status.h"
#include "dlio/storage.h"

namespace dlio::format_internal {

// "0x1234abcd".
std::string Hex32(uint32_t v);
// "<path> record <i> at offset <offset>": how every message names a record.
std::string RecordAt(const std::string& path, uint64_t i, uint64_t offset);
// Checks the masked CRC stored after `data`.
Status CheckCrc(const uint8_t* data, size_t n, const uint8_t* stored, const std::string& path,
                uint64_t i, uint64_t record_offset, const char* what, uint64_t data_offset);

// dataset.compression for tfrecord: TFRecordDataset's compression_type. A compressed file is one
// deflate stream (gzip member or zlib format) of the records.
enum class TfRecordCompression { kNone, kZlib, kGzip };
// none; gzip; zlib or deflate (TF's ZLIB). InvalidArgument naming the key otherwise.
Result<TfRecordCompression> ParseTfRecordCompression(const std::string& compression);

// Record locations: offsets[i] of the header, lengths[i] of the payload.
struct RecordTable {
  std::vector<uint64_t> offsets, lengths;
};

// The records of `path` (`file_size` bytes) as its index `idx_path` (text) lists them; Corruption
// naming the index line when they do not tile the file from offset 0.
Result<RecordTable> ParseIndex(const std::string& text, const std::string& idx_path,
                               const std::string& path, uint64_t file_size);
// Locates records by their length fields alone: one 12-byte read per record.
Result<RecordTable> ScanRecords(File* file, uint64_t file_size, bool verify);

// The reader of one open file whose records are `table` (from the index `idx_path` when
// `index_used`).
std::unique_ptr<FormatReader> NewTfRecordReader(std::unique_ptr<File> file, uint64_t file_size,
                                                RecordTable table, std::string idx_path,
                                                bool index_found, bool index_used,
                                                const FormatOptions& options);

// The reader of reader.io_model tf.data (io_models/tfrecord_stream_reader.cc): `file` read as one
// forward stream of `count` records, TFRecordDataset's requests. `table` holds the records already
// located (a scan at open; empty when the count was trusted).
// count 0: the records are counted first, by one pass of the stream (compressed files only;
// the caller scans uncompressed ones). Compressed files are inflated as TF's ZlibInputStream
// does, over the same buffered stream.
Result<std::unique_ptr<FormatReader>> NewTfRecordStreamReader(std::unique_ptr<File> file,
                                                              uint64_t file_size, RecordTable table,
                                                              uint64_t count,
                                                              TfRecordCompression compression,
                                                              const FormatOptions& options);

// Writes spec's samples as framed tf.train.Example records to `file` (compressed as
// options.compression says) and appends their index lines ("<offset> <size>\n", offsets in the
// record stream) to *index.
Status WriteTfRecords(File* file, const FileSpec& spec, const FormatOptions& options,
                      std::string* index);

}  // namespace dlio::format_internal
