// Runs fuzz inputs through a target without libFuzzer, so any compiler's build can replay the
// committed regression inputs and the seed corpus (ctest does, see tests/fuzz/tests.cmake):
//   dlio_fuzz_replay TARGET FILE_OR_DIR...
//   dlio_fuzz_replay --list      (prints "targets: npy npz ...")
// Exit 0 when every input ran; a bug crashes or aborts, as under the fuzzer.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_targets.h"

namespace {

std::vector<std::string> InputsOf(const std::string& arg) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  if (fs::is_directory(arg)) {
    for (const auto& entry : fs::directory_iterator(arg)) {
      if (entry.is_regular_file()) files.push_back(entry.path().string());
    }
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(arg);
  }
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--list") {
    std::string names;
    for (const auto& t : dlio::fuzz::FuzzTargets()) {
      if (dlio::fuzz::TargetAvailable(t)) names += (names.empty() ? "" : " ") + t.name;
    }
    std::printf("targets: %s\n", names.c_str());
    return 0;
  }
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s TARGET FILE_OR_DIR...\ntargets:", argv[0]);
    for (const auto& t : dlio::fuzz::FuzzTargets()) std::fprintf(stderr, " %s", t.name.c_str());
    std::fprintf(stderr, "\n");
    return 2;
  }
  const dlio::fuzz::FuzzTarget* target = dlio::fuzz::FindFuzzTarget(argv[1]);
  if (target == nullptr) {
    std::fprintf(stderr, "unknown fuzz target '%s'\n", argv[1]);
    return 2;
  }
  size_t count = 0;
  for (int a = 2; a < argc; ++a) {
    for (const std::string& path : InputsOf(argv[a])) {
      std::ifstream in(path, std::ios::binary);
      if (!in) {
        std::fprintf(stderr, "cannot read %s\n", path.c_str());
        return 1;
      }
      const std::string bytes((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
      std::fprintf(stderr, "%s: %s (%zu bytes)\n", target->name.c_str(), path.c_str(),
                   bytes.size());
      dlio::fuzz::RunFuzzTarget(*target, reinterpret_cast<const uint8_t*>(bytes.data()),
                                bytes.size());
      ++count;
    }
  }
  std::printf("%s: %zu inputs ran\n", target->name.c_str(), count);
  return count > 0 ? 0 : 1;
}
