// Format pt's own options (dataset.pt_pickle_bytes; docs/formats.md, pt), declared as a config key
// by format/torch/pt_keys.cc and parsed straight into this type, which the config holds in
// DatasetConfig::formats and the format reads from FormatOptions::formats.
#pragma once

#include <cstdint>

namespace dlio {

struct PtOptions {
  // data.pkl's size in each file: the sample's own pickle (an OrderedDict holding tensor "x")
  // padded after its STOP opcode to this many bytes, as a richer object pickles ({'x': tensor,
  // 'label': 3}); 0: the sample's own pickle.
  uint64_t pickle_bytes = 0;
};

}  // namespace dlio
