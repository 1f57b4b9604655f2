// libdlio's version.
#pragma once

namespace dlio {
inline constexpr const char* kVersion = "0.1.0";
}  // namespace dlio
