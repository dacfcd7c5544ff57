// Nodes: the machines of the pool and the GPUs inside them.
#ifndef GPUPOOL_NODE_H_
#define GPUPOOL_NODE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpupool/topology.h"

namespace gpupool {

// The lifecycle state of a node. Only kReady nodes receive new work; running work on a node in
// another state stays where it is.
enum class NodeState {
  kReady,     // accepts new work
  kCordoned,  // keeps its work, accepts nothing new
  kDraining,  // its work is being moved away; accepts nothing new
  kDown,      // unreachable or failed
};

// Why a node that is not ready is so. The engine changes the state only of the nodes it put there
// itself (docs/operations.md): a host that applies a node action (ApplyDecisions) records the
// cause with the state; every other state is the host's or an operator's and stays as it is.
enum class NodeStateCause {
  kHost,         // default: set by the host or an operator
  kHealth,       // cordoned by a health rule (NodeAction::kCordon)
  kDiagnostic,   // cordoned to run its diagnostic (NodeAction::kDiagnose)
  kMaintenance,  // draining for a maintenance window (NodeAction::kDrain)
};

// A maintenance window of a node, in host clock seconds: the node takes no work in
// [start, end), and the jobs still on it at `start` are checkpointed and stopped.
struct MaintenanceWindow {
  int64_t start = 0;
  int64_t end = 0;

  friend bool operator==(const MaintenanceWindow&, const MaintenanceWindow&) = default;
};

// The outcome of a node's last diagnostic (for example DCGM diagnostics level 3).
struct DiagnosticRun {
  // Host clock time the diagnostic finished.
  int64_t time = 0;
  bool passed = true;

  friend bool operator==(const DiagnosticRun&, const DiagnosticRun&) = default;
};

// One GPU inside a node.
struct Gpu {
  // Index of the GPU inside its node (0-based, unique within the node, below 1024).
  int32_t index = 0;
  // NVLink island the GPU belongs to. GPUs of one island talk over NVLink; a DGX H100 is a single
  // island of 8, a PCIe server may have islands of 2 or of 1.
  int32_t island = 0;
  // Unhealthy GPUs receive no new work. A GPU that has failed is unhealthy; with the policy's
  // health rules on, the jobs still running on it are checkpointed and stopped.
  bool healthy = true;
  // Error counts the host collected since `errors_since` (unset: since the host started
  // counting): XID errors reported by the driver, and uncorrectable ECC errors. The policy's
  // health rules cordon a node when a GPU reaches a threshold. The host resets them (for example
  // after a repair); the engine only reads them.
  int64_t xid_errors = 0;
  int64_t ecc_errors = 0;
  std::optional<int64_t> errors_since;
};

// A machine with GPUs of one model (or none: a CPU-only node).
struct Node {
  // Unique id.
  std::string id;
  // Name of the node's GPU model; must name a GpuModel of the snapshot when the node has GPUs,
  // and may be empty for a CPU-only node.
  std::string gpu_model;
  // The node's GPUs. Indices unique.
  std::vector<Gpu> gpus;
  // Allocatable CPU (milli-cores) and memory (MiB).
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  // Where the node sits in the topology tree: one label per declared level at most. A node that
  // omits a level belongs to no domain at that level, so gang constraints at that level exclude it.
  std::vector<TopologyLabel> path;
  // Free-form labels (key=value), carried through for hosts and policies.
  std::vector<TopologyLabel> labels;
  NodeState state = NodeState::kReady;
  // If not empty, only jobs of these queues (or of queues below them) may be placed here.
  std::vector<std::string> owner_queues;
  // Maintenance windows, in ascending order and without overlap (each starts at or after the end
  // of the one before). A job that would still run at a window's start does not start here.
  std::vector<MaintenanceWindow> maintenance;
  // The node's last diagnostic, if the host ran one.
  std::optional<DiagnosticRun> last_diagnostic;
  // Who put the node in its state (kHost unless the engine did); never kHealth, kDiagnostic or
  // kMaintenance on a ready node.
  NodeStateCause state_cause = NodeStateCause::kHost;
  // Spot capacity (docs/operations.md, "Spot nodes"): cheaper, but the provider may take it back
  // at short notice. A spot node takes only jobs that may lose it: spot_tolerant jobs, or
  // preemptible jobs that checkpoint at least every Policy::spot.max_checkpoint_interval_s.
  bool spot = false;
  // The provider is taking this spot node back (requires `spot`): it takes no new work, and the
  // jobs on it are checkpointed and stopped (a Preempt decision each) and started elsewhere in the
  // same cycle when they fit.
  bool reclaiming = false;
  // Host clock time at which the provider takes the node (requires `reclaiming`; unset: unknown,
  // taken to be now). A job whose checkpoint_cost_s fits before it checkpoints on demand and
  // loses only that cost.
  std::optional<int64_t> reclaim_deadline;
};

}  // namespace gpupool

#endif  // GPUPOOL_NODE_H_
