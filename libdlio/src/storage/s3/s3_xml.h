// The little XML that S3's responses need: the elements of one tag name and their text, with the
// five predefined entities and character references decoded. Not a general parser: no CDATA, no
// namespaces beyond ignoring attributes, which S3's ListObjectsV2, multipart and error bodies do
// not need.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dlio::s3 {

// The raw inner text of every <tag ...>...</tag> (and "" for <tag/>) in document order. Elements
// of the same name nested in one another are not supported (S3 never nests them).
std::vector<std::string_view> XmlElements(std::string_view xml, std::string_view tag);
// The decoded text of the first <tag> element, or nullopt when there is none.
std::optional<std::string> XmlFirst(std::string_view xml, std::string_view tag);
// Text with &amp; &lt; &gt; &quot; &apos; &#N; &#xN; decoded (an unknown entity stays as it is).
std::string XmlUnescape(std::string_view text);

}  // namespace dlio::s3
