// The one-file split all ranks write together.
#pragma once

#include <string>

#include "dlio/format.h"
#include "dlio/status.h"
#include "dlio/storage.h"
#include "generator/staging.h"

namespace dlio::generator_internal {

// Collective: a one-file split written by all ranks together (Format::WriteShared), staged in
// "<parent>/.dlio-tmp-shared-<token>/" (rank 0's `token`), a folder rank 0 creates and, after
// the write, moves up (MoveUnit) and removes. Rank 0 alone checks an existing file (kept when
// CheckComplete says so) and sets *written when it wrote the file.
Status WriteSharedFile(Storage* storage, DirIndex* index, const Format& format,
                       const FormatOptions& options, const FileSpec& spec, const std::string& path,
                       bool compressed, const SharedWrite& shared, const std::string& token,
                       bool* written);

}  // namespace dlio::generator_internal
