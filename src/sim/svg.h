// Small pieces of the simulator's self-contained HTML reports (not API): HTML escaping, the line
// colours and inline SVG chart parts, shared by the inflation report (report.cc) and the replay
// report (replay/report.cc). Everything is a pure function of its arguments (fixed formatting,
// no clock), so a report is the same bytes for the same results.
#ifndef GPUPOOL_SRC_SIM_SVG_H_
#define GPUPOOL_SRC_SIM_SVG_H_

#include <array>
#include <string>
#include <string_view>

#include "fmt/format.h"

namespace gpupool::sim::internal {

// Text for HTML content or a double-quoted attribute.
inline std::string HtmlEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// One colour per line, by position (matplotlib's tab10 without the greys and olives).
inline constexpr std::array<const char*, 8> kChartColors = {
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"};

inline const char* ChartColor(size_t i) { return kChartColors[i % kChartColors.size()]; }

// The CSS both reports start from: page, chart frame (.g grid lines, .a axis labels, .t chart
// titles, .l legend labels) and tables (tr.ours: the default policy's row).
inline constexpr std::string_view kReportCss =
    "body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}\n"
    "h1{font-size:20px} .charts{display:flex;flex-wrap:wrap;gap:16px}\n"
    "svg{background:#fff;border:1px solid #ddd} .g{stroke:#eee} "
    ".a{font-size:11px;fill:#555} .t{font-size:14px;font-weight:600} .l{font-size:12px}\n"
    "table{border-collapse:collapse;margin-top:16px} "
    "td,th{border:1px solid #ccc;padding:4px 10px;text-align:right} "
    "th{background:#f4f4f4} td:first-child{text-align:left} tr.ours{font-weight:600}\n";

// The opening <svg> tag of a w x h chart, labelled `title` for screen readers.
inline std::string SvgOpen(int w, int h, std::string_view title) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">\n",
      w, h, w, h, HtmlEscape(title));
}

// A clip path `id` (unique in the page) of the plot rectangle: lines drawn with
// clip-path="url(#id)" stay inside it.
inline std::string SvgClipRect(std::string_view id, int x, int y, int w, int h) {
  return fmt::format(
      "<defs><clipPath id=\"{}\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>"
      "</clipPath></defs>\n",
      id, x, y, w, h);
}

// A legend entry: a short thick line of `color` from (x, y) to (x + 18, y) and `label` after it.
inline std::string SvgLegendEntry(int x, int y, std::string_view color, std::string_view label,
                                  std::string_view dash = "") {
  return fmt::format(
      "<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"3\"{}/>"
      "<text x=\"{}\" y=\"{}\" class=\"l\">{}</text>\n",
      x, x + 18, y, y, color,
      dash.empty() ? std::string() : fmt::format(" stroke-dasharray=\"{}\"", dash), x + 24, y + 4,
      HtmlEscape(label));
}

}  // namespace gpupool::sim::internal

#endif  // GPUPOOL_SRC_SIM_SVG_H_
