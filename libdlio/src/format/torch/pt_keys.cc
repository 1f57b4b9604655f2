// Format pt's config key (dataset.pt_pickle_bytes; docs/formats.md, pt): declared here, beside the
// format, and parsed straight into its PtOptions in the config's DatasetConfig::formats. The
// config module compiles this file into its key table (config/sources.cmake); the format's
// registry entry names the key (format/register.cc).
#include "config/key_builders.h"
#include "format/torch/pt_options.h"

namespace dlio::config_internal {

void AddPtKeys(std::vector<KeySpec>* t) {
  t->push_back(Uint("dataset.pt_pickle_bytes", DLIO_FORMAT_FIELD(PtOptions, uint64_t, pickle_bytes),
                    URange{0, 1u << 30},
                    "pt: data.pkl's size in each torch.save file, the sample's pickle padded "
                    "after its STOP opcode (what a dict with a label or other values pickles "
                    "to); 0 = the sample's own pickle. Smaller than the own pickle is refused"));
}

}  // namespace dlio::config_internal
