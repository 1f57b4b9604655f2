// Renders a report in headless Chromium (Debian's `chromium`) and checks that it draws: a script
// appended to the page measures every <svg> (a non-empty bounding box and drawn content), counts
// them against the page's markup and logs a verdict; Chromium's console log (on stderr) must hold
// that verdict and no other console message (a script error, a blocked load, a parse warning).
//
// Not a Catch2 test: it exits 77 (ctest's SKIP_RETURN_CODE) when no Chromium is installed, 0 when
// the page draws, 1 otherwise. `report_browser_check --keep DIR` leaves the page, DOM and log in
// DIR.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "dlio/profile_analysis.h"
#include "dlio/profile_report.h"
#include "report/report_fixture.h"
#include "test_util.h"

namespace {

constexpr int kSkip = 77;

// The Chromium binary: $DLIO_CHROMIUM, else the first of the usual names on PATH.
std::string FindChromium() {
  if (const char* env = std::getenv("DLIO_CHROMIUM"); env != nullptr && *env != '\0') return env;
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    auto r = dlio::testing::RunCommand(std::string("command -v ") + name);
    if (r.exit_code == 0 && !r.output.empty()) return name;
  }
  return "";
}

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size())) ++n;
  return n;
}

std::string CheckScript(size_t svgs) {
  return R"(<script>
(function () {
  var svgs = document.querySelectorAll('svg'), bad = [];
  for (var i = 0; i < svgs.length; i++) {
    var r = svgs[i].getBoundingClientRect(), b = svgs[i].getBBox();
    if (!(r.width > 0 && r.height > 0 && b.width > 0 && b.height > 0 &&
          svgs[i].querySelectorAll('path,rect,line,text').length > 0))
      bad.push('empty: ' + svgs[i].getAttribute('aria-label'));
  }
  if (svgs.length !== )" +
         std::to_string(svgs) + R"() bad.push('svg elements in the DOM: ' + svgs.length);
  document.body.setAttribute('data-render-check', bad.length ? 'fail' : 'ok ' + svgs.length);
  if (bad.length) console.error('dlio-report-check FAIL ' + bad.join('; '));
  else console.log('dlio-report-check ok ' + svgs.length);
})();
</script>
)";
}

// Console lines in Chromium's log: "[...:INFO:CONSOLE(12)] "text", source: ... (12)".
std::vector<std::string> ConsoleLines(const std::string& log) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < log.size()) {
    size_t end = log.find('\n', start);
    if (end == std::string::npos) end = log.size();
    std::string line = log.substr(start, end - start);
    if (line.find(":CONSOLE") != std::string::npos || line.find("Uncaught") != std::string::npos) {
      lines.push_back(line);
    }
    start = end + 1;
  }
  return lines;
}

int Fail(const std::string& what, const std::string& dir) {
  std::fprintf(stderr, "report_browser_check: FAIL: %s (files in %s)\n", what.c_str(), dir.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) {
    std::printf(
        "report_browser_check: SKIP: no chromium on PATH (Debian package `chromium`; "
        "`./setup.sh test` installs it; or set DLIO_CHROMIUM)\n");
    return kSkip;
  }
  dlio::testing::TempDir temp;
  std::string dir = temp.path();
  if (argc == 3 && std::string(argv[1]) == "--keep") {
    dir = argv[2];
    std::filesystem::create_directories(dir);
  }
  const dlio::ProfileTrace trace = dlio::testing::SmallTrace();
  dlio::ReportOptions options;
  options.title = "browser check <&>";
  options.run = dlio::RunSummary{"summary.json", {90.5, 97.0, 98.2}, {310, 402, 399}};
  std::string page = dlio::RenderHtmlReport(trace, dlio::AnalyzeTrace(trace), options);
  const size_t svgs = Count(page, "<svg ");
  const size_t body_end = page.rfind("</body>");
  if (svgs == 0 || body_end == std::string::npos) return Fail("the page has no charts", dir);
  page.insert(body_end, CheckScript(svgs));
  const std::string html = dir + "/report.html";
  dlio::testing::WriteTextFile(html, page);
  const std::string command =
      "(timeout 60 " + chromium +
      " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run"
      " --user-data-dir=" +
      dir + "/profile --enable-logging=stderr --v=0 --dump-dom file://" + html + " > " + dir +
      "/dom.html 2> " + dir + "/chromium.log)";
  const auto run = dlio::testing::RunCommand(command);
  const std::string dom = dlio::testing::ReadTextFile(dir + "/dom.html");
  const std::string log = dlio::testing::ReadTextFile(dir + "/chromium.log");
  if (run.exit_code != 0) {
    return Fail("chromium exited with " + std::to_string(run.exit_code) + ":\n" + log, dir);
  }
  const std::string verdict = "data-render-check=\"ok " + std::to_string(svgs) + "\"";
  if (dom.find(verdict) == std::string::npos) {
    return Fail("the DOM lacks " + verdict + "; chromium's log:\n" + log, dir);
  }
  int ours = 0;
  for (const auto& line : ConsoleLines(log)) {
    if (line.find("dlio-report-check ok") != std::string::npos) {
      ++ours;
    } else {
      return Fail("console message: " + line, dir);
    }
  }
  // Our own message proves console messages reach the log, so their absence means something.
  if (ours != 1)
    return Fail("chromium's log does not show the check's console message:\n" + log, dir);
  std::printf("report_browser_check: %zu charts drawn, no console errors (%s)\n", svgs,
              chromium.c_str());
  return 0;
}
