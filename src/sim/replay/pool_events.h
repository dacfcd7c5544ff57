// The replay's pool events: what happens to the pool itself rather than to a job: GPU and node
// failures and their repairs (ReplayOptions::failures), maintenance windows
// (ReplayOptions::maintenance), spot reclaims and returns (ReplayOptions::spot), nodes added
// from the engine's scale advice (ReplayOptions::scaling). The kinds are an ordered list: another
// one is a new kind here, a new source of events in PoolEvents and a new case in the handler
// (apply_pool_event.h).
//
//   PoolLayout  which nodes the replay has: the pool's own (some spot), then those it may add
//   PoolHealth  what each node and GPU is going through (the state the snapshots show)
//   PoolEvents  the timeline: the seeded Poisson processes of failures and of spot reclaims,
//               the rolling and injected maintenance windows, the injected failures and
//               reclaims, and the scheduled returns, in (time, kind, node, ...) order
//
// The random processes are drawn without floating point: exponential gaps by von Neumann's
// comparison method on 64-bit uniforms (gpupool/sim/rng.h), scaled to whole seconds with
// integer arithmetic, so a seed gives the same failures on every platform.
//
// Not API: one of the parts RunReplay() (replay.cc) is built from.
#ifndef GPUPOOL_SRC_SIM_REPLAY_POOL_EVENTS_H_
#define GPUPOOL_SRC_SIM_REPLAY_POOL_EVENTS_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "gpupool/node.h"
#include "gpupool/sim/replay.h"
#include "gpupool/sim/rng.h"

namespace gpupool::sim::internal {

// In the order events of one second are handled: capacity coming back before capacity going,
// so that a GPU repaired and failing again in one second is out of service afterwards.
enum class PoolEventKind {
  // Returns: capacity comes back.
  kNodeRepaired = 0,
  kGpuRepaired = 1,
  kMaintenanceEnds = 2,
  kSpotReturned = 3,
  kNodeProvisioned = 4,
  // Losses.
  kNodeFails = 5,
  kGpuFails = 6,
  kSpotTaken = 7,
  kMaintenanceStarts = 8,
  kSpotReclaimed = 9,
};

struct PoolEvent {
  int64_t time = 0;
  PoolEventKind kind = PoolEventKind::kGpuFails;
  int32_t node = 0;
  // The GPU of kGpuFails and kGpuRepaired; -1 for the other kinds.
  int32_t gpu = -1;
  // kMaintenanceStarts: the window's end, and whether it is a rolling one (the next one of the
  // node is then scheduled when it is taken).
  int64_t end = 0;
  bool rolling = false;

  friend bool operator<(const PoolEvent& a, const PoolEvent& b) {
    return std::tie(a.time, a.kind, a.node, a.gpu, a.end, a.rolling) <
           std::tie(b.time, b.kind, b.node, b.gpu, b.end, b.rolling);
  }
};

// The nodes of a replay: the pool's own (0 .. pool.nodes - 1, the last ReplaySpot::nodes of them
// spot), then the ReplayScaling::max_nodes the pool may add, in rack "rs".
struct PoolLayout {
  explicit PoolLayout(const ReplayOptions& options);

  int32_t own_nodes;
  int32_t spot_nodes;
  int32_t added_nodes;
  int32_t gpus_per_node;

  int32_t all_nodes() const { return own_nodes + added_nodes; }
  bool IsSpot(int32_t node) const { return node < own_nodes && node >= own_nodes - spot_nodes; }
  bool IsAdded(int32_t node) const { return node >= own_nodes; }
  // The pool with the added nodes counted (RunState, the ledger).
  ReplayPool WithAddedNodes(const ReplayPool& pool) const;
};

// The replay's node ids: node 3 is "n003" (MakePoolSnapshot). And back: the index of id, none
// when it is not "n" and a node index below `nodes`.
std::string NodeId(int32_t node);
std::optional<int32_t> NodeIndex(std::string_view id, int32_t nodes);

// What the pool's nodes are going through, as the snapshots show it. A GPU is usable when it has
// not failed and its node is in the pool (not absent), up (not failed, not taken by the spot
// provider). A node's GPUs keep their own repairs while the node is down. Maintenance makes no
// GPU unusable here: the engine keeps work off a node in its window (and stops what is there).
class PoolHealth {
 public:
  // Every node of `layout` in service, but the added ones absent.
  explicit PoolHealth(const PoolLayout& layout);

  bool NodeDown(int32_t node) const { return down_[static_cast<size_t>(node)]; }
  bool GpuFailed(int32_t node, int32_t gpu) const { return failed_[Index(node, gpu)]; }
  bool InMaintenance(int32_t node) const { return maintenance_[static_cast<size_t>(node)] > 0; }
  // A spot reclaim announced and not yet back: the deadline (the node is taken from then on).
  std::optional<int64_t> ReclaimDeadline(int32_t node) const {
    return reclaim_deadline_[static_cast<size_t>(node)];
  }
  bool Taken(int32_t node) const { return taken_[static_cast<size_t>(node)]; }
  bool Absent(int32_t node) const { return absent_[static_cast<size_t>(node)]; }
  // Up: in the pool, not failed, not taken.
  bool Up(int32_t node) const { return !NodeDown(node) && !Taken(node) && !Absent(node); }
  // Every node the replay has (PoolLayout::all_nodes).
  int32_t node_count() const { return layout_.all_nodes(); }

  // Transitions; each returns false (and changes nothing) when it does not apply: a failure of
  // a GPU or node already out of service, a repair of one that is not, a reclaim of a node
  // already reclaimed or not up, and so on.
  bool FailGpu(int32_t node, int32_t gpu);
  bool RepairGpu(int32_t node, int32_t gpu);
  bool FailNode(int32_t node);
  bool RepairNode(int32_t node);
  // Windows may overlap: a node is in maintenance while any of its windows is in progress.
  void StartMaintenance(int32_t node);
  bool EndMaintenance(int32_t node);
  bool AnnounceReclaim(int32_t node, int64_t deadline);
  bool TakeReclaimed(int32_t node);
  bool ReturnReclaimed(int32_t node);
  // An added node ordered from the scale advice, on its way (still absent); then in the pool;
  // then released (absent again).
  bool Order(int32_t node);
  bool Add(int32_t node);
  bool Release(int32_t node);
  bool Ordered(int32_t node) const { return ordered_[static_cast<size_t>(node)]; }

  // GPUs out of service (failed, or on a node that is not up, each counted once), nodes failed,
  // nodes in maintenance, nodes the spot provider holds, added nodes in the pool.
  int64_t unusable_gpus() const { return unusable_gpus_; }
  int64_t nodes_down() const { return nodes_down_; }
  int64_t nodes_in_maintenance() const { return nodes_in_maintenance_; }
  int64_t nodes_taken() const { return nodes_taken_; }
  int64_t added_in_pool() const { return added_in_pool_; }
  int64_t ordered() const { return ordered_count_; }
  int64_t absent_nodes() const { return layout_.added_nodes - added_in_pool_; }

 private:
  size_t Index(int32_t node, int32_t gpu) const {
    return static_cast<size_t>(node) * static_cast<size_t>(gpus_per_node_) +
           static_cast<size_t>(gpu);
  }
  // GPUs of `node` out of service.
  int64_t Unusable(int32_t node) const;
  // Applies `change` to node `node`'s flags, keeping unusable_gpus_ right.
  template <typename F>
  void Change(int32_t node, F change);

  const PoolLayout layout_;
  int32_t gpus_per_node_;
  std::vector<bool> down_;
  std::vector<bool> failed_;
  std::vector<int32_t> failed_on_node_;
  std::vector<int32_t> maintenance_;
  std::vector<std::optional<int64_t>> reclaim_deadline_;
  std::vector<bool> taken_;
  std::vector<bool> absent_;
  std::vector<bool> ordered_;
  int64_t unusable_gpus_ = 0;
  int64_t ordered_count_ = 0;
  int64_t nodes_down_ = 0;
  int64_t nodes_in_maintenance_ = 0;
  int64_t nodes_taken_ = 0;
  int64_t added_in_pool_ = 0;
};

// InvalidArgument naming the field when `options.failures` is out of range (replay.h), given the
// first arrival `start`.
absl::Status ValidateFailures(const ReplayOptions& options, int64_t start);
// The same for options.maintenance, options.spot and options.scaling.
absl::Status ValidatePoolOperations(const ReplayOptions& options, int64_t start);

// The maintenance windows of node `node` announced at `now` (start - notice_s <= now < end), in
// start order, overlapping ones merged: what the node's `maintenance` list shows.
std::vector<MaintenanceWindow> AnnouncedWindows(const ReplayOptions& options, int32_t node,
                                                int64_t start, int64_t now);

class PoolEvents {
 public:
  // The failures of `options.failures`, the maintenance windows and the spot reclaims from
  // `start` (the first arrival) on. Empty when all are off.
  PoolEvents(const ReplayOptions& options, int64_t start);

  // The time of the next event; none when there is none.
  std::optional<int64_t> NextTime() const;
  // Whether capacity may still come back without a job ending: a repair, a maintenance window
  // (its end follows), a spot node's return or an added node is scheduled. The replay goes on
  // while jobs wait for one.
  bool CapacityMayReturn() const;
  // The next event at `t`, removed; none when no more are due at `t`. Requires t <= every
  // event time not yet taken, as the driver's clock guarantees. Taking a rolling maintenance
  // window schedules the node's next one.
  std::optional<PoolEvent> PopAt(int64_t t);
  // Schedules a later event (a repair, a window's end, a node's return).
  void Add(const PoolEvent& event);

 private:
  // One Poisson process over `units` units (GPUs or nodes) at `rate` per 1,000,000 unit-days.
  struct Process {
    Rng rng;
    int64_t units = 0;
    int64_t rate = 0;
    int64_t next = std::numeric_limits<int64_t>::max();
  };
  // The gap to the process's next event, in whole seconds.
  static int64_t Gap(Process& p);
  // Moves every random event due by `t` into the scheduled set.
  void DrawUntil(int64_t t);
  static bool Returns(PoolEventKind kind);

  int32_t gpus_per_node_;
  int32_t first_spot_node_;
  int64_t maintenance_every_s_;
  int64_t maintenance_duration_s_;
  Process gpu_;
  Process node_;
  Process spot_;
  std::set<PoolEvent> scheduled_;
  int64_t returns_ = 0;
};

}  // namespace gpupool::sim::internal

#endif  // GPUPOOL_SRC_SIM_REPLAY_POOL_EVENTS_H_
