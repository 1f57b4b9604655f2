// The sweep's --vary parsing, grid, point names, search rule (a fake runner replays hand-made AU
// sequences) and its CSV/JSON/SVG/HTML output.
#include "dlio/sweep.h"

#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

using dlio::SweepAxis;
using dlio::SweepMeasurement;
using dlio::SweepPlan;
using dlio::SweepPoint;
using dlio::SweepResult;
using json = nlohmann::json;

namespace {

SweepAxis Axis(const std::string& spec) {
  auto a = dlio::ParseSweepAxis(spec);
  REQUIRE(a.ok());
  return *a;
}

std::string ParseError(const std::string& spec) {
  auto a = dlio::ParseSweepAxis(spec);
  REQUIRE_FALSE(a.ok());
  CHECK(a.status().code() == dlio::StatusCode::kInvalidArgument);
  return a.status().ToString();
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// A runner replaying AU by the last axis's value (and by the other axes' values through `key`);
// records the points it was asked to run.
struct FakeRunner {
  std::map<std::string, double> au;  // "fixed|value" or "value" -> AU
  std::set<std::string> failing;     // values that fail
  std::vector<std::string> ran;      // labels in order
  std::vector<SweepAxis> axes;
  dlio::Result<SweepMeasurement> operator()(const SweepPoint& p, size_t) {
    ran.push_back(dlio::SweepPointLabel(axes, p));
    std::string key;
    for (size_t i = 0; i + 1 < p.values.size(); ++i) key += p.values[i] + "|";
    key += p.values.back();
    if (failing.count(key)) return dlio::Status::IOError("point ", key, " broke");
    SweepMeasurement m;
    m.au_percent = au.at(key);
    m.samples_per_s = 100 * m.au_percent;
    m.bytes_per_s = 1e6 * m.au_percent;
    m.epoch_seconds = {1.5, 1.0};
    m.has_steady = true;
    m.first_epoch_au_percent = m.au_percent - 1;
    m.steady_au_percent = m.au_percent + 1;
    m.output_folder = "out/" + dlio::SweepPointName(axes, p);
    return m;
  }
};

SweepResult Run(FakeRunner* fake, std::vector<SweepAxis> axes, std::optional<double> target,
                bool fail_fast = false) {
  SweepPlan plan;
  if (target) REQUIRE(dlio::SortLastAxisForSearch(&axes).ok());
  plan.axes = axes;
  plan.until_au_below = target;
  plan.fail_fast = fail_fast;
  fake->axes = axes;
  return dlio::RunSweep(plan, [fake](const SweepPoint& p, size_t i) { return (*fake)(p, i); });
}

}  // namespace

TEST_CASE("ParseSweepAxis: KEY=v1,v2,... with override prefixes") {
  SweepAxis a = Axis("reader.read_threads=1,2,4");
  CHECK(a.key == "reader.read_threads");
  CHECK(a.values == std::vector<std::string>{"1", "2", "4"});
  CHECK(Axis("++workload.train.computation_time=0.01, 0.02").key == "train.computation_time");
  CHECK(Axis("++workload.train.computation_time=0.01, 0.02").values ==
        std::vector<std::string>{"0.01", "0.02"});
  CHECK(Axis("workload.reader.batch_size=8").values == std::vector<std::string>{"8"});
  CHECK(Axis("dataset.format=npz,hdf5").values == std::vector<std::string>{"npz", "hdf5"});
}

TEST_CASE("ParseSweepAxis: integer ranges LO:HI[:STEP], other colons kept") {
  CHECK(Axis("train.accelerators_per_process=1:4,8,16:32:8").values ==
        std::vector<std::string>{"1", "2", "3", "4", "8", "16", "24", "32"});
  CHECK(Axis("k.n=-2:0").values == std::vector<std::string>{"-2", "-1", "0"});
  CHECK(Axis("k.n=5:5").values == std::vector<std::string>{"5"});
  CHECK(Axis("k.s=a:b,1:2:3:4,1.5:2").values ==
        std::vector<std::string>{"a:b", "1:2:3:4", "1.5:2"});
  CHECK(Contains(ParseError("k.n=4:1"), "range '4:1' is empty"));
  CHECK(Contains(ParseError("k.n=1:4:0"), "range '1:4:0' is empty"));
  CHECK(Contains(ParseError("k.n=1:3,2"), "'2' of k.n is given twice"));
  CHECK(Contains(ParseError("k.n=0:100000"), "more than 10000 values"));
}

TEST_CASE("ParseSweepAxis: bad syntax is refused naming the spec") {
  CHECK(Contains(ParseError("reader.read_threads"), "expected KEY=v1,v2"));
  CHECK(Contains(ParseError("reader.read_threads"), "--vary 'reader.read_threads'"));
  CHECK(Contains(ParseError("=1,2"), "missing KEY"));
  CHECK(Contains(ParseError("reader.read_threads="), "value 1 of reader.read_threads is empty"));
  CHECK(
      Contains(ParseError("reader.read_threads=1,,2"), "value 2 of reader.read_threads is empty"));
  CHECK(Contains(ParseError("reader.read_threads=1,2,"), "value 3"));
  CHECK(Contains(ParseError("reader.read_threads=1,2,1"),
                 "'1' of reader.read_threads is given twice"));
  CHECK(Contains(ParseError("reader read_threads=1"), "holds a space"));
}

TEST_CASE("CheckSweepAxes: no axis, a key twice, too many points") {
  CHECK_FALSE(dlio::CheckSweepAxes({}).ok());
  CHECK(dlio::CheckSweepAxes({Axis("a.b=1,2"), Axis("a.c=1")}).ok());
  auto twice = dlio::CheckSweepAxes({Axis("a.b=1,2"), Axis("a.b=3")});
  REQUIRE_FALSE(twice.ok());
  CHECK(Contains(twice.ToString(), "a.b is given twice"));
  std::string many = "a.b=0";
  for (int i = 1; i < 101; ++i) many.append(",").append(std::to_string(i));
  auto big = dlio::CheckSweepAxes(
      {Axis(many), Axis(std::string("a.c=").append(many, 4)), Axis("a.d=1,2")});
  REQUIRE_FALSE(big.ok());
  CHECK(Contains(big.ToString(), "more than 10000 points"));
}

TEST_CASE("SortLastAxisForSearch: numeric order - a value that is not a number is named") {
  std::vector<SweepAxis> axes = {Axis("x.y=b,a"), Axis("train.accelerators=16,1,4,2.5,8")};
  REQUIRE(dlio::SortLastAxisForSearch(&axes).ok());
  CHECK(axes[0].values == std::vector<std::string>{"b", "a"});  // only the last axis
  CHECK(axes[1].values == std::vector<std::string>{"1", "2.5", "4", "8", "16"});
  std::vector<SweepAxis> bad = {Axis("reader.read_threads=1,2,four")};
  auto s = dlio::SortLastAxisForSearch(&bad);
  REQUIRE_FALSE(s.ok());
  CHECK(Contains(s.ToString(), "reader.read_threads"));
  CHECK(Contains(s.ToString(), "'four' is not"));
}

TEST_CASE("ExpandSweepGrid: the cartesian product, the last axis fastest") {
  std::vector<SweepAxis> axes = {Axis("a.x=1,2"), Axis("a.y=p,q,r")};
  auto grid = dlio::ExpandSweepGrid(axes);
  REQUIRE(grid.size() == 6);
  CHECK(grid[0].values == std::vector<std::string>{"1", "p"});
  CHECK(grid[1].values == std::vector<std::string>{"1", "q"});
  CHECK(grid[3].values == std::vector<std::string>{"2", "p"});
  CHECK(grid[5].values == std::vector<std::string>{"2", "r"});
  CHECK(dlio::SweepOverrides(axes, grid[4]) == std::vector<std::string>{"a.x=2", "a.y=q"});
  CHECK(dlio::SweepPointLabel(axes, grid[4]) == "a.x=2, a.y=q");
  CHECK(dlio::ExpandSweepGrid({Axis("a.x=7")}).size() == 1);
  CHECK(dlio::ExpandSweepGrid({}).empty());
}

TEST_CASE("SweepPointName: readable, filesystem-safe, stable and distinct") {
  std::vector<SweepAxis> axes = {Axis("reader.read_threads=4"),
                                 Axis("train.computation_time=0.01")};
  const SweepPoint p{{"4", "0.01"}};
  CHECK(dlio::SweepPointName(axes, p) == "reader.read_threads=4__train.computation_time=0.01");
  // Unsafe bytes become '_' and a hash of the exact point keeps two such points apart.
  std::vector<SweepAxis> paths = {Axis("dataset.data_folder=/a b/c,/a_b/c")};
  const std::string n1 = dlio::SweepPointName(paths, SweepPoint{{"/a b/c"}});
  const std::string n2 = dlio::SweepPointName(paths, SweepPoint{{"/a_b/c"}});
  CHECK(n1 != n2);
  CHECK(n1.find('/') == std::string::npos);
  CHECK(n1.find(' ') == std::string::npos);
  CHECK(n1.rfind("dataset.data_folder=_a_b_c~", 0) == 0);
  CHECK(n1 == dlio::SweepPointName(paths, SweepPoint{{"/a b/c"}}));  // stable
  std::vector<SweepAxis> long_axis = {Axis("a.b=" + std::string(300, 'x'))};
  CHECK(dlio::SweepPointName(long_axis, SweepPoint{{std::string(300, 'x')}}).size() < 200);
}

TEST_CASE("RunSweep without a search runs every point, and goes on after a failure") {
  FakeRunner fake;
  fake.au = {{"1|a", 90}, {"1|b", 80}, {"2|a", 70}, {"2|b", 60}};
  fake.failing = {"1|b"};
  SweepResult r = Run(&fake, {Axis("k.n=1,2"), Axis("k.s=a,b")}, std::nullopt);
  CHECK(fake.ran.size() == 4);
  REQUIRE(r.points.size() == 4);
  CHECK(r.failed() == 1);
  CHECK_FALSE(r.points[1].ok());
  CHECK(Contains(r.points[1].error, "point 1|b broke"));
  CHECK(r.points[3].m.au_percent == 60);
  CHECK(r.search.empty());
  CHECK_FALSE(r.stopped_early);
}

TEST_CASE("RunSweep --fail-fast stops at the first failed point") {
  FakeRunner fake;
  fake.au = {{"1", 90}, {"3", 70}};
  fake.failing = {"2"};
  SweepResult r = Run(&fake, {Axis("k.n=1,2,3")}, std::nullopt, /*fail_fast=*/true);
  CHECK(fake.ran == std::vector<std::string>{"k.n=1", "k.n=2"});
  CHECK(r.stopped_early);
  CHECK(r.grid_points == 3);
  CHECK(r.points.size() == 2);
}

TEST_CASE("Search: stops at the first AU below the target - the answer is the last value met") {
  FakeRunner fake;
  // Given out of order: the search takes them in increasing order.
  fake.au = {{"1", 95}, {"2", 90}, {"4", 80}, {"8", 71}, {"12", 69.9}, {"16", 75}, {"20", 50}};
  SweepResult r = Run(&fake, {Axis("train.accelerators_per_process=8,1,2,4,12,16,20")}, 70);
  // 16 would meet the target again, but MLPerf's procedure stops at the first miss.
  CHECK(fake.ran == std::vector<std::string>{
                        "train.accelerators_per_process=1", "train.accelerators_per_process=2",
                        "train.accelerators_per_process=4", "train.accelerators_per_process=8",
                        "train.accelerators_per_process=12"});
  REQUIRE(r.search.size() == 1);
  CHECK(r.search[0].best == "8");
  CHECK(r.search[0].stopped_at == "12");
  CHECK(r.search[0].stop_reason == "au_below");
  CHECK(r.points[3].meets_target);
  CHECK_FALSE(r.points[4].meets_target);
  CHECK(r.grid_points == 7);
  const std::string table = dlio::SweepTable(r);
  CHECK(Contains(table, "largest train.accelerators_per_process with AU >= 70.0%: 8"));
  CHECK(Contains(table, "2 of 7 grid points not run (the search stopped)"));
}

TEST_CASE("Search: an AU exactly at the target meets it") {
  FakeRunner fake;
  fake.au = {{"1", 70}, {"2", 69.99}};
  SweepResult r = Run(&fake, {Axis("k.n=1,2")}, 70);
  CHECK(r.search[0].best == "1");
  CHECK(r.search[0].stopped_at == "2");
}

TEST_CASE("Search: the first point below the target, every point met, a failed point") {
  SECTION("none meets") {
    FakeRunner fake;
    fake.au = {{"1", 40}, {"2", 90}};
    SweepResult r = Run(&fake, {Axis("k.n=1,2")}, 70);
    CHECK(fake.ran.size() == 1);
    CHECK_FALSE(r.search[0].best.has_value());
    CHECK(r.search[0].stopped_at == "1");
    CHECK(Contains(dlio::SweepTable(r), "AU >= 70.0%: none"));
    CHECK(json::parse(dlio::SweepJson(r))["search"]["best"].is_null());
  }
  SECTION("all meet") {
    FakeRunner fake;
    fake.au = {{"1", 90}, {"2", 80}};
    SweepResult r = Run(&fake, {Axis("k.n=1,2")}, 70);
    CHECK(r.search[0].best == "2");
    CHECK_FALSE(r.search[0].stopped_at.has_value());
    CHECK(r.search[0].stop_reason == "all_met");
    CHECK(Contains(dlio::SweepTable(r), "try larger ones"));
  }
  SECTION("a failed point ends the line: it did not meet the target") {
    FakeRunner fake;
    fake.au = {{"1", 90}, {"4", 80}};
    fake.failing = {"2"};
    SweepResult r = Run(&fake, {Axis("k.n=1,2,4")}, 70);
    CHECK(fake.ran.size() == 2);
    CHECK(r.search[0].best == "1");
    CHECK(r.search[0].stopped_at == "2");
    CHECK(r.search[0].stop_reason == "error");
  }
}

TEST_CASE("Search with several keys: along the last key for each combination of the others") {
  FakeRunner fake;
  fake.au = {{"a|1", 90}, {"a|2", 60}, {"a|4", 95},   // line a stops at 2
             {"b|1", 90}, {"b|2", 80}, {"b|4", 75}};  // line b meets everywhere
  SweepResult r = Run(&fake, {Axis("dataset.format=a,b"), Axis("k.n=4,2,1")}, 70);
  CHECK(fake.ran == std::vector<std::string>{"dataset.format=a, k.n=1", "dataset.format=a, k.n=2",
                                             "dataset.format=b, k.n=1", "dataset.format=b, k.n=2",
                                             "dataset.format=b, k.n=4"});
  REQUIRE(r.search.size() == 2);
  CHECK(r.search[0].fixed == std::vector<std::string>{"a"});
  CHECK(r.search[0].best == "1");
  CHECK(r.search[1].fixed == std::vector<std::string>{"b"});
  CHECK(r.search[1].best == "4");
  json j = json::parse(dlio::SweepJson(r));
  CHECK(j["search"]["lines"][0]["fixed"]["dataset.format"] == "a");
  CHECK(j["search"]["lines"][1]["best"] == 4);
  CHECK_FALSE(j["search"].contains("best"));  // only with a single line
  CHECK(Contains(dlio::SweepTable(r), "largest k.n with AU >= 70.0% with dataset.format=b: 4"));
}

TEST_CASE("SweepCsv and SweepJson: one row per point that ran, with its figures or error") {
  FakeRunner fake;
  fake.au = {{"1|a", 91.5}, {"2|a", 70}, {"2|b", 60}};
  fake.failing = {"1|b"};
  SweepResult r = Run(&fake, {Axis("k.n=1,2"), Axis("k.s=a,b")}, std::nullopt);
  const std::string csv = dlio::SweepCsv(r);
  std::vector<std::string> lines;
  for (size_t b = 0, e; b < csv.size(); b = e + 1) {
    e = csv.find('\n', b);
    lines.push_back(csv.substr(b, e - b));
  }
  REQUIRE(lines.size() == 5);
  CHECK(lines[0].rfind("index,name,k.n,k.s,status,au_percent,samples_per_second,", 0) == 0);
  CHECK(lines[1].rfind("0,k.n=1__k.s=a,1,a,ok,91.500,9150.000,91.500,2,1.5000;1.0000,90.500,", 0) ==
        0);
  CHECK(Contains(lines[1], ",out/k.n=1__k.s=a,"));
  CHECK(lines[2].rfind("1,k.n=1__k.s=b,1,b,error,", 0) == 0);
  CHECK(Contains(lines[2], "point 1|b broke"));
  json j = json::parse(dlio::SweepJson(r));
  CHECK(j["generator"] == dlio::kSweepGeneratorTag);
  CHECK(j["grid_points"] == 4);
  CHECK(j["points_failed"] == 1);
  REQUIRE(j["points"].size() == 4);
  const json& p0 = j["points"][0];
  CHECK(p0["values"]["k.n"] == 1);  // numbers as numbers
  CHECK(p0["values"]["k.s"] == "a");
  CHECK(p0["au_percent"] == 91.5);
  CHECK(p0["io_MB_per_second"] == 91.5);
  CHECK(p0["epoch_seconds"].size() == 2);
  CHECK(p0["steady_au_percent"] == 92.5);
  CHECK(p0["output_folder"] == "out/k.n=1__k.s=a");
  CHECK(j["points"][1]["status"] == "error");
  CHECK(j["until_au_below"].is_null());
}

TEST_CASE("SweepSvg and SweepHtml: one chart per figure, the target line, names escaped") {
  FakeRunner fake;
  fake.au = {{"1", 90}, {"2", 80}, {"<4>", 60}};
  std::vector<SweepAxis> axes = {Axis("k.n=1,2,<4>")};
  SweepResult r = Run(&fake, axes, std::nullopt);
  r.until_au_below = 70;  // draw the target line
  const std::string svg = dlio::SweepSvg(r);
  CHECK(svg.rfind("<svg xmlns=", 0) == 0);
  CHECK(Contains(svg, dlio::kSweepGeneratorTag));
  CHECK(Contains(svg, "train AU (%) against k.n"));
  CHECK(Contains(svg, "throughput (samples/s) against k.n"));
  CHECK(Contains(svg, "target AU 70%"));
  CHECK(Contains(svg, "&lt;4&gt;"));
  CHECK_FALSE(Contains(svg, "<4>"));
  const std::string html = dlio::SweepHtml(r, "sweep of <x>");
  CHECK(Contains(html, "<title>sweep of &lt;x&gt;</title>"));
  CHECK(Contains(html, "content=\"dlio-run sweep\""));
  CHECK(Contains(html, "k.n=1"));
  CHECK_FALSE(Contains(html, "largest k.n"));  // no search ran
  FakeRunner searched;
  searched.au = {{"1", 90}, {"2", 60}};
  const SweepResult s = Run(&searched, {Axis("k.n=1,2")}, 70);
  CHECK(Contains(dlio::SweepHtml(s, "t"), "largest k.n with AU &gt;= 70.0%: 1"));
}

TEST_CASE("A point taken over from an earlier sweep is marked in the table and the JSON") {
  SweepPlan plan;
  plan.axes = {Axis("k.n=1,2")};
  const SweepResult r = dlio::RunSweep(plan, [](const SweepPoint& p, size_t) {
    SweepMeasurement m;
    m.au_percent = 50;
    m.resumed = p.values[0] == "1";
    m.config_digest = "abc";
    return dlio::Result<SweepMeasurement>(m);
  });
  const std::string table = dlio::SweepTable(r);
  CHECK(Contains(table, "\n0*  "));
  CHECK(Contains(table, "* taken over from the earlier sweep (--resume)"));
  const json j = json::parse(dlio::SweepJson(r));
  CHECK(j["points"][0]["resumed"] == true);
  CHECK_FALSE(j["points"][1].contains("resumed"));
  CHECK(j["points"][1]["config_digest"] == "abc");
}
