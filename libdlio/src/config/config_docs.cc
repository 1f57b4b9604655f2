#include "config/config_docs.h"

#include <vector>

#include "dlio/config.h"

namespace dlio::config_internal {
namespace {

std::string SectionOf(const std::string& key) {
  size_t dot = key.find('.');
  return dot == std::string::npos ? "top level" : key.substr(0, dot);
}

std::string Code(const std::string& s) { return s.empty() || s == "-" ? s : "`" + s + "`"; }

}  // namespace

std::string ConfigReferenceMarkdown() {
  const std::vector<ConfigKeyDoc> docs = ConfigKeyDocs();
  std::string out;
  std::string section;
  for (const ConfigKeyDoc& d : docs) {
    if (!d.used) continue;
    if (SectionOf(d.key) != section) {
      section = SectionOf(d.key);
      out += "\n### " + section + "\n\n";
      out += "| key | type | default | accepted values | meaning |\n";
      out += "|---|---|---|---|---|\n";
    }
    std::string meaning =
        d.alias_of.empty() ? d.description : "alternative spelling of `" + d.alias_of + "`";
    const std::string& accepted = d.accepted_values.empty() ? d.range : d.accepted_values;
    out += "| `" + d.key + "` | " + d.type + " | " + Code(d.default_value) + " | " + accepted +
           " | " + meaning + " |\n";
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

}  // namespace dlio::config_internal
