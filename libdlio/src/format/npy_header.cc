#include "format/npy_header.h"

#include <cctype>
#include <cstring>
#include <string_view>

#include "format/io_util.h"

namespace dlio::format_internal {
namespace {

constexpr char kMagic[] = "\x93NUMPY";

// A Python literal as found in an NPY header: str, int, bool, None or a tuple/list of them.
struct PyValue {
  enum Kind { kStr, kInt, kBool, kNone, kSeq, kDict } kind = kNone;
  std::string str;
  uint64_t num = 0;
  bool flag = false;
  std::vector<PyValue> items;  // kSeq; kDict stores key, value, key, value...
  std::string_view text;       // source text of this value
};

class PyParser {
 public:
  explicit PyParser(std::string_view s) : s_(s) {}

  bool Parse(PyValue* v) {
    SkipSpace();
    const size_t start = pos_;
    if (pos_ >= s_.size()) return Fail("unexpected end");
    const char c = s_[pos_];
    bool ok;
    if (c == '\'' || c == '"') {
      v->kind = PyValue::kStr;
      ok = ParseString(&v->str);
    } else if (c == '(' || c == '[' || c == '{') {
      // The parser recurses once per level: bound it so a crafted header cannot overflow the stack.
      if (depth_ >= kMaxNpyNesting) {
        return Fail(StrCat("nesting deeper than ", kMaxNpyNesting, " levels"));
      }
      ++depth_;
      if (c == '{') {
        v->kind = PyValue::kDict;
        ok = ParseDict(v);
      } else {
        v->kind = PyValue::kSeq;
        ok = ParseSeq(c == '(' ? ')' : ']', v);
      }
      --depth_;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      v->kind = PyValue::kInt;
      ok = ParseInt(&v->num);
    } else if (Word("True")) {
      v->kind = PyValue::kBool, v->flag = true, ok = true;
    } else if (Word("False")) {
      v->kind = PyValue::kBool, v->flag = false, ok = true;
    } else if (Word("None")) {
      v->kind = PyValue::kNone, ok = true;
    } else {
      std::string why = "unexpected character '";
      why += c;
      why += '\'';
      return Fail(std::move(why));
    }
    v->text = s_.substr(start, pos_ - start);
    return ok;
  }

  bool AtEnd() {
    SkipSpace();
    return pos_ == s_.size();
  }
  size_t pos() const { return pos_; }
  const std::string& error() const { return error_; }

 private:
  void SkipSpace() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool Fail(std::string why) {
    if (error_.empty()) {
      error_ = StrCat(why, " at header byte ", pos_);
    }
    return false;
  }
  bool Word(std::string_view w) {
    if (s_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  bool ParseString(std::string* out) {
    const char quote = s_[pos_++];
    while (pos_ < s_.size() && s_[pos_] != quote) {
      if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) ++pos_;
      out->push_back(s_[pos_++]);
    }
    if (pos_ >= s_.size()) return Fail("unterminated string");
    ++pos_;
    return true;
  }
  bool ParseInt(uint64_t* out) {
    uint64_t v = 0;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      const uint64_t d = static_cast<uint64_t>(s_[pos_++] - '0');
      if (v > (UINT64_MAX - d) / 10) return Fail("integer overflow");
      v = v * 10 + d;
    }
    if (pos_ < s_.size() && (s_[pos_] == 'L' || s_[pos_] == 'l')) ++pos_;  // Python 2 longs
    *out = v;
    return true;
  }
  bool ParseSeq(char close, PyValue* v) {
    ++pos_;
    for (;;) {
      SkipSpace();
      if (pos_ < s_.size() && s_[pos_] == close) {
        ++pos_;
        return true;
      }
      PyValue item;
      if (!Parse(&item)) return false;
      v->items.push_back(std::move(item));
      SkipSpace();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
      } else if (pos_ >= s_.size() || s_[pos_] != close) {
        std::string why = "expected ',' or '";
        why += close;
        why += '\'';
        return Fail(std::move(why));
      }
    }
  }
  bool ParseDict(PyValue* v) {
    ++pos_;
    for (;;) {
      SkipSpace();
      if (pos_ < s_.size() && s_[pos_] == '}') {
        ++pos_;
        return true;
      }
      PyValue key, value;
      if (!Parse(&key)) return false;
      SkipSpace();
      if (pos_ >= s_.size() || s_[pos_] != ':') return Fail("expected ':'");
      ++pos_;
      if (!Parse(&value)) return false;
      v->items.push_back(std::move(key));
      v->items.push_back(std::move(value));
      SkipSpace();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
      } else if (pos_ >= s_.size() || s_[pos_] != '}') {
        return Fail("expected ',' or '}'");
      }
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
  int depth_ = 0;  // open (), [] and {} around pos_
  std::string error_;
};

bool MulOk(uint64_t a, uint64_t b, uint64_t* out) { return !__builtin_mul_overflow(a, b, out); }

// Largest item size a dtype string may give (numpy's own limit is below 2^31).
constexpr uint64_t kMaxItemSize = uint64_t{1} << 40;

// Item size of a descr value: a dtype string or a structured list of (name, dtype[, shape]).
Result<uint64_t> DescrItemSize(const PyValue& v) {
  if (v.kind == PyValue::kStr) return DtypeItemSize(v.str);
  if (v.kind != PyValue::kSeq)
    return Status::InvalidArgument("descr is neither a string nor a list");
  uint64_t total = 0;
  for (const PyValue& field : v.items) {
    if (field.kind != PyValue::kSeq || field.items.size() < 2) {
      return Status::InvalidArgument("structured field is not a (name, dtype[, shape]) tuple");
    }
    DLIO_ASSIGN_OR_RETURN(uint64_t size, DescrItemSize(field.items[1]));
    if (field.items.size() >= 3) {
      const PyValue& shape = field.items[2];
      if (shape.kind == PyValue::kInt) {
        if (!MulOk(size, shape.num, &size)) return Status::InvalidArgument("field size overflows");
      } else if (shape.kind == PyValue::kSeq) {
        for (const PyValue& d : shape.items) {
          if (d.kind != PyValue::kInt || !MulOk(size, d.num, &size)) {
            return Status::InvalidArgument("bad field shape");
          }
        }
      }
    }
    if (__builtin_add_overflow(total, size, &total)) {
      return Status::InvalidArgument("structured dtype size overflows");
    }
  }
  return total;
}

}  // namespace

Result<uint64_t> DtypeItemSize(const std::string& descr) {
  std::string_view d = descr;
  if (!d.empty() && std::strchr("<>|=", d[0]) != nullptr) d.remove_prefix(1);
  if (d.empty()) return Status::InvalidArgument("empty dtype");
  const char kind = d[0];
  d.remove_prefix(1);
  uint64_t digits = 0;
  bool have_digits = false;
  while (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0]))) {
    digits = digits * 10 + static_cast<uint64_t>(d[0] - '0');
    if (digits > kMaxItemSize) return Status::InvalidArgument("dtype '" + descr + "' is too large");
    have_digits = true;
    d.remove_prefix(1);
  }
  switch (kind) {
    case '?':
      return uint64_t{1};
    case 'O':
      return Status::Unimplemented("dtype '" + descr + "' holds Python objects (pickled)");
    case 'U':
      if (!have_digits) break;
      return digits * 4;
    case 'b':
    case 'i':
    case 'u':
    case 'f':
    case 'c':
    case 'S':
    case 'a':
    case 'V':
    case 'M':
    case 'm':
      if (!have_digits) break;
      if (!d.empty() && d[0] != '[') break;
      return digits;
    default:
      break;
  }
  return Status::InvalidArgument("unknown dtype '" + descr + "'");
}

uint64_t NpyHeader::num_samples() const {
  if (shape.empty() || fortran_order) return 1;
  return shape[0];
}

uint64_t NpyHeader::sample_size() const {
  if (shape.empty() || fortran_order) return data_bytes;
  return first_axis_slice_bytes;
}

std::string NpyHeader::ShapeJson() const {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(shape[i]);
  }
  out += ']';
  return out;
}

Result<uint64_t> ParseNpyPreamble(const uint8_t* p, size_t n, const std::string& where,
                                  uint64_t base) {
  if (n < 10) {
    return Status::Corruption(where, ": truncated npy header at offset ", base, " (", n, " bytes)");
  }
  if (std::memcmp(p, kMagic, 6) != 0) {
    return Status::Corruption(where, ": bad npy magic at offset ", base, " (expected \\x93NUMPY)");
  }
  const int major = p[6];
  if (major == 1) return uint64_t{10} + Le16(p + 8);
  if (major == 2 || major == 3) {
    if (n < 12) {
      return Status::Corruption(where, ": truncated npy header at offset ", base);
    }
    const uint64_t total = uint64_t{12} + Le32(p + 8);
    if (total > kMaxNpyHeaderBytes) {
      return Status::Corruption(where, ": npy header at offset ", base, " claims ", total,
                                " bytes; dlio accepts at most ", kMaxNpyHeaderBytes);
    }
    return total;
  }
  return Status::Corruption(where, ": unsupported npy version ", major, ".", p[7], " at offset ",
                            base + 6);
}

Result<NpyHeader> ParseNpyHeader(const uint8_t* p, size_t n, const std::string& where,
                                 uint64_t base) {
  DLIO_ASSIGN_OR_RETURN(uint64_t total, ParseNpyPreamble(p, n, where, base));
  if (n < total) {
    return Status::Corruption(where, ": truncated npy header at offset ", base, ": needs ", total,
                              " bytes, have ", n);
  }
  NpyHeader h;
  h.major = p[6];
  h.minor = p[7];
  h.data_offset = total;
  const size_t dict_start = h.major == 1 ? 10 : 12;
  const std::string_view text(reinterpret_cast<const char*>(p) + dict_start, total - dict_start);
  const uint64_t dict_offset = base + dict_start;
  auto bad = [&](const std::string& why) {
    return Status::Corruption(where, ": npy header dict at offset ", dict_offset,
                              " is unparseable: ", why);
  };
  PyParser parser(text);
  PyValue dict;
  if (!parser.Parse(&dict)) return bad(parser.error());
  if (dict.kind != PyValue::kDict) return bad("not a dict");
  if (!parser.AtEnd()) return bad(StrCat("trailing characters at header byte ", parser.pos()));
  bool have_descr = false, have_fortran = false, have_shape = false;
  for (size_t i = 0; i + 1 < dict.items.size(); i += 2) {
    const PyValue& key = dict.items[i];
    const PyValue& value = dict.items[i + 1];
    if (key.kind != PyValue::kStr) return bad("non-string key");
    if (key.str == "descr") {
      auto size = DescrItemSize(value);
      if (!size.ok()) {
        if (size.status().code() == StatusCode::kUnimplemented) {
          return Status::Unimplemented(where + ": " + size.status().message());
        }
        return bad(size.status().message());
      }
      h.itemsize = *size;
      h.structured = value.kind != PyValue::kStr;
      h.descr = h.structured ? std::string(value.text) : value.str;
      have_descr = true;
    } else if (key.str == "fortran_order") {
      if (value.kind != PyValue::kBool) return bad("fortran_order is not True/False");
      h.fortran_order = value.flag;
      have_fortran = true;
    } else if (key.str == "shape") {
      if (value.kind != PyValue::kSeq) return bad("shape is not a tuple");
      for (const PyValue& d : value.items) {
        if (d.kind != PyValue::kInt) return bad("shape holds a non-integer");
        h.shape.push_back(d.num);
      }
      have_shape = true;
    }
  }
  if (!have_descr || !have_fortran || !have_shape) {
    return bad("missing one of 'descr', 'fortran_order', 'shape'");
  }
  // The whole array and both axes' slices, each checked on its own: with a zero dimension the
  // whole is 0 bytes while a slice may still claim more than 64 bits.
  uint64_t bytes = h.itemsize, first = h.itemsize, last = h.itemsize;
  for (size_t i = 0; i < h.shape.size(); ++i) {
    const uint64_t d = h.shape[i];
    if (!MulOk(bytes, d, &bytes) || (i > 0 && !MulOk(first, d, &first)) ||
        (i + 1 < h.shape.size() && !MulOk(last, d, &last))) {
      return bad(StrCat("shape ", h.ShapeJson(), " x itemsize ", h.itemsize, " overflows 64 bits"));
    }
  }
  h.data_bytes = bytes;
  h.first_axis_slice_bytes = h.shape.empty() ? bytes : first;
  h.last_axis_slice_bytes = h.shape.empty() ? bytes : last;
  return h;
}

std::string BuildNpyHeader(const std::string& descr, const std::vector<uint64_t>& shape) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) dict += ", ";
    dict += std::to_string(shape[i]);
  }
  dict += shape.size() == 1 ? ",), }" : "), }";
  size_t preamble = 10;
  size_t total = preamble + dict.size() + 1;  // + '\n'
  size_t padded = (total + 63) / 64 * 64;
  if (padded - preamble > 0xffff) {
    preamble = 12;
    total = preamble + dict.size() + 1;
    padded = (total + 63) / 64 * 64;
  }
  std::string out("\x93NUMPY", 6);
  const size_t header_len = padded - preamble;
  if (preamble == 10) {
    out.push_back(1), out.push_back(0);
    PutLe16(&out, static_cast<uint16_t>(header_len));
  } else {
    out.push_back(2), out.push_back(0);
    PutLe32(&out, static_cast<uint32_t>(header_len));
  }
  out += dict;
  out.append(padded - total, ' ');
  out.push_back('\n');
  return out;
}

}  // namespace dlio::format_internal
