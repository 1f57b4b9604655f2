#include "storage/s3/s3_list.h"

#include "dlio/str_cat.h"
#include "storage/s3/s3_xml.h"

namespace dlio::s3 {
namespace {

Status Bad(const std::string& what) { return Status::InvalidArgument(what); }

Status UnderPrefix(const std::string& name, std::string_view prefix, const std::string& where) {
  if (name.empty()) return Bad(where + " is empty");
  if (name.compare(0, prefix.size(), prefix) != 0) {
    return Bad(StrCat(where, " '", XmlShown(name), "' is not under the prefix asked for"));
  }
  return Status::OK();
}

Status ReadObjects(std::string_view body, std::string_view prefix, ListPage* page) {
  size_t index = 0;
  for (std::string_view item : XmlElements(body, "Contents")) {
    ++index;
    const auto key = XmlFirst(item, "Key");
    if (!key) return Bad(StrCat("<Contents> ", index, " has no <Key>"));
    DLIO_RETURN_NOT_OK(UnderPrefix(*key, prefix, StrCat("<Contents> ", index, "'s <Key>")));
    const auto size_text = XmlFirst(item, "Size");
    uint64_t size = 0;
    if (!size_text || !ParseUint64(*size_text, &size)) {
      return Bad(StrCat("<Contents> ", index, " (key '", XmlShown(*key), "') has ",
                        size_text
                            ? StrCat("the <Size> '", XmlShown(*size_text), "', not a byte count")
                            : std::string("no <Size>")));
    }
    page->objects.emplace_back(*key, size);
  }
  index = 0;
  for (std::string_view item : XmlElements(body, "CommonPrefixes")) {
    ++index;
    const auto p = XmlFirst(item, "Prefix");
    if (!p) return Bad(StrCat("<CommonPrefixes> ", index, " has no <Prefix>"));
    DLIO_RETURN_NOT_OK(UnderPrefix(*p, prefix, StrCat("<CommonPrefixes> ", index, "'s <Prefix>")));
    page->prefixes.push_back(*p);
  }
  return Status::OK();
}

}  // namespace

Result<ListPage> ParseListPage(std::string_view body, std::string_view prefix) {
  DLIO_RETURN_NOT_OK(XmlCheck(body));
  const std::string_view root = XmlRootName(body);
  if (root != "ListBucketResult") {
    return Bad(StrCat("the root element is <", XmlShown(root, 40), ">, not <ListBucketResult>"));
  }
  ListPage page;
  DLIO_RETURN_NOT_OK(ReadObjects(body, prefix, &page));
  const auto truncated = XmlFirst(body, "IsTruncated");
  if (!truncated) return Bad("no <IsTruncated>");
  if (*truncated != "true" && *truncated != "false") {
    return Bad(StrCat("<IsTruncated> is '", XmlShown(*truncated), "', not true or false"));
  }
  page.truncated = *truncated == "true";
  if (page.truncated) {
    page.next_token = XmlFirst(body, "NextContinuationToken").value_or("");
    if (page.next_token.empty()) return Bad("a truncated listing without NextContinuationToken");
  }
  return page;
}

}  // namespace dlio::s3
