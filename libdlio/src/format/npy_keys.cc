// The npy and npz formats' config key (dataset.sample_layout; docs/formats.md): declared here,
// beside the formats, and parsed straight into their NpyOptions in the config's
// DatasetConfig::formats. The config module compiles this file into its key table
// (config/sources.cmake), as it parses a config before any registry exists; the formats'
// registry entries name the key (format/register.cc).
#include "config/key_builders.h"
#include "format/npy_options.h"

namespace dlio::config_internal {

void AddNpyKeys(std::vector<KeySpec>* t) {
  t->push_back(Enum("dataset.sample_layout",
                    DLIO_FORMAT_ENUM_FIELD(NpyOptions, SampleLayout, sample_layout),
                    "npy/npz: the axis of x that indexes samples in generated files, and for "
                    "reading when neither the labels' length nor num_samples_per_file tells: "
                    "first_axis (x[i], dlio's layout) or last_axis (x[..., i], the Python DLIO's "
                    "(dim, dim, num_samples))"));
}

}  // namespace dlio::config_internal
