// The image formats' own options (jpeg and png: dataset.image_quality, dataset.image_channels;
// docs/formats.md), declared as config keys by format/image/image_keys.cc and parsed straight
// into this type, which the config holds in DatasetConfig::formats and the formats read from
// FormatOptions::formats.
#pragma once

#include <cstdint>

namespace dlio {

struct ImageOptions {
  int quality = 90;       // jpeg: encoder quality 1-100 (dataset.image_quality)
  uint64_t channels = 1;  // written images: 1 grayscale (DLIO's), 3 RGB (dataset.image_channels)
};

}  // namespace dlio
