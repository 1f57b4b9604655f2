// The model checkpointer's own options (checkpoint.model_files), held in
// CheckpointOptions::sections, so neither dlio/checkpointer.h, dlio/config.h nor the runner names
// them. Its key is declared by checkpoint/model_checkpoint_keys.cc and parsed straight into this
// type in the config's CheckpointConfig::checkpointers. Header-only and free of other headers of
// dlio, as the config module (a leaf) compiles the key file.
#pragma once

#include <cstdint>

namespace dlio {

struct ModelCheckpointOptions {
  // checkpoint.model_files: the files a rank's share of model_size_bytes is split into (>= 1).
  uint64_t model_files = 1;
};

}  // namespace dlio
