// The state dict description (checkpoint.torch_state_dict, checkpoint.torch_modules) and the
// pickle torch.save writes for it: CPython 3.11's _pickle at protocol 2 (memo puts after every
// string, global, tuple and reduce; SETITEM for a batch of one, MARK ... SETITEMS otherwise,
// batches of 1000) over torch 1.13's reducers (torch/_tensor.py __reduce_ex__,
// torch/serialization.py persistent_id).
#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "dlio/str_cat.h"
#include "format/torch/torch_save_file.h"

namespace dlio::torch_save {
namespace {

constexpr size_t kPickleBatch = 1000;  // pickle._BATCHSIZE

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t p = s.find(sep, start);
    out.push_back(s.substr(start, p == std::string::npos ? std::string::npos : p - start));
    if (p == std::string::npos) return out;
    start = p + 1;
  }
}

Result<uint64_t> ParseCount(const std::string& text, const std::string& key,
                            const std::string& item) {
  uint64_t v = 0;
  if (text.empty() || text.size() > 15) {
    return Status::InvalidArgument(key, ": '", item, "': '", text, "' is not a dimension");
  }
  for (char c : text) {
    if (c < '0' || c > '9') {
      return Status::InvalidArgument(key, ": '", item, "': '", text, "' is not a dimension");
    }
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

struct Dtype {
  const char* storage;
  uint64_t size;
};

// checkpoint.torch_state_dict's dtype names and their torch storage types.
const std::map<std::string, Dtype>& DtypeNames() {
  static const auto* kNames = new std::map<std::string, Dtype>{
      {"fp16", {"HalfStorage", 2}},   {"bf16", {"BFloat16Storage", 2}},
      {"fp32", {"FloatStorage", 4}},  {"fp64", {"DoubleStorage", 8}},
      {"int8", {"CharStorage", 1}},   {"uint8", {"ByteStorage", 1}},
      {"int16", {"ShortStorage", 2}}, {"int32", {"IntStorage", 4}},
      {"int64", {"LongStorage", 8}},  {"bool", {"BoolStorage", 1}}};
  return *kNames;
}

Result<Dtype> ParseDtype(const std::string& text, const std::string& item) {
  const auto& kNames = DtypeNames();
  const auto it = kNames.find(text);
  if (it == kNames.end()) {
    return Status::InvalidArgument("checkpoint.torch_state_dict: '", item, "': dtype '", text,
                                   "' is not one of fp16, bf16, fp32, fp64, int8, uint8, int16, "
                                   "int32, int64, bool");
  }
  return it->second;
}

Result<TorchTensor> ParseTensor(const std::string& item) {
  const std::vector<std::string> parts = Split(item, ':');
  if (parts.size() < 2 || parts.size() > 3 || TrimBlanks(parts[0]).empty()) {
    return Status::InvalidArgument("checkpoint.torch_state_dict: '", item,
                                   "' is not name:shape[:dtype] (shape like 7x10; scalar or "
                                   "empty for a 0-dim tensor)");
  }
  TorchTensor t;
  t.name = TrimBlanks(parts[0]);
  const std::string shape = TrimBlanks(parts[1]);
  if (!shape.empty() && shape != "scalar") {
    for (const std::string& d : Split(shape, 'x')) {
      DLIO_ASSIGN_OR_RETURN(const uint64_t n,
                            ParseCount(TrimBlanks(d), "checkpoint.torch_state_dict", item));
      t.shape.push_back(n);
    }
  }
  if (parts.size() == 3) {
    DLIO_ASSIGN_OR_RETURN(const Dtype d, ParseDtype(TrimBlanks(parts[2]), item));
    t.storage = d.storage;
    t.element_size = d.size;
  }
  return t;
}

// The root, then each dotted prefix of the names in first appearance (state_dict's preorder).
std::vector<TorchModule> ModulesOfNames(const std::vector<TorchTensor>& tensors) {
  std::vector<TorchModule> out{{"", 1}};
  std::set<std::string> seen{""};
  for (const TorchTensor& t : tensors) {
    for (size_t p = t.name.find('.'); p != std::string::npos; p = t.name.find('.', p + 1)) {
      const std::string prefix = t.name.substr(0, p);
      if (seen.insert(prefix).second) out.push_back({prefix, 1});
    }
  }
  return out;
}

// A protocol-2 pickler that knows the objects it has memoized by name.
class Pickler {
 public:
  std::string out;

  void Proto() { out += "\x80\x02"; }
  void Op(char c) { out.push_back(c); }
  void Put() {
    const uint32_t m = next_++;
    if (m < 256) {
      out.push_back('q');
      out.push_back(static_cast<char>(m));
    } else {
      out.push_back('r');
      Le32(m);
    }
  }
  void Get(uint32_t m) {
    if (m < 256) {
      out.push_back('h');
      out.push_back(static_cast<char>(m));
    } else {
      out.push_back('j');
      Le32(m);
    }
  }
  // A global or string that one Python object stands for: emitted once, then fetched.
  void Shared(const std::string& key, const std::function<void()>& emit) {
    const auto it = shared_.find(key);
    if (it != shared_.end()) return Get(it->second);
    emit();
    shared_[key] = next_;
    Put();
  }
  void Global(const std::string& module, const std::string& name) {
    Shared("global " + module + " " + name, [&] { out += "c" + module + "\n" + name + "\n"; });
  }
  void Str(const std::string& s) {
    out.push_back('X');
    Le32(static_cast<uint32_t>(s.size()));
    out += s;
    Put();
  }
  void SharedStr(const std::string& s) {
    Shared("str " + s, [&] {
      out.push_back('X');
      Le32(static_cast<uint32_t>(s.size()));
      out += s;
    });
  }
  void Int(uint64_t v) {
    if (v <= 0xff) {
      out.push_back('K');
      out.push_back(static_cast<char>(v));
    } else if (v <= 0xffff) {
      out.push_back('M');
      out.push_back(static_cast<char>(v & 0xff));
      out.push_back(static_cast<char>(v >> 8));
    } else if (v <= 0x7fffffff) {
      out.push_back('J');
      Le32(static_cast<uint32_t>(v));
    } else {  // LONG1: little-endian two's complement, (bit_length >> 3) + 1 bytes
      int bits = 0;
      for (uint64_t x = v; x != 0; x >>= 1) ++bits;
      const int n = (bits >> 3) + 1;
      out.push_back('\x8a');
      out.push_back(static_cast<char>(n));
      for (int i = 0; i < n; ++i) out.push_back(static_cast<char>(i < 8 ? (v >> (8 * i)) : 0));
    }
  }
  void IntTuple(const std::vector<uint64_t>& v) {
    if (v.empty()) return Op(')');  // the empty tuple is not memoized
    if (v.size() > 3) Op('(');
    for (uint64_t x : v) Int(x);
    Op(v.size() == 1 ? '\x85' : v.size() == 2 ? '\x86' : v.size() == 3 ? '\x87' : 't');
    Put();
  }
  // `n` key/value pairs written by `item(i)`, batched as pickle's _batch_setitems does.
  void SetItems(size_t n, const std::function<void(size_t)>& item) {
    for (size_t b = 0; b < n; b += kPickleBatch) {
      const size_t e = std::min(n, b + kPickleBatch);
      if (e - b == 1) {
        item(b);
        Op('s');
        continue;
      }
      Op('(');
      for (size_t i = b; i < e; ++i) item(i);
      Op('u');
    }
  }
  uint32_t next() const { return next_; }

 private:
  void Le32(uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  uint32_t next_ = 0;
  std::map<std::string, uint32_t> shared_;
};

std::vector<uint64_t> ContiguousStrides(const std::vector<uint64_t>& shape) {
  std::vector<uint64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

void PickleTensor(Pickler* p, const TorchTensor& t, size_t key, uint32_t ordered_dict) {
  p->Global("torch._utils", "_rebuild_tensor_v2");
  p->Op('(');
  p->Op('(');  // the persistent id ('storage', type, key, location, numel)
  p->SharedStr("storage");
  p->Global("torch", t.storage);
  p->Str(std::to_string(key));
  p->SharedStr("cpu");
  p->Int(t.elements());
  p->Op('t');
  p->Put();
  p->Op('Q');
  p->Int(0);  // storage offset
  p->IntTuple(t.shape);
  p->IntTuple(ContiguousStrides(t.shape));
  p->Op('\x89');         // requires_grad False
  p->Get(ordered_dict);  // backward hooks: OrderedDict()
  p->Op(')');
  p->Op('R');
  p->Put();
  p->Op('t');
  p->Put();
  p->Op('R');
  p->Put();
}

}  // namespace

std::string TrimBlanks(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) --e;
  return s.substr(b, e - b);
}

std::string TorchDtypeName(const std::string& storage) {
  for (const auto& [name, dtype] : DtypeNames()) {
    if (storage == dtype.storage) return name;
  }
  return "";
}

uint64_t TorchTensor::elements() const {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

uint64_t TorchTensor::bytes() const { return elements() * element_size; }

uint64_t TorchStateDict::bytes() const {
  uint64_t n = 0;
  for (const TorchTensor& t : tensors) n += t.bytes();
  return n;
}

Result<TorchStateDict> ParseTorchStateDict(const std::string& tensors, const std::string& modules) {
  TorchStateDict sd;
  std::set<std::string> names;
  for (const std::string& raw : Split(tensors, ',')) {
    const std::string item = TrimBlanks(raw);
    if (item.empty()) continue;
    DLIO_ASSIGN_OR_RETURN(TorchTensor t, ParseTensor(item));
    if (!names.insert(t.name).second) {
      return Status::InvalidArgument("checkpoint.torch_state_dict: tensor '", t.name,
                                     "' is named twice");
    }
    sd.tensors.push_back(std::move(t));
  }
  if (sd.tensors.empty()) {
    return Status::InvalidArgument(
        "checkpoint.torch_state_dict must name at least one tensor (name:shape[:dtype], ...) for "
        "checkpoint type 'torch_save'");
  }
  const std::string m = TrimBlanks(modules);
  if (m == "none") {
    sd.metadata = false;
  } else if (m.empty()) {
    sd.modules = ModulesOfNames(sd.tensors);
  } else {
    sd.modules.push_back({"", 1});
    for (const std::string& raw : Split(m, ',')) {
      const std::string item = TrimBlanks(raw);
      TorchModule mod{item, 1};
      const size_t eq = item.find('=');
      if (eq != std::string::npos) {
        mod.name = TrimBlanks(item.substr(0, eq));
        DLIO_ASSIGN_OR_RETURN(const uint64_t v, ParseCount(TrimBlanks(item.substr(eq + 1)),
                                                           "checkpoint.torch_modules", item));
        mod.version = static_cast<int64_t>(v);
      }
      if (mod.name.empty()) {
        return Status::InvalidArgument("checkpoint.torch_modules: '", item,
                                       "' names no module (the root is implicit)");
      }
      sd.modules.push_back(std::move(mod));
    }
  }
  return sd;
}

std::string TorchPickle(const TorchStateDict& sd) {
  Pickler p;
  p.Proto();
  p.Global("collections", "OrderedDict");
  const uint32_t ordered_dict = p.next() - 1;
  p.Op(')');
  p.Op('R');
  p.Put();
  p.SetItems(sd.tensors.size(), [&](size_t i) {
    p.Str(sd.tensors[i].name);
    PickleTensor(&p, sd.tensors[i], i, ordered_dict);
  });
  if (sd.metadata) {  // OrderedDict.__reduce__'s state: {'_metadata': OrderedDict(...)}
    p.Op('}');
    p.Put();
    p.Str("_metadata");
    p.Get(ordered_dict);
    p.Op(')');
    p.Op('R');
    p.Put();
    p.SetItems(sd.modules.size(), [&](size_t i) {
      p.Str(sd.modules[i].name);
      p.Op('}');
      p.Put();
      p.SharedStr("version");
      p.Int(static_cast<uint64_t>(sd.modules[i].version));
      p.Op('s');
    });
    p.Op('s');
    p.Op('b');
  }
  p.Op('.');
  if (p.out.size() < sd.pickle_bytes) p.out.resize(static_cast<size_t>(sd.pickle_bytes), '\0');
  return p.out;
}

uint64_t TorchOwnPickleSize(TorchStateDict sd) {
  sd.pickle_bytes = 0;
  return TorchPickle(sd).size();
}

Result<std::string> TorchStateDictText(const TorchStateDict& sd) {
  std::string out;
  for (const TorchTensor& t : sd.tensors) {
    if (t.name.empty() || t.name.find_first_of(",:;") != std::string::npos ||
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

}  // namespace dlio::torch_save
