// JSON, CSV, text and HTML outputs of the inflation protocol (gpupool/sim/inflation_report.h).
#include "gpupool/sim/inflation_report.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "sim/json_number.h"
#include "sim/svg.h"

namespace gpupool::sim {

namespace {

using internal::DoubleField;
using internal::HtmlEscape;
using internal::JsonWriter;
using internal::WriteDouble;

struct Published {
  const char* list;
  std::array<double, 6> alloc;  // random, dotprod, gpu-clustering, gpu-packing, best-fit, fgd
};

// The FGD paper (Weng et al., ATC '23), Figure 9: mean allocation ratio (%) at 130% arrived,
// over seeds 42-51 (docs/simulator.md).
constexpr std::array<Published, 9> kPublished = {{
    {"default", {87.47, 90.85, 91.88, 92.00, 93.08, 95.39}},
    {"cpu050", {91.24, 93.27, 93.79, 93.72, 93.79, 95.21}},
    {"cpu200", {83.77, 87.70, 89.92, 90.22, 92.40, 95.05}},
    {"gpushare40", {86.00, 89.56, 90.02, 90.03, 91.69, 94.15}},
    {"gpushare80", {81.22, 84.49, 84.85, 85.00, 87.01, 89.30}},
    {"gpuspec10", {87.43, 90.39, 92.18, 92.46, 93.30, 94.95}},
    {"gpuspec25", {86.94, 89.63, 92.08, 92.98, 93.23, 94.74}},
    {"multigpu20", {88.69, 92.06, 93.56, 93.71, 93.93, 95.65}},
    {"multigpu40", {90.09, 94.19, 95.50, 95.74, 95.23, 96.99}},
}};

std::string Num(double v) { return fmt::format("{:.6f}", v); }

// busy / capacity in parts per million, rounded half up (0 without capacity).
int64_t Ppm(int64_t busy, int64_t capacity) {
  if (capacity <= 0) return 0;
  __extension__ typedef __int128 Int128;
  return static_cast<int64_t>((static_cast<Int128>(busy) * 2'000'000 + capacity) /
                              (static_cast<Int128>(capacity) * 2));
}

void WriteWork(JsonWriter& w, const QueueTime& t) {
  w.IntField("busy_milli_gpu_s", t.work.busy);
  w.IntField("productive_milli_gpu_s", t.work.productive);
  w.IntField("lost_to_preemption_milli_gpu_s", t.work.lost_to_preemption);
  w.IntField("lost_to_failure_milli_gpu_s", t.work.lost_to_failure);
  w.IntField("restore_milli_gpu_s", t.work.restore);
  w.IntField("within_guarantee_milli_gpu_s", t.within_guarantee);
  w.IntField("borrowed_milli_gpu_s", t.borrowed);
}

// The ledger object (docs/simulator.md, "The ledger"): the pool, each GPU model and each request
// class, every figure an integer.
void WriteLedger(JsonWriter& w, const InflationLedger& l) {
  w.Key("ledger");
  w.BeginObject();
  w.IntField("arrivals", l.arrivals);
  w.IntField("gpus", l.pool.gpus);
  w.IntField("capacity_milli_gpu_s", l.pool.capacity);
  w.IntField("idle_milli_gpu_s", l.pool.idle);
  WriteWork(w, l.pool.time);
  w.IntField("utilization_ppm", Ppm(l.pool.time.work.busy, l.pool.capacity));
  w.Key("models");
  w.BeginArray();
  for (const ModelLedger& m : l.models) {
    w.BeginOneLineObject();
    w.StringField("gpu_model", m.gpu_model);
    w.IntField("gpus", m.usage.gpus);
    w.IntField("capacity_milli_gpu_s", m.usage.capacity);
    w.IntField("idle_milli_gpu_s", m.usage.idle);
    WriteWork(w, m.usage.time);
    w.IntField("utilization_ppm", Ppm(m.usage.time.work.busy, m.usage.capacity));
    w.EndObject();
  }
  w.EndArray();
  w.Key("queues");
  w.BeginArray();
  for (const QueueLedger& q : l.queues) {
    w.BeginOneLineObject();
    w.StringField("queue", q.queue);
    WriteWork(w, q.own);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

void WritePolicy(JsonWriter& w, const PolicyResult& r, const InflationRunInfo& info) {
  w.BeginObject();
  w.StringField("policy", r.policy);
  w.StringField("protocol", info.protocol);
  w.StringField("nodes", info.nodes);
  w.StringField("pods", info.pods);
  w.Key("inflation");
  w.Number(fmt::format("{}", info.ratio));
  w.Key("seeds");
  w.BeginOneLineArray();
  for (const SeedResult& s : r.per_seed) w.Number(fmt::format("{}", s.seed));
  w.EndArray();
  DoubleField(w, "alloc_ratio_at_100", r.alloc_ratio_at_100.mean, 6);
  DoubleField(w, "alloc_ratio_at_130", r.alloc_ratio_at_130.mean, 6);
  DoubleField(w, "unallocated_gpus_at_130", r.unallocated_gpus_at_130.mean, 6);
  DoubleField(w, "frag_ratio_at_90", r.frag_ratio_at_90.mean, 6);
  DoubleField(w, "alloc_ratio_at_100_stddev", r.alloc_ratio_at_100.stddev, 6);
  DoubleField(w, "alloc_ratio_at_130_stddev", r.alloc_ratio_at_130.stddev, 6);
  DoubleField(w, "unallocated_gpus_at_130_stddev", r.unallocated_gpus_at_130.stddev, 6);
  DoubleField(w, "frag_ratio_at_90_stddev", r.frag_ratio_at_90.stddev, 6);
  w.Key("published_alloc_ratio_at_130");
  if (std::optional<double> published = PublishedAllocAt130(info.pods, r.policy)) {
    WriteDouble(w, *published, 6);
  } else {
    w.Null();
  }
  w.Key("per_seed");
  w.BeginArray();
  for (const SeedResult& s : r.per_seed) {
    w.BeginOneLineObject();
    w.Key("seed");
    w.Number(fmt::format("{}", s.seed));
    w.IntField("pods", s.pods);
    w.IntField("placed", s.placed);
    w.IntField("failed", s.failed);
    DoubleField(w, "alloc_ratio_at_100", s.alloc_ratio_at_100, 6);
    DoubleField(w, "alloc_ratio_at_130", s.alloc_ratio_at_130, 6);
    DoubleField(w, "unallocated_gpus_at_130", s.unallocated_gpus_at_130, 6);
    DoubleField(w, "frag_ratio_at_90", s.frag_ratio_at_90, 6);
    w.IntField("capacity_milli_gpu_s", s.ledger.pool.capacity);
    w.IntField("busy_milli_gpu_s", s.ledger.pool.time.work.busy);
    w.IntField("idle_milli_gpu_s", s.ledger.pool.idle);
    w.EndObject();
  }
  w.EndArray();
  WriteLedger(w, r.ledger);
  w.EndObject();
}

// Mean over seeds of a curve, point by point.
std::vector<std::array<double, 3>> MeanCurve(const PolicyResult& r) {
  std::vector<std::array<double, 3>> out;
  if (r.per_seed.empty()) return out;
  const size_t n = r.per_seed[0].curve.size();
  for (size_t i = 0; i < n; ++i) {
    double a = 0;
    double f = 0;
    for (const SeedResult& s : r.per_seed) {
      a += s.curve[std::min(i, s.curve.size() - 1)].alloc_ratio;
      f += s.curve[std::min(i, s.curve.size() - 1)].frag_ratio;
    }
    const double k = static_cast<double>(r.per_seed.size());
    out.push_back({static_cast<double>(r.per_seed[0].curve[i].arrived_percent), a / k, f / k});
  }
  return out;
}

// One SVG line chart of metric `m` (1: allocation, 2: fragmentation) against arrived load.
std::string Chart(const std::vector<PolicyResult>& results, int m, std::string_view title,
                  double x_min, double y_min, double y_max) {
  const int w = 640, h = 360, left = 56, right = 150, top = 30, bottom = 44;
  const int pw = w - left - right, ph = h - top - bottom;
  double x_max = 130;
  for (const PolicyResult& r : results) {
    for (const auto& p : MeanCurve(r)) x_max = std::max(x_max, p[0]);
  }
  auto X = [&](double x) { return left + (x - x_min) / (x_max - x_min) * pw; };
  auto Y = [&](double y) { return top + (1 - (y - y_min) / (y_max - y_min)) * ph; };
  std::string s = internal::SvgOpen(w, h, title);
  s += fmt::format("<text x=\"{}\" y=\"18\" class=\"t\">{}</text>\n", left, HtmlEscape(title));
  // Curves are clipped to the plot area: a value below a zoomed axis leaves the chart rather
  // than being drawn as a false flat line along its edge.
  const std::string clip = fmt::format("plot-{}-{:.0f}-{:.0f}", m, x_min, y_min * 1000);
  s += internal::SvgClipRect(clip, left, top, pw, ph);
  for (int i = 0; i <= 5; ++i) {
    const double y = y_min + (y_max - y_min) * i / 5;
    s += fmt::format(
        "<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" class=\"g\"/>"
        "<text x=\"{}\" y=\"{:.1f}\" class=\"a\" text-anchor=\"end\">{:.0f}%</text>\n",
        left, left + pw, Y(y), Y(y), left - 6, Y(y) + 4, y * 100);
  }
  const int step = x_max - x_min > 60 ? 10 : 5;
  for (int x = static_cast<int>(x_min); x <= static_cast<int>(x_max); x += step) {
    s += fmt::format(
        "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{}\" y2=\"{}\" class=\"g\"/>"
        "<text x=\"{:.1f}\" y=\"{}\" class=\"a\" text-anchor=\"middle\">{}</text>\n",
        X(x), X(x), top, top + ph, X(x), top + ph + 16, x);
  }
  s += fmt::format(
      "<text x=\"{}\" y=\"{}\" class=\"a\" text-anchor=\"middle\">arrived GPU request "
      "(% of cluster GPUs)</text>\n",
      left + pw / 2, h - 6);
  for (size_t k = 0; k < results.size(); ++k) {
    std::string points;
    for (const auto& p : MeanCurve(results[k])) {
      if (p[0] < x_min) continue;
      points += fmt::format("{:.1f},{:.1f} ", X(p[0]), Y(p[m]));
    }
    const char* color = internal::ChartColor(k);
    const bool ours = results[k].policy == "default";
    s += fmt::format(
        "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"{}\" clip-path=\"url(#{})\" "
        "points=\"{}\"/>\n",
        color, ours ? 3 : 1.5, clip, points);
    s += internal::SvgLegendEntry(left + pw + 12, top + 12 + 20 * static_cast<int>(k), color,
                                  results[k].policy);
  }
  s += "</svg>\n";
  return s;
}

}  // namespace

std::optional<double> PublishedAllocAt130(std::string_view pods, std::string_view policy) {
  static constexpr std::array<std::string_view, 6> kOrder = {
      "random", "dotprod", "gpu-clustering", "gpu-packing", "best-fit", "fgd"};
  int column = -1;
  for (size_t i = 0; i < kOrder.size(); ++i) {
    if (kOrder[i] == policy) column = static_cast<int>(i);
  }
  if (column < 0) return std::nullopt;
  for (const Published& p : kPublished) {
    if (pods.find(std::string("openb_pod_list_") + p.list + ".csv") != std::string_view::npos) {
      return p.alloc[column] / 100.0;
    }
  }
  return std::nullopt;
}

std::string InflationJson(const InflationRunInfo& info, const std::vector<PolicyResult>& results) {
  JsonWriter w;
  if (results.size() == 1) {
    WritePolicy(w, results[0], info);
  } else {
    w.BeginObject();
    w.Key("runs");
    w.BeginArray();
    for (const PolicyResult& r : results) WritePolicy(w, r, info);
    w.EndArray();
    w.EndObject();
  }
  return w.Finish();
}

std::string InflationCurvesCsv(const std::vector<PolicyResult>& results) {
  std::string out =
      "policy,seed,arrived_percent,arrived_gpu_milli,used_gpu_milli,alloc_ratio,frag_ratio\n";
  for (const PolicyResult& r : results) {
    for (const SeedResult& s : r.per_seed) {
      for (const CurvePoint& p : s.curve) {
        out += fmt::format("{},{},{},{},{},{},{}\n", r.policy, s.seed, p.arrived_percent,
                           p.arrived_gpu_milli, p.used_gpu_milli, Num(p.alloc_ratio),
                           Num(p.frag_ratio));
      }
    }
  }
  return out;
}

std::string InflationSummaryTable(const InflationRunInfo& info,
                                  const std::vector<PolicyResult>& results) {
  std::string seeds;
  if (!results.empty() && !results[0].per_seed.empty()) {
    const auto& ps = results[0].per_seed;
    seeds = ps.size() == 1
                ? std::to_string(ps[0].seed)
                : fmt::format("{}..{} ({} seeds)", ps.front().seed, ps.back().seed, ps.size());
  }
  std::string out = fmt::format(
      "gpupool simulate: {} protocol, {} nodes / {} GPUs ({}), pods {}, inflation {}, seeds {}\n\n",
      info.protocol, info.node_count, info.gpu_count, info.nodes, info.pods, info.ratio, seeds);
  out += fmt::format("{:<16} {:>15} {:>15} {:>14} {:>13} {:>11}\n", "policy", "alloc@100%",
                     "alloc@130%", "unalloc GPUs", "frag@90%", "published");
  for (const PolicyResult& r : results) {
    std::optional<double> pub = PublishedAllocAt130(info.pods, r.policy);
    out += fmt::format(
        "{:<16} {:>8.2f}% ±{:<4.2f} {:>8.2f}% ±{:<4.2f} {:>8.1f} ±{:<4.0f} {:>6.1f}% "
        "±{:<4.1f} {:>10}\n",
        r.policy, 100 * r.alloc_ratio_at_100.mean, 100 * r.alloc_ratio_at_100.stddev,
        100 * r.alloc_ratio_at_130.mean, 100 * r.alloc_ratio_at_130.stddev,
        r.unallocated_gpus_at_130.mean, r.unallocated_gpus_at_130.stddev,
        100 * r.frag_ratio_at_90.mean, 100 * r.frag_ratio_at_90.stddev,
        pub ? fmt::format("{:.2f}%", 100 * *pub) : std::string("-"));
  }
  return out;
}

std::string InflationHtmlReport(const InflationRunInfo& info,
                                const std::vector<PolicyResult>& results) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<title>gpupool simulate report</title>\n<style>\n";
  out += internal::kReportCss;
  out += "</style></head><body>\n";
  out += fmt::format(
      "<h1>gpupool simulate: {} protocol</h1>\n<p>{} nodes, {} GPUs ({}); pods: {}; inflation "
      "{}; {} seed(s) per policy. Curves are means over seeds.</p>\n",
      HtmlEscape(info.protocol), info.node_count, info.gpu_count, HtmlEscape(info.nodes),
      HtmlEscape(info.pods), info.ratio, results.empty() ? 0 : results[0].per_seed.size());
  double a_min = 1.0;
  double f_max = 0.0;
  for (const PolicyResult& r : results) {
    for (const auto& p : MeanCurve(r)) {
      if (p[0] >= 100) a_min = std::min(a_min, p[1]);
      f_max = std::max(f_max, p[2]);
    }
  }
  a_min = std::max(0.0, std::floor(a_min * 50 - 0.5) / 50);
  out += "<div class=\"charts\">\n";
  out += Chart(results, 1, "GPU allocation ratio vs arrived load", 0.0, 0.0, 1.0);
  out += Chart(results, 1, "GPU allocation ratio, 80% arrived and beyond", 80.0, a_min, 1.0);
  out += Chart(results, 2, "Fragmentation ratio (fragmented idle / idle GPU milli)", 0.0, 0.0,
               std::max(0.1, std::ceil(f_max * 10) / 10));
  out +=
      "</div>\n<table>\n<tr><th>policy</th><th>alloc @100%</th><th>alloc @130%</th>"
      "<th>unallocated GPUs @130%</th><th>frag ratio @90%</th>"
      "<th>published alloc @130% (FGD paper)</th></tr>\n";
  for (const PolicyResult& r : results) {
    std::optional<double> pub = PublishedAllocAt130(info.pods, r.policy);
    out += fmt::format(
        "<tr{}><td>{}</td><td>{:.2f}% ± {:.2f}</td><td>{:.2f}% ± {:.2f}</td><td>{:.1f} ± "
        "{:.1f}</td><td>{:.1f}% ± {:.1f}</td><td>{}</td></tr>\n",
        r.policy == "default" ? " class=\"ours\"" : "", HtmlEscape(r.policy),
        100 * r.alloc_ratio_at_100.mean, 100 * r.alloc_ratio_at_100.stddev,
        100 * r.alloc_ratio_at_130.mean, 100 * r.alloc_ratio_at_130.stddev,
        r.unallocated_gpus_at_130.mean, r.unallocated_gpus_at_130.stddev,
        100 * r.frag_ratio_at_90.mean, 100 * r.frag_ratio_at_90.stddev,
        pub ? fmt::format("{:.2f}%", 100 * *pub) : std::string("&ndash;"));
  }
  out +=
      "</table>\n<p>Allocation ratio: used GPU milli / total GPU milli. Fragmentation ratio: "
      "the FGD paper's measure, defined in docs/simulator.md. ± is the standard deviation over "
      "seeds.</p>\n</body></html>\n";
  return out;
}

}  // namespace gpupool::sim
