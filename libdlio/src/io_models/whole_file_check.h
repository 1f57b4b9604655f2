// What a reader that loads a whole file as its one sample (the pil and pyio models) checks of the
// bytes it read: the format's name for errors, and whether the file is one of that format;
// Corruption naming the file and the offset otherwise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "dlio/status.h"

namespace dlio::io_models {

struct WholeFileCheck {
  std::string format_name;
  Status (*check)(const std::string& path, const uint8_t* data, size_t size) = nullptr;
};

}  // namespace dlio::io_models
