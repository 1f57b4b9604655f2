// The mpiio storage's own options (storage.mpiio_collective; docs/scaling.md), declared as a
// config key by storage/mpiio_keys.cc and parsed straight into this type, which the config holds
// in StorageConfig::backends and the factory reads from StorageOptions::backends.
#pragma once

#include "dlio/option_sections.h"

namespace dlio {

struct MpiioOptions {
  // storage.mpiio_collective: collective reads (MPI_File_read_at_all) of the data files (those
  // under StorageOptions::data_dirs, every file opened for reading when that list is empty).
  bool collective = false;
};

// True when `sections` asks for collective reads (storage.mpiio_collective); false when the
// mpiio section was never set.
inline bool MpiioCollective(const OptionSections& sections) {
  const MpiioOptions* set = sections.Find<MpiioOptions>();
  return set != nullptr && set->collective;
}

}  // namespace dlio
