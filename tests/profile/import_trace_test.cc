#include <zlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <set>
#include <string_view>
#include <utility>

#include "dlio/profile_analysis.h"
#include "profile/import/trace_importer.h"
#include "test_util.h"

namespace dlio {
namespace {

using testing::TempDir;
using testing::WriteTextFile;

std::string PfwLine(int pid, const char* name, int64_t ts, const char* path, int64_t count) {
  return "{\"id\":1,\"name\":\"" + std::string(name) +
         "\",\"cat\":\"POSIX\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(pid) +
         ",\"ts\":" + std::to_string(ts) + ",\"dur\":2,\"ph\":\"X\",\"args\":{\"fname\":\"" + path +
         "\",\"count\":" + std::to_string(count) +
         ",\"offset\":0,\"ret\":" + std::to_string(count) + "}}\n";
}

const char kDxt[] =
    "# darshan log version: 3.41\n"
    "# DXT, file_id: 1, file_name: /d/f\n"
    "# Module    Rank  Wt/Rd  Segment          Offset       Length    Start(s)      End(s)\n"
    " X_POSIX       0   read        0               0          100      0.0010      0.0020\n";

const char kStrace[] =
    "505   1795502550.162231 openat(AT_FDCWD, \"/d/s\", O_RDONLY) = 3 <0.000045>\n"
    "505   1795502550.162334 read(3, \"\\0\\0\", 2) = 2 <0.000043>\n";

const char kStraceNoPid[] =
    "1795502550.162231 openat(AT_FDCWD, \"/d/s\", O_RDONLY) = 3 <0.000045>\n"
    "1795502550.162334 read(3, \"\\0\\0\", 2) = 2 <0.000043>\n";

const char kStracePidPrefix[] =
    "[pid   506] 1795502550.162231 openat(AT_FDCWD, \"/d/s\", O_RDONLY) = 3 <0.000045>\n"
    "[pid   506] 1795502550.162334 read(3, \"\\0\\0\", 2) = 2 <0.000043>\n";

Result<ProfileTrace> Import(const std::string& path) {
  ProfileTrace t;
  DLIO_RETURN_NOT_OK(ImportTrace(path, &t).status());
  return t;
}

TEST_CASE("ImportTrace chooses the importer by content") {
  TempDir dir;
  // JSON array and bare JSON lines, under names that say nothing.
  WriteTextFile(dir / "a.txt", "[\n" + PfwLine(3, "pread64", 10, "/d/p", 7));
  WriteTextFile(dir / "b", "  \n" + PfwLine(3, "pread64", 10, "/d/p", 7));
  WriteTextFile(dir / "c.log", kDxt);
  WriteTextFile(dir / "d.pfw", kStrace);
  WriteTextFile(dir / "e", kStraceNoPid);
  WriteTextFile(dir / "e2", kStracePidPrefix);
  gzFile gz = gzopen((dir / "f.bin").c_str(), "wb");
  REQUIRE(gz != nullptr);
  const std::string line = PfwLine(4, "read", 1, "/d/g", 9);
  REQUIRE(gzwrite(gz, line.data(), static_cast<unsigned>(line.size())) ==
          static_cast<int>(line.size()));
  REQUIRE(gzclose(gz) == Z_OK);
  for (const char* name : {"a.txt", "b"}) {
    auto t = Import(dir / name);
    REQUIRE(t.ok());
    REQUIRE(t->size() == 1);
    CHECK(t->Get(0).size == 7);
  }
  auto dxt = Import(dir / "c.log");
  REQUIRE(dxt.ok());
  REQUIRE(dxt->size() == 1);
  CHECK(dxt->Get(0).category == "POSIX");
  for (const char* name : {"d.pfw", "e", "e2"}) {
    auto st = Import(dir / name);
    REQUIRE(st.ok());
    REQUIRE(st->size() == 2);
    CHECK(st->Get(1).kind == OpKind::kRead);
    CHECK(st->Get(1).path == "/d/s");
  }
  auto g = Import(dir / "f.bin");
  REQUIRE(g.ok());
  REQUIRE(g->size() == 1);
  CHECK(g->Get(0).size == 9);
}

TEST_CASE("ImportTrace of a directory imports its .pfw and .pfw.gz files in name order") {
  TempDir dir;
  WriteTextFile(dir / "trace-2.pfw", "[\n" + PfwLine(2, "read", 20, "/d/b", 2));
  WriteTextFile(dir / "trace-1.pfw", "[\n" + PfwLine(1, "read", 10, "/d/a", 1));
  gzFile gz = gzopen((dir / "trace-3.pfw.gz").c_str(), "wb");
  REQUIRE(gz != nullptr);
  const std::string line = PfwLine(3, "read", 30, "/d/c", 3);
  REQUIRE(gzwrite(gz, line.data(), static_cast<unsigned>(line.size())) ==
          static_cast<int>(line.size()));
  REQUIRE(gzclose(gz) == Z_OK);
  WriteTextFile(dir / "analysis.txt", "not a trace\n");
  std::filesystem::create_directory(dir / "sub.pfw");
  ProfileTrace t;
  auto stats = ImportTrace(dir.path(), &t);
  REQUIRE(stats.ok());
  CHECK(stats->events == 3);
  REQUIRE(t.size() == 3);
  CHECK(t.Get(0).pid == 1);
  CHECK(t.Get(1).pid == 2);
  CHECK(t.Get(2).pid == 3);
}

TEST_CASE("ImportTrace names the file it cannot read") {
  TempDir dir;
  WriteTextFile(dir / "notes.txt", "hello world\nthis is not a trace\n");
  WriteTextFile(dir / "empty", "");
  ProfileTrace t;
  for (const char* name : {"notes.txt", "empty"}) {
    auto r = ImportTrace(dir / name, &t);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(r.status().message(), Catch::Contains(dir / name) && Catch::Contains("unknown"));
  }
  auto missing = ImportTrace(dir / "missing.pfw", &t);
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.status().message(), Catch::Contains("missing.pfw"));
  TempDir empty_dir;
  auto none = ImportTrace(empty_dir.path(), &t);
  REQUIRE_FALSE(none.ok());
  CHECK_THAT(none.status().message(), Catch::Contains(empty_dir.path()));
  CHECK(t.size() == 0);
}

// The name of the first row of the importer table whose sniff accepts `head` ("" none).
std::string Sniffed(std::string_view head) {
  for (const auto& row : profile_internal::TraceImporters()) {
    if (row.sniff(head)) return std::string(row.name);
  }
  return "";
}

TEST_CASE("The importer table: one row per format, each head sniffed by its own row only") {
  std::set<std::string_view> names;
  for (const auto& row : profile_internal::TraceImporters()) {
    CHECK(names.insert(row.name).second);
    CHECK_FALSE(row.description.empty());
  }
  CHECK(names == std::set<std::string_view>{"pfw", "dxt", "strace"});
  const std::string pfw = PfwLine(3, "pread64", 10, "/d/p", 7);
  const std::pair<std::string, std::string> heads[] = {
      {"[\n" + pfw, "pfw"},         {" \n" + pfw, "pfw"},
      {"\x1f\x8b\x08", "pfw"},      {kDxt, "dxt"},
      {kStrace, "strace"},          {kStraceNoPid, "strace"},
      {kStracePidPrefix, "strace"}, {"# a comment\n\n" + std::string(kStrace), "strace"},
      {"hello world\n", ""},        {"", ""},
      {"# only comments\n", ""},    {std::string(profile_internal::kTraceHeadBytes, 'x'), ""}};
  for (const auto& [head, name] : heads) {
    INFO(head.substr(0, 40));
    CHECK(Sniffed(head) == name);
    size_t accepted = 0;
    for (const auto& row : profile_internal::TraceImporters()) accepted += row.sniff(head);
    CHECK(accepted == (name.empty() ? 0u : 1u));
  }
}

}  // namespace
}  // namespace dlio
