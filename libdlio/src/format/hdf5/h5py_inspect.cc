// What `dlio-run fit` reads back from an HDF5 file h5py wrote (ReadH5pyDatasets), and the write
// requests WriteH5pySave makes for a layout (H5pySaveWrites): format/hdf5/h5py_save.h.
#include <hdf5.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dlio/clock.h"
#include "dlio/str_cat.h"
#include "dlio/tracer.h"
#include "format/hdf5/h5py_save.h"
#include "format/hdf5/h5py_save_internal.h"
#include "format/hdf5/hdf5_lib.h"

namespace dlio::h5py_save {
namespace {

using format_internal::Hdf5Call;
using format_internal::Hid;
using internal::H5pyFapl;
using internal::TypeOf;

// Keeps the write requests a Storage makes, in the order it makes them (one thread).
class WriteRecorder final : public Tracer {
 public:
  bool enabled() const override { return true; }
  int32_t InternFile(std::string_view) override { return 0; }
  void Record(const TraceEvent& e) override {
    if (std::strstr(e.name, "write") != nullptr && e.offset >= 0 && e.count > 0) {
      writes.push_back({static_cast<uint64_t>(e.offset), static_cast<uint64_t>(e.count)});
    }
  }
  Status Flush() override { return Status::OK(); }
  std::vector<H5pyWrite> writes;
};

// h5py_save's type for an HDF5 type, if it is one of them (a string: its size too).
std::optional<H5pyType> TypeFrom(Hdf5Call& call, hid_t stored, uint64_t* string_size) {
  if (H5Tget_class(stored) == H5T_STRING) {
    if (H5Tis_variable_str(stored) > 0) {  // its size: VariableStringSize's
      return H5Tget_cset(stored) == H5T_CSET_UTF8 ? H5pyType::kVStr : H5pyType::kVBytes;
    }
    if (H5Tget_strpad(stored) != H5T_STR_NULLPAD || H5Tget_cset(stored) != H5T_CSET_ASCII) {
      return std::nullopt;
    }
    *string_size = H5Tget_size(stored);
    return H5pyType::kStr;
  }
  for (const H5pyType t : {H5pyType::kF16, H5pyType::kF32, H5pyType::kF64, H5pyType::kI8,
                           H5pyType::kU8, H5pyType::kI16, H5pyType::kI32, H5pyType::kI64}) {
    auto mine = TypeOf(call, t);
    if (mine.ok() && H5Tequal(stored, mine->get()) > 0) return t;
  }
  return std::nullopt;
}

// The shape of `space` (Unimplemented naming `where` when it can grow).
Result<std::vector<uint64_t>> ShapeOf(Hdf5Call& call, hid_t space, const std::string& where) {
  const int rank = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
  if (rank < 0) return call.Error(StatusCode::kCorruption, where);
  std::vector<hsize_t> dims(static_cast<size_t>(rank)), max(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space, dims.data(), max.data());
  if (dims != max) return Status::Unimplemented(where, " has dimensions that can grow");
  return std::vector<uint64_t>(dims.begin(), dims.end());
}

// One dataset of a file being read back: its shape, type and data offset.
Result<FoundDataset> Describe(Hdf5Call& call, hid_t file, const std::string& name,
                              const std::string& what) {
  const std::string where = StrCat(what, ": dataset ", name);
  Hid dset(H5Dopen2(file, name.c_str(), H5P_DEFAULT));
  Hid space(dset.valid() ? H5Dget_space(dset.get()) : H5I_INVALID_HID);
  Hid stored(dset.valid() ? H5Dget_type(dset.get()) : H5I_INVALID_HID);
  if (!stored.valid()) return call.Error(StatusCode::kCorruption, where);
  FoundDataset f;
  f.dataset.name = name;
  DLIO_ASSIGN_OR_RETURN(f.dataset.shape, ShapeOf(call, space.get(), where));
  const std::optional<H5pyType> type = TypeFrom(call, stored.get(), &f.dataset.string_size);
  if (!type || *type == H5pyType::kStr) {
    return Status::Unimplemented(where, " has a dtype h5py_save does not write");
  }
  f.dataset.type = *type;
  const haddr_t offset = H5Dget_offset(dset.get());
  call.Clear();
  if (offset == HADDR_UNDEF) {
    return Status::Unimplemented(where, " is not stored contiguously (chunked, compact or empty)");
  }
  f.offset = offset;
  return f;
}

// The objects of a file: datasets by name, groups (the root as "") with their header addresses.
struct Objects {
  std::vector<std::string> datasets;
  std::vector<std::pair<std::string, uint64_t>> groups;
};

herr_t CollectObject(hid_t, const char* name, const H5O_info_t* info, void* objects) {
  auto* o = static_cast<Objects*>(objects);
  const std::string n = std::strcmp(name, ".") == 0 ? "" : name;
  if (info->type == H5O_TYPE_DATASET) o->datasets.push_back(n);
  if (info->type == H5O_TYPE_GROUP) o->groups.emplace_back(n, info->addr);
  return 0;
}

// The characters of a variable-length string attribute's strings (the longest: one size stands
// for them all). Unimplemented for empty strings (nothing to stand for).
Result<uint64_t> VariableStringSize(Hdf5Call& call, hid_t attr, hid_t space, hid_t type,
                                    const std::string& where) {
  const hssize_t points = H5Sget_simple_extent_npoints(space);
  if (points <= 0) return Status::Unimplemented(where, " holds no strings");
  std::vector<char*> strings(static_cast<size_t>(points));
  Hid memory(H5Tget_native_type(type, H5T_DIR_ASCEND));
  if (!memory.valid() || H5Aread(attr, memory.get(), strings.data()) < 0) {
    return call.Error(StatusCode::kCorruption, where + ": reading");
  }
  uint64_t longest = 0;
  for (const char* s : strings) longest = std::max<uint64_t>(longest, s ? std::strlen(s) : 0);
  H5Dvlen_reclaim(memory.get(), space, H5P_DEFAULT, strings.data());
  if (longest == 0) return Status::Unimplemented(where, " holds empty strings");
  return longest;
}

// The attributes of `group` ("" the root) in the order they are stored (their creation order),
// each with the group's header address as its offset. Unimplemented for a type h5py_save does not
// write.
struct AttributeWalk {
  Hdf5Call* call;
  std::string group, what;
  uint64_t header;
  std::vector<FoundDataset>* out;
  Status status;
};

herr_t CollectAttribute(hid_t object, const char* name, const H5A_info_t*, void* walk) {
  auto* w = static_cast<AttributeWalk*>(walk);
  const std::string where = StrCat(w->what, ": attribute ", name, " of '", w->group, "'");
  Hid attr(H5Aopen(object, name, H5P_DEFAULT));
  Hid space(attr.valid() ? H5Aget_space(attr.get()) : H5I_INVALID_HID);
  Hid stored(attr.valid() ? H5Aget_type(attr.get()) : H5I_INVALID_HID);
  FoundDataset f;
  f.dataset.name = w->group;
  f.dataset.attribute = name;
  f.offset = w->header;
  auto shape = ShapeOf(*w->call, space.get(), where);
  const std::optional<H5pyType> type =
      stored.valid() ? TypeFrom(*w->call, stored.get(), &f.dataset.string_size) : std::nullopt;
  if (!shape.ok() || !type) {
    w->status = shape.ok() ? Status::Unimplemented(where, " has a type h5py_save does not write")
                           : shape.status();
    return -1;
  }
  f.dataset.shape = std::move(*shape);
  f.dataset.type = *type;
  if (*type == H5pyType::kVBytes || *type == H5pyType::kVStr) {
    auto size = VariableStringSize(*w->call, attr.get(), space.get(), stored.get(), where);
    if (!size.ok()) {
      w->status = size.status();
      return -1;
    }
    f.dataset.string_size = *size;
  }
  w->out->push_back(std::move(f));
  return 0;
}

}  // namespace

namespace internal {

Result<std::vector<H5pyDataset>> RootAttributes(Hdf5Call& call, hid_t file,
                                                const std::string& what) {
  Hid root(H5Gopen2(file, "/", H5P_DEFAULT));
  if (!root.valid()) return call.Error(StatusCode::kCorruption, what + ": its root group");
  std::vector<FoundDataset> found;
  AttributeWalk walk{&call, "", what, 0, &found, Status::OK()};
  if (H5Aiterate2(root.get(), H5_INDEX_NAME, H5_ITER_NATIVE, nullptr, &CollectAttribute, &walk) <
      0) {
    call.Clear();
    return walk.status.ok() ? Status::Corruption(what, ": attributes of the root") : walk.status;
  }
  std::vector<H5pyDataset> out;
  for (FoundDataset& f : found) out.push_back(std::move(f.dataset));
  return out;
}

}  // namespace internal

Result<std::vector<H5pyWrite>> H5pySaveWrites(const H5pyLayout& layout) {
  std::unique_ptr<Storage> memory = NewMemoryStorage();
  WriteRecorder recorder;
  memory->Bind(SystemClock(), &recorder);
  std::vector<char> buffer;
  DLIO_RETURN_NOT_OK(WriteH5pySave(
      memory.get(), "h5py-writes.h5", false, layout,
      [](uint64_t, size_t n, char* dst) { std::memset(dst, 0, n); }, &buffer));
  return recorder.writes;
}

Result<std::vector<FoundDataset>> ReadH5pyDatasets(const std::string& file,
                                                   const std::string& what) {
  std::unique_ptr<Storage> memory = NewMemoryStorage();
  const std::string path = "h5py-read.h5";
  {
    DLIO_ASSIGN_OR_RETURN(auto f, memory->Open(path, OpenMode::kCreateNew));
    DLIO_RETURN_NOT_OK(f->WriteAt(0, file.data(), file.size()));
    DLIO_RETURN_NOT_OK(f->Close());
  }
  Hdf5Call call;
  DLIO_RETURN_NOT_OK(call.init_status());
  DLIO_ASSIGN_OR_RETURN(Hid fapl, H5pyFapl(call, memory.get()));
  Hid h(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()));
  if (!h.valid()) return call.Error(StatusCode::kCorruption, what + ": not an HDF5 file");
  Objects objects;
  if (H5Ovisit(h.get(), H5_INDEX_NAME, H5_ITER_INC, &CollectObject, &objects) < 0) {
    return call.Error(StatusCode::kCorruption, what + ": listing its objects");
  }
  std::vector<FoundDataset> found;
  for (const std::string& name : objects.datasets) {
    DLIO_ASSIGN_OR_RETURN(FoundDataset f, Describe(call, h.get(), name, what));
    found.push_back(std::move(f));
  }
  for (const auto& [group, header] : objects.groups) {
    Hid g(H5Gopen2(h.get(), group.empty() ? "/" : group.c_str(), H5P_DEFAULT));
    if (!g.valid()) return call.Error(StatusCode::kCorruption, StrCat(what, ": group ", group));
    AttributeWalk walk{&call, group, what, header, &found, Status::OK()};
    if (H5Aiterate2(g.get(), H5_INDEX_NAME, H5_ITER_NATIVE, nullptr, &CollectAttribute, &walk) <
        0) {
      call.Clear();
      return walk.status.ok() ? Status::Corruption(what, ": attributes of '", group, "'")
                              : walk.status;
    }
  }
  return found;
}

}  // namespace dlio::h5py_save
