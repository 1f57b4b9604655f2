#include "format/hdf5/h5py_save.h"

#include <hdf5.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <string_view>

#include "dlio/clock.h"
#include "dlio/str_cat.h"
#include "dlio/tracer.h"
#include "format/hdf5/hdf5_lib.h"
#include "format/hdf5/hdf5_vfd.h"

namespace dlio::h5py_save {
namespace {

using format_internal::Hdf5Call;
using format_internal::Hid;
using format_internal::MakeDlioFapl;

// h5py's dtype for `t`: the little-endian IEEE or integer type; float16 as h5py builds it (a
// 2-byte IEEE type: sign at 15, exponent at 10 of 5 bits, bias 15, mantissa of 10 bits).
Result<Hid> TypeOf(Hdf5Call& call, H5pyType t) {
  switch (t) {
    case H5pyType::kF16: {
      Hid h(H5Tcopy(H5T_IEEE_F32LE));
      if (!h.valid() || H5Tset_fields(h.get(), 15, 10, 5, 0, 10) < 0 ||
          H5Tset_size(h.get(), 2) < 0 || H5Tset_ebias(h.get(), 15) < 0) {
        return call.Error(StatusCode::kInternal, "building h5py's float16 type");
      }
      return h;
    }
    case H5pyType::kF32:
      return Hid(H5Tcopy(H5T_IEEE_F32LE));
    case H5pyType::kF64:
      return Hid(H5Tcopy(H5T_IEEE_F64LE));
    case H5pyType::kI8:
      return Hid(H5Tcopy(H5T_STD_I8LE));
    case H5pyType::kU8:
      return Hid(H5Tcopy(H5T_STD_U8LE));
    case H5pyType::kI16:
      return Hid(H5Tcopy(H5T_STD_I16LE));
    case H5pyType::kI32:
      return Hid(H5Tcopy(H5T_STD_I32LE));
    case H5pyType::kI64:
      return Hid(H5Tcopy(H5T_STD_I64LE));
  }
  return Status::Internal("unknown h5py dtype");
}

// h5py.File's access list: libver bounds (earliest, latest), over the Storage.
Result<Hid> H5pyFapl(Hdf5Call& call, Storage* storage) {
  DLIO_ASSIGN_OR_RETURN(Hid fapl, MakeDlioFapl(call, storage, FileOptions{}));
  if (H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_EARLIEST, H5F_LIBVER_LATEST) < 0) {
    return call.Error(StatusCode::kInternal, "setting h5py's library version bounds");
  }
  return fapl;
}

// Group.require_group(parent) as create_dataset makes it for a name holding '/': the whole path
// created at once (an intermediate-group link list) unless it exists.
Result<Hid> RequireGroup(Hdf5Call& call, hid_t file, const std::string& parent,
                         std::set<std::string>* made, const std::string& path) {
  if (made->count(parent) == 0) {
    Hid lcpl(H5Pcreate(H5P_LINK_CREATE));
    if (!lcpl.valid() || H5Pset_create_intermediate_group(lcpl.get(), 1) < 0) {
      return call.Error(StatusCode::kInternal, "a link creation list");
    }
    Hid g(H5Gcreate2(file, parent.c_str(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT));
    if (!g.valid()) return call.Error(StatusCode::kIOError, StrCat(path, ": group ", parent));
    for (size_t p = parent.find('/'); p != std::string::npos; p = parent.find('/', p + 1)) {
      made->insert(parent.substr(0, p));
    }
    made->insert(parent);
    return g;
  }
  Hid g(H5Gopen2(file, parent.c_str(), H5P_DEFAULT));
  if (!g.valid()) return call.Error(StatusCode::kIOError, StrCat(path, ": group ", parent));
  return g;
}

// One dataset as make_new_dset creates it (contiguous, no timestamps) and its data written whole.
Status WriteDataset(Hdf5Call& call, hid_t parent, const std::string& leaf, const H5pyDataset& d,
                    const char* data, const std::string& path) {
  DLIO_ASSIGN_OR_RETURN(Hid type, TypeOf(call, d.type));
  std::vector<hsize_t> dims(d.shape.begin(), d.shape.end());
  Hid space(d.shape.empty()
                ? H5Screate(H5S_SCALAR)
                : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr));
  Hid dcpl(H5Pcreate(H5P_DATASET_CREATE));
  if (!space.valid() || !dcpl.valid() || H5Pset_obj_track_times(dcpl.get(), 0) < 0) {
    return call.Error(StatusCode::kInternal, StrCat(path, ": dataset ", d.name));
  }
  Hid dset(H5Dcreate2(parent, leaf.c_str(), type.get(), space.get(), H5P_DEFAULT, dcpl.get(),
                      H5P_DEFAULT));
  if (!dset.valid() || H5Dwrite(dset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0 ||
      dset.Close() < 0) {
    return call.Error(StatusCode::kIOError, StrCat(path, ": writing dataset ", d.name));
  }
  return Status::OK();
}

Status WriteDatasets(Hdf5Call& call, hid_t file, const H5pyLayout& layout, const FillData& fill,
                     std::vector<char>* memory, const std::string& path) {
  std::set<std::string> made;
  uint64_t offset = 0;
  for (const H5pyDataset& d : layout.datasets) {
    const uint64_t n = d.bytes();
    if (memory->size() < n) memory->resize(static_cast<size_t>(n));
    fill(offset, static_cast<size_t>(n), memory->data());
    offset += n;
    const size_t slash = d.name.rfind('/');
    if (slash == std::string::npos) {
      DLIO_RETURN_NOT_OK(WriteDataset(call, file, d.name, d, memory->data(), path));
      continue;
    }
    DLIO_ASSIGN_OR_RETURN(Hid group,
                          RequireGroup(call, file, d.name.substr(0, slash), &made, path));
    DLIO_RETURN_NOT_OK(
        WriteDataset(call, group.get(), d.name.substr(slash + 1), d, memory->data(), path));
  }
  return Status::OK();
}

Status LoadDataset(Hdf5Call& call, hid_t file, const H5pyDataset& d, uint64_t offset,
                   const CheckData& check, std::vector<char>* memory, const std::string& path) {
  const std::string what = StrCat(path, ": dataset ", d.name);
  Hid dset(H5Dopen2(file, d.name.c_str(), H5P_DEFAULT));
  if (!dset.valid()) return call.Error(StatusCode::kCorruption, what + " cannot be opened");
  Hid space(H5Dget_space(dset.get()));
  const int rank = space.valid() ? H5Sget_simple_extent_ndims(space.get()) : -1;
  std::vector<hsize_t> dims(static_cast<size_t>(std::max(rank, 0)));
  if (rank < 0 || H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0 ||
      !std::equal(dims.begin(), dims.end(), d.shape.begin(), d.shape.end())) {
    call.Clear();
    return Status::Corruption(what, " does not have the shape the checkpoint was written with");
  }
  DLIO_ASSIGN_OR_RETURN(Hid type, TypeOf(call, d.type));
  Hid stored(H5Dget_type(dset.get()));
  if (!stored.valid() || H5Tequal(stored.get(), type.get()) <= 0) {
    call.Clear();
    return Status::Corruption(what, " does not have the dtype the checkpoint was written with");
  }
  const uint64_t n = d.bytes();
  if (memory->size() < n) memory->resize(static_cast<size_t>(n));
  if (H5Dread(dset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, memory->data()) < 0) {
    return call.Error(StatusCode::kIOError, what + ": reading");
  }
  return check(offset, reinterpret_cast<const uint8_t*>(memory->data()), static_cast<size_t>(n))
      .WithContext(what);
}

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

// h5py_save's type for an HDF5 type, if it is one of them.
std::optional<H5pyType> TypeFrom(Hdf5Call& call, hid_t stored) {
  for (const H5pyType t : {H5pyType::kF16, H5pyType::kF32, H5pyType::kF64, H5pyType::kI8,
                           H5pyType::kU8, H5pyType::kI16, H5pyType::kI32, H5pyType::kI64}) {
    auto mine = TypeOf(call, t);
    if (mine.ok() && H5Tequal(stored, mine->get()) > 0) return t;
  }
  return std::nullopt;
}

// One dataset of a file being read back: its shape, type and data offset.
Result<FoundDataset> Describe(Hdf5Call& call, hid_t file, const std::string& name,
                              const std::string& what) {
  const std::string where = StrCat(what, ": dataset ", name);
  Hid dset(H5Dopen2(file, name.c_str(), H5P_DEFAULT));
  Hid space(dset.valid() ? H5Dget_space(dset.get()) : H5I_INVALID_HID);
  Hid stored(dset.valid() ? H5Dget_type(dset.get()) : H5I_INVALID_HID);
  const int rank = space.valid() ? H5Sget_simple_extent_ndims(space.get()) : -1;
  if (rank < 0 || !stored.valid()) return call.Error(StatusCode::kCorruption, where);
  FoundDataset f;
  f.dataset.name = name;
  std::vector<hsize_t> dims(static_cast<size_t>(rank)), max(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space.get(), dims.data(), max.data());
  if (dims != max) return Status::Unimplemented(where, " has dimensions that can grow");
  f.dataset.shape.assign(dims.begin(), dims.end());
  const std::optional<H5pyType> type = TypeFrom(call, stored.get());
  if (!type) return Status::Unimplemented(where, " has a dtype h5py_save does not write");
  f.dataset.type = *type;
  const haddr_t offset = H5Dget_offset(dset.get());
  call.Clear();
  if (offset == HADDR_UNDEF) {
    return Status::Unimplemented(where, " is not stored contiguously (chunked, compact or empty)");
  }
  f.offset = offset;
  return f;
}

herr_t CollectDataset(hid_t, const char* name, const H5O_info_t* info, void* names) {
  if (info->type == H5O_TYPE_DATASET)
    static_cast<std::vector<std::string>*>(names)->push_back(name);
  return 0;
}

}  // namespace

Status WriteH5pySave(Storage* storage, const std::string& path, bool truncate,
                     const H5pyLayout& layout, const FillData& fill, std::vector<char>* memory) {
  Hdf5Call call;
  DLIO_RETURN_NOT_OK(call.init_status());
  DLIO_ASSIGN_OR_RETURN(Hid fapl, H5pyFapl(call, storage));
  Hid file(
      H5Fcreate(path.c_str(), truncate ? H5F_ACC_TRUNC : H5F_ACC_EXCL, H5P_DEFAULT, fapl.get()));
  if (!file.valid()) return call.Error(StatusCode::kIOError, path + ": creating HDF5 file");
  DLIO_RETURN_NOT_OK(WriteDatasets(call, file.get(), layout, fill, memory, path));
  if (file.Close() < 0) return call.Error(StatusCode::kIOError, path + ": closing HDF5 file");
  return Status::OK();
}

Status LoadH5pySave(Storage* storage, const std::string& path, const H5pyLayout& layout,
                    const CheckData& check, std::vector<char>* memory) {
  Hdf5Call call;
  DLIO_RETURN_NOT_OK(call.init_status());
  DLIO_ASSIGN_OR_RETURN(Hid fapl, H5pyFapl(call, storage));
  Hid file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()));
  if (!file.valid()) return call.Error(StatusCode::kCorruption, path + ": opening HDF5 file");
  uint64_t offset = 0;
  for (const H5pyDataset& d : layout.datasets) {
    DLIO_RETURN_NOT_OK(LoadDataset(call, file.get(), d, offset, check, memory, path));
    offset += d.bytes();
  }
  if (file.Close() < 0) return call.Error(StatusCode::kIOError, path + ": closing HDF5 file");
  return Status::OK();
}

Result<uint64_t> H5pySaveFileSize(const H5pyLayout& layout) {
  std::unique_ptr<Storage> memory = NewMemoryStorage();
  std::vector<char> buffer;
  const std::string path = "h5py-size.h5";
  DLIO_RETURN_NOT_OK(WriteH5pySave(
      memory.get(), path, false, layout,
      [](uint64_t, size_t n, char* dst) { std::memset(dst, 0, n); }, &buffer));
  return memory->FileSize(path);
}

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
  std::vector<std::string> names;
  if (H5Ovisit(h.get(), H5_INDEX_NAME, H5_ITER_INC, &CollectDataset, &names) < 0) {
    return call.Error(StatusCode::kCorruption, what + ": listing its objects");
  }
  std::vector<FoundDataset> found;
  for (const std::string& name : names) {
    DLIO_ASSIGN_OR_RETURN(FoundDataset f, Describe(call, h.get(), name, what));
    found.push_back(std::move(f));
  }
  return found;
}

}  // namespace dlio::h5py_save
