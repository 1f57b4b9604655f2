#include "checkpoint/folder_name.h"

#include <algorithm>
#include <cstdio>

#include "dlio/str_cat.h"

namespace dlio::checkpoint_internal {
namespace {

constexpr size_t kMaxDigits = 19;  // a uint64_t of up to 19 digits cannot overflow

bool IsNameDigit(char ch) { return ch >= '0' && ch <= '9'; }

// Names the key the text came from (checkpoint.folder_name, checkpoint.torch_file_name).
struct NameError {
  std::string_view key;
  Status operator()(std::string_view text, const std::string& what) const {
    return Status::InvalidArgument(key, ": '", text, "' ", what);
  }
};

// "{id}", "{step:08}", "{epoch}": the field and its width, or an error naming the placeholder.
Status ParsePlaceholder(const NameError& error, std::string_view text, std::string_view inside,
                        std::string* name, int* width) {
  const size_t colon = inside.find(':');
  *name = std::string(inside.substr(0, colon));
  *width = 0;
  if (*name != "id" && *name != "step" && *name != "epoch") {
    return error(text, StrCat("has an unknown placeholder {", inside,
                              "} (use {id}, {step} or {epoch}, zero-padded as {step:08})"));
  }
  if (colon == std::string_view::npos) return Status::OK();
  const std::string_view spec = inside.substr(colon + 1);
  const bool digits = spec.size() >= 2 && spec.size() <= 3 && spec[0] == '0' &&
                      std::all_of(spec.begin(), spec.end(), IsNameDigit);
  if (digits) *width = std::stoi(std::string(spec.substr(1)));
  if (!digits || *width < 1 || *width > 20) {
    return error(
        text, StrCat("has {", inside, "}: a width is '0' and 1 to 20 digits, as {", *name, ":06}"));
  }
  return Status::OK();
}

std::string PaddedNumber(uint64_t value, int width) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%0*llu", width, static_cast<unsigned long long>(value));
  return buf;
}

}  // namespace

FolderNameTemplate::FolderNameTemplate() : FolderNameTemplate(*Parse(kDefaultFolderName)) {}

Result<FolderNameTemplate> FolderNameTemplate::Parse(std::string_view text) {
  return ParseAs(text, {"checkpoint.folder_name", false});
}

Result<FolderNameTemplate> FolderNameTemplate::ParseFileName(std::string_view text,
                                                             std::string_view key) {
  return ParseAs(text, {key, true});
}

Result<FolderNameTemplate> FolderNameTemplate::ParseAs(std::string_view text, Use use) {
  const NameError error{use.key};
  if (text.empty()) return Status::InvalidArgument(use.key, " must not be empty");
  if (text == "." || text == ".." || text.find('/') != std::string_view::npos ||
      text.substr(0, 5) == ".dlio") {
    return error(text, use.file ? "is not a file name (no '/', not '.dlio...')"
                                : "is not a folder name (no '/', not '.dlio...')");
  }
  FolderNameTemplate t{Unparsed()};
  t.text_ = std::string(text);
  Part part;
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '}') return error(text, "has a '}' without its '{'");
    if (text[i] != '{') {
      part.literal += text[i++];
      continue;
    }
    const size_t close = text.find('}', i);
    if (close == std::string_view::npos) return error(text, "has a '{' without its '}'");
    std::string name;
    DLIO_RETURN_NOT_OK(
        ParsePlaceholder(error, text, text.substr(i + 1, close - i - 1), &name, &part.width));
    part.field = name == "id" ? Field::kId : name == "step" ? Field::kStep : Field::kEpoch;
    if (t.Has(part.field)) return error(text, StrCat("has {", name, "} twice"));
    if (!t.parts_.empty() && t.parts_.back().field != Field::kNone && part.literal.empty()) {
      return error(text, "has two placeholders with no text between them");
    }
    t.parts_.push_back(std::move(part));
    part = Part();
    i = close + 1;
  }
  if (t.parts_.empty() && !use.file) {
    return error(text, "has no {id}, {step} or {epoch}: every save needs a folder of its own");
  }
  t.parts_.push_back(std::move(part));            // the tail, maybe empty
  for (size_t k = 1; k < t.parts_.size(); ++k) {  // each literal after a placeholder
    if (!t.parts_[k].literal.empty() && IsNameDigit(t.parts_[k].literal[0])) {
      return error(text,
                   "has a digit right after a placeholder (a name would not tell "
                   "where the number ends)");
    }
  }
  return t;
}

bool FolderNameTemplate::Has(Field f) const {
  return std::any_of(parts_.begin(), parts_.end(), [f](const Part& p) { return p.field == f; });
}

std::string FolderNameTemplate::Name(const SaveNumbers& n) const {
  std::string out;
  for (const Part& p : parts_) {
    out += p.literal;
    if (p.field == Field::kId) out += PaddedNumber(n.id, p.width);
    if (p.field == Field::kStep)
      out += PaddedNumber(static_cast<uint64_t>(std::max<int64_t>(n.step, 0)), p.width);
    if (p.field == Field::kEpoch)
      out += PaddedNumber(static_cast<uint64_t>(std::max<int64_t>(n.epoch, 0)), p.width);
  }
  return out;
}

std::optional<FolderNameTemplate::Fields> FolderNameTemplate::Match(std::string_view name) const {
  Fields fields;
  size_t at = 0;
  for (const Part& p : parts_) {
    if (name.substr(at, p.literal.size()) != p.literal) return std::nullopt;
    at += p.literal.size();
    if (p.field == Field::kNone) continue;
    size_t end = at;
    while (end < name.size() && IsNameDigit(name[end])) ++end;
    if (end == at || end - at > kMaxDigits) return std::nullopt;
    uint64_t value = 0;
    for (size_t i = at; i < end; ++i) value = value * 10 + static_cast<uint64_t>(name[i] - '0');
    (p.field == Field::kId     ? fields.id
     : p.field == Field::kStep ? fields.step
                               : fields.epoch) = value;
    at = end;
  }
  if (at != name.size()) return std::nullopt;
  return fields;
}

}  // namespace dlio::checkpoint_internal
