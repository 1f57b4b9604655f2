// What the s3 client accepts of a server's XML, without a server: XmlCheck's balance, depth and
// DOCTYPE refusal, each in time linear in the input whatever it holds, and ListObjectsV2 pages read
// and checked by ParseListPage.
#include "storage/s3/s3_xml.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <string>

#include "storage/s3/s3_list.h"

namespace dlio::s3 {
namespace {

std::string CheckError(const std::string& xml) {
  const Status st = XmlCheck(xml);
  REQUIRE_FALSE(st.ok());
  return st.message();
}

TEST_CASE("XmlCheck: one balanced element, declarations, comments and attributes") {
  CHECK(XmlCheck("<a/>").ok());
  CHECK(XmlCheck(
            "<?xml version=\"1.0\"?>\n<!-- hi <b> -->\n<a x='>' y=\"/>\"><b>t&amp;</b><c/></a>\n")
            .ok());
  CHECK(XmlRootName("<?xml version=\"1.0\"?><!-- <x> --><ListBucketResult/>") ==
        "ListBucketResult");
  CHECK(CheckError("") == "malformed XML at byte 0: no element");
  CHECK(CheckError("text") == "malformed XML at byte 0: text outside the root element");
  CHECK(CheckError("<a></a><b/>") == "malformed XML at byte 7: a second root element <b>");
  CHECK(CheckError("<a><b></a>") == "malformed XML at byte 6: </a> closes <b>");
  CHECK(CheckError("<a></a></a>") == "malformed XML at byte 7: </a> closes nothing");
  CHECK(CheckError("<a><b>") == "malformed XML at byte 6: <b> is not closed (the body ends first)");
  CHECK(CheckError("<a><b") == "malformed XML at byte 3: the tag <b> never ends");
  CHECK(CheckError("<a>< b/></a>") == "malformed XML at byte 3: a '<' that starts no tag");
  CHECK(CheckError("<a><!-- x</a>") == "malformed XML at byte 3: a comment never ends");
  CHECK(CheckError("<a><![CDATA[x]]></a>") ==
        "malformed XML at byte 3: a DOCTYPE, entity declaration or CDATA section (S3 sends none)");
}

TEST_CASE("XmlCheck: hostile input is refused, bounded in depth and linear in time") {
  std::string deep;
  for (int i = 0; i < 16; ++i) deep += "<a>";
  for (int i = 0; i < 16; ++i) deep += "</a>";
  CHECK(XmlCheck(deep).ok());
  CHECK(CheckError("<a>" + deep + "</a>") ==
        "malformed XML at byte 48: elements nested deeper "
        "than 16");
  // Billion laughs: refused at the DOCTYPE, nothing expanded.
  CHECK_THAT(CheckError("<!DOCTYPE x [<!ENTITY a \"aaaa\"><!ENTITY b \"&a;&a;&a;\">]><x>&b;</x>"),
             Catch::Contains("at byte 0: a DOCTYPE"));
  CHECK(XmlUnescape("&b;&#0;&#xD800;&#x110000;") == "&b;&#0;&#xD800;&#x110000;");
  // Long names are cut in messages; control characters shown, not sent.
  CHECK(CheckError("<a>\x1b</a") == "malformed XML at byte 4: the tag <a> never ends");
  CHECK(CheckError("<" + std::string(1000, 'n') + ">") ==
        "malformed XML at byte " + std::to_string(1002) + ": <" + std::string(40, 'n') +
            "...> is not closed (the body ends first)");
  CHECK(XmlShown("a\nb\x1b\x7f\xc3\xa9", 64) == "a\\x0ab\\x1b\\x7f\xc3\xa9");
  // 16 MiB of the worst shapes each take a moment (a quadratic scan would take hours).
  for (const std::string unit : {"<a>", "<", "<a b='", "<!--", "<a></a>"}) {
    std::string big;
    while (big.size() < (size_t{16} << 20)) big += unit;
    const auto start = std::chrono::steady_clock::now();
    CHECK_FALSE(XmlCheck(big).ok());
    CHECK(XmlElements(big, "a").size() <= big.size());
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(s < 60);  // generous for a loaded machine; the fault it guards against is hours
  }
}

TEST_CASE("ParseListPage: keys, sizes, prefixes, truncation, and what it refuses") {
  const std::string head = "<?xml version=\"1.0\"?><ListBucketResult><Name>b</Name>";
  auto page = ParseListPage(head +
                                "<Contents><Key>p/a&amp;b</Key><Size>18446744073709551615</Size>"
                                "<Owner><ID>x</ID></Owner></Contents><CommonPrefixes><Prefix>p/d/"
                                "</Prefix></CommonPrefixes><IsTruncated>true</IsTruncated>"
                                "<NextContinuationToken>t+1</NextContinuationToken>"
                                "</ListBucketResult>",
                            "p/");
  REQUIRE(page.ok());
  REQUIRE(page->objects.size() == 1);
  CHECK(page->objects[0].first == "p/a&b");
  CHECK(page->objects[0].second == UINT64_MAX);
  CHECK(page->prefixes == std::vector<std::string>{"p/d/"});
  CHECK(page->truncated);
  CHECK(page->next_token == "t+1");
  auto refused = [&](const std::string& inner) {
    auto p = ParseListPage(head + inner + "</ListBucketResult>", "p/");
    REQUIRE_FALSE(p.ok());
    return p.status().message();
  };
  CHECK(refused("<Contents><Key>p/a</Key><Size>18446744073709551616</Size></Contents>") ==
        "<Contents> 1 (key 'p/a') has the <Size> '18446744073709551616', not a byte count");
  CHECK(refused("<Contents><Key>p/a</Key></Contents>") == "<Contents> 1 (key 'p/a') has no <Size>");
  CHECK(refused("<Contents><Key></Key><Size>1</Size></Contents>") ==
        "<Contents> 1's <Key> is empty");
  CHECK(refused("<Contents><Key>q\n</Key><Size>1</Size></Contents>") ==
        "<Contents> 1's <Key> 'q\\x0a' is not under the prefix asked for");
  CHECK(refused("<CommonPrefixes></CommonPrefixes>") == "<CommonPrefixes> 1 has no <Prefix>");
  CHECK(refused("<IsTruncated>TRUE</IsTruncated>") == "<IsTruncated> is 'TRUE', not true or false");
}

}  // namespace
}  // namespace dlio::s3
