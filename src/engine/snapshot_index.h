// Stage 1 (second half): index a validated snapshot.
//
// Everything after validation works on dense integer indices and flat arrays rather than on
// strings and maps: nodes are numbered in topology order (their path, level by level, then id),
// every other list in id order, so that the numbering, and hence every tie-break, is independent
// of the order in which the host listed things.
#ifndef GPUPOOL_SNAPSHOT_INDEX_H_
#define GPUPOOL_SNAPSHOT_INDEX_H_

#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "gpupool/snapshot.h"

namespace gpupool::internal {

inline constexpr int64_t kNoLimit = std::numeric_limits<int64_t>::max();
inline constexpr int32_t kNone = -1;

// One replica of a running job, resolved to indices once, here, so that no later stage looks
// its strings up again.
struct RunningPlacement {
  int32_t node = kNone;   // node index
  int32_t group = kNone;  // index in job->groups
  int32_t replica = 0;
  // Flat GPU indices (SnapshotIndex::gpu_*), in the order the placement lists its GPUs.
  absl::Span<const int32_t> gpus;
};

// A per-job summary the placement stage needs again and again. Its lists are views into flat
// arrays the SnapshotIndex owns (one allocation per list kind per cycle, not per job).
struct JobInfo {
  const Job* job = nullptr;
  int32_t queue = kNone;
  // Tenant for isolation: the nearest queue at or above the job's queue with an isolation mode,
  // or kNone; and that mode.
  int32_t tenant = kNone;
  Isolation isolation = Isolation::kNone;
  // Accepted GPU models as model indices, in preference order; empty = any model. Names this
  // pool does not have are dropped (and remembered in `names_unknown_model`).
  absl::Span<const int32_t> models;
  bool names_unknown_model = false;
  // Milli-GPUs of the gang at its minimum size, and whether any group needs GPUs at all.
  int64_t gang_milli = 0;
  int64_t gang_cpu_milli = 0;
  bool needs_gpu = false;
  // gang_level resolved: kNone (no constraint), a topology level index, or `node_level`.
  int32_t gang_level = kNone;
  // Indices of the job's groups sorted by group name: the canonical group order, so that the
  // order in which the host lists a job's groups changes nothing.
  absl::Span<const int32_t> groups_by_name;
  // A running job's placements, aligned with job->placements; empty for a pending job.
  absl::Span<const RunningPlacement> placements;
};

class SnapshotIndex {
 public:
  // `snapshot` must have passed ValidateSnapshot() and must outlive the index.
  explicit SnapshotIndex(const Snapshot& snapshot);
  // Not copyable: JobInfo's lists point into the index's own arrays.
  SnapshotIndex(const SnapshotIndex&) = delete;
  SnapshotIndex& operator=(const SnapshotIndex&) = delete;

  const Snapshot& snapshot() const { return *snapshot_; }

  // --- GPU models, sorted by name. ---
  int32_t model_count() const { return static_cast<int32_t>(models_.size()); }
  const GpuModel& model(int32_t m) const { return *models_[m]; }
  int32_t FindModel(std::string_view name) const;
  // The slot used for "all models together" in per-model arrays: model_count().
  int32_t any_model_slot() const { return model_count(); }

  // --- Nodes, in topology order. ---
  int32_t node_count() const { return static_cast<int32_t>(nodes_.size()); }
  const Node& node(int32_t n) const { return *nodes_[n]; }
  int32_t FindNode(std::string_view id) const;
  // Model index of the node's GPUs, or kNone for a node without GPUs.
  int32_t node_model(int32_t n) const { return node_model_[n]; }
  // Nodes with GPUs of model m, in topology order.
  const std::vector<int32_t>& nodes_of_model(int32_t m) const { return nodes_of_model_[m]; }
  // Spot nodes (Node::spot): is node n one, is any node one, is any being reclaimed?
  bool node_spot(int32_t n) const { return node_spot_[n] != 0; }
  bool any_spot() const { return any_spot_; }
  bool any_reclaiming() const { return any_reclaiming_; }
  // All nodes without a GPU model (CPU-only nodes).
  const std::vector<int32_t>& cpu_only_nodes() const { return cpu_only_nodes_; }

  // --- GPUs, flat over all nodes: node n owns [gpu_begin(n), gpu_end(n)), sorted by index. ---
  int32_t gpu_count() const { return static_cast<int32_t>(gpu_index_.size()); }
  int32_t gpu_begin(int32_t n) const { return gpu_begin_[n]; }
  int32_t gpu_end(int32_t n) const { return gpu_begin_[n + 1]; }
  int32_t gpu_index(int32_t g) const { return gpu_index_[g]; }
  // Island of the GPU, renumbered 0..islands-1 within its node in ascending island id.
  int32_t gpu_island(int32_t g) const { return gpu_island_[g]; }
  int32_t island_count(int32_t n) const { return island_count_[n]; }
  bool gpu_healthy(int32_t g) const { return gpu_healthy_[g] != 0; }
  // Flat GPU of node n with GPU index `index`, or kNone.
  int32_t FindGpu(int32_t n, int32_t index) const;
  // Healthy GPUs of the node and their total milli capacity.
  int32_t healthy_gpus(int32_t n) const { return healthy_gpus_[n]; }
  int64_t gpu_memory_mib(int32_t n) const;

  // --- Topology. Levels 0..level_count()-1 as declared, then the node itself as a level. ---
  int32_t level_count() const { return static_cast<int32_t>(snapshot_->topology.levels.size()); }
  int32_t node_level() const { return level_count(); }
  // Returns the level index of a name ("node" is node_level()), or kNone.
  int32_t FindLevel(std::string_view name) const;
  // Domain of node n at level l (dense per level, in topology order), or kNone when the node
  // names no value at that level. At node_level() the domain is the node itself.
  int32_t node_domain(int32_t n, int32_t l) const;
  int32_t domain_count(int32_t l) const;
  // Nodes of a domain, in topology order.
  const std::vector<int32_t>& domain_nodes(int32_t l, int32_t d) const;
  // Global id of (level, domain) for flat per-domain arrays (not for node_level()).
  int32_t flat_domain(int32_t l, int32_t d) const { return domain_offset_[l] + d; }
  int32_t flat_domain_count() const { return domain_offset_.back(); }
  // Human-readable name of a domain ("b1/r7").
  std::string DomainName(int32_t l, int32_t d) const;

  // --- Queues, sorted by id. ---
  int32_t queue_count() const { return static_cast<int32_t>(queues_.size()); }
  const Queue& queue(int32_t q) const { return *queues_[q]; }
  int32_t FindQueue(std::string_view id) const;
  int32_t queue_parent(int32_t q) const { return queue_parent_[q]; }
  // Ancestors of queue q (0 for a root).
  int32_t queue_depth(int32_t q) const { return queue_depth_[q]; }
  // Limit of queue q for model slot m (any_model_slot() for "*"), or kNoLimit.
  int64_t queue_limit(int32_t q, int32_t m) const {
    return queue_limit_[static_cast<size_t>(q) * (model_count() + 1) + m];
  }
  // May a job of queue q use node n (owner restriction)?
  bool QueueMayUseNode(int32_t q, int32_t n) const;
  // Does node n name owner queues (Node::owner_queues not empty)?
  bool node_owned(int32_t n) const { return !node_owners_[n].empty(); }

  // --- Jobs, sorted by id. ---
  int32_t job_count() const { return static_cast<int32_t>(jobs_.size()); }
  const JobInfo& job(int32_t j) const { return job_info_[j]; }
  int32_t FindJob(std::string_view id) const;
  // Index of the group named `name` in job j, or kNone.
  int32_t FindGroup(int32_t j, std::string_view name) const;
  // Is job j's run a tentative start of the cycle being settled (settle.cc): started by an
  // earlier pass of the same cycle, so that evicting it again revokes a start the host has not
  // carried out? Such a job may be a victim whatever its minimum runtime, and costs nothing.
  bool tentative(int32_t j) const { return !tentative_.empty() && tentative_[j] != 0; }
  // The rank a tentative job j started with (its priority, or above every priority when it
  // started past its starvation bound): only a job that outranks that may revoke its start.
  int64_t tentative_rank(int32_t j) const { return tentative_rank_[j]; }
  // Marks the jobs of `tentative` (id, rank; ids not in the snapshot are ignored).
  void MarkTentative(const std::vector<std::pair<std::string, int64_t>>& tentative);
  // Is job j a restored job of the cycle being settled (settle.cc): an earlier pass evicted it
  // and a later one started it again in the same place, so that evicting it again would only send
  // the passes round in a loop? It then stays where it is for the rest of the cycle: no victim of
  // consolidation or headroom, and not evicted as an overrun backfilled job (its end then counts
  // as unknown, as under overrun "wait"); only a job of its queue that outranks it, or a reclaim
  // across queues, may evict or drain it, once (VictimRules::MayEvictRestored).
  bool restored(int32_t j) const { return !restored_.empty() && restored_[j] != 0; }
  // Is restored job j one that no job may evict, not even one of its queue that outranks it
  // (VictimRules::MayEvictRestored), nor to revoke a start of the cycle: it yielded once in the
  // cycle and a later pass started it again (in place or not), or it was put back a second time
  // as evicted for nothing?
  bool pinned(int32_t j) const { return !restored_.empty() && restored_[j] == 2; }
  // Marks the jobs of `ids` restored, and those of `pinned` (among them) pinned too (ids not in
  // the snapshot are ignored).
  void MarkRestored(const std::vector<std::string>& ids, const std::vector<std::string>& pinned);

 private:
  void IndexNodes();
  void IndexTopology();
  void IndexQueues();
  void IndexJobs();

  const Snapshot* snapshot_;
  std::vector<const GpuModel*> models_;
  std::vector<const Node*> nodes_;
  std::vector<const Queue*> queues_;
  std::vector<const Job*> jobs_;
  absl::flat_hash_map<std::string_view, int32_t> model_by_name_, node_by_id_, queue_by_id_;

  std::vector<int32_t> node_model_;
  std::vector<std::vector<int32_t>> nodes_of_model_;
  std::vector<int32_t> cpu_only_nodes_;
  std::vector<int32_t> gpu_begin_;
  std::vector<int32_t> gpu_index_, gpu_island_, island_count_, healthy_gpus_;
  std::vector<uint8_t> gpu_healthy_;
  std::vector<uint8_t> node_spot_;
  bool any_spot_ = false, any_reclaiming_ = false;
  std::vector<uint8_t> tentative_;
  std::vector<int64_t> tentative_rank_;
  std::vector<uint8_t> restored_;

  std::vector<int32_t> node_domain_;                             // node * level_count() + level
  std::vector<std::vector<std::vector<int32_t>>> domain_nodes_;  // [level][domain] -> nodes
  std::vector<std::vector<std::string>> domain_names_;
  std::vector<int32_t> domain_offset_;
  std::vector<std::vector<int32_t>> single_node_;  // node_level() domains: {n}

  std::vector<int32_t> queue_parent_;
  std::vector<int32_t> queue_depth_;
  std::vector<int64_t> queue_limit_;
  std::vector<std::vector<int32_t>> node_owners_;  // sorted queue indices, empty = anyone
  std::vector<JobInfo> job_info_;
  // The flat arrays JobInfo's lists view: accepted models, groups by name, running placements
  // and their GPUs, each job's run contiguous.
  std::vector<int32_t> job_models_, job_groups_, placement_gpus_;
  std::vector<RunningPlacement> placements_;
};

}  // namespace gpupool::internal

#endif  // GPUPOOL_SNAPSHOT_INDEX_H_
