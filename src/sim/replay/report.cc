// The HTML report of the replay (docs/replay.md, "HTML report").
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "gpupool/resources.h"
#include "gpupool/sim/replay_report.h"
#include "sim/replay/cost_page.h"
#include "sim/svg.h"

namespace gpupool::sim {
namespace {

using internal::ChartColor;
using internal::HtmlEscape;

constexpr int64_t kDay = 86400;

// 1234567 -> "1,234,567".
std::string Grouped(int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

// GPU-seconds as GPU-hours with one decimal, grouped: "56,710.5".
std::string GpuHours(double gpu_seconds) {
  const int64_t tenths = std::llround(gpu_seconds / 360);
  return fmt::format("{}.{}", Grouped(tenths / 10), tenths % 10);
}

// A duration for people: "45 s", "12.5 min", "3.7 h", "2.1 d".
std::string Human(double s) {
  if (s < 120) return fmt::format("{:.0f} s", s);
  if (s < 3600) return fmt::format("{:.1f} min", s / 60);
  if (s < 2 * kDay) return fmt::format("{:.1f} h", s / 3600);
  return fmt::format("{:.1f} d", s / kDay);
}

// Seconds, grouped, with the human form below.
std::string Seconds(double s) {
  return fmt::format("{} s<br><span class=\"s\">{}</span>", Grouped(std::llround(s)), Human(s));
}

// A round step (1, 2 or 5 x 10^k) splitting [0, max] into at most about `parts` intervals.
double NiceStep(double max, int parts) {
  if (max <= 0) return 1;
  const double raw = max / parts;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= raw) return m * p;
  }
  return 10 * p;
}

// One CDF line: a label and its values (seconds).
struct Distribution {
  std::string label;
  std::vector<int64_t> values;
};

// Empirical CDFs of `lines` on a log time axis. Values below the axis (0 s) are drawn at its
// left edge. Points closer than a tenth of a pixel are merged, so a line has at most a few
// points per pixel column whatever the number of jobs.
std::string CdfChart(const std::vector<Distribution>& lines, std::string_view title,
                     std::string_view x_label, std::string_view id) {
  const int w = 640, h = 360, left = 56, right = 140, top = 30, bottom = 44;
  const int pw = w - left - right, ph = h - top - bottom;
  int64_t lo = 0, hi = 0;
  for (const Distribution& d : lines) {
    for (int64_t v : d.values) {
      if (v > 0 && (lo == 0 || v < lo)) lo = v;
      hi = std::max(hi, v);
    }
  }
  // Whole decades around the positive values, at least 1 s .. 10 s.
  const double lo_exp = lo > 0 ? std::floor(std::log10(static_cast<double>(lo))) : 0;
  const double hi_exp =
      std::max(lo_exp + 1, hi > 0 ? std::ceil(std::log10(static_cast<double>(hi))) : 1);
  auto X = [&](double v) {
    const double e = v > 0 ? std::log10(v) : lo_exp;
    return left + (std::clamp(e, lo_exp, hi_exp) - lo_exp) / (hi_exp - lo_exp) * pw;
  };
  auto Y = [&](double f) { return top + (1 - f) * ph; };
  std::string s = internal::SvgOpen(w, h, title);
  s += fmt::format("<text x=\"{}\" y=\"18\" class=\"t\">{}</text>\n", left, HtmlEscape(title));
  const std::string clip = fmt::format("clip-{}", id);
  s += internal::SvgClipRect(clip, left, top, pw, ph);
  for (double f : {0.0, 0.25, 0.5, 0.75, 0.9, 1.0}) {
    s += fmt::format(
        "<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" class=\"g\"/>"
        "<text x=\"{}\" y=\"{:.1f}\" class=\"a\" text-anchor=\"end\">{:.0f}%</text>\n",
        left, left + pw, Y(f), Y(f), left - 6, Y(f) + 4, f * 100);
  }
  static constexpr std::array<std::pair<int64_t, const char*>, 9> kTicks = {
      {{1, "1 s"},
       {10, "10 s"},
       {60, "1 min"},
       {600, "10 min"},
       {3600, "1 h"},
       {kDay, "1 d"},
       {10 * kDay, "10 d"},
       {100 * kDay, "100 d"},
       {1000 * kDay, "1000 d"}}};
  for (const auto& [v, text] : kTicks) {
    const double e = std::log10(static_cast<double>(v));
    if (e < lo_exp - 1e-9 || e > hi_exp + 1e-9) continue;
    s += fmt::format(
        "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{}\" y2=\"{}\" class=\"g\"/>"
        "<text x=\"{:.1f}\" y=\"{}\" class=\"a\" text-anchor=\"middle\">{}</text>\n",
        X(static_cast<double>(v)), X(static_cast<double>(v)), top, top + ph,
        X(static_cast<double>(v)), top + ph + 16, text);
  }
  s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"a\" text-anchor=\"middle\">{}</text>\n",
                   left + pw / 2, h - 6, HtmlEscape(x_label));
  for (size_t k = 0; k < lines.size(); ++k) {
    std::vector<int64_t> v = lines[k].values;
    std::sort(v.begin(), v.end());
    std::vector<std::pair<double, double>> points = {{X(0), Y(0)}};
    const double n = static_cast<double>(v.size());
    double prev_f = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      if (i + 1 < v.size() && v[i + 1] == v[i]) continue;
      const double f = static_cast<double>(i + 1) / n;
      const double x = X(static_cast<double>(v[i]));
      if (std::abs(points.back().first - x) < 0.1) {
        points.back().second = Y(f);
      } else {
        points.emplace_back(x, Y(prev_f));
        points.emplace_back(x, Y(f));
      }
      prev_f = f;
    }
    points.emplace_back(left + pw, Y(prev_f));
    std::string pts;
    for (const auto& [x, y] : points) pts += fmt::format("{:.1f},{:.1f} ", x, y);
    const char* color = ChartColor(k);
    s += fmt::format(
        "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"{}\" clip-path=\"url(#{})\" "
        "points=\"{}\"/>\n",
        color, lines[k].label == "default" ? 2.5 : 1.5, clip, pts);
    s += internal::SvgLegendEntry(left + pw + 12, top + 12 + 20 * static_cast<int>(k), color,
                                  lines[k].label);
  }
  s += "</svg>\n";
  return s;
}

// The time axis shared by the queue charts: the earliest series start, the longest span and the
// number of buckets averaged into one point.
struct TimeAxis {
  int64_t origin = 0;
  int64_t span_s = 0;
  int64_t group = 1;
};

// Mean GPUs over each group of `group` buckets of `milli_s` (bucket width `bucket_s`, the last
// bucket ending at `end`), as (seconds since `origin` at the group's middle, GPUs).
std::vector<std::pair<double, double>> GroupMeans(const std::vector<int64_t>& milli_s,
                                                  const ReplaySeries& series, int64_t origin,
                                                  int64_t group) {
  std::vector<std::pair<double, double>> out;
  const int64_t width = series.bucket_s * group;
  for (size_t k = 0; k < milli_s.size(); k += static_cast<size_t>(group)) {
    const int64_t from = series.start + static_cast<int64_t>(k) * series.bucket_s;
    const int64_t to = std::min(from + width, std::max(series.end, from + 1));
    int64_t sum = 0;
    for (size_t j = k; j < std::min(milli_s.size(), k + static_cast<size_t>(group)); ++j) {
      sum += milli_s[j];
    }
    out.emplace_back(static_cast<double>(from + to) / 2 - static_cast<double>(origin),
                     static_cast<double>(sum) / kMilliPerGpu / static_cast<double>(to - from));
  }
  return out;
}

// One small chart of queue `name`: per run its received (solid) and entitled (dashed) GPUs, and
// the guarantee (dotted grey).
std::string QueueChart(const std::vector<ReplayRun>& runs, const std::string& name, size_t index,
                       const TimeAxis& axis) {
  const int w = 320, h = 210, left = 46, right = 10, top = 44, bottom = 30;
  const int pw = w - left - right, ph = h - top - bottom;
  struct Lines {
    std::vector<std::pair<double, double>> received, entitled;
    const QueueMetrics* metrics = nullptr;
  };
  std::vector<Lines> lines(runs.size());
  double y_max = 0;
  double guarantee = -1;
  for (size_t r = 0; r < runs.size(); ++r) {
    const ReplayResult& result = runs[r].result;
    for (const QueueSeries& qs : result.series.queues) {
      if (qs.queue != name) continue;
      lines[r].received =
          GroupMeans(qs.received_milli_gpu_s, result.series, axis.origin, axis.group);
      lines[r].entitled =
          GroupMeans(qs.entitled_milli_gpu_s, result.series, axis.origin, axis.group);
    }
    for (const QueueMetrics& qm : result.metrics.queues) {
      if (qm.queue != name) continue;
      lines[r].metrics = &qm;
      if (guarantee < 0) guarantee = static_cast<double>(qm.guaranteed_milli) / kMilliPerGpu;
    }
    for (const auto* line : {&lines[r].received, &lines[r].entitled}) {
      for (const auto& p : *line) y_max = std::max(y_max, p.second);
    }
  }
  y_max = std::max(y_max, guarantee);
  const double step = NiceStep(y_max, 4);
  y_max = std::max(step, std::ceil(y_max / step - 1e-9) * step);
  const double x_max = std::max(1.0, static_cast<double>(axis.span_s) / kDay);
  auto X = [&](double days) { return left + days / x_max * pw; };
  auto Y = [&](double gpus) { return top + (1 - gpus / y_max) * ph; };

  std::string s = internal::SvgOpen(w, h, "queue " + name);
  s += fmt::format("<text x=\"6\" y=\"16\" class=\"t\">{}</text>\n", HtmlEscape(name));
  if (guarantee >= 0) {
    s += fmt::format(
        "<text x=\"{}\" y=\"16\" class=\"a\" text-anchor=\"end\">guarantee {:.1f} GPUs</text>\n",
        w - 6, guarantee);
  }
  s += fmt::format(
      "<text transform=\"rotate(-90)\" x=\"{}\" y=\"11\" class=\"a\" "
      "text-anchor=\"middle\">GPUs</text>\n",
      -(top + ph / 2));
  std::string sub;
  for (size_t r = 0; r < runs.size(); ++r) {
    if (lines[r].metrics == nullptr) continue;
    sub += fmt::format("{}{} {:.2f}", r == 0 ? "received / entitled: " : ", ", runs[r].label,
                       lines[r].metrics->share_ratio);
  }
  s += fmt::format("<text x=\"6\" y=\"32\" class=\"a\">{}</text>\n", HtmlEscape(sub));
  const std::string clip = fmt::format("clip-q{}", index);
  s += internal::SvgClipRect(clip, left, top, pw, ph);
  for (double y = 0; y <= y_max + 1e-9; y += step) {
    s += fmt::format(
        "<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" class=\"g\"/>"
        "<text x=\"{}\" y=\"{:.1f}\" class=\"a\" text-anchor=\"end\">{:g}</text>\n",
        left, left + pw, Y(y), Y(y), left - 4, Y(y) + 4, y);
  }
  int day_step = 1;
  for (int candidate : {1, 2, 5, 7, 10, 14, 30, 60, 100}) {
    day_step = candidate;
    if (x_max / candidate <= 6) break;
  }
  for (int d = 0; d <= static_cast<int>(x_max + 1e-9); d += day_step) {
    s += fmt::format(
        "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{}\" y2=\"{}\" class=\"g\"/>"
        "<text x=\"{:.1f}\" y=\"{}\" class=\"a\" text-anchor=\"middle\">{}</text>\n",
        X(d), X(d), top, top + ph, X(d), top + ph + 14, d);
  }
  s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"a\" text-anchor=\"end\">days</text>\n",
                   left + pw, h - 2);
  if (guarantee >= 0) {
    s += fmt::format(
        "<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#888\" "
        "stroke-dasharray=\"1,3\" clip-path=\"url(#{})\"/>\n",
        left, left + pw, Y(guarantee), Y(guarantee), clip);
  }
  auto polyline = [&](const std::vector<std::pair<double, double>>& points, const char* color,
                      double width, std::string_view dash) {
    std::string pts;
    for (const auto& [t, gpus] : points) {
      pts += fmt::format("{:.1f},{:.1f} ", X(t / kDay), Y(gpus));
    }
    return fmt::format(
        "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"{} clip-path=\"url(#{})\" "
        "points=\"{}\"/>\n",
        color, width, dash.empty() ? std::string() : fmt::format(" stroke-dasharray=\"{}\"", dash),
        clip, pts);
  };
  for (size_t r = 0; r < runs.size(); ++r) {
    s += polyline(lines[r].entitled, ChartColor(r), 1.2, "4,3");
  }
  for (size_t r = 0; r < runs.size(); ++r) {
    s += polyline(lines[r].received, ChartColor(r), 1.4, "");
  }
  s += "</svg>\n";
  return s;
}

std::string MetricsTable(const std::vector<ReplayRun>& runs) {
  std::string out =
      "<table class=\"m\">\n<tr><th>policy</th><th>jobs</th><th>JCT mean</th><th>JCT "
      "p50</th><th>JCT p99</th><th>queue delay mean</th>"
      "<th>queue delay p99</th><th>max wait</th><th>makespan</th><th>utilization</th>"
      "<th>preemptions</th><th>GPU-hours lost</th><th>Jain fairness</th>"
      "<th>cycles</th></tr>\n";
  for (const ReplayRun& run : runs) {
    const ReplayMetrics& m = run.result.metrics;
    out += fmt::format(
        "<tr{}><td>{}</td><td>{}<br><span "
        "class=\"s\">{}</span></td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1f}%</td><td>{}</td><td>{:.1f}</td>"
        "<td>{:.3f}</td><td>{}</td></tr>\n",
        run.label == "default" ? " class=\"ours\"" : "", HtmlEscape(run.label), Grouped(m.jobs),
        m.jobs_unschedulable == 0
            ? fmt::format("{} completed", Grouped(m.jobs_completed))
            : fmt::format("{} completed, {} unschedulable", Grouped(m.jobs_completed),
                          Grouped(m.jobs_unschedulable)),
        Seconds(m.jct_mean_s), Seconds(m.jct_p50_s), Seconds(m.jct_p99_s),
        Seconds(m.queue_delay_mean_s), Seconds(m.queue_delay_p99_s),
        Seconds(static_cast<double>(m.max_wait_s)), Seconds(static_cast<double>(m.makespan_s)),
        100 * m.utilization, Grouped(m.preemptions), m.gpu_hours_lost_to_preemption,
        m.jain_fairness, Grouped(m.cycles));
  }
  out += "</table>\n";
  return out;
}

// Maintenance windows, spot reclaims and scaling, one row per run with any of them on
// (docs/replay.md, "Maintenance, spot reclaims and scaling"); "-" for the ones off; nothing when
// no run has any, so that those reports stay what they were.
std::string PoolOperationsTable(const std::vector<ReplayRun>& runs) {
  std::string rows;
  for (const ReplayRun& run : runs) {
    const ReplayMetrics& m = run.result.metrics;
    if (!m.maintenance_on && !m.spot_on && !m.scaling_on) continue;
    const std::string maintenance =
        m.maintenance_on
            ? fmt::format("<td>{}</td><td>{}</td><td>{:.1f}</td><td>{:.1f}</td>",
                          Grouped(m.maintenance_windows), Grouped(m.maintenance_stops),
                          m.gpu_hours_lost_to_maintenance, m.node_hours_under_maintenance)
            : std::string("<td>-</td><td>-</td><td>-</td><td>-</td>");
    const std::string spot =
        m.spot_on ? fmt::format("<td>{}</td><td>{}</td><td>{:.1f}</td><td>{:.1f}</td>",
                                Grouped(m.spot_reclaims), Grouped(m.spot_stops),
                                m.gpu_hours_lost_to_spot, m.node_hours_reclaimed)
                  : std::string("<td>-</td><td>-</td><td>-</td><td>-</td>");
    const std::string scaling =
        m.scaling_on
            ? fmt::format("<td>{}</td><td>{}</td><td>{}</td><td>{:.1f}</td><td>{:.2f}</td>",
                          Grouped(m.nodes_added), Grouped(m.nodes_released), m.max_added_nodes,
                          m.added_node_hours, m.scale_cost)
            : std::string("<td>-</td><td>-</td><td>-</td><td>-</td><td>-</td>");
    rows += fmt::format("<tr><td>{}</td>{}{}{}</tr>\n", HtmlEscape(run.label), maintenance, spot,
                        scaling);
  }
  if (rows.empty()) return "";
  return "<h3>Maintenance, spot reclaims and scaling</h3>\n<table class=\"m\">\n<tr><th>policy</th>"
         "<th>windows</th><th>runs stopped</th><th>GPU-hours lost</th><th>node-hours in "
         "maintenance</th><th>spot reclaims</th><th>runs stopped</th><th>GPU-hours lost</th>"
         "<th>node-hours taken</th><th>nodes ordered</th><th>released</th><th>most added at "
         "once</th><th>added node-hours</th><th>scale cost</th></tr>\n" +
         rows +
         "</table>\n<p class=\"s\">Jobs in a window's way are checkpointed and stopped at its "
         "start; a reclaimed spot node's jobs checkpoint on demand and lose only their restore. "
         "GPU-hours lost: GPUs x (work since the last checkpoint + restore). docs/replay.md, "
         "\"Maintenance, spot reclaims and scaling\".</p>\n";
}

// Failures and repairs, one row per run with failures on (docs/replay.md, "Failures and
// repairs"); nothing when no run has them, so that those reports stay what they were.
std::string FailureTable(const std::vector<ReplayRun>& runs) {
  std::string rows;
  for (const ReplayRun& run : runs) {
    const ReplayMetrics& m = run.result.metrics;
    if (!m.failures_on) continue;
    const ReplayFailures& f = m.failure_model;
    rows += fmt::format(
        "<tr><td>{}</td><td>{}.{:03} / {}.{:03}</td><td>{:.1f} h</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{:.1f}</td><td>{:.1f}</td><td>{:.1f}</td></tr>\n",
        HtmlEscape(run.label), f.gpu_per_million_gpu_days / 1000, f.gpu_per_million_gpu_days % 1000,
        f.node_per_million_node_days / 1000, f.node_per_million_node_days % 1000,
        static_cast<double>(f.repair_s) / 3600, f.seed, Grouped(m.gpu_failures),
        Grouped(m.node_failures), Grouped(m.failure_stops), m.gpu_hours_lost_to_failures,
        m.gpu_hours_under_repair, m.node_hours_under_repair);
  }
  if (rows.empty()) return "";
  return "<h3>Failures and repairs</h3>\n<table class=\"m\">\n<tr><th>policy</th>"
         "<th>rates per 1,000 GPU-days / node-days</th><th>repair</th><th>seed</th>"
         "<th>GPU failures</th><th>node failures</th><th>runs stopped</th>"
         "<th>GPU-hours lost to failures</th><th>GPU-hours under repair</th>"
         "<th>node-hours under repair</th></tr>\n" +
         rows +
         "</table>\n<p class=\"s\">A failed GPU or node is out of service for the repair "
         "time; the jobs on it stop and keep the work of their last checkpoint. GPU-hours lost: "
         "GPUs x (work since the last checkpoint + restore). GPUs under repair stay in the "
         "capacity (idle). docs/replay.md, \"Failures and repairs\".</p>\n";
}

std::string QueueTable(const std::vector<ReplayRun>& runs, const std::vector<std::string>& names) {
  std::string out =
      "<table>\n<tr><th rowspan=\"2\">queue</th><th rowspan=\"2\">jobs</th>"
      "<th rowspan=\"2\">share of demand</th><th rowspan=\"2\">guarantee (GPUs)</th>";
  for (const ReplayRun& run : runs) {
    out += fmt::format("<th colspan=\"4\">{}</th>", HtmlEscape(run.label));
  }
  out += "</tr>\n<tr>";
  for (size_t r = 0; r < runs.size(); ++r) {
    out += "<th>received (GPU-h)</th><th>entitled (GPU-h)</th><th>ratio</th><th>JCT mean</th>";
  }
  out += "</tr>\n";
  for (const std::string& name : names) {
    const QueueMetrics* first = nullptr;
    std::string cells;
    for (const ReplayRun& run : runs) {
      const QueueMetrics* qm = nullptr;
      for (const QueueMetrics& q : run.result.metrics.queues) {
        if (q.queue == name) qm = &q;
      }
      if (qm == nullptr) {
        cells += "<td></td><td></td><td></td><td></td>";
        continue;
      }
      if (first == nullptr) first = qm;
      cells += fmt::format("<td>{}</td><td>{}</td><td>{:.3f}</td><td>{}</td>",
                           GpuHours(qm->received_gpu_seconds), GpuHours(qm->entitled_gpu_seconds),
                           qm->share_ratio, Seconds(qm->jct_mean_s));
    }
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{:.2f}%</td><td>{:.1f}</td>{}</tr>\n", HtmlEscape(name),
        first ? Grouped(first->jobs) : "", first ? 100 * first->demand_fraction : 0.0,
        first ? static_cast<double>(first->guaranteed_milli) / kMilliPerGpu : 0.0, cells);
  }
  out += "</table>\n";
  return out;
}

}  // namespace

std::string ReplayHtmlReport(const std::vector<ReplayRun>& runs, const ReplayReportInfo& info) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<title>gpupool simulate report: replay</title>\n<style>\n";
  out += internal::kReportCss;
  out +=
      ".s{font-size:11px;color:#666;font-weight:normal} h2{font-size:16px;margin-top:28px} "
      ".legend{margin:8px 0} td{white-space:nowrap} th{font-size:12px} "
      "th[colspan]{text-align:center} table.m td,table.m th{padding:4px "
      "7px}\n</style></head><body>\n";
  out += "<h1>gpupool simulate: replay protocol</h1>\n<p>";
  std::vector<std::string> parts;
  if (!info.trace.empty()) parts.push_back("trace " + HtmlEscape(info.trace));
  if (!info.window.empty()) parts.push_back(HtmlEscape(info.window));
  parts.push_back(fmt::format("pool {} nodes x {} GPUs ({} GPUs), {} nodes per rack",
                              info.pool.nodes, info.pool.gpus_per_node, info.pool.TotalGpus(),
                              info.pool.nodes_per_rack));
  if (!runs.empty()) {
    parts.push_back(fmt::format("{} jobs", Grouped(runs[0].result.metrics.jobs)));
  }
  for (size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? "" : "; ") + parts[i];
  out += ".</p>\n";

  out += "<h2>Metrics</h2>\n" + MetricsTable(runs) + FailureTable(runs) + PoolOperationsTable(runs);

  out += "<h2>Job completion time and queueing delay</h2>\n<div class=\"charts\">\n";
  std::vector<Distribution> jct, delay;
  for (const ReplayRun& run : runs) {
    Distribution j{.label = run.label, .values = {}};
    Distribution d{.label = run.label, .values = {}};
    for (const JobOutcome& o : run.result.jobs) {
      if (o.jct_s < 0) continue;
      j.values.push_back(o.jct_s);
      d.values.push_back(o.pending_s);
    }
    jct.push_back(std::move(j));
    delay.push_back(std::move(d));
  }
  out += CdfChart(jct, "JCT distribution (CDF)", "job completion time (log scale)", "jct");
  out += CdfChart(delay, "Queueing delay distribution (CDF)",
                  "time pending (log scale; 0 s at the left edge)", "delay");
  out += "</div>\n";

  // Queue charts on one time axis.
  TimeAxis axis;
  int64_t max_buckets = 0;
  bool first = true;
  for (const ReplayRun& run : runs) {
    const ReplaySeries& series = run.result.series;
    if (series.queues.empty()) continue;
    axis.origin = first ? series.start : std::min(axis.origin, series.start);
    first = false;
  }
  for (const ReplayRun& run : runs) {
    const ReplaySeries& series = run.result.series;
    if (series.queues.empty()) continue;
    axis.span_s = std::max(axis.span_s, series.end - axis.origin);
    max_buckets =
        std::max(max_buckets, static_cast<int64_t>(series.queues[0].received_milli_gpu_s.size()));
  }
  constexpr int64_t kPlotWidth = 264;  // QueueChart's plot area, pixels
  axis.group = std::max<int64_t>(1, (max_buckets + kPlotWidth - 1) / kPlotWidth);
  const int64_t bucket_s = runs.empty() ? 0 : runs[0].result.series.bucket_s;
  std::vector<std::string> names;
  if (!runs.empty()) {
    for (const QueueMetrics& qm : runs[0].result.metrics.queues) names.push_back(qm.queue);
  }
  out += "<h2>Share received versus entitlement, per queue</h2>\n<div class=\"legend\">";
  // Legend entries laid out left to right, about 7 pixels per character of 12 px text.
  std::string legend;
  int x = 4;
  auto entry = [&](const char* color, const std::string& label, std::string_view dash) {
    legend += internal::SvgLegendEntry(x, 13, color, label, dash);
    x += 24 + 7 * static_cast<int>(label.size()) + 20;
  };
  for (size_t r = 0; r < runs.size(); ++r) {
    entry(ChartColor(r), runs[r].label + " received", "");
    entry(ChartColor(r), runs[r].label + " entitled", "4,3");
  }
  entry("#888", "guarantee", "1,3");
  out += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"26\" "
      "style=\"border:none\">\n{}",
      x, legend);
  out += "</svg></div>\n";
  out += fmt::format(
      "<p class=\"s\">Mean GPUs held (received) and fair-share entitlement over {}, against days "
      "since {} UTC. Entitlement: the guarantee bounded by the queue's demand (GPUs of its "
      "running and pending jobs), then the rest of the pool water-filled with weight 1 among "
      "queues that want more; it depends on the policy through the demand. The ratio after each "
      "policy name is received / entitled over the whole replay. Where the policies agree, the "
      "last line drawn covers the others.</p>\n",
      bucket_s * axis.group % 3600 == 0 ? fmt::format("{} h", bucket_s * axis.group / 3600)
                                        : fmt::format("{} s", bucket_s * axis.group),
      FormatUtcTime(axis.origin));
  out += "<div class=\"charts\">\n";
  for (size_t q = 0; q < names.size(); ++q) out += QueueChart(runs, names[q], q, axis);
  out += "</div>\n";

  out += "<h2>Per queue</h2>\n" + QueueTable(runs, names);
  out +=
      "<p class=\"s\">JCT: completion - submit. Queueing delay: every second a job spent "
      "pending (before its first start and after each preemption). Utilization: GPU-seconds "
      "held / (pool GPUs x makespan). Jain fairness: Jain's index of received / entitled over "
      "the queues with any entitlement. Percentiles by nearest rank. docs/replay.md defines "
      "every metric.</p>\n";
  out += internal::CostSection(runs, info.prices);
  out += "</body></html>\n";
  return out;
}

std::string ReplayHtmlReport(const ReplayResult& result, const ReplayReportInfo& info) {
  return ReplayHtmlReport(
      std::vector<ReplayRun>{ReplayRun{.label = result.metrics.policy, .result = result}}, info);
}

}  // namespace gpupool::sim
