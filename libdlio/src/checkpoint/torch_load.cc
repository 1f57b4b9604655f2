// The zip records (EOCD, central directory, local header) and a pickle machine for the opcodes of
// torch.save's state dicts: values live in an arena and refer to each other by index, so no input
// makes deep recursion, cycles of owners or unbounded memory.
#include "checkpoint/torch_load.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dlio/str_cat.h"

namespace dlio::checkpoint_internal {

using torch_save::ParseTorchStateDict;
using torch_save::TorchDtypeName;
using torch_save::TorchModule;
using torch_save::TorchOwnPickleSize;
using torch_save::TorchStateDict;
using torch_save::TorchStateDictText;
using torch_save::TorchTensor;
namespace {

constexpr size_t kMaxLine = 256;                 // a GLOBAL's module or name
constexpr size_t kMaxObjects = size_t{1} << 21;  // a state dict of ~100k tensors

enum class Kind { kNone, kBool, kInt, kFloat, kStr, kTuple, kList, kDict, kGlobal, kCall, kPersId };

struct Value {
  Kind kind = Kind::kNone;
  int64_t i = 0;
  std::string s;               // kStr; kGlobal: "module name"
  std::vector<int32_t> items;  // kTuple, kList; kDict: key, value, ...; kCall: callable, args
  int32_t state = -1;          // kDict, kCall: BUILD's state
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
  size_t size() const { return arena_.size(); }

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
    case 'G':  // BINFLOAT: a nested container's scalars (lr, betas, eps)
      DLIO_RETURN_NOT_OK(Take(8).status());
      Push(Make(Kind::kFloat));
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
      if (stack_.size() <= Floor()) return Bad("BUILD without an object");
      Value& v = arena_[static_cast<size_t>(stack_.back())];
      if (v.kind != Kind::kDict && v.kind != Kind::kCall) return Bad("BUILD of a scalar");
      v.state = state;
      return Status::OK();
    }
    case ']':
      Push(Make(Kind::kList));
      return Status::OK();
    case 'a':
    case 'e': {  // APPEND, APPENDS
      std::vector<int32_t> items;
      if (op == 'a') {
        DLIO_ASSIGN_OR_RETURN(const int32_t v, Pop());
        items.push_back(v);
      } else {
        DLIO_ASSIGN_OR_RETURN(items, PopToMark());
      }
      if (stack_.size() <= Floor()) return Bad("APPEND without a list");
      Value& list = arena_[static_cast<size_t>(stack_.back())];
      if (list.kind != Kind::kList) return Bad("APPEND to something that is not a list");
      list.items.insert(list.items.end(), items.begin(), items.end());
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
  // A nested container's tensors (module, optimizer state, ...) as a state dict padded to the
  // container's pickle size.
  Result<TorchStateDict> Nested(int32_t top, uint64_t pickle_size) const;

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

// The storage key of a _rebuild_tensor_v2 call, nullopt for any other value.
std::optional<uint64_t> StorageKey(const Machine& m, const Value& v) {
  if (v.kind != Kind::kCall || v.items.size() != 2) return std::nullopt;
  const Value& fn = m.at(v.items[0]);
  const Value& args = m.at(v.items[1]);
  if (fn.kind != Kind::kGlobal || fn.s != "torch._utils _rebuild_tensor_v2" ||
      args.kind != Kind::kTuple || args.items.empty()) {
    return std::nullopt;
  }
  const Value& pid = m.at(args.items[0]);
  if (pid.kind != Kind::kPersId || pid.items.size() != 1) return std::nullopt;
  const Value& id = m.at(pid.items[0]);
  if (id.kind != Kind::kTuple || id.items.size() < 3) return std::nullopt;
  const Value& key = m.at(id.items[2]);
  if (key.kind != Kind::kStr || key.s.empty() || key.s.size() > 9 ||
      key.s.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return std::stoull(key.s);
}

// A path component as checkpoint.torch_state_dict can hold it.
std::string NamePart(std::string s) {
  for (char& c : s) {
    if (c == ',' || c == ':' || c == ';' || c == ' ' || c == '\t') c = '_';
  }
  return s.empty() ? "_" : s;
}

Result<TorchStateDict> Reader::Nested(int32_t top, uint64_t pickle_size) const {
  struct Found {
    uint64_t key;
    std::string name;
    int32_t v;
  };
  std::vector<Found> found;
  std::vector<bool> seen(m_.size(), false);  // each value once: memo GETs and cycles end here
  std::vector<std::pair<int32_t, std::string>> todo{{top, ""}};
  while (!todo.empty()) {
    const int32_t v = todo.back().first;
    const std::string path = std::move(todo.back().second);
    todo.pop_back();
    if (seen[static_cast<size_t>(v)]) continue;
    seen[static_cast<size_t>(v)] = true;
    const Value& x = m_.at(v);
    const auto child = [&path](const std::string& part) {
      return path.empty() ? part : path + "." + part;
    };
    const size_t first = todo.size();
    if (x.kind == Kind::kDict) {
      for (size_t k = 0; k + 1 < x.items.size(); k += 2) {
        const Value& key = m_.at(x.items[k]);
        const std::string part = key.kind == Kind::kStr   ? NamePart(key.s)
                                 : key.kind == Kind::kInt ? std::to_string(key.i)
                                                          : std::to_string(k / 2);
        todo.emplace_back(x.items[k + 1], child(part));
      }
    } else if (x.kind == Kind::kList || x.kind == Kind::kTuple) {
      for (size_t i = 0; i < x.items.size(); ++i) {
        todo.emplace_back(x.items[i], child(std::to_string(i)));
      }
    } else if (const std::optional<uint64_t> key = StorageKey(m_, x)) {
      found.push_back({*key, path.empty() ? "tensor" : path, v});
    } else if (x.kind == Kind::kCall) {
      todo.emplace_back(x.items[1], path);  // an object's arguments (a Parameter's tensor)
    }
    std::reverse(todo.begin() + static_cast<std::ptrdiff_t>(first), todo.end());
  }
  if (found.empty()) return NotModelled(m_.at(top), "the saved object holds no tensor");
  std::sort(found.begin(), found.end(),
            [](const Found& a, const Found& b) { return a.key < b.key; });
  // Named by their paths, or by their keys when those names pickle past the container's size.
  for (const bool by_key : {false, true}) {
    TorchStateDict sd;
    sd.metadata = false;
    for (size_t i = 0; i < found.size(); ++i) {
      const std::string name = by_key ? std::to_string(i) : found[i].name;
      DLIO_ASSIGN_OR_RETURN(TorchTensor t, Tensor(name, m_.at(found[i].v), i));
      sd.tensors.push_back(std::move(t));
    }
    auto text = TorchStateDictText(sd);
    if (!text.ok()) return NotModelled(m_.at(top), text.status().message());
    auto parsed = ParseTorchStateDict(*text, "none");  // duplicate names fail here
    if (!parsed.ok()) continue;
    parsed->pickle_bytes = pickle_size;
    if (TorchOwnPickleSize(*parsed) <= pickle_size) return std::move(parsed).value();
  }
  return NotModelled(m_.at(top), "its tensors pickle to more than the container");
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

namespace {

Result<TorchSaveContents> FlatStateDict(const Machine& m, const Reader& r, int32_t top) {
  const Value& dict = m.at(top);
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

}  // namespace

Result<TorchSaveContents> ParseTorchPickle(const std::string& what, const std::string& pickle) {
  Machine m(what, pickle);
  DLIO_ASSIGN_OR_RETURN(const int32_t top, m.Run());
  Reader r(what, m);
  Result<TorchSaveContents> flat = FlatStateDict(m, r, top);
  if (flat.ok() || flat.status().code() != StatusCode::kUnimplemented) return flat;
  // A nested container ({'module': ..., 'optimizer': ...}): its tensors, data.pkl's size.
  auto nested = r.Nested(top, pickle.size());
  if (!nested.ok()) return flat.status();
  TorchSaveContents out;
  out.state_dict = std::move(nested).value();
  out.modules = "none";
  return out;
}

}  // namespace dlio::checkpoint_internal
