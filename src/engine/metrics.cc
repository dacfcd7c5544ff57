// Prometheus text exposition of a snapshot and its cycle (metrics.h).
//
// Why this shape: a metrics endpoint is scraped every few seconds, and every series that appears
// and disappears between scrapes breaks rate() and alerting rules. So every series a pool can
// have is always written, with 0 when there is nothing to count: every GPU state for every model
// of the snapshot, every node and job state, every pending reason, every queue. Series of one
// metric come in the order of their label values, metrics in a fixed order, so the text is a
// pure function of the inputs and diffs between cycles stay readable.
//
// Why decimals and not milli-units: Prometheus' convention is base units (GPUs, seconds) in
// floating point. The engine's quantities are integer milli-GPUs and milli-GPU-seconds; printing
// them as exact decimals ("2.5", "0.125") keeps the value exact for the reader and the parser.
#include "gpupool/metrics.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "gpupool/schedule.h"
#include "internal/saturating.h"

namespace gpupool {
namespace {

using internal::SaturatingAdd;

// A label value escaped as the exposition format requires: backslash, double quote, newline.
std::string EscapeLabel(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// `milli` thousandths as an exact decimal: 2500 -> "2.5", 125 -> "0.125", -1500 -> "-1.5".
std::string Thousandths(int64_t milli) {
  const bool negative = milli < 0;
  // The magnitude as unsigned, so that INT64_MIN does not overflow.
  const uint64_t magnitude =
      negative ? uint64_t{0} - static_cast<uint64_t>(milli) : static_cast<uint64_t>(milli);
  std::string text = fmt::format("{}{}", negative ? "-" : "", magnitude / 1000);
  uint64_t fraction = magnitude % 1000;
  if (fraction != 0) {
    std::string digits = fmt::format("{:03}", fraction);
    while (!digits.empty() && digits.back() == '0') digits.pop_back();
    text += "." + digits;
  }
  return text;
}

// Writes one metric family: HELP, TYPE and its samples.
class Family {
 public:
  Family(std::string& out, std::string_view name, std::string_view type, std::string_view help)
      : out_(out), name_(name) {
    out_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  // One sample; `labels` as (name, value) pairs in the order written.
  void Sample(std::initializer_list<std::pair<std::string_view, std::string_view>> labels,
              std::string_view value) {
    out_ += name_;
    if (labels.size() > 0) {
      out_ += '{';
      bool first = true;
      for (const auto& [label, label_value] : labels) {
        if (!first) out_ += ',';
        first = false;
        out_ += fmt::format("{}=\"{}\"", label, EscapeLabel(label_value));
      }
      out_ += '}';
    }
    out_ += ' ';
    out_ += value;
    out_ += '\n';
  }
  void Sample(std::initializer_list<std::pair<std::string_view, std::string_view>> labels,
              int64_t value) {
    Sample(labels, std::string_view(fmt::format("{}", value)));
  }

 private:
  std::string& out_;
  std::string name_;
};

// The states a GPU is counted in, each GPU in exactly one (by the precedence of the HELP text),
// in label-value order, as every family's samples are.
constexpr const char* kGpuStates[] = {"allocated", "cordoned", "down",
                                      "draining",  "free",     "unhealthy"};

const char* NodeStateLabel(NodeState state) {
  switch (state) {
    case NodeState::kReady:
      return "ready";
    case NodeState::kCordoned:
      return "cordoned";
    case NodeState::kDraining:
      return "draining";
    case NodeState::kDown:
      return "down";
  }
  return "unknown";
}

// Every pending reason the engine can give, in code order (PendingReasonName is "unknown" past
// the last one).
std::vector<std::string> AllPendingReasonNames() {
  std::vector<std::string> names;
  for (int code = 0;; ++code) {
    std::string name = PendingReasonName(static_cast<PendingReason>(code));
    if (name == "unknown") break;
    names.push_back(std::move(name));
  }
  return names;
}

// Per-GPU allocation of the snapshot's running jobs, in milli-GPUs, keyed by (node, GPU index).
using Allocation = std::map<std::pair<std::string, int32_t>, int64_t>;

Allocation AllocationOf(const Snapshot& snapshot) {
  Allocation allocation;
  for (const Job& job : snapshot.jobs) {
    if (job.state != JobState::kRunning) continue;
    for (const ReplicaPlacement& placement : job.placements) {
      int64_t milli = placement.gpu_milli;
      if (milli == 0) {
        for (const TaskGroup& group : job.groups) {
          if (group.name == placement.group) milli = group.request.MilliPerGpu();
        }
      }
      for (int32_t gpu : placement.gpus) {
        int64_t& used = allocation[{placement.node, gpu}];
        used = SaturatingAdd(used, milli);
      }
    }
  }
  return allocation;
}

void WritePool(const Snapshot& snapshot, std::string& out) {
  const Allocation allocation = AllocationOf(snapshot);
  // model -> state -> GPUs, and model -> allocated milli-GPUs.
  std::map<std::string, std::map<std::string, int64_t>> gpus;
  std::map<std::string, int64_t> allocated_milli;
  std::map<std::string, int64_t> capacity_milli;
  for (const GpuModel& model : snapshot.gpu_models) {
    for (const char* state : kGpuStates) gpus[model.name][state] = 0;
    allocated_milli[model.name] = 0;
    capacity_milli[model.name] = 0;
  }
  for (const Node& node : snapshot.nodes) {
    if (node.gpus.empty()) continue;
    for (const Gpu& gpu : node.gpus) {
      auto it = allocation.find({node.id, gpu.index});
      const int64_t used = it == allocation.end() ? 0 : it->second;
      const char* state = !gpu.healthy                      ? "unhealthy"
                          : node.state != NodeState::kReady ? NodeStateLabel(node.state)
                          : used > 0                        ? "allocated"
                                                            : "free";
      ++gpus[node.gpu_model][state];
      allocated_milli[node.gpu_model] = SaturatingAdd(allocated_milli[node.gpu_model], used);
      capacity_milli[node.gpu_model] = SaturatingAdd(capacity_milli[node.gpu_model], kMilliPerGpu);
    }
  }
  {
    Family family(out, "gpupool_gpus", "gauge",
                  "GPUs by model and state at the start of the cycle; each GPU counts in one "
                  "state (unhealthy, then its node's down/draining/cordoned, then allocated if "
                  "any share of it is in use, else free).");
    for (const auto& [model, states] : gpus) {
      for (const char* state : kGpuStates) {
        family.Sample({{"gpu_model", model}, {"state", state}}, states.at(state));
      }
    }
  }
  {
    Family family(out, "gpupool_gpu_capacity_gpus", "gauge",
                  "GPUs of each model in the pool, whatever their state.");
    for (const auto& [model, milli] : capacity_milli) {
      family.Sample({{"gpu_model", model}}, Thousandths(milli));
    }
  }
  {
    Family family(out, "gpupool_gpu_allocated_gpus", "gauge",
                  "GPUs of each model held by running jobs at the start of the cycle, shares "
                  "of GPUs counted as fractions.");
    for (const auto& [model, milli] : allocated_milli) {
      family.Sample({{"gpu_model", model}}, Thousandths(milli));
    }
  }
  {
    std::map<std::string, int64_t> nodes = {
        {"ready", 0}, {"cordoned", 0}, {"draining", 0}, {"down", 0}};
    for (const Node& node : snapshot.nodes) ++nodes[NodeStateLabel(node.state)];
    Family family(out, "gpupool_nodes", "gauge", "Nodes by state at the start of the cycle.");
    for (const auto& [state, count] : nodes) family.Sample({{"state", state}}, count);
  }
  {
    int64_t pending = 0;
    int64_t running = 0;
    for (const Job& job : snapshot.jobs) ++(job.state == JobState::kRunning ? running : pending);
    Family family(out, "gpupool_jobs", "gauge", "Jobs by state at the start of the cycle.");
    family.Sample({{"state", "pending"}}, pending);
    family.Sample({{"state", "running"}}, running);
  }
}

void WriteQueues(const Snapshot& snapshot, const Decisions& decisions, std::string& out) {
  struct ShareField {
    const char* name;
    const char* help;
    int64_t QueueShare::*field;
  };
  const ShareField fields[] = {
      {"gpupool_queue_usage_gpus",
       "GPUs held by the queue's running jobs (its own and its descendants'), by GPU model "
       "(\"*\": all models together).",
       &QueueShare::usage_milli},
      {"gpupool_queue_guarantee_gpus", "GPUs guaranteed to the queue, by GPU model.",
       &QueueShare::guaranteed_milli},
      {"gpupool_queue_entitlement_gpus",
       "GPUs the queue should hold now under fair share, by GPU model.",
       &QueueShare::entitlement_milli},
      {"gpupool_queue_demand_gpus", "GPUs the queue's running and pending jobs want, by GPU model.",
       &QueueShare::demand_milli},
  };
  // queue_shares is sorted by queue then model already; sort again so the output does not
  // depend on the host's Decisions being canonical.
  std::vector<const QueueShare*> shares;
  for (const QueueShare& share : decisions.queue_shares) shares.push_back(&share);
  std::sort(shares.begin(), shares.end(), [](const QueueShare* a, const QueueShare* b) {
    return std::tie(a->queue, a->gpu_model) < std::tie(b->queue, b->gpu_model);
  });
  for (const ShareField& field : fields) {
    Family family(out, field.name, "gauge", field.help);
    for (const QueueShare* share : shares) {
      family.Sample({{"queue", share->queue}, {"gpu_model", share->gpu_model}},
                    Thousandths(share->*field.field));
    }
  }

  std::map<std::string, const Queue*> budgeted;
  for (const Queue& queue : snapshot.queues) {
    if (queue.budget_milli_gpu_seconds.has_value()) budgeted[queue.id] = &queue;
  }
  {
    Family family(out, "gpupool_queue_budget_gpu_seconds", "gauge",
                  "The queue's GPU-time budget for the current period, in GPU-seconds (queues "
                  "with a budget only).");
    for (const auto& [id, queue] : budgeted) {
      family.Sample({{"queue", id}}, Thousandths(*queue->budget_milli_gpu_seconds));
    }
  }
  {
    Family family(out, "gpupool_queue_budget_used_gpu_seconds", "gauge",
                  "GPU-seconds the queue has used of its budget in the current period, as the "
                  "snapshot reports it (queues with a budget only).");
    for (const auto& [id, queue] : budgeted) {
      family.Sample({{"queue", id}}, Thousandths(queue->budget_used_milli_gpu_seconds));
    }
  }
  {
    Family family(out, "gpupool_queue_over_budget", "gauge",
                  "1 when the queue has spent its GPU-time budget for the period (enforced, it "
                  "then has no guarantee and is reclaimed first), else 0 (queues with a budget "
                  "only).");
    for (const auto& [id, queue] : budgeted) {
      family.Sample({{"queue", id}}, int64_t{queue->OverOwnBudget() ? 1 : 0});
    }
  }
}

absl::Status WriteCycle(const Snapshot& snapshot, const Decisions& decisions, std::string& out) {
  std::map<std::string, const Job*> jobs;
  for (const Job& job : snapshot.jobs) jobs[job.id] = &job;
  std::map<std::string, int64_t> by_reason;
  for (const std::string& name : AllPendingReasonNames()) by_reason[name] = 0;
  // "headroom" is a possible reason only under headroom rules (then the decisions report them):
  // without, it is left out rather than listed as 0, so that metrics without rules read as before.
  if (decisions.headroom.empty()) by_reason.erase(PendingReasonName(PendingReason::kHeadroom));
  std::map<std::string, int64_t> by_queue;
  for (const Queue& queue : snapshot.queues) by_queue[queue.id] = 0;
  for (const PendingDecision& pending : decisions.pending) {
    auto job = jobs.find(pending.job);
    if (job == jobs.end()) {
      return absl::InvalidArgumentError(
          fmt::format("decisions.pending: job \"{}\" is not in the snapshot", pending.job));
    }
    ++by_reason[PendingReasonName(pending.reason)];
    ++by_queue[job->second->queue];
  }
  {
    Family family(out, "gpupool_pending_jobs", "gauge",
                  "Jobs left pending by the cycle, by reason (docs/decisions-format.md).");
    for (const auto& [reason, count] : by_reason) family.Sample({{"reason", reason}}, count);
  }
  {
    Family family(out, "gpupool_queue_pending_jobs", "gauge",
                  "Jobs left pending by the cycle, by the queue they were submitted to.");
    for (const auto& [queue, count] : by_queue) family.Sample({{"queue", queue}}, count);
  }
  int64_t lost_milli = 0;
  for (const PreemptDecision& preempt : decisions.preemptions) {
    if (!jobs.contains(preempt.job)) {
      return absl::InvalidArgumentError(
          fmt::format("decisions.preemptions: job \"{}\" is not in the snapshot", preempt.job));
    }
    lost_milli = SaturatingAdd(lost_milli, preempt.lost_milli_gpu_seconds);
  }
  for (const ResizeDecision& resize : decisions.resizes) {
    lost_milli = SaturatingAdd(lost_milli, resize.lost_milli_gpu_seconds);
  }
  for (const StartDecision& start : decisions.starts) {
    if (!jobs.contains(start.job)) {
      return absl::InvalidArgumentError(
          fmt::format("decisions.starts: job \"{}\" is not in the snapshot", start.job));
    }
  }
  struct CycleGauge {
    const char* name;
    const char* help;
    std::string value;
  };
  const CycleGauge gauges[] = {
      {"gpupool_cycle_starts", "Jobs the cycle started.",
       fmt::format("{}", decisions.starts.size())},
      {"gpupool_cycle_preemptions", "Jobs the cycle evicted (Preempt decisions).",
       fmt::format("{}", decisions.preemptions.size())},
      {"gpupool_cycle_resizes", "Elastic groups the cycle resized (Resize decisions).",
       fmt::format("{}", decisions.resizes.size())},
      {"gpupool_cycle_reservations", "Jobs the cycle reserved capacity for (Reserve decisions).",
       fmt::format("{}", decisions.reservations.size())},
      {"gpupool_cycle_lost_gpu_seconds",
       "GPU-seconds of work the cycle's evictions and shrinks lose (since each victim's last "
       "checkpoint, plus restore time).",
       Thousandths(lost_milli)},
      {"gpupool_snapshot_time_seconds", "The snapshot's clock (its `now`), in seconds.",
       fmt::format("{}", snapshot.now)},
  };
  for (const CycleGauge& gauge : gauges) {
    Family family(out, gauge.name, "gauge", gauge.help);
    family.Sample({}, gauge.value);
  }
  {
    Family family(out, "gpupool_policy_info", "gauge",
                  "The policy and placement scorer that made the cycle's decisions (always 1).");
    family.Sample({{"policy", decisions.policy_name},
                   {"version", fmt::format("{}", decisions.policy_version)},
                   {"scorer", decisions.scorer}},
                  int64_t{1});
  }
  return absl::OkStatus();
}

void WriteTotals(const MetricsTotals& totals, std::string& out) {
  struct Counter {
    const char* name;
    const char* help;
    std::string value;
  };
  const Counter counters[] = {
      {"gpupool_cycles_total", "Scheduling cycles run.", fmt::format("{}", totals.cycles)},
      {"gpupool_jobs_started_total", "Jobs started (Start decisions).",
       fmt::format("{}", totals.jobs_started)},
      {"gpupool_preemptions_total", "Jobs evicted (Preempt decisions).",
       fmt::format("{}", totals.preemptions)},
      {"gpupool_resizes_total", "Elastic groups resized (Resize decisions).",
       fmt::format("{}", totals.resizes)},
      {"gpupool_preemption_lost_gpu_seconds_total",
       "GPU-seconds of work lost to evictions and shrinks, restore time included.",
       Thousandths(totals.lost_milli_gpu_seconds)},
      {"gpupool_candidates_evaluated_total", "Placement candidates the engine evaluated.",
       fmt::format("{}", totals.candidates_evaluated)},
      {"gpupool_preemption_plans_total", "Victim sets the engine simulated.",
       fmt::format("{}", totals.preemption_plans)},
      {"gpupool_counterfactual_plans_total", "Victim sets simulated only to explain pending jobs.",
       fmt::format("{}", totals.counterfactual_plans)},
      {"gpupool_budget_exhausted_cycles_total", "Cycles whose work budget ran out.",
       fmt::format("{}", totals.budget_exhausted_cycles)},
  };
  for (const Counter& counter : counters) {
    Family family(out, counter.name, "counter", counter.help);
    family.Sample({}, counter.value);
  }
}

}  // namespace

void AddCycle(const Decisions& decisions, MetricsTotals& totals) {
  auto add = [](int64_t& total, int64_t amount) { total = SaturatingAdd(total, amount); };
  add(totals.cycles, 1);
  add(totals.jobs_started, static_cast<int64_t>(decisions.starts.size()));
  add(totals.preemptions, static_cast<int64_t>(decisions.preemptions.size()));
  add(totals.resizes, static_cast<int64_t>(decisions.resizes.size()));
  for (const PreemptDecision& preempt : decisions.preemptions) {
    add(totals.lost_milli_gpu_seconds, preempt.lost_milli_gpu_seconds);
  }
  for (const ResizeDecision& resize : decisions.resizes) {
    add(totals.lost_milli_gpu_seconds, resize.lost_milli_gpu_seconds);
  }
  add(totals.candidates_evaluated, decisions.counters.candidates_evaluated);
  add(totals.preemption_plans, decisions.counters.preemption_plans);
  add(totals.counterfactual_plans, decisions.counters.counterfactual_plans);
  if (decisions.counters.budget_exhausted) add(totals.budget_exhausted_cycles, 1);
}

absl::StatusOr<std::string> RenderMetrics(const Snapshot& snapshot, const Decisions& decisions,
                                          const MetricsTotals& totals) {
  absl::Status valid = ValidateSnapshot(snapshot);
  if (!valid.ok()) return valid;
  std::string out;
  WritePool(snapshot, out);
  WriteQueues(snapshot, decisions, out);
  absl::Status cycle = WriteCycle(snapshot, decisions, out);
  if (!cycle.ok()) return cycle;
  WriteTotals(totals, out);
  return out;
}

}  // namespace gpupool
