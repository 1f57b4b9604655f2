// DLIO's hdf5 layout for records of a shape (dataset.record_dims, record_element_type,
// hdf5.num_dset_per_record): /records_0..records_<N-1>, each [n, record_dims[0] / N, ...] of the
// element type, as the Python DLIO's hdf5 generator writes them. Sample i's bytes are row i of
// each dataset in turn, so a reader that concatenates them gets the bytes of the flat layout.
#include <algorithm>
#include <string_view>

#include "core/element_type.h"
#include "format/content.h"
#include "format/hdf5/hdf5_internal.h"
#include "format/io_util.h"

namespace dlio::format_internal::hdf5 {
namespace {

// The HDF5 type h5py writes for the numpy type `t`: little-endian integers and IEEE floats,
// float16 as h5py's custom 2-byte float, bool as h5py's int8 enum {FALSE, TRUE}, complex64 as
// its compound {r, i} of float32.
Result<Hid> ElementH5Type(Hdf5Call& call, const ElementType& t) {
  const std::string_view d = t.descr;
  Hid type;
  bool ok = true;
  if (d == "|b1") {
    type = Hid(H5Tenum_create(H5T_STD_I8LE));
    const int8_t no = 0, yes = 1;
    ok = type.valid() && H5Tenum_insert(type.get(), "FALSE", &no) >= 0 &&
         H5Tenum_insert(type.get(), "TRUE", &yes) >= 0;
  } else if (d == "<f2") {
    type = Hid(H5Tcopy(H5T_IEEE_F32LE));
    ok = type.valid() && H5Tset_fields(type.get(), 15, 10, 5, 0, 10) >= 0 &&
         H5Tset_size(type.get(), 2) >= 0 && H5Tset_precision(type.get(), 16) >= 0 &&
         H5Tset_ebias(type.get(), 15) >= 0;
  } else if (d == "<c8") {
    type = Hid(H5Tcreate(H5T_COMPOUND, 8));
    ok = type.valid() && H5Tinsert(type.get(), "r", 0, H5T_IEEE_F32LE) >= 0 &&
         H5Tinsert(type.get(), "i", 4, H5T_IEEE_F32LE) >= 0;
  } else {
    hid_t base = H5T_STD_U8LE;
    if (d == "|i1") base = H5T_STD_I8LE;
    if (d == "<u2") base = H5T_STD_U16LE;
    if (d == "<i2") base = H5T_STD_I16LE;
    if (d == "<u4") base = H5T_STD_U32LE;
    if (d == "<i4") base = H5T_STD_I32LE;
    if (d == "<u8") base = H5T_STD_U64LE;
    if (d == "<i8") base = H5T_STD_I64LE;
    if (d == "<f4") base = H5T_IEEE_F32LE;
    if (d == "<f8") base = H5T_IEEE_F64LE;
    type = Hid(H5Tcopy(base));
    ok = type.valid();
  }
  if (!ok) return call.Error(StatusCode::kInternal, StrCat("HDF5 type for ", t.name));
  return type;
}

}  // namespace

bool ShapeFor(const FormatOptions& o, uint64_t sample_bytes, RecordShape* shape) {
  const ElementType* t = FindElementType(o.record_element_type);
  const uint64_t num_dsets = Hdf5Of(o.formats).num_dsets;
  if (o.record_dims.empty() || t == nullptr || num_dsets == 0 ||
      o.record_dims[0] % num_dsets != 0) {
    return false;
  }
  RecordShape s;
  s.num_dsets = num_dsets;
  s.type = t;
  s.row_dims.assign(o.record_dims.begin(), o.record_dims.end());
  s.row_dims[0] /= num_dsets;
  if (s.row_dims[0] == 1) s.row_dims.erase(s.row_dims.begin());  // as DLIO's generator does
  s.row_bytes = t->itemsize;
  for (hsize_t d : s.row_dims) s.row_bytes *= d;
  if (s.row_bytes * s.num_dsets != sample_bytes) return false;
  *shape = std::move(s);
  return true;
}

Result<ShapedDatasets> CreateShapedDatasets(Hdf5Call& call, hid_t file, const std::string& path,
                                            uint64_t n, const RecordShape& shape,
                                            const std::vector<hsize_t>& chunk, const Filters& f) {
  ShapedDatasets out;
  DLIO_ASSIGN_OR_RETURN(out.type, ElementH5Type(call, *shape.type));
  std::vector<hsize_t> dims = {n};
  dims.insert(dims.end(), shape.row_dims.begin(), shape.row_dims.end());
  for (uint64_t k = 0; k < shape.num_dsets; ++k) {
    const std::string name = StrCat("records_", k);
    DLIO_ASSIGN_OR_RETURN(Hid dset, CreateDataset(call, file, path, name.c_str(), out.type.get(),
                                                  dims, chunk, chunk.empty() ? Filters{} : f));
    out.dsets.push_back(std::move(dset));
  }
  return out;
}

Status WriteShapedRows(const std::string& path, const FileSpec& spec, const RecordShape& shape,
                       const ShapedDatasets& sets, uint64_t k, uint64_t unit, uint64_t first,
                       uint64_t last, const ShapedBlockWriter& write) {
  const uint64_t row = shape.row_bytes;
  if (first >= last || row == 0) return Status::OK();
  const uint64_t band =
      std::min<uint64_t>(last - first, unit * std::max<uint64_t>(1, kWriteChunk / (unit * row)));
  std::vector<uint8_t> buf(static_cast<size_t>(band * row));
  std::vector<hsize_t> start(shape.row_dims.size() + 1, 0), count = {0};
  count.insert(count.end(), shape.row_dims.begin(), shape.row_dims.end());
  for (uint64_t r0 = first; r0 < last; r0 += band) {
    const uint64_t rows = std::min(band, last - r0);
    for (uint64_t r = 0; r < rows; ++r) {
      FillSampleBytes(spec.seed, r0 + r, k * row, buf.data() + r * row, row);
    }
    start[0] = r0;
    count[0] = rows;
    DLIO_RETURN_NOT_OK(
        write(sets.dsets[k].get(), start, count, buf.data(),
              StrCat(path, ": writing /records_", k, " rows ", r0, "..", r0 + rows - 1)));
  }
  return Status::OK();
}

Status WriteShapedRecords(Hdf5Call& call, hid_t file, const std::string& path, const FileSpec& spec,
                          const RecordShape& shape, const FormatOptions& o, const Filters& f) {
  const uint64_t n = spec.sample_sizes.size();
  // Whole rows per chunk: the rows a 2-D [n, row_bytes] chunk of the same knobs would hold.
  std::vector<hsize_t> chunk = RecordsChunk(n, shape.row_bytes, o, f);
  if (!chunk.empty()) {
    const hsize_t rows = chunk[1] < shape.row_bytes ? 1 : chunk[0];
    chunk = {rows};
    chunk.insert(chunk.end(), shape.row_dims.begin(), shape.row_dims.end());
  }
  DLIO_ASSIGN_OR_RETURN(ShapedDatasets sets,
                        CreateShapedDatasets(call, file, path, n, shape, chunk, f));
  // Blocks of whole chunks, so no chunk is written twice.
  const uint64_t unit = chunk.empty() ? 1 : chunk[0];
  const ShapedBlockWriter write = [&](hid_t dset, const std::vector<hsize_t>& start,
                                      const std::vector<hsize_t>& count, const void* buf,
                                      const std::string& what) {
    return WriteBlock(call, dset, sets.type.get(), start, count, buf, what);
  };
  for (uint64_t k = 0; k < shape.num_dsets; ++k) {
    DLIO_RETURN_NOT_OK(WriteShapedRows(path, spec, shape, sets, k, unit, 0, n, write));
  }
  return Status::OK();
}

}  // namespace dlio::format_internal::hdf5
