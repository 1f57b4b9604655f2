// What `inspect` prints of a file (DescribeJson): its samples, every dataset's dtype, layout,
// chunks and filters, and the problems found beyond the sample dataset.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "format/hdf5/hdf5_attributes.h"
#include "format/hdf5/hdf5_reader.h"
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

// One filter of a dataset's pipeline: its id, its client data (the first 8 values) and name.
struct Filter {
  H5Z_filter_t id = H5Z_FILTER_ERROR;
  size_t nelmts = 0;
  std::array<unsigned, 8> cd{};
  std::string name;
  unsigned First() const { return nelmts > 0 ? cd[0] : 0; }
};

std::vector<Filter> Pipeline(hid_t dcpl) {
  std::vector<Filter> out;
  const int nf = H5Pget_nfilters(dcpl);
  for (int k = 0; k < nf; ++k) {
    Filter f;
    unsigned flags = 0, config = 0;
    f.nelmts = f.cd.size();
    char name[64] = {};
    f.id = H5Pget_filter2(dcpl, static_cast<unsigned>(k), &flags, &f.nelmts, f.cd.data(),
                          sizeof name, name, &config);
    f.name = name;
    out.push_back(std::move(f));
  }
  return out;
}

std::string FiltersJson(hid_t dcpl) {
  std::string out = "[";
  for (const Filter& filter : Pipeline(dcpl)) {
    std::string f;
    if (filter.id == H5Z_FILTER_DEFLATE) {
      f = "{\"name\":\"gzip\",\"level\":" + std::to_string(filter.First());
    } else if (filter.id == H5Z_FILTER_SHUFFLE) {
      f = "{\"name\":\"shuffle\"";
    } else if (filter.id == H5Z_FILTER_SZIP) {
      f = "{\"name\":\"szip\",\"options_mask\":" + std::to_string(filter.First()) +
          ",\"pixels_per_block\":" + std::to_string(filter.nelmts > 1 ? filter.cd[1] : 0);
    } else if (filter.id == H5Z_FILTER_FLETCHER32) {
      f = "{\"name\":\"fletcher32\"";
    } else {
      f = "{\"name\":" + JsonString(filter.name);
    }
    f += ",\"id\":" + std::to_string(filter.id) +
         ",\"available\":" + (H5Zfilter_avail(filter.id) > 0 ? "true" : "false") + "}";
    if (out.size() > 1) out += ',';
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

// "\"num_samples\":N,\"sample_size\":{min,max,mean}" (plus "sample_sizes" up to 16 samples),
// as SampleSizesJson prints it but from the sums taken at open: O(1) for any sample count.
std::string SampleSizeSummary(const ReaderInfo& info) {
  char mean[64];
  std::snprintf(mean, sizeof mean, "%.1Lf",
                info.num_samples ? info.total_size / info.num_samples : 0.0L);
  std::string out = "\"num_samples\":" + std::to_string(info.num_samples) +
                    ",\"sample_size\":{\"min\":" + std::to_string(info.min_size) +
                    ",\"max\":" + std::to_string(info.max_size) + ",\"mean\":" + mean + "}";
  if (info.num_samples <= 16) {
    out += ",\"sample_sizes\":[";
    for (uint64_t i = 0; i < info.num_samples; ++i) {
      const uint64_t size = info.layout == SampleLayout::kRows ? info.row_bytes : info.sizes[i];
      if (i) out += ',';
      out += std::to_string(size);
    }
    out += "]";
  }
  return out;
}

// "" or "<what>: N of M chunks are not stored ...": chunks never written read as the fill value,
// so the samples they hold are not in the file. Walks the chunk index.
std::string MissingChunks(Hdf5Call& call, hid_t dset, const std::string& what) {
  Hid dcpl(H5Dget_create_plist(dset));
  if (!dcpl.valid() || H5Pget_layout(dcpl.get()) != H5D_CHUNKED) return "";
  const Extent e = DatasetExtent(dset);
  std::array<hsize_t, H5S_MAX_RANK> chunk{};
  if (H5Pget_chunk(dcpl.get(), H5S_MAX_RANK, chunk.data()) != e.rank) return "";
  uint64_t expected = 1;
  for (int k = 0; k < e.rank; ++k) {
    const uint64_t along = chunk[k] == 0 ? 0 : e.dims[k] / chunk[k] + (e.dims[k] % chunk[k] != 0);
    if (__builtin_mul_overflow(expected, along, &expected)) expected = UINT64_MAX;
  }
  hsize_t stored = 0;
  Hid space(H5Dget_space(dset));  // 1.10.8 refuses H5S_ALL here
  if (!space.valid() || H5Dget_num_chunks(dset, space.get(), &stored) < 0) {
    return call.Error(StatusCode::kCorruption, what + ": reading its chunk index").message();
  }
  if (stored >= expected) return "";
  return StrCat(what, ": ", expected - stored, " of its ", expected,
                " chunks are not stored (they read as the fill value)");
}

// "" or what is wrong with /labels: it must open, hold one entry per sample and read. Read in
// blocks of about 1 MiB in its own type (no conversion).
std::string CheckLabels(Hdf5Call& call, const ReaderHandles& h, const ReaderInfo& info) {
  const std::string what = info.path + ": /labels";
  if (H5Lexists(h.file.get(), "/labels", H5P_DEFAULT) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return "";  // files without labels are fine
  }
  Hid labels(H5Dopen2(h.file.get(), "/labels", H5P_DEFAULT));
  if (!labels.valid()) return call.Error(StatusCode::kCorruption, what + ": cannot open").message();
  const Extent e = DatasetExtent(labels.get());
  if (e.rank != 1) {
    return StrCat(what, " has rank ", e.rank, ", not 1 (one label per sample)");
  }
  if (e.dims[0] != info.num_samples) {
    return StrCat(what, " has ", e.dims[0], " entries for ", info.num_samples, " samples");
  }
  const Status extent = CheckDataset(labels.get(), what, info.file_size);
  if (!extent.ok()) return extent.message();
  Hid type(H5Dget_type(labels.get()));
  Hid space(H5Dget_space(labels.get()));
  const uint64_t element_bytes = type.valid() ? H5Tget_size(type.get()) : 0;
  if (!space.valid() || element_bytes == 0) {
    return call.Error(StatusCode::kCorruption, what + ": datatype or dataspace").message();
  }
  const hsize_t block = std::max<uint64_t>(1, (1u << 20) / element_bytes);
  std::vector<uint8_t> buf(block * element_bytes);
  for (hsize_t first = 0; first < e.dims[0]; first += block) {
    const hsize_t count = std::min<hsize_t>(block, e.dims[0] - first);
    Hid mem(H5Screate_simple(1, &count, nullptr));
    if (!mem.valid() ||
        H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, &first, nullptr, &count, nullptr) < 0 ||
        H5Dread(labels.get(), type.get(), mem.get(), space.get(), H5P_DEFAULT, buf.data()) < 0) {
      return call
          .Error(StatusCode::kCorruption,
                 StrCat(what, ": reading entries ", first, "..", first + count - 1))
          .message();
    }
  }
  return "";
}

// ",\"compressed_units\":{count, bytes, stored_mean, stored_stdev}" of the first kMaxSizedChunks
// chunks of a dataset chunked along its first axis in chunks of `rows` samples: a chunk's bytes
// and the bytes each takes on disk (compressed chunks differ), "" when they cannot be told.
std::string StoredChunkBytes(hid_t dset, const ReaderInfo& info, hsize_t rows) {
  constexpr uint64_t kMaxSizedChunks = 4096;
  std::array<hsize_t, H5S_MAX_RANK> at{};
  double sum = 0, sum2 = 0;
  uint64_t m = 0;
  for (uint64_t r = 0; r < info.num_samples && m < kMaxSizedChunks; r += rows, ++m) {
    at[0] = r;
    hsize_t bytes = 0;
    if (H5Dget_chunk_storage_size(dset, at.data(), &bytes) < 0) {
      H5Eclear2(H5E_DEFAULT);
      return "";
    }
    sum += static_cast<double>(bytes);
    sum2 += static_cast<double>(bytes) * static_cast<double>(bytes);
  }
  if (m == 0) return "";
  const double mean = sum / static_cast<double>(m);
  const double var = std::max(0.0, sum2 / static_cast<double>(m) - mean * mean);
  char buf[200];
  std::snprintf(buf, sizeof buf,
                ",\"compressed_units\":{\"count\":%llu,\"bytes\":%llu,\"stored_mean\":%.1f,"
                "\"stored_stdev\":%.1f}",
                static_cast<unsigned long long>(m),
                static_cast<unsigned long long>(rows * info.row_bytes), mean, std::sqrt(var));
  return buf;
}

// ",\"stored_data_bytes\":N[,\"samples_per_chunk\":K]" of a rows-layout sample dataset: the
// bytes its samples take on disk after its filters (a compressed dataset's are fewer than its
// samples'), and, chunked with whole samples in each chunk, how many a chunk holds. What
// `dlio-run fit` sizes an emulation's records and chunks by (docs/formats.md, "inspect").
std::string StoredLayoutJson(hid_t dset, const ReaderInfo& info) {
  if (info.layout != SampleLayout::kRows || info.num_samples == 0) return "";
  std::string out = ",\"stored_data_bytes\":" + std::to_string(H5Dget_storage_size(dset));
  Hid dcpl(H5Dget_create_plist(dset));
  if (dcpl.valid() && H5Pget_layout(dcpl.get()) == H5D_CONTIGUOUS) {
    // Where the samples' bytes lie: a larger read elsewhere is the file's metadata (a global
    // heap of string attributes read at every open), not a sample.
    const haddr_t at = H5Dget_offset(dset);
    if (at != HADDR_UNDEF) {
      out += StrCat(",\"sample_extent\":{\"offset\":", at, ",\"bytes\":", H5Dget_storage_size(dset),
                    "}");
    }
    H5Eclear2(H5E_DEFAULT);
  }
  if (!dcpl.valid() || H5Pget_layout(dcpl.get()) != H5D_CHUNKED) return out;
  std::array<hsize_t, H5S_MAX_RANK> chunk{};
  if (H5Pget_chunk(dcpl.get(), H5S_MAX_RANK, chunk.data()) != info.rank || chunk[0] == 0) {
    return out;
  }
  for (int k = 1; k < info.rank; ++k) {
    if (chunk[k] != info.dims[k]) return out;  // a chunk holds parts of samples
  }
  out += ",\"samples_per_chunk\":" + std::to_string(chunk[0]);
  for (const Filter& filter : Pipeline(dcpl.get())) {
    if (filter.id == H5Z_FILTER_DEFLATE) {
      out += ",\"compression\":\"gzip\",\"compression_level\":" + std::to_string(filter.First());
    }
  }
  return out + StoredChunkBytes(dset, info, chunk[0]);
}

// ",{name, offset, bytes, row_bytes}" when `d` is a table of one row per sample beside a
// rows-layout sample dataset: contiguous, unfiltered, stored, its first axis the samples' count
// (fastMRI's reconstruction beside its k-space, a label or coordinates table). A loader reading
// it at the sample's index reads it through libhdf5's sieve buffer from the row to its end,
// which `dlio-run fit` tells apart from the samples by these bytes (docs/formats.md, "inspect").
std::string RowTableJson(hid_t d, const std::string& name, const ReaderInfo& info) {
  if (info.layout != SampleLayout::kRows || info.num_samples < 2 || name == info.dataset) return "";
  Hid dcpl(H5Dget_create_plist(d));
  if (!dcpl.valid() || H5Pget_layout(dcpl.get()) != H5D_CONTIGUOUS ||
      H5Pget_nfilters(dcpl.get()) != 0) {
    return "";
  }
  const Extent e = DatasetExtent(d);
  const haddr_t offset = H5Dget_offset(d);
  const hsize_t bytes = H5Dget_storage_size(d);
  if (e.rank < 1 || e.dims[0] != info.num_samples || offset == HADDR_UNDEF || bytes == 0 ||
      bytes % info.num_samples != 0 || offset + bytes > info.file_size) {
    H5Eclear2(H5E_DEFAULT);
    return "";
  }
  return StrCat(",{\"name\":", JsonString(name), ",\"offset\":", offset, ",\"bytes\":", bytes,
                ",\"row_bytes\":", bytes / info.num_samples, "}");
}

std::string JsonStrings(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t k = 0; k < v.size(); ++k) {
    if (k) out += ',';
    out += JsonString(v[k]);
  }
  return out + "]";
}

}  // namespace

std::string DescribeFile(Hdf5Call& call, const ReaderHandles& h, const ReaderInfo& info) {
  std::string out = "{\"format\":\"hdf5\",\"path\":" + JsonString(info.path) +
                    ",\"file_size\":" + std::to_string(info.file_size) + "," +
                    SampleSizeSummary(info) + ",\"sample_layout\":\"" +
                    (info.layout == SampleLayout::kRows ? "rows" : "concatenated") +
                    "\",\"sample_dataset\":" + JsonString(info.dataset);
  out += StoredLayoutJson(h.dset.get(), info);
  out += ",\"sample_dataset_info\":" + DescribeDataset(h.dset.get(), info.dataset);
  DatasetList all = ListDatasets(call, h.file.get(), info.path);
  std::vector<std::string> problems = std::move(all.problems);
  std::string list, tables;
  for (size_t k = 0; k < all.names.size() && k < kMaxDescribedDatasets; ++k) {
    const std::string what = info.path + ": " + all.names[k];
    Result<Hid> opened = OpenDatasetIfAny(call, h.file.get(), info.path, all.names[k]);
    if (!opened.ok() || !opened->valid()) {
      problems.push_back(opened.ok() ? what + ": not a dataset" : opened.status().message());
      continue;
    }
    const Hid d = std::move(opened).value();
    if (!list.empty()) list += ',';
    list += DescribeDataset(d.get(), all.names[k]);
    const Status extent = CheckDataset(d.get(), what, info.file_size);
    if (!extent.ok()) problems.push_back(extent.message());
    if (extent.ok()) tables += RowTableJson(d.get(), all.names[k], info);
    if (std::string missing = MissingChunks(call, d.get(), what); !missing.empty()) {
      problems.push_back(std::move(missing));
    }
  }
  out += ",\"datasets\":[" + list + "]";
  if (!tables.empty()) out += ",\"row_tables\":[" + tables.substr(1) + "]";
  out += RootAttributesJson(call, h.file.get(), info);
  if (all.names.size() > kMaxDescribedDatasets) {
    out += ",\"datasets_total\":" + std::to_string(all.names.size());
  }
  if (!info.meta_path.empty()) out += ",\"metadata_file\":" + JsonString(info.meta_path);
  if (std::string labels = CheckLabels(call, h, info); !labels.empty()) {
    problems.push_back(std::move(labels));
  }
  if (!problems.empty()) out += ",\"problems\":" + JsonStrings(problems);
  return out + "}";
}

}  // namespace dlio::format_internal::hdf5
