// The npy and npz formats' config keys (dataset.sample_layout, docs/formats.md;
// reader.npz_members, docs/io_models.md "numpy"): declared here, beside the formats, and parsed
// straight into their NpyOptions in the config's DatasetConfig::formats. The config module compiles
// this file into its key table (config/sources.cmake), as it parses a config before any registry
// exists; the formats' registry entries name the keys (format/register.cc).
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

void AddNpzReaderKeys(std::vector<KeySpec>* t) {
  t->push_back(String("reader.npz_members", DLIO_FORMAT_FIELD(NpyOptions, std::string, npz_members),
                      "npz under io_model numpy: the members each np.load reads, in order, "
                      "comma-separated (\"x,y\" is `z = np.load(path); z['x']; z['y']`; a name "
                      "with or without .npy); the sample's array is its member's (x, else the "
                      "first .npy), which the list must name; empty = the sample's member only, "
                      "as the Python DLIO's np.load(path)['x']"));
}

namespace {

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

// reader.npz_members: names that are not empty, read by a model that loads npz files as numpy
// does (numpy, and auto and pytorch, which pick it).
Status ValidateNpzMembers(const WorkloadConfig& c) {
  const NpyOptions& npy = NpyOf(c.dataset.formats);
  const std::vector<std::string> names = NpzMemberNames(npy);
  if (names.empty()) return Status::OK();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) {
      return Status::InvalidArgument("reader.npz_members: name ", i + 1, " of \"", npy.npz_members,
                                     "\" is empty");
    }
  }
  const IoModel m = c.reader.io_model;
  if (m != IoModel::kAuto && m != IoModel::kNumpy && m != IoModel::kPytorch) {
    return Status::InvalidArgument("reader.npz_members applies to reader.io_model numpy (npz's ",
                                   "default under auto); reader.io_model is ", EnumName(m));
  }
  return Status::OK();
}

}  // namespace

Status ValidateNpzConfig(const WorkloadConfig& c) {
  DLIO_RETURN_NOT_OK(ValidateNpzCompressionRatio(c));
  return ValidateNpzMembers(c);
}

}  // namespace dlio::config_internal
