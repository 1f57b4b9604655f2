// DetectFormat and FormatOfSuffix: a file's format from the hints of the registered formats
// (FormatHints), with no table of names here.
#include <algorithm>
#include <cctype>
#include <vector>

#include "dlio/format.h"
#include "format/io_util.h"

namespace dlio {
namespace {

using Entry = FormatRegistry::Entry;

std::string Extension(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot + 1);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

bool StartsWithMagic(const Entry& entry, std::string_view head) {
  return std::any_of(entry.capabilities.magics.begin(), entry.capabilities.magics.end(),
                     [head](const std::string& m) { return head.substr(0, m.size()) == m; });
}

const Entry* OfSuffix(const std::vector<Entry>& entries, std::string_view suffix) {
  for (const Entry& e : entries) {
    const auto& s = e.capabilities.suffixes;
    if (std::find(s.begin(), s.end(), suffix) != s.end()) return &e;
  }
  return nullptr;
}

// The file's first bytes, as many as the longest magic of `entries` (fewer when it is shorter).
Result<std::string> Head(const std::vector<Entry>& entries, Storage* storage,
                         const std::string& path) {
  size_t longest = 0;
  for (const Entry& e : entries) {
    for (const std::string& m : e.capabilities.magics) longest = std::max(longest, m.size());
  }
  DLIO_ASSIGN_OR_RETURN(auto file, storage->Open(path, OpenMode::kRead));
  DLIO_ASSIGN_OR_RETURN(uint64_t size, file->Size());
  std::string head(static_cast<size_t>(std::min<uint64_t>(size, longest)), '\0');
  if (!head.empty()) DLIO_RETURN_NOT_OK(file->ReadExactAt(0, head.size(), head.data()));
  return head;
}

}  // namespace

std::string FormatOfSuffix(const FormatRegistry& formats, std::string_view suffix) {
  const std::vector<Entry> entries = formats.List();
  const Entry* e = OfSuffix(entries, suffix);
  return e == nullptr ? "" : e->name;
}

Result<std::string> DetectFormat(const FormatRegistry& formats, Storage* storage,
                                 const std::string& path) {
  const std::string ext = Extension(path);
  const std::vector<Entry> entries = formats.List();
  DLIO_ASSIGN_OR_RETURN(const std::string head, Head(entries, storage, path));
  const Entry* by_suffix = OfSuffix(entries, ext);
  if (by_suffix != nullptr && !by_suffix->capabilities.generic_suffixes) {
    if (!by_suffix->capabilities.magics.empty() && !StartsWithMagic(*by_suffix, head)) {
      return Status::Corruption(path + ": extension says " + by_suffix->name +
                                " but the magic bytes at offset 0 do not match");
    }
    return by_suffix->name;
  }
  // A generic suffix (raw's .bin) is a weak claim: a format whose magic bytes the file starts
  // with, or whose index file lies beside it, wins over it.
  for (const Entry& e : entries) {
    if (StartsWithMagic(e, head)) return e.name;
  }
  for (const Entry& e : entries) {
    if (e.capabilities.index_suffix.empty()) continue;
    DLIO_ASSIGN_OR_RETURN(bool has_index, storage->Exists(path + e.capabilities.index_suffix));
    if (has_index) return e.name;
  }
  if (by_suffix != nullptr) return by_suffix->name;
  return Status::InvalidArgument(path + ": cannot tell the format from the extension '" + ext +
                                 "' or the first bytes; name it explicitly");
}

}  // namespace dlio
