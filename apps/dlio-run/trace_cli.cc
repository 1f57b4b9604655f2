#include "trace_cli.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "dlio/profile_analysis.h"
#include "dlio/profile_report.h"
#include "dlio/storage.h"

namespace dlio_run {
namespace {

namespace fs = std::filesystem;

std::string Head(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return head;
}

}  // namespace

dlio::Result<dlio::ProfileTrace> ImportTraces(const std::vector<std::string>& paths) {
  dlio::ProfileTrace trace;
  for (const auto& path : paths) {
    std::error_code ec;
    if (!fs::exists(path, ec)) return dlio::Status::NotFound(path, ": no such file or directory");
    DLIO_ASSIGN_OR_RETURN(const dlio::ImportStats stats, dlio::ImportTrace(path, &trace));
    if (stats.truncated_lines > 0) {
      std::fprintf(stderr, "dlio-run: warning: %s: skipped %lld cut-short last line%s\n",
                   path.c_str(), static_cast<long long>(stats.truncated_lines),
                   stats.truncated_lines == 1 ? "" : "s");
    }
    for (const auto& warning : stats.warnings) {
      std::fprintf(stderr, "dlio-run: warning: %s\n", warning.c_str());
    }
    const auto unlisted = stats.bad_values - static_cast<int64_t>(stats.warnings.size());
    if (unlisted > 0) {
      std::fprintf(stderr, "dlio-run: warning: %s: %lld more events with such values\n",
                   path.c_str(), static_cast<long long>(unlisted));
    }
  }
  return trace;
}

dlio::Status CheckCommandOutput(const std::string& path, const IsOwnOutput& is_own_output) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::is_directory(st)) return dlio::Status::AlreadyExists(path, " is a directory");
  // Reading a FIFO's first bytes would wait for a writer: anything but a regular file is left.
  if (fs::exists(st) && !fs::is_regular_file(st)) {
    return dlio::Status::AlreadyExists(path, " exists and is not a regular file; not replaced");
  }
  if (fs::exists(st) && !is_own_output(Head(path))) {
    return dlio::Status::AlreadyExists(
        path, " exists and is not an earlier output of this command; not replaced");
  }
  return dlio::Status::OK();
}

dlio::Status WriteCommandOutput(const std::string& path, std::string_view text,
                                const IsOwnOutput& is_own_output) {
  DLIO_RETURN_NOT_OK(CheckCommandOutput(path, is_own_output));
  auto storage = dlio::NewPosixStorage(dlio::StorageOptions{});
  return dlio::WriteFileAtomically(storage.get(), path, text);
}

bool IsReportOutput(std::string_view head) {
  return head.find(dlio::kReportGeneratorTag) != std::string_view::npos;
}

}  // namespace dlio_run
