// Carrying out a cycle's decisions in the replay (carry_out.h).
#include "sim/replay/carry_out.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"

namespace gpupool::sim::internal {
namespace {

// Why a job the engine stops without a beneficiary is stopped (see carry_out.h).
enum class StopCause { kPreemption, kSpot, kMaintenance };

StopCause CauseOf(const JobRun& run, const PoolHealth& health) {
  StopCause cause = StopCause::kPreemption;
  for (const ReplicaPlacement& p : run.placements) {
    const std::optional<int32_t> node = NodeIndex(p.node, health.node_count());
    if (!node) continue;
    if (health.ReclaimDeadline(*node).has_value()) return StopCause::kSpot;
    if (health.InMaintenance(*node)) cause = StopCause::kMaintenance;
  }
  return cause;
}

}  // namespace

absl::Status CarryOutDecisions(const Decisions& decisions, int64_t now, const ReplayTargets& t) {
  const CheckpointModel& checkpoints = t.checkpoints;
  RunState& state = t.state;
  ReplayEvents& events = t.events;
  MetricsRecorder& metrics = t.metrics;
  LedgerRecorder& ledger = t.ledger;
  // A stop: the job keeps the work of its last checkpoint and pays a restore when it runs again.
  auto stop = [&](const std::string& job, const std::string& for_job_id) -> absl::Status {
    const absl::StatusOr<int32_t> i = JobIndex(job, state);
    if (!i.ok()) return i.status();
    const JobRun& run = state.job(*i);
    if (run.phase != Phase::kRunning) {
      return absl::InternalError(fmt::format("preempt {}: not running", job));
    }
    const int64_t work = WorkAt(run, now);
    const StopCause cause = for_job_id.empty() ? CauseOf(run, t.health) : StopCause::kPreemption;
    int64_t kept = checkpoints.PreemptionKeptWork(run, now);
    std::optional<int64_t> last_checkpoint = checkpoints.LastCheckpointTime(run, now);
    const int64_t restore = checkpoints.RestoreCost();
    switch (cause) {
      case StopCause::kPreemption:
        metrics.Preempted(*i, run.gpus, work - kept + restore);
        break;
      case StopCause::kSpot:
        // A checkpoint on demand before the deadline (none needed during a restore: the work
        // resumed from is kept).
        kept = work;
        if (work > run.work_base) last_checkpoint = now;
        metrics.SpotStopped(*i, run.gpus, restore);
        break;
      case StopCause::kMaintenance:
        metrics.MaintenanceStopped(*i, run.gpus, work - kept + restore);
        break;
    }
    const absl::StatusOr<int32_t> for_job = JobIndex(for_job_id, state);
    if (absl::Status status =
            ledger.Preempted(*i, now, last_checkpoint, for_job.ok() ? *for_job : -1);
        !status.ok()) {
      return status;
    }
    events.CancelCompletion(run.completion, *i);
    state.Preempt(*i, now, kept, restore);
    return absl::OkStatus();
  };
  auto start = [&](const std::string& job,
                   const std::vector<ReplicaPlacement>& placements) -> absl::Status {
    const absl::StatusOr<int32_t> i = JobIndex(job, state);
    if (!i.ok()) return i.status();
    const JobRun& run = state.job(*i);
    if (run.phase != Phase::kPending) {
      return absl::InternalError(fmt::format("start {}: not pending", job));
    }
    metrics.Started(*i, now, run.pending_since);
    if (absl::Status status = ledger.Started(*i, now, run, placements); !status.ok()) {
      return status;
    }
    state.Start(*i, now, placements);
    events.AddCompletion(state.job(*i).completion, *i);
    return absl::OkStatus();
  };
  for (const PreemptDecision& p : decisions.preemptions) {
    if (absl::Status status = stop(p.job, p.for_job); !status.ok()) return status;
  }
  // Moves (consolidation, with the policy's consolidation on): every mover is stopped where it
  // runs, like a victim, then each restarts at once at its new place (one mover may go where
  // another was).
  for (const MigrateDecision& m : decisions.migrations) {
    if (absl::Status status = stop(m.job, m.for_job); !status.ok()) return status;
  }
  for (const MigrateDecision& m : decisions.migrations) {
    if (absl::Status status = start(m.job, m.to); !status.ok()) return status;
  }
  for (const StartDecision& d : decisions.starts) {
    if (absl::Status status = start(d.job, d.placements); !status.ok()) return status;
  }
  if (state.free_gpus() < 0) return absl::InternalError("GPUs over-committed");
  for (const NodeActionDecision& action : decisions.node_actions) {
    if (absl::Status status = t.cycle.ApplyNodeAction(action); !status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace gpupool::sim::internal
