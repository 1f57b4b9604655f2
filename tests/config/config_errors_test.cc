// What the config parser refuses, naming the key, file and line: type errors, unknown keys,
// YAML syntax, duplicate keys, files that are not bounded regular files, non-UTF-8 strings.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <future>

#include "dlio/config.h"
#include "test_util.h"

namespace dlio {
namespace {

TEST_CASE("type errors name the key, the value, the file and the line") {
  auto e = ParseConfig("dataset:\n  format: npz\n\n  num_files_train: abc\n", "cfg.yaml");
  REQUIRE_FALSE(e.ok());
  CHECK(e.status().code() == StatusCode::kInvalidArgument);
  CHECK(e.status().message() ==
        "dataset.num_files_train: expected an unsigned integer, got 'abc' (in cfg.yaml line 4)");

  auto neg = ParseConfig("reader:\n  batch_size: -4\n", "n.yaml");
  REQUIRE_FALSE(neg.ok());
  CHECK(neg.status().message().find("reader.batch_size: expected an unsigned integer, got '-4'") !=
        std::string::npos);

  auto frac = ParseConfig("reader:\n  batch_size: 1.5\n", "f.yaml");
  REQUIRE_FALSE(frac.ok());
  CHECK(frac.status().message().find("got '1.5'") != std::string::npos);

  auto b = ParseConfig("workflow: {train: maybe}", "b.yaml");
  REQUIRE_FALSE(b.ok());
  CHECK(b.status().message().find("workflow.train: expected a boolean") != std::string::npos);

  auto d = ParseConfig("metric: {au: high}", "d.yaml");
  REQUIRE_FALSE(d.ok());
  CHECK(d.status().message().find("metric.au: expected a number, got 'high'") != std::string::npos);

  auto i = ParseConfig("train: {total_training_steps: -7}", "i.yaml");
  REQUIRE_FALSE(i.ok());
  CHECK(
      i.status().message() ==
      "train.total_training_steps: -7 is out of range (accepted: -1, or >= 1) (in i.yaml line 1)");

  auto range = ParseConfig("reader:\n  batch_size: 4\n  read_threads: 100000\n", "r.yaml");
  REQUIRE_FALSE(range.ok());
  CHECK(range.status().message() ==
        "reader.read_threads: 100000 is out of range (accepted: 0 to 1024) (in r.yaml line 3)");

  auto nice = ParseConfig("reader: {thread_nice: 20}", "n.yaml");
  REQUIRE_FALSE(nice.ok());
  CHECK(nice.status().message() ==
        "reader.thread_nice: 20 is out of range (accepted: -1 to 19) (in n.yaml line 1)");

  auto en = ParseConfig("reader: {file_shuffle: sed}", "e.yaml");
  REQUIRE_FALSE(en.ok());
  CHECK(en.status().message().find(
            "reader.file_shuffle: expected one of off, seed, random, got 'sed'") !=
        std::string::npos);

  // reader.data_loader: DLIO's DataLoaderType values and dlio's own, nothing else.
  auto loader = ParseConfig("reader: {data_loader: keras}", "l.yaml");
  REQUIRE_FALSE(loader.ok());
  CHECK(loader.status().message() ==
        "reader.data_loader: expected one of dlio, pytorch, tensorflow, dali, native_dali, "
        "synthetic, custom, none, daos_pytorch, got 'keras' (in l.yaml line 1)");
  for (const char* name : {"dlio", "pytorch", "tensorflow", "dali", "native_dali", "synthetic",
                           "custom", "none", "daos_pytorch"}) {
    CAPTURE(name);
    auto ok = ParseConfig(std::string("reader: {data_loader: ") + name + "}", "l.yaml");
    REQUIRE(ok.ok());
    CHECK(EnumName(ok->reader.data_loader) == name);
  }

  auto map_for_string = ParseConfig("dataset: {format: {a: 1}}", "m.yaml");
  REQUIRE_FALSE(map_for_string.ok());
  CHECK(map_for_string.status().message().find("dataset.format: expected a string, got a map") !=
        std::string::npos);

  auto dist = ParseConfig("train: {computation_time: {mean: 1, sd: 2}}", "t.yaml");
  REQUIRE_FALSE(dist.ok());
  CHECK(dist.status().message().find("unknown key 'train.computation_time.sd'") !=
        std::string::npos);

  auto dtype = ParseConfig("train: {computation_time: {type: normall, mean: 1}}", "t.yaml");
  REQUIRE_FALSE(dtype.ok());
  CHECK(dtype.status().message().find("train.computation_time.type: expected one of constant, "
                                      "normal, uniform") != std::string::npos);
}

TEST_CASE("unknown keys are errors with a did-you-mean") {
  auto e = ParseConfig("dataset:\n  num_file_train: 8\n", "cfg.yaml");
  REQUIRE_FALSE(e.ok());
  CHECK(e.status().message() ==
        "unknown key 'dataset.num_file_train' (in cfg.yaml line 2) "
        "(did you mean 'dataset.num_files_train'?)");

  auto section = ParseConfig("readr:\n  batch_size: 8\n", "cfg.yaml");
  REQUIRE_FALSE(section.ok());
  CHECK(section.status().message().find("unknown key 'readr' (in cfg.yaml line 1)") !=
        std::string::npos);
  CHECK(section.status().message().find("did you mean 'reader'?") != std::string::npos);

  auto far = ParseConfig("zzzzzzzzzzzzzz: 1\n", "cfg.yaml");
  REQUIRE_FALSE(far.ok());
  CHECK(far.status().message().find("did you mean") == std::string::npos);
}

TEST_CASE("YAML syntax errors give the line and column") {
  auto e = ParseConfig("dataset:\n  format: [npz\n  num_files_train: 3\n", "broken.yaml");
  REQUIRE_FALSE(e.ok());
  CHECK(e.status().message().rfind("broken.yaml line ", 0) == 0);
  CHECK(e.status().message().find("column") != std::string::npos);
  CHECK(e.status().message().find("YAML syntax error") != std::string::npos);
}

TEST_CASE("a key given twice in one map is an error naming both lines") {
  auto twice = ParseConfig("dataset:\n  num_files_train: 4\n  format: npz\n  num_files_train: 8\n",
                           "d.yaml");
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.status().code() == StatusCode::kInvalidArgument);
  CHECK(twice.status().message() ==
        "duplicate key 'dataset.num_files_train' (in d.yaml lines 2 and 4): a key may be given "
        "once");

  auto alias = ParseConfig("dataset:\n  record_length: 10\n  record_length_bytes: 20\n", "a.yaml");
  REQUIRE_FALSE(alias.ok());
  CHECK(alias.status().message() ==
        "duplicate key 'dataset.record_length_bytes', given as 'dataset.record_length' and "
        "'dataset.record_length_bytes' (in a.yaml lines 2 and 3): a key may be given once");

  auto sections = ParseConfig(
      "reader: {batch_size: 2}\ntrain: {epochs: 2}\nreader: {read_threads: 2}\n", "s.yaml");
  REQUIRE_FALSE(sections.ok());
  CHECK(sections.status().message().find("duplicate key 'reader' (in s.yaml lines 1 and 3)") == 0);

  auto json = ParseConfig(R"({"train": {"epochs": 2, "epochs": 3}})", "c.json");
  REQUIRE_FALSE(json.ok());
  CHECK(json.status().message().find("duplicate key 'train.epochs'") == 0);

  WorkloadConfig c;
  Status override_twice = ApplyOverride(&c, "reader={batch_size: 1, batch_size: 2}");
  CHECK(override_twice.message().find("duplicate key 'reader.batch_size'") == 0);

  // The same key in different maps is fine (a section, and the workload wrapper's section).
  auto different_maps =
      ParseConfig("train: {epochs: 2}\nworkload: {train: {epochs: 3}}\n", "x.yaml");
  REQUIRE(different_maps.ok());
  CHECK(different_maps->train.epochs == 3);
}

// LoadConfigFile on another thread: a FIFO must be refused at once, not block until a writer
// appears (if it blocks, a writer is opened so the test ends and fails).
Status LoadWithin(const std::string& path) {
  auto loaded = std::async(std::launch::async, [&] { return LoadConfigFile(path).status(); });
  if (loaded.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    const int writer = ::open(path.c_str(), O_WRONLY);
    if (writer >= 0) ::close(writer);
    loaded.wait();
    return Status::Internal("LoadConfigFile blocked on " + path);
  }
  return loaded.get();
}

TEST_CASE("LoadConfigFile reads only bounded regular files and warns about an empty one") {
  testing::TempDir dir;
  const std::string fifo = dir / "fifo.yaml";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  Status f = LoadWithin(fifo);
  CHECK(f.code() == StatusCode::kInvalidArgument);
  CHECK(f.message() == "config file '" + fifo +
                           "' is a FIFO, not a regular file: dlio reads a config only from a "
                           "regular file");

  Status zero = LoadWithin("/dev/zero");
  CHECK(zero.code() == StatusCode::kInvalidArgument);
  CHECK(zero.message().find("'/dev/zero' is a character device") != std::string::npos);
  CHECK(LoadWithin(dir.path()).message().find("is a directory") != std::string::npos);

  {
    std::string big(static_cast<size_t>(kMaxConfigFileBytes) + 1, ' ');
    testing::WriteTextFile(dir / "big.yaml", big);
  }
  Status big = LoadConfigFile(dir / "big.yaml").status();
  CHECK(big.code() == StatusCode::kInvalidArgument);
  CHECK(big.message().find("more than the 16777216 a config may have") != std::string::npos);

  for (const char* text : {"", "# only a comment\n", "{}\n"}) {
    INFO("'" << text << "'");
    testing::WriteTextFile(dir / "empty.yaml", text);
    std::vector<std::string> warnings;
    auto empty = LoadConfigFile(dir / "empty.yaml", WorkloadConfig(), &warnings);
    REQUIRE(empty.ok());
    CHECK(empty->dataset.num_files_train == WorkloadConfig().dataset.num_files_train);
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0] ==
          dir / "empty.yaml" + " is empty: it sets no key, so every value keeps its default");
  }
  std::vector<std::string> none;
  REQUIRE(LoadConfigFile(dir / "big.yaml", WorkloadConfig(), &none).status().code() ==
          StatusCode::kInvalidArgument);
}

TEST_CASE("string values must be UTF-8 text, so the JSON dlio writes can hold them") {
  // A fuzz finding: a non-UTF-8 byte passed parsing and validation, then ConfigToJson threw.
  auto parsed = ParseConfig("dataset:\n  data_folder: data/\xd5\n", "bad.yaml");
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.status().code() == StatusCode::kInvalidArgument);
  CHECK(parsed.status().message().find("dataset.data_folder") != std::string::npos);
  CHECK(parsed.status().message().find("UTF-8") != std::string::npos);

  WorkloadConfig config;  // set by code rather than parsed: Validate says the same
  config.dataset.file_prefix = "img\xff";
  const Status status = config.Validate();
  REQUIRE_FALSE(status.ok());
  CHECK(status.message().find("dataset.file_prefix") != std::string::npos);
  CHECK_NOTHROW(ConfigToJson(config));  // and export never throws

  auto ok = ParseConfig(
      "dataset:\n  data_folder: \"donn\xc3\xa9"
      "es/\xe2\x82\xac\"\n",
      "ok.yaml");
  REQUIRE(ok.ok());
  CHECK(ok->dataset.data_folder ==
        "donn\xc3\xa9"
        "es/\xe2\x82\xac");
}

TEST_CASE("reading a small config leaves glibc's mmap threshold where it was") {
  // A 16 MiB read buffer freed at start-up raised the threshold to 16 MiB for the whole run, so the
  // numpy model's 256 KiB reads never landed in fresh pages as Python's do (docs/io_models.md).
  testing::TempDir dir;
  testing::WriteTextFile(dir / "small.yaml", "dataset: {format: npz, num_files_train: 4}\n");
  const size_t probe = size_t{2} << 20;
  const int before = testing::MallocMapsInChild(probe, [] {});
  if (before != 1) {
    WARN("malloc(2 MiB) is not mmapped in a fresh child here; nothing to compare");
    return;
  }
  const std::string path = dir / "small.yaml";
  CHECK(testing::MallocMapsInChild(probe, [&] { (void)LoadConfigFile(path); }) == 1);
}

}  // namespace
}  // namespace dlio
