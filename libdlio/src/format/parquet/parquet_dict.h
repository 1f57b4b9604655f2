// Dictionary encoding for our writer, as Arrow's parquet writer (pyarrow's) applies it: a column
// chunk's distinct values in first-seen order become its PLAIN dictionary page, and its data pages
// hold RLE_DICTIONARY indices (a bit-width byte, then the RLE / bit-packed hybrid).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace dlio::format_internal::parquet {

// Bits an index into a dictionary of `entries` values takes, as Arrow's DictEncoder picks it:
// 0 for none, 1 for one, else ceil(log2(entries)).
int IndexBitWidth(uint64_t entries);

// Appends `values` at `bit_width` bits in the RLE / bit-packed hybrid (parquet-format
// Encodings.md): a run of 8 or more equal values that starts on a multiple of 8 into a literal
// stretch becomes a repeated run; the rest are bit-packed literal runs of at most 512 values (the
// last one padded to 8 with zeros).
void EncodeRleHybrid(const std::vector<uint32_t>& values, int bit_width, std::string* out);

// Upper bound of EncodeRleHybrid's bytes for `n` values (all literal), plus the bit-width byte.
uint64_t IndexPageBound(uint64_t n, int bit_width);

// The distinct values of one column chunk in first-seen order. Requires external synchronization.
class DictionaryBuilder {
 public:
  // length_prefixed: BYTE_ARRAY, whose PLAIN entries carry a 4-byte length.
  explicit DictionaryBuilder(bool length_prefixed) : length_prefixed_(length_prefixed) {}
  // The index of `value`, added when it is new.
  uint32_t Put(const std::string& value);
  bool Contains(const std::string& value) const { return index_.count(value) != 0; }
  uint64_t entries() const { return order_.size(); }
  // Bytes of the PLAIN dictionary page: Arrow's dict_encoded_size, checked against
  // dictionary_pagesize_limit.
  uint64_t plain_bytes() const { return plain_bytes_; }
  // Bytes a new value of `n` bytes adds to plain_bytes().
  uint64_t Cost(uint64_t n) const { return n + (length_prefixed_ ? 4 : 0); }
  // The dictionary page's (uncompressed) bytes.
  std::string PlainPage() const;

 private:
  bool length_prefixed_;
  std::unordered_map<std::string, uint32_t> index_;
  std::vector<const std::string*> order_;  // keys of index_ (stable: node-based map)
  uint64_t plain_bytes_ = 0;
};

}  // namespace dlio::format_internal::parquet
