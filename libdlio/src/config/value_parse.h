// Strict text -> value conversions for config scalars. Each returns false (and leaves the output
// alone) when the text is not a value of that type; callers build the message naming the key.
#pragma once

#include <cstdint>
#include <string>

namespace dlio::config_internal {

// true/false/True/False/TRUE/FALSE/yes/no/on/off/y/n and 1/0.
bool ParseBoolText(const std::string& text, bool* out);

// Digits, or an integral number written as a float ("1024.0", "1e6"). With `allow_units`, also
// "4MiB", "256 KB", "1.5GiB" (KB/MB/GB/TB = 10^3.., KiB/MiB/GiB/TiB = 2^10.., B = 1; unit case
// does not matter). With `round_fraction`, 114660.07 becomes 114660. Rejects negatives.
bool ParseUintText(const std::string& text, bool allow_units, bool round_fraction, uint64_t* out);

// Signed integer, or an integral float.
bool ParseIntText(const std::string& text, int64_t* out);

// A finite number.
bool ParseDoubleText(const std::string& text, double* out);

}  // namespace dlio::config_internal
