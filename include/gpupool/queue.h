// Queues: the tree of tenants (org > team > project) that share the pool.
#ifndef GPUPOOL_QUEUE_H_
#define GPUPOOL_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpupool/topology.h"

namespace gpupool {

// The GPU-model key that means "all models together".
inline constexpr char kAnyGpuModel[] = "*";

// The queue label that names the cost center a queue's GPU time is billed to (chargeback.h). A
// queue without it inherits its nearest ancestor's.
inline constexpr char kCostCenterLabel[] = "cost_center";

// Limits of a queue label (validate.h): keys and values are 1 to this many bytes.
inline constexpr size_t kMaxLabelKeyBytes = 63;
inline constexpr size_t kMaxLabelValueBytes = 253;

// A queue's quota for one GPU model (or for all models together, with gpu_model == "*").
struct Quota {
  std::string gpu_model = kAnyGpuModel;
  // Milli-GPUs the queue is guaranteed, when it has demand for them.
  int64_t guaranteed_milli = 0;
  // Milli-GPUs the queue may never exceed (its own jobs plus those of its descendants).
  // Unset: no limit.
  std::optional<int64_t> limit_milli;
  // Weight of the queue when surplus beyond guarantees is shared (non-negative).
  int64_t over_quota_weight = 1;
};

// Whether a queue's jobs may share hardware with jobs of other tenants. The tenant boundary is
// the queue that sets the mode: its whole subtree counts as one tenant.
enum class Isolation {
  kNone,           // may share GPUs and nodes with anyone (the default)
  kExclusiveGpu,   // never shares a GPU with another tenant; may share a node
  kExclusiveNode,  // never shares a node with another tenant
};

struct Queue {
  // Unique id.
  std::string id;
  // Id of the parent queue; empty for a root. The parents must form a forest (no cycles).
  std::string parent;
  // Priority of the queue relative to its siblings (higher is served first by later stages).
  int32_t priority = 0;
  // At most one quota per GPU model, plus optionally one for "*".
  std::vector<Quota> quotas;
  // May the queue be entitled to more than its guarantee when others do not need theirs? False
  // caps its fair-share entitlement at its guarantee; it is not a limit (its jobs may still start
  // on idle GPUs beyond it, as borrowed capacity): use Quota::limit_milli for that.
  bool can_borrow = true;
  // May other queues use the queue's unused guarantee? False holds it for the queue's subtree:
  // jobs of other queues may not start on it, and fair share does not divide it among them
  // (docs/fair-share.md, "Queues that do not lend"). Work already running on it stays until
  // reclaim across queues takes it back.
  bool can_lend = true;
  Isolation isolation = Isolation::kNone;
  // Free-form labels, key=value (the key in TopologyLabel::level, as for Node::labels). Keys are
  // unique; keys and values are non-empty, at most kMaxLabelKeyBytes / kMaxLabelValueBytes long,
  // without control characters. The scheduler does not read them. Accounting reads one:
  // kCostCenterLabel ("cost_center"), the cost center the queue's GPU time is billed to, which
  // its descendants inherit (docs/accounting.md).
  std::vector<TopologyLabel> labels;
  // GPU-hour budget (docs/budgets.md): the GPU time the queue and all its
  // descendants together may use per accounting period, in milli-GPU-seconds (3,600,000 = one
  // GPU-hour), and what they have used of it so far in the current period (the host's ledger
  // says; the host resets it when a period starts). Unset: no budget.
  // A queue is over budget when budget_used_milli_gpu_seconds >= budget_milli_gpu_seconds; then
  // it and every queue below it lose their guarantees for the cycle (they run only on what fair
  // share gives them beyond guarantees, i.e. on idle GPUs, if they may borrow), their running
  // jobs are the first victims of reclaim by other queues, and their pending jobs say so.
  std::optional<int64_t> budget_milli_gpu_seconds;
  int64_t budget_used_milli_gpu_seconds = 0;
  // Decayed past usage in milli-GPU-seconds, which lowers the queue's over-quota weight when the
  // policy sets fair_share.usage_half_life_s (docs/fair-share.md). Not used by budgets.
  int64_t decayed_usage_milli_gpu_seconds = 0;
  // True when this queue's own budget is spent (ancestors' budgets not considered).
  bool OverOwnBudget() const {
    return budget_milli_gpu_seconds.has_value() &&
           budget_used_milli_gpu_seconds >= *budget_milli_gpu_seconds;
  }
};

}  // namespace gpupool

#endif  // GPUPOOL_QUEUE_H_
