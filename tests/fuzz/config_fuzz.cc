// The config target: part 0 is a workload file (YAML or JSON), each line of part 1 an override
// ("reader.batch_size=8", "++workload.train.epochs=2"), as `dlio-run --config f --set ...` takes
// them. A config that validates must survive its own export: ConfigToJson parses back to the
// same JSON.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "dlio/config.h"
#include "fuzz_targets.h"

namespace dlio::fuzz {
namespace {

// Overrides applied per input at most (each re-walks the config).
constexpr size_t kMaxOverrides = 32;

[[noreturn]] void Violated(const std::string& what) {
  std::fprintf(stderr, "dlio fuzz config: contract violated: %s\n", what.c_str());
  std::abort();
}

}  // namespace

int FuzzConfig(const std::vector<std::string_view>& parts) {
  std::vector<std::string> warnings;
  auto parsed = ParseConfig(std::string(parts[0]), "fuzz.yaml", WorkloadConfig(), &warnings);
  const bool verbose = std::getenv("DLIO_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "  parse: %s\n", parsed.status().ToString().c_str());
  if (!parsed.ok()) return 0;
  WorkloadConfig config = std::move(*parsed);
  if (parts.size() > 1) {
    std::string_view lines = parts[1];
    for (size_t applied = 0; !lines.empty() && applied < kMaxOverrides; ++applied) {
      const size_t end = lines.find('\n');
      const std::string line(lines.substr(0, end));
      lines.remove_prefix(end == std::string_view::npos ? lines.size() : end + 1);
      Status st = ApplyOverride(&config, line, &warnings);
      if (verbose) std::fprintf(stderr, "  override %s: %s\n", line.c_str(), st.ToString().c_str());
      if (!st.ok()) return 0;
    }
  }
  Status valid = config.Validate();
  if (verbose) std::fprintf(stderr, "  validate: %s\n", valid.ToString().c_str());
  if (!valid.ok()) return 0;

  const std::string exported = ConfigToJson(config);
  auto reparsed = ParseConfig(exported, "exported.json");
  if (!reparsed.ok()) {
    Violated("ConfigToJson output does not parse: " + reparsed.status().ToString() + "\n" +
             exported);
  }
  const std::string again = ConfigToJson(*reparsed);
  if (again != exported) Violated("ConfigToJson does not round-trip:\n" + exported + "\n" + again);
  return 0;
}

}  // namespace dlio::fuzz
