// webdataset against independent tar implementations: Python's tarfile (Debian's python3) writes
// dlio's shards byte for byte again and streams them as WebDataset does; GNU tar lists and extracts
// them; and dlio reads (samples, inspect, train) the shards tarfile writes in its pax, gnu and
// ustar formats. Skipped (77) without /usr/bin/python3 or tar.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "format/webdataset/tar_header.h"
#include "format/webdataset/webdataset_options.h"
#include "format/webdataset_test_util.h"
#include "test_util.h"

namespace dlio::testing {
namespace {

const std::string kScript = std::string(DLIO_SOURCE_DIR) + "/tests/format/webdataset_interop.py";

void SkipWithoutTools() {
  const bool python = std::filesystem::exists("/usr/bin/python3");
  const bool tar = RunCommand("tar --version >/dev/null 2>&1").exit_code == 0;
  if (python && tar) return;
  std::fprintf(stderr, "skipped: needs /usr/bin/python3 and GNU tar\n");
  std::exit(77);
}

std::string Python(const std::string& args) {
  CommandResult r = RunCommand("/usr/bin/python3 " + kScript + " " + args + " 2>&1");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return r.output;
}

std::string Hex(const std::string& s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out += d[c >> 4];
    out += d[c & 15];
  }
  return out;
}

FileSpec InteropSpec() { return WdsSpec({0, 100, 512, 3000, 70000, 1, 10240}, 5); }

std::string WriteDlioShard(const TempDir& tmp) {
  const std::string path = tmp / "dlio.tar";
  auto storage = BoundPosixStorage();
  REQUIRE(MakeFormatByName("webdataset")->Write(storage.get(), path, InteropSpec(), {}).ok());
  return path;
}

TEST_CASE("tarfile rewrites dlio's shard byte for byte and streams its members",
          "[format][webdataset][interop]") {
  SkipWithoutTools();
  TempDir tmp;
  const std::string path = WriteDlioShard(tmp);
  Python("rewrite " + path + " " + tmp / "python.tar");
  CHECK(ReadTextFile(tmp / "python.tar") == ReadTextFile(path));
  const FileSpec spec = InteropSpec();
  const auto members = nlohmann::json::parse(Python("stream " + path));
  REQUIRE(members.size() == 2 * spec.sample_sizes.size());
  for (uint64_t i = 0; i < spec.sample_sizes.size(); ++i) {
    const std::string key = format_internal::webdataset::SampleKeyOf(i);
    const std::string label = std::to_string(format_internal::SampleLabel(spec.seed, i));
    CHECK(members[2 * i][0] == key + ".jpg");
    CHECK(members[2 * i][2] == Hex(ExpectedSample(spec, i)));
    CHECK(members[2 * i + 1][0] == key + ".cls");
    CHECK(members[2 * i + 1][2] == Hex(label));
  }
}

TEST_CASE("dataset.webdataset_members: tarfile streams one member per sample, or three",
          "[format][webdataset][interop]") {
  SkipWithoutTools();
  TempDir tmp;
  const FileSpec spec = InteropSpec();
  auto storage = BoundPosixStorage();
  for (const std::string members : {"bin", "jpg,seg.png,cls"}) {
    INFO("members " << members);
    FormatOptions options;
    options.formats.Get<WebdatasetOptions>().members = members;
    const std::string path = tmp / ("m" + std::to_string(members.size()) + ".tar");
    REQUIRE(MakeFormatByName("webdataset")->Write(storage.get(), path, spec, options).ok());
    const auto listed = nlohmann::json::parse(Python("stream " + path));
    const size_t per = members == "bin" ? 1 : 3;
    REQUIRE(listed.size() == per * spec.sample_sizes.size());
    for (uint64_t i = 0; i < spec.sample_sizes.size(); ++i) {
      const std::string key = format_internal::webdataset::SampleKeyOf(i);
      const std::string label = std::to_string(format_internal::SampleLabel(spec.seed, i));
      CHECK(listed[per * i][0] == key + (per == 1 ? ".bin" : ".jpg"));
      CHECK(listed[per * i][2] == Hex(ExpectedSample(spec, i)));
      if (per == 3) {
        CHECK(listed[per * i + 1][0] == key + ".seg.png");
        CHECK(listed[per * i + 1][2] == Hex(label));
        CHECK(listed[per * i + 2][0] == key + ".cls");
      }
    }
    // inspect names the key that writes such shards (what dlio-run fit reads).
    const CommandResult inspect = RunCommand(DlioRun() + " inspect " + path);
    INFO(inspect.output);
    CHECK(inspect.exit_code == 0);
    CHECK(inspect.output.find("\"writer_keys\":{\"dataset.webdataset_members\":\"" + members +
                              "\"}") != std::string::npos);
  }
}

TEST_CASE("GNU tar lists and extracts dlio's shard", "[format][webdataset][interop]") {
  SkipWithoutTools();
  TempDir tmp;
  const std::string path = WriteDlioShard(tmp);
  const CommandResult list = RunCommand("tar -tvf " + path + " 2>&1");
  INFO(list.output);
  REQUIRE(list.exit_code == 0);
  std::string listed;  // GNU tar aligns the size column: spaces collapsed
  for (char c : list.output) {
    if (c != ' ' || listed.empty() || listed.back() != ' ') listed += c;
  }
  CHECK(listed.find("-r--r--r-- bigdata/bigdata 70000 1970-01-01 00:00 sample000004.jpg\n") !=
        std::string::npos);
  CHECK(listed.find("-r--r--r-- bigdata/bigdata 3 1970-01-01 00:00 sample000006.cls\n") !=
        std::string::npos);
  const std::string out = tmp / "x";
  const CommandResult extract = RunCommand("mkdir " + out + " && tar -xf " + path + " -C " + out);
  INFO(extract.output);
  REQUIRE(extract.exit_code == 0);
  const FileSpec spec = InteropSpec();
  for (uint64_t i = 0; i < spec.sample_sizes.size(); ++i) {
    const std::string key = out + "/" + format_internal::webdataset::SampleKeyOf(i);
    CHECK(ReadTextFile(key + ".jpg") == ExpectedSample(spec, i));
    CHECK(ReadTextFile(key + ".cls") == std::to_string(format_internal::SampleLabel(spec.seed, i)));
  }
}

TEST_CASE("pax headers for long names and sizes past 8 GiB - 1 are tarfile's",
          "[format][webdataset][interop]") {
  SkipWithoutTools();
  for (uint64_t size : {uint64_t{5}, (uint64_t{1} << 33) - 1, uint64_t{1} << 33}) {
    for (size_t len : {size_t{99}, size_t{100}, size_t{101}, size_t{300}}) {
      const std::string name = std::string(len - 4, 'n') + ".jpg";
      std::string ours;
      format_internal::tar::AppendMemberHeader(&ours, name, size, {});
      INFO("size " << size << " name length " << len);
      CHECK(Hex(ours) + "\n" == Python("header " + name + " " + std::to_string(size)));
    }
  }
}

TEST_CASE("dlio reads tarfile's pax, gnu and ustar shards: samples, inspect, train",
          "[format][webdataset][interop]") {
  SkipWithoutTools();
  for (const char* fmt : {"pax", "gnu", "ustar"}) {
    INFO("tarfile format " << fmt);
    TempDir tmp;
    const std::string dir = tmp / "data/train";
    REQUIRE(RunCommand("mkdir -p " + dir).exit_code == 0);
    const auto shards = nlohmann::json::parse(Python("write " + dir + " " + fmt));
    auto storage = BoundPosixStorage();
    auto format = MakeFormatByName("webdataset");
    for (size_t s = 0; s < shards.size(); ++s) {
      auto r = format->Open(storage.get(), dir + "/img_" + std::to_string(s) + "_of_2.tar", {});
      INFO(r.status().ToString());
      REQUIRE(r.ok());
      REQUIRE((*r)->num_samples() == 5);
      SampleBuffer buf;
      for (uint64_t i : {0, 1, 2, 3, 4, 2}) {
        REQUIRE((*r)->ReadSample(i, &buf).ok());
        CHECK(Hex(BufferString(buf)) == shards[s][i]);
      }
    }
    const CommandResult inspect = RunCommand(DlioRun() + " inspect " + dir + "/img_1_of_2.tar");
    INFO(inspect.output);
    CHECK(inspect.exit_code == 0);
    CHECK(inspect.output.find("\"num_samples\":5") != std::string::npos);
    CHECK(inspect.output.find("\"members_per_sample\":2") != std::string::npos);
    const CommandResult train = RunCommand(
        DlioRun() + " --no-generate -q -o " + tmp.path() + "/out --set dataset.format=webdataset" +
        " --set dataset.data_folder=" + tmp.path() + "/data --set dataset.num_files_train=2" +
        " --set dataset.num_samples_per_file=5 --set reader.batch_size=5" +
        " --set train.epochs=2 --set train.computation_time=0 --set workflow.train=true 2>&1");
    INFO(train.output);
    CHECK(train.exit_code == 0);
    CHECK(train.output.find("2 steps") != std::string::npos);
  }
}

}  // namespace
}  // namespace dlio::testing
