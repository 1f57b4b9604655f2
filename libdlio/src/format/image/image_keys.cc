// The image formats' config keys (jpeg and png: dataset.image_quality, dataset.image_channels;
// docs/formats.md): declared here, beside the formats, and parsed straight into their
// ImageOptions in the config's DatasetConfig::formats. The config module compiles this file into
// its key table (config/sources.cmake), as it parses a config before any registry exists; the
// formats' registry entries name the keys (format/register.cc).
#include "config/key_builders.h"
#include "format/image/image_options.h"

#define IMAGE_FIELD(T, member) DLIO_FORMAT_FIELD(ImageOptions, T, member)

namespace dlio::config_internal {

void AddImageKeys(std::vector<KeySpec>* t) {
  t->push_back(Int32("dataset.image_quality", IMAGE_FIELD(int, quality), {1, 100},
                     "jpeg: encoder quality 1-100"));
  t->push_back(Uint("dataset.image_channels", IMAGE_FIELD(uint64_t, channels), {1, 3},
                    "jpeg/png (dlio only): channels of generated images, 1 grayscale (DLIO's "
                    "generators) or 3 RGB; a side of floor(sqrt(record_length_bytes / channels)) "
                    "pixels, so an RGB image holds about record_length_bytes pixel bytes (dlio-run "
                    "fit sets it from the traced images)"));
}

Status ValidateImageKeys(const WorkloadConfig& c) {
  const ImageOptions* image = c.dataset.formats.Find<ImageOptions>();
  if (image != nullptr && image->channels == 2) {
    return Status::InvalidArgument(
        "dataset.image_channels: 2 is not 1 (grayscale, as DLIO generates) or 3 (RGB)");
  }
  return Status::OK();
}

}  // namespace dlio::config_internal

#undef IMAGE_FIELD
