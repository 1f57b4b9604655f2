// FitYaml: the fitted workload as DLIO YAML, one block per section, every key with its confidence
// and reason as an aligned comment.
#include <algorithm>
#include <string>

#include "dlio/profile_fit.h"

namespace dlio {
namespace {

constexpr size_t kMaxCommentColumn = 44;
constexpr const char* kSections[] = {"workflow",   "dataset",    "reader", "train",
                                     "evaluation", "checkpoint", "side_io"};

// A plain YAML scalar, or a double-quoted one when plain would change its meaning.
std::string Scalar(const std::string& v) {
  if (!v.empty() && (v.front() == '{' || v.front() == '[' || v.front() == '"')) return v;
  const bool plain = !v.empty() && v.front() != ' ' && v.back() != ' ' &&
                     v.find_first_of(":#{}[],&*!|>'\"%@`\n") == std::string::npos;
  if (plain) return v;
  std::string q = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') q += '\\';
    q += c == '\n' ? ' ' : c;
  }
  return q + "\"";
}

std::string OneLine(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

struct Line {
  std::string code;
  std::string comment;
};

Line LineOf(const FitEntry& e, const std::string& indent, const std::string& leaf) {
  const std::string kv = leaf + ": " + Scalar(e.value);
  if (e.inferred) {
    return {indent + kv, std::string(FitConfidenceName(e.confidence)) + ": " + OneLine(e.reason)};
  }
  return {indent + "# " + kv, "not inferred (dlio's default): " + OneLine(e.reason)};
}

void Emit(const std::vector<Line>& lines, std::string* out) {
  // Comments start in one column, past the longest line that fits before kMaxCommentColumn;
  // longer lines put theirs two spaces after the value.
  size_t column = 0;
  for (const Line& l : lines) {
    if (l.code.size() + 2 <= kMaxCommentColumn) column = std::max(column, l.code.size() + 2);
  }
  for (const Line& l : lines) {
    *out += l.code;
    *out += std::string(l.code.size() + 2 > column ? 2 : column - l.code.size(), ' ');
    out->append("# ").append(l.comment).push_back('\n');
  }
}

}  // namespace

std::string FitYaml(const FitResult& result, const std::vector<std::string>& sources) {
  std::string out(kFitYamlTitle);
  out += "\n# from:";
  for (const auto& s : sources) out.append(" ").append(OneLine(s));
  out +=
      "\n# Each key: confidence (high: read from the trace or the files; medium: a rule that holds"
      "\n# for the usual loaders; low: weakly supported) and the reason. A commented key could not"
      "\n# be inferred: dlio's default applies (docs/profiling.md, `dlio-run fit`).\n";
  if (result.ranks > 1) {
    out += "# traced with " + std::to_string(result.ranks) + " ranks: run it as `mpirun -n " +
           std::to_string(result.ranks) +
           " dlio-run --config <this file>` (batch and threads are per rank, files and samples "
           "global)\n";
  }
  for (const auto& n : result.notes) out.append("# ").append(OneLine(n)).push_back('\n');
  std::vector<Line> top;
  for (const FitEntry& e : result.entries) {
    if (e.key.find('.') == std::string::npos) top.push_back(LineOf(e, "", e.key));
  }
  if (!top.empty()) {
    out += "\n";
    Emit(top, &out);
  }
  for (const char* section : kSections) {
    const std::string prefix = std::string(section) + ".";
    std::vector<Line> lines;
    for (const FitEntry& e : result.entries) {
      if (e.key.rfind(prefix, 0) == 0)
        lines.push_back(LineOf(e, "  ", e.key.substr(prefix.size())));
    }
    if (lines.empty()) continue;
    out.append("\n").append(section).append(":\n");
    Emit(lines, &out);
  }
  return out;
}

}  // namespace dlio
