// The key reference of docs/configuration.md, rendered from ConfigKeyDocs(). The docs test checks
// that every line rendered here appears in the committed document, so the two cannot drift.
#pragma once

#include <string>

namespace dlio::config_internal {

// One "### <section>" block with a table per section of used keys (aliases included), then one
// table of the DLIO keys that are accepted but not used.
std::string ConfigReferenceMarkdown();

}  // namespace dlio::config_internal
