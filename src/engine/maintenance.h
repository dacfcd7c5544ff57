// Maintenance windows: which node a job may start on, and when a node is expected to be empty.
//
// A node's windows (Node::maintenance, validated: ascending, without overlap) are facts the
// engine always honours. Three rules follow (docs/operations.md, "Maintenance windows and
// drains"):
//   - in a window (start <= now < end) the node takes no work, and the jobs still on it are
//     checkpointed and stopped (node_operations.h);
//   - before a window, a job starts on the node only if it is expected to end by the window's
//     start: now + its remaining estimate <= start. A job without an estimate counts as never
//     ending (unless policy.maintenance.start_without_estimate), so it avoids every node with a
//     window ahead;
//   - a node draining for its window is expected to be empty when its last job ends, or at the
//     window's start, when the jobs still there are stopped.
// The remaining estimate is runtime_estimate_s - attained_service_s (at least 0) for a running
// job, and the whole runtime_estimate_s for a pending one (a job that starts again redoes the
// work since its last checkpoint, which attained service does not tell).
#ifndef GPUPOOL_MAINTENANCE_H_
#define GPUPOOL_MAINTENANCE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "gpupool/node.h"
#include "gpupool/policy.h"
#include "snapshot_index.h"

namespace gpupool::internal {

// Remaining seconds of work as the window rules count them (above); nullopt without an estimate.
std::optional<int64_t> RemainingEstimate(const Job& job);

// The window of `node` in progress at `now` (start <= now < end), or nullptr.
const MaintenanceWindow* ActiveWindow(const Node& node, int64_t now);
// The first window that starts after `now`, or nullptr.
const MaintenanceWindow* NextWindow(const Node& node, int64_t now);
// The first window that a job starting at `now` and running `remaining` seconds (nullopt: with
// no end) would still run at the start of, or that is in progress; nullptr if none.
const MaintenanceWindow* WindowInTheWay(const Node& node, int64_t now,
                                        std::optional<int64_t> remaining);

// Host clock time a running job is expected to end: now + its remaining estimate (saturating);
// nullopt without an estimate.
std::optional<int64_t> ExpectedEnd(const Job& job, int64_t now);

// Per job and node, for the placer: may job j start on node n, as far as windows go?
class WindowGate {
 public:
  // `index` and `policy` must outlive the gate.
  WindowGate(const SnapshotIndex& index, const Policy& policy);

  // Does any node have a window that has not ended? If not, Blocks() is always false.
  bool active() const { return active_; }
  // The window that keeps job j off node n, or nullptr (always nullptr while ignoring()).
  const MaintenanceWindow* Blocking(int32_t j, int32_t n) const;
  bool Blocks(int32_t j, int32_t n) const { return active_ && Blocking(j, n) != nullptr; }
  // Does a window keep job j off some node of the pool?
  bool BlocksAnywhere(int32_t j) const;

  // While set, no window blocks anything: to ask whether windows are what keeps a job pending.
  void set_ignoring(bool ignoring) { ignoring_ = ignoring; }
  bool ignoring() const { return ignoring_; }

 private:
  const SnapshotIndex& index_;
  const Policy& policy_;
  bool active_ = false;
  bool ignoring_ = false;
  // Nodes with a window that has not ended, in topology order.
  std::vector<int32_t> nodes_with_windows_;
};

}  // namespace gpupool::internal

#endif  // GPUPOOL_MAINTENANCE_H_
