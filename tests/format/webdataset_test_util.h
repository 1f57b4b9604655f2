// Helpers of the webdataset tests: what our writer stores per sample, and shards on storage.
#pragma once

#include <string>
#include <vector>

#include "format/format_test_util.h"
#include "format/webdataset/webdataset.h"

namespace dlio::testing {

// Sample i of a shard written from `spec`: its .jpg bytes, then its .cls label's digits.
inline std::string WdsSample(const FileSpec& spec, uint64_t i) {
  return ExpectedSample(spec, i) + std::to_string(format_internal::SampleLabel(spec.seed, i));
}

inline FileSpec WdsSpec(std::vector<uint64_t> sizes, uint64_t seed = 11) {
  FileSpec spec;
  spec.sample_sizes = std::move(sizes);
  spec.seed = seed;
  return spec;
}

// The whole file through `storage`.
inline std::string WdsFileBytes(Storage* storage, const std::string& path) {
  auto file = storage->Open(path, OpenMode::kRead);
  if (!file.ok()) return "";
  std::string s(*(*file)->Size(), '\0');
  if (!s.empty() && !(*file)->ReadExactAt(0, s.size(), s.data()).ok()) return "";
  return s;
}

inline void WdsWriteBytes(Storage* storage, const std::string& path, const std::string& bytes) {
  auto file = storage->Open(path, OpenMode::kCreateNew);
  REQUIRE(file.ok());
  REQUIRE((*file)->WriteAt(0, bytes.data(), bytes.size()).ok());
  REQUIRE((*file)->Close().ok());
}

}  // namespace dlio::testing
