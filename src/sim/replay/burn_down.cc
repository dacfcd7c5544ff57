// The budget burn-down of the replay's cost page (burn_down.h).
#include "sim/replay/burn_down.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "gpupool/ledger.h"
#include "gpupool/sim/utc_time.h"
#include "sim/svg.h"

namespace gpupool::sim::internal {
namespace {

constexpr double kMilliPerGpuHour = 3'600'000.0;
// Queues with a colour of their own (the cost page's kMaxTeams); the others are grey.
constexpr size_t kColored = 7;

std::string Hours(int64_t milli_gpu_s) {
  return fmt::format("{:.1f}", static_cast<double>(milli_gpu_s) / kMilliPerGpuHour);
}

// "2017-11-08 14:00" from seconds.
std::string When(int64_t t) { return FormatUtcTime(t).substr(0, 16); }

// One point of a burn-down line; `jump`: the line starts again here (a new period).
struct Point {
  int64_t t = 0;
  double percent = 0;
  bool jump = false;
};

// Per queue, the remaining budget in % of the period's budget at the end of each series bucket
// of the ledger (the queue's busy time summed over GPU models, cut at period starts), starting
// with 100% at the first period's start and again at each period's.
std::vector<Point> Remaining(const LedgerReport& ledger, const ReplayBudgets& budgets,
                             const QueueBudgetUse& use) {
  std::vector<int64_t> busy(static_cast<size_t>(ledger.series_buckets), 0);
  for (const QueueModelLedger& qm : ledger.queue_models) {
    if (qm.queue != use.queue) continue;
    for (size_t k = 0; k < qm.busy_series.size() && k < busy.size(); ++k) {
      busy[k] += qm.busy_series[k];
    }
  }
  std::vector<Point> points;
  const double budget = static_cast<double>(use.budget_milli_gpu_s);
  auto percent = [&](int64_t used) {
    return budget > 0 ? 100.0 * (budget - static_cast<double>(used)) / budget
                      : (used > 0 ? -100.0 : 0.0);
  };
  points.push_back(Point{budgets.period_start, percent(0), true});
  int64_t period = 0;
  int64_t used = 0;
  for (size_t k = 0; k < busy.size(); ++k) {
    const int64_t begin = ledger.series_start + static_cast<int64_t>(k) * ledger.series_bucket_s;
    const int64_t end = std::min(begin + ledger.series_bucket_s, ledger.end_time);
    // A bucket counts in the period it starts in (exact when periods are whole buckets).
    const int64_t p = std::max<int64_t>(0, (begin - budgets.period_start) / budgets.period_s);
    if (p != period) {
      const int64_t start = budgets.period_start + p * budgets.period_s;
      points.push_back(Point{start, percent(used), false});
      points.push_back(Point{start, percent(0), true});
      period = p;
      used = 0;
    }
    used += busy[k];
    points.push_back(Point{end, percent(used), false});
  }
  return points;
}

std::string Chart(const ReplayRun& run, const std::map<std::string, size_t>& color) {
  const ReplayBudgets& b = run.result.budgets;
  const LedgerReport& ledger = run.result.ledger;
  std::vector<std::vector<Point>> lines;
  double low = 0;
  for (const QueueBudgetUse& use : b.queues) {
    lines.push_back(Remaining(ledger, b, use));
    for (const Point& p : lines.back()) low = std::min(low, p.percent);
  }
  // The y axis from 100% down to 0%, or lower, to a whole grid step, when a queue overspent.
  const double y_max = 100.0;
  const double step = low < -100.0 ? 50.0 : 25.0;
  const double y_min = -step * std::ceil(-low / step - 1e-9);
  const int w = 1300, h = 360, left = 70, right = 190, top = 30, bottom = 44;
  const int pw = w - left - right, ph = h - top - bottom;
  const int64_t x_min = b.period_start;
  const int64_t x_max = std::max(ledger.end_time, x_min + 1);
  auto X = [&](int64_t t) {
    return left + static_cast<double>(t - x_min) / static_cast<double>(x_max - x_min) * pw;
  };
  auto Y = [&](double v) { return top + (y_max - v) / (y_max - y_min) * ph; };
  std::string out = SvgOpen(w, h, "Budget burn-down");
  out += fmt::format(
      "<text x=\"{}\" y=\"18\" class=\"t\">Budget left in the period, % of the period's GPU-hour "
      "budget</text>\n",
      left);
  for (double v = y_max; v >= y_min - 1e-9; v -= step) {
    out += fmt::format(
        "<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" class=\"g\"/>"
        "<text x=\"{}\" y=\"{:.1f}\" class=\"a\" text-anchor=\"end\">{:.0f}%</text>\n",
        left, left + pw, Y(v), Y(v), left - 6, Y(v) + 4, v);
  }
  // Day ticks and the period starts.
  for (int64_t day = 0; x_min + day * 86400 <= x_max; ++day) {
    const int64_t t = x_min + day * 86400;
    const bool period_start = (t - b.period_start) % b.period_s == 0;
    out += fmt::format(
        "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{}\" y2=\"{}\" {}/>"
        "<text x=\"{:.1f}\" y=\"{}\" class=\"a\" text-anchor=\"middle\">{}</text>\n",
        X(t), X(t), top, top + ph,
        period_start ? "stroke=\"#888\" stroke-dasharray=\"4 3\"" : "class=\"g\"", X(t),
        top + ph + 16, day);
  }
  out += fmt::format(
      "<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#d62728\" "
      "stroke-width=\"1.5\"/><text x=\"{}\" y=\"{:.1f}\" class=\"a\" "
      "fill=\"#d62728\">budget spent</text>\n",
      left, left + pw, Y(0), Y(0), left + 6, Y(0) - 5);
  out += fmt::format(
      "<text x=\"{}\" y=\"{}\" class=\"a\" text-anchor=\"middle\">days since midnight UTC of the "
      "first arrival (dashed: a new budget period starts)</text>\n",
      left + pw / 2, h - 8);
  out += SvgClipRect("burn-down-plot", left, top, pw, ph);
  for (size_t i = 0; i < lines.size(); ++i) {
    auto it = color.find(b.queues[i].queue);
    const std::string stroke = it != color.end() && it->second < kColored
                                   ? std::string(ChartColor(it->second))
                                   : std::string("#aaa");
    std::string path;
    for (const Point& p : lines[i]) {
      path += fmt::format("{}{}{:.1f},{:.1f}", path.empty() ? "" : " ", p.jump ? "M" : "L", X(p.t),
                          Y(p.percent));
    }
    out += fmt::format(
        "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" "
        "clip-path=\"url(#burn-down-plot)\"><title>{}</title></path>\n",
        path, stroke, HtmlEscape(b.queues[i].queue));
    out += SvgLegendEntry(left + pw + 16, top + 10 + 20 * static_cast<int>(i), stroke,
                          b.queues[i].queue);
  }
  return out + "</svg>\n";
}

}  // namespace

std::string BurnDownSection(const ReplayRun& run, const std::map<std::string, size_t>& color) {
  const ReplayBudgets& b = run.result.budgets;
  std::string out = "<h3>Budget burn-down</h3>\n";
  if (b.queues.empty()) {
    return out +
           "<p>No GPU-hour budgets are set for the queues of this replay, so there is no "
           "burn-down to show. Give the replay budgets per virtual cluster and period with "
           "<code>--budgets FILE</code> (docs/accounting.md, \"Budgets in the replay\").</p>\n";
  }
  const int64_t days = b.period_s / 86400;
  out += fmt::format(
      "<p>Policy <b>{}</b>: GPU-hour budgets per period of {} ({} period{} from {} UTC). {}</p>\n",
      HtmlEscape(run.label),
      b.period_s % 86400 == 0 ? fmt::format("{} day{}", days, days == 1 ? "" : "s")
                              : fmt::format("{} s", b.period_s),
      b.periods, b.periods == 1 ? "" : "s", When(b.period_start),
      b.enforced ? "The engine sees each queue's budget and what it used of it in every cycle: "
                   "a queue at or over its budget loses its guarantee, may still borrow idle "
                   "GPUs and is the first reclaimed (docs/budgets.md)."
                 : "This policy gives the engine a single queue for every virtual cluster, so "
                   "the engine does not see the clusters' budgets: they are only recorded.");
  out += "<div class=\"charts\">\n" + Chart(run, color) + "</div>\n";
  out +=
      "<table><tr><th rowspan=\"2\">team (queue)</th><th rowspan=\"2\">budget per period "
      "(GPU-h)</th>";
  for (int64_t p = 0; p < b.periods; ++p) {
    out += fmt::format("<th colspan=\"2\">period {} (from {})</th>", p + 1,
                       When(b.period_start + p * b.period_s).substr(0, 10));
  }
  out += "</tr>\n<tr>";
  for (int64_t p = 0; p < b.periods; ++p) out += "<th>used (GPU-h)</th><th>over budget from</th>";
  out += "</tr>\n";
  for (const QueueBudgetUse& use : b.queues) {
    out += fmt::format("<tr><td>{}</td><td>{}</td>", HtmlEscape(use.queue),
                       Hours(use.budget_milli_gpu_s));
    for (size_t p = 0; p < use.used_milli_gpu_s.size(); ++p) {
      const int64_t used = use.used_milli_gpu_s[p];
      const std::string share =
          use.budget_milli_gpu_s > 0
              ? fmt::format(" ({:.0f}%)", 100.0 * static_cast<double>(used) /
                                              static_cast<double>(use.budget_milli_gpu_s))
              : std::string();
      const int64_t since = use.over_budget_since[p];
      out += fmt::format("<td{}>{}{}</td><td>{}</td>",
                         used >= use.budget_milli_gpu_s ? " style=\"color:#d62728\"" : "",
                         Hours(used), share, since >= 0 ? When(since) : "-");
    }
    out += "</tr>\n";
  }
  out += "</table>\n";
  out +=
      "<p class=\"s\">Used: the GPU time of the queue's jobs in the period (restores and lost "
      "work included), from the ledger. Over budget from: the first scheduling cycle of the "
      "period at which the queue had used its whole budget. A period is cut at the last "
      "completion.</p>\n";
  return out;
}

}  // namespace gpupool::sim::internal
