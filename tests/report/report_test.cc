#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <regex>
#include <string>

#include "dlio/profile_report.h"
#include "report/report_fixture.h"
#include "report/svg.h"
#include "test_util.h"

namespace dlio {
namespace {

using testing::AddApp;
using testing::AddTransfer;
using testing::HandAnalysis;
using testing::SmallTrace;

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size())) ++n;
  return n;
}

// The text between the start of the <section id="id"> and its end.
std::string SectionOf(const std::string& page, const std::string& id) {
  const size_t start = page.find("<section id=\"" + id + "\">");
  REQUIRE(start != std::string::npos);
  const size_t end = page.find("</section>", start);
  REQUIRE(end != std::string::npos);
  return page.substr(start, end - start);
}

TEST_CASE("report: every chart of a small trace is drawn as inline SVG") {
  const ProfileTrace trace = SmallTrace();
  const std::string page = RenderHtmlReport(trace, HandAnalysis(trace));
  REQUIRE(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(page.find("</html>") != std::string::npos);
  for (const char* label :
       {"Bandwidth over time", "Operations over time", "Request-size histogram",
        "Offset vs time: /data/a.npz", "Offset vs time: /data/b.npz", "Activity per thread"}) {
    INFO(label);
    CHECK(page.find(std::string("aria-label=\"") + label + "\"") != std::string::npos);
  }
  CHECK(Count(page, "<svg ") == Count(page, "</svg>"));
  CHECK(Count(page, "<svg ") == 7);  // 2 timeline, 1 sizes, 3 offsets, 1 lanes
  CHECK(page.find("class=\"note\"") == std::string::npos);  // nothing missing
  // Summary cards and the per-file table with its counters.
  CHECK(page.find("<div class=\"k\">unoverlapped I/O</div>") != std::string::npos);
  const std::string files = SectionOf(page, "files");
  CHECK(files.find("<td>/data/a.npz</td>") != std::string::npos);
  CHECK(files.find("<th>seq. reads</th>") != std::string::npos);
  // One lane per thread, labelled pid/tid, the named process in the hover text.
  const std::string lanes = SectionOf(page, "lanes");
  CHECK(lanes.find(">100/100</text>") != std::string::npos);
  CHECK(lanes.find(">200/201</text>") != std::string::npos);
  CHECK(lanes.find("pid 100, tid 100 (python3)") != std::string::npos);
  CHECK(lanes.find("compute ") != std::string::npos);
}

TEST_CASE("report: the size histogram's bars add up to the reads and writes") {
  const ProfileTrace trace = SmallTrace();
  const TraceAnalysis analysis = HandAnalysis(trace);
  const std::string sizes = SectionOf(RenderHtmlReport(trace, analysis), "sizes");
  int64_t reads = 0, writes = 0;
  const std::regex bar(R"(<title>(\d+) (reads|writes) of ([^<]*) bytes</title>)");
  int bars = 0;
  for (std::sregex_iterator it(sizes.begin(), sizes.end(), bar), end; it != end; ++it) {
    ++bars;
    ((*it)[2] == "reads" ? reads : writes) += std::stoll((*it)[1]);
  }
  CHECK(bars == 20);
  CHECK(reads == 40);
  CHECK(writes == 1);
  // 4096-byte reads are in 1K+1-10K, the 200-byte ones in 101-1K, the 2 MB write in 1M+1-4M.
  CHECK(sizes.find("<title>20 reads of " + std::string(DarshanSizeBinName(2))) !=
        std::string::npos);
  CHECK(sizes.find("<title>20 reads of " + std::string(DarshanSizeBinName(1))) !=
        std::string::npos);
  CHECK(sizes.find("<title>1 writes of " + std::string(DarshanSizeBinName(5))) !=
        std::string::npos);
}

TEST_CASE("report: with AnalyzeTrace the size bars add up to the trace's reads and writes") {
  const ProfileTrace trace = SmallTrace();
  const TraceAnalysis analysis = AnalyzeTrace(trace);
  const std::string sizes = SectionOf(RenderHtmlReport(trace, analysis), "sizes");
  int64_t reads = 0, writes = 0;
  const std::regex bar(R"(<title>(\d+) (reads|writes) of ([^<]*) bytes</title>)");
  for (std::sregex_iterator it(sizes.begin(), sizes.end(), bar), end; it != end; ++it) {
    ((*it)[2] == "reads" ? reads : writes) += std::stoll((*it)[1]);
  }
  CHECK(reads == analysis.read_sizes.count);
  CHECK(writes == analysis.write_sizes.count);
  CHECK(reads == 40);
  CHECK(writes == 1);
}

TEST_CASE("report: a DXT trace's MPI-IO rows are not drawn twice") {
  ProfileTrace trace;
  for (const std::string_view module : {kDxtPosixCategory, kDxtMpiioCategory}) {
    for (int i = 0; i < 5; ++i) {
      ProfileEvent e;
      e.pid = 0;
      e.tid = 0;
      e.name = "read";
      e.category = module;
      e.path = "/d/f";
      e.start_us = i * 1000;
      e.dur_us = 10;
      e.offset = i * 100;
      e.size = 100;
      e.kind = OpKind::kRead;
      trace.Add(e);
    }
  }
  const TraceAnalysis analysis = AnalyzeTrace(trace);
  REQUIRE(analysis.dxt_posix_only);
  const std::string page = RenderHtmlReport(trace, analysis);
  CHECK(Count(SectionOf(page, "offsets"), "h0") == 5);
  CHECK(SectionOf(page, "offsets").find("ownsampled") == std::string::npos);
}

TEST_CASE("report: strings from the trace are escaped") {
  ProfileTrace trace;
  const std::string evil = "/data/<script>alert(\"x\")</script>&'q'.npz";
  AddTransfer(&trace, 1, 1, OpKind::kRead, evil, 10, 5, 0, 100);
  AddTransfer(&trace, 1, 1, OpKind::kRead, evil, 20, 5, 100, 100);
  trace.process_names[1] = "<b>proc</b>";
  ReportOptions options;
  options.title = "T <i>&";
  options.sources = {"/x/\"y\".pfw"};
  const std::string page = RenderHtmlReport(trace, HandAnalysis(trace), options);
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("<b>proc") == std::string::npos);
  CHECK(page.find("<i>") == std::string::npos);
  CHECK(page.find("\"y\"") == std::string::npos);
  CHECK(page.find("/data/&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;q&#39;.npz") !=
        std::string::npos);
  CHECK(page.find("<title>T &lt;i&gt;&amp;</title>") != std::string::npos);
  CHECK(page.find("&lt;b&gt;proc&lt;/b&gt;") != std::string::npos);
}

TEST_CASE("report: the page fetches nothing") {
  ProfileTrace trace = SmallTrace();
  AddTransfer(&trace, 1, 1, OpKind::kRead, "http://example.invalid/x.npz", 10, 5, 0, 100);
  RunSummary run;
  run.source = "https://example.invalid/summary.json";
  run.au_percentage = {90, 95};
  run.throughput_samples_s = {100, 120};
  ReportOptions options;
  options.run = run;
  const std::string page = RenderHtmlReport(trace, HandAnalysis(trace), options);
  // Trace strings that look like URLs are text, never an attribute that loads something.
  const std::regex loads(R"((src|href|xlink:href|action)\s*=\s*["']?\s*(https?:|//))",
                         std::regex::icase);
  CHECK_FALSE(std::regex_search(page, loads));
  CHECK(page.find("url(") == std::string::npos);
  CHECK(page.find("@import") == std::string::npos);
  CHECK(page.find("<link") == std::string::npos);
  CHECK(page.find("<img") == std::string::npos);
  // The only attributes holding a URL are the SVG namespace and hover text naming a trace path.
  const std::regex attribute(R"(([\w:-]+)\s*=\s*"[^"]*https?://)");
  int namespaces = 0;
  for (std::sregex_iterator it(page.begin(), page.end(), attribute), end; it != end; ++it) {
    INFO(it->str());
    CHECK(((*it)[1] == "xmlns" || (*it)[1] == "aria-label"));
    namespaces += (*it)[1] == "xmlns";
  }
  CHECK(namespaces == static_cast<int>(Count(page, "<svg ")));
}

TEST_CASE("report: offset charts are thinned to the cap and say so") {
  ProfileTrace trace;
  const int64_t n = 200'000;
  uint64_t x = 12345;
  for (int64_t i = 0; i < n; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    AddTransfer(&trace, 1, 1, OpKind::kRead, "/data/big.bin", i * 10, 5,
                static_cast<int64_t>((x >> 20) % (1ULL << 30)), 4096);
  }
  ReportOptions options;
  options.max_points_per_file = 1000;
  const std::string page = RenderHtmlReport(trace, HandAnalysis(trace), options);
  const std::string offsets = SectionOf(page, "offsets");
  const size_t dots = Count(offsets, "h0");
  CHECK(dots <= 1000);
  CHECK(dots >= 900);
  CHECK(offsets.find("Downsampled") != std::string::npos);
  CHECK(offsets.find(std::to_string(dots) + " of 200000 requests drawn (downsampled)") !=
        std::string::npos);
  CHECK(page.size() < 400'000);
}

TEST_CASE("report: a few requests are all drawn, without a downsampling note") {
  const ProfileTrace trace = SmallTrace();
  const std::string offsets = SectionOf(RenderHtmlReport(trace, HandAnalysis(trace)), "offsets");
  CHECK(Count(offsets, "h0") == 41);
  CHECK(offsets.find("ownsampled") == std::string::npos);
}

TEST_CASE("report: an empty trace gives notes instead of charts") {
  const ProfileTrace trace;
  const std::string page = RenderHtmlReport(trace, HandAnalysis(trace));
  CHECK(page.find("<svg") == std::string::npos);
  CHECK(page.find("This trace has no events.") != std::string::npos);
  CHECK(page.find("No I/O operations over time in this trace.") != std::string::npos);
  CHECK(page.find("No reads or writes of files in this trace.") != std::string::npos);
  CHECK(page.find("No file reads or writes in this trace.") != std::string::npos);
  CHECK(page.find("No events in this trace.") != std::string::npos);
  CHECK(page.find("No files in this trace.") != std::string::npos);
  CHECK(page.find("</html>") != std::string::npos);
}

TEST_CASE("report: a trace of metadata only has lanes but no transfer charts") {
  ProfileTrace trace;
  ProfileEvent e;
  e.pid = 3;
  e.tid = 3;
  e.name = "stat";
  e.path = "/data/x";
  e.kind = OpKind::kStat;
  e.start_us = 5;
  e.dur_us = 2;
  trace.Add(e);
  AddApp(&trace, 3, 3, "ai.compute.step", 10, 100);
  const std::string page = RenderHtmlReport(trace, HandAnalysis(trace));
  CHECK(page.find("No reads or writes of files in this trace.") != std::string::npos);
  CHECK(page.find("No file reads or writes in this trace.") != std::string::npos);
  CHECK(page.find("aria-label=\"Activity per thread\"") != std::string::npos);
  CHECK(page.find("aria-label=\"Operations over time\"") != std::string::npos);
}

TEST_CASE("report: lane intervals closer than a pixel merge into one bar") {
  ProfileTrace trace;
  // 1 s across ~870 pixels: reads 10 µs apart merge; a read 0.5 s later is a bar of its own.
  for (int i = 0; i < 100; ++i) {
    AddTransfer(&trace, 1, 1, OpKind::kRead, "/d/f", 1000 + i * 10, 5, i * 10, 10);
  }
  AddTransfer(&trace, 1, 1, OpKind::kRead, "/d/f", 500'000, 5, 2000, 10);
  AddTransfer(&trace, 1, 1, OpKind::kRead, "/d/f", 1'000'000, 5, 3000, 10);
  const std::string lanes = SectionOf(RenderHtmlReport(trace, HandAnalysis(trace)), "lanes");
  CHECK(Count(lanes, "<title>data I/O ") == 3);
}

TEST_CASE("report: busy lanes merge wider gaps so the page stays small") {
  ProfileTrace trace;
  // 48 threads, each with a read in every other pixel (a pixel is ~1150 µs of 1 s).
  for (int tid = 0; tid < 48; ++tid) {
    for (int i = 0; i < 435; ++i) {
      AddTransfer(&trace, 1, tid, OpKind::kRead, "/d/f", i * 2300, 100, i * 10, 10);
      AddApp(&trace, 1, tid, "ai.compute.step", i * 2300 + 1150, 100);
    }
  }
  const std::string lanes = SectionOf(RenderHtmlReport(trace, HandAnalysis(trace)), "lanes");
  CHECK(Count(lanes, "<title>data I/O ") <= 48 * 150);
  // Without the wider merge: 435 bars per lane and kind.
  CHECK(Count(lanes, "<title>data I/O ") < 48 * 435);
  CHECK(Count(lanes, "<title>compute ") <= 48 * 150);
  CHECK(lanes.size() < 2'500'000);
}

TEST_CASE("report: a dlio run summary adds per-epoch throughput and AU") {
  testing::TempDir dir;
  testing::WriteTextFile(dir / "summary.json",
                         R"({"metric": {"train_au_percentage": [91.5, 97.25, 98],
                             "train_throughput_samples_per_second": [310.5, 402, 399.9]}})");
  auto run = ReadRunSummary(dir / "summary.json");
  REQUIRE(run.ok());
  CHECK(run->au_percentage == std::vector<double>{91.5, 97.25, 98});
  CHECK(run->throughput_samples_s == std::vector<double>{310.5, 402, 399.9});
  ReportOptions options;
  options.run = *run;
  const ProfileTrace trace = SmallTrace();
  const std::string epochs =
      SectionOf(RenderHtmlReport(trace, HandAnalysis(trace), options), "epochs");
  CHECK(epochs.find("<title>epoch 2: 402 samples/s</title>") != std::string::npos);
  CHECK(epochs.find("<title>epoch 3: 98 %</title>") != std::string::npos);
  CHECK(Count(epochs, "<svg ") == 2);
}

TEST_CASE("report: ReadRunSummary refuses a FIFO, deep nesting and a huge file, naming them") {
  testing::TempDir dir;
  // A FIFO would block a blocking open until a writer came.
  REQUIRE(mkfifo((dir / "fifo.json").c_str(), 0600) == 0);
  auto fifo = std::async(std::launch::async, [&] { return ReadRunSummary(dir / "fifo.json"); });
  if (fifo.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    const int fd = ::open((dir / "fifo.json").c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
    fifo.wait();
    FAIL("ReadRunSummary blocked on a FIFO");
  }
  const auto from_fifo = fifo.get();
  REQUIRE_FALSE(from_fifo.ok());
  CHECK_THAT(from_fifo.status().message(),
             Catch::Contains("fifo.json") && Catch::Contains("not a regular file (a FIFO)"));
  // 2 M levels: nlohmann would build a value per level (~200 MB) before seeing the type.
  testing::WriteTextFile(dir / "deep.json", R"({"metric": )" + std::string(2'000'000, '[') +
                                                std::string(2'000'000, ']') + "}");
  auto deep = ReadRunSummary(dir / "deep.json");
  CHECK(deep.status().code() == StatusCode::kCorruption);
  CHECK_THAT(deep.status().message(),
             Catch::Contains("deep.json") && Catch::Contains("nested deeper than 512"));
  testing::WriteTextFile(dir / "huge.json", "{\"x\": \"" + std::string(65 << 20, 'x') + "\"}");
  auto huge = ReadRunSummary(dir / "huge.json");
  CHECK(huge.status().code() == StatusCode::kCorruption);
  CHECK_THAT(huge.status().message(), Catch::Contains("huge.json") && Catch::Contains("bytes"));
}

TEST_CASE("report: ReadRunSummary names what is wrong") {
  testing::TempDir dir;
  auto missing = ReadRunSummary(dir / "none.json");
  CHECK(missing.status().code() == StatusCode::kNotFound);
  CHECK(missing.status().ToString().find("none.json") != std::string::npos);
  testing::WriteTextFile(dir / "bad.json", "{not json");
  CHECK(ReadRunSummary(dir / "bad.json").status().code() == StatusCode::kCorruption);
  testing::WriteTextFile(dir / "type.json", R"({"metric": {"train_au_percentage": [1, "x"]}})");
  auto type = ReadRunSummary(dir / "type.json");
  CHECK(type.status().code() == StatusCode::kCorruption);
  CHECK(type.status().ToString().find("train_au_percentage[1]") != std::string::npos);
  testing::WriteTextFile(dir / "none.json", R"({"metric": {}})");
  auto empty = ReadRunSummary(dir / "none.json");
  REQUIRE(empty.ok());
  CHECK(empty->au_percentage.empty());
  ReportOptions options;
  options.run = *empty;
  const ProfileTrace trace = SmallTrace();
  CHECK(RenderHtmlReport(trace, HandAnalysis(trace), options)
            .find("No training epochs in this run&#39;s summary.") != std::string::npos);
}

TEST_CASE("report: axis ticks are nice numbers and units fit the values") {
  using report::NiceTicks;
  CHECK(NiceTicks(0, 97) == std::vector<double>{0, 20, 40, 60, 80});
  CHECK(report::NiceCeil(97) == 100);
  CHECK(NiceTicks(0, 1) == std::vector<double>{0, 0.2, 0.4, 0.6000000000000001, 0.8, 1});
  CHECK(report::NiceCeil(0) == 1);
  CHECK(report::ByteUnit(5 * 1048576.0).name == "MiB");
  CHECK(report::ByteUnit(100).name == "B");
  CHECK(report::FormatBytes(1536) == "1.5 KiB");
  CHECK(report::FormatSeconds(0.25) == "250 ms");
  CHECK(report::FormatNumber(1234.5678) == "1235");
  CHECK(report::FormatNumber(0.0012345) == "0.00123");
}

}  // namespace
}  // namespace dlio
