// The model checkpointer's config key (checkpoint.model_files): declared here, beside the
// checkpointer, and parsed straight into its ModelCheckpointOptions in the config's
// CheckpointConfig::checkpointers. The config module compiles this file into its key table
// (config/sources.cmake); the key keeps its place in the checkpoint section (config_table.cc
// calls this); the checkpointer's registry entry names it (checkpoint/register.cc).
#include "checkpoint/model_checkpoint_options.h"
#include "config/key_builders.h"

namespace dlio::config_internal {

void AddModelCheckpointKeys(std::vector<KeySpec>* t) {
  t->push_back(Uint(
      "checkpoint.model_files",
      DLIO_SECTION_FIELD(checkpoint.checkpointers, ModelCheckpointOptions, uint64_t, model_files),
      {1, 1 << 16}, "type 'model': files each writing rank splits its bytes into (L2HMC: 4)"));
}

}  // namespace dlio::config_internal
