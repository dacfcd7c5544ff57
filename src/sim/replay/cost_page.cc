// The cost section of the replay's HTML report (cost_page.h).
#include "sim/replay/cost_page.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "gpupool/ledger.h"
#include "gpupool/pooling.h"
#include "sim/replay/burn_down.h"
#include "sim/svg.h"

namespace gpupool::sim::internal {
namespace {

constexpr double kMilliPerGpuHour = 3'600'000.0;
// Teams drawn one by one in the charts; the rest are summed as "others".
constexpr size_t kMaxTeams = 7;

std::string Money(int64_t micros, const std::string& currency) {
  const double units = static_cast<double>(micros) / 1e6;
  return fmt::format("{}{:.2f}", currency.empty() ? "" : currency + " ", units);
}

std::string Hours(int64_t milli_gpu_s) {
  return fmt::format("{:.1f}", static_cast<double>(milli_gpu_s) / kMilliPerGpuHour);
}

std::string Percent(int64_t part, int64_t whole) {
  if (whole <= 0) return "-";
  return fmt::format("{:.1f}%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

// A round step for about `parts` grid lines up to `max`.
double Step(double max, int parts) {
  if (max <= 0) return 1;
  const double raw = max / parts;
  double p = 1;
  while (p * 10 <= raw) p *= 10;
  while (p > raw) p /= 10;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (p * m >= raw) return p * m;
  }
  return p * 10;
}

// Stacked bars: one bar per day, one colour per series (values[s][day]), with a legend.
std::string StackedBars(const std::string& title, const std::string& unit,
                        const std::vector<std::string>& names,
                        const std::vector<std::vector<double>>& values) {
  const int w = 1300, h = 330, left = 70, right = 190, top = 30, bottom = 40;
  const int pw = w - left - right, ph = h - top - bottom;
  const size_t days = values.empty() ? 0 : values[0].size();
  double max = 0;
  for (size_t d = 0; d < days; ++d) {
    double sum = 0;
    for (const std::vector<double>& v : values) sum += v[d];
    max = std::max(max, sum);
  }
  const double step = Step(max, 5);
  const double top_value = std::max(step, step * static_cast<int>(max / step + 0.999));
  std::string out = SvgOpen(w, h, title);
  out += fmt::format("<text x=\"{}\" y=\"18\" class=\"t\">{}</text>\n", left, HtmlEscape(title));
  for (double y = 0; y <= top_value + 1e-9; y += step) {
    const double py = top + ph - ph * y / top_value;
    out += fmt::format(
        "<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" class=\"g\"/>"
        "<text x=\"{}\" y=\"{:.1f}\" class=\"a\" text-anchor=\"end\">{:g}</text>\n",
        left, left + pw, py, py, left - 6, py + 4, y);
  }
  out += fmt::format(
      "<text x=\"14\" y=\"{}\" class=\"a\" transform=\"rotate(-90 14 {})\" "
      "text-anchor=\"middle\">{}</text>\n",
      top + ph / 2, top + ph / 2, HtmlEscape(unit));
  const double bw = days > 0 ? static_cast<double>(pw) / static_cast<double>(days) : 0;
  for (size_t d = 0; d < days; ++d) {
    double base = 0;
    for (size_t s = 0; s < values.size(); ++s) {
      const double v = values[s][d];
      if (v <= 0) continue;
      const double y0 = top + ph - ph * base / top_value;
      const double y1 = top + ph - ph * (base + v) / top_value;
      out += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\">"
          "<title>day {}: {} {:.1f}</title></rect>\n",
          left + bw * static_cast<double>(d) + 1, y1, std::max(1.0, bw - 2), y0 - y1,
          s < kMaxTeams ? ChartColor(s) : "#aaa", d, HtmlEscape(names[s]), v);
      base += v;
    }
    if (days <= 31 || d % 7 == 0) {
      out +=
          fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"a\" text-anchor=\"middle\">{}</text>\n",
                      left + bw * (static_cast<double>(d) + 0.5), top + ph + 16, d);
    }
  }
  out += fmt::format(
      "<text x=\"{}\" y=\"{}\" class=\"a\" text-anchor=\"middle\">days since the "
      "first arrival (UTC days of the ledger)</text>\n",
      left + pw / 2, h - 6);
  for (size_t s = 0; s < names.size(); ++s) {
    const int y = top + 10 + 20 * static_cast<int>(s);
    out += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"14\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"{}\" class=\"l\">{}</text>\n",
        left + pw + 16, y - 11, s < kMaxTeams ? ChartColor(s) : "#aaa", left + pw + 36, y,
        HtmlEscape(names[s]));
  }
  return out + "</svg>\n";
}

// Horizontal stacked bars, one per team: lost to preemption, lost to failure, restore.
std::string LostBars(const std::vector<std::string>& teams,
                     const std::vector<std::array<double, 3>>& lost) {
  const int row = 26, left = 110, right = 80, top = 50;
  const int w = 900, h = top + row * static_cast<int>(teams.size()) + 20;
  const int pw = w - left - right;
  double max = 0;
  for (const auto& l : lost) max = std::max(max, l[0] + l[1] + l[2]);
  if (max <= 0) max = 1;
  const char* colors[3] = {"#d62728", "#9467bd", "#ff7f0e"};
  const char* labels[3] = {"lost to preemption", "lost to failures", "restore"};
  std::string out = SvgOpen(w, h, "Lost work by cause");
  out += "<text x=\"10\" y=\"18\" class=\"t\">Lost work by cause, GPU-hours per team</text>\n";
  for (int c = 0; c < 3; ++c) {
    out += fmt::format(
        "<rect x=\"{}\" y=\"28\" width=\"14\" height=\"14\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"39\" class=\"l\">{}</text>\n",
        left + 190 * c, colors[c], left + 190 * c + 20, labels[c]);
  }
  for (size_t t = 0; t < teams.size(); ++t) {
    const int y = top + row * static_cast<int>(t);
    out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"l\" text-anchor=\"end\">{}</text>\n",
                       left - 8, y + 16, HtmlEscape(teams[t]));
    double x = left;
    for (int c = 0; c < 3; ++c) {
      const double bw = pw * lost[t][static_cast<size_t>(c)] / max;
      if (bw > 0) {
        out += fmt::format(
            "<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"18\" fill=\"{}\">"
            "<title>{}: {:.1f} GPU-hours {}</title></rect>\n",
            x, y + 4, bw, colors[c], HtmlEscape(teams[t]), lost[t][static_cast<size_t>(c)],
            labels[c]);
      }
      x += bw;
    }
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"a\">{:.1f}</text>\n", x + 6, y + 17,
                       lost[t][0] + lost[t][1] + lost[t][2]);
  }
  return out + "</svg>\n";
}

// Two bars: the pool's GPUs, and the dedicated GPUs stacked by team.
std::string GpusNeeded(const PoolingReport& p, const std::vector<std::string>& teams) {
  const int w = 900, h = 150, left = 150, right = 90;  // room for "1234 GPUs" after a bar
  const int pw = w - left - right;
  const double max = static_cast<double>(std::max(p.pool_gpus, p.dedicated_gpus));
  std::string out = SvgOpen(w, h, "GPUs needed: pooled against dedicated");
  out +=
      "<text x=\"10\" y=\"18\" class=\"t\">GPUs needed: one shared pool against a "
      "dedicated pool per team (each at its own peak)</text>\n";
  out += fmt::format(
      "<text x=\"{}\" y=\"52\" class=\"l\" text-anchor=\"end\">shared pool</text>"
      "<rect x=\"{}\" y=\"36\" width=\"{:.1f}\" height=\"24\" fill=\"#1f77b4\"/>"
      "<text x=\"{:.1f}\" y=\"52\" class=\"l\">{} GPUs</text>\n",
      left - 8, left, pw * static_cast<double>(p.pool_gpus) / max,
      left + pw * static_cast<double>(p.pool_gpus) / max + 6, p.pool_gpus);
  out += fmt::format(
      "<text x=\"{}\" y=\"96\" class=\"l\" text-anchor=\"end\">dedicated "
      "pools</text>\n",
      left - 8);
  double x = left;
  std::map<std::string, size_t> rank;
  for (size_t t = 0; t < teams.size(); ++t) rank[teams[t]] = t;
  for (const DedicatedPool& d : p.dedicated) {
    const double bw = pw * static_cast<double>(d.gpus) / max;
    const size_t r = rank.count(d.queue) ? rank[d.queue] : kMaxTeams;
    out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"80\" width=\"{:.1f}\" height=\"24\" fill=\"{}\" stroke=\"#fff\">"
        "<title>{}: {} GPUs (peak {:.1f})</title></rect>\n",
        x, bw, r < kMaxTeams ? ChartColor(r) : "#aaa", HtmlEscape(d.queue), d.gpus,
        static_cast<double>(d.peak_milli) / 1000.0);
    x += bw;
  }
  out += fmt::format("<text x=\"{:.1f}\" y=\"96\" class=\"l\">{} GPUs</text>\n", x + 6,
                     p.dedicated_gpus);
  out += fmt::format(
      "<text x=\"{}\" y=\"135\" class=\"a\">Hover a segment for the team. A "
      "team's dedicated pool is its peak concurrent GPUs, rounded up.</text>\n",
      left);
  return out + "</svg>\n";
}

}  // namespace

std::string CostSection(const std::vector<ReplayRun>& runs, const Prices& prices) {
  std::string out = "<h2 id=\"cost\">Cost, chargeback and pooling</h2>\n";
  if (runs.empty()) return out + "<p>No run.</p>\n";
  size_t chosen = 0;
  for (size_t r = 0; r < runs.size(); ++r) {
    if (runs[r].label == "default") chosen = r;
  }
  const ReplayRun& run = runs[chosen];
  const LedgerReport& ledger = run.result.ledger;
  absl::StatusOr<Chargeback> chargeback = ComputeChargeback(ledger, prices);
  if (!chargeback.ok()) {
    return out + "<p>The prices do not fit this ledger: " +
           HtmlEscape(std::string(chargeback.status().message())) + "</p>\n";
  }
  const std::string& currency = chargeback->currency;
  out += fmt::format(
      "<p>Policy <b>{}</b>: {} GPU-hours used of {} available ({} utilization), costing <b>{}</b> "
      "at the configured prices{}. Preemption is paid by the {}. Exact figures: the CSV of "
      "<code>--chargeback</code> and the <code>ledger</code> object of <code>--json</code> "
      "(docs/accounting.md).</p>\n",
      HtmlEscape(run.label), Hours(ledger.pool.time.work.busy), Hours(ledger.pool.capacity),
      Percent(ledger.pool.time.work.busy, ledger.pool.capacity),
      Money(chargeback->total.cost_micros, currency),
      prices.gpu_models.empty() && prices.default_micros_per_gpu_hour.value_or(0) == 0
          ? " (no prices given: every GPU-hour costs 0; pass --prices)"
          : "",
      PreemptionPayerName(chargeback->preemption_paid_by));

  // Teams by GPU time, the largest kMaxTeams drawn one by one, the rest as "others".
  std::map<std::string, std::string> center_of;
  for (const QueueLedger& q : ledger.queues) center_of[q.queue] = "";
  for (size_t q = 0; q < ledger.queues.size(); ++q) {
    center_of[ledger.queues[q].queue] = chargeback->queues[q].cost_center;
  }
  std::vector<const QueueLedger*> teams;
  for (const QueueLedger& q : ledger.queues) teams.push_back(&q);
  std::stable_sort(teams.begin(), teams.end(), [](const QueueLedger* a, const QueueLedger* b) {
    return a->subtree.work.busy > b->subtree.work.busy;
  });
  std::vector<std::string> names;
  std::map<std::string, size_t> slot;
  for (size_t t = 0; t < teams.size(); ++t) {
    const size_t s = std::min(t, kMaxTeams);
    if (s == names.size()) names.push_back(t < kMaxTeams ? teams[t]->queue : "others");
    slot[teams[t]->queue] = s;
  }

  // Per day: GPU-hours and cost per team, from the hourly series.
  const int64_t per_day =
      ledger.series_bucket_s > 0 ? std::max<int64_t>(1, 86400 / ledger.series_bucket_s) : 1;
  const size_t days = static_cast<size_t>((ledger.series_buckets + per_day - 1) / per_day);
  std::vector<std::vector<double>> hours(names.size(), std::vector<double>(days, 0));
  std::vector<std::vector<double>> cost(names.size(), std::vector<double>(days, 0));
  std::map<std::string, int64_t> price;
  for (const ChargebackRow& row : chargeback->rows) price[row.gpu_model] = row.micros_per_gpu_hour;
  std::map<std::pair<std::string, std::string>, double> borrowed_delta;
  for (const ChargebackRow& row : chargeback->rows) {
    if (row.time.borrowed > 0) {
      borrowed_delta[{row.queue, row.gpu_model}] =
          static_cast<double>(row.borrowed_adjustment_micros) /
          static_cast<double>(row.time.borrowed);
    }
  }
  for (const QueueModelLedger& qm : ledger.queue_models) {
    const size_t s = slot[qm.queue];
    const double p = static_cast<double>(price[qm.gpu_model]) / kMilliPerGpuHour;
    const double delta = borrowed_delta[{qm.queue, qm.gpu_model}];
    for (size_t k = 0; k < qm.busy_series.size(); ++k) {
      const size_t d = k / static_cast<size_t>(per_day);
      hours[s][d] += static_cast<double>(qm.busy_series[k]) / kMilliPerGpuHour;
      cost[s][d] += (static_cast<double>(qm.busy_series[k]) * p +
                     static_cast<double>(qm.borrowed_series[k]) * delta) /
                    1e6;
    }
  }
  out += "<div class=\"charts\">\n";
  out += StackedBars("GPU-hours per team and day (stacked)", "GPU-hours per day", names, hours);
  out += StackedBars(
      fmt::format("Cost per team and day (stacked){}", currency.empty() ? "" : ", " + currency),
      currency.empty() ? "cost per day" : currency + " per day", names, cost);
  out += "</div>\n";

  // The chargeback per team.
  out +=
      "<h3>Chargeback per team</h3>\n<table><tr><th>cost center</th><th>team (queue)</th>"
      "<th>GPU-hours</th><th>borrowed</th><th>lost to preemption (GPU-h)</th>"
      "<th>restore (GPU-h)</th><th>lost to failures (GPU-h)</th><th>cost of lost work</th>"
      "<th>cost</th></tr>\n";
  std::vector<size_t> order(ledger.queues.size());
  for (size_t q = 0; q < order.size(); ++q) order[q] = q;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return chargeback->queues[a].cost_micros > chargeback->queues[b].cost_micros;
  });
  for (size_t q : order) {
    const ChargebackTotal& t = chargeback->queues[q];
    if (t.time.work.busy == 0 && t.cost_micros == 0) continue;
    out += fmt::format(
        "<tr><td>{}</td><td "
        "style=\"text-align:left\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td></tr>\n",
        HtmlEscape(t.cost_center), HtmlEscape(t.name), Hours(t.time.work.busy),
        Percent(t.time.borrowed, t.time.work.busy), Hours(t.time.work.lost_to_preemption),
        Hours(t.time.work.restore), Hours(t.time.work.lost_to_failure),
        Money(t.lost_to_preemption_cost_micros + t.lost_to_failure_cost_micros +
                  t.restore_cost_micros,
              currency),
        Money(t.cost_micros, currency));
  }
  const ChargebackTotal& total = chargeback->total;
  out += fmt::format(
      "<tr class=\"ours\"><td>all</td><td></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
      "<td>{}</td><td>{}</td><td>{}</td></tr>\n</table>\n",
      Hours(total.time.work.busy), Percent(total.time.borrowed, total.time.work.busy),
      Hours(total.time.work.lost_to_preemption), Hours(total.time.work.restore),
      Hours(total.time.work.lost_to_failure),
      Money(total.lost_to_preemption_cost_micros + total.lost_to_failure_cost_micros +
                total.restore_cost_micros,
            currency),
      Money(total.cost_micros, currency));
  out +=
      "<p class=\"s\">Borrowed: the share of the team's GPU time above its guarantee. Lost to "
      "preemption: GPU time since the victim's last checkpoint, thrown away when it was "
      "preempted; restore: GPU time spent reloading checkpoints after a preemption. Both are "
      "part of the team's GPU-hours and cost.</p>\n";

  // Lost work by cause.
  std::vector<std::string> lost_names;
  std::vector<std::array<double, 3>> lost;
  for (const QueueLedger* q : teams) {
    const WorkTime& w = q->subtree.work;
    if (w.lost_to_preemption + w.lost_to_failure + w.restore == 0) continue;
    lost_names.push_back(q->queue);
    lost.push_back({static_cast<double>(w.lost_to_preemption) / kMilliPerGpuHour,
                    static_cast<double>(w.lost_to_failure) / kMilliPerGpuHour,
                    static_cast<double>(w.restore) / kMilliPerGpuHour});
  }
  out += "<h3>Lost work by cause</h3>\n";
  if (lost.empty()) {
    out += fmt::format(
        "<p>No work was lost under <b>{}</b>: no preemption and no failure cost "
        "any GPU time.</p>\n",
        HtmlEscape(run.label));
  } else {
    out += LostBars(lost_names, lost);
  }

  // Pooled against dedicated, for every run.
  out += "<h3>Pooled against dedicated</h3>\n";
  std::string table =
      "<table><tr><th>policy</th><th>shared pool GPUs</th><th>dedicated GPUs (sum of team "
      "peaks)</th><th>pool utilization</th><th>dedicated utilization</th><th>pool cost</th>"
      "<th>dedicated cost</th><th>saved by pooling</th></tr>\n";
  for (size_t r = 0; r < runs.size(); ++r) {
    absl::StatusOr<PoolingReport> p = ComparePooling(runs[r].result.ledger, prices);
    if (!p.ok()) continue;
    if (r == chosen) out += GpusNeeded(*p, names);
    table += fmt::format(
        "<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td></tr>\n",
        r == chosen ? " class=\"ours\"" : "", HtmlEscape(runs[r].label), p->pool_gpus,
        p->dedicated_gpus, Percent(p->pooled_utilization_ppm, 1'000'000),
        Percent(p->dedicated_utilization_ppm, 1'000'000), Money(p->pooled_cost_micros, currency),
        Money(p->dedicated_cost_micros, currency), Money(p->savings_micros, currency));
  }
  out += table + "</table>\n";
  out +=
      "<p class=\"s\">A dedicated pool per team would need, for every team to start its jobs "
      "when they started in the shared pool, the most GPUs the team ever held at once. Costs "
      "are of owning the GPUs for the whole period, busy or idle, at the configured "
      "prices.</p>\n";

  out += BurnDownSection(run, slot);
  return out;
}

}  // namespace gpupool::sim::internal
