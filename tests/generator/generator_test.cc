#include "dlio/generator.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "dlio/storage.h"
#include "test_util.h"

namespace dlio {
namespace {

// A minimal format, local to the test (so the generator is shown to work with any Format): an
// 8-byte sample count, then the samples, byte j of sample s = (seed + s + j) & 0xff.
class RawFormat final : public Format {
 public:
  RawFormat(bool variable, std::string ext = "raw", bool files = true)
      : variable_(variable), ext_(std::move(ext)), files_(files) {}
  // Also write "<path>.idx" (as indexed_binary does) / fail after `fail_after_writes` files.
  bool companion = false;
  int fail_after_writes = -1;
  // Called at the start of every Write with the number of earlier writes.
  std::function<void(int)> on_write;
  std::string name() const override { return "rawtest"; }
  std::string extension() const override { return ext_; }
  bool variable_sample_sizes() const override { return variable_; }
  bool uses_files() const override { return files_; }

  Status Write(Storage* storage, const std::string& path, const FileSpec& spec,
               const FormatOptions&) const override {
    if (on_write) on_write(writes);
    if (companion) {
      DLIO_ASSIGN_OR_RETURN(auto idx, storage->Open(path + ".idx", OpenMode::kCreateNew));
      DLIO_RETURN_NOT_OK(idx->WriteAt(0, "index", 5));
      DLIO_RETURN_NOT_OK(idx->Close());
    }
    DLIO_ASSIGN_OR_RETURN(auto file, storage->Open(path, OpenMode::kCreateNew));
    if (writes++ == fail_after_writes) {
      DLIO_RETURN_NOT_OK(file->WriteAt(0, "partial", 7));
      return Status::ResourceExhausted("write " + path + ": injected full disk");
    }
    const uint64_t count = spec.sample_sizes.size();
    DLIO_RETURN_NOT_OK(file->WriteAt(0, &count, 8));
    uint64_t offset = 8;
    for (uint64_t s = 0; s < count; ++s) {
      std::vector<uint8_t> bytes(spec.sample_sizes[s]);
      for (size_t j = 0; j < bytes.size(); ++j) bytes[j] = static_cast<uint8_t>(spec.seed + s + j);
      DLIO_RETURN_NOT_OK(file->WriteAt(offset, bytes.data(), bytes.size()));
      offset += bytes.size();
    }
    return file->Close();
  }
  Result<std::unique_ptr<FormatReader>> Open(Storage*, const std::string& path,
                                             const FormatOptions&) const override {
    return Status::Unimplemented("rawtest cannot read " + path);
  }

  mutable int writes = 0;

 private:
  bool variable_;
  std::string ext_;
  bool files_;
};

std::unique_ptr<Storage> MemoryStorage() {
  auto storage = NewMemoryStorage();
  storage->Bind(SystemClock(), nullptr);
  return storage;
}

DatasetConfig SmallDataset(const std::string& folder) {
  DatasetConfig d;
  d.data_folder = folder;
  d.format = "rawtest";
  d.num_files_train = 5;
  d.num_files_eval = 2;
  d.num_samples_per_file = 3;
  d.record_length_bytes = 1024;
  return d;
}

// Every file under `dir`, as paths relative to it (recursive, via Storage::List).
void Walk(Storage* storage, const std::string& dir, const std::string& rel,
          std::vector<std::string>* out) {
  auto names = storage->List(dir);
  REQUIRE(names.ok());
  for (const auto& name : *names) {
    const std::string path = dir + "/" + name;
    auto is_dir = storage->IsDirectory(path);
    REQUIRE(is_dir.ok());
    if (*is_dir) {
      Walk(storage, path, rel + name + "/", out);
    } else {
      out->push_back(rel + name);
    }
  }
}

std::vector<std::string> AllFiles(Storage* storage, const std::string& dir) {
  std::vector<std::string> out;
  Walk(storage, dir, "", &out);
  return out;
}

bool Exists(Storage* storage, const std::string& path) {
  auto e = storage->Exists(path);
  REQUIRE(e.ok());
  return *e;
}

TEST_CASE("dataset files are named as DLIO names them", "[generator]") {
  RawFormat format(false, "npz");
  DatasetConfig d;
  d.data_folder = "data/";
  d.num_files_train = 8;
  d.num_files_eval = 2;
  auto train = DatasetFiles(d, format, Split::kTrain);
  REQUIRE(train.size() == 8);
  CHECK(train[0] == "data/train/img_0_of_8.npz");
  CHECK(train[7] == "data/train/img_7_of_8.npz");
  auto eval = DatasetFiles(d, format, Split::kEval);
  REQUIRE(eval.size() == 2);
  CHECK(eval[1] == "data/valid/img_1_of_2.npz");

  d.num_files_train = 168;
  d.file_prefix = "part";
  CHECK(DatasetFiles(d, format, Split::kTrain)[7] == "data/train/part_007_of_168.npz");

  d.num_files_train = 30;
  d.num_subfolders_train = 12;
  auto sub = DatasetFiles(d, format, Split::kTrain);
  CHECK(sub[5] == "data/train/05/part_05_of_30.npz");
  CHECK(sub[17] == "data/train/05/part_17_of_30.npz");
  CHECK(sub[29] == "data/train/05/part_29_of_30.npz");
  CHECK(sub[11] == "data/train/11/part_11_of_30.npz");
  d.num_subfolders_train = 1;  // DLIO only makes subfolders for k > 1
  CHECK(DatasetFiles(d, format, Split::kTrain)[5] == "data/train/part_05_of_30.npz");
  d.num_files_eval = 4;
  d.num_subfolders_eval = 3;
  CHECK(DatasetFiles(d, format, Split::kEval)[3] == "data/valid/0/part_3_of_4.npz");

  RawFormat synthetic(false, "", false);
  CHECK(DatasetFiles(d, synthetic, Split::kEval)[2] == "data/valid/2/part_2_of_4");
}

TEST_CASE("sample sizes are seeded, reproducible and plausible", "[generator]") {
  DatasetConfig d;
  d.num_samples_per_file = 1000;
  d.record_length_bytes = 100000;
  RawFormat variable(true), fixed(false);

  auto constant = DatasetFileSpec(d, variable, Split::kTrain, 3, 1);
  CHECK(constant.sample_sizes == std::vector<uint64_t>(1000, 100000));

  d.record_length_bytes_stdev = 10000;
  auto a = DatasetFileSpec(d, variable, Split::kTrain, 3, 1);
  auto b = DatasetFileSpec(d, variable, Split::kTrain, 3, 1);
  CHECK(a.sample_sizes == b.sample_sizes);
  CHECK(a.seed == b.seed);
  CHECK(DatasetFileSpec(d, variable, Split::kTrain, 4, 1).sample_sizes != a.sample_sizes);
  CHECK(DatasetFileSpec(d, variable, Split::kEval, 3, 1).sample_sizes != a.sample_sizes);
  CHECK(DatasetFileSpec(d, variable, Split::kTrain, 3, 2).sample_sizes != a.sample_sizes);
  double sum = 0, sq = 0;
  std::set<uint64_t> distinct;
  for (uint64_t s : a.sample_sizes) {
    CHECK(s >= 100000 - 7 * 10000);
    CHECK(s <= 100000 + 7 * 10000);
    sum += static_cast<double>(s);
    distinct.insert(s);
  }
  const double mean = sum / 1000;
  for (uint64_t s : a.sample_sizes) sq += (s - mean) * (s - mean);
  CHECK(std::abs(mean - 100000) < 1500);  // 1.5 standard errors of ~316 -> far inside
  CHECK(std::sqrt(sq / 999) == Approx(10000).epsilon(0.15));
  CHECK(distinct.size() > 900);

  auto f = DatasetFileSpec(d, fixed, Split::kTrain, 3, 1);
  REQUIRE(f.sample_sizes.size() == 1000);
  CHECK(std::set<uint64_t>(f.sample_sizes.begin(), f.sample_sizes.end()).size() == 1);
  CHECK(DatasetFileSpec(d, fixed, Split::kTrain, 5, 1).sample_sizes[0] != f.sample_sizes[0]);

  d.record_length_bytes = 10;
  d.record_length_bytes_stdev = 1000;  // most draws negative: clipped to 1
  for (uint64_t s : DatasetFileSpec(d, variable, Split::kTrain, 0, 1).sample_sizes) CHECK(s >= 1);
}

TEST_CASE("two ranks generate every file exactly once, with no .tmp left", "[generator]") {
  auto storage = MemoryStorage();
  RawFormat format(false);
  const DatasetConfig d = SmallDataset("ds");
  int barriers = 0;
  std::vector<uint64_t> progress;
  GenerateOptions options;
  options.world = 2;
  options.barrier = [&] {
    ++barriers;
    return Status::OK();
  };
  options.progress = [&](uint64_t done, uint64_t total, uint64_t) {
    progress.push_back(done * 100 + total);
  };
  auto r0 = GenerateDataset(d, format, FormatOptions{}, storage.get(), options);
  INFO(r0.status().ToString());
  REQUIRE(r0.ok());
  CHECK(r0->files_written == 4);  // train 0, 2, 4 and eval 0
  CHECK(progress == std::vector<uint64_t>{104, 204, 304, 404});
  options.rank = 1;
  auto r1 = GenerateDataset(d, format, FormatOptions{}, storage.get(), options);
  INFO(r1.status().ToString());
  REQUIRE(r1.ok());
  CHECK(r1->files_written == 3);  // train 1, 3 and eval 1
  CHECK(barriers == 4);           // each rank: after the folder check and after its files
  CHECK(format.writes == 7);
  const uint64_t file_bytes = 8 + 3 * 1024;
  CHECK(r0->bytes_written == 4 * file_bytes);
  CHECK(r1->bytes_written == 3 * file_bytes);

  std::vector<std::string> expected = {".dlio-dataset.json"};
  for (auto split : {Split::kTrain, Split::kEval}) {
    for (const auto& path : DatasetFiles(d, format, split)) expected.push_back(path.substr(3));
  }
  std::sort(expected.begin(), expected.end());
  CHECK(AllFiles(storage.get(), "ds") == expected);  // in particular, no *.tmp

  // Running again (as one rank) skips every existing file and writes nothing.
  GenerateOptions again;
  auto r2 = GenerateDataset(d, format, FormatOptions{}, storage.get(), again);
  REQUIRE(r2.ok());
  CHECK(r2->files_written == 0);
  CHECK(r2->files_skipped == 7);
  CHECK(format.writes == 7);
}

TEST_CASE("a changed parameter is refused naming the key", "[generator]") {
  auto storage = MemoryStorage();
  RawFormat format(false);
  DatasetConfig d = SmallDataset("ds");
  REQUIRE(GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{}).ok());
  d.record_length_bytes = 2048;
  auto r = GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{});
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kFailedPrecondition);
  CHECK(r.status().message().find(
            "dataset.record_length_bytes: existing dataset in ds has 1024, config asks 2048") == 0);
  d.record_length_bytes = 1024;
  GenerateOptions other_seed;
  other_seed.seed = 7;
  auto s = GenerateDataset(d, format, FormatOptions{}, storage.get(), other_seed);
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().message().find("train.seed") == 0);
  // A knob without effect (compression level without compression) is not a difference.
  d.compression_level = 9;
  CHECK(GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{}).ok());
}

TEST_CASE("a foreign non-empty folder is refused; force never touches foreign files",
          "[generator]") {
  testing::TempDir dir;
  namespace fs = std::filesystem;
  const std::string folder = dir / "data";
  fs::create_directories(folder + "/train");
  testing::WriteTextFile(folder + "/notes.txt", "mine");
  testing::WriteTextFile(folder + "/train/img_1_of_5.raw", "abc");  // our name, foreign content
  auto storage = NewPosixStorage(StorageOptions{});
  RawFormat format(false);
  const DatasetConfig d = SmallDataset(folder);

  auto refused = GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kAlreadyExists);
  CHECK(refused.status().message().find(folder) != std::string::npos);
  CHECK_FALSE(fs::exists(folder + "/.dlio-dataset.json"));
  CHECK_FALSE(fs::exists(folder + "/.dlio-generate.lock"));
  CHECK(format.writes == 0);

  GenerateOptions force;
  force.force = true;
  auto forced = GenerateDataset(d, format, FormatOptions{}, storage.get(), force);
  REQUIRE_FALSE(forced.ok());  // img_1_of_5.raw is not dlio's
  CHECK(forced.status().code() == StatusCode::kAlreadyExists);
  CHECK(forced.status().message().find(folder + "/train/img_1_of_5.raw") != std::string::npos);
  CHECK(testing::ReadTextFile(folder + "/train/img_1_of_5.raw") == "abc");
  CHECK(testing::ReadTextFile(folder + "/notes.txt") == "mine");
  CHECK_FALSE(fs::exists(folder + "/.dlio-dataset.json"));  // refused before writing anything
  CHECK(format.writes == 0);

  // Without the foreign file at a dataset name, the forced run completes beside notes.txt.
  fs::remove(folder + "/train/img_1_of_5.raw");
  auto done = GenerateDataset(d, format, FormatOptions{}, storage.get(), force);
  INFO(done.status().ToString());
  REQUIRE(done.ok());
  CHECK(done->files_written == 7);
  CHECK(testing::ReadTextFile(folder + "/notes.txt") == "mine");
  CHECK(fs::file_size(folder + "/train/img_1_of_5.raw") == 8 + 3 * 1024);
}

TEST_CASE("force never adopts a user's file at a dataset name, whatever its size", "[generator]") {
  testing::TempDir dir;
  namespace fs = std::filesystem;
  const std::string folder = dir / "data";
  fs::create_directories(folder + "/valid");
  const std::string theirs(100000, 'u');  // larger than the payload: plausible by size
  testing::WriteTextFile(folder + "/valid/img_0_of_2.raw", theirs);
  testing::WriteTextFile(folder + "/valid/img_1_of_2.raw.idx", "their index");  // a companion name
  auto storage = NewPosixStorage(StorageOptions{});
  RawFormat format(false);
  format.companion = true;
  GenerateOptions force;
  force.force = true;
  auto r = GenerateDataset(SmallDataset(folder), format, FormatOptions{}, storage.get(), force);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kAlreadyExists);
  CHECK(r.status().message().find(folder + "/valid/img_0_of_2.raw") != std::string::npos);
  CHECK(format.writes == 0);
  CHECK_FALSE(fs::exists(folder + "/.dlio-dataset.json"));
  CHECK(testing::ReadTextFile(folder + "/valid/img_0_of_2.raw") == theirs);

  fs::remove(folder + "/valid/img_0_of_2.raw");  // the companion name still blocks
  auto again = GenerateDataset(SmallDataset(folder), format, FormatOptions{}, storage.get(), force);
  REQUIRE_FALSE(again.ok());
  CHECK(again.status().message().find(folder + "/valid/img_1_of_2.raw.idx") != std::string::npos);
  CHECK(testing::ReadTextFile(folder + "/valid/img_1_of_2.raw.idx") == "their index");
  CHECK(format.writes == 0);
}

TEST_CASE("a staging folder in a forced foreign folder is left alone", "[generator]") {
  testing::TempDir dir;
  namespace fs = std::filesystem;
  const std::string folder = dir / "data";
  fs::create_directories(folder + "/valid/.dlio-tmp-rank0");
  testing::WriteTextFile(folder + "/valid/.dlio-tmp-rank0/img_0_of_2.raw", "theirs");
  auto storage = NewPosixStorage(StorageOptions{});
  RawFormat format(false);
  GenerateOptions force;
  force.force = true;
  auto r = GenerateDataset(SmallDataset(folder), format, FormatOptions{}, storage.get(), force);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  CHECK(r->files_written == 7);
  CHECK(testing::ReadTextFile(folder + "/valid/.dlio-tmp-rank0/img_0_of_2.raw") == "theirs");
  REQUIRE(r->warnings.size() == 1);
  CHECK(r->warnings[0].find(folder + "/valid/.dlio-tmp-rank0") != std::string::npos);
}

TEST_CASE("files inside a leftover staging folder are never deleted", "[generator]") {
  auto storage = MemoryStorage();
  RawFormat format(true);
  const DatasetConfig d = SmallDataset("ds");
  REQUIRE(GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{}).ok());
  REQUIRE(storage->Remove("ds/train/img_3_of_5.raw").ok());
  // What a crashed run leaves looks like what a user may have put there: both stay.
  for (const char* path : {"ds/train/.dlio-tmp-rank0/img_3_of_5.raw",
                           "ds/train/.dlio-tmp-rank0-123-abc/img_3_of_5.raw"}) {
    auto f = storage->Open(path, OpenMode::kCreateNew);
    REQUIRE(f.ok());
    REQUIRE((*f)->WriteAt(0, "half", 4).ok());
  }
  auto r = GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{});
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  CHECK(r->files_written == 1);
  CHECK(r->files_skipped == 6);
  CHECK(*storage->FileSize("ds/train/.dlio-tmp-rank0/img_3_of_5.raw") == 4);
  CHECK(*storage->FileSize("ds/train/.dlio-tmp-rank0-123-abc/img_3_of_5.raw") == 4);
  CHECK(r->warnings.size() == 2);
  auto spec = DatasetFileSpec(d, format, Split::kTrain, 3, GenerateOptions{}.seed);
  uint64_t payload = 8;
  for (auto s : spec.sample_sizes) payload += s;
  CHECK(*storage->FileSize("ds/train/img_3_of_5.raw") == payload);
}

TEST_CASE("companion files of a format are moved into place with their file", "[generator]") {
  auto storage = MemoryStorage();
  RawFormat format(true);
  format.companion = true;
  DatasetConfig d = SmallDataset("ds");
  d.num_subfolders_train = 2;
  auto r = GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{});
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  CHECK(AllFiles(storage.get(), "ds/train/1") ==
        std::vector<std::string>{"img_1_of_5.raw", "img_1_of_5.raw.idx", "img_3_of_5.raw",
                                 "img_3_of_5.raw.idx"});
  CHECK(AllFiles(storage.get(), "ds/valid") ==
        std::vector<std::string>{"img_0_of_2.raw", "img_0_of_2.raw.idx", "img_1_of_2.raw",
                                 "img_1_of_2.raw.idx"});
}

TEST_CASE("a failed write leaves no final-named file and no staging folder", "[generator]") {
  auto storage = MemoryStorage();
  RawFormat format(false);
  format.companion = true;
  format.fail_after_writes = 2;
  const DatasetConfig d = SmallDataset("ds");
  auto r = GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{});
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kResourceExhausted);
  CHECK(r.status().message().find("ds/train/img_2_of_5.raw") != std::string::npos);
  CHECK(AllFiles(storage.get(), "ds") ==
        std::vector<std::string>{".dlio-dataset.json", "train/img_0_of_5.raw",
                                 "train/img_0_of_5.raw.idx", "train/img_1_of_5.raw",
                                 "train/img_1_of_5.raw.idx"});
  // A rerun completes the dataset, keeping the two finished files.
  format.fail_after_writes = -1;
  auto again = GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{});
  REQUIRE(again.ok());
  CHECK(again->files_skipped == 2);
  CHECK(again->files_written == 5);
}

TEST_CASE("an orphaned companion of a killed run is replaced, also with force", "[generator]") {
  auto storage = MemoryStorage();
  RawFormat format(false);
  format.companion = true;
  const DatasetConfig d = SmallDataset("ds");
  REQUIRE(GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{}).ok());
  // A kill between the renames of the companion and its file: the index under its final name, the
  // file missing (still in the killed run's staging folder).
  REQUIRE(storage->Remove("ds/train/img_2_of_5.raw").ok());
  {
    auto idx = storage->Open("ds/train/img_2_of_5.raw.idx", OpenMode::kWrite);
    REQUIRE(idx.ok());
    REQUIRE((*idx)->WriteAt(0, "stale", 5).ok());
  }
  for (bool force : {false, true}) {
    GenerateOptions options;
    options.force = force;
    auto r = GenerateDataset(d, format, FormatOptions{}, storage.get(), options);
    INFO(r.status().ToString());
    REQUIRE(r.ok());
    CHECK(r->files_written == (force ? 0u : 1u));
    CHECK(r->files_skipped == (force ? 7u : 6u));
  }
  CHECK(*storage->FileSize("ds/train/img_2_of_5.raw") == 8 + 3 * 1024);
  auto idx = storage->Open("ds/train/img_2_of_5.raw.idx", OpenMode::kRead);
  REQUIRE(idx.ok());
  char text[6] = {};
  REQUIRE((*idx)->ReadExactAt(0, 5, text).ok());
  CHECK(std::string(text) == "index");  // the new unit's, not the orphan
}

TEST_CASE("a dangling symbolic link at a dataset name is left alone", "[generator]") {
  testing::TempDir dir;
  namespace fs = std::filesystem;
  auto storage = NewPosixStorage(StorageOptions{});
  RawFormat format(false);
  format.companion = true;
  const DatasetConfig d = SmallDataset(dir / "data");
  REQUIRE(GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{}).ok());
  for (const std::string name : {"img_1_of_5.raw", "img_1_of_5.raw.idx"}) {
    CAPTURE(name);
    const std::string link = dir / ("data/train/" + name);
    fs::remove(dir / "data/train/img_1_of_5.raw");
    fs::remove(dir / "data/train/img_1_of_5.raw.idx");
    fs::create_symlink(dir / "elsewhere/not-mounted", link);
    auto r = GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{});
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kAlreadyExists);
    CHECK(r.status().message().find(link) != std::string::npos);
    CHECK(fs::is_symlink(link));
    CHECK(fs::read_symlink(link) == dir / "elsewhere/not-mounted");
    fs::remove(link);
  }
}

TEST_CASE("a user's .dlio-dataset.json.tmp is neither overwritten nor renamed", "[generator]") {
  testing::TempDir dir;
  namespace fs = std::filesystem;
  fs::create_directories(dir / "data");
  testing::WriteTextFile(dir / "data/.dlio-dataset.json.tmp", "my notes");
  auto storage = NewPosixStorage(StorageOptions{});
  RawFormat format(false);
  const DatasetConfig d = SmallDataset(dir / "data");
  auto r = GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{});
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  CHECK(testing::ReadTextFile(dir / "data/.dlio-dataset.json.tmp") == "my notes");
  REQUIRE(r->warnings.size() == 1);  // reported, as a leftover of an earlier run would be
  CHECK(r->warnings[0].find(dir / "data/.dlio-dataset.json.tmp ") != std::string::npos);
  CHECK(testing::ReadTextFile(DatasetMarkerPath(d)).find("\"version\": 1") != std::string::npos);
  // No other temporary marker is left behind.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir / "data")) {
    names.push_back(e.path().filename());
  }
  std::sort(names.begin(), names.end());
  CHECK(names ==
        std::vector<std::string>{".dlio-dataset.json", ".dlio-dataset.json.tmp", "train", "valid"});
}

TEST_CASE("a file_prefix that is not a plain name part is refused naming the key", "[generator]") {
  testing::TempDir dir;
  namespace fs = std::filesystem;
  auto storage = NewPosixStorage(StorageOptions{});
  RawFormat format(false);
  for (const std::string prefix : {"../..", "a/b", "/abs", ".dlio-tmp-rank0"}) {
    CAPTURE(prefix);
    DatasetConfig d = SmallDataset(dir / "deep/data");
    d.file_prefix = prefix;
    auto r = GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{});
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kInvalidArgument);
    CHECK(r.status().message().find("dataset.file_prefix") == 0);
  }
  CHECK(format.writes == 0);
  CHECK_FALSE(fs::exists(dir / "deep"));
}

TEST_CASE("a second generation of a folder in use fails naming the folder and the holder",
          "[generator]") {
  testing::TempDir dir;
  for (const bool posix : {true, false}) {
    CAPTURE(posix);
    auto storage = posix ? NewPosixStorage(StorageOptions{}) : MemoryStorage();
    const DatasetConfig d = SmallDataset(dir / (posix ? "posix" : "memory"));
    RawFormat first(false), second(false);
    Result<GenerateReport> second_result = Status::Internal("not run");
    // The second generation starts while the first is writing its third file.
    first.on_write = [&](int writes) {
      if (writes != 2) return;
      std::thread other(
          [&] { second_result = GenerateDataset(d, second, FormatOptions{}, storage.get(), {}); });
      other.join();
    };
    auto r = GenerateDataset(d, first, FormatOptions{}, storage.get(), GenerateOptions{});
    INFO(r.status().ToString());
    REQUIRE(r.ok());
    CHECK(r->files_written == 7);
    REQUIRE_FALSE(second_result.ok());
    const std::string message = second_result.status().message();
    INFO(message);
    CHECK(second_result.status().code() == StatusCode::kAlreadyExists);
    CHECK(message.find("data folder " + d.data_folder + " is being generated") == 0);
    CHECK(message.find("pid " + std::to_string(::getpid())) != std::string::npos);
    CHECK(second.writes == 0);
    // Released at the end: the lock file is gone and a later run proceeds.
    CHECK_FALSE(Exists(storage.get(), d.data_folder + "/.dlio-generate.lock"));
    auto later = GenerateDataset(d, second, FormatOptions{}, storage.get(), GenerateOptions{});
    REQUIRE(later.ok());
    CHECK(later->files_skipped == 7);
  }
}

TEST_CASE("a generation killed at any file leaves no lock and a rerun completes it",
          "[generator]") {
  testing::TempDir dir;
  namespace fs = std::filesystem;
  const DatasetConfig d = SmallDataset(dir / "data");
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // killed (SIGKILL, no cleanup) while writing its fourth file
    auto storage = NewPosixStorage(StorageOptions{});
    RawFormat format(false);
    format.companion = true;
    format.on_write = [](int writes) {
      if (writes == 3) ::raise(SIGKILL);
    };
    (void)GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{});
    ::_exit(0);
  }
  int wstatus = 0;
  REQUIRE(::waitpid(child, &wstatus, 0) == child);
  REQUIRE(WIFSIGNALED(wstatus));
  CHECK(fs::exists(dir / "data/.dlio-generate.lock"));  // the file stays; its flock does not

  auto storage = NewPosixStorage(StorageOptions{});
  RawFormat format(false);
  format.companion = true;
  auto r = GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{});
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  CHECK(r->files_skipped == 3);
  CHECK(r->files_written == 4);
  CHECK(r->warnings.empty());
  REQUIRE(r->removed_leftovers.size() == 1);  // the killed run's staging folder: its owner died
  CHECK(r->removed_leftovers[0].find(dir / "data/train/.dlio-tmp-rank0-") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "data/.dlio-generate.lock"));
}

TEST_CASE("synthetic formats generate nothing and succeed", "[generator]") {
  auto storage = MemoryStorage();
  RawFormat synthetic(false, "", false);
  auto r = GenerateDataset(SmallDataset("ds"), synthetic, FormatOptions{}, storage.get(),
                           GenerateOptions{});
  REQUIRE(r.ok());
  CHECK(r->files_written == 0);
  CHECK(synthetic.writes == 0);
  CHECK_FALSE(Exists(storage.get(), "ds"));
}

TEST_CASE("the marker holds the parameters and a version", "[generator]") {
  testing::TempDir dir;
  auto storage = NewPosixStorage(StorageOptions{});
  RawFormat format(false);
  DatasetConfig d = SmallDataset(dir / "m");
  d.num_subfolders_train = 2;
  REQUIRE(DatasetMarkerPath(d) == dir / "m/.dlio-dataset.json");
  REQUIRE(GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{}).ok());
  const std::string text = testing::ReadTextFile(DatasetMarkerPath(d));
  CHECK(text.find("\"version\": 1") != std::string::npos);
  CHECK(text.find("\"dataset.record_length_bytes\": 1024") != std::string::npos);
  CHECK(text.find("\"dataset.num_subfolders_train\": 2") != std::string::npos);
  CHECK(text.find("\"dataset.format\": \"rawtest\"") != std::string::npos);
  CHECK(text.find("\"train.seed\": 123") != std::string::npos);
  CHECK(std::filesystem::exists(dir / "m/train/1/img_3_of_5.raw"));
  CHECK_FALSE(std::filesystem::exists(DatasetMarkerPath(d) + ".tmp"));
}

TEST_CASE("bad rank arguments are refused", "[generator]") {
  auto storage = MemoryStorage();
  RawFormat format(false);
  GenerateOptions options;
  options.rank = 2;
  options.world = 2;
  auto r = GenerateDataset(SmallDataset("ds"), format, FormatOptions{}, storage.get(), options);
  CHECK(r.status().code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dlio
