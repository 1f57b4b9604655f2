#include "dlio/profile_report.h"
#include "report/charts.h"
#include "report/svg.h"

namespace dlio {
namespace {

// Kept small and free of url(): the page must fetch nothing.
constexpr char kStyle[] = R"css(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a202c;
  margin:0 auto;max-width:1000px;padding:16px 20px;background:#fff}
h1{font-size:22px;margin:4px 0}h2{font-size:17px;margin:28px 0 6px;border-bottom:1px solid #e2e8f0}
h3{font-size:13px;margin:14px 0 2px;font-weight:600}
.src{color:#4a5568;font-size:12px}.about{color:#4a5568;font-size:12.5px;margin:4px 0}
.note{background:#f7fafc;border:1px dashed #a0aec0;padding:10px;color:#4a5568}
.cards{display:flex;flex-wrap:wrap;gap:8px;margin:12px 0}
.card{border:1px solid #e2e8f0;border-radius:6px;padding:6px 12px;min-width:96px}
.card .v{font-size:18px;font-weight:600}.card .k{font-size:11.5px;color:#718096}
svg.chart{max-width:100%;height:auto;display:block;margin:4px 0}
svg .grid{stroke:#edf2f7}svg .axis,svg .tick{stroke:#4a5568}
svg text{font:11px system-ui,sans-serif;fill:#2d3748}svg .ttl{font-size:12px;fill:#4a5568}
.tag{font-weight:400;background:#edf2f7;border-radius:4px;padding:0 6px;font-size:11.5px}
.pair{display:flex;flex-wrap:wrap;gap:16px}
.scroll{overflow-x:auto}table{border-collapse:collapse;font-size:12px}
th,td{border-bottom:1px solid #edf2f7;padding:3px 6px;text-align:left;white-space:nowrap}
td.n{text-align:right;font-variant-numeric:tabular-nums}
nav a{margin-right:10px;font-size:12.5px}
)css";

constexpr char kNav[] =
    "<nav><a href=\"#timeline\">timeline</a><a href=\"#sizes\">sizes</a>"
    "<a href=\"#offsets\">offsets</a><a href=\"#lanes\">threads</a>"
    "<a href=\"#files\">files</a><a href=\"#functions\">calls</a></nav>\n";

}  // namespace

namespace report {
const char* PageStyle() { return kStyle; }
}  // namespace report

std::string RenderHtmlReport(const ProfileTrace& trace, const TraceAnalysis& analysis,
                             const ReportOptions& options) {
  using report::Escape;
  std::string page = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  page += "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">";
  page += kReportGeneratorTag;
  page += "<title>" + Escape(options.title) + "</title><style>" + kStyle + "</style></head>\n";
  page += "<body><h1>" + Escape(options.title) + "</h1>\n";
  if (!options.sources.empty()) {
    std::string list;
    for (const auto& s : options.sources) list += (list.empty() ? "" : ", ") + Escape(s);
    page += "<p class=\"src\">from " + list + "</p>\n";
  }
  page += kNav;
  if (trace.size() == 0) page += report::Note("This trace has no events.");
  page += report::SummaryCards(analysis);
  if (options.run) page += report::EpochSection(*options.run);
  page += report::TimelineSection(analysis);
  page += report::SizeHistogramSection(analysis);
  page += report::OffsetSection(trace, analysis, options);
  page += report::LanesSection(trace, analysis, options);
  page += report::FileTableSection(analysis, options);
  page += report::FunctionTableSection(analysis);
  page += "</body></html>\n";
  return page;
}

}  // namespace dlio
