#include "runner/remove_generated.h"

#include <string>

#include "dlio/loop.h"
#include "dlio/str_cat.h"

namespace dlio::runner_internal {
namespace {

// Removes `path` if it is there; true when it was.
Result<bool> RemoveIfPresent(Storage* storage, const std::string& path) {
  DLIO_ASSIGN_OR_RETURN(bool exists, storage->Exists(path));
  if (!exists) return false;
  Status removed = storage->Remove(path);
  if (!removed.ok()) return removed.WithContext("dataset.keep_files false: removing");
  return true;
}

}  // namespace

Status RemoveGeneratedFiles(const RunContext& ctx, const GenerateReport& generated) {
  DLIO_RETURN_NOT_OK(ctx.comm->Barrier());  // no rank reads the dataset any more
  const FormatOptions options = FormatOptionsFor(*ctx.config);
  uint64_t removed = 0;
  for (const std::string& path : generated.created_files) {
    // The data file last, as generation renamed it last: a data file under its final name keeps
    // meaning "complete with its companions".
    for (const std::string& companion : ctx.format->CompanionFiles(path, options)) {
      DLIO_ASSIGN_OR_RETURN(bool was, RemoveIfPresent(ctx.storage, companion));
      removed += was ? 1 : 0;
    }
    DLIO_ASSIGN_OR_RETURN(bool was, RemoveIfPresent(ctx.storage, path));
    removed += was ? 1 : 0;
  }
  ctx.messages->Log(LogLevel::kInfo, StrCat("dataset.keep_files is false: removed ", removed,
                                            " files this rank generated"));
  return Status::OK();
}

}  // namespace dlio::runner_internal
