// The trace formats ImportTrace knows, as one table (like darshan-util's mod_logutils[]): each row
// a name, how to recognise a file of the format by its first bytes, and its importer. ImportTrace
// asks the rows in order and the first whose sniff accepts a file's head imports it; a new format
// is a row here and its sniff beside its importer, with no switch to extend.
//
// A constant table rather than a Registry (dlio/registry.h): no config names an importer, so
// nothing is looked up by name; the order of the rows decides between formats whose heads look
// alike (a JSON array against strace's "[pid N]"), which a name-sorted registry cannot; and
// ImportTrace, called by every profile tool without a Registries, keeps its signature.
#ifndef DLIO_SRC_PROFILE_TRACE_IMPORTER_H_
#define DLIO_SRC_PROFILE_TRACE_IMPORTER_H_

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "dlio/profile.h"
#include "dlio/status.h"

namespace dlio::profile_internal {

// The most of a file's first bytes a sniff is shown (fewer when the file is shorter).
inline constexpr size_t kTraceHeadBytes = 65536;

struct TraceImporter {
  std::string_view name;         // "pfw"
  std::string_view description;  // what a file of the format is, for ImportTrace's error
  // Whether `head`, a file's first bytes (at most kTraceHeadBytes), is of this format.
  bool (*sniff)(std::string_view head);
  Result<ImportStats> (*import)(const std::string& path, ProfileTrace* trace);
};

// The rows, in the order ImportTrace asks them. Constant; safe for concurrent use.
std::span<const TraceImporter> TraceImporters();

// gzip, or JSON ("[" or "{" first, but not strace's "[pid").
bool SniffPfw(std::string_view head);
// A darshan-parser header line ("# darshan log version", "# DXT") before any other text line.
bool SniffDxt(std::string_view head);
// The first text line is an `strace -f -ttt` line.
bool SniffStrace(std::string_view head);

// The first of the first 64 lines of `head` that is neither blank nor a '#' comment, or a
// darshan-parser header line if one comes first; "" when there is none. A cut-off last line of a
// full head is not judged. "\r" ends are dropped.
std::string_view FirstTextLine(std::string_view head);
bool IsDarshanHeader(std::string_view line);

}  // namespace dlio::profile_internal

#endif  // DLIO_SRC_PROFILE_TRACE_IMPORTER_H_
