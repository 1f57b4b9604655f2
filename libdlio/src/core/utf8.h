// UTF-8 checks for text that ends up in JSON (config values, file names in descriptions).
#pragma once

#include <cstddef>
#include <string_view>

namespace dlio {

// Length of the well-formed UTF-8 sequence starting at s[i] (2-4 for a multi-byte character), or
// 0 when s[i] does not start one (ASCII bytes also give 0: callers handle them first).
size_t Utf8SequenceLength(std::string_view s, size_t i);

// Whether `s` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool IsValidUtf8(std::string_view s);

}  // namespace dlio
