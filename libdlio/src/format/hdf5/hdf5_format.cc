// hdf5: samples in an HDF5 file, written and read by libhdf5 through the "dlio" file driver
// (hdf5_vfd.h), so every request HDF5 makes is a traced File::ReadAt / WriteAt.
//
// Layouts our writer produces (docs/formats.md has the knobs):
//   rows          all samples of one size S: /records uint8 [n, S] (sample i = row i), /labels
//   concatenated  sizes differ: /data uint8 [sum of sizes], /offsets and /sizes uint64 [n], /labels
//   groups        dataset.hdf5_sample_groups: a group per sample of h5py-written datasets
//                 (hdf5_sample_groups.h; hdf5_group_writer.cc, hdf5_group_reader.cc)
// plus, with metadata_file, "<path>.meta.h5" holding /offsets and /sizes in 128-byte chunks that
// the reader consults for every sample (DFFN's small metadata requests).
//
// One job per file: hdf5_lib.cc (the lock, errors, ids), hdf5_vfd.cc (the driver),
// hdf5_policy.cc (filters, chunk shapes), hdf5_plists.cc (property lists), hdf5_writer.cc
// (serial writer), hdf5_shared_writer.cc (parallel HDF5 writer), hdf5_dataset.cc (finding and
// opening datasets of files we read), hdf5_checks.cc (what we check before libhdf5 reads one),
// hdf5_open.cc (opening a reader), hdf5_reader.cc (reading samples), hdf5_describe.cc
// (DescribeJson); hdf5_internal.h and hdf5_reader.h declare what they share.
#include "dlio/comm.h"
#include "format/formats.h"
#include "format/hdf5/hdf5_internal.h"
#include "format/hdf5/hdf5_sample_groups.h"
#include "format/io_util.h"
#include "io_models/model_readers.h"

namespace dlio::format_internal {

// h5py first: auto reads as h5py does (docs/io_models.md).
FormatCapabilities hdf5::Hdf5Capabilities() {
  FormatCapabilities c;
  c.collective_reads = true;
  c.per_sample_metadata_file = true;
  c.io_models = {IoModel::kH5py};
  c.lookup_rows = true;
  c.sample_groups = true;
  c.root_attributes = true;
  c.compression_ratio = true;
  c.datasets_per_record = true;
  return c;
}

namespace {

using hdf5::Filters;
using hdf5::Lower;
using hdf5::MetaPath;
using hdf5::OpenReader;
using hdf5::ParseFilters;
using hdf5::WriteFiles;
using hdf5::WriteMetadataFile;
using hdf5::WriteSharedFile;

// The reader of request model `model` (OpenReader).
template <IoModel model>
Result<std::unique_ptr<FormatReader>> OpenModel(Storage* storage, const std::string& path,
                                                const FormatOptions& options) {
  return OpenReader(model, storage, path, options);
}

class Hdf5Format final : public Format {
 public:
  Hdf5Format() {
    readers_.Add(IoModel::kNative, OpenModel<IoModel::kNative>)
        .Add(IoModel::kH5py, OpenModel<IoModel::kH5py>);
  }

  std::string name() const override { return "hdf5"; }
  // The Python DLIO writes and lists ".hdf5"; h5py programs often write ".h5".
  std::string extension() const override { return "hdf5"; }
  std::vector<std::string> read_extensions() const override { return {"hdf5", "h5"}; }
  bool variable_sample_sizes() const override { return true; }
  // Collective reads go through parallel HDF5 (one collective H5Dread per sample), not through the
  // storage's collective files, whose HDF5 metadata reads would differ per rank.
  FormatCapabilities capabilities() const override { return hdf5::Hdf5Capabilities(); }
  std::vector<IoModel> reader_models() const override { return readers_.models(); }

  std::vector<std::string> CompanionFiles(const std::string& path,
                                          const FormatOptions& options) const override {
    if (!Hdf5Of(options.formats).metadata_file) return {};
    return {MetaPath(path)};
  }

  Status Write(Storage* storage, const std::string& path, const FileSpec& spec,
               const FormatOptions& options) const override {
    if (!Hdf5Of(options.formats).sample_groups.empty()) {
      bool created = false;
      Status st = hdf5::WriteSampleGroups(storage, path, spec, options, &created);
      if (!st.ok() && created) RemoveQuietly(storage, path);
      return st;
    }
    std::vector<std::string> targets = {path};
    if (Hdf5Of(options.formats).metadata_file) targets.push_back(MetaPath(path));
    for (const std::string& p : targets) {
      DLIO_ASSIGN_OR_RETURN(bool exists, storage->Exists(p));
      if (exists) return Status::AlreadyExists(p + ": exists; refusing to overwrite it");
    }
    Hdf5Call call;
    DLIO_RETURN_NOT_OK(call.init_status());
    DLIO_ASSIGN_OR_RETURN(const Filters filters, ParseFilters(options));
    std::vector<std::string> created;
    Status st = WriteFiles(call, storage, path, spec, options, filters, &created);
    if (!st.ok()) {
      for (const std::string& p : created) RemoveQuietly(storage, p);
    }
    return st;
  }

  Result<std::unique_ptr<FormatReader>> Open(Storage* storage, const std::string& path,
                                             const FormatOptions& options) const override {
    return readers_.Open(capabilities(), storage, path, options);
  }

  // Parallel HDF5 (HDF5's MPI-IO driver) on storages whose paths are real files, for contiguous
  // unfiltered datasets only: filtered or chunked writes from many ranks need collective chunk
  // I/O, which is left to rank 0 writing alone.
  bool CanWriteShared(const Storage& storage, const FormatOptions& o,
                      const SharedWrite& shared) const override {
#ifdef H5_HAVE_PARALLEL
    const std::string c = Lower(o.compression);
    const Hdf5Options& hdf5 = Hdf5Of(o.formats);
    return shared.comm != nullptr && shared.comm->mpi_comm_handle() != nullptr &&
           shared.world > 1 && storage.capabilities().shared_write && (c.empty() || c == "none") &&
           !hdf5.shuffle_filter && !hdf5.enable_chunking && hdf5.lookup_rows == 0 &&
           hdf5.sample_groups.empty() && hdf5.root_attributes.empty();
#else
    (void)storage;
    (void)o;
    (void)shared;
    return false;
#endif
  }

  Status WriteShared(Storage* storage, const std::string& path, const FileSpec& spec,
                     const FormatOptions& options, const SharedWrite& shared) const override {
    Hdf5Call call;
    DLIO_RETURN_NOT_OK(call.init_status());
    std::vector<std::string> targets = {path};
    if (Hdf5Of(options.formats).metadata_file) targets.push_back(MetaPath(path));
    Status mine;
    if (shared.rank == 0) {
      for (const std::string& p : targets) {
        auto exists = storage->Exists(p);
        if (!exists.ok()) {
          mine = exists.status();
        } else if (*exists) {
          mine = Status::AlreadyExists(p + ": exists; refusing to overwrite it");
        }
        if (!mine.ok()) break;
      }
    }
    DLIO_RETURN_NOT_OK(AgreeAcrossRanks(shared.comm, mine, "creating shared file " + path));
    bool created = false;
    Status st = WriteSharedFile(call, storage, path, spec, options, shared, &created);
    if (st.ok() && Hdf5Of(options.formats).metadata_file) {
      mine = Status::OK();
      if (shared.rank == 0) {
        std::vector<std::string> made;
        mine = WriteMetadataFile(call, storage, path, spec, &made);
        if (!mine.ok()) {
          for (const std::string& p : made) RemoveQuietly(storage, p);
        }
      }
      st = AgreeAcrossRanks(shared.comm, mine, "writing metadata file " + MetaPath(path));
    }
    if (!st.ok() && shared.rank == 0 && created) RemoveQuietly(storage, path);
    return st;
  }

 private:
  io_models::ModelReaders readers_;
};

}  // namespace

Result<std::unique_ptr<Format>> MakeHdf5Format() {
  Hdf5Call call;
  DLIO_RETURN_NOT_OK(call.init_status());
  return std::unique_ptr<Format>(std::make_unique<Hdf5Format>());
}

}  // namespace dlio::format_internal
