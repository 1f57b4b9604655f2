// What the trace commands (analyze, report, compare, profile) share: importing traces named on
// the command line, and writing an output file that never replaces a file dlio did not write.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "dlio/profile.h"
#include "dlio/status.h"

namespace dlio_run {

// Imports every path (a trace file of any format ImportTrace knows, or a directory of traces) into
// one trace. A missing path is NotFound naming it; a cut-short last line is a warning on stderr,
// and so is each of the first ImportStats::warnings (values the importers dropped or corrected),
// then a count of the others.
dlio::Result<dlio::ProfileTrace> ImportTraces(const std::vector<std::string>& paths);

// Whether the first bytes of an existing file show that this command wrote it earlier.
using IsOwnOutput = std::function<bool(std::string_view head)>;

// Whether WriteCommandOutput would write `path` (a check made before a long command starts).
dlio::Status CheckCommandOutput(const std::string& path, const IsOwnOutput& is_own_output);

// Writes `text` to `path` through a temporary name and a rename (a reader never sees half a
// file). An existing `path` is replaced only when `is_own_output` recognises its first 4 KiB;
// otherwise AlreadyExists names it and nothing is written.
dlio::Status WriteCommandOutput(const std::string& path, std::string_view text,
                                const IsOwnOutput& is_own_output);

// An earlier `dlio-run report` page (it carries dlio::kReportGeneratorTag).
bool IsReportOutput(std::string_view head);

}  // namespace dlio_run
