// Reading torch.save files back (checkpoint/torch_load.h): the state dicts dlio writes parse to
// themselves, and every truncation and many byte flips of a file or a pickle give an error that
// names the file and an offset, never a crash.
#include "checkpoint/torch_load.h"

#include <catch2/catch.hpp>
#include <random>
#include <string>

#include "dlio/clock.h"
#include "dlio/storage.h"
#include "format/torch/torch_save_file.h"

namespace dlio::checkpoint_internal {

using torch_save::ParseTorchStateDict;
using torch_save::TorchPickle;
using torch_save::TorchSaveFileSize;
using torch_save::TorchSaveRequests;
using torch_save::TorchStateDict;
using torch_save::TorchStateDictText;
using torch_save::TorchWrite;
using torch_save::WriteTorchSave;
namespace {

TorchStateDict Parse(const std::string& tensors, const std::string& modules) {
  auto sd = ParseTorchStateDict(tensors, modules);
  INFO(sd.status().ToString());
  REQUIRE(sd.ok());
  return std::move(sd).value();
}

// The bytes of the torch.save file of `sd` under archive `name`, as dlio writes it.
std::string FileBytes(const std::string& name, const TorchStateDict& sd) {
  auto storage = NewMemoryStorage();
  storage->Bind(SystemClock(), nullptr);
  {
    auto f = storage->Open("/f.pt", OpenMode::kWrite);
    REQUIRE(f.ok());
    REQUIRE(WriteTorchSave(f->get(), name, sd, [](uint64_t o, size_t n, char* d) {
              for (size_t k = 0; k < n; ++k) d[k] = static_cast<char>(o + k);
            }).ok());
    REQUIRE((*f)->Close().ok());
  }
  auto f = storage->Open("/f.pt", OpenMode::kRead);
  REQUIRE(f.ok());
  auto size = (*f)->Size();
  REQUIRE(size.ok());
  std::string bytes(static_cast<size_t>(*size), '\0');
  REQUIRE((*f)->ReadExactAt(0, bytes.size(), bytes.data()).ok());
  return bytes;
}

Result<TorchSaveContents> ReadBytes(const std::string& bytes) {
  return ReadTorchSave(
      "f.pt", bytes.size(), [&](uint64_t offset, uint64_t n) -> Result<std::string> {
        if (offset > bytes.size() || n > bytes.size() - offset) {
          return Status::OutOfRange("f.pt: ", n, " bytes at ", offset, " past the end");
        }
        return bytes.substr(offset, n);
      });
}

const char* const kDicts[][2] = {
    {"0.weight:7x10, 0.bias:7, 2.weight:3x7, 2.bias:3", ""},
    {"0.weight:16x3x3x3, 1.weight:16, 1.bias:16, 1.running_mean:16, 1.running_var:16, "
     "1.num_batches_tracked:scalar:int64, 4.weight:10x128",
     "0, 1=2, 2, 3, 4"},
    {"a:1, b:2, c:3, d:4, e:5, f:6, g:7, h:8, i:9, j:10, k:11, l:12:fp16", ""},
    {"w:64x33, b:5, step:scalar:int64", "none"},
    {"big:70000x3:uint8, x.y.z:2x2:bf16", "x, x.y=3"},
};

TEST_CASE("torch_load: the state dicts dlio writes read back as themselves") {
  for (const auto& d : kDicts) {
    INFO(d[0] << " | " << d[1]);
    const TorchStateDict sd = Parse(d[0], d[1]);
    const std::string bytes = FileBytes("model-8", sd);
    auto got = ReadBytes(bytes);
    INFO(got.status().ToString());
    REQUIRE(got.ok());
    CHECK(got->archive_name == "model-8");
    CHECK(TorchPickle(got->state_dict) == TorchPickle(sd));  // names, shapes, dtypes, modules
    CHECK(TorchSaveFileSize("model-8", got->state_dict) == bytes.size());
    auto text = TorchStateDictText(got->state_dict);
    REQUIRE(text.ok());
    const TorchStateDict again = Parse(*text, got->modules);
    CHECK(TorchPickle(again) == TorchPickle(sd));
  }
}

TEST_CASE("torch_load: TorchSaveRequests are WriteTorchSave's requests") {
  for (const auto& d : kDicts) {
    const TorchStateDict sd = Parse(d[0], d[1]);
    auto requests = TorchSaveRequests("ck", sd);
    REQUIRE(requests.ok());
    uint64_t end = 0;
    for (const TorchWrite& w : *requests) {
      CHECK(w.offset == end);
      end += w.size;
    }
    CHECK(end == TorchSaveFileSize("ck", sd));
  }
  // 11 tensors, two of them big: the small ones ride in the writev of the next big one.
  const TorchStateDict sd =
      Parse("a:2000, b:3, c:3000, d:1, e:1, f:1, g:1, h:1, i:1, j:1, k:1", "");
  auto requests = TorchSaveRequests("ck", sd);
  REQUIRE(requests.ok());
  CHECK(requests->size() == 3);  // data.pkl + a, (b) + c, the close
}

TEST_CASE("torch_load: truncated and flipped files are errors naming the file and offset") {
  const TorchStateDict sd = Parse(kDicts[1][0], kDicts[1][1]);
  const std::string bytes = FileBytes("ck", sd);
  for (size_t n = 0; n < bytes.size(); n += 1 + n / 64) {
    auto got = ReadBytes(bytes.substr(0, n));
    INFO(n);
    REQUIRE_FALSE(got.ok());
    CHECK(got.status().message().find("f.pt") != std::string::npos);
  }
  std::mt19937_64 rng(11);
  int errors = 0;
  for (int k = 0; k < 3000; ++k) {
    std::string b = bytes;
    for (int flips = 0; flips < 3; ++flips) {
      b[rng() % b.size()] = static_cast<char>(rng());
    }
    auto got = ReadBytes(b);  // must not crash; when it fails, it says where
    if (!got.ok()) {
      ++errors;
      INFO(got.status().ToString());
      CHECK(got.status().message().find("f.pt") != std::string::npos);
      CHECK(got.status().message().find("offset") != std::string::npos);
    }
  }
  CHECK(errors > 0);
}

TEST_CASE("torch_load: every truncation and many flips of data.pkl are errors, not crashes") {
  const std::string pickle = TorchPickle(Parse(kDicts[1][0], kDicts[1][1]));
  for (size_t n = 0; n < pickle.size(); ++n) {
    auto got = ParseTorchPickle("f.pt", pickle.substr(0, n));
    INFO(n);
    REQUIRE_FALSE(got.ok());
    CHECK(got.status().message().find("f.pt: data.pkl") != std::string::npos);
  }
  std::mt19937_64 rng(7);
  for (int k = 0; k < 20000; ++k) {
    std::string p = pickle;
    p[rng() % p.size()] = static_cast<char>(rng());
    if (rng() % 4 == 0) p.insert(rng() % p.size(), 1, static_cast<char>(rng()));
    auto got = ParseTorchPickle("f.pt", p);
    INFO(got.status().ToString());
    if (!got.ok()) CHECK(got.status().message().find("f.pt: data.pkl offset") != std::string::npos);
  }
  // Deep nesting, a long run of MARKs and an unknown opcode: errors.
  CHECK_FALSE(ParseTorchPickle("f.pt", std::string(100000, '(') + ".").ok());
  CHECK_FALSE(ParseTorchPickle("f.pt", "\x80\x02" + std::string(200000, ')') + "t.").ok());
  auto unknown = ParseTorchPickle("f.pt",
                                  "\x80\x02"
                                  "d");  // DICT: protocol 2 writes EMPTY_DICT
  CHECK(unknown.status().message().find("opcode 0x64") != std::string::npos);
}

TEST_CASE("torch_load: objects that are not a flat state dict are not modelled") {
  // {'model': {}}: a nested dict, no tensors at its top.
  static const char kNested[] = "\x80\x02}q\x00X\x05\x00\x00\x00modelq\x01}q\x02s.";
  auto got = ParseTorchPickle("f.pt", std::string(kNested, sizeof(kNested) - 1));
  REQUIRE_FALSE(got.ok());
  CHECK(got.status().message().find("'model' is not a tensor") != std::string::npos);
  TorchStateDict comma;
  comma.tensors.push_back({"a,b", {1}});
  auto bad_name = TorchStateDictText(comma);
  CHECK_FALSE(bad_name.ok());
}

}  // namespace
}  // namespace dlio::checkpoint_internal
