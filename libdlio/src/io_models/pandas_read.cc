// The TextIOWrapper of CPython 3.11 (Modules/_io/textio.c: textiowrapper_read_chunk,
// _io_TextIOWrapper_read_impl, _PyIncrementalNewlineDecoder_decode) reduced to what decides its
// request sizes: how many characters each chunk of bytes decodes to.
#include "io_models/pandas_read.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "io_models/pyio/python_bytes.h"

namespace dlio::format_internal {
namespace {

// Length of the UTF-8 sequence a lead byte starts. Invalid UTF-8, which read_csv refuses
// (encoding_errors "strict"), is not modelled.
size_t SequenceLength(unsigned char b) {
  if (b < 0xC0) return 1;
  if (b < 0xE0) return 2;
  if (b < 0xF0) return 3;
  return 4;
}

bool IsContinuation(unsigned char b) { return b >= 0x80 && b < 0xC0; }

// codecs' incremental UTF-8 decoder under io.IncrementalNewlineDecoder(translate=False): counts
// the characters each chunk of bytes decodes to.
class CharCounter {
 public:
  // Characters returned for `n` more bytes at `p` (final: the end of the file).
  uint64_t Decode(const unsigned char* p, size_t n, bool final) {
    const size_t held = carry_.size();
    const size_t total = held + n;
    auto at = [&](size_t i) { return i < held ? carry_[i] : p[i - held]; };
    size_t cut = total;  // bytes decoded now; an incomplete last sequence waits for more
    if (!final) {
      size_t k = total;
      while (k > 0 && total - k < 3 && IsContinuation(at(k - 1))) --k;
      if (k > 0 && k - 1 + SequenceLength(at(k - 1)) > total) cut = k - 1;
    }
    uint64_t chars = 0;
    const size_t from_carry = std::min(cut, held);
    for (size_t i = 0; i < from_carry; ++i) chars += IsContinuation(carry_[i]) ? 0 : 1;
    for (size_t i = 0; i + held < cut; ++i) chars += IsContinuation(p[i]) ? 0 : 1;
    const bool last_cr = cut > 0 && at(cut - 1) == '\r';
    std::basic_string<unsigned char> rest;
    for (size_t i = cut; i < total; ++i) rest.push_back(at(i));
    carry_.swap(rest);
    if (pending_cr_ && (final || chars > 0)) {
      ++chars;
      pending_cr_ = false;
    }
    if (!final && chars > 0 && last_cr) {  // "retain last \r even when not translating data"
      --chars;
      pending_cr_ = true;
    }
    return chars;
  }

 private:
  std::basic_string<unsigned char> carry_;  // an incomplete sequence (at most 3 bytes)
  bool pending_cr_ = false;
};

// TextIOWrapper(BufferedReader(FileIO)) reading `file` from offset 0 into `out`.
class TextStream {
 public:
  // open(path)'s BufferedReader init: lseek(0, SEEK_CUR), whose failure CPython ignores.
  TextStream(File* file, std::vector<char>* out, bool python_bytes)
      : file_(file), out_(out), python_bytes_(python_bytes) {
    (void)file_->Seek(0, SEEK_CUR);
  }

  // TextIOWrapper.read(n): the characters returned (0 at the end of the file).
  Result<uint64_t> Read(uint64_t n) {
    uint64_t take = std::min(n, decoded_);
    decoded_ -= take;
    uint64_t remaining = n - take;
    while (remaining > 0) {
      DLIO_ASSIGN_OR_RETURN(const bool more, ReadChunk(remaining));
      if (!more) break;
      take = std::min(remaining, decoded_);
      decoded_ -= take;
      remaining -= take;
    }
    return n - remaining;
  }

 private:
  // textiowrapper_read_chunk: one read1 of the raw file; false at the end of the file.
  Result<bool> ReadChunk(uint64_t size_hint) {
    const auto scaled = static_cast<uint64_t>(std::max(b2c_, 1.0) * static_cast<double>(size_hint));
    const uint64_t size = std::max(kTextChunkBytes, scaled);
    out_->resize(static_cast<size_t>(pos_ + size));
    DLIO_ASSIGN_OR_RETURN(const size_t got, RawRead(static_cast<size_t>(size)));
    const auto* bytes = reinterpret_cast<const unsigned char*>(out_->data() + pos_);
    pos_ += got;
    out_->resize(static_cast<size_t>(pos_));
    const uint64_t chars = counter_.Decode(bytes, got, got == 0);
    decoded_ += chars;
    b2c_ = chars > 0 ? static_cast<double>(got) / static_cast<double>(chars) : 0.0;
    return got > 0 || chars > 0;
  }

  // buffer.read1(size): one read(2) into a new bytes object (python_bytes.h), whose bytes then
  // join the text; into out_ at pos_. Without python_bytes_, straight into out_.
  Result<size_t> RawRead(size_t size) {
    char* dst = out_->data() + pos_;
    if (!python_bytes_) return file_->ReadSomeAt(pos_, size, dst);
    pyio::PythonBytes bytes(size);
    if (bytes.data() == nullptr) return file_->ReadSomeAt(pos_, size, dst);
    DLIO_ASSIGN_OR_RETURN(const size_t got, file_->ReadSomeAt(pos_, size, bytes.data()));
    std::memcpy(dst, bytes.data(), got);
    return got;
  }

  File* file_;
  std::vector<char>* out_;
  bool python_bytes_;
  CharCounter counter_;
  uint64_t pos_ = 0;      // the raw file position
  uint64_t decoded_ = 0;  // characters decoded and not returned yet
  double b2c_ = 0.0;      // bytes per character of the last chunk
};

}  // namespace

Status ReadLikePandas(File* file, std::vector<char>* out, bool python_bytes) {
  out->clear();
  TextStream text(file, out, python_bytes);
  for (;;) {
    DLIO_ASSIGN_OR_RETURN(const uint64_t chars, text.Read(kPandasChunkChars));
    if (chars == 0) return Status::OK();
  }
}

}  // namespace dlio::format_internal
