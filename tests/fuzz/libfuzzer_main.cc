// libFuzzer entry point of one target, chosen at build time (DLIO_FUZZ_TARGET, the target's name).
#include <cstdio>
#include <cstdlib>

#include "fuzz_targets.h"

namespace {

const dlio::fuzz::FuzzTarget& Target() {
  static const dlio::fuzz::FuzzTarget* target = [] {
    const dlio::fuzz::FuzzTarget* t = dlio::fuzz::FindFuzzTarget(DLIO_FUZZ_TARGET);
    if (t == nullptr) {
      std::fprintf(stderr, "unknown fuzz target %s\n", DLIO_FUZZ_TARGET);
      std::abort();
    }
    return t;
  }();
  return *target;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dlio::fuzz::RunFuzzTarget(Target(), data, size);
}
