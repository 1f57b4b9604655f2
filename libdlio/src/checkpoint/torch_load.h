// Reading back what torch.save wrote: the zip's central directory and data.pkl's state dict,
// for `dlio-run fit` (a traced checkpoint that still exists gives its exact tensors). Bounded:
// the central directory and data.pkl are read only when under kMaxTorchLoadBytes, the pickle is
// run by a small machine that knows the opcodes torch.save's protocol-2 pickler emits for a state
// dict (nothing is imported or called), and bad input of any kind is an error value.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "dlio/status.h"
#include "format/torch/torch_save_file.h"

namespace dlio::checkpoint_internal {

// The little-endian unsigned integer of `bytes` bytes at s[at] (zip records, pickle operands).
inline uint64_t Le(const std::string& s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(s[at + i]);
  return v;
}

inline constexpr uint64_t kMaxTorchLoadBytes = uint64_t{64} << 20;

// Exactly `n` bytes at `offset` of the file, or an error.
using TorchByteReader = std::function<Result<std::string>(uint64_t offset, uint64_t n)>;

struct TorchSaveContents {
  std::string archive_name;  // the records' folder ("model-8" of "model-8/data.pkl")
  torch_save::TorchStateDict state_dict;
  std::string modules;  // checkpoint.torch_modules that gives its _metadata ("", "none", list)
};

// The state dict in the torch.save file `what` of `file_size` bytes. Corruption naming `what` and
// the offset (in the file, or in data.pkl) for input that is not a torch.save zip;
// Unimplemented naming what is not modelled (an object that is not a flat state dict of
// contiguous tensors with their own storages, zip64 records, a compressed record).
Result<TorchSaveContents> ReadTorchSave(const std::string& what, uint64_t file_size,
                                        const TorchByteReader& read);

// Parses data.pkl (exposed for tests). Errors name `what` and the pickle offset.
Result<TorchSaveContents> ParseTorchPickle(const std::string& what, const std::string& pickle);

}  // namespace dlio::checkpoint_internal
