// Writes a gzip file for the importer tests (one member; concatenate files for more).
#pragma once

#include <zlib.h>

#include <catch2/catch.hpp>
#include <string>

namespace dlio::testing {

inline void WriteGzip(const std::string& path, const std::string& text) {
  gzFile gz = gzopen(path.c_str(), "wb");
  REQUIRE(gz != nullptr);
  REQUIRE(gzwrite(gz, text.data(), static_cast<unsigned>(text.size())) ==
          static_cast<int>(text.size()));
  REQUIRE(gzclose(gz) == Z_OK);
}

}  // namespace dlio::testing
