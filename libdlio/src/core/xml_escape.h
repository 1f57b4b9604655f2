// Escaping text for XML and HTML (the report's SVG and HTML, the s3 storage's request bodies).
#pragma once

#include <string>
#include <string_view>

namespace dlio {

// Text safe inside elements and double- or single-quoted attributes: & < > " ' become &amp;
// &lt; &gt; &quot; &#39;.
std::string XmlEscape(std::string_view text);

}  // namespace dlio
