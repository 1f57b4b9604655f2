#include "inspect.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "dlio/registries.h"
#include "isolate.h"
#include "run_common.h"

namespace dlio_run {
namespace {

// The reader of f.path, in the format f names or the one detected.
int OpenAndDescribe(const InspectOptions& f, std::string* json) {
  dlio::Registries r;
  if (auto s = dlio::RegisterBuiltins(&r); !s.ok()) return Fail(s, kExitRunError);
  auto storage = dlio::NewPosixStorage(dlio::StorageOptions{});
  storage->Bind(dlio::SystemClock(), nullptr);
  std::string name = f.format;
  if (name.empty()) {
    auto detected = dlio::DetectFormat(r.formats, storage.get(), f.path);
    if (!detected.ok()) return Fail(detected.status(), kExitRunError);
    name = *detected;
  }
  auto factory = r.formats.Get(name);
  if (!factory.ok()) return Fail(factory.status(), kExitUsage);
  auto format = (*factory)();
  if (!format.ok()) return Fail(format.status(), kExitRunError);
  dlio::FormatOptions options;
  options.transfer_size = f.transfer_size;
  // inspect describes and checks the whole file (indexes included), not a framework's reads.
  options.io_model = dlio::IoModel::kNative;
  // --sample-layout is npy/npz's own key, set through the key table as a config sets it (CLI11
  // checked the value).
  dlio::WorkloadConfig keys;
  if (auto s = dlio::ApplyOverride(&keys, "dataset.sample_layout=" + f.sample_layout); !s.ok()) {
    return Fail(s, kExitUsage);
  }
  options.formats = keys.dataset.formats;
  auto reader = (*format)->Open(storage.get(), f.path, options);
  if (!reader.ok()) return Fail(reader.status(), kExitRunError);
  *json = (*reader)->DescribeJson();
  return kExitOk;
}

// 0 when the description lists no problems; else prints each to stderr and returns 1.
int CheckProblems(const InspectOptions& f, const std::string& json) {
  const nlohmann::json parsed = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return Fail(
        dlio::Status::Internal("inspect: the description of " + f.path + " is not a JSON object"),
        kExitRunError);
  }
  const auto problems = parsed.find("problems");
  if (problems == parsed.end() || !problems->is_array() || problems->empty()) return kExitOk;
  for (const auto& p : *problems) {
    std::fprintf(stderr, "dlio-run: problem: %s\n",
                 p.is_string() ? p.get<std::string>().c_str() : p.dump().c_str());
  }
  return kExitRunError;
}

int InspectHere(const InspectOptions& f) {
  std::string json;
  if (const int code = OpenAndDescribe(f, &json); code != kExitOk) return code;
  std::printf("%s\n", json.c_str());
  std::fflush(stdout);
  return CheckProblems(f, json);
}

}  // namespace

void DeclareInspectOptions(CLI::App* command, InspectOptions* options) {
  command->add_option("file", options->path, "the file")->required();
  command->add_option("-f,--format", options->format, "format name (default: detected)");
  command->add_option("--transfer-size", options->transfer_size, "read request size in bytes");
  command
      ->add_option("--sample-layout", options->sample_layout,
                   "npy/npz: sample axis when the file's labels do not tell "
                   "(dataset.sample_layout)")
      ->check(CLI::IsMember({"first_axis", "last_axis"}));
}

int Inspect(const InspectOptions& options) {
  // In a child process: a reader crashing on a corrupt file becomes an error naming it.
  auto code = RunIsolated(options.path, [&] { return InspectHere(options); });
  return code.ok() ? *code : Fail(code.status(), kExitRunError);
}

}  // namespace dlio_run
