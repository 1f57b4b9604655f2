#include "io_models/pyio/python_heap.h"

#include <cstdlib>

#include "io_models/io_model_table.h"

namespace dlio::pyio {

size_t PythonImportThreshold(IoModel model) {
  return io_models::IoModelEntryFor(model).python_import_threshold;
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
