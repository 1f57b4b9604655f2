#include "compare.h"

#include <CLI/CLI.hpp>
#include <cstdio>

#include "dlio/profile_analysis.h"
#include "dlio/profile_compare.h"
#include "dlio/profile_fit.h"
#include "exit_codes.h"
#include "trace_cli.h"

namespace dlio_run {
namespace {

int CompareFail(const std::string& message, int code) {
  std::fprintf(stderr, "dlio-run: error: compare: %s\n", message.c_str());
  return code;
}

// Whether an existing file is an earlier output of this command (which may be replaced); any
// other file is the user's and is never overwritten.
bool IsCompareOutput(std::string_view head) {
  return head.rfind(dlio::kComparisonTextTitle, 0) == 0 ||
         head.rfind("{\n  \"a\": {\"label\": ", 0) == 0;
}

}  // namespace

void DeclareCompareOptions(CLI::App* cmd, CompareOptions* options) {
  cmd->add_option("a", options->a, "trace file or directory of traces (run A)")->required();
  cmd->add_option("b", options->b, "trace file or directory of traces (run B)")->required();
  cmd->add_flag("--json", options->json, "JSON with stable keys instead of the table");
  cmd->add_option("-o,--output", options->output,
                  "write to this file (default: stdout; replaces only an earlier compare output)");
  cmd->add_option("--ignore-paths", options->ignore_paths,
                  "files left out of both runs as the runtime's and launchers' I/O, as `fit "
                  "--ignore-paths` takes them ('default': system, temp, launcher and code "
                  "folders); '' scores every file (default: default)");
  cmd->add_flag("--keep-scratch-files", options->keep_scratch_files,
                "score files created and deleted within a run too (by default left out: "
                "Python's tempfile probe, lock files)");
}

int Compare(const CompareOptions& options) {
  auto ignore = dlio::ParseFitIgnorePaths(options.ignore_paths);
  if (!ignore.ok()) return CompareFail(ignore.status().ToString(), kExitBadInput);
  auto a = ImportTraces({options.a});
  if (!a.ok()) return CompareFail(a.status().ToString(), kExitBadInput);
  auto b = ImportTraces({options.b});
  if (!b.ok()) return CompareFail(b.status().ToString(), kExitBadInput);
  dlio::RuntimeIoLeftOut left_a, left_b;
  const bool scratch = !options.keep_scratch_files;
  dlio::TraceComparison c =
      dlio::CompareTraces(dlio::WithoutRuntimeIo(*a, *ignore, scratch, &left_a),
                          dlio::WithoutRuntimeIo(*b, *ignore, scratch, &left_b));
  c.left_out_a = left_a;
  c.left_out_b = left_b;
  c.label_a = options.a;
  c.label_b = options.b;
  for (const auto& [label, reads] : {std::pair{options.a, c.reads_a}, {options.b, c.reads_b}}) {
    if (reads == 0) std::fprintf(stderr, "dlio-run: warning: %s has no reads\n", label.c_str());
  }
  const std::string text = options.json ? dlio::ComparisonJson(c) : dlio::ComparisonText(c);
  if (options.output.empty()) {
    std::fputs(text.c_str(), stdout);
    return kExitOk;
  }
  if (auto s = WriteCommandOutput(options.output, text, IsCompareOutput); !s.ok()) {
    return CompareFail(s.ToString(), kExitWriteError);
  }
  return kExitOk;
}

}  // namespace dlio_run
