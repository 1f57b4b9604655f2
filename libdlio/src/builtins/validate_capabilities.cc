// ValidateCapabilities: the rules between a config and the implementations it names, asked of the
// registered storage and format (StorageCapabilities, FormatCapabilities) instead of their names;
// ApplyFormatRecordShapes: the record size the named format declares.
#include <algorithm>
#include <string>

#include "core/element_type.h"
#include "dlio/config.h"
#include "dlio/registries.h"
#include "format/hdf5/hdf5_options.h"
#include "format/npy_options.h"
#include "format/sized_deflate.h"
#include "format/webdataset/webdataset_options.h"
#include "io_models/io_model_table.h"
#include "io_models/mmap_options.h"
#include "io_models/pyio_options.h"
#include "storage/mpiio_options.h"

namespace dlio {
namespace {

// What the registered storage named `name` declares with the config's storage options.
StorageCapabilities StorageDeclares(const WorkloadConfig& c, const std::string& name,
                                    const Registries& registries) {
  StorageOptions options;
  options.name = name;
  // slow's inner storage, mpiio's collective reads, tiered's source
  options.backends = c.storage.backends;
  auto capabilities = StorageCapabilitiesFor(options, registries.storages);
  return capabilities.ok() ? *capabilities : StorageCapabilities{};
}

// What the registered format named `name` declares (nothing when it is unknown or cannot be built).
FormatCapabilities FormatDeclares(const std::string& name, const Registries& registries) {
  auto factory = registries.formats.Get(name);
  if (!factory.ok()) return {};
  auto format = (*factory)();
  if (!format.ok() || *format == nullptr) return {};
  return (*format)->capabilities();
}

// The registered names of `registry` whose implementation passes `declares`, comma-separated.
template <typename Entries, typename Declares>
std::string NamesThat(const Entries& entries, Declares declares) {
  std::string names;
  for (const auto& entry : entries) {
    if (declares(entry.name)) names += (names.empty() ? "" : ", ") + entry.name;
  }
  return names.empty() ? "none" : names;
}

// What the registered pipeline named `name` declares (nothing when it is unknown).
PipelineCapabilities PipelineDeclares(const std::string& name, const Registries& registries) {
  auto entry = registries.pipelines.Find(name);
  return entry.ok() ? entry->capabilities : PipelineCapabilities{};
}

// The registered pipelines whose capabilities pass `declares`, as 'a' or 'a' or 'b'.
template <typename Declares>
std::string PipelinesThat(const Registries& registries, Declares declares) {
  std::string names;
  for (const auto& entry : registries.pipelines.List()) {
    if (declares(entry.capabilities)) names += (names.empty() ? "'" : " or '") + entry.name + "'";
  }
  return names.empty() ? "none" : names;
}

// The named implementation's own keys, checked by its registry entry's hook (unknown names are
// refused where they are built).
template <typename Registry>
Status ValidateNamed(const Registry& registry, const std::string& name, const WorkloadConfig& c) {
  auto entry = registry.Find(name);
  if (!entry.ok() || !entry->validate) return Status::OK();
  return entry->validate(c);
}

// reader.pipeline against reader.read_type and storage.mpiio_collective.
Status ValidatePipeline(const WorkloadConfig& c, const Registries& registries) {
  const ReaderConfig& r = c.reader;
  const PipelineCapabilities pipeline = PipelineDeclares(r.pipeline, registries);
  if (r.read_type == ReadType::kMemory && !pipeline.holds_dataset) {
    return Status::InvalidArgument(
        "reader.read_type 'memory' requires reader.pipeline " +
        PipelinesThat(registries, [](const PipelineCapabilities& p) { return p.holds_dataset; }) +
        ", got '" + r.pipeline + "'");
  }
  if (MpiioCollective(c.storage.backends) &&
      (!pipeline.reads_on_loop_thread || r.read_type == ReadType::kMemory)) {
    return Status::InvalidArgument(
        "storage.mpiio_collective: true needs reader.pipeline " +
        PipelinesThat(registries,
                      [](const PipelineCapabilities& p) { return p.reads_on_loop_thread; }) +
        " (got '" + r.pipeline + "', reader.read_type '" + std::string(EnumName(r.read_type)) +
        "'): a collective read must be issued by the training loop's own thread, in step with "
        "the other ranks");
  }
  return ValidateNamed(registries.pipelines, r.pipeline, c);
}

// The dataset keys that only some formats read or allow.
Status ValidateFormat(const WorkloadConfig& c, const Registries& registries) {
  const DatasetConfig& d = c.dataset;
  const FormatCapabilities format = FormatDeclares(d.format, registries);
  const Hdf5Options& hdf5 = Hdf5Of(d.formats);  // the hdf5 format's own keys
  if (format.one_sample_per_file && d.num_samples_per_file != 1) {
    return Status::InvalidArgument("dataset.num_samples_per_file must be 1 for dataset.format '" +
                                   d.format + "' (it holds one sample per file), got " +
                                   std::to_string(d.num_samples_per_file));
  }
  // Keys only the formats of a capability read: refused, naming those formats, with any other.
  const struct {
    bool set;
    bool FormatCapabilities::*capability;
    const char* key;
  } only_some[] = {
      {hdf5.lookup_rows > 0, &FormatCapabilities::lookup_rows, "dataset.hdf5_lookup_rows"},
      {!hdf5.sample_groups.empty(), &FormatCapabilities::sample_groups,
       "dataset.hdf5_sample_groups"},
      {!hdf5.root_attributes.empty(), &FormatCapabilities::root_attributes,
       "dataset.hdf5_root_attributes"},
      {hdf5.h5py_read_attributes, &FormatCapabilities::root_attributes,
       "reader.h5py_read_attributes"},
      {hdf5.lookup_order != LookupOrder::kAuto, &FormatCapabilities::lookup_rows,
       "reader.hdf5_lookup_order"},
      {format_internal::CompressionRatioSet(d.compression_ratio, d.compression_ratio_stdev),
       &FormatCapabilities::compression_ratio, "dataset.compression_ratio"},
      {d.formats.Value<WebdatasetOptions>().members != WebdatasetOptions{}.members,
       &FormatCapabilities::shard_streams, "dataset.webdataset_members"},
      {!NpyOf(d.formats).npz_members.empty(), &FormatCapabilities::member_loads,
       "reader.npz_members"},
  };
  for (const auto& k : only_some) {
    if (!k.set || format.*k.capability) continue;
    const std::string able = NamesThat(registries.formats.List(), [&](const std::string& name) {
      return FormatDeclares(name, registries).*k.capability;
    });
    return Status::InvalidArgument(std::string(k.key) + " applies to dataset.format '" + able +
                                   "' only, got '" + d.format + "'");
  }
  if (format.datasets_per_record && hdf5.num_dsets > 1) {
    // DLIO's generator splits record_dims[0] across the datasets (and fails without it); the
    // metadata file indexes whole samples of one dataset.
    if (d.record_dims.empty()) {
      return Status::InvalidArgument(
          "dataset.hdf5.num_dset_per_record > 1 needs dataset.record_dims (DLIO splits "
          "record_dims[0] across /records_0..N-1)");
    }
    if (hdf5.metadata_file) {
      return Status::InvalidArgument(
          "dataset.hdf5.num_dset_per_record > 1 cannot be combined with dataset.metadata_file");
    }
  }
  return ValidateNamed(registries.formats, d.format, c);
}

// storage.mpiio_collective: a storage that reads collectively and a format whose reads of a
// sample are the same calls on every rank (WorkloadConfig::Validate checks the rest).
Status ValidateCollectiveReads(const WorkloadConfig& c, const Registries& registries) {
  if (!MpiioCollective(c.storage.backends)) return Status::OK();
  auto refuse = [](const std::string& why) {
    return Status::InvalidArgument("storage.mpiio_collective: true " + why);
  };
  if (!StorageDeclares(c, c.storage.storage_type, registries).collective_reads) {
    const std::string able = NamesThat(registries.storages.List(), [&](const std::string& name) {
      return StorageDeclares(c, name, registries).collective_reads;
    });
    return refuse("needs a storage.storage_type that reads collectively (" + able + "), got '" +
                  c.storage.storage_type + "'");
  }
  const FormatCapabilities format = FormatDeclares(c.dataset.format, registries);
  if (!format.collective_reads) {
    const std::string able = NamesThat(registries.formats.List(), [&](const std::string& name) {
      return FormatDeclares(name, registries).collective_reads;
    });
    return refuse(
        "supports the dataset.format values whose reads per sample depend only on the "
        "sample size (" +
        able + "), got '" + c.dataset.format + "'");
  }
  if (format.per_sample_metadata_file && Hdf5Of(c.dataset.formats).metadata_file) {
    return refuse("with dataset.format " + c.dataset.format +
                  " needs dataset.metadata_file: false (its per-sample lookups would be "
                  "independent reads of a collectively opened file)");
  }
  return Status::OK();
}

// reader.io_model: native and auto always; pytorch (worker processes) with any storage that does
// not need MPI; any other model only with a format that declares it, and mmap only on a storage
// that maps files.
Status ValidateIoModel(const WorkloadConfig& c, const Registries& registries) {
  const IoModel model = c.reader.io_model;
  const io_models::IoModelEntry& entry = io_models::IoModelEntryFor(model);
  const std::string name(EnumName(model));
  const bool model_workers = entry.loader == Loader::kPytorchWorkers;
  if (model_workers && c.reader.loader == ReaderLoader::kThreads) {
    return Status::InvalidArgument(
        "reader.io_model 'pytorch' reads with DataLoader worker processes, but reader.loader is "
        "'threads' (use reader.io_model auto for the format's default model on threads)");
  }
  if (model_workers || c.reader.loader == ReaderLoader::kPytorchWorkers) {
    // Worker processes (the pytorch pipeline) must not call MPI: no MPI-IO storage.
    if (StorageDeclares(c, c.storage.storage_type, registries).needs_mpi) {
      const char* who =
          model_workers ? "reader.io_model 'pytorch'" : "reader.loader 'pytorch_workers'";
      return Status::InvalidArgument(
          who,
          " forks DataLoader worker processes, which must not call MPI; storage.storage_type '",
          c.storage.storage_type,
          "' reads through MPI (use a storage without MPI, such as posix, or reader.io_model "
          "native)");
    }
    if (model_workers) return Status::OK();
  }
  if (entry.request == IoModel::kAuto || entry.request == IoModel::kNative) return Status::OK();
  auto declares = [&](const std::string& format) {
    const auto models = FormatDeclares(format, registries).io_models;
    return std::find(models.begin(), models.end(), model) != models.end();
  };
  if (declares(c.dataset.format)) {
    if (model != IoModel::kMmap || StorageDeclares(c, c.storage.storage_type, registries).map_files)
      return Status::OK();
    const std::string able = NamesThat(registries.storages.List(), [&](const std::string& s) {
      return StorageDeclares(c, s, registries).map_files;
    });
    return Status::InvalidArgument(
        "reader.io_model 'mmap' needs a storage.storage_type that maps "
        "files (" +
        able + "), got '" + c.storage.storage_type + "'");
  }
  const std::string able = NamesThat(registries.formats.List(), declares);
  return Status::InvalidArgument(
      "reader.io_model '" + name + "' does not apply to dataset.format '" + c.dataset.format +
      "' (formats with that model: " + able + "; every format reads with auto or native)");
}

// reader.hdf5_lookup_dataset: read by the h5py model only, and never collectively (its reads of a
// small dataset are independent per rank); reader.hdf5_lookup_order orders a table read.
Status ValidateLookupDataset(const WorkloadConfig& c, const Registries& registries) {
  const Hdf5Options& hdf5 = Hdf5Of(c.dataset.formats);
  const std::string& lookup = hdf5.lookup_dataset;
  if (hdf5.lookup_order != LookupOrder::kAuto && lookup.empty() && hdf5.sample_groups.empty()) {
    return Status::InvalidArgument(
        "reader.hdf5_lookup_order '", EnumName(hdf5.lookup_order),
        "' orders the read of a lookup table's row beside its sample, but none is read: set "
        "reader.hdf5_lookup_dataset (or dataset.hdf5_sample_groups, whose files may hold one)");
  }
  if (lookup.empty()) return Status::OK();
  const IoModel model =
      ResolveIoModel(c.reader.io_model, FormatDeclares(c.dataset.format, registries));
  if (model != IoModel::kH5py) {
    return Status::InvalidArgument(
        "reader.hdf5_lookup_dataset '" + lookup +
        "' is read by reader.io_model h5py only (dataset.format hdf5), but dataset.format '" +
        c.dataset.format + "' reads with '" + std::string(EnumName(model)) + "'");
  }
  if (MpiioCollective(c.storage.backends)) {
    return Status::InvalidArgument(
        "reader.hdf5_lookup_dataset needs storage.mpiio_collective: false (its lookups would be "
        "independent reads of a collectively opened file)");
  }
  return Status::OK();
}

// reader.mmap_*: read by the mmap model of a format whose mmap reader reads a head (raw).
Status ValidateMmapKeys(const WorkloadConfig& c, const Registries& registries) {
  const char* set = MmapKeySet(c.dataset.formats);  // io_models/mmap_options.h
  if (set == nullptr) return Status::OK();
  const FormatCapabilities format = FormatDeclares(c.dataset.format, registries);
  const IoModel model = ResolveIoModel(c.reader.io_model, format);
  if (model != IoModel::kMmap) {
    return Status::InvalidArgument("reader.", set,
                                   " is read by reader.io_model mmap only, but dataset.format '",
                                   c.dataset.format, "' reads with '", EnumName(model), "'");
  }
  if (!format.mmap_head) {
    const std::string able = NamesThat(registries.formats.List(), [&](const std::string& name) {
      return FormatDeclares(name, registries).mmap_head;
    });
    return Status::InvalidArgument("reader.", set, " applies to dataset.format '", able,
                                   "' only (whose mmap reader reads a head first), got '",
                                   c.dataset.format, "'");
  }
  return Status::OK();
}

// io_model pyio over files of several samples: records read with f.seek and one call, which the
// format's pyio reader must declare (FormatCapabilities::pyio_records); the whole-file keys and
// read1 are refused by name.
Status ValidatePyioRecords(const WorkloadConfig& c, const Registries& registries,
                           const PyioOptions* pyio) {
  if (!FormatDeclares(c.dataset.format, registries).pyio_records) {
    const std::string able = NamesThat(registries.formats.List(), [&](const std::string& name) {
      return FormatDeclares(name, registries).pyio_records;
    });
    return Status::InvalidArgument(
        "reader.io_model pyio reads a ", c.dataset.format,
        " file whole as one sample: dataset.num_samples_per_file must be 1, got ",
        c.dataset.num_samples_per_file, " (files of records: dataset.format '", able, "')");
  }
  if (pyio == nullptr) return Status::OK();
  const char* whole_file_key = PyioWholeFileKey(*pyio);
  if (whole_file_key != nullptr) {
    return Status::InvalidArgument(
        "reader.", whole_file_key,
        " describes a whole-file load, but reader.io_model pyio reads "
        "each file of dataset.num_samples_per_file ",
        c.dataset.num_samples_per_file,
        " records with f.seek and one call of the record's size (reader.pyio_call)");
  }
  if (pyio->call == PyioCall::kRead1) {
    return Status::InvalidArgument(
        "reader.pyio_call read1 is for chunked loops: a record is read with read or readinto");
  }
  return Status::OK();
}

// reader.pyio_*: read by the pyio model only, which reads each file whole as its one sample (or,
// where the format declares it, a file of records).
Status ValidatePyio(const WorkloadConfig& c, const Registries& registries) {
  const IoModel model =
      ResolveIoModel(c.reader.io_model, FormatDeclares(c.dataset.format, registries));
  const char* set = PyioKeySet(c.dataset.formats);  // io_models/pyio_options.h
  if (model != IoModel::kPyio) {
    if (set == nullptr) return Status::OK();
    return Status::InvalidArgument("reader.", set,
                                   " is read by reader.io_model pyio only, but dataset.format '",
                                   c.dataset.format, "' reads with '", EnumName(model), "'");
  }
  const auto* pyio = c.dataset.formats.Find<PyioOptions>();
  if (c.dataset.num_samples_per_file != 1) return ValidatePyioRecords(c, registries, pyio);
  if (pyio != nullptr && pyio->call == PyioCall::kRead1 && pyio->read_size == 0) {
    return Status::InvalidArgument(
        "reader.pyio_call read1 needs reader.pyio_read_size > 0 (each call's size: 8192 for a "
        "text file's chunks), got 0");
  }
  if (pyio != nullptr && pyio->tail_bytes > 0 && pyio->call == PyioCall::kRead1) {
    return Status::InvalidArgument(
        "reader.pyio_tail_bytes follows calls that know where the tail begins: it needs "
        "reader.pyio_call read or readinto, got read1");
  }
  if (pyio != nullptr && pyio->tail_read_size > 0 && pyio->tail_bytes == 0) {
    return Status::InvalidArgument(
        "reader.pyio_tail_read_size needs reader.pyio_tail_bytes > 0 (the tail its calls read), "
        "got pyio_tail_read_size ",
        pyio->tail_read_size, " and pyio_tail_bytes 0");
  }
  if (pyio != nullptr && pyio->crop_bytes > 0 && (pyio->read_size > 0 || pyio->tail_bytes > 0)) {
    return Status::InvalidArgument(
        "reader.pyio_crop_bytes is one call after the head: it needs reader.pyio_read_size 0 and "
        "pyio_tail_bytes 0, got pyio_read_size ",
        pyio->read_size, " and pyio_tail_bytes ", pyio->tail_bytes);
  }
  if (pyio != nullptr && pyio->crop_bytes > 0 && pyio->end_reads > 0) {
    return Status::InvalidArgument(
        "reader.pyio_end_reads look for the end of a file read whole: reader.pyio_crop_bytes ",
        pyio->crop_bytes, " reads a crop, which ends before it");
  }
  if (pyio != nullptr && pyio->crop_bytes > 0 && pyio->call == PyioCall::kRead1) {
    return Status::InvalidArgument(
        "reader.pyio_crop_bytes is read with pyio_call read or readinto, got read1");
  }
  return Status::OK();
}

}  // namespace

Status ValidateCapabilities(const WorkloadConfig& config, const Registries& registries) {
  DLIO_RETURN_NOT_OK(ValidateNamed(registries.storages, config.storage.storage_type, config));
  DLIO_RETURN_NOT_OK(ValidateFormat(config, registries));
  DLIO_RETURN_NOT_OK(ValidatePipeline(config, registries));
  DLIO_RETURN_NOT_OK(ValidateCollectiveReads(config, registries));
  DLIO_RETURN_NOT_OK(ValidateIoModel(config, registries));
  DLIO_RETURN_NOT_OK(ValidateLookupDataset(config, registries));
  DLIO_RETURN_NOT_OK(ValidateMmapKeys(config, registries));
  return ValidatePyio(config, registries);
}

Status ApplyFormatRecordShapes(WorkloadConfig* config, const Registries& registries) {
  DatasetConfig& d = config->dataset;
  if (d.record_dims.empty() || !FormatDeclares(d.format, registries).uint8_records) {
    return Status::OK();
  }
  DLIO_ASSIGN_OR_RETURN(d.record_length_bytes,
                        RecordShapeBytes(d.record_dims, "uint8", "dataset.record_dims",
                                         "dataset.record_element_type"));
  return Status::OK();
}

}  // namespace dlio
