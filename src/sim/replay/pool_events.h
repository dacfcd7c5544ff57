// The replay's pool events: what happens to the pool itself rather than to a job. Today GPU and
// node failures and their repairs (ReplayOptions::failures); the kinds are an ordered list so
// that another one (a node going down for maintenance and coming back, a node added or removed)
// is a new kind here, a new source of events in PoolEvents and a new case in the handler
// (failures.h).
//
//   PoolHealth  which GPUs and nodes are out of service (the state the snapshots show)
//   PoolEvents  the timeline: the two seeded Poisson processes of failures, the injected
//               failures and the scheduled repairs, in (time, kind, node, GPU) order
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
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "gpupool/sim/replay.h"
#include "gpupool/sim/rng.h"

namespace gpupool::sim::internal {

// In the order events of one second are handled: repairs before failures, so that a GPU
// repaired and failing again in one second is out of service afterwards.
enum class PoolEventKind {
  kNodeRepaired = 0,
  kGpuRepaired = 1,
  kNodeFails = 2,
  kGpuFails = 3,
};

struct PoolEvent {
  int64_t time = 0;
  PoolEventKind kind = PoolEventKind::kGpuFails;
  int32_t node = 0;
  // -1 for the node events.
  int32_t gpu = -1;

  friend bool operator<(const PoolEvent& a, const PoolEvent& b) {
    return std::tie(a.time, a.kind, a.node, a.gpu) < std::tie(b.time, b.kind, b.node, b.gpu);
  }
};

// Which GPUs and nodes of the pool are out of service. A GPU is usable when it has not failed
// and its node is up; a node's GPUs keep their own repairs while the node is down.
class PoolHealth {
 public:
  explicit PoolHealth(const ReplayPool& pool);

  bool NodeDown(int32_t node) const { return down_[static_cast<size_t>(node)]; }
  bool GpuFailed(int32_t node, int32_t gpu) const { return failed_[Index(node, gpu)]; }
  // Transitions; each returns false (and changes nothing) when it does not apply: a failure of
  // a GPU or node already out of service, a repair of one that is not.
  bool FailGpu(int32_t node, int32_t gpu);
  bool RepairGpu(int32_t node, int32_t gpu);
  bool FailNode(int32_t node);
  bool RepairNode(int32_t node);

  // GPUs out of service (failed, or on a node that is down, each counted once) and nodes down.
  int64_t unusable_gpus() const { return unusable_gpus_; }
  int64_t nodes_down() const { return nodes_down_; }

 private:
  size_t Index(int32_t node, int32_t gpu) const {
    return static_cast<size_t>(node) * static_cast<size_t>(gpus_per_node_) +
           static_cast<size_t>(gpu);
  }
  // GPUs of `node` out of service.
  int64_t Unusable(int32_t node) const;

  int32_t gpus_per_node_;
  std::vector<bool> down_;
  std::vector<bool> failed_;
  std::vector<int32_t> failed_on_node_;
  int64_t unusable_gpus_ = 0;
  int64_t nodes_down_ = 0;
};

// InvalidArgument naming the field when `options.failures` is out of range (replay.h), given the
// first arrival `start`.
absl::Status ValidateFailures(const ReplayOptions& options, int64_t start);

class PoolEvents {
 public:
  // The failures of `options.failures` from `start` (the first arrival) on. Empty when failures
  // are off.
  PoolEvents(const ReplayOptions& options, int64_t start);

  // The time of the next event; none when there is none (failures off, nothing scheduled).
  std::optional<int64_t> NextTime() const;
  // Whether a repair is scheduled (the replay goes on while jobs wait for one).
  bool RepairPending() const;
  // The next event at `t`, removed; none when no more are due at `t`. Requires t <= every
  // event time not yet taken, as the driver's clock guarantees.
  std::optional<PoolEvent> PopAt(int64_t t);
  // Schedules a later event (a repair).
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

  int32_t gpus_per_node_;
  Process gpu_;
  Process node_;
  std::set<PoolEvent> scheduled_;
  int64_t repairs_ = 0;
};

}  // namespace gpupool::sim::internal

#endif  // GPUPOOL_SRC_SIM_REPLAY_POOL_EVENTS_H_
