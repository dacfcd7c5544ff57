// The policy: every knob of a scheduling cycle, as a value.
#ifndef GPUPOOL_POLICY_H_
#define GPUPOOL_POLICY_H_

#include <cstdint>
#include <memory>
#include <string>

#include "gpupool/placement_scorer.h"

namespace gpupool {

// Built-in placement strategies.
enum class PlacementStrategy {
  // Default. The node left with the fewest free milli-GPUs after the replica (then the least
  // free CPU): packs work tightly and keeps empty nodes and whole islands for large jobs.
  kBestFit,
  // The first node in topology order where the replica fits.
  kFirstFit,
  // The node with the most free milli-GPUs (then the most free CPU): spreads load.
  kSpread,
};

// Order in which pending jobs are considered.
enum class JobOrder {
  // Higher priority first, then earlier submit time, then job id.
  kPriorityFifo,
};

// Deterministic bounds on the work of one cycle, in work units (never wall-clock time), so that
// a cut is reproducible. 0 means unbounded.
struct Budgets {
  // Candidate nodes evaluated over the whole cycle; once spent, the remaining jobs stay pending
  // with reason kBudgetExhausted.
  int64_t max_candidates = 0;
  // Victim sets simulated by preemption planning over the whole cycle; once spent, no further
  // preemption is planned (counters.budget_exhausted reports it).
  int64_t max_preemption_plans = 0;
};

// Preemption (DESIGN.md stage 6). In this version a pending job may evict running jobs of its
// own queue with a lower priority; reclaiming guarantees across queues comes with fair share.
// Victims are whole gangs, only preemptible jobs past their minimum runtime. Among the victim
// sets that let the job start, the planner takes the cheapest in lost work (then the fewest
// victims, then by job ids), and evicts nothing unless the job then starts.
struct PreemptionOptions {
  // Off by default: Schedule() emits no Preempt decision.
  bool enabled = false;
  // A victim whose checkpoint_cost_s is at most this many seconds is taken to checkpoint on
  // demand before it goes: it loses only its checkpoint cost (plus its restore time) instead of
  // all the work since its last checkpoint.
  int64_t checkpoint_grace_s = 0;
};

struct Policy {
  // Reported in the decisions, with the version.
  std::string name = "default";
  int32_t version = 1;
  PlacementStrategy placement = PlacementStrategy::kBestFit;
  // A host-supplied scorer; when set it replaces `placement`. Shared and const: one scorer may
  // serve many concurrent Schedule() calls.
  std::shared_ptr<const PlacementScorer> scorer;
  JobOrder job_order = JobOrder::kPriorityFifo;
  PreemptionOptions preemption;
  Budgets budgets;
};

// Stable names of the built-in strategies ("best-fit", "first-fit", "spread").
const char* PlacementStrategyName(PlacementStrategy strategy);

}  // namespace gpupool

#endif  // GPUPOOL_POLICY_H_
