// Stage 2: the working state of a cycle.
//
// Free capacity per GPU, per node and per topology domain, queue usage per GPU model, and the
// isolation tenants present on each GPU and node, all in flat integer arrays indexed by the dense
// numbering of SnapshotIndex. Placing a gang or trying a plan is a transaction: Checkpoint()
// returns a Mark to come back to, Rollback() undoes every write since, exactly, from an undo log,
// and Commit() forgets the log once a stage step is done (each step commits its own: see
// schedule.cc). Writes go through Set() only, so nothing escapes the log.
//
// Nodes that can take new work are also kept in one ordered index per GPU model (plus one for
// CPU-only nodes), keyed by (free milli-GPUs, free CPU, topology rank) with a sign chosen by the
// placement strategy, so best-fit and spread find their node with one ordered search instead of
// a scan of the pool.
#ifndef GPUPOOL_WORKING_STATE_H_
#define GPUPOOL_WORKING_STATE_H_

#include <cstdint>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/types/span.h"
#include "gpupool/policy.h"
#include "snapshot_index.h"

namespace gpupool::internal {

// Key of a node in the ordered index.
struct NodeKey {
  int64_t gpu = 0;  // sign * free milli-GPUs
  int64_t cpu = 0;  // sign * free CPU
  int32_t node = 0;
  friend bool operator<(const NodeKey& a, const NodeKey& b) {
    if (a.gpu != b.gpu) return a.gpu < b.gpu;
    if (a.cpu != b.cpu) return a.cpu < b.cpu;
    return a.node < b.node;
  }
};

// Tenant marks on GPUs and nodes.
inline constexpr int64_t kNoTenant = -1;  // jobs of queues without isolation
inline constexpr int64_t kMixedTenants = -2;

class WorkingState {
 public:
  // The ordered node index follows `policy.placement`: ascending in free capacity (best-fit,
  // first-fit), or descending (spread). `index` must outlive the state.
  WorkingState(const SnapshotIndex& index, const Policy& policy);

  // Adds a running job's placements (validated) to the state. Not undoable; call before any
  // transaction.
  void AddRunningJob(int32_t job);
  // Gives back everything a running job holds (as if it were evicted). Undoable. Releasing a job
  // already released does nothing.
  void ReleaseRunningJob(int32_t job);
  // Marks node n as held for a reservation for the rest of the cycle (not undoable): running
  // work there may not be evicted for other jobs. See reserve.h.
  void MarkHeld(int32_t n) { held_node_[n] = 1; }
  bool node_held(int32_t n) const { return held_node_[n] != 0; }
  // Does running job j hold anything on a node marked held?
  bool OnHeldNode(int32_t job) const;
  // Gives back the replicas of running job j's group `group` above the `keep` with the lowest
  // replica indices (an elastic group shrinking to `keep`). Undoable. The job then counts as
  // released: ReleaseRunningJob() does nothing more for it in this cycle.
  void ShrinkRunningGroup(int32_t job, int32_t group, int32_t keep);
  // Replicas of running job j's group `group` (as placed in the snapshot).
  int32_t running_replicas(int32_t job, int32_t group) const;
  // Has running job j been released (in the transactions so far)?
  bool released(int32_t job) const { return !released_.empty() && released_[job] != 0; }
  // Milli-GPUs a running job holds in total.
  int64_t running_milli(int32_t job) const;

  // --- Transactions. ---
  struct Mark {
    size_t undo = 0;
    size_t touched = 0;
  };
  Mark Checkpoint() const { return {undo_.size(), touched_.size()}; }
  void Rollback(Mark mark);
  // Forgets the undo log; call only when no transaction is open (keeps memory flat).
  void Commit() {
    undo_.clear();
    touched_.clear();
  }

  // Takes `gpus` (flat GPU ids, each carrying `milli` and `gpu_memory_mib`; whole GPUs take all
  // their memory), CPU and memory on node n for a replica of job j, and charges the job's queue
  // and its ancestors for `model` (unless `charge_queue` is false: capacity a reservation holds
  // beyond what its job needs, reserve.h).
  void Allocate(int32_t job, int32_t n, absl::Span<const int32_t> gpus, int64_t milli,
                int64_t gpu_memory_mib, int64_t cpu_milli, int64_t memory_mib,
                bool charge_queue = true);

  // The inverse of Allocate() called with the same arguments: gives back capacity held for a
  // reservation (reserve.h), so that a backfill may use it, and empties nodes of work placed in
  // this cycle for consolidation's probes (consolidate.h). Undoable.
  void Deallocate(int32_t job, int32_t n, absl::Span<const int32_t> gpus, int64_t milli,
                  int64_t gpu_memory_mib, int64_t cpu_milli, int64_t memory_mib,
                  bool charge_queue = true) {
    Free(job, Held{n, gpus, milli, gpu_memory_mib, cpu_milli, memory_mib, 0, 0, charge_queue});
  }

  // Holds `milli` milli-GPUs of model `model` (kNone: none) under the limits of job j's queue and
  // its ancestors, without capacity: the room a reservation keeps for the part of its job's
  // request that it cannot hold yet (reserve.h). Negative gives room back. Undoable.
  void HoldLimitRoom(int32_t job, int32_t model, int64_t milli);

  // Gives back what job j holds at `placements`, work placed in this cycle (started or moved):
  // each replica as its group requests, the inverse of the Allocate() that placed it. Undoable.
  void DeallocatePlacements(int32_t job, absl::Span<const ReplicaPlacement> placements);

  // --- Reads. ---
  int64_t gpu_free_milli(int32_t g) const { return gpu_free_milli_[g]; }
  int64_t gpu_free_memory(int32_t g) const { return gpu_free_memory_[g]; }
  int64_t gpu_tenant(int32_t g) const { return gpu_tenant_[g]; }
  int64_t node_free_cpu(int32_t n) const { return node_free_cpu_[n]; }
  int64_t node_free_memory(int32_t n) const { return node_free_memory_[n]; }
  int64_t node_free_gpu(int32_t n) const { return node_free_gpu_[n]; }
  int64_t node_tenant(int32_t n) const { return node_tenant_[n]; }
  int64_t node_exclusive_tenant(int32_t n) const { return node_exclusive_tenant_[n]; }
  // Free healthy milli-GPUs in a domain at a declared level.
  int64_t domain_free_gpu(int32_t l, int32_t d) const {
    return l == index_.node_level() ? node_free_gpu_[d]
                                    : domain_free_gpu_[index_.flat_domain(l, d)];
  }
  // Milli-GPUs used by queue q (with descendants) on model slot m.
  int64_t queue_usage(int32_t q, int32_t m) const {
    return queue_usage_[static_cast<size_t>(q) * (index_.model_count() + 1) + m];
  }
  // What a queue limit counts for queue q on model slot m: its usage plus the milli-GPUs held
  // under its limits for reservations beyond the capacity they hold (HoldLimitRoom()).
  int64_t queue_limit_usage(int32_t q, int32_t m) const {
    const size_t i = static_cast<size_t>(q) * (index_.model_count() + 1) + m;
    return queue_usage_[i] + limit_room_held_[i];
  }
  // Free milli-GPUs and free CPU summed over the open nodes of model slot m (index_.model_count()
  // for CPU-only nodes).
  int64_t model_free_gpu(int32_t m) const { return model_free_gpu_[m]; }
  int64_t model_free_cpu(int32_t m) const { return model_free_cpu_[m]; }
  // Does node n hold no work at all (no replica, even one that requests nothing)?
  bool NodeEmpty(int32_t n) const { return node_replicas_[n] == 0; }
  // Is the node open to new work (ready)?
  bool node_open(int32_t n) const { return open_[n] != 0; }

  // The ordered index of open nodes of model m (index_.model_count() for CPU-only nodes). It is
  // brought up to date here, when read: writes only note which nodes' keys may have changed, so
  // that a transaction rolled back before anyone looked, or a node written several times between
  // two reads, costs no work in the index.
  const absl::btree_set<NodeKey>& ordered_nodes(int32_t m) const {
    if (!stale_nodes_.empty()) Refresh();
    return ordered_[m];
  }
  // +1 when the ordered index is ascending in free capacity, -1 when descending (spread).
  int key_sign() const { return key_sign_; }

 private:
  void Set(std::vector<int64_t>& array, size_t i, int64_t value) {
    undo_.push_back({&array[i], array[i]});
    array[i] = value;
  }
  // Adds `milli` to `per_queue` (indexed like queue_usage_) for job j's queue and each ancestor,
  // on model slot `model` (unless kNone) and on "*". Undoable.
  void AddUpTheQueues(std::vector<int64_t>& per_queue, int32_t j, int32_t model, int64_t milli);
  // One replica of a running job, as AddRunningJob() found it (HeldOf()), or what Deallocate()
  // gives back.
  struct Held {
    int32_t node;
    absl::Span<const int32_t> gpus;
    int64_t milli, gpu_memory_mib, cpu_milli, memory_mib;
    int32_t group, replica;
    bool charged = true;  // charged to the job's queue (Allocate()'s charge_queue)
  };
  Held HeldOf(int32_t job, const RunningPlacement& placement) const;
  void Free(int32_t job, const Held& held);
  // Adds the given amounts to node n's free GPU, CPU and memory and to the per-model and
  // per-domain aggregates over it, and `queue_milli` to the usage of job j's queue and its
  // ancestors on n's model and on "*". Allocate() passes negative free amounts, Free() positive.
  void AdjustFree(int32_t j, int32_t n, int64_t gpu_milli, int64_t cpu_milli, int64_t memory_mib,
                  int64_t queue_milli);
  NodeKey KeyOf(int32_t n) const {
    return {key_sign_ * node_free_gpu_[n], key_sign_ * node_free_cpu_[n], n};
  }
  int32_t OrderedSlot(int32_t n) const {
    const int32_t m = index_.node_model(n);
    return m == kNone ? index_.model_count() : m;
  }
  void Touch(int32_t n);
  // Notes that node n's key may have changed (see ordered_nodes()).
  void MarkStale(int32_t n) {
    if (stale_[n]) return;
    stale_[n] = 1;
    stale_nodes_.push_back(n);
  }
  // Puts every stale open node back in its ordered index under its current key.
  void Refresh() const;

  const SnapshotIndex& index_;
  int key_sign_;

  std::vector<int64_t> gpu_free_milli_, gpu_free_memory_, gpu_tenant_;
  std::vector<int64_t> node_free_cpu_, node_free_memory_, node_free_gpu_, node_tenant_,
      node_exclusive_tenant_;
  // Replicas on each node: a replica that requests no resources still makes its node non-empty
  // for isolation.
  std::vector<int64_t> node_replicas_;
  std::vector<int64_t> domain_free_gpu_;
  std::vector<int64_t> model_free_gpu_, model_free_cpu_;
  std::vector<int64_t> queue_usage_;
  std::vector<int64_t> limit_room_held_;  // per queue and model slot, as queue_usage_
  std::vector<uint8_t> open_;
  std::vector<uint8_t> held_node_;
  // Up to date for every node but those in stale_nodes_ (mutable: ordered_nodes() refreshes).
  mutable std::vector<absl::btree_set<NodeKey>> ordered_;
  // Key under which each open node currently sits in its ordered index.
  mutable std::vector<NodeKey> indexed_key_;
  // Nodes whose key may differ from indexed_key_ (each once), and a flag per node.
  mutable std::vector<int32_t> stale_nodes_;
  mutable std::vector<uint8_t> stale_;
  // Per job: 1 once AddRunningJob() placed its running replicas (empty until a job runs), and
  // whether it has been released (1) or not (0).
  std::vector<uint8_t> running_;
  std::vector<int64_t> released_;

  struct Undo {
    int64_t* slot;
    int64_t old_value;
  };
  std::vector<Undo> undo_;
  std::vector<int32_t> touched_;
};

}  // namespace gpupool::internal

#endif  // GPUPOOL_WORKING_STATE_H_
