// Helpers shared by the built-in scorers (not API).
#ifndef GPUPOOL_SRC_SCORERS_INTERNAL_H_
#define GPUPOOL_SRC_SCORERS_INTERNAL_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "gpupool/placement_scorer.h"
#include "gpupool/resources.h"
#include "internal/hash.h"

namespace gpupool::internal {

// Folds `v` into `h`, mixing `v` first (scores of the random scorer depend on these exact
// values, so this is kept apart from HashCombine).
inline uint64_t Combine(uint64_t h, uint64_t v) { return Mix64(h ^ Mix64(v)); }

inline uint64_t HashRequest(uint64_t h, const ResourceRequest& r) {
  h = Combine(h, static_cast<uint64_t>(r.gpu_milli));
  h = Combine(h, static_cast<uint64_t>(r.cpu_milli));
  h = Combine(h, static_cast<uint64_t>(r.memory_mib));
  return Combine(h, static_cast<uint64_t>(r.gpu_memory_mib));
}

// Hash of what a node's state is, independent of the order of its GPUs.
inline uint64_t HashNodeState(uint64_t h, const NodeView& node) {
  for (char c : node.gpu_model) h = Combine(h, static_cast<unsigned char>(c));
  h = Combine(h, static_cast<uint64_t>(node.free_cpu_milli));
  h = Combine(h, static_cast<uint64_t>(node.free_memory_mib));
  h = Combine(h, static_cast<uint64_t>(node.cpu_milli_capacity));
  h = Combine(h, static_cast<uint64_t>(node.memory_mib_capacity));
  std::vector<int64_t> sorted(node.free_gpu_milli.begin(), node.free_gpu_milli.end());
  std::sort(sorted.begin(), sorted.end());
  for (int64_t f : sorted) h = Combine(h, static_cast<uint64_t>(f));
  return h;
}

}  // namespace gpupool::internal

#endif  // GPUPOOL_SRC_SCORERS_INTERNAL_H_
