#include "core/owner_stamp.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

namespace dlio {
namespace {

std::string SanitizedHost() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  std::string host(buf);
  for (char& c : host) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-';
    if (!ok) c = '-';
  }
  return host.empty() ? "unknown" : host;
}

uint64_t PidNamespace() {
  struct stat st;
  if (::stat("/proc/self/ns/pid", &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_ino);
}

// Field 22 of /proc/<pid>/stat (the start time in clock ticks after boot); 0 when unreadable.
// The command name (field 2) may hold spaces and parentheses, so fields are counted after the
// last ')'.
uint64_t StartTime(uint64_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t paren = text.rfind(')');
  if (paren == std::string::npos) return 0;
  std::istringstream fields(text.substr(paren + 1));
  std::string field;
  for (int i = 3; i <= 22; ++i) {
    if (!(fields >> field)) return 0;
  }
  uint64_t start = 0;
  const auto r = std::from_chars(field.data(), field.data() + field.size(), start);
  return r.ec == std::errc() && r.ptr == field.data() + field.size() ? start : 0;
}

std::optional<uint64_t> ParseDecimal(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  uint64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

bool IsHex16(std::string_view s) {
  if (s.size() != 16) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool IsHostName(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

OwnerStamp ThisProcessStamp() {
  OwnerStamp s;  // measured on every call: a forked child is another owner
  s.host = SanitizedHost();
  s.pid_ns = PidNamespace();
  s.pid = static_cast<uint64_t>(::getpid());
  s.start = StartTime(s.pid);
  return s;
}

std::string OwnerToken(const OwnerStamp& stamp, uint64_t random) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(random));
  return stamp.host + "_" + std::to_string(stamp.pid_ns) + "_" + std::to_string(stamp.pid) + "_" +
         std::to_string(stamp.start) + "_" + hex;
}

std::string UniqueOwnerToken() {
  std::random_device rd;
  return OwnerToken(ThisProcessStamp(), (static_cast<uint64_t>(rd()) << 32) ^ rd());
}

std::optional<OwnerStamp> ParseOwnerToken(std::string_view token) {
  std::vector<std::string_view> fields;  // the last four '_'-separated fields, then the host
  for (int i = 0; i < 4; ++i) {
    const size_t sep = token.rfind('_');
    if (sep == std::string_view::npos) return std::nullopt;
    fields.push_back(token.substr(sep + 1));
    token = token.substr(0, sep);
  }
  if (!IsHex16(fields[0]) || !IsHostName(token)) return std::nullopt;
  const auto start = ParseDecimal(fields[1]);
  const auto pid = ParseDecimal(fields[2]);
  const auto pid_ns = ParseDecimal(fields[3]);
  if (!start || !pid || !pid_ns || *pid == 0) return std::nullopt;
  OwnerStamp s;
  s.host = std::string(token);
  s.pid_ns = *pid_ns;
  s.pid = *pid;
  s.start = *start;
  return s;
}

bool OwnerIsDead(const OwnerStamp& stamp) {
  const OwnerStamp me = ThisProcessStamp();
  if (stamp.host != me.host || stamp.pid_ns == 0 || stamp.pid_ns != me.pid_ns) return false;
  if (stamp.pid > static_cast<uint64_t>(INT32_MAX)) return false;
  const pid_t pid = static_cast<pid_t>(stamp.pid);
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;  // no such process
  // A process with that pid lives: it is the owner unless it started at another time (the pid
  // was reused). Without start times the owner may be alive.
  if (stamp.start == 0) return false;
  const uint64_t start = StartTime(stamp.pid);
  return start != 0 && start != stamp.start;
}

bool IsDeadOwnersLeftover(std::string_view name, std::string_view infix) {
  const size_t at = name.rfind(infix);
  if (at == std::string_view::npos || at == 0) return false;
  const auto stamp = ParseOwnerToken(name.substr(at + infix.size()));
  return stamp && OwnerIsDead(*stamp);
}

}  // namespace dlio
