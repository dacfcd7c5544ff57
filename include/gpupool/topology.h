// The topology tree of a pool.
//
// A pool is a tree of named levels, outermost first, for example
//   zone > block > rack > nvlink_domain
// Below the last declared level come, implicitly, the node, the NVLink islands inside a node and
// the GPUs. Each node states its path: the value it has at each declared level. Two nodes are in
// the same domain at level L when they have the same values at L and at every level above L, so
// rack "r1" of block "b1" and rack "r1" of block "b2" are different racks.
#ifndef GPUPOOL_TOPOLOGY_H_
#define GPUPOOL_TOPOLOGY_H_

#include <string>
#include <vector>

namespace gpupool {

// The declared levels of the tree above the node, outermost first. Level names are unique and
// must not be "node", "island" or "gpu", which are implicit.
struct Topology {
  std::vector<std::string> levels;
};

// One element of a node's path: the node sits in domain `value` at level `level`.
struct TopologyLabel {
  std::string level;
  std::string value;

  friend bool operator==(const TopologyLabel&, const TopologyLabel&) = default;
};

}  // namespace gpupool

#endif  // GPUPOOL_TOPOLOGY_H_
