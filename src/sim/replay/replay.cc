// The job-level replay (docs/replay.md): the driver.
//
// The replay keeps each job's own state (work done, attained service, where it runs) and builds
// a fresh Snapshot from it at every event second, so that the engine sees exactly what a host
// would hand it. RunReplay() is the loop that ties the parts together, each in its own file:
//
//   tenants.h         the trace's virtual clusters, their demand and guarantees, labels and
//                     budgets (set up once)
//   run_state.h       every job's phase, work and service; the pool's free GPUs (the state)
//   events.h          arrivals, completions and wake-ups, in time order (what moves the clock)
//   pool_events.h     failures and repairs of GPUs and nodes, maintenance windows, spot reclaims
//                     (seeded), nodes added; and what each node is going through
//   apply_pool_event.h  a pool event carried out: the jobs it stops, the GPUs it takes away
//   scale.h           the engine's scale advice carried out: nodes ordered and released
//   cycle_snapshot.h  the Snapshot the engine sees at a cycle (the state, as a host reports it)
//   carry_out.h       the cycle's decisions carried out: preemptions, then starts
//   metrics.h         what is measured as time passes, and the metrics at the end
//   ledger_recorder.h the GPU-time ledger (docs/accounting.md)
//   budgets.h         what each queue used of its GPU-hour budget, period by period
//
// At each event time: integrate the state since the previous event, take the completions, the
// pool events (capacity coming back, then going), then the arrivals, and if a cycle could change
// anything (or a pool event or the scale advice needs one), schedule and carry out the decisions.
// Time is integer seconds; nothing ticks between events.
#include "gpupool/sim/replay.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "gpupool/schedule.h"
#include "gpupool/validate.h"
#include "sim/replay/apply_pool_event.h"
#include "sim/replay/budgets.h"
#include "sim/replay/carry_out.h"
#include "sim/replay/checkpoint_wake_ups.h"
#include "sim/replay/cycle_snapshot.h"
#include "sim/replay/events.h"
#include "sim/replay/ledger_recorder.h"
#include "sim/replay/metrics.h"
#include "sim/replay/pool_events.h"
#include "sim/replay/run_state.h"
#include "sim/replay/scale.h"
#include "sim/replay/tenants.h"

namespace gpupool::sim {
namespace {

// How long waiting jobs may see no job arrive, start or complete before the replay gives up
// (RunReplay): far beyond any repair, window or spot absence the options allow to overlap.
constexpr int64_t kMaxStandstillS = 4000LL * 86400;

}  // namespace

absl::StatusOr<ReplayResult> RunReplay(const ReplayOptions& options,
                                       const std::vector<TraceJob>& jobs) {
  const ReplayPool& pool = options.pool;
  if (pool.nodes <= 0 || pool.gpus_per_node <= 0 || pool.nodes_per_rack <= 0) {
    return absl::InvalidArgumentError("pool: nodes, gpus_per_node and nodes_per_rack must be > 0");
  }
  if (options.series_bucket_s <= 0) {
    return absl::InvalidArgumentError("series_bucket_s: must be > 0");
  }
  // The engine policy's own rules, checked before the first cycle (a host's policy, not only a
  // named one): every cycle's Schedule() would refuse it.
  if (absl::Status valid = ValidatePolicy(options.policy); !valid.ok()) {
    return absl::Status(valid.code(), fmt::format("policy: {}", std::string(valid.message())));
  }
  if (options.budget_period_s <= 0) {
    return absl::InvalidArgumentError("budget_period_s: must be > 0");
  }
  if (options.fair_share_boost_half_levels < 0 || options.fair_share_boost_half_levels > 1000) {
    return absl::InvalidArgumentError(
        fmt::format("fair_share_boost_half_levels: must be in [0, 1000], got {}",
                    options.fair_share_boost_half_levels));
  }
  if (options.fair_share_boost_half_levels > 0 && options.queue_mode == QueueMode::kPerCluster) {
    return absl::InvalidArgumentError(
        "fair_share_boost_half_levels: needs a LAS queue mode (priorities are all 0 under "
        "kPerCluster)");
  }
  if (options.boost_kept_from_gpus < 0 || options.boost_kept_from_gpus > (int64_t{1} << 20)) {
    return absl::InvalidArgumentError(fmt::format(
        "boost_kept_from_gpus: must be in [0, 2^20], got {}", options.boost_kept_from_gpus));
  }
  if (options.boost_kept_from_gpus > 0 && options.fair_share_boost_half_levels == 0) {
    return absl::InvalidArgumentError(
        "boost_kept_from_gpus: needs a boost (fair_share_boost_half_levels > 0)");
  }
  if (options.fair_share_history_hours < 0 || options.fair_share_history_hours > 8784) {
    return absl::InvalidArgumentError(
        fmt::format("fair_share_history_hours: must be in [0, 8784], got {}",
                    options.fair_share_history_hours));
  }
  if (options.fair_share_history_hours > 0 && options.fair_share_boost_half_levels == 0) {
    return absl::InvalidArgumentError(
        "fair_share_history_hours: needs a boost (fair_share_boost_half_levels > 0)");
  }
  if (options.demote_running_above_history_percent < 0 ||
      options.demote_running_above_history_percent > 1000000) {
    return absl::InvalidArgumentError(
        fmt::format("demote_running_above_history_percent: must be in [0, 1000000], got {}",
                    options.demote_running_above_history_percent));
  }
  if (options.demote_running_above_history_percent > 0 && options.fair_share_history_hours == 0) {
    return absl::InvalidArgumentError(
        "demote_running_above_history_percent: needs a history (fair_share_history_hours > 0)");
  }

  if (options.wake_up_every_s < 0 || options.wake_up_every_s > 86400) {
    return absl::InvalidArgumentError(
        fmt::format("wake_up_every_s: must be in [0, 86400], got {}", options.wake_up_every_s));
  }
  if (options.wake_up_at_checkpoints_s < 0 || options.wake_up_at_checkpoints_s > 86400) {
    return absl::InvalidArgumentError(
        fmt::format("wake_up_at_checkpoints_s: must be in [0, 86400], got {}",
                    options.wake_up_at_checkpoints_s));
  }
  if (options.wake_up_at_checkpoints_s > 0 && !options.policy.preemption.enabled) {
    return absl::InvalidArgumentError(
        "wake_up_at_checkpoints_s: needs preemption (policy.preemption.enabled)");
  }
  if (options.wake_up_at_checkpoints_s > 0 &&
      (options.checkpoint_interval_s <= 0 || options.free_preemption)) {
    return absl::InvalidArgumentError(
        "wake_up_at_checkpoints_s: needs checkpoints (checkpoint_interval_s > 0) and costed "
        "preemption (free_preemption off)");
  }
  if (options.starved_min_run_s < 0 || options.starved_min_run_s > 365 * 86400) {
    return absl::InvalidArgumentError(fmt::format(
        "starved_min_run_s: must be in [0, 31536000], got {}", options.starved_min_run_s));
  }
  if (options.starved_min_run_s > 0 &&
      (!options.policy.preemption.enabled || options.policy.starvation_bound_s <= 0)) {
    return absl::InvalidArgumentError(
        "starved_min_run_s: needs preemption (policy.preemption.enabled) and a starvation bound "
        "(policy.starvation_bound_s > 0)");
  }
  if (options.starved_min_run_within_share &&
      (options.starved_min_run_s <= 0 || options.fair_share_boost_half_levels <= 0)) {
    return absl::InvalidArgumentError(
        "starved_min_run_within_share: needs starved_min_run_s > 0 and a boost "
        "(fair_share_boost_half_levels > 0)");
  }

  if (const std::optional<int64_t>& lost = options.max_victim_lost_within_share_s;
      lost.has_value()) {
    if (*lost < 0 || *lost > 86400) {
      return absl::InvalidArgumentError(
          fmt::format("max_victim_lost_within_share_s: must be in [0, 86400], got {}", *lost));
    }
    if (options.fair_share_boost_half_levels <= 0 || !options.policy.preemption.enabled ||
        options.checkpoint_interval_s <= 0 || options.free_preemption) {
      return absl::InvalidArgumentError(
          "max_victim_lost_within_share_s: needs a boost (fair_share_boost_half_levels > 0), "
          "preemption (policy.preemption.enabled), checkpoints (checkpoint_interval_s > 0) and "
          "costed preemption (free_preemption off)");
    }
  }

  absl::StatusOr<internal::Tenants> tenants = internal::MakeTenants(jobs, pool.TotalGpus());
  if (!tenants.ok()) return tenants.status();
  if (absl::Status status = internal::SetQueueSettings(options.queues, *tenants); !status.ok()) {
    return status;
  }

  const internal::PoolLayout layout(options);
  // With scaling, the run state and the ledger count every node the pool may have; those not in
  // the pool are out of service (PoolHealth).
  const ReplayPool all_nodes = layout.WithAddedNodes(pool);
  internal::RunState state(jobs, *tenants, all_nodes);
  internal::ReplayEvents events(state, options.wake_up_every_s);
  const int64_t first_arrival = events.FirstArrivalTime();
  internal::MetricsRecorder metrics(options, *tenants, state.size(), first_arrival);
  internal::CycleSnapshot cycle(options, jobs, *tenants, layout, first_arrival,
                                metrics.share_history());
  const internal::CheckpointModel checkpoints(options);
  absl::StatusOr<internal::LedgerRecorder> ledger =
      internal::LedgerRecorder::Create(all_nodes, *tenants, first_arrival, options.series_bucket_s);
  if (!ledger.ok()) return ledger.status();
  internal::BudgetTracker budgets(*tenants, first_arrival, options.budget_period_s,
                                  options.queue_mode != QueueMode::kSingleQueueLas);
  if (absl::Status status = internal::ValidateFailures(options, first_arrival); !status.ok()) {
    return status;
  }
  if (absl::Status status = internal::ValidatePoolOperations(options, first_arrival);
      !status.ok()) {
    return status;
  }
  internal::PoolHealth health(layout);
  state.SetOutOfService(health.unusable_gpus(), health.nodes_down());
  internal::PoolEvents pool_events(options, first_arrival);
  if (options.failures.enabled() || options.maintenance.enabled() || options.spot.enabled() ||
      options.scaling.enabled()) {
    events.SetPoolEvents(&pool_events);
  }
  const internal::ReplayTargets targets{.options = options,
                                        .checkpoints = checkpoints,
                                        .health = health,
                                        .pool_events = pool_events,
                                        .state = state,
                                        .events = events,
                                        .cycle = cycle,
                                        .metrics = metrics,
                                        .ledger = *ledger};
  internal::Scaler scaler(options, layout, cycle.added_node_template());

  int64_t now = first_arrival;
  // The last time a job arrived, started or completed: with pool events alone moving the clock,
  // a replay whose waiting jobs can never start again is stopped with an error, not run forever.
  int64_t last_progress = now;
  while (events.HasMore(!state.pending().empty())) {
    const int64_t t = events.NextTime(now, !state.pending().empty());
    if (t - last_progress > kMaxStandstillS) {
      return absl::FailedPreconditionError(fmt::format(
          "{} jobs have waited {} days without any job arriving, starting or completing (at {}): "
          "the pool's maintenance, spot reclaims or failures leave them no room",
          state.pending().size(), (t - last_progress) / 86400, t));
    }
    if (absl::Status status = budgets.AdvanceTo(t, *ledger); !status.ok()) return status;
    metrics.AdvanceTo(t, state, health);
    now = t;
    bool cycle_now = false;
    while (std::optional<int32_t> i = events.PopCompletionAt(t)) {
      state.Complete(*i);
      metrics.Completed(*i, t);
      last_progress = t;
      if (absl::Status status = ledger->Completed(*i, t); !status.ok()) return status;
    }
    while (std::optional<internal::PoolEvent> e = pool_events.PopAt(t)) {
      absl::StatusOr<bool> needs_cycle = internal::ApplyPoolEvent(*e, targets);
      if (!needs_cycle.ok()) return needs_cycle.status();
      cycle_now = cycle_now || *needs_cycle;
    }
    while (std::optional<int32_t> i = events.PopArrivalAt(t)) {
      state.Arrive(*i, t);
      last_progress = t;
    }

    if (cycle_now || cycle.WorthScheduling(state) || scaler.WantsCycle(t, health)) {
      if (budgets.active()) {
        absl::StatusOr<std::vector<int64_t>> used = budgets.Used(t, *ledger);
        if (!used.ok()) return used.status();
        cycle.SetBudgetUsed(*used);
        budgets.CycleAt(t, *used);
      }
      const Snapshot& snapshot = cycle.Build(t, state);
      const Policy& policy = scaler.PolicyAt(t, health);
      absl::StatusOr<Decisions> decisions = Schedule(snapshot, policy);
      if (!decisions.ok()) {
        // A policy that does not fit the replayed pool (a headroom rule's GPU model, say) is the
        // caller's input; anything else the replay built is a bug of the replay.
        const std::string message(decisions.status().message());
        if (message.rfind("policy.", 0) == 0) {
          return absl::Status(decisions.status().code(),
                              fmt::format("policy: does not fit the replayed pool: {}", message));
        }
        return absl::InternalError(
            fmt::format("Schedule() at {}: {}", t, decisions.status().ToString()));
      }
      metrics.CycleRan();
      events.CycleRanAt(t);
      if (!decisions->starts.empty()) last_progress = t;
      if (absl::Status carried = internal::CarryOutDecisions(*decisions, t, targets);
          !carried.ok()) {
        return carried;
      }
      if (options.wake_up_at_checkpoints_s > 0) {
        events.SetCheckpointWakeUp(
            internal::NextCheckpointWakeUp(snapshot, *decisions, state, targets.checkpoints, policy,
                                           options.wake_up_at_checkpoints_s));
      }
      if (absl::Status scaled = scaler.Apply(*decisions, t, targets); !scaled.ok()) return scaled;
    }
    metrics.UpdateEntitlements(state);
  }
  ReplayResult result = std::move(metrics).Finish(state);
  absl::StatusOr<ReplayBudgets> used = std::move(budgets).Finish(result.series.end, *ledger);
  if (!used.ok()) return used.status();
  result.budgets = *std::move(used);
  absl::StatusOr<LedgerReport> report = ledger->Finish(result.series.end);
  if (!report.ok()) return report.status();
  result.ledger = *std::move(report);
  return result;
}

}  // namespace gpupool::sim
