// The tarfile request model held against tarfile itself: Debian's python3 streams dlio's shards as
// a WebDataset-style loader does (tarfile.open(path, mode="r|"), every regular member read whole)
// under strace, and dlio's webdataset reader (reader.io_model tarfile) reads the same shards under
// a MemoryTracer. The read requests must be equal row by row: file, offset and size, in order.
// Skipped (77) without strace or python3, or where ptrace is not permitted.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "format/tfrecord_test_util.h"
#include "format/webdataset/webdataset_options.h"
#include "format/webdataset_test_util.h"
#include "test_util.h"

namespace dlio::testing {
namespace {

// tarfile opening the path (reader.tarfile_open path), or the file object open() gives, as
// WebDataset's gopen and tar_file_iterator do (file_object).
const char kLoader[] = R"(import sys, tarfile
for path in sys.argv[2:]:
    if sys.argv[1] == "path":
        stream = tarfile.open(path, mode="r|")
    else:
        stream = tarfile.open(fileobj=open(path, "rb"), mode="r|*")
    for member in stream:
        if member.isreg():
            stream.extractfile(member).read()
    stream.close()
)";

struct Req {
  std::string file;
  int64_t offset, size;
  bool operator==(const Req& o) const {
    return file == o.file && offset == o.offset && size == o.size;
  }
};

std::string Rows(const std::vector<Req>& rs) {
  std::string s;
  for (const Req& r : rs)
    s += r.file + " @" + std::to_string(r.offset) + " +" + std::to_string(r.size) + "\n";
  return s;
}

// read(2) calls on the shards in an strace log, offsets from each descriptor's position.
std::vector<Req> StraceReads(const std::string& log, const std::vector<std::string>& shards) {
  std::ifstream in(log);
  std::map<int, std::pair<std::string, int64_t>> fds;
  const std::regex open_re(R"re(^openat\(AT_FDCWD, "([^"]+)", .*\)\s+= (\d+)$)re");
  const std::regex read_re(R"re(^read\((\d+), .*, (\d+)\)\s+= (\d+)$)re");
  const std::regex close_re(R"re(^close\((\d+)\)\s+= 0$)re");
  std::vector<Req> out;
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, m, open_re)) {
      for (const std::string& s : shards) {
        if (m[1] == s) fds[std::stoi(m[2])] = {s, 0};
      }
    } else if (std::regex_match(line, m, read_re)) {
      auto it = fds.find(std::stoi(m[1]));
      if (it == fds.end()) continue;
      out.push_back({it->second.first, it->second.second, std::stoll(m[2])});
      it->second.second += std::stoll(m[3]);
    } else if (std::regex_match(line, m, close_re)) {
      fds.erase(std::stoi(m[1]));
    }
  }
  return out;
}

std::vector<Req> DlioReads(const std::vector<std::string>& shards, const FileSpec& spec,
                           bool python_file) {
  MemoryTracer tracer;
  auto storage = BoundPosixStorage(&tracer);
  std::vector<Req> out;
  for (const std::string& path : shards) {
    FormatOptions o;
    o.io_model = IoModel::kTarfile;
    o.samples_per_file = spec.sample_sizes.size();
    o.formats.Get<WebdatasetOptions>().tarfile_open =
        python_file ? TarfileOpen::kFileObject : TarfileOpen::kPath;
    auto r = MakeFormatByName("webdataset")->Open(storage.get(), path, o);
    REQUIRE(r.ok());
    const size_t before = tracer.Events().size();
    SampleBuffer buf;
    for (uint64_t i = 0; i < spec.sample_sizes.size(); ++i) REQUIRE((*r)->ReadSample(i, &buf).ok());
    for (const TraceEvent& e : PreadsSince(&tracer, before))
      out.push_back({path, e.offset, e.count});
  }
  return out;
}

TEST_CASE("tarfile model: dlio's reads are tarfile r|'s read(2) calls, as strace sees them",
          "[format][webdataset][io_model]") {
  if (!std::filesystem::exists("/usr/bin/strace") || !std::filesystem::exists("/usr/bin/python3")) {
    std::fprintf(stderr, "skipped: needs /usr/bin/strace and /usr/bin/python3\n");
    std::exit(77);
  }
  TempDir tmp;
  const FileSpec spec = WdsSpec({3, 9000, 10240, 100000, 512, 40000, 1, 20000}, 3);
  std::vector<std::string> shards;
  auto storage = BoundPosixStorage();
  for (int s = 0; s < 2; ++s) {
    shards.push_back(tmp / ("shard-" + std::to_string(s) + ".tar"));
    FileSpec one = spec;
    one.seed += s;
    REQUIRE(MakeFormatByName("webdataset")->Write(storage.get(), shards.back(), one, {}).ok());
  }
  WriteTextFile(tmp / "loader.py", kLoader);
  for (const std::string mode : {"path", "file_object"}) {
    const std::string log = tmp / ("strace-" + mode + ".log");
    const CommandResult run =
        RunCommand("/usr/bin/strace -qq -e trace=openat,read,close -e signal=none -o " + log +
                   " /usr/bin/python3 " + tmp / "loader.py " + mode + " " + shards[0] + " " +
                   shards[1] + " 2>&1");
    INFO(run.output);
    if (run.exit_code != 0) {
      std::fprintf(stderr, "skipped: strace could not run python3 (no ptrace?)\n");
      std::exit(77);
    }
    const std::vector<Req> want = StraceReads(log, shards);
    const std::vector<Req> got = DlioReads(shards, spec, mode == "file_object");
    INFO(mode << "\nstrace:\n" << Rows(want) << "dlio:\n" << Rows(got));
    CHECK(want.size() > 20);
    CHECK(got == want);
  }
}

}  // namespace
}  // namespace dlio::testing
