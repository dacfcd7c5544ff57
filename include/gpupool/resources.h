// Integer resource quantities.
//
// Every quantity in gpupool is an integer in a fixed unit, so that arithmetic is exact and
// results are identical on every machine:
//   - GPU capacity in milli-GPUs: 1000 is one whole GPU, 250 a quarter of one.
//   - GPU memory and host memory in MiB.
//   - CPU in milli-cores.
//   - Time in whole seconds on the host's clock.
#ifndef GPUPOOL_RESOURCES_H_
#define GPUPOOL_RESOURCES_H_

#include <cstdint>

namespace gpupool {

// One whole GPU, in milli-GPUs.
inline constexpr int64_t kMilliPerGpu = 1000;

// The largest value any single quantity in a snapshot may take. Validation refuses larger values,
// so that sums over a whole snapshot (10^6 jobs x 10^12) cannot overflow int64.
inline constexpr int64_t kMaxQuantity = int64_t{1} << 40;

// What one replica of a task group asks for.
//
// `gpu_milli` is the replica's whole GPU request: below 1000 it is a share of a single GPU (a
// GPU-sharing replica); from 1000 up it must be a multiple of 1000 and asks for that many whole
// GPUs, all on one node. 0 means a CPU-only replica.
// `gpu_memory_mib` is the GPU memory needed on each GPU the replica uses (0: no constraint beyond
// the GPU itself; a whole GPU brings all of its memory).
struct ResourceRequest {
  int64_t gpu_milli = 0;
  int64_t gpu_memory_mib = 0;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;

  // Number of GPUs the replica occupies (0, 1 for a share, or gpu_milli / 1000).
  int64_t GpuCount() const {
    if (gpu_milli <= 0) return 0;
    if (gpu_milli < kMilliPerGpu) return 1;
    return gpu_milli / kMilliPerGpu;
  }
  // Milli-GPUs taken on each GPU used (the share, or 1000 for whole GPUs).
  int64_t MilliPerGpu() const { return gpu_milli < kMilliPerGpu ? gpu_milli : kMilliPerGpu; }

  friend bool operator==(const ResourceRequest&, const ResourceRequest&) = default;
};

}  // namespace gpupool

#endif  // GPUPOOL_RESOURCES_H_
