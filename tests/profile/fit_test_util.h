// Helpers of the FitTrace tests: the value fitted for a key, and a fit that must succeed.
#pragma once

#include <catch2/catch.hpp>
#include <string>
#include <utility>

#include "dlio/profile_fit.h"

namespace dlio::fit_test {

// The fitted value of `key`, "(missing)" or "(not inferred: REASON)".
inline std::string Value(const FitResult& r, const std::string& key) {
  const FitEntry* e = r.Find(key);
  if (e == nullptr) return "(missing)";
  return e->inferred ? e->value : "(not inferred: " + e->reason + ")";
}

inline FitResult Fit(const ProfileTrace& t, const FitOptions& options = {}) {
  auto r = FitTrace(t, options);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  INFO(FitYaml(*r, {"test"}));
  return std::move(r).value();
}

}  // namespace dlio::fit_test
