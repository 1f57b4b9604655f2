#include "sweep_resume.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "dlio/metrics.h"

namespace dlio_run {
namespace {

using json = nlohmann::json;

// A sweep.json of 100,000 points is about 80 MB.
constexpr uint64_t kMaxSweepJsonBytes = uint64_t{256} << 20;

const char* TypeOf(const json& j) {
  switch (j.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::binary:
    case json::value_t::discarded:
      return "no JSON value";
    default:
      return "a number";
  }
}

// Reads the file at `path` (a regular file, at most kMaxSweepJsonBytes); NotFound when missing.
dlio::Result<std::string> ReadRegularFile(const std::string& path) {
  // O_NONBLOCK: opening a FIFO would otherwise wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return dlio::Status::FromErrno(errno, path);
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) return dlio::Status::FromErrno(errno, path);
  if (!S_ISREG(st.st_mode)) {
    const char* kind = S_ISDIR(st.st_mode)    ? "a directory"
                       : S_ISFIFO(st.st_mode) ? "a FIFO"
                                              : "a device or a socket";
    return dlio::Status::InvalidArgument(path, " is not a regular file (", kind,
                                         "): the sweep.json of a dlio-run sweep is expected");
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxSweepJsonBytes) {
    return dlio::Status::InvalidArgument(path, ": ", st.st_size, " bytes, more than a sweep.json ",
                                         "holds (at most ", kMaxSweepJsonBytes >> 20, " MiB)");
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::pread(fd, text.data() + got, text.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return dlio::Status::FromErrno(errno, "reading " + path);
    if (n == 0) break;  // shrank since fstat
    got += static_cast<size_t>(n);
  }
  text.resize(got);
  return text;
}

// The checks of one resume file, each error naming the file and the field ("points[2].name").
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  dlio::Status Error(const std::string& field, const std::string& what) const {
    return dlio::Status::InvalidArgument(file_, ": ", field, ": ", what,
                                         " (not a sweep.json this dlio-run wrote; move it away "
                                         "or run without --resume)");
  }

  dlio::Status WrongType(const std::string& field, const json& j, const char* expected) const {
    return Error(field, std::string("expected ") + expected + ", got " + TypeOf(j));
  }

  // The member `key` of `object`, or null when it is absent (then an error if `required`).
  dlio::Result<const json*> Member(const json& object, const std::string& at, const char* key,
                                   bool required) const {
    const auto it = object.find(key);
    if (it != object.end()) return &*it;
    if (required) return Error(at + key, "missing");
    return nullptr;
  }

  dlio::Result<std::string> String(const json& object, const std::string& at, const char* key,
                                   bool required = true) const {
    DLIO_ASSIGN_OR_RETURN(const json* j, Member(object, at, key, required));
    if (j == nullptr) return std::string();
    if (!j->is_string()) return WrongType(at + key, *j, "a string");
    return j->get<std::string>();
  }

  // A finite number >= 0 (every figure of a point is one); 0 when absent and not required.
  dlio::Result<double> Figure(const json& object, const std::string& at, const char* key,
                              bool required = true) const {
    DLIO_ASSIGN_OR_RETURN(const json* j, Member(object, at, key, required));
    if (j == nullptr) return 0.0;
    return FigureOf(*j, at + key);
  }

  dlio::Result<double> FigureOf(const json& j, const std::string& field) const {
    if (!j.is_number()) return WrongType(field, j, "a number");
    const double v = j.get<double>();
    if (!std::isfinite(v) || v < 0) return Error(field, "expected a number >= 0, got " + j.dump());
    return v;
  }

 private:
  std::string file_;
};

dlio::Status ReadFigures(const Reader& r, const json& p, const std::string& at,
                         dlio::SweepMeasurement* m) {
  DLIO_ASSIGN_OR_RETURN(m->au_percent, r.Figure(p, at, "au_percent"));
  DLIO_ASSIGN_OR_RETURN(m->samples_per_s, r.Figure(p, at, "samples_per_second"));
  DLIO_ASSIGN_OR_RETURN(const double mb, r.Figure(p, at, "io_MB_per_second"));
  m->bytes_per_s = mb * dlio::kMB;
  DLIO_ASSIGN_OR_RETURN(const json* seconds, r.Member(p, at, "epoch_seconds", true));
  if (!seconds->is_array()) return r.WrongType(at + "epoch_seconds", *seconds, "an array");
  for (size_t i = 0; i < seconds->size(); ++i) {
    DLIO_ASSIGN_OR_RETURN(
        const double s, r.FigureOf((*seconds)[i], at + "epoch_seconds[" + std::to_string(i) + "]"));
    m->epoch_seconds.push_back(s);
  }
  DLIO_ASSIGN_OR_RETURN(const json* accelerators, r.Member(p, at, "num_accelerators", false));
  if (accelerators != nullptr && !accelerators->is_number_unsigned()) {
    return r.WrongType(at + "num_accelerators", *accelerators, "an unsigned integer");
  }
  if (accelerators != nullptr) m->accelerators = accelerators->get<uint64_t>();
  // The first-epoch and steady figures come as four, or not at all (a single epoch).
  m->has_steady = p.contains("steady_au_percent");
  DLIO_ASSIGN_OR_RETURN(m->first_epoch_au_percent,
                        r.Figure(p, at, "first_epoch_au_percent", m->has_steady));
  DLIO_ASSIGN_OR_RETURN(m->first_epoch_samples_per_s,
                        r.Figure(p, at, "first_epoch_samples_per_second", m->has_steady));
  DLIO_ASSIGN_OR_RETURN(m->steady_au_percent, r.Figure(p, at, "steady_au_percent", false));
  DLIO_ASSIGN_OR_RETURN(m->steady_samples_per_s,
                        r.Figure(p, at, "steady_samples_per_second", m->has_steady));
  return dlio::Status::OK();
}

// points[i], checked; into `points` when it ran without error (a failed point runs again).
dlio::Status ReadPoint(const Reader& r, const json& p, size_t index,
                       std::map<std::string, dlio::SweepMeasurement>* points) {
  const std::string at = "points[" + std::to_string(index) + "].";
  if (!p.is_object()) return r.WrongType(at.substr(0, at.size() - 1), p, "an object");
  DLIO_ASSIGN_OR_RETURN(const std::string name, r.String(p, at, "name"));
  if (name.empty()) return r.Error(at + "name", "empty");
  DLIO_ASSIGN_OR_RETURN(const std::string status, r.String(p, at, "status"));
  if (status != "ok" && status != "error") {
    return r.Error(at + "status", "expected \"ok\" or \"error\", got " + json(status).dump());
  }
  if (status != "ok") return dlio::Status::OK();  // run again
  dlio::SweepMeasurement m;
  DLIO_RETURN_NOT_OK(ReadFigures(r, p, at, &m));
  DLIO_ASSIGN_OR_RETURN(m.output_folder, r.String(p, at, "output_folder"));
  DLIO_ASSIGN_OR_RETURN(m.config_digest, r.String(p, at, "config_digest", false));
  m.resumed = true;
  if (!points->emplace(name, std::move(m)).second) {
    return r.Error(at + "name", json(name).dump() + " names an earlier point too");
  }
  return dlio::Status::OK();
}

}  // namespace

dlio::Result<std::map<std::string, dlio::SweepMeasurement>> ReadEarlierSweep(
    const std::string& sweep_json) {
  std::map<std::string, dlio::SweepMeasurement> points;
  auto text = ReadRegularFile(sweep_json);
  if (!text.ok() && text.status().code() == dlio::StatusCode::kNotFound) return points;
  DLIO_RETURN_NOT_OK(text.status());
  const Reader r(sweep_json);
  json j;
  try {  // nlohmann's parse errors, the only exceptions here, say where the JSON breaks
    j = json::parse(*text);
  } catch (const json::parse_error& e) {
    return dlio::Status::InvalidArgument(sweep_json, ": not JSON (at byte ", e.byte,
                                         "): the sweep.json of a dlio-run sweep is expected");
  } catch (const json::exception& e) {  // a number out of range
    return dlio::Status::InvalidArgument(sweep_json, ": not JSON (", e.what(), ")");
  }
  if (!j.is_object()) return r.WrongType("the top level", j, "an object");
  DLIO_ASSIGN_OR_RETURN(const std::string generator, r.String(j, "", "generator"));
  if (generator != dlio::kSweepGeneratorTag) {
    return r.Error("generator",
                   json(generator).dump() + ", not " + json(dlio::kSweepGeneratorTag).dump());
  }
  DLIO_ASSIGN_OR_RETURN(const json* list, r.Member(j, "", "points", true));
  if (!list->is_array()) return r.WrongType("points", *list, "an array");
  for (size_t i = 0; i < list->size(); ++i) {
    DLIO_RETURN_NOT_OK(ReadPoint(r, (*list)[i], i, &points));
  }
  return points;
}

std::string ConfigDigest(const dlio::WorkloadConfig& config) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a, 64 bits
  for (char c : dlio::ConfigToJson(config)) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace dlio_run
