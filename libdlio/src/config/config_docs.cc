// The key reference of docs/configuration.md (dlio/config.h, ConfigKeysMarkdown).
#include <map>
#include <vector>

#include "dlio/config.h"

namespace dlio {
namespace {

std::string SectionOf(const std::string& key) {
  size_t dot = key.find('.');
  return dot == std::string::npos ? "top level" : key.substr(0, dot);
}

std::string Code(const std::string& s) { return s.empty() || s == "-" ? s : "`" + s + "`"; }

std::string KeyRow(const ConfigKeyDoc& d) {
  std::string meaning =
      d.alias_of.empty() ? d.description : "alternative spelling of `" + d.alias_of + "`";
  const std::string& accepted = d.accepted_values.empty() ? d.range : d.accepted_values;
  return "| `" + d.key + "` | " + d.type + " | " + Code(d.default_value) + " | " + accepted +
         " | " + meaning + " |\n";
}

// The used keys' rows per section, sections in the order of their first key.
std::vector<std::pair<std::string, std::string>> UsedKeyTables(
    const std::vector<ConfigKeyDoc>& docs) {
  std::vector<std::pair<std::string, std::string>> tables;
  std::map<std::string, size_t> index;
  for (const ConfigKeyDoc& d : docs) {
    if (!d.used) continue;
    const std::string section = SectionOf(d.key);
    auto [it, added] = index.emplace(section, tables.size());
    if (added) tables.emplace_back(section, "");
    tables[it->second].second += KeyRow(d);
  }
  return tables;
}

}  // namespace

std::string ConfigKeysMarkdown() {
  const std::vector<ConfigKeyDoc> docs = ConfigKeyDocs();
  std::string out;
  for (const auto& [section, rows] : UsedKeyTables(docs)) {
    out += "\n### " + section + "\n\n";
    out += "| key | type | default | accepted values | meaning |\n";
    out += "|---|---|---|---|---|\n";
    out += rows;
  }
  out += "\n### DLIO keys accepted but not used\n\n";
  out += "| key | what it is in DLIO |\n";
  out += "|---|---|\n";
  for (const ConfigKeyDoc& d : docs) {
    if (d.used) continue;
    out += "| `" + d.key + "` | " + d.description + " |\n";
  }
  return out;
}

}  // namespace dlio
