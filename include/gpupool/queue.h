// Queues: the tree of tenants (org > team > project) that share the pool.
#ifndef GPUPOOL_QUEUE_H_
#define GPUPOOL_QUEUE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpupool {

// The GPU-model key that means "all models together".
inline constexpr char kAnyGpuModel[] = "*";

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
  // May the queue use more than its guarantee when others do not need theirs?
  bool can_borrow = true;
  // May others use its unused guarantee?
  bool can_lend = true;
  Isolation isolation = Isolation::kNone;
  // Optional GPU-hour budget per accounting period and decayed usage so far, in milli-GPU-seconds.
  // Carried for accounting and later fair-share stages.
  std::optional<int64_t> budget_milli_gpu_seconds;
  int64_t decayed_usage_milli_gpu_seconds = 0;
};

}  // namespace gpupool

#endif  // GPUPOOL_QUEUE_H_
