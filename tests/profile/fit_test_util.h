// Helpers of the FitTrace tests: the value fitted for a key, and a fit that must succeed.
#pragma once

#include <catch2/catch.hpp>
#include <string>
#include <utility>

#include "dlio/format.h"
#include "dlio/profile_fit.h"
#include "dlio/registries.h"

namespace dlio::fit_test {

// The fitted value of `key`, "(missing)" or "(not inferred: REASON)".
inline std::string Value(const FitResult& r, const std::string& key) {
  const FitEntry* e = r.Find(key);
  if (e == nullptr) return "(missing)";
  return e->inferred ? e->value : "(not inferred: " + e->reason + ")";
}

// FitTrace, the data files' suffixes named by the built-in formats' hints unless `options` say
// otherwise (as `dlio-run fit`).
inline FitResult Fit(const ProfileTrace& t, FitOptions options = {}) {
  Registries registries;
  REQUIRE(RegisterBuiltinFormats(&registries).ok());
  if (!options.format_of_suffix) {
    options.format_of_suffix = [&registries](const std::string& suffix) {
      return FormatOfSuffix(registries.formats, suffix);
    };
  }
  auto r = FitTrace(t, options);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  INFO(FitYaml(*r, {"test"}));
  return std::move(r).value();
}

}  // namespace dlio::fit_test
