// The little XML that S3's responses need: the elements of one tag name and their text, with the
// five predefined entities and character references decoded. Not a general parser: no CDATA, no
// namespaces beyond ignoring attributes, which S3's ListObjectsV2, multipart and error bodies do
// not need. Nothing here recurses or expands entities: every function is linear in the input,
// whatever a server sends.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dlio/status.h"

namespace dlio::s3 {

// How deep S3's answers nest (ListBucketResult > Contents > Owner > ID is 4); more is refused.
inline constexpr int kMaxXmlDepth = 16;

// OK when `xml` is one element (after an optional <?xml ...?> declaration, comments and white
// space) whose tags balance, nested at most `max_depth` deep; else InvalidArgument saying what is
// wrong at which byte. A DOCTYPE (so any entity definition) or a CDATA section is refused: S3
// sends neither.
Status XmlCheck(std::string_view xml, int max_depth = kMaxXmlDepth);
// The name of the first element ("" when there is none).
std::string_view XmlRootName(std::string_view xml);
// `text` cut to `max` bytes (then "...") with control characters and DEL shown as \xNN:
// what a server sent, safe to put in one line of a message.
std::string XmlShown(std::string_view text, size_t max = 64);
// A decimal number of digits only (no sign, no space) that fits 64 bits: sizes and byte offsets.
bool ParseUint64(std::string_view text, uint64_t* out);

// The raw inner text of every <tag ...>...</tag> (and "" for <tag/>) in document order. Elements
// of the same name nested in one another are not supported (S3 never nests them).
std::vector<std::string_view> XmlElements(std::string_view xml, std::string_view tag);
// The decoded text of the first <tag> element, or nullopt when there is none.
std::optional<std::string> XmlFirst(std::string_view xml, std::string_view tag);
// Text with &amp; &lt; &gt; &quot; &apos; &#N; &#xN; decoded (an unknown entity, and a character
// reference to NUL or to a surrogate, stays as it is).
std::string XmlUnescape(std::string_view text);

}  // namespace dlio::s3
