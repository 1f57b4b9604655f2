// The pytorch pipeline's config key (reader.persistent_workers; docs/io_models.md): declared
// here, beside the pipeline, and parsed straight into its PytorchLoaderOptions in the config's
// ReaderConfig::pipelines. The config module compiles this file into its key table
// (config/sources.cmake), as it parses a config before any registry exists; the key keeps its
// place among the reader's model keys (AddReaderModelKeys calls this).
#include "config/key_builders.h"
#include "pipeline/pytorch_options.h"

namespace dlio::config_internal {

void AddPytorchKeys(std::vector<KeySpec>* t) {
  t->push_back(
      Bool("reader.persistent_workers",
           DLIO_PIPELINE_FIELD(PytorchLoaderOptions, bool, persistent_workers),
           "pytorch io_model: keep the DataLoader worker processes across epochs (as DLIO's "
           "PyTorch loader asks); false forks them at every epoch and ends them when it is read"));
}

}  // namespace dlio::config_internal
