#include "format/hdf5/h5py_save.h"

#include <hdf5.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <set>

#include "dlio/str_cat.h"
#include "format/hdf5/h5py_save_internal.h"
#include "format/hdf5/hdf5_lib.h"
#include "format/hdf5/hdf5_vfd.h"

namespace dlio::h5py_save {

using format_internal::Hdf5Call;
using format_internal::Hid;
using format_internal::MakeDlioFapl;

namespace internal {

Result<Hid> TypeOf(Hdf5Call& call, H5pyType t, uint64_t string_size) {
  switch (t) {
    case H5pyType::kStr: {
      Hid h(H5Tcopy(H5T_C_S1));
      if (!h.valid() || H5Tset_size(h.get(), string_size) < 0 ||
          H5Tset_strpad(h.get(), H5T_STR_NULLPAD) < 0) {
        return call.Error(StatusCode::kInternal, "building numpy's S type");
      }
      return h;
    }
    case H5pyType::kVBytes:
    case H5pyType::kVStr: {
      Hid h(H5Tcopy(H5T_C_S1));
      if (!h.valid() || H5Tset_size(h.get(), H5T_VARIABLE) < 0 ||
          H5Tset_cset(h.get(), t == H5pyType::kVStr ? H5T_CSET_UTF8 : H5T_CSET_ASCII) < 0) {
        return call.Error(StatusCode::kInternal, "building h5py's variable-length string type");
      }
      return h;
    }
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

Result<Hid> H5pyFapl(Hdf5Call& call, Storage* storage) {
  DLIO_ASSIGN_OR_RETURN(Hid fapl, MakeDlioFapl(call, storage, FileOptions{}));
  if (H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_EARLIEST, H5F_LIBVER_LATEST) < 0) {
    return call.Error(StatusCode::kInternal, "setting h5py's library version bounds");
  }
  return fapl;
}

}  // namespace internal
namespace {

using internal::H5pyFapl;
using internal::TypeOf;

// h5py's link creation list: intermediate groups created.
Result<Hid> IntermediateLcpl(Hdf5Call& call) {
  Hid lcpl(H5Pcreate(H5P_LINK_CREATE));
  if (!lcpl.valid() || H5Pset_create_intermediate_group(lcpl.get(), 1) < 0) {
    return call.Error(StatusCode::kInternal, "a link creation list");
  }
  return lcpl;
}

// Group.require_group(parent) as create_dataset makes it for a name holding '/': the whole path
// created at once (an intermediate-group link list) unless it exists.
Result<Hid> RequireGroup(Hdf5Call& call, hid_t file, const std::string& parent,
                         std::set<std::string>* made, const std::string& path) {
  if (made->count(parent) == 0) {
    DLIO_ASSIGN_OR_RETURN(Hid lcpl, IntermediateLcpl(call));
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

Hid SpaceOf(const H5pyDataset& d) {
  std::vector<hsize_t> dims(d.shape.begin(), d.shape.end());
  return Hid(d.shape.empty()
                 ? H5Screate(H5S_SCALAR)
                 : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr));
}

// One dataset as make_new_dset creates it (contiguous, no timestamps) and its data written whole:
// by name (create_dataset), or (`assigned`: g[name] = x) anonymous, then linked under its name.
Status WriteDataset(Hdf5Call& call, hid_t parent, const std::string& leaf, const H5pyDataset& d,
                    const char* data, bool assigned, const std::string& path) {
  DLIO_ASSIGN_OR_RETURN(Hid type, TypeOf(call, d.type));
  Hid space = SpaceOf(d);
  Hid dcpl(H5Pcreate(H5P_DATASET_CREATE));
  if (!space.valid() || !dcpl.valid() || H5Pset_obj_track_times(dcpl.get(), 0) < 0) {
    return call.Error(StatusCode::kInternal, StrCat(path, ": dataset ", d.name));
  }
  Hid dset(assigned ? H5Dcreate_anon(parent, type.get(), space.get(), dcpl.get(), H5P_DEFAULT)
                    : H5Dcreate2(parent, leaf.c_str(), type.get(), space.get(), H5P_DEFAULT,
                                 dcpl.get(), H5P_DEFAULT));
  if (!dset.valid() || H5Dwrite(dset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
    return call.Error(StatusCode::kIOError, StrCat(path, ": writing dataset ", d.name));
  }
  if (assigned) {
    DLIO_ASSIGN_OR_RETURN(Hid lcpl, IntermediateLcpl(call));
    if (H5Olink(dset.get(), parent, leaf.c_str(), lcpl.get(), H5P_DEFAULT) < 0) {
      return call.Error(StatusCode::kIOError, StrCat(path, ": linking dataset ", d.name));
    }
  }
  if (dset.Close() < 0) {
    return call.Error(StatusCode::kIOError, StrCat(path, ": writing dataset ", d.name));
  }
  return Status::OK();
}

// The root's or a group's attribute, as AttributeManager.create makes it (its group created
// first when new: Keras' create_group, then g.attrs[...]).
Status WriteAttribute(Hdf5Call& call, hid_t file, const H5pyDataset& d, const char* data,
                      std::set<std::string>* made, const std::string& path) {
  Hid object;
  if (d.name.empty()) {
    object = Hid(H5Gopen2(file, "/", H5P_DEFAULT));
  } else {
    DLIO_ASSIGN_OR_RETURN(object, RequireGroup(call, file, d.name, made, path));
  }
  DLIO_ASSIGN_OR_RETURN(Hid type, TypeOf(call, d.type, d.string_size));
  Hid space = SpaceOf(d);
  Hid attr(object.valid() && space.valid()
               ? H5Acreate2(object.get(), d.attribute.c_str(), type.get(), space.get(), H5P_DEFAULT,
                            H5P_DEFAULT)
               : H5I_INVALID_HID);
  // A variable-length string's value: a pointer per element to its characters (no NULs).
  const bool variable = d.type == H5pyType::kVBytes || d.type == H5pyType::kVStr;
  std::vector<std::string> strings;
  std::vector<const char*> pointers;
  if (variable) {
    uint64_t elements = 1;
    for (const uint64_t n : d.shape) elements *= n;
    for (uint64_t k = 0; k < elements; ++k) {
      std::string text(data, static_cast<size_t>(d.string_size));
      for (char& c : text) c = static_cast<char>('a' + static_cast<unsigned char>(c) % 26);
      strings.push_back(std::move(text));
    }
    for (const std::string& text : strings) pointers.push_back(text.c_str());
  }
  const void* value = variable ? static_cast<const void*>(pointers.data()) : data;
  if (!attr.valid() || H5Awrite(attr.get(), type.get(), value) < 0 || attr.Close() < 0) {
    return call.Error(StatusCode::kIOError,
                      StrCat(path, ": writing attribute ", d.attribute, " of '", d.name, "'"));
  }
  return Status::OK();
}

Status WriteDatasets(Hdf5Call& call, hid_t file, const H5pyLayout& layout, const FillData& fill,
                     std::vector<char>* memory, const std::string& path) {
  std::set<std::string> made;
  uint64_t offset = 0;
  for (const H5pyDataset& d : layout.datasets) {
    const uint64_t n = d.bytes();
    if (memory->size() < std::max<uint64_t>(n, 1)) memory->resize(std::max<uint64_t>(n, 1));
    if (d.is_attribute()) {  // their bytes are not checked: the pattern from 0
      fill(0, static_cast<size_t>(n), memory->data());
      DLIO_RETURN_NOT_OK(WriteAttribute(call, file, d, memory->data(), &made, path));
      continue;
    }
    fill(offset, static_cast<size_t>(n), memory->data());
    offset += n;
    const size_t slash = d.name.rfind('/');
    if (slash == std::string::npos) {
      DLIO_RETURN_NOT_OK(
          WriteDataset(call, file, d.name, d, memory->data(), layout.assigned, path));
      continue;
    }
    DLIO_ASSIGN_OR_RETURN(Hid group,
                          RequireGroup(call, file, d.name.substr(0, slash), &made, path));
    DLIO_RETURN_NOT_OK(WriteDataset(call, group.get(), d.name.substr(slash + 1), d, memory->data(),
                                    layout.assigned, path));
  }
  return Status::OK();
}

// An attribute read as Keras' load_weights reads its names (g.attrs['weight_names']).
Status LoadAttribute(Hdf5Call& call, hid_t file, const H5pyDataset& d, std::vector<char>* memory,
                     const std::string& path) {
  const std::string what = StrCat(path, ": attribute ", d.attribute, " of '", d.name, "'");
  Hid object(H5Gopen2(file, d.name.empty() ? "/" : d.name.c_str(), H5P_DEFAULT));
  Hid attr(object.valid() ? H5Aopen(object.get(), d.attribute.c_str(), H5P_DEFAULT)
                          : H5I_INVALID_HID);
  if (!attr.valid()) return call.Error(StatusCode::kCorruption, what + " cannot be opened");
  DLIO_ASSIGN_OR_RETURN(Hid type, TypeOf(call, d.type, d.string_size));
  Hid space(H5Aget_space(attr.get()));
  const hssize_t points = space.valid() ? H5Sget_simple_extent_npoints(space.get()) : -1;
  const bool variable = d.type == H5pyType::kVBytes || d.type == H5pyType::kVStr;
  const uint64_t element = variable ? d.string_size : H5Tget_size(type.get());
  if (points < 0 || static_cast<uint64_t>(points) * element != d.bytes()) {
    call.Clear();
    return Status::Corruption(what, " does not have the size the checkpoint was written with");
  }
  if (variable) {  // the strings from the global heap, then freed as h5py frees them
    std::vector<char*> strings(static_cast<size_t>(points));
    const herr_t read = H5Aread(attr.get(), type.get(), strings.data());
    if (read >= 0) H5Dvlen_reclaim(type.get(), space.get(), H5P_DEFAULT, strings.data());
    if (read < 0) return call.Error(StatusCode::kIOError, what + ": reading");
    return Status::OK();
  }
  if (memory->size() < std::max<uint64_t>(d.bytes(), 1)) {
    memory->resize(std::max<uint64_t>(d.bytes(), 1));
  }
  if (H5Aread(attr.get(), type.get(), memory->data()) < 0) {
    return call.Error(StatusCode::kIOError, what + ": reading");
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

}  // namespace

namespace internal {

Status WriteRootAttribute(Hdf5Call& call, hid_t file, const H5pyDataset& d, const char* data,
                          const std::string& path) {
  std::set<std::string> made;
  return WriteAttribute(call, file, d, data, &made, path);
}

}  // namespace internal

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
    if (d.is_attribute()) {
      DLIO_RETURN_NOT_OK(LoadAttribute(call, file.get(), d, memory, path));
      continue;
    }
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

}  // namespace dlio::h5py_save
