// Format pt's sample object, and what `dlio-run inspect` says of a pt file (a torch.save file per
// sample) whichever reader opened it: its storages, data.pkl's size, and that size as the writer
// key that lays a file out so (fit reads "writer_keys": docs/profiling.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "format/torch/torch_save_file.h"

namespace dlio::format_internal {

// What dlio's pt writer saves for a sample of `bytes` bytes: OrderedDict([("x", tensor)]), the
// tensor uint8 and 1-D, its pickle not padded.
torch_save::TorchStateDict PtSampleDict(uint64_t bytes);

// `io_model`: the request model's name, "" for the native reader. The writer key
// dataset.pt_pickle_bytes is given only when dlio's writer can pad its own sample's pickle (for
// the storages' bytes) to data.pkl's size: a smaller data.pkl (a bare tensor's) is not written.
std::string DescribePt(const std::string& path, const std::string& io_model, uint64_t file_size,
                       uint64_t pickle_bytes, const std::vector<uint64_t>& storages);

}  // namespace dlio::format_internal
