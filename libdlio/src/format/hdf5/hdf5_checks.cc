// What we check of a dataset before libhdf5 reads it: headers that libhdf5 1.10.8 accepts and
// then crashes on, and extents the file does not store (docs/formats.md, "Corrupt files").
#include "format/hdf5/hdf5_internal.h"

namespace dlio::format_internal::hdf5 {
namespace {

std::string Bytes(uint64_t n) { return StrCat(n, " bytes"); }

// The parts of a dataset's header the checks read.
struct Header {
  int rank = -1;
  std::array<hsize_t, H5S_MAX_RANK> dims{}, max_dims{};
  uint64_t element_bytes = 0;
  H5T_class_t type_class = H5T_NO_CLASS;
  H5D_layout_t layout = H5D_LAYOUT_ERROR;
  int filters = 0;
  int chunk_rank = -1;
  std::array<hsize_t, H5S_MAX_RANK> chunk{};
};

Result<Header> ReadHeader(hid_t dset, hid_t dcpl, const std::string& what) {
  Header h;
  Hid space(H5Dget_space(dset));
  Hid type(H5Dget_type(dset));
  if (space.valid()) {
    h.rank = H5Sget_simple_extent_dims(space.get(), h.dims.data(), h.max_dims.data());
  }
  if (type.valid()) {
    h.element_bytes = H5Tget_size(type.get());
    h.type_class = H5Tget_class(type.get());
  }
  h.layout = H5Pget_layout(dcpl);
  h.filters = H5Pget_nfilters(dcpl);
  if (h.layout == H5D_CHUNKED) h.chunk_rank = H5Pget_chunk(dcpl, H5S_MAX_RANK, h.chunk.data());
  if (h.rank < 0 || h.element_bytes == 0 || h.layout < 0 || h.filters < 0) {
    H5Eclear2(H5E_DEFAULT);
    return Status::Corruption(what + ": unreadable dataspace, datatype or layout");
  }
  return h;
}

// Headers libhdf5 accepts and then reads past its buffers on (one flipped byte each: the
// element size of a number, the rank of the dataspace, a chunk dimension).
Status CheckConsistency(const Header& h, const std::string& what) {
  const bool number = h.type_class == H5T_INTEGER || h.type_class == H5T_FLOAT;
  if (number && (h.element_bytes > 16 || (h.element_bytes & (h.element_bytes - 1)) != 0)) {
    return Status::Corruption(what + ": " + (h.type_class == H5T_INTEGER ? "integer" : "float") +
                              " elements of " + Bytes(h.element_bytes));
  }
  if (h.layout != H5D_CHUNKED) return Status::OK();
  if (h.chunk_rank != h.rank) {
    return Status::Corruption(what, ": chunks of rank ", h.chunk_rank, " in a dataset of rank ",
                              h.rank);
  }
  uint64_t chunk_bytes = h.element_bytes;
  for (int k = 0; k < h.rank; ++k) {
    const bool fixed = h.max_dims[k] != H5S_UNLIMITED;
    if (h.chunk[k] == 0 || (fixed && h.chunk[k] > h.max_dims[k]) ||
        __builtin_mul_overflow(chunk_bytes, h.chunk[k], &chunk_bytes)) {
      return Status::Corruption(what + ": chunk " + JsonDims(h.chunk.data(), h.rank) +
                                " does not fit shape " + JsonDims(h.dims.data(), h.rank) +
                                " (max " + JsonDims(h.max_dims.data(), h.rank) + ")");
    }
  }
  if (chunk_bytes > kMaxChunkBytes) {
    return Status::Corruption(what + ": chunks of " + Bytes(chunk_bytes) + ", more than HDF5's " +
                              Bytes(kMaxChunkBytes));
  }
  return Status::OK();
}

// The extent against the bytes the file stores, in O(1): walking a chunk index would cost reads
// an open should not make, so chunked data is bounded by the file size instead (unfiltered
// chunks store at least their bytes; filtered ones compress at most kMaxFilterRatio:1).
Status CheckExtent(hid_t dset, const Header& h, const std::string& what, uint64_t file_size) {
  Extent e;
  e.rank = h.rank;
  e.dims = h.dims;
  auto shape = [&] {
    return StrCat(what, " declares shape ", JsonDims(h.dims.data(), h.rank), " of ",
                  h.element_bytes, "-byte elements");
  };
  uint64_t declared = 0;
  if (!DeclaredBytes(e, h.element_bytes, &declared)) {
    return Status::Corruption(shape() + ", more than 2^62 bytes");
  }
  if (declared == 0) return Status::OK();
  if (h.layout == H5D_CONTIGUOUS || h.layout == H5D_COMPACT) {
    const uint64_t stored = H5Dget_storage_size(dset);  // the layout message's size
    if (stored != declared) {
      return Status::Corruption(shape() + " (" + Bytes(declared) + ") but stores " + Bytes(stored));
    }
    const haddr_t addr = h.layout == H5D_CONTIGUOUS ? H5Dget_offset(dset) : 0;
    if (addr == HADDR_UNDEF || addr > file_size || declared > file_size - addr) {
      return Status::Corruption(what, ": its ", Bytes(declared), " at file offset ", addr,
                                " end past the end of the file (", Bytes(file_size), ")");
    }
  } else if (h.layout == H5D_CHUNKED) {
    const uint64_t ratio = h.filters > 0 ? kMaxFilterRatio : 1;
    if (declared / ratio > file_size) {
      return Status::Corruption(
          shape(), " (", Bytes(declared), "), more than the ", Bytes(file_size),
          " of the file hold",
          (h.filters > 0 ? StrCat(" even compressed ", ratio, ":1") : std::string()));
    }
  }
  return Status::OK();
}

}  // namespace

bool DeclaredBytes(const Extent& e, uint64_t element_bytes, uint64_t* bytes) {
  uint64_t n = element_bytes;
  for (int k = 0; k < e.rank; ++k) {
    if (__builtin_mul_overflow(n, e.dims[k], &n)) return false;
  }
  *bytes = n;
  return n <= kMaxDeclaredBytes;
}

Status CheckDataset(hid_t dset, const std::string& what, uint64_t file_size, hid_t dcpl) {
  Hid own;
  if (dcpl < 0) {
    own = Hid(H5Dget_create_plist(dset));
    if (!own.valid()) {
      H5Eclear2(H5E_DEFAULT);
      return Status::Corruption(what + ": unreadable creation properties");
    }
    dcpl = own.get();
  }
  DLIO_ASSIGN_OR_RETURN(const Header h, ReadHeader(dset, dcpl, what));
  DLIO_RETURN_NOT_OK(CheckConsistency(h, what));
  return CheckExtent(dset, h, what, file_size);
}

}  // namespace dlio::format_internal::hdf5
