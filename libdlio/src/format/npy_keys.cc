// The npy and npz formats' config key (dataset.sample_layout; docs/formats.md): declared here,
// beside the formats, and parsed straight into their NpyOptions in the config's
// DatasetConfig::formats. The config module compiles this file into its key table
// (config/sources.cmake), as it parses a config before any registry exists; the formats'
// registry entries name the key (format/register.cc).
#include "config/key_builders.h"
#include "format/npy_options.h"
#include "format/sized_deflate.h"

namespace dlio::config_internal {

void AddNpyKeys(std::vector<KeySpec>* t) {
  t->push_back(Enum("dataset.sample_layout",
                    DLIO_FORMAT_ENUM_FIELD(NpyOptions, SampleLayout, sample_layout),
                    "npy/npz: the axis of x that indexes samples in generated files, and for "
                    "reading when neither the labels' length nor num_samples_per_file tells: "
                    "first_axis (x[i], dlio's layout) or last_axis (x[..., i], the Python DLIO's "
                    "(dim, dim, num_samples))"));
}

// dataset.compression_ratio (or its stdev) away from 1 (0) under npz: the members are written as
// deflate streams of chosen lengths, so the archive's members must be deflated.
Status ValidateNpzCompressionRatio(const WorkloadConfig& c) {
  if (!format_internal::CompressionRatioSet(c.dataset.compression_ratio,
                                            c.dataset.compression_ratio_stdev)) {
    return Status::OK();
  }
  const std::string& codec = c.dataset.compression;
  if (!format_internal::IsDeflateCodec(codec)) {
    return Status::InvalidArgument("dataset.compression_ratio needs dataset.compression gzip (is ",
                                   codec, "): npz members are deflated to the chosen length");
  }
  return Status::OK();
}

}  // namespace dlio::config_internal
