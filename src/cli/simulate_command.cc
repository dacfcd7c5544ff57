// `gpupool simulate`: the two simulators. The pod-level inflation protocol (docs/simulator.md)
// by default; the job-level replay of the Philly trace with --protocol replay (docs/replay.md).
//
//   gpupool simulate                      built-in openb-like cluster and synthetic workload,
//                                         every policy, seeds 42-51, summary table on stdout
//   gpupool simulate --protocol inflation --nodes NODES.csv --pods PODS.csv --inflation 1.3
//       --seeds 42-51 --policy NAME[,NAME...|all] [--json OUT.json] [--csv OUT.csv]
//       [--html OUT.html]
//   gpupool simulate --protocol replay --trace philly:PATH [--cluster NxG[/R]]
//       [--window-start YYYY-MM-DD --window-days D] --policy NAME[,NAME...|all] [--json OUT.json]
//       [--html OUT.html] [--prices PRICES.json] [--chargeback OUT.csv] [--budgets BUDGETS.json]
//       [--failures RATE|published] [--node-failures RATE] [--repair-hours H] [--failure-seed N]
//       [--maintenance DAYS:HOURS] [--maintenance-notice-hours H] [--spot-nodes N]
//       [--spot-reclaims RATE] [--spot-away-hours H] [--spot-seed N] [--scale-nodes N]
//       [--scale-cost-per-hour X] [--provision-minutes M]
//       (the job-level replay of the Philly trace in time, docs/replay.md)
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"
#include "cli/simulate_flags.h"
#include "fmt/format.h"
#include "gpupool/chargeback.h"
#include "gpupool/io/accounting.h"
#include "gpupool/pooling.h"
#include "gpupool/sim/inflation.h"
#include "gpupool/sim/inflation_report.h"
#include "gpupool/sim/philly.h"
#include "gpupool/sim/replay.h"
#include "gpupool/sim/replay_budgets.h"
#include "gpupool/sim/replay_report.h"
#include "gpupool/sim/trace_job.h"
#include "gpupool/sim/utc_time.h"
#include "gpupool/sim/workload.h"

namespace gpupool::cli {

namespace {

absl::Status WriteFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  if (!out) return absl::InvalidArgumentError(fmt::format("cannot write {}", path));
  out << content;
  if (!out) return absl::InvalidArgumentError(fmt::format("cannot write {}", path));
  return absl::OkStatus();
}

// The arrival order of an FGD replay fixture (its base_pod column), as workload indices. Errors
// name the file as the trace readers do: by its base name, with the line.
absl::StatusOr<std::vector<int32_t>> ReadArrivals(const std::string& path,
                                                  const sim::Workload& workload) {
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(fmt::format("cannot read {}", path));
  const std::string name = std::filesystem::path(path).filename().string();
  std::map<std::string, int32_t> index;
  for (size_t i = 0; i < workload.pods.size(); ++i) {
    index.emplace(workload.pods[i].id, static_cast<int32_t>(i));
  }
  std::string line;
  std::getline(in, line);
  if (line.rfind("seq,pod,base_pod", 0) != 0) {
    return absl::InvalidArgumentError(
        fmt::format("{}:1: header: expected \"seq,pod,base_pod,...\"", name));
  }
  std::vector<int32_t> arrivals;
  int number = 1;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    std::stringstream ss(line);
    std::string seq, pod, base;
    std::getline(ss, seq, ',');
    std::getline(ss, pod, ',');
    std::getline(ss, base, ',');
    auto it = index.find(base);
    if (it == index.end()) {
      return absl::InvalidArgumentError(
          fmt::format("{}:{}: base_pod: no pod \"{}\" in the pod list", name, number, base));
    }
    arrivals.push_back(it->second);
  }
  return arrivals;
}

// Adds the members of the JSON object document `members` to the JSON object document `object`
// (both canonical, members indented by 2 spaces): one object with the members of both.
std::string MergeJsonObjects(const std::string& object, const std::string& members) {
  std::string out = object.substr(0, object.rfind('}'));
  while (!out.empty() && out.back() == '\n') out.pop_back();
  const size_t open = members.find('{');
  const size_t close = members.rfind('}');
  std::string inner = members.substr(open + 1, close - open - 1);
  while (!inner.empty() && inner.front() == '\n') inner.erase(0, 1);
  while (!inner.empty() && inner.back() == '\n') inner.pop_back();
  return out + ",\n" + inner + "\n}\n";
}

// The JSON object document `object` as the member `key` of an object: {"key": {...}}, members
// indented by 2 spaces like the canonical writer's.
std::string NestJsonObject(std::string_view key, const std::string& object) {
  std::string out = fmt::format("{{\n  \"{}\": ", key);
  for (size_t at = 0; at < object.size();) {
    const size_t end = object.find('\n', at);
    const std::string line = object.substr(at, end == std::string::npos ? end : end - at);
    if (at > 0 && !line.empty()) out += "  ";
    out += line;
    if (end == std::string::npos) break;
    out += '\n';
    at = end + 1;
  }
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out + "\n}\n";
}

// The labels and budgets of the replay's queues (docs/accounting.md, "The replay's queues"):
// each cost center of the prices becomes its queue's cost_center label, and each budget of the
// budgets file its queue's budget. Names must be virtual clusters of the replayed window.
absl::Status SetReplayQueues(const SimulateFlags& f, const std::vector<sim::TraceJob>& jobs,
                             const Prices& prices, sim::ReplayOptions& options) {
  std::set<std::string, std::less<>> clusters;
  for (const sim::TraceJob& job : jobs) clusters.insert(job.cluster);
  std::map<std::string, sim::ReplayQueue> queues;
  for (size_t i = 0; i < prices.queues.size(); ++i) {
    const QueuePricing& q = prices.queues[i];
    if (!clusters.contains(q.queue)) {
      return absl::InvalidArgumentError(
          fmt::format("--prices: {}: queues[{}].queue: no virtual cluster \"{}\" in the "
                      "replayed window",
                      f.prices, i, q.queue));
    }
    if (!q.cost_center.has_value()) continue;
    if (q.cost_center->empty()) {
      return absl::InvalidArgumentError(
          fmt::format("--prices: {}: queues[{}] ({}).cost_center: empty", f.prices, i, q.queue));
    }
    sim::ReplayQueue& settings = queues[q.queue];
    settings.queue = q.queue;
    settings.labels = {TopologyLabel{kCostCenterLabel, *q.cost_center}};
  }
  if (!f.budgets.empty()) {
    absl::StatusOr<sim::ReplayBudgetFile> file = sim::ReadReplayBudgetsFile(f.budgets);
    if (!file.ok()) {
      return absl::Status(file.status().code(),
                          "--budgets: " + std::string(file.status().message()));
    }
    for (size_t i = 0; i < file->queues.size(); ++i) {
      const sim::ReplayQueue& budget = file->queues[i];
      if (!clusters.contains(budget.queue)) {
        return absl::InvalidArgumentError(
            fmt::format("--budgets: {}: queues[{}].queue: no virtual cluster \"{}\" in the "
                        "replayed window",
                        f.budgets, i, budget.queue));
      }
      sim::ReplayQueue& settings = queues[budget.queue];
      settings.queue = budget.queue;
      settings.budget_milli_gpu_seconds = budget.budget_milli_gpu_seconds;
    }
    options.budget_period_s = file->period_s;
  }
  options.queues.clear();
  for (auto& [name, settings] : queues) options.queues.push_back(std::move(settings));
  return absl::OkStatus();
}

// The job-level replay (docs/replay.md): the Philly trace replayed in time through Schedule().
int RunReplayProtocol(const SimulateFlags& f) {
  constexpr std::string_view kPhilly = "philly:";
  if (f.trace.rfind(kPhilly, 0) != 0) {
    PrintError("--trace: the replay protocol takes philly:PATH (the Philly CSV)");
    return kExitUsage;
  }
  absl::StatusOr<std::vector<sim::TraceJob>> trace =
      sim::ReadPhillyCsv(f.trace.substr(kPhilly.size()));
  if (!trace.ok()) {
    PrintError(trace.status());
    return kExitInvalidInput;
  }
  std::optional<int64_t> start;
  if (!f.window_start.empty()) {
    absl::StatusOr<int64_t> parsed = sim::ParseUtcTime(f.window_start + " 00:00:00");
    if (!parsed.ok()) {
      PrintError(fmt::format("--window-start: expected YYYY-MM-DD, got \"{}\"", f.window_start));
      return kExitUsage;
    }
    start = *parsed;
  }
  if (f.window_days <= 0) {
    PrintError("--window-days: must be positive");
    return kExitUsage;
  }
  const std::vector<sim::TraceJob> jobs = sim::SelectWindow(*trace, start, f.window_days);
  std::vector<std::string> names;
  if (f.policy == "all") {
    names = sim::ReplayPolicyNames();
  } else {
    std::stringstream ss(f.policy);
    for (std::string name; std::getline(ss, name, ',');) names.push_back(name);
  }
  // Prices for the ledger (docs/accounting.md); without --prices every GPU costs 0.
  Prices prices{.default_micros_per_gpu_hour = 0};
  if (!f.prices.empty()) {
    absl::StatusOr<Prices> read = io::ReadPricesFile(f.prices);
    if (!read.ok()) {
      // The reader's message names the file already.
      PrintError("--prices: " + std::string(read.status().message()));
      return kExitInvalidInput;
    }
    prices = *std::move(read);
  }
  sim::ReplayFailures failures;
  if (absl::Status status = ParseFailureFlags(f, failures); !status.ok()) {
    PrintError(status);
    return kExitUsage;
  }
  // The failure columns only with failures on, and so on: without them the table is what it was.
  const bool failure_columns = failures.enabled();
  const bool maintenance_columns = !f.maintenance.empty();
  const bool spot_columns = f.spot_nodes > 0;
  const bool scale_columns = f.scale_nodes > 0;
  std::string chargeback_csv;
  std::vector<std::string> json_runs;
  std::vector<sim::ReplayRun> report_runs;  // only with --html
  sim::ReplayPool report_pool;
  std::string table = fmt::format(
      "gpupool simulate: replay protocol, {} jobs{}\n\n{:<10} {:>10} {:>10} {:>11} {:>10} "
      "{:>8} {:>9} {:>7} {:>11}\n",
      jobs.size(),
      start ? fmt::format(" submitted from {} for {} days", f.window_start, f.window_days)
            : std::string(" (whole trace)"),
      "policy", "JCT mean", "JCT p50", "JCT p99", "wait mean", "util", "preempt", "Jain",
      "GPU-h lost");
  if (failure_columns) {
    table.pop_back();
    table += fmt::format(" {:>9} {:>10} {:>11}\n", "fail-stop", "GPU-h fail", "GPU-h repair");
  }
  if (maintenance_columns) {
    table.pop_back();
    table += fmt::format(" {:>10} {:>11} {:>12}\n", "maint-stop", "GPU-h maint", "node-h maint");
  }
  if (spot_columns) {
    table.pop_back();
    table += fmt::format(" {:>9} {:>9} {:>11}\n", "spot-stop", "GPU-h spot", "node-h taken");
  }
  if (scale_columns) {
    table.pop_back();
    table += fmt::format(" {:>7} {:>8} {:>12} {:>10}\n", "ordered", "released", "node-h added",
                         "scale cost");
  }
  for (const std::string& name : names) {
    absl::StatusOr<sim::ReplayOptions> options = sim::MakeReplayOptions(name);
    if (!options.ok()) {
      PrintError(fmt::format("--policy: {}", std::string(options.status().message())));
      return kExitUsage;
    }
    if (!f.cluster.empty() && !ParseClusterSpec(f.cluster, options->pool)) {
      PrintError(fmt::format("--cluster: expected NODESxGPUS or NODESxGPUS/PER_RACK, got \"{}\"",
                             f.cluster));
      return kExitUsage;
    }
    options->failures = failures;
    if (absl::Status status = ParsePoolOperationFlags(f, *options); !status.ok()) {
      PrintError(status);
      return kExitUsage;
    }
    // Stage 8 on for the measurement of docs/replay.md ("Consolidation in the replay").
    if (f.consolidation) options->policy.consolidation.enabled = true;
    // Shorter victims stay, for the measurement of docs/replay.md ("Shorter victims stay").
    if (f.victim_remaining_percent > 0) {
      options->policy.preemption.victim_remaining_percent = f.victim_remaining_percent;
      options->policy.preemption.victim_remaining_max_gap = f.victim_remaining_max_gap;
    }
    if (absl::Status status = SetReplayQueues(f, jobs, prices, *options); !status.ok()) {
      PrintError(status);
      return kExitInvalidInput;
    }
    absl::StatusOr<sim::ReplayResult> result = sim::RunReplay(*options, jobs);
    if (!result.ok()) {
      PrintError(result.status());
      return kExitInvalidInput;
    }
    const sim::ReplayMetrics& m = result->metrics;
    absl::StatusOr<Chargeback> chargeback = ComputeChargeback(result->ledger, prices);
    absl::StatusOr<PoolingReport> pooling =
        chargeback.ok() ? ComparePooling(result->ledger, prices) : chargeback.status();
    if (!pooling.ok()) {
      PrintError(
          fmt::format("--prices: {}: {}", f.prices, std::string(pooling.status().message())));
      return kExitInvalidInput;
    }
    std::string run_json = MergeJsonObjects(
        sim::ReplayMetricsToJson(m), io::AccountingToJson(result->ledger, *chargeback, *pooling));
    if (!f.budgets.empty()) {
      run_json = MergeJsonObjects(
          run_json, NestJsonObject("budgets", sim::ReplayBudgetsToJson(result->budgets)));
    }
    json_runs.push_back(std::move(run_json));
    // The chargeback table of every policy in one CSV, each line led by the policy's name.
    const std::string csv = ChargebackToCsv(*chargeback);
    for (size_t at = 0, line = 0; at < csv.size(); ++line) {
      const size_t end = csv.find('\n', at);
      if (line > 0 || chargeback_csv.empty()) {
        chargeback_csv +=
            (line == 0 ? std::string("policy") : name) + "," + csv.substr(at, end - at) + "\n";
      }
      at = end + 1;
    }
    table += fmt::format(
        "{:<10} {:>9.0f}s {:>9.0f}s {:>10.0f}s {:>9.0f}s {:>7.1f}% {:>9} {:>7.3f} {:>11.1f}\n",
        name, m.jct_mean_s, m.jct_p50_s, m.jct_p99_s, m.queue_delay_mean_s, 100.0 * m.utilization,
        m.preemptions, m.jain_fairness, m.gpu_hours_lost_to_preemption);
    if (failure_columns) {
      table.pop_back();
      table += fmt::format(" {:>9} {:>10.1f} {:>12.1f}\n", m.failure_stops,
                           m.gpu_hours_lost_to_failures, m.gpu_hours_under_repair);
    }
    if (maintenance_columns) {
      table.pop_back();
      table += fmt::format(" {:>10} {:>11.1f} {:>12.1f}\n", m.maintenance_stops,
                           m.gpu_hours_lost_to_maintenance, m.node_hours_under_maintenance);
    }
    if (spot_columns) {
      table.pop_back();
      table += fmt::format(" {:>9} {:>9.1f} {:>12.1f}\n", m.spot_stops, m.gpu_hours_lost_to_spot,
                           m.node_hours_reclaimed);
    }
    if (scale_columns) {
      table.pop_back();
      table += fmt::format(" {:>7} {:>8} {:>12.1f} {:>10.2f}\n", m.nodes_added, m.nodes_released,
                           m.added_node_hours, m.scale_cost);
    }
    if (!f.html.empty()) {
      report_pool = options->pool;
      report_runs.push_back(sim::ReplayRun{.label = name, .result = *std::move(result)});
    }
  }
  if (!f.json.empty()) {
    std::string out;
    if (json_runs.size() == 1) {
      out = json_runs[0];
    } else {
      out = "{\n\"runs\": [\n";
      for (size_t i = 0; i < json_runs.size(); ++i) {
        out += json_runs[i];
        while (!out.empty() && out.back() == '\n') out.pop_back();
        out += i + 1 < json_runs.size() ? ",\n" : "\n";
      }
      out += "]\n}\n";
    }
    if (absl::Status status = WriteFile(f.json, out); !status.ok()) {
      PrintError(status);
      return kExitInvalidInput;
    }
  }
  if (!f.html.empty()) {
    sim::ReplayReportInfo info;
    info.trace = f.trace.substr(kPhilly.size());
    info.window =
        start ? fmt::format("jobs submitted from {} for {} days", f.window_start, f.window_days)
              : std::string("whole trace");
    info.pool = report_pool;
    info.prices = prices;
    if (absl::Status s = WriteFile(f.html, sim::ReplayHtmlReport(report_runs, info)); !s.ok()) {
      PrintError(s);
      return kExitInvalidInput;
    }
  }
  if (!f.quiet) std::fputs(table.c_str(), stdout);
  if (f.chargeback == "-") {
    std::fputs(chargeback_csv.c_str(), stdout);
  } else if (!f.chargeback.empty()) {
    if (absl::Status status = WriteFile(f.chargeback, chargeback_csv); !status.ok()) {
      PrintError(status);
      return kExitInvalidInput;
    }
  }
  return kExitOk;
}

int RunSimulate(const SimulateFlags& f) {
  if (f.protocol == "replay") return RunReplayProtocol(f);
  if (f.protocol != "inflation") {
    PrintError(fmt::format("--protocol: \"inflation\" or \"replay\", got \"{}\"", f.protocol));
    return kExitUsage;
  }
  sim::Cluster cluster;
  sim::Workload workload;
  sim::InflationRunInfo info;
  info.ratio = f.inflation;
  if (!f.trace.empty()) {
    absl::StatusOr<sim::Trace> trace = sim::ReadTrace(f.trace);
    if (!trace.ok()) {
      PrintError(trace.status());
      return kExitInvalidInput;
    }
    cluster = std::move(trace->cluster);
    workload = std::move(trace->workload);
    info.nodes = f.trace;
    info.pods = f.trace;
  } else {
    if (f.nodes.empty()) {
      cluster = sim::BuiltinCluster();
      info.nodes = "builtin openb cluster";
    } else {
      absl::StatusOr<sim::Cluster> c = sim::ReadOpenbNodes(f.nodes);
      if (!c.ok()) {
        PrintError(c.status());
        return kExitInvalidInput;
      }
      cluster = *std::move(c);
      info.nodes = f.nodes;
    }
    if (f.pods.empty()) {
      workload = sim::SyntheticWorkload(f.synthetic_pods, 2023);
      info.pods = fmt::format("synthetic openb-like workload ({} pods)", f.synthetic_pods);
    } else {
      absl::StatusOr<sim::Workload> w = sim::ReadOpenbPods(f.pods);
      if (!w.ok()) {
        PrintError(w.status());
        return kExitInvalidInput;
      }
      workload = *std::move(w);
      info.pods = f.pods;
    }
  }
  info.node_count = static_cast<int64_t>(cluster.nodes.size());
  info.gpu_count = cluster.TotalGpuMilli() / kMilliPerGpu;
  absl::StatusOr<std::vector<uint64_t>> seeds = ParseSeeds(f.seeds);
  if (!seeds.ok()) {
    PrintError(seeds.status());
    return kExitUsage;
  }
  absl::StatusOr<std::vector<std::string>> policies = ParsePolicies(f.policy);
  if (!policies.ok()) {
    PrintError(policies.status());
    return kExitUsage;
  }
  sim::InflationOptions options;
  options.ratio = f.inflation;
  options.seeds = *seeds;
  options.use_schedule = f.engine == "schedule";
  if (!f.arrivals.empty()) {
    absl::StatusOr<std::vector<int32_t>> arrivals = ReadArrivals(f.arrivals, workload);
    if (!arrivals.ok()) {
      PrintError(arrivals.status());
      return kExitInvalidInput;
    }
    options.arrivals = *std::move(arrivals);
  }
  // Progress only for a person watching: stderr must be a terminal.
  const bool progress = isatty(STDERR_FILENO) != 0 && !f.quiet;
  std::vector<sim::PolicyResult> results;
  for (size_t i = 0; i < policies->size(); ++i) {
    const std::string& name = (*policies)[i];
    if (progress) {
      options.progress = [&, i](int done, int total) {
        std::fprintf(stderr, "\rsimulate: policy %zu/%zu %-15s seed %d/%d ", i + 1,
                     policies->size(), name.c_str(), done, total);
        std::fflush(stderr);
      };
    }
    absl::StatusOr<sim::PolicyResult> r = sim::RunInflation(cluster, workload, name, options);
    if (!r.ok()) {
      if (progress) std::fprintf(stderr, "\n");
      PrintError(r.status());
      return kExitInvalidInput;
    }
    results.push_back(*std::move(r));
  }
  if (progress) std::fprintf(stderr, "\r%-70s\r", "");
  if (!f.json.empty()) {
    if (absl::Status s = WriteFile(f.json, sim::InflationJson(info, results)); !s.ok()) {
      PrintError(s);
      return kExitInvalidInput;
    }
  }
  if (!f.csv.empty()) {
    if (absl::Status s = WriteFile(f.csv, sim::InflationCurvesCsv(results)); !s.ok()) {
      PrintError(s);
      return kExitInvalidInput;
    }
  }
  if (!f.html.empty()) {
    if (absl::Status s = WriteFile(f.html, sim::InflationHtmlReport(info, results)); !s.ok()) {
      PrintError(s);
      return kExitInvalidInput;
    }
  }
  if (!f.quiet) std::fputs(sim::InflationSummaryTable(info, results).c_str(), stdout);
  return kExitOk;
}

}  // namespace

void RegisterSimulateCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<SimulateFlags>();
  CLI::App* cmd = app.add_subcommand(
      "simulate",
      "Run a simulator: the pod-level inflation protocol (default; docs/simulator.md) or the "
      "job-level replay of the Philly trace (--protocol replay; docs/replay.md). With no "
      "arguments: the built-in openb-like cluster and workload, every placement policy.");
  cmd->add_option("--protocol", flags->protocol,
                  "inflation (default; pods placed one at a time, docs/simulator.md) or replay "
                  "(jobs replayed in time, with --trace philly:PATH, docs/replay.md)");
  cmd->add_option("--nodes", flags->nodes, "openb node list CSV (default: built-in cluster)");
  cmd->add_option("--pods", flags->pods, "openb pod list CSV (default: synthetic workload)");
  cmd->add_option("--trace", flags->trace,
                  "A gpupool trace file (nodes and pods); with --protocol replay, philly:PATH");
  cmd->add_option("--cluster", flags->cluster,
                  "Replay pool NODESxGPUS[/NODES_PER_RACK] (default 64x8/16: 512 GPUs)");
  cmd->add_option("--window-start", flags->window_start,
                  "Replay only jobs submitted from this day (YYYY-MM-DD, UTC)");
  cmd->add_option("--window-days", flags->window_days, "Length of the replay window (14)");
  cmd->add_option("--arrivals", flags->arrivals,
                  "Take the arrival order from an FGD replay file (base_pod column)");
  cmd->add_option("--inflation", flags->inflation,
                  "Target GPU request / cluster GPUs, above 0 and at most 100 (1.3)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            char* end = nullptr;
            const double ratio = std::strtod(text.c_str(), &end);
            if (text.empty() || *end != '\0' || !(ratio > 0 && ratio <= 100)) {
              return "must be a number above 0 and at most 100, got " + text;
            }
            return "";
          },
          "RATIO"));
  cmd->add_option("--seeds", flags->seeds, "Seeds: N, N-M or a comma list (42-51)");
  cmd->add_option("--policy", flags->policy, "Policy names, comma-separated, or all (all)");
  cmd->add_option("--json", flags->json, "Write the results as JSON");
  cmd->add_option("--csv", flags->csv, "Write the curves as CSV");
  cmd->add_option("--html", flags->html,
                  "Write a self-contained HTML report (both protocols; replay: metrics, JCT "
                  "distribution, per-queue share over time)");
  cmd->add_option("--engine", flags->engine,
                  "incremental (default) or schedule (gpupool::Schedule() per pod; slow)")
      ->check(CLI::IsMember({"incremental", "schedule"}));
  cmd->add_option("--synthetic-pods", flags->synthetic_pods,
                  "Pods in the synthetic workload, 1 to 1,000,000 (8152)")
      ->check(CLI::Range(1, 1'000'000));
  cmd->add_option("--prices", flags->prices,
                  "--protocol replay: prices per GPU model, cost centers and who pays for "
                  "preemption (JSON, docs/accounting.md); default: every GPU costs 0");
  cmd->add_option("--chargeback", flags->chargeback,
                  "--protocol replay: write the chargeback table as CSV (- for stdout; "
                  "docs/accounting.md)");
  cmd->add_option("--budgets", flags->budgets,
                  "--protocol replay: GPU-hour budgets per virtual cluster per period (JSON, "
                  "docs/accounting.md); the engine sees them in its snapshots");
  cmd->add_option("--failures", flags->failures,
                  "--protocol replay: GPU failures per 1,000 GPU-days (0: none, the default), "
                  "or \"published\" for the published rates of GPU and node failures "
                  "(docs/replay.md, \"Failures and repairs\")");
  cmd->add_option("--node-failures", flags->node_failures,
                  "--protocol replay: whole-node failures per 1,000 node-days (default 0, or the "
                  "published rate with --failures published)");
  cmd->add_option("--repair-hours", flags->repair_hours,
                  "--protocol replay: every failed GPU or node is back after exactly this many "
                  "hours (24)");
  cmd->add_option("--failure-seed", flags->failure_seed,
                  "--protocol replay: seed of the failures (1)");
  cmd->add_option("--maintenance", flags->maintenance,
                  "--protocol replay: rolling maintenance, each node's window every DAYS days, "
                  "HOURS long (DAYS:HOURS, e.g. 30:8; docs/replay.md, \"Maintenance, spot reclaims "
                  "and scaling\")");
  cmd->add_option("--maintenance-notice-hours", flags->maintenance_notice_hours,
                  "--protocol replay: windows are announced this long before they start (24)");
  cmd->add_option("--spot-nodes", flags->spot_nodes,
                  "--protocol replay: the last N nodes of the pool are spot nodes (0)");
  cmd->add_option("--spot-reclaims", flags->spot_reclaims,
                  "--protocol replay: spot reclaims per 1,000 spot node-days (0)");
  cmd->add_option("--spot-away-hours", flags->spot_away_hours,
                  "--protocol replay: a reclaimed spot node is back after this many hours (4)");
  cmd->add_option("--spot-seed", flags->spot_seed, "--protocol replay: seed of the reclaims (1)");
  cmd->add_option("--scale-nodes", flags->scale_nodes,
                  "--protocol replay: the pool may add up to N nodes from the engine's scale "
                  "advice (0: no scaling)");
  cmd->add_option("--scale-cost-per-hour", flags->scale_cost_per_hour,
                  "--protocol replay: price of one added node per hour (0)");
  cmd->add_option("--provision-minutes", flags->provision_minutes,
                  "--protocol replay: from the advice to an added node in the pool (10)");
  cmd->add_flag("--consolidation", flags->consolidation,
                "Replay: turn on the engine's consolidation (stage 8) for every policy");
  cmd->add_option("--victim-remaining-percent", flags->victim_remaining_percent,
                  "Replay: set the engine's preemption.victim_remaining_percent for every policy "
                  "(a job evicts only victims expected to need more than this percent of its own "
                  "remaining work; docs/policy-format.md; 0: as the policy has it)")
      ->check(CLI::Range(int64_t{0}, int64_t{1000000}));
  cmd->add_option("--victim-remaining-max-gap", flags->victim_remaining_max_gap,
                  "Replay, with --victim-remaining-percent: preemption.victim_remaining_max_gap "
                  "(the rule applies only up to this priority gap; 0: any gap)")
      ->check(CLI::Range(int64_t{0}, int64_t{1000000}));
  cmd->add_flag("--quiet", flags->quiet, "No summary table, no progress");
  cmd->callback([flags, exit_code]() { *exit_code = RunSimulate(*flags); });
}

}  // namespace gpupool::cli
