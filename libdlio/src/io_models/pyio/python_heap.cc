#include "io_models/pyio/python_heap.h"

#include <cstdlib>

namespace dlio::pyio {

size_t PythonImportThreshold(IoModel model) {
  switch (model) {
    case IoModel::kNumpy:
    case IoModel::kH5py:
    case IoModel::kMmap:
      return 315'392;  // import numpy
    case IoModel::kPytorch:
      return 425'984;  // import torch
    case IoModel::kPandas:
      return 454'656;  // import pandas
    case IoModel::kAuto:
    case IoModel::kNative:
    case IoModel::kTfData:
      return 0;
  }
  return 0;
}

void MatchPythonImports(size_t threshold) {
  // glibc maps a request of n bytes as a chunk of ((n + 23) & ~15) + 8 bytes rounded up to a page
  // (size field, alignment, the word after): 32 bytes short of a page multiple maps exactly it.
  constexpr size_t kChunkOverhead = 32;
  if (threshold <= kChunkOverhead) return;
  void* block = std::malloc(threshold - kChunkOverhead);
  if (block == nullptr) return;
  // A store the compiler must keep, so that it cannot drop the malloc / free pair.
  static_cast<volatile char*>(block)[0] = 0;
  std::free(block);
}

}  // namespace dlio::pyio
