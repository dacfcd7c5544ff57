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
//   pool_events.h     failures and repairs of GPUs and nodes (seeded), and the pool's health
//   failures.h        a pool event carried out: the jobs it stops, the GPUs it takes away
//   cycle_snapshot.h  the Snapshot the engine sees at a cycle (the state, as a host reports it)
//   carry_out.h       the cycle's decisions carried out: preemptions, then starts
//   metrics.h         what is measured as time passes, and the metrics at the end
//   ledger_recorder.h the GPU-time ledger (docs/accounting.md)
//   budgets.h         what each queue used of its GPU-hour budget, period by period
//
// At each event time: integrate the state since the previous event, take the completions, the
// pool events (repairs, then failures), then the arrivals, and if a cycle could change anything,
// schedule and carry out the decisions.
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
#include "sim/replay/budgets.h"
#include "sim/replay/carry_out.h"
#include "sim/replay/cycle_snapshot.h"
#include "sim/replay/events.h"
#include "sim/replay/failures.h"
#include "sim/replay/ledger_recorder.h"
#include "sim/replay/metrics.h"
#include "sim/replay/pool_events.h"
#include "sim/replay/run_state.h"
#include "sim/replay/tenants.h"

namespace gpupool::sim {

absl::StatusOr<ReplayResult> RunReplay(const ReplayOptions& options,
                                       const std::vector<TraceJob>& jobs) {
  const ReplayPool& pool = options.pool;
  if (pool.nodes <= 0 || pool.gpus_per_node <= 0 || pool.nodes_per_rack <= 0) {
    return absl::InvalidArgumentError("pool: nodes, gpus_per_node and nodes_per_rack must be > 0");
  }
  if (options.series_bucket_s <= 0) {
    return absl::InvalidArgumentError("series_bucket_s: must be > 0");
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
  absl::StatusOr<internal::Tenants> tenants = internal::MakeTenants(jobs, pool.TotalGpus());
  if (!tenants.ok()) return tenants.status();
  if (absl::Status status = internal::SetQueueSettings(options.queues, *tenants); !status.ok()) {
    return status;
  }

  internal::RunState state(jobs, *tenants, pool);
  internal::ReplayEvents events(state, options.wake_up_every_s);
  internal::CycleSnapshot cycle(options, jobs, *tenants);
  const internal::CheckpointModel checkpoints(options);
  internal::MetricsRecorder metrics(options, *tenants, state.size(), events.FirstArrivalTime());
  absl::StatusOr<internal::LedgerRecorder> ledger = internal::LedgerRecorder::Create(
      pool, *tenants, events.FirstArrivalTime(), options.series_bucket_s);
  if (!ledger.ok()) return ledger.status();
  internal::BudgetTracker budgets(*tenants, events.FirstArrivalTime(), options.budget_period_s,
                                  options.queue_mode != QueueMode::kSingleQueueLas);
  if (absl::Status status = internal::ValidateFailures(options, events.FirstArrivalTime());
      !status.ok()) {
    return status;
  }
  internal::PoolHealth health(pool);
  internal::PoolEvents pool_events(options, events.FirstArrivalTime());
  if (options.failures.enabled()) events.SetPoolEvents(&pool_events);
  const internal::PoolEventTargets pool_targets{.checkpoints = checkpoints,
                                                .repair_s = options.failures.repair_s,
                                                .health = health,
                                                .pool_events = pool_events,
                                                .state = state,
                                                .events = events,
                                                .cycle = cycle,
                                                .metrics = metrics,
                                                .ledger = *ledger};

  int64_t now = events.FirstArrivalTime();
  while (events.HasMore(!state.pending().empty())) {
    const int64_t t = events.NextTime(now, !state.pending().empty());
    if (absl::Status status = budgets.AdvanceTo(t, *ledger); !status.ok()) return status;
    metrics.AdvanceTo(t, state);
    now = t;
    while (std::optional<int32_t> i = events.PopCompletionAt(t)) {
      state.Complete(*i);
      metrics.Completed(*i, t);
      if (absl::Status status = ledger->Completed(*i, t); !status.ok()) return status;
    }
    while (std::optional<internal::PoolEvent> e = pool_events.PopAt(t)) {
      if (absl::Status status = internal::HandlePoolEvent(*e, pool_targets); !status.ok()) {
        return status;
      }
    }
    while (std::optional<int32_t> i = events.PopArrivalAt(t)) state.Arrive(*i, t);

    if (cycle.WorthScheduling(state)) {
      if (budgets.active()) {
        absl::StatusOr<std::vector<int64_t>> used = budgets.Used(t, *ledger);
        if (!used.ok()) return used.status();
        cycle.SetBudgetUsed(*used);
        budgets.CycleAt(t, *used);
      }
      absl::StatusOr<Decisions> decisions = Schedule(cycle.Build(t, state), options.policy);
      if (!decisions.ok()) {
        return absl::InternalError(
            fmt::format("Schedule() at {}: {}", t, decisions.status().ToString()));
      }
      metrics.CycleRan();
      events.CycleRanAt(t);
      absl::Status carried =
          internal::CarryOutDecisions(*decisions, t, checkpoints, state, events, metrics, *ledger);
      if (!carried.ok()) return carried;
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
