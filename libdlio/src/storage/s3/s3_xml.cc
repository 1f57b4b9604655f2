#include "storage/s3/s3_xml.h"

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "dlio/str_cat.h"

namespace dlio::s3 {
namespace {

bool NameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
         c == ':';
}

// The tag name starting at `at` ("" when none).
std::string_view NameAt(std::string_view xml, size_t at) {
  size_t end = at;
  while (end < xml.size() && NameChar(xml[end])) ++end;
  return xml.substr(at, end - at);
}

Status Malformed(size_t at, const std::string& what) {
  return Status::InvalidArgument(StrCat("malformed XML at byte ", at, ": ", what));
}

std::string Tag(std::string_view name) { return StrCat("<", XmlShown(name, 40), ">"); }

// Where the markup starting at `lt` (a '<') ends: one past its '>' (quoted attribute values may
// hold '>'), or npos.
size_t TagEnd(std::string_view xml, size_t lt) {
  char quote = 0;
  for (size_t j = lt + 1; j < xml.size(); ++j) {
    const char c = xml[j];
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '>') {
      return j + 1;
    } else if (c == '<') {
      return std::string_view::npos;
    }
  }
  return std::string_view::npos;
}

// The tag at `lt` ("<name ...>", "<name/>" or "</name>"): pushes, pops or errs; where it ends.
Result<size_t> Step(std::string_view xml, size_t lt, int max_depth,
                    std::vector<std::string_view>* open, bool* had_root) {
  const bool closing = lt + 1 < xml.size() && xml[lt + 1] == '/';
  const std::string_view name = NameAt(xml, lt + (closing ? 2 : 1));
  if (name.empty()) return Malformed(lt, "a '<' that starts no tag");
  const size_t end = TagEnd(xml, lt);
  if (end == std::string_view::npos) return Malformed(lt, "the tag " + Tag(name) + " never ends");
  if (closing) {
    if (open->empty() || open->back() != name) {
      return Malformed(lt, StrCat("</", XmlShown(name, 40), "> closes ",
                                  open->empty() ? std::string("nothing") : Tag(open->back())));
    }
    open->pop_back();
    return end;
  }
  if (open->empty() && *had_root) return Malformed(lt, "a second root element " + Tag(name));
  *had_root = true;
  if (xml[end - 2] == '/') return end;  // <name/>
  if (static_cast<int>(open->size()) >= max_depth) {
    return Malformed(lt, StrCat("elements nested deeper than ", max_depth));
  }
  open->push_back(name);
  return end;
}

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
  // NUL and surrogates are no characters XML may hold.
  if (*end != '\0' || cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
  AppendUtf8(static_cast<uint32_t>(cp), out);
  return true;
}

}  // namespace

Status XmlCheck(std::string_view xml, int max_depth) {
  std::vector<std::string_view> open;
  bool had_root = false;
  size_t at = 0;
  while (at < xml.size()) {
    const size_t lt = xml.find('<', at);
    const size_t text_end = lt == std::string_view::npos ? xml.size() : lt;
    const size_t ink = xml.substr(at, text_end - at).find_first_not_of(" \t\r\n");
    if (open.empty() && ink != std::string_view::npos) {
      return Malformed(at + ink, "text outside the root element");
    }
    if (lt == std::string_view::npos) break;
    const std::string_view rest = xml.substr(lt);
    if (rest.rfind("<?", 0) == 0 || rest.rfind("<!--", 0) == 0) {
      const bool pi = rest[1] == '?';
      const size_t close = xml.find(pi ? "?>" : "-->", lt + 2);
      if (close == std::string_view::npos) {
        return Malformed(lt, pi ? "a <? never ends" : "a comment never ends");
      }
      at = close + (pi ? 2 : 3);
      continue;
    }
    if (rest.rfind("<!", 0) == 0) {
      return Malformed(lt, "a DOCTYPE, entity declaration or CDATA section (S3 sends none)");
    }
    DLIO_ASSIGN_OR_RETURN(at, Step(xml, lt, max_depth, &open, &had_root));
  }
  if (!open.empty()) {
    return Malformed(xml.size(), Tag(open.back()) + " is not closed (the body ends first)");
  }
  if (!had_root) return Malformed(0, "no element");
  return Status::OK();
}

std::string_view XmlRootName(std::string_view xml) {
  size_t lt = xml.find('<');
  while (lt != std::string_view::npos) {
    const std::string_view rest = xml.substr(lt);
    if (rest.rfind("<?", 0) != 0 && rest.rfind("<!--", 0) != 0) return NameAt(xml, lt + 1);
    const size_t close = xml.find(rest[1] == '?' ? "?>" : "-->", lt + 2);
    lt = close == std::string_view::npos ? close : xml.find('<', close);
  }
  return {};
}

std::string XmlShown(std::string_view text, size_t max) {
  std::string out;
  for (size_t i = 0; i < text.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  if (text.size() > max) out += "...";
  return out;
}

bool ParseUint64(std::string_view text, uint64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  uint64_t v = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
    const auto digit = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - digit) / 10) return false;
    v = v * 10 + digit;
  }
  *out = v;
  return true;
}

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
