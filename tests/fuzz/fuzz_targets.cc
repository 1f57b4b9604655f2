#include "fuzz_targets.h"

namespace dlio::fuzz {

const std::vector<FuzzTarget>& FuzzTargets() {
  static const std::vector<FuzzTarget> targets = {
      {"npy", "npy", {}},
      {"npz", "npz", {}},
      {"csv", "csv", {}},
      {"indexed_binary", "indexed_binary", {".off.idx", ".sz.idx"}},
      {"tfrecord", "tfrecord", {".idx"}},
      {"jpeg", "jpeg", {}},
      {"png", "png", {}},
      {"hdf5", "hdf5", {".meta.h5"}},
      {"parquet", "parquet", {}},
      {"webdataset", "webdataset", {}},
      {"sqlite", "sqlite", {}},
      {"zip", "zip", {}},
      {"pt", "pt", {}},
      {"config", "", {}},
      {"trace", "", {}},
      {"cache_wire", "", {}},
  };
  return targets;
}

const FuzzTarget* FindFuzzTarget(std::string_view name) {
  for (const FuzzTarget& t : FuzzTargets()) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::vector<std::string_view> SplitParts(std::string_view input) {
  std::vector<std::string_view> parts;
  for (;;) {
    const size_t at = input.find(kPartSeparator);
    if (at == std::string_view::npos) break;
    parts.push_back(input.substr(0, at));
    input.remove_prefix(at + kPartSeparator.size());
  }
  parts.push_back(input);
  return parts;
}

std::string JoinInput(uint8_t options, const std::vector<std::string>& parts) {
  std::string out(1, static_cast<char>(options));
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += kPartSeparator;
    out += parts[i];
  }
  return out;
}

int RunFuzzTarget(const FuzzTarget& target, const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::vector<std::string_view> parts = SplitParts(rest);
  if (target.name == "trace") return FuzzTrace(parts);
  if (target.name == "cache_wire") return FuzzCacheWire(data[0], parts);
  if (target.format.empty()) return FuzzConfig(parts);
  return FuzzFormat(target, data[0], parts);
}

}  // namespace dlio::fuzz
