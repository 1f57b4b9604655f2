#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>
#include <string>

#include "dlio/profile_report.h"
#include "dlio/storage.h"
#include "profile/import/json_cursor.h"

namespace dlio {
namespace {

// A dlio run's summary.json is a few KiB, some hundred KiB with many epochs.
constexpr size_t kMaxSummaryBytes = size_t{64} << 20;

Status ReadNumbers(const nlohmann::json& metric, const std::string& key, const std::string& path,
                   std::vector<double>* out) {
  const auto it = metric.find(key);
  if (it == metric.end() || it->is_null()) return Status::OK();
  if (!it->is_array()) {
    return Status::Corruption(path, ": metric.", key, " is not an array");
  }
  for (size_t i = 0; i < it->size(); ++i) {
    if (!(*it)[i].is_number()) {
      return Status::Corruption(path, ": metric.", key, "[", i, "] is not a number");
    }
    out->push_back((*it)[i].get<double>());
  }
  return Status::OK();
}

// The text of a summary.json: a regular file (a FIFO is refused without blocking) of at most
// kMaxSummaryBytes.
Result<std::string> ReadSummaryText(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) return Status::NotFound("cannot open dlio run summary ", path);
  if (fd < 0) return Status::FromErrno(errno, "open dlio run summary " + path);
  DLIO_RETURN_NOT_OK(CheckOpenedFile(fd, path, "open dlio run summary", true));
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || text.size() + static_cast<size_t>(n) > kMaxSummaryBytes) {
      const int err = errno;
      ::close(fd);
      if (n < 0) return Status::FromErrno(err, "read dlio run summary " + path);
      if (n == 0) return text;
      return Status::Corruption(path, ": holds more than ", kMaxSummaryBytes,
                                " bytes, more than a dlio run summary has");
    }
    text.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

Result<RunSummary> ReadRunSummary(const std::string& summary_json_path) {
  DLIO_ASSIGN_OR_RETURN(const std::string text, ReadSummaryText(summary_json_path));
  // nlohmann's parser keeps a stack entry (and a value) per nesting level: deeper than any
  // summary is refused before it, by a bounded scan.
  if (profile_internal::JsonDeeperThan(text, profile_internal::kMaxJsonDepth)) {
    return Status::Corruption(summary_json_path, ": JSON nested deeper than ",
                              profile_internal::kMaxJsonDepth, " levels");
  }
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return Status::Corruption(summary_json_path, " is not a JSON object");
  }
  RunSummary run;
  run.source = summary_json_path;
  const auto metric = doc.find("metric");
  if (metric == doc.end()) return run;
  if (!metric->is_object())
    return Status::Corruption(summary_json_path, ": metric is not an object");
  DLIO_RETURN_NOT_OK(
      ReadNumbers(*metric, "train_au_percentage", summary_json_path, &run.au_percentage));
  DLIO_RETURN_NOT_OK(ReadNumbers(*metric, "train_throughput_samples_per_second", summary_json_path,
                                 &run.throughput_samples_s));
  return run;
}

}  // namespace dlio
