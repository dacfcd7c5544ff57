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

// One GPU inside a node.
struct Gpu {
  // Index of the GPU inside its node (0-based, unique within the node, below 1024).
  int32_t index = 0;
  // NVLink island the GPU belongs to. GPUs of one island talk over NVLink; a DGX H100 is a single
  // island of 8, a PCIe server may have islands of 2 or of 1.
  int32_t island = 0;
  // Unhealthy GPUs receive no new work.
  bool healthy = true;
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
