#include "storage/s3/s3_xml.h"

#include <cstdint>
#include <cstdlib>

namespace dlio::s3 {
namespace {

// Where the start tag of `tag` begins at or after `from` (npos if none): "<tag" followed by
// '>', '/', or white space, so <Key> is not found inside <KeyCount>.
size_t FindStartTag(std::string_view xml, std::string_view tag, size_t from) {
  while (true) {
    const size_t lt = xml.find('<', from);
    if (lt == std::string_view::npos) return lt;
    if (xml.compare(lt + 1, tag.size(), tag) == 0 && lt + 1 + tag.size() < xml.size()) {
      const char next = xml[lt + 1 + tag.size()];
      if (next == '>' || next == '/' || next == ' ' || next == '\t' || next == '\n' ||
          next == '\r') {
        return lt;
      }
    }
    from = lt + 1;
  }
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Decodes the entity `name` (between '&' and ';'); false when it is not one.
bool DecodeEntity(std::string_view name, std::string* out) {
  if (name == "amp") return out->push_back('&'), true;
  if (name == "lt") return out->push_back('<'), true;
  if (name == "gt") return out->push_back('>'), true;
  if (name == "quot") return out->push_back('"'), true;
  if (name == "apos") return out->push_back('\''), true;
  if (name.size() < 2 || name[0] != '#') return false;
  const bool hex = name[1] == 'x' || name[1] == 'X';
  const std::string digits(name.substr(hex ? 2 : 1));
  if (digits.empty()) return false;
  char* end = nullptr;
  const unsigned long cp = std::strtoul(digits.c_str(), &end, hex ? 16 : 10);
  if (*end != '\0' || cp > 0x10FFFF) return false;
  AppendUtf8(static_cast<uint32_t>(cp), out);
  return true;
}

}  // namespace

std::vector<std::string_view> XmlElements(std::string_view xml, std::string_view tag) {
  std::vector<std::string_view> out;
  const std::string end_tag = "</" + std::string(tag) + ">";
  size_t pos = 0;
  while ((pos = FindStartTag(xml, tag, pos)) != std::string_view::npos) {
    const size_t gt = xml.find('>', pos);
    if (gt == std::string_view::npos) break;
    if (xml[gt - 1] == '/') {  // <tag/>
      out.emplace_back();
      pos = gt + 1;
      continue;
    }
    const size_t close = xml.find(end_tag, gt + 1);
    if (close == std::string_view::npos) break;
    out.push_back(xml.substr(gt + 1, close - gt - 1));
    pos = close + end_tag.size();
  }
  return out;
}

std::optional<std::string> XmlFirst(std::string_view xml, std::string_view tag) {
  const auto all = XmlElements(xml, tag);
  if (all.empty()) return std::nullopt;
  return XmlUnescape(all.front());
}

std::string XmlUnescape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '&') {
      const size_t semi = text.find(';', i + 1);
      if (semi != std::string_view::npos && semi - i <= 12 &&
          DecodeEntity(text.substr(i + 1, semi - i - 1), &out)) {
        i = semi;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

}  // namespace dlio::s3
