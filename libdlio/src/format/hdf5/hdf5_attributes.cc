#include "format/hdf5/hdf5_attributes.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "dlio/str_cat.h"
#include "format/hdf5/h5py_save_internal.h"
#include "format/hdf5/hdf5_vfd.h"
#include "format/io_util.h"
#include "io_models/pyio/request_storage.h"

namespace dlio::format_internal::hdf5 {
namespace {

struct AttributeRead {
  Hdf5Call* call;
  std::string path;
  std::vector<char> memory;
  Status status;
};

// One attribute opened by name and read whole with its native memory type, as h5py's
// AttributeManager.__getitem__ reads it.
herr_t ReadOneAttribute(hid_t object, const char* name, const H5A_info_t*, void* walk) {
  auto* w = static_cast<AttributeRead*>(walk);
  const std::string what = StrCat(w->path, ": attribute ", name, " of the root");
  Hid attr(H5Aopen(object, name, H5P_DEFAULT));
  Hid space(attr.valid() ? H5Aget_space(attr.get()) : H5I_INVALID_HID);
  Hid stored(attr.valid() ? H5Aget_type(attr.get()) : H5I_INVALID_HID);
  Hid memory(stored.valid() ? H5Tget_native_type(stored.get(), H5T_DIR_ASCEND) : H5I_INVALID_HID);
  const hssize_t points = space.valid() ? H5Sget_simple_extent_npoints(space.get()) : -1;
  if (!memory.valid() || points < 0) {
    w->status = w->call->Error(StatusCode::kCorruption, what + ": unreadable type or shape");
    return -1;
  }
  const bool variable =
      H5Tis_variable_str(memory.get()) > 0 || H5Tget_class(memory.get()) == H5T_VLEN;
  const size_t bytes = static_cast<size_t>(points) * H5Tget_size(memory.get());
  if (w->memory.size() < std::max<size_t>(bytes, 1)) w->memory.resize(std::max<size_t>(bytes, 1));
  if (H5Aread(attr.get(), memory.get(), w->memory.data()) < 0) {
    w->status = w->call->Error(StatusCode::kCorruption, what + ": reading");
    return -1;
  }
  if (variable) H5Dvlen_reclaim(memory.get(), space.get(), H5P_DEFAULT, w->memory.data());
  return 0;
}

// The reads ReadRootAttributes makes on `path` opened anew through a posix storage: the reads
// after the open's, as {offset, bytes} objects.
std::string AttributeReadsJson(Hdf5Call& call, const std::string& path) {
  std::unique_ptr<Storage> storage = NewPosixStorage({});
  pyio::ReadRecorder recorder;
  storage->Bind(SystemClock(), &recorder);
  Result<Hid> fapl = MakeDlioFapl(call, storage.get(), FileOptions{});
  if (!fapl.ok()) return "";
  Hid file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl->get()));
  if (!file.valid()) {
    call.Clear();
    return "";
  }
  const size_t opened = recorder.reads.size();
  if (!ReadRootAttributes(call, file.get(), path).ok()) return "";
  std::string out;
  for (size_t k = opened; k < recorder.reads.size(); ++k) {
    const auto& [offset, bytes] = recorder.reads[k];
    out += StrCat(out.empty() ? "" : ",", "{\"offset\":", offset, ",\"bytes\":", bytes, "}");
  }
  return out;
}

}  // namespace

Status WriteRootAttributes(Hdf5Call& call, hid_t file, const std::string& items, uint64_t seed,
                           const std::string& path) {
  if (items.empty()) return Status::OK();
  DLIO_ASSIGN_OR_RETURN(std::vector<h5py_save::H5pyDataset> attributes,
                        h5py_save::ParseRootAttributes(items, kRootAttributesKey));
  std::vector<char> value;
  for (const h5py_save::H5pyDataset& d : attributes) {
    value.resize(std::max<size_t>(static_cast<size_t>(d.bytes()), 1));
    for (size_t k = 0; k < value.size(); ++k) {  // letters: a fixed string holds no NUL
      value[k] = static_cast<char>('a' + (seed + k * 7) % 26);
    }
    DLIO_RETURN_NOT_OK(h5py_save::internal::WriteRootAttribute(call, file, d, value.data(), path));
  }
  return Status::OK();
}

Status ReadRootAttributes(Hdf5Call& call, hid_t file, const std::string& path) {
  Hid root(H5Gopen2(file, "/", H5P_DEFAULT));
  if (!root.valid()) return call.Error(StatusCode::kCorruption, path + ": opening the root group");
  AttributeRead walk{&call, path, {}, Status::OK()};
  if (H5Aiterate2(root.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, &ReadOneAttribute, &walk) < 0) {
    if (!walk.status.ok()) return walk.status;
    return call.Error(StatusCode::kCorruption, path + ": listing the root's attributes");
  }
  return Status::OK();
}

std::string RootAttributesJson(Hdf5Call& call, hid_t file, const ReaderInfo& info) {
  Result<std::vector<h5py_save::H5pyDataset>> found =
      h5py_save::internal::RootAttributes(call, file, info.path);
  if (!found.ok() || found->empty()) {
    call.Clear();
    return "";
  }
  const std::string items = h5py_save::ItemsText(*found, ",");
  // A name the key's syntax cannot hold (a ',' in it) would not read back as these attributes.
  const auto parsed = h5py_save::ParseRootAttributes(items, kRootAttributesKey);
  if (!parsed.ok() || *parsed != *found) return "";
  return StrCat(",\"root_attributes\":{\"items\":", JsonString(items), ",\"reads\":[",
                AttributeReadsJson(call, info.path), "]}");
}

}  // namespace dlio::format_internal::hdf5
