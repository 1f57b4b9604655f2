// The h5py I/O model (reader.io_model h5py): samples read the way an h5py program reads them, so
// libhdf5 issues the requests it issues under h5py (docs/io_models.md, "h5py"):
//   - files opened with h5py's file access properties: libhdf5's defaults (sec2's features, the
//     1 MiB / 521-slot chunk cache, the metadata cache), which are ours through the dlio driver;
//   - datasets opened with the default access properties (no chunk cache fitted to the chunks);
//   - `f['records'][i]` is an H5Dopen by name, one hyperslab H5Dread and an H5Dclose, so the
//     sieve buffer (64 KiB, contiguous datasets) and the chunk cache live only as long as the
//     dataset object does: one sample under reader.h5py_reopen file and dataset, the whole run
//     under none;
//   - h5py.File per sample (h5py_reopen file, DLIO's on_demand reader): every sample opens the
//     file, reads its superblock and object headers again, and closes it;
//   - dict(f.attrs) after each sample (reader.h5py_read_attributes): every root attribute read.
// The first sample of an open reader uses the file OpenReader opened (that open is h5py.File's).
#include <algorithm>
#include <array>
#include <optional>
#include <vector>

#include "format/hdf5/hdf5_attributes.h"
#include "format/hdf5/hdf5_chunk_guard.h"
#include "format/hdf5/hdf5_lookup.h"
#include "format/hdf5/hdf5_options.h"
#include "format/hdf5/hdf5_reader.h"
#include "format/hdf5/hdf5_vfd.h"
#include "format/io_util.h"

namespace dlio::format_internal::hdf5 {
namespace {

// The open objects of one h5py.File: what h5py's File.close() closes (datasets, then files).
struct OpenObjects {
  Hid file, dset, lookup, meta_file, meta_offsets, meta_sizes;
  void CloseDatasets() {
    meta_sizes.Reset();
    meta_offsets.Reset();
    lookup.Reset();
    dset.Reset();
  }
  void CloseAll() {
    CloseDatasets();
    meta_file.Reset();
    file.Reset();
  }
};

// Thread safety: as the native reader, every call holds the process-wide HDF5 lock, which also
// guards the open objects.
class H5pyReader final : public FormatReader {
 public:
  // `lookup_first`: the lookup row read before the sample (reader.hdf5_lookup_order); `lookup`,
  // the table then, checked at the open.
  H5pyReader(const FormatOptions& o, Hid fapl, ReaderHandles h, ReaderInfo info, bool lookup_first,
             std::optional<LookupTable> lookup)
      : reopen_(Hdf5Of(o.formats).h5py_reopen),
        read_attributes_(Hdf5Of(o.formats).h5py_read_attributes),
        lookup_first_(lookup_first),
        fapl_(std::move(fapl)),
        type_(std::move(h.type)),
        mem_space_(std::move(h.mem_space)),
        info_(std::move(info)),
        lookup_name_(Hdf5Of(o.formats).lookup_dataset),
        lookup_(std::move(lookup)),
        lookup_row_(std::max<uint64_t>(lookup_ ? lookup_->row_bytes : 0, 1)) {
    // The files OpenReader opened serve the first sample; its datasets were opened with fitted
    // caches, so they are closed (their headers stay in the metadata cache: no I/O to reopen).
    open_.file = std::move(h.file);
    open_.meta_file = std::move(h.meta_file);
    h.Reset();
  }
  ~H5pyReader() override {
    Hdf5Call call;
    open_.CloseAll();
    lookup_.reset();
    mem_space_.Reset();
    type_.Reset();
    fapl_.Reset();
  }

  uint64_t num_samples() const override { return info_.num_samples; }
  uint64_t sample_size(uint64_t i) const override { return info_.SampleSize(i); }

  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    DLIO_RETURN_NOT_OK(CheckSampleIndex(info_.path, i, info_.num_samples));
    const uint64_t size = sample_size(i);
    DLIO_RETURN_NOT_OK(out->Resize(size));
    Hdf5Call call;
    Status st = OpenFiles(call);
    if (st.ok()) st = ReadOpen(call, i, size, out);
    if (st.ok() && read_attributes_) st = ReadRootAttributes(call, open_.file.get(), info_.path);
    if (reopen_ == H5pyReopen::kFile) {
      open_.CloseAll();
    } else if (reopen_ == H5pyReopen::kDataset) {
      open_.CloseDatasets();
    }
    return st;
  }

  // h5py.File(path) opened to learn about the file (its sample dataset's shape, the open's):
  // dict(f.attrs) under reader.h5py_read_attributes.
  Status ReadOpenedFileFacts() override {
    if (!read_attributes_) return Status::OK();
    Hdf5Call call;
    DLIO_RETURN_NOT_OK(OpenFiles(call));
    return ReadRootAttributes(call, open_.file.get(), info_.path);
  }

  std::string DescribeJson() const override {
    Hdf5Call call;
    ReaderHandles h;
    h.file = Hid(H5Fopen(info_.path.c_str(), H5F_ACC_RDONLY, fapl_.get()));
    if (h.file.valid()) h.dset = Hid(H5Dopen2(h.file.get(), info_.dataset.c_str(), H5P_DEFAULT));
    if (!h.dset.valid()) {
      const Status st = call.Error(StatusCode::kCorruption, info_.path + ": reopening");
      return "{\"error\":" + JsonString(st.message()) + "}";
    }
    return DescribeFile(call, h, info_);
  }

 private:
  // h5py.File(path) (and the metadata file's) when the previous sample closed it.
  Status OpenFiles(Hdf5Call& call) {
    if (!open_.file.valid()) {
      open_.file = Hid(H5Fopen(info_.path.c_str(), H5F_ACC_RDONLY, fapl_.get()));
      if (!open_.file.valid()) {
        return call.Error(StatusCode::kCorruption, info_.path + ": not a readable HDF5 file");
      }
    }
    if (!info_.meta_path.empty() && !open_.meta_file.valid()) {
      open_.meta_file = Hid(H5Fopen(info_.meta_path.c_str(), H5F_ACC_RDONLY, fapl_.get()));
      if (!open_.meta_file.valid()) {
        return call.Error(StatusCode::kCorruption,
                          info_.meta_path + ": not a readable HDF5 metadata file");
      }
    }
    return Status::OK();
  }

  // `*d` = H5Dopen of `name` in `file` with the default access properties, unless open.
  static Status OpenDataset(Hdf5Call& call, const Hid& file, const std::string& path,
                            const std::string& name, Hid* d) {
    if (d->valid()) return Status::OK();
    *d = Hid(H5Dopen2(file.get(), name.c_str(), H5P_DEFAULT));
    if (!d->valid()) return call.Error(StatusCode::kCorruption, path + ": opening " + name);
    return Status::OK();
  }

  // What OpenForReading checks, for a dataset h5py opened (its header is read: no I/O).
  static Status CheckOpened(Hdf5Call& call, hid_t d, const std::string& what, uint64_t file_size) {
    Hid dcpl(H5Dget_create_plist(d));
    if (!dcpl.valid()) return call.Error(StatusCode::kCorruption, what + ": creation properties");
    DLIO_RETURN_NOT_OK(CheckFiltersAvailable(dcpl.get(), what));
    return CheckDataset(d, what, file_size, dcpl.get());
  }

  // The sample dataset, then the lookup row (reader.hdf5_lookup_order before), then the metadata
  // file's entry, then the sample, then the lookup row (after).
  Status ReadOpen(Hdf5Call& call, uint64_t i, uint64_t size, SampleBuffer* out) {
    DLIO_RETURN_NOT_OK(OpenDataset(call, open_.file, info_.path, info_.dataset, &open_.dset));
    const bool lookup = !lookup_name_.empty();
    if (lookup && lookup_first_) DLIO_RETURN_NOT_OK(ReadLookupRow(call, i));
    DLIO_RETURN_NOT_OK(ReadData(call, i, size, out));
    return lookup && !lookup_first_ ? ReadLookupRow(call, i) : Status::OK();
  }

  // The metadata file's entry, then sample i's data from the open dataset.
  Status ReadData(Hdf5Call& call, uint64_t i, uint64_t size, SampleBuffer* out) {
    uint64_t start = info_.layout == SampleLayout::kRows ? i : info_.offsets[i];
    if (!info_.meta_path.empty()) DLIO_RETURN_NOT_OK(Consult(call, i, size, &start));
    if (size == 0) return Status::OK();
    std::array<hsize_t, H5S_MAX_RANK> first{}, count = info_.dims;
    first[0] = start;
    count[0] = info_.layout == SampleLayout::kRows ? 1 : size;
    Hid file_space;
    hid_t fs = H5S_ALL, ms = H5S_ALL;
    if (info_.rank > 0) {
      file_space = Hid(H5Dget_space(open_.dset.get()));
      fs = file_space.get();
      ms = mem_space_.get();
      bool ok = file_space.valid() && H5Sselect_hyperslab(fs, H5S_SELECT_SET, first.data(), nullptr,
                                                          count.data(), nullptr) >= 0;
      if (info_.layout == SampleLayout::kConcatenated) {
        const hsize_t zero = 0;
        ok = ok &&
             H5Sselect_hyperslab(ms, H5S_SELECT_SET, &zero, nullptr, count.data(), nullptr) >= 0;
      }
      if (!ok) return call.Error(StatusCode::kInternal, info_.path + ": selecting sample");
      if (!guard_) guard_.emplace(open_.dset.get(), info_.rank, info_.dims, info_.file_size);
      DLIO_RETURN_NOT_OK(
          guard_->Check(open_.dset.get(), first.data(), count.data(), info_.path, info_.dataset));
    }
    if (H5Dread(open_.dset.get(), type_.get(), ms, fs, H5P_DEFAULT, out->data()) >= 0) {
      return Status::OK();
    }
    Status st = call.Error(StatusCode::kCorruption,
                           StrCat(info_.path, ": reading sample ", i, " from ", info_.dataset));
    return Status(st.code(), st.message() + ChunkWhere(open_.dset.get(), first.data(), info_.rank));
  }

  // Row (i mod its length) of the lookup dataset: `f['coords'][k]`. A table read after the
  // sample is checked here, at its first read, where h5py first reads its header.
  Status ReadLookupRow(Hdf5Call& call, uint64_t i) {
    if (!lookup_) {
      DLIO_ASSIGN_OR_RETURN(lookup_, OpenLookupTable(call, open_.file.get(), info_, lookup_name_));
      lookup_row_.assign(std::max<uint64_t>(lookup_->row_bytes, 1), 0);
    }
    DLIO_RETURN_NOT_OK(OpenDataset(call, open_.file, info_.path, lookup_->name, &open_.lookup));
    return ReadLookupTableRow(call, open_.lookup.get(), i, info_, &*lookup_, lookup_row_.data());
  }

  // Entry i of the metadata file's /offsets and /sizes (as the native reader's Consult, through
  // datasets opened as h5py opens them).
  Status Consult(Hdf5Call& call, uint64_t i, uint64_t size, uint64_t* start) {
    const std::string& meta = info_.meta_path;
    const hsize_t entry = i, one = 1;
    uint64_t values[2] = {0, 0};
    Hid scalar(H5Screate(H5S_SCALAR));
    const char* names[2] = {"/offsets", "/sizes"};
    Hid* dsets[2] = {&open_.meta_offsets, &open_.meta_sizes};
    for (int k = 0; k < 2; ++k) {  // m['offsets'][i], then m['sizes'][i]
      if (!dsets[k]->valid()) {
        DLIO_RETURN_NOT_OK(OpenDataset(call, open_.meta_file, meta, names[k], dsets[k]));
        DLIO_RETURN_NOT_OK(
            CheckOpened(call, dsets[k]->get(), meta + ": " + names[k], info_.meta_file_size));
        DLIO_RETURN_NOT_OK(CheckMetadataExtent(dsets[k]->get(), info_));
      }
      Hid space(H5Dget_space(dsets[k]->get()));
      if (!space.valid() || !scalar.valid() ||
          H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, &entry, nullptr, &one, nullptr) < 0 ||
          H5Dread(dsets[k]->get(), H5T_NATIVE_UINT64, scalar.get(), space.get(), H5P_DEFAULT,
                  &values[k]) < 0) {
        return call.Error(StatusCode::kCorruption, StrCat(meta, ": reading entry ", i));
      }
    }
    return CheckMetadataEntry(info_, i, size, values[0], values[1], start);
  }

  const H5pyReopen reopen_;
  const bool read_attributes_;
  const bool lookup_first_;  // the lookup row before the sample (reader.hdf5_lookup_order)
  Hid fapl_;
  Hid type_, mem_space_;
  const ReaderInfo info_;
  const std::string lookup_name_;      // reader.hdf5_lookup_dataset, "" = none
  std::optional<LookupTable> lookup_;  // lookup_name_'s, once checked
  std::vector<uint8_t> lookup_row_;    // one row of the lookup dataset
  OpenObjects open_;
  std::optional<ChunkGuard> guard_;
};

}  // namespace

Result<std::unique_ptr<FormatReader>> MakeH5pyReader(Hdf5Call& call, Storage* storage,
                                                     const FormatOptions& o, ReaderHandles h,
                                                     ReaderInfo info) {
  FileOptions fo;
  fo.direct = o.direct;
  DLIO_ASSIGN_OR_RETURN(Hid fapl, MakeDlioFapl(call, storage, fo));
  // A table read before each sample is checked at the open, where h5py reads its header (after
  // opening the sample dataset); one read after it at its first read.
  std::optional<LookupTable> lookup;
  const Hdf5Options& hdf5 = Hdf5Of(o.formats);
  const std::string& lookup_dataset = hdf5.lookup_dataset;
  const bool lookup_first = LookupBeforeSample(hdf5.lookup_order, false);
  if (!lookup_dataset.empty() && lookup_first) {
    DLIO_ASSIGN_OR_RETURN(lookup, OpenLookupTable(call, h.file.get(), info, lookup_dataset));
  }
  return std::unique_ptr<FormatReader>(std::make_unique<H5pyReader>(
      o, std::move(fapl), std::move(h), std::move(info), lookup_first, std::move(lookup)));
}

}  // namespace dlio::format_internal::hdf5
