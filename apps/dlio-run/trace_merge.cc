#include "trace_merge.h"

#include <CLI/CLI.hpp>
#include <cstdio>

#include "dlio/tracer.h"
#include "run_common.h"

namespace dlio_run {

void DeclareTraceMergeOptions(CLI::App* command, TraceMergeOptions* options) {
  command->add_option("output", options->output, "merged trace (.pfw, or .pfw.gz)")->required();
  command->add_option("inputs", options->inputs, "trace-<rank>-of-<ranks>.pfw[.gz] files")
      ->required();
}

int TraceMerge(const TraceMergeOptions& options) {
  const std::string& output = options.output;
  const std::vector<std::string>& inputs = options.inputs;
  auto merged = dlio::MergeTraceFiles(inputs, output);
  if (!merged.ok()) return Fail(merged.status(), kExitRunError);
  std::printf("%s: %llu events from %zu trace%s (pids", output.c_str(),
              static_cast<unsigned long long>(merged->events), inputs.size(),
              inputs.size() == 1 ? "" : "s");
  for (int64_t pid : merged->pids) std::printf(" %lld", static_cast<long long>(pid));
  std::printf(")\n");
  if (merged->truncated_lines > 0) {
    std::fprintf(stderr, "dlio-run: warning: skipped %llu truncated last line%s\n",
                 static_cast<unsigned long long>(merged->truncated_lines),
                 merged->truncated_lines == 1 ? "" : "s");
  }
  return kExitOk;
}

}  // namespace dlio_run
