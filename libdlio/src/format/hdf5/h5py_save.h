// The HDF5 file h5py writes for a model's weights (Keras' model.save_weights('w.h5'), or a loop of
// f.create_dataset(name, data=w) in `with h5py.File(path, 'w')`), written through libhdf5 with
// h5py 3.7's property lists so that the requests reaching the Storage are h5py's, request for
// request: the superblock, each dataset's data as it is created, the metadata flushed at close,
// the superblock twice more. Datasets whose names hold '/' go into groups made first, as h5py's
// require_group makes them (old-style groups: a B-tree and a local heap each). Also the load
// (h5py.File(path, 'r') and each dataset read whole) and the file's size.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dlio/status.h"
#include "dlio/storage.h"

namespace dlio::h5py_save {

// kStr: a fixed-length byte string (numpy's 'S<n>', as Keras stores its names), null-padded.
// kVBytes, kVStr: a variable-length string, ASCII or UTF-8 (what h5py 3 stores for a Python
// bytes or str value), its characters in the file's global heap.
enum class H5pyType { kF16, kF32, kF64, kI8, kU8, kI16, kI32, kI64, kStr, kVBytes, kVStr };

// Whether `t` is a string type (its size per element is the item's string_size).
inline bool IsString(H5pyType t) {
  return t == H5pyType::kStr || t == H5pyType::kVBytes || t == H5pyType::kVStr;
}

// Bytes per element of `t` (0 for the strings, whose size is the item's).
uint64_t ElementSize(H5pyType t);

// A dataset, or (`attribute` set) an attribute of the root ("" name) or of a group.
struct H5pyDataset {
  std::string name;             // the dataset's path, e.g. "dense/kernel"; an attribute's object
  std::string attribute;        // the attribute's name; empty for a dataset
  std::vector<uint64_t> shape;  // empty: a scalar
  H5pyType type = H5pyType::kF32;
  uint64_t string_size = 0;  // strings: bytes per string (a variable one's characters)
  bool is_attribute() const { return !attribute.empty(); }
  uint64_t bytes() const;
  bool operator==(const H5pyDataset&) const = default;
};

// The datasets and attributes in the order they are created.
struct H5pyLayout {
  std::vector<H5pyDataset> datasets;
  // How each dataset is made: false = f.create_dataset(name, data=x) (H5Dcreate2 by name, then
  // its data); true = g[name] = x (h5py's __setitem__: created anonymous, its data written, then
  // linked under its name), which places its metadata elsewhere in the file.
  bool assigned = false;
  uint64_t data_bytes() const;  // the datasets' (not the attributes')
  bool operator==(const H5pyLayout&) const = default;
};

// checkpoint.h5py_datasets: "name:shape[:dtype]" items separated by commas (shape 'AxBxC', or
// 'scalar' or empty for a 0-dim dataset; dtype fp32 by default, fp16, fp64, int8, uint8, int16,
// int32, int64), read from the right so that a name may hold ':'. An item named "object@attr" is
// an attribute of the root (object "") or of a group, created there at that point (the group made
// first when it is new), its dtype also S<n> (a fixed string of n bytes), bytes<n> or str<n> (a
// variable-length ASCII or UTF-8 string of n characters: a Python bytes or str value), and its
// dimensions 0 too (Keras' empty weight_names). InvalidArgument naming the key and the item: a name
// that is empty, starts or ends with '/' or holds '//' or ',', a dataset given twice or that is
// also another's group, an attribute of a dataset or given twice, a bad shape or dtype, no items.
// `key` is the key errors name.
Result<H5pyLayout> ParseH5pyDatasets(const std::string& text,
                                     const char* key = "checkpoint.h5py_datasets");

// Items of ParseH5pyDatasets' syntax that are all attributes of the root ("@name:shape:dtype",
// e.g. "@acquisition:scalar:str9, @max:scalar:fp64": h5py's f.attrs[name] = value), as
// dataset.hdf5_root_attributes gives them. InvalidArgument naming `key` and the item: what
// ParseH5pyDatasets refuses, and an item that is a dataset or a group's attribute.
Result<std::vector<H5pyDataset>> ParseRootAttributes(const std::string& text, const char* key);

// The item text of `d` as ParseH5pyDatasets reads it ("dense/kernel:0:784x10:fp32").
std::string ItemText(const H5pyDataset& d);

// The item texts of `items` joined by `separator` (", " or ","): a key's value that
// ParseH5pyDatasets (or ParseRootAttributes) reads back as `items`.
std::string ItemsText(const std::vector<H5pyDataset>& items, const char* separator);

// Fills `n` bytes of dataset data at `offset` among all datasets' bytes (dataset i's start after
// the bytes of datasets 0..i-1).
using FillData = std::function<void(uint64_t offset, size_t n, char* dst)>;
// Checks bytes read back, as FillData numbers them; Corruption when they differ.
using CheckData = std::function<Status(uint64_t offset, const uint8_t* data, size_t n)>;

// Writes `path` as h5py does: a new file (refused when one exists), or with `truncate` an existing
// one emptied first (h5py's mode 'w'). `memory` holds a dataset's data between the fill and its
// write (kept by the caller between saves). Errors name the path.
Status WriteH5pySave(Storage* storage, const std::string& path, bool truncate,
                     const H5pyLayout& layout, const FillData& fill, std::vector<char>* memory);

// Reads `path` as h5py.File(path, 'r') and d[()] of each dataset, in the layout's order, checking
// each dataset's shape, type and bytes. Errors name the path and the dataset.
Status LoadH5pySave(Storage* storage, const std::string& path, const H5pyLayout& layout,
                    const CheckData& check, std::vector<char>* memory);

// The size of the file WriteH5pySave writes for `layout` (learned by writing it once into memory).
Result<uint64_t> H5pySaveFileSize(const H5pyLayout& layout);

// One write request: where and how many bytes.
struct H5pyWrite {
  uint64_t offset = 0;
  uint64_t size = 0;
  bool operator==(const H5pyWrite&) const = default;
};
// The write requests WriteH5pySave makes for `layout`, in order (the file written once into
// memory).
Result<std::vector<H5pyWrite>> H5pySaveWrites(const H5pyLayout& layout);

// A dataset found in an HDF5 file with its data's offset in the file (contiguous datasets only),
// or an attribute of the root or a group with that object's header address.
struct FoundDataset {
  H5pyDataset dataset;
  uint64_t offset = 0;
};
// The datasets of the HDF5 file whose bytes are `file` (what h5py wrote, read back by `dlio-run
// fit`), in the file's name order, then the root's and each group's attributes (groups in name
// order, a group's attributes in their creation order). `what` names the file in errors:
// Corruption when it is not HDF5; Unimplemented naming the dataset or attribute h5py_save cannot
// write (chunked or compact, a dtype outside the key's, unlimited dimensions, a variable-length
// string).
Result<std::vector<FoundDataset>> ReadH5pyDatasets(const std::string& file,
                                                   const std::string& what);

}  // namespace dlio::h5py_save
