// The mpiio storage's config key (storage.mpiio_collective; docs/scaling.md) and its rules among
// the other keys: declared here, beside the storage, and parsed straight into its MpiioOptions in
// the config's StorageConfig::backends. The config module compiles this file into its key table
// (config/sources.cmake), as it parses a config before any registry exists.
#include "config/key_builders.h"
#include "storage/mpiio_options.h"

namespace dlio::config_internal {

void AddMpiioKeys(std::vector<KeySpec>* t) {
  t->push_back(
      Bool("storage.mpiio_collective", DLIO_BACKEND_FIELD(MpiioOptions, bool, collective),
           "mpiio: collective reads (MPI_File_read_at_all) of the data files, opened on "
           "all ranks; needs one shared file, reader.pipeline sync with read_threads <= 1, "
           "drop_last (docs/scaling.md)"));
}

// MPI collective reads (storage.mpiio_collective) need every rank to open the same files in the
// same order and to issue the same number of reads of the same sizes on them, from one thread;
// otherwise a rank waits forever in a collective the others never join. These are the
// configurations where the runner guarantees that (docs/scaling.md explains each rule). What the
// storage, format and pipeline must be able to do is asked of them (ValidateCapabilities,
// registries.h).
Status ValidateMpiioKeys(const WorkloadConfig& c) {
  if (!MpiioCollective(c.storage.backends)) return Status::OK();
  auto refuse = [](const std::string& why) {
    return Status::InvalidArgument("storage.mpiio_collective: true " + why);
  };
  if (c.train.accelerators_per_process > 1) {
    return refuse(StrCat("needs train.accelerators_per_process = 1, got ",
                         c.train.accelerators_per_process,
                         ": a collective open over MPI_COMM_WORLD cannot include the accelerator "
                         "threads of a process"));
  }
  if (c.reader.read_threads > 1) {
    return refuse(
        StrCat("needs reader.read_threads <= 1, got ", c.reader.read_threads,
               ": MPI collectives on one file cannot be issued from several reader threads"));
  }
  if (!c.reader.drop_last) {
    return refuse(
        "needs reader.drop_last: true, or the ranks' last batches would differ in size "
        "and so in the number of collective reads");
  }
  if (c.dataset.num_files_train != 1 || (c.workflow.evaluation && c.dataset.num_files_eval != 1)) {
    return refuse(
        StrCat("needs one shared file per split (dataset.num_files_train = 1, and "
               "dataset.num_files_eval = 1 with evaluation), got ",
               c.dataset.num_files_train,
               " train files: every rank must open "
               "the same file together"));
  }
  if (c.dataset.record_length_bytes_stdev != 0 || c.dataset.record_length_bytes_sizes.size() > 1) {
    return refuse(
        "needs dataset.record_length_bytes_stdev = 0 and at most one "
        "dataset.record_length_bytes_sizes: ranks must read samples of one size to make the same "
        "number of read calls");
  }
  if (c.dataset.compression != "none" && !c.dataset.compression.empty()) {
    return refuse("needs dataset.compression 'none' (compressed samples differ in stored size)");
  }
  return Status::OK();
}

// Rules between the keys of one section (or two close ones) that the table cannot express.

}  // namespace dlio::config_internal
