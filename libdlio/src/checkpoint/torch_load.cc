// The zip records (EOCD, central directory, local header) and a pickle machine for the opcodes of
// torch.save's state dicts: values live in an arena and refer to each other by index, so no input
// makes deep recursion, cycles of owners or unbounded memory.
#include "checkpoint/torch_load.h"

#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "checkpoint/zip_records.h"
#include "dlio/str_cat.h"

namespace dlio::checkpoint_internal {
namespace {

constexpr size_t kMaxLine = 256;                 // a GLOBAL's module or name
constexpr size_t kMaxObjects = size_t{1} << 21;  // a state dict of ~100k tensors

uint64_t Le(const std::string& s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(s[at + i]);
  return v;
}

enum class Kind { kNone, kBool, kInt, kStr, kTuple, kDict, kGlobal, kCall, kPersId };

struct Value {
  Kind kind = Kind::kNone;
  int64_t i = 0;
  std::string s;               // kStr; kGlobal: "module name"
  std::vector<int32_t> items;  // kTuple; kDict: key, value, ...; kCall: callable, args; kPersId
  int32_t state = -1;          // kDict: BUILD's state
  size_t at = 0;               // offset in the pickle of the opcode that made it
};

Value Make(Kind kind, int64_t i = 0, std::string s = {}) {
  Value v;
  v.kind = kind;
  v.i = i;
  v.s = std::move(s);
  return v;
}

class Machine {
 public:
  Machine(const std::string& what, const std::string& pickle) : what_(what), p_(pickle) {}

  // Runs to STOP; the object it returns.
  Result<int32_t> Run();
  const Value& at(int32_t v) const { return arena_[static_cast<size_t>(v)]; }

 private:
  Status Bad(const std::string& why) const {
    return Status::Corruption(what_, ": data.pkl offset ", op_at_, ": ", why);
  }
  Result<std::string> Take(size_t n) {
    if (n > p_.size() - pos_) return Bad(StrCat("needs ", n, " bytes past the end"));
    std::string out = p_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  Result<uint64_t> TakeLe(int bytes) {
    DLIO_ASSIGN_OR_RETURN(const std::string b, Take(static_cast<size_t>(bytes)));
    return Le(b, 0, bytes);
  }
  Result<std::string> Line() {
    const size_t end = p_.find('\n', pos_);
    if (end == std::string::npos || end - pos_ > kMaxLine) return Bad("a GLOBAL without its line");
    std::string out = p_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return out;
  }
  int32_t New(Value v) {
    v.at = op_at_;
    arena_.push_back(std::move(v));  // Run stops before kMaxObjects
    return static_cast<int32_t>(arena_.size() - 1);
  }
  void Push(Value v) { stack_.push_back(New(std::move(v))); }
  Result<int32_t> Pop() {
    if (stack_.size() <= Floor()) return Bad("pops an empty stack");
    const int32_t v = stack_.back();
    stack_.pop_back();
    return v;
  }
  size_t Floor() const { return marks_.empty() ? 0 : marks_.back(); }
  Result<std::vector<int32_t>> PopToMark() {
    if (marks_.empty()) return Bad("no MARK to pop to");
    std::vector<int32_t> items(stack_.begin() + static_cast<std::ptrdiff_t>(marks_.back()),
                               stack_.end());
    stack_.resize(marks_.back());
    marks_.pop_back();
    return items;
  }
  Result<Value*> TopDict() {
    if (stack_.size() <= Floor()) return Bad("no dict on the stack");
    Value* d = &arena_[static_cast<size_t>(stack_.back())];
    if (d->kind != Kind::kDict) return Bad("sets items of something that is not a dict");
    return d;
  }
  Status Tuple(size_t n);
  Status Reduce();
  Status SetItems(std::vector<int32_t> pairs);
  Status Step(uint8_t op);
  // Opcodes that push a scalar (strings, integers, booleans, None, GLOBAL); nullopt for others.
  std::optional<Status> StepScalar(uint8_t op);
  // Opcodes of the stack and its containers (marks, tuples, memo, dicts, REDUCE, BUILD,
  // persistent ids); nullopt for others.
  std::optional<Status> StepStructure(uint8_t op);

  const std::string& what_;
  const std::string& p_;
  size_t pos_ = 0, op_at_ = 0;
  std::vector<Value> arena_;
  std::vector<int32_t> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint32_t, int32_t> memo_;
  bool stopped_ = false;
};

Status Machine::Tuple(size_t n) {
  if (stack_.size() < Floor() + n) return Bad("a tuple of more items than the stack holds");
  Value t = Make(Kind::kTuple);
  t.items.assign(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
  stack_.resize(stack_.size() - n);
  Push(std::move(t));
  return Status::OK();
}

Status Machine::Reduce() {
  DLIO_ASSIGN_OR_RETURN(const int32_t args, Pop());
  DLIO_ASSIGN_OR_RETURN(const int32_t callable, Pop());
  if (at(args).kind != Kind::kTuple) return Bad("REDUCE's arguments are not a tuple");
  if (at(callable).kind == Kind::kGlobal && at(callable).s == "collections OrderedDict") {
    if (!at(args).items.empty()) return Bad("OrderedDict called with arguments");
    Push(Make(Kind::kDict));
    return Status::OK();
  }
  Value call = Make(Kind::kCall);
  call.items = {callable, args};
  Push(std::move(call));
  return Status::OK();
}

Status Machine::SetItems(std::vector<int32_t> pairs) {
  if (pairs.size() % 2 != 0) return Bad("SETITEMS with an odd number of items");
  DLIO_ASSIGN_OR_RETURN(Value * d, TopDict());
  d->items.insert(d->items.end(), pairs.begin(), pairs.end());
  return Status::OK();
}

std::optional<Status> Machine::StepScalar(uint8_t op) {
  switch (op) {
    case 'c': {
      DLIO_ASSIGN_OR_RETURN(const std::string module, Line());
      DLIO_ASSIGN_OR_RETURN(const std::string name, Line());
      Push(Make(Kind::kGlobal, 0, module + " " + name));
      return Status::OK();
    }
    case 'X':
    case 0x8c: {
      DLIO_ASSIGN_OR_RETURN(const uint64_t n, TakeLe(op == 'X' ? 4 : 1));
      DLIO_ASSIGN_OR_RETURN(std::string s, Take(static_cast<size_t>(n)));
      Push(Make(Kind::kStr, 0, std::move(s)));
      return Status::OK();
    }
    case 'K':
    case 'M': {
      DLIO_ASSIGN_OR_RETURN(const uint64_t v, TakeLe(op == 'K' ? 1 : 2));
      Push(Make(Kind::kInt, static_cast<int64_t>(v)));
      return Status::OK();
    }
    case 'J': {
      DLIO_ASSIGN_OR_RETURN(const uint64_t v, TakeLe(4));
      Push(Make(Kind::kInt, static_cast<int32_t>(static_cast<uint32_t>(v))));
      return Status::OK();
    }
    case 0x8a: {  // LONG1
      DLIO_ASSIGN_OR_RETURN(const uint64_t n, TakeLe(1));
      if (n > 8) return Bad(StrCat("an integer of ", n, " bytes"));
      DLIO_ASSIGN_OR_RETURN(const uint64_t v, TakeLe(static_cast<int>(n)));
      const bool negative = n > 0 && (v >> (8 * n - 1)) & 1;
      if (negative || (n == 8 && (v >> 63) != 0)) return Bad("a negative LONG1");
      Push(Make(Kind::kInt, static_cast<int64_t>(v)));
      return Status::OK();
    }
    case 0x88:
    case 0x89:
      Push(Make(Kind::kBool, op == 0x88));
      return Status::OK();
    case 'N':
      Push(Make(Kind::kNone));
      return Status::OK();
    default:
      return std::nullopt;
  }
}

std::optional<Status> Machine::StepStructure(uint8_t op) {
  switch (op) {
    case '(':
      marks_.push_back(stack_.size());
      return Status::OK();
    case ')':
      return Tuple(0);
    case 0x85:
      return Tuple(1);
    case 0x86:
      return Tuple(2);
    case 0x87:
      return Tuple(3);
    case 't': {
      DLIO_ASSIGN_OR_RETURN(std::vector<int32_t> items, PopToMark());
      Value t = Make(Kind::kTuple);
      t.items = std::move(items);
      Push(std::move(t));
      return Status::OK();
    }
    case 'R':
      return Reduce();
    case 'q':
    case 'r': {
      DLIO_ASSIGN_OR_RETURN(const uint64_t m, TakeLe(op == 'q' ? 1 : 4));
      if (stack_.size() <= Floor()) return Bad("PUT with an empty stack");
      memo_[static_cast<uint32_t>(m)] = stack_.back();
      return Status::OK();
    }
    case 'h':
    case 'j': {
      DLIO_ASSIGN_OR_RETURN(const uint64_t m, TakeLe(op == 'h' ? 1 : 4));
      const auto it = memo_.find(static_cast<uint32_t>(m));
      if (it == memo_.end()) return Bad(StrCat("GET of memo ", m, ", never put"));
      stack_.push_back(it->second);
      return Status::OK();
    }
    case 'Q': {
      DLIO_ASSIGN_OR_RETURN(const int32_t pid, Pop());
      Value v = Make(Kind::kPersId);
      v.items = {pid};
      Push(std::move(v));
      return Status::OK();
    }
    case '}':
      Push(Make(Kind::kDict));
      return Status::OK();
    case 's': {
      DLIO_ASSIGN_OR_RETURN(const int32_t v, Pop());
      DLIO_ASSIGN_OR_RETURN(const int32_t k, Pop());
      return SetItems({k, v});
    }
    case 'u': {
      DLIO_ASSIGN_OR_RETURN(std::vector<int32_t> pairs, PopToMark());
      return SetItems(std::move(pairs));
    }
    case 'b': {
      DLIO_ASSIGN_OR_RETURN(const int32_t state, Pop());
      DLIO_ASSIGN_OR_RETURN(Value * d, TopDict());
      d->state = state;
      return Status::OK();
    }
    default:
      return std::nullopt;
  }
}

Status Machine::Step(uint8_t op) {
  if (op == 0x80) return TakeLe(1).status();  // PROTO
  if (op == '.') {                            // STOP
    stopped_ = true;
    return Status::OK();
  }
  if (std::optional<Status> s = StepScalar(op)) return *s;
  if (std::optional<Status> s = StepStructure(op)) return *s;
  const char* hex = "0123456789abcdef";
  return Status::Unimplemented(what_, ": data.pkl offset ", op_at_, ": opcode 0x", hex[op >> 4],
                               hex[op & 15], " is not one torch.save writes for a state dict");
}

Result<int32_t> Machine::Run() {
  while (!stopped_) {
    op_at_ = pos_;
    if (pos_ >= p_.size()) return Bad("ends without STOP");
    if (arena_.size() >= kMaxObjects || stack_.size() >= kMaxObjects) {
      return Bad(StrCat("more than ", kMaxObjects, " objects"));
    }
    DLIO_RETURN_NOT_OK(Step(static_cast<uint8_t>(p_[pos_++])));
  }
  if (stack_.size() != 1 || !marks_.empty()) return Bad("STOP with more than one object left");
  return stack_.back();
}

class Reader {
 public:
  Reader(const std::string& what, const Machine& m) : what_(what), m_(m) {}

  // `why` about the object `v` (its offset in data.pkl).
  Status NotModelled(const Value& v, const std::string& why) const {
    return Status::Unimplemented(what_, ": data.pkl offset ", v.at, ": ", why,
                                 " (dlio models a flat state dict of contiguous tensors)");
  }
  const Value* Item(const Value& v, size_t k, Kind kind) const {
    if (k >= v.items.size()) return nullptr;
    const Value& x = m_.at(v.items[k]);
    return x.kind == kind ? &x : nullptr;
  }
  Result<std::vector<uint64_t>> Ints(const Value& v, const Value* t,
                                     const std::string& name) const {
    if (t == nullptr) return NotModelled(v, StrCat("tensor '", name, "' has no shape tuple"));
    std::vector<uint64_t> out;
    for (int32_t x : t->items) {
      if (m_.at(x).kind != Kind::kInt || m_.at(x).i < 0) {
        return NotModelled(v, StrCat("tensor '", name, "' has a shape that is not integers"));
      }
      out.push_back(static_cast<uint64_t>(m_.at(x).i));
    }
    return out;
  }
  Result<TorchTensor> Tensor(const std::string& name, const Value& v, size_t index) const;
  Result<std::string> Modules(const Value& dict, const TorchStateDict& sd) const;

 private:
  const std::string& what_;
  const Machine& m_;
};

Result<TorchTensor> Reader::Tensor(const std::string& name, const Value& v, size_t index) const {
  const Value* fn = Item(v, 0, Kind::kGlobal);
  const Value* args = Item(v, 1, Kind::kTuple);
  if (v.kind != Kind::kCall || fn == nullptr || fn->s != "torch._utils _rebuild_tensor_v2" ||
      args == nullptr || args->items.size() < 6) {
    return NotModelled(v, StrCat("'", name, "' is not a tensor (_rebuild_tensor_v2)"));
  }
  const Value* pid = Item(*args, 0, Kind::kPersId);
  const Value* id = pid == nullptr ? nullptr : Item(*pid, 0, Kind::kTuple);
  const Value* type = id == nullptr ? nullptr : Item(*id, 1, Kind::kGlobal);
  const Value* key = id == nullptr ? nullptr : Item(*id, 2, Kind::kStr);
  const Value* numel = id == nullptr ? nullptr : Item(*id, 4, Kind::kInt);
  const Value* offset = Item(*args, 1, Kind::kInt);
  if (type == nullptr || key == nullptr || numel == nullptr || offset == nullptr ||
      type->s.rfind("torch ", 0) != 0) {
    return NotModelled(v, StrCat("tensor '", name, "' has no storage of torch's form"));
  }
  const std::string storage = type->s.substr(6);
  if (TorchDtypeName(storage).empty()) {
    return NotModelled(v, StrCat("tensor '", name, "' has storage type ", type->s.substr(6)));
  }
  if (key->s != std::to_string(index) || offset->i != 0) {
    return NotModelled(v, StrCat("tensor '", name, "' shares a storage or is a view of one"));
  }
  TorchTensor t;
  t.name = name;
  t.storage = storage;  // element_size: ParseTorchPickle re-parses the description
  DLIO_ASSIGN_OR_RETURN(t.shape, Ints(v, Item(*args, 2, Kind::kTuple), name));
  DLIO_ASSIGN_OR_RETURN(const std::vector<uint64_t> strides,
                        Ints(v, Item(*args, 3, Kind::kTuple), name));
  uint64_t n = 1, stride = 1;
  for (size_t d = t.shape.size(); d-- > 0;) {
    if (t.shape[d] != 0 && n > (uint64_t{1} << 40) / t.shape[d]) {
      return NotModelled(v, StrCat("tensor '", name, "' is too large"));
    }
    if (strides.size() != t.shape.size() || (t.shape[d] > 1 && strides[d] != stride)) {
      return NotModelled(v, StrCat("tensor '", name, "' is not contiguous"));
    }
    stride *= t.shape[d];
    n *= t.shape[d];
  }
  if (static_cast<uint64_t>(numel->i) != n) {
    return NotModelled(v, StrCat("tensor '", name, "' uses part of its storage"));
  }
  return t;
}

// torch_modules' text for the _metadata in `dict`'s BUILD state.
Result<std::string> Reader::Modules(const Value& dict, const TorchStateDict& sd) const {
  if (dict.state < 0) return std::string("none");
  const Value& state = m_.at(dict.state);
  const Value* meta = Item(state, 1, Kind::kDict);
  const Value* key = Item(state, 0, Kind::kStr);
  if (state.kind != Kind::kDict || state.items.size() != 2 || key == nullptr ||
      key->s != "_metadata" || meta == nullptr) {
    return NotModelled(state, "the state dict's attributes are not just _metadata");
  }
  std::string text;
  for (size_t k = 0; k + 1 < meta->items.size(); k += 2) {
    const Value* name = Item(*meta, k, Kind::kStr);
    const Value* entry = Item(*meta, k + 1, Kind::kDict);
    const Value* vkey = entry == nullptr ? nullptr : Item(*entry, 0, Kind::kStr);
    const Value* version = entry == nullptr ? nullptr : Item(*entry, 1, Kind::kInt);
    if (name == nullptr || vkey == nullptr || version == nullptr || entry->items.size() != 2 ||
        vkey->s != "version" || version->i < 0 ||
        name->s.find_first_of(",=") != std::string::npos || (k == 0) != name->s.empty()) {
      return NotModelled(*meta, "a _metadata entry that is not {module: {'version': n}}");
    }
    if (k == 0) {
      if (version->i != 1) return NotModelled(*meta, "the root module's version is not 1");
      continue;
    }
    text +=
        StrCat(text.empty() ? "" : ", ", name->s, version->i == 1 ? "" : StrCat("=", version->i));
  }
  if (meta->items.empty()) return NotModelled(*meta, "_metadata without the root module");
  // "" stands for the root and the names' prefixes: use it when that is what the file holds.
  std::vector<TorchModule> implicit;
  if (auto names = TorchStateDictText(sd); names.ok()) {
    if (auto parsed = ParseTorchStateDict(*names, ""); parsed.ok()) implicit = parsed->modules;
  }
  std::string implicit_text;
  for (size_t k = 1; k < implicit.size(); ++k) {
    implicit_text += StrCat(k == 1 ? "" : ", ", implicit[k].name);
  }
  if (implicit_text == text) return std::string();
  if (text.empty())
    return NotModelled(*meta, "_metadata holds the root only, the names have modules");
  return text;
}

}  // namespace

Result<std::string> TorchStateDictText(const TorchStateDict& sd) {
  std::string out;
  for (const TorchTensor& t : sd.tensors) {
    if (t.name.empty() || t.name.find_first_of(",:") != std::string::npos ||
        t.name.front() == ' ' || t.name.back() == ' ' || t.name.front() == '\t' ||
        t.name.back() == '\t') {
      return Status::InvalidArgument("tensor name '", t.name,
                                     "' cannot be written in checkpoint.torch_state_dict");
    }
    std::string shape;
    for (uint64_t d : t.shape) shape += StrCat(shape.empty() ? "" : "x", d);
    if (t.shape.empty()) shape = "scalar";
    const std::string dtype = TorchDtypeName(t.storage);
    if (dtype.empty()) {
      return Status::InvalidArgument("tensor '", t.name, "' has storage type ", t.storage,
                                     ", which checkpoint.torch_state_dict has no dtype for");
    }
    out += StrCat(out.empty() ? "" : ", ", t.name, ":", shape, dtype == "fp32" ? "" : ":" + dtype);
  }
  return out;
}

Result<TorchSaveContents> ParseTorchPickle(const std::string& what, const std::string& pickle) {
  Machine m(what, pickle);
  DLIO_ASSIGN_OR_RETURN(const int32_t top, m.Run());
  const Value& dict = m.at(top);
  Reader r(what, m);
  if (dict.kind != Kind::kDict) return r.NotModelled(dict, "the saved object is not a dict");
  TorchSaveContents out;
  for (size_t k = 0; k + 1 < dict.items.size(); k += 2) {
    const Value& key = m.at(dict.items[k]);
    if (key.kind != Kind::kStr) return r.NotModelled(key, "a key that is not a string");
    DLIO_ASSIGN_OR_RETURN(TorchTensor t, r.Tensor(key.s, m.at(dict.items[k + 1]), k / 2));
    out.state_dict.tensors.push_back(std::move(t));
  }
  if (out.state_dict.tensors.empty()) return r.NotModelled(dict, "the state dict holds no tensor");
  auto text = TorchStateDictText(out.state_dict);
  if (!text.ok()) return r.NotModelled(dict, text.status().message());
  DLIO_ASSIGN_OR_RETURN(out.modules, r.Modules(dict, out.state_dict));
  auto sd = ParseTorchStateDict(*text, out.modules);
  if (!sd.ok()) return r.NotModelled(dict, sd.status().message());
  out.state_dict = std::move(sd).value();
  return out;
}

Result<TorchSaveContents> ReadTorchSave(const std::string& what, uint64_t file_size,
                                        const TorchByteReader& read) {
  auto bad = [&what](uint64_t offset, const std::string& why) {
    return Status::Corruption(what, ": offset ", offset, ": ", why, " (not a torch.save zip)");
  };
  if (file_size < kEndRecord) return bad(0, StrCat("a file of ", file_size, " bytes"));
  const uint64_t end_at = file_size - kEndRecord;
  DLIO_ASSIGN_OR_RETURN(const std::string end, read(end_at, kEndRecord));
  if (end.size() != kEndRecord || end.compare(0, 4, "PK\x05\x06") != 0) {
    return bad(end_at, "no end of central directory record");
  }
  const uint64_t entries = Le(end, 10, 2), cd_size = Le(end, 12, 4), cd_at = Le(end, 16, 4);
  if (cd_at == 0xFFFFFFFF || entries == 0xFFFF) {
    return Status::Unimplemented(what, ": offset ", end_at,
                                 ": zip64 records (files of 4 GiB and more) are not read");
  }
  if (cd_size > kMaxTorchLoadBytes || cd_at > end_at || cd_size > end_at - cd_at) {
    return bad(end_at, "a central directory outside the file");
  }
  DLIO_ASSIGN_OR_RETURN(const std::string cd, read(cd_at, cd_size));
  if (cd.size() != cd_size) return bad(cd_at, "a short central directory");
  TorchSaveContents out;
  uint64_t pkl_at = 0, pkl_size = 0;
  bool found = false;
  for (size_t at = 0, k = 0; k < entries; ++k) {
    if (cd_size - at < kCentralHeader || cd.compare(at, 4, "PK\x01\x02") != 0) {
      return bad(cd_at + at, "no central directory header");
    }
    const uint64_t name_size = Le(cd, at + 28, 2);
    const uint64_t skip = name_size + Le(cd, at + 30, 2) + Le(cd, at + 32, 2);
    if (skip > cd_size - at - kCentralHeader) return bad(cd_at + at, "a header past its end");
    const std::string name = cd.substr(at + kCentralHeader, name_size);
    const size_t slash = name.find('/');
    if (slash == std::string::npos || (k > 0 && name.compare(0, slash, out.archive_name) != 0)) {
      return bad(cd_at + at, StrCat("record '", name, "' is not in the archive's folder"));
    }
    if (k == 0) out.archive_name = name.substr(0, slash);
    if (Le(cd, at + 10, 2) != 0) {
      return Status::Unimplemented(what, ": offset ", cd_at + at, ": record '", name,
                                   "' is compressed");
    }
    if (name.compare(slash, std::string::npos, "/data.pkl") == 0) {
      found = true;
      pkl_size = Le(cd, at + 24, 4);
      pkl_at = Le(cd, at + 42, 4);
    }
    at += kCentralHeader + skip;
  }
  if (!found) return bad(cd_at, "no data.pkl record");
  if (pkl_size > kMaxTorchLoadBytes || pkl_at > cd_at || kLocalHeader > cd_at - pkl_at) {
    return bad(pkl_at, "data.pkl outside the file");
  }
  DLIO_ASSIGN_OR_RETURN(const std::string local, read(pkl_at, kLocalHeader));
  if (local.size() != kLocalHeader || local.compare(0, 4, "PK\x03\x04") != 0) {
    return bad(pkl_at, "no local header of data.pkl");
  }
  const uint64_t data_at = pkl_at + kLocalHeader + Le(local, 26, 2) + Le(local, 28, 2);
  if (data_at > cd_at || pkl_size > cd_at - data_at) return bad(pkl_at, "data.pkl past its end");
  DLIO_ASSIGN_OR_RETURN(const std::string pickle, read(data_at, pkl_size));
  if (pickle.size() != pkl_size) return bad(data_at, "a short data.pkl");
  DLIO_ASSIGN_OR_RETURN(TorchSaveContents parsed, ParseTorchPickle(what, pickle));
  parsed.archive_name = out.archive_name;
  return parsed;
}

}  // namespace dlio::checkpoint_internal
