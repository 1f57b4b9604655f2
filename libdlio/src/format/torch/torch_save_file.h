// checkpoint.type torch_save: the file `torch.save(state_dict, path)` writes, and the write
// requests it issues, for PyTorch 1.13 (Debian 12's python3-torch) as measured under the
// interposer (docs/workloads.md, "torch.save checkpoints"):
//
// - data.pkl: the state dict pickled with protocol 2 (an OrderedDict of tensors, each a
//   torch._utils._rebuild_tensor_v2 call whose storage is a persistent id), then one record
//   data/<key> per tensor in sorted key order ("0", "1", "10", "2", ...), then "version" ("3\n"):
//   a zip written by PyTorchStreamWriter (miniz), every record stored, its data 64-byte aligned
//   by an "FB" extra field of 'Z's, a data descriptor after it, then the central directory and
//   zip64 end records. The archive's folder is the file's base name without its extension.
// - The requests: miniz's writes go through a std::ofstream (libstdc++ basic_filebuf, an 8 KiB
//   buffer): a write of at least min(1 KiB, free buffer space) leaves as one writev of the
//   buffered bytes plus it, smaller ones are buffered, and the close writes what is left.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dlio/status.h"
#include "dlio/storage.h"
#include "io_models/pyio/torch_stream_reader.h"

namespace dlio::torch_save {

struct TorchTensor {
  std::string name;                      // the state dict key, e.g. "layer1.0.weight"
  std::vector<uint64_t> shape;           // empty: a 0-dim tensor (one element)
  std::string storage = "FloatStorage";  // torch.<storage>: the dtype's pickled storage type
  uint64_t element_size = 4;             // bytes per element
  uint64_t elements() const;
  uint64_t bytes() const;
};

// A module's entry in state_dict()'s _metadata: {name: {"version": version}}.
struct TorchModule {
  std::string name;  // "" is the root module
  int64_t version = 1;
};

struct TorchStateDict {
  std::vector<TorchTensor> tensors;
  bool metadata = true;  // false: a plain OrderedDict without the _metadata attribute
  std::vector<TorchModule> modules;
  // data.pkl's size when the saved object is more than this state dict (a nested container:
  // {'module': ..., 'optimizer': ...}, scalars, configs): the state dict's own pickle, then
  // padding after its STOP opcode (which the unpickler never reads) up to this many bytes. 0: the
  // state dict's own pickle.
  uint64_t pickle_bytes = 0;
  uint64_t bytes() const;  // tensor data bytes
};

// Parses checkpoint.torch_state_dict ("name:7x10[:dtype], name:7, ...", dtype fp32 by
// default, or fp16, bf16, fp64, int8, uint8, int16, int32, int64, bool; a bare "name:" or
// "name:scalar" is 0-dim) and checkpoint.torch_modules ("" = the root and every dotted prefix of
// the tensor names, version 1; "none" = no _metadata; else "mod[=version], ..." after the implicit
// root). InvalidArgument naming the key and the item.
// `s` without its leading and trailing blanks and tabs (the keys' lists).
std::string TrimBlanks(const std::string& s);

Result<TorchStateDict> ParseTorchStateDict(const std::string& tensors, const std::string& modules);

// The checkpoint.torch_state_dict dtype of a torch storage type ("FloatStorage" -> "fp32"), ""
// when it is none of them.
std::string TorchDtypeName(const std::string& storage);

// data.pkl: the bytes torch.save's pickler writes for `sd`, padded to sd.pickle_bytes.
std::string TorchPickle(const TorchStateDict& sd);

// checkpoint.torch_state_dict's text for `sd` ("name:7x10, name:3:fp16"); InvalidArgument when a
// name cannot be written there (',' or ':' in it, blanks at its ends, empty).
Result<std::string> TorchStateDictText(const TorchStateDict& sd);

// The state dict's own pickle's size (without sd.pickle_bytes's padding).
uint64_t TorchOwnPickleSize(TorchStateDict sd);

// The storage keys 0..n-1 in the order torch.save writes their records: sorted as strings
// (0, 1, 10, 11, 2, ...).
std::vector<size_t> StorageOrder(size_t n);

// The file name's archive folder: its base name without the last extension ("ck.pt" -> "ck").
std::string TorchArchiveName(const std::string& file_name);

// Fills `n` bytes of tensor data that land at `file_offset` of the file.
using TorchDataFill = std::function<void(uint64_t file_offset, size_t n, char* dst)>;

// Writes the whole torch.save file of `sd` to `file` (offset 0 up) with torch.save's requests;
// the tensors' bytes come from `fill`. InvalidArgument for a file that would need zip64 records
// (4 GiB and more: not modelled); the storage's errors otherwise. The tensors are staged in
// `tensor_memory` (a local buffer when null): give every save of a run the same vector and, as in
// a training process whose model stays resident, the memory is allocated once rather than
// allocated and freed per save (freeing a large block raises glibc's mmap and trim thresholds,
// which changes where an emulated Python loader's reads land: docs/io_models.md).
Status WriteTorchSave(File* file, const std::string& archive_name, const TorchStateDict& sd,
                      const TorchDataFill& fill, std::vector<char>* tensor_memory = nullptr);

// One write request: `size` bytes at `offset`.
struct TorchWrite {
  uint64_t offset = 0;
  uint64_t size = 0;
  bool operator==(const TorchWrite&) const = default;
};

// The requests WriteTorchSave issues for `sd`, in order, without writing (no tensor data is
// made). The same InvalidArgument as WriteTorchSave for files that need zip64 records.
Result<std::vector<TorchWrite>> TorchSaveRequests(const std::string& archive_name,
                                                  const TorchStateDict& sd);

// The size of that file.
uint64_t TorchSaveFileSize(const std::string& archive_name, const TorchStateDict& sd);

// Where that file's records and end records lie, its storages in key order (data/0, data/1, ...),
// for torch.load's requests (io_models/pyio/torch_stream_reader.h).
pyio::TorchZipLayout TorchSaveLayout(const std::string& archive_name, const TorchStateDict& sd);

// Checks `n` bytes of tensor data read from `file_offset` of the file.
using TorchDataCheck = std::function<Status(uint64_t file_offset, const uint8_t* data, size_t n)>;

// torch.load(path) of that file, written by WriteTorchSave, from `file` opened at offset 0: the
// requests of PyTorch 1.13's reader through a Python file of `buffer_size` bytes
// (pyio::PythonBufferSize), into `memory` (reused: give every load the same vector). Each
// storage's data goes to `check`. Corruption naming the file and offset for a file that is not
// that zip (a bad signature, a short read), `check`'s errors, the storage's errors otherwise.
// Storages of at least `fresh_storage_bytes` (0: none) are read into fresh pages
// (pyio::TorchLoadCalls), as torch.load's new storages are.
Status LoadTorchSave(File* file, const std::string& archive_name, const TorchStateDict& sd,
                     size_t buffer_size, const TorchDataCheck& check, std::vector<uint8_t>* memory,
                     uint64_t fresh_storage_bytes = 0);

}  // namespace dlio::torch_save
