// Helpers shared by the capability tests: the built-in registries and a user format that
// declares whatever capabilities a case gives it.
#ifndef DLIO_TESTS_CONFIG_CAPABILITIES_TEST_UTIL_H_
#define DLIO_TESTS_CONFIG_CAPABILITIES_TEST_UTIL_H_

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "dlio/registries.h"

namespace dlio {
namespace capabilities_test {

inline std::unique_ptr<Registries> Builtins() {
  auto r = std::make_unique<Registries>();
  REQUIRE(RegisterBuiltins(r.get()).ok());
  return r;
}

// A user format that reads samples of its own kind; it declares `capabilities`.
class UserFormat final : public Format {
 public:
  explicit UserFormat(FormatCapabilities capabilities) : capabilities_(capabilities) {}
  std::string name() const override { return "user"; }
  std::string extension() const override { return "usr"; }
  bool variable_sample_sizes() const override { return false; }
  FormatCapabilities capabilities() const override { return capabilities_; }
  Status Write(Storage*, const std::string&, const FileSpec&, const FormatOptions&) const override {
    return Status::Unimplemented("user format writes nothing");
  }
  Result<std::unique_ptr<FormatReader>> Open(Storage*, const std::string&,
                                             const FormatOptions&) const override {
    return Status::Unimplemented("user format reads nothing");
  }

 private:
  FormatCapabilities capabilities_;
};

inline Status RegisterUserFormat(Registries* r, const std::string& name, FormatCapabilities caps) {
  return r->formats.Register(
      {name, "a user's format", "", [caps]() -> Result<std::unique_ptr<Format>> {
         return std::unique_ptr<Format>(std::make_unique<UserFormat>(caps));
       }});
}

}  // namespace capabilities_test
}  // namespace dlio

#endif  // DLIO_TESTS_CONFIG_CAPABILITIES_TEST_UTIL_H_
