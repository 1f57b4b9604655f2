// torch.load(path) of a torch.save zip (PyTorch 1.13 on CPython 3.11), emulated over a dlio File
// so the raw reads are the ones the real stack issues. torch.load opens the path with Python's
// open(path, "rb") (an io.BufferedReader of st_blksize bytes, buffered_reader.h) and hands that
// object to PyTorchStreamReader through a BufferAdapter whose read(pos, n) is seek(pos) then
// readinto(n) (torch/csrc/jit/python/init.cpp). Every read(2) is at the descriptor's offset after
// an lseek; dlio issues each as one ReadSomeAt at that offset (seeks cost no request). The calls:
//   1. serialization._is_zipfile: read(1) four times, seek back;
//   2. the BufferAdapter: tell, seek(0, SEEK_END), tell, seek back;
//   3. PyTorchStreamReader::init: read(0, 8) (the "PYTORCH1" magic check, when the file has more
//      than 8 bytes); miniz's mz_zip_reader_read_central_dir: the end-record search (the last
//      min(4096, size) bytes), the end record (22 bytes), the zip64 locator (20) and zip64 end
//      record (56), the central directory (one read of its size); then getRecord("version");
//   4. serialization._load: getRecord("data.pkl"), then get_storage_from_record("data/<key>")
//      per storage in the order the unpickler meets them (key 0, 1, 2, ...: not the file order).
// getRecord is miniz's mz_zip_reader_extract_to_mem: nothing for an empty record, else the local
// header (30 bytes) at its offset and the stored data (one read of its size) after its name and
// extra field. Measured against strace (torch_load_requests_test, docs/workloads.md).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "dlio/status.h"
#include "dlio/storage.h"
#include "io_models/pyio/buffered_reader.h"

namespace dlio::pyio {

// One record of the zip (a stored member).
struct TorchZipRecord {
  uint64_t header_offset = 0;  // its local header
  uint64_t data_offset = 0;    // its data: after the header, the name and the extra field
  uint64_t size = 0;           // data bytes
};

// Where the parts of a torch.save file lie.
struct TorchZipLayout {
  uint64_t file_size = 0;
  uint64_t end_record = 0;        // the end of central directory record (22 bytes)
  bool zip64 = true;              // a zip64 locator before it (torch.save always writes one)
  uint64_t zip64_end_record = 0;  // the zip64 end record the locator points at (56 bytes)
  uint64_t central_directory = 0, central_directory_size = 0;
  TorchZipRecord version, pickle;        // "version" and "data.pkl"
  std::vector<TorchZipRecord> storages;  // data/0, data/1, ... in the unpickler's order
};

// What a load does with what it read: `storage(key, record, data)` after each storage's data is
// read (`data` holds record.size bytes). With a check, the signatures of the end records and the
// local headers are verified (Corruption naming the file and offset), as miniz refuses them.
// `destination(key, record)`, when set, gives where storage `key`'s data is read to (record.size
// bytes of room; null: the load's own memory or fresh pages).
struct TorchLoadCheck {
  std::function<Status(size_t key, const TorchZipRecord& record, const uint8_t* data)> storage;
  std::function<uint8_t*(size_t key, const TorchZipRecord& record)> destination;
};

// torch.load's calls on `fp`, freshly opened at offset 0. `memory` takes the bytes read (grown to
// the largest read; a record's bytes are not kept past the next record); a storage of at least
// `fresh_storage_bytes` (0: none) is read into a fresh anonymous mapping instead, unmapped after
// its check, so its pages fault in within the read as a new storage's do in torch.load (a malloc
// past Python's mmap threshold). `check` may be null (a simulation over a file with no bytes).
// Errors of the file, or Corruption naming it for a short file.
Status TorchLoadCalls(BufferedReader* fp, const TorchZipLayout& layout,
                      std::vector<uint8_t>* memory, const TorchLoadCheck* check,
                      uint64_t fresh_storage_bytes = 0);

// torch.load(path) of a file whose layout is not known beforehand (written by torch.save, or by
// anyone), in two halves whose calls together are TorchLoadCalls's; every offset is learnt from
// the bytes read before it, as miniz learns it, and every signature is checked.
//
// The first half, on `fp` freshly opened at offset 0 of a file of `file_size` bytes: _is_zipfile,
// the BufferAdapter, then PyTorchStreamReader::init up to the central directory (the end record
// found as the last "PK\5\6" of the end-record search, the zip64 locator read whenever the file
// has room for it, as miniz reads it, and the zip64 end record when the locator is one). Returns
// the records: "version" (or ".data/version"), "data.pkl" and the storages "data/<key>" in key
// order (0, 1, 2, ...: the order torch.save's pickler numbers them, so the order its unpickler
// meets them), each record's data_offset still unknown (0). Corruption naming the file and the
// offset for a file that is not such a zip (no end record, records outside the file, no data.pkl,
// a storage key twice); Unimplemented naming the record for a compressed one or a size that needs
// zip64 extras (4 GiB and more).
Result<TorchZipLayout> TorchLoadDirectory(BufferedReader* fp, uint64_t file_size,
                                          std::vector<uint8_t>* memory);

// The second half, right after the first on the same `fp`: getRecord("version"),
// getRecord("data.pkl"), then each storage, its data_offset set from its local header as read.
// `check`'s storage and destination as in TorchLoadCalls (either may be unset); Corruption
// naming the file and offset for a bad local header or data past the central directory.
Status TorchLoadRecords(BufferedReader* fp, TorchZipLayout* layout, std::vector<uint8_t>* memory,
                        const TorchLoadCheck& check, uint64_t fresh_storage_bytes = 0);

// The read requests (offset, size asked for) TorchLoadCalls makes for `layout` with a Python
// buffer of `buffer_size` bytes, in order, simulated over a file with a size and no bytes.
Result<std::vector<std::pair<uint64_t, uint64_t>>> TorchLoadRequests(const TorchZipLayout& layout,
                                                                     size_t buffer_size);

}  // namespace dlio::pyio
