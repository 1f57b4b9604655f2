// Helpers of the FitTrace tests: the value fitted for a key, and a fit that must succeed.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "dlio/config_enums.h"
#include "dlio/format.h"
#include "dlio/profile_fit.h"
#include "dlio/registries.h"
#include "dlio/str_cat.h"
#include "profile/analysis_test_util.h"

namespace dlio::fit_test {

// The fitted value of `key`, "(missing)" or "(not inferred: REASON)".
inline std::string Value(const FitResult& r, const std::string& key) {
  const FitEntry* e = r.Find(key);
  if (e == nullptr) return "(missing)";
  return e->inferred ? e->value : "(not inferred: " + e->reason + ")";
}

// Whether built-in `format` declares request model `model` (native, auto and pytorch: every
// format), as `dlio-run fit` asks the format registry.
inline bool DeclaresModel(const Registries& registries, const std::string& format,
                          const std::string& model) {
  const auto wanted = EnumFromName<IoModel>(model);
  auto made = registries.formats.Get(format);
  if (!wanted || !made.ok()) return false;
  if (*wanted == IoModel::kNative || *wanted == IoModel::kAuto || *wanted == IoModel::kPytorch) {
    return true;
  }
  auto f = (*made)();
  if (!f.ok()) return false;
  const std::vector<IoModel>& models = (*f)->capabilities().io_models;
  return std::find(models.begin(), models.end(), *wanted) != models.end();
}

// FitOptions whose probe describes every data file as `info` (a trace of one kind of file).
inline FitOptions ProbingAs(DataFileInfo info) {
  FitOptions options;
  options.probe = [info = std::move(info)](const std::string&) -> Result<DataFileInfo> {
    return info;
  };
  return options;
}

// FitOptions holding io_model pyio's requests with a 4 KiB buffer (as `dlio-run fit` does), and
// native as every format's model under auto (raw's, as dlio-run fit's registries say).
inline FitOptions WithPyioRequests() {
  FitOptions options;
  options.pyio_requests = [](uint64_t file_size, const PyioCalls& c) {
    auto r = PyioReadRequests(file_size, 4096, c.head_bytes, c.read_size, c.call, c.tail_bytes,
                              c.tail_read_size, c.crop_bytes, c.crop_at, c.end_reads);
    return r.ok() ? std::move(r).value() : std::vector<ReadRequest>{};
  };
  options.io_model_under_auto = [](const std::string&) { return std::string("native"); };
  return options;
}

// FitTrace, the data files' suffixes named and the models declared by the built-in formats unless
// `options` say otherwise (as `dlio-run fit`).
inline FitResult Fit(const ProfileTrace& t, FitOptions options = {}) {
  Registries registries;
  REQUIRE(RegisterBuiltinFormats(&registries.formats).ok());
  if (!options.format_of_suffix) {
    options.format_of_suffix = [&registries](const std::string& suffix) {
      return FormatOfSuffix(registries.formats, suffix);
    };
  }
  if (!options.format_declares) {
    options.format_declares = [&registries](const std::string& format, const std::string& model) {
      return DeclaresModel(registries, format, model);
    };
  }
  if (!options.format_traits) {
    options.format_traits = [&registries](const std::string& format) {
      FitFormatTraits traits;
      auto made = registries.formats.Get(format);
      if (!made.ok()) return traits;
      auto f = (*made)();
      if (!f.ok()) return traits;
      traits.mmap_head = (*f)->capabilities().mmap_head;
      traits.pyio_records = (*f)->capabilities().pyio_records;
      return traits;
    };
  }
  if (!options.model_client_work) {
    options.model_client_work = [](const std::string& model) {
      const auto m = EnumFromName<IoModel>(model);
      return m.has_value() && IoModelDoesClientWork(*m);
    };
  }
  auto r = FitTrace(t, options);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  INFO(FitYaml(*r, {"test"}));
  return std::move(r).value();
}

// One batch of 4 samples read by thread `pid`: /job/data/x_<4 * batch + k>.npy, k = 0..3, each
// opened and read whole (100 KB in one pread of 40 us), 50 us apart from *now on.
inline void AddBatchReads(ProfileTrace* t, int32_t pid, int batch, int64_t* now) {
  for (int k = 0; k < 4; ++k) {
    const std::string path = StrCat("/job/data/x_", batch * 4 + k, ".npy");
    testing::AddEvent(t, pid, pid, "open64", *now, 2, path);
    testing::AddEvent(t, pid, pid, "pread", *now + 5, 40, path, 0, 100'000, 100'000);
    *now += 50;
  }
}

}  // namespace dlio::fit_test
