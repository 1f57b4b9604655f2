// What `inspect` prints of a file's datasets: dtypes, layouts, chunks, filters, and the walk
// that lists every dataset.
#include <algorithm>

#include "format/hdf5/hdf5_internal.h"
#include "format/io_util.h"

namespace dlio::format_internal::hdf5 {

std::string JsonDims(const hsize_t* dims, int rank) {
  std::string out = "[";
  for (int k = 0; k < rank; ++k) {
    if (k) out += ',';
    out += std::to_string(dims[k]);
  }
  return out + "]";
}

std::string DtypeString(hid_t type) {
  const size_t size = H5Tget_size(type);
  const std::string bytes = std::to_string(size);
  const char order = size == 1 ? '|' : H5Tget_order(type) == H5T_ORDER_BE ? '>' : '<';
  switch (H5Tget_class(type)) {
    case H5T_INTEGER:
      return std::string(1, order) + (H5Tget_sign(type) == H5T_SGN_NONE ? "u" : "i") + bytes;
    case H5T_FLOAT:
      return std::string(1, order) + "f" + bytes;
    case H5T_STRING:
      return H5Tis_variable_str(type) > 0 ? "vlen-str" : "|S" + bytes;
    case H5T_OPAQUE:
      return "|V" + bytes;
    case H5T_BITFIELD:
      return "bitfield" + bytes;
    case H5T_COMPOUND:
      return "compound" + bytes;
    case H5T_ARRAY:
      return "array" + bytes;
    case H5T_ENUM: {
      Hid base(H5Tget_super(type));
      return "enum(" + (base.valid() ? DtypeString(base.get()) : bytes) + ")";
    }
    case H5T_VLEN:
      return "vlen";
    case H5T_REFERENCE:
      return "reference";
    default:
      return "unknown" + bytes;
  }
}

namespace {

std::string FiltersJson(hid_t dcpl) {
  std::string out = "[";
  const int nf = H5Pget_nfilters(dcpl);
  for (int k = 0; k < nf; ++k) {
    unsigned flags = 0, config = 0;
    size_t nelmts = 8;
    unsigned cd[8] = {};
    char name[64] = {};
    const H5Z_filter_t id = H5Pget_filter2(dcpl, static_cast<unsigned>(k), &flags, &nelmts, cd,
                                           sizeof name, name, &config);
    std::string f;
    if (id == H5Z_FILTER_DEFLATE) {
      f = "{\"name\":\"gzip\",\"level\":" + std::to_string(nelmts > 0 ? cd[0] : 0);
    } else if (id == H5Z_FILTER_SHUFFLE) {
      f = "{\"name\":\"shuffle\"";
    } else if (id == H5Z_FILTER_SZIP) {
      f = "{\"name\":\"szip\",\"options_mask\":" + std::to_string(nelmts > 0 ? cd[0] : 0) +
          ",\"pixels_per_block\":" + std::to_string(nelmts > 1 ? cd[1] : 0);
    } else if (id == H5Z_FILTER_FLETCHER32) {
      f = "{\"name\":\"fletcher32\"";
    } else {
      f = "{\"name\":" + JsonString(name);
    }
    f += ",\"id\":" + std::to_string(id) +
         ",\"available\":" + (H5Zfilter_avail(id) > 0 ? "true" : "false") + "}";
    if (k) out += ',';
    out += f;
  }
  return out + "]";
}

}  // namespace

// {"name","shape","dtype","layout","chunk","filters","storage_size"} of one dataset.
std::string DescribeDataset(hid_t dset, const std::string& name) {
  std::string out = "{\"name\":" + JsonString(name);
  Hid space(H5Dget_space(dset));
  Hid type(H5Dget_type(dset));
  Hid dcpl(H5Dget_create_plist(dset));
  if (space.valid()) {
    std::array<hsize_t, H5S_MAX_RANK> dims{};
    const int rank = H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    out += ",\"shape\":" + JsonDims(dims.data(), std::max(rank, 0));
  }
  if (type.valid()) out += ",\"dtype\":" + JsonString(DtypeString(type.get()));
  if (dcpl.valid()) {
    const H5D_layout_t layout = H5Pget_layout(dcpl.get());
    out += ",\"layout\":\"";
    out += layout == H5D_CHUNKED      ? "chunked"
           : layout == H5D_COMPACT    ? "compact"
           : layout == H5D_VIRTUAL    ? "virtual"
           : layout == H5D_CONTIGUOUS ? "contiguous"
                                      : "unknown";
    out += "\"";
    if (layout == H5D_CHUNKED) {
      std::array<hsize_t, H5S_MAX_RANK> chunk{};
      const int rank = H5Pget_chunk(dcpl.get(), H5S_MAX_RANK, chunk.data());
      out += ",\"chunk\":" + JsonDims(chunk.data(), std::max(rank, 0));
    }
    out += ",\"filters\":" + FiltersJson(dcpl.get());
  }
  out += ",\"storage_size\":" + std::to_string(H5Dget_storage_size(dset));
  return out + "}";
}

namespace {

// Paths of all datasets under `group`, depth first, names in increasing order.
struct WalkState {
  std::string prefix;
  int depth = 0;
  std::vector<std::string>* out = nullptr;
};

herr_t WalkLink(hid_t group, const char* name, const H5L_info_t* info, void* data) {
  auto* st = static_cast<WalkState*>(data);
  if (st->out->size() >= kMaxDatasets) return 1;  // stop
  if (info->type != H5L_TYPE_HARD) return 0;      // soft/external links may dangle or loop
  Hid obj(H5Oopen(group, name, H5P_DEFAULT));
  if (!obj.valid()) {
    H5Eclear2(H5E_DEFAULT);
    return 0;
  }
  const std::string path = st->prefix + "/" + name;
  const H5I_type_t type = H5Iget_type(obj.get());
  if (type == H5I_DATASET) {
    st->out->push_back(path);
  } else if (type == H5I_GROUP && st->depth < kMaxGroupDepth) {
    WalkState inner{path, st->depth + 1, st->out};
    if (H5Literate(obj.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, &WalkLink, &inner) < 0) {
      H5Eclear2(H5E_DEFAULT);
    }
  }
  return 0;
}

}  // namespace

std::vector<std::string> ListDatasets(hid_t file) {
  std::vector<std::string> out;
  WalkState st{"", 0, &out};
  if (H5Literate(file, H5_INDEX_NAME, H5_ITER_INC, nullptr, &WalkLink, &st) < 0) {
    H5Eclear2(H5E_DEFAULT);
  }
  return out;
}

}  // namespace dlio::format_internal::hdf5
