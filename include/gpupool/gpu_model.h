// GPU models: the kinds of accelerator a pool holds.
#ifndef GPUPOOL_GPU_MODEL_H_
#define GPUPOOL_GPU_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

namespace gpupool {

// Relative speed of a GPU model on one class of workload, in thousandths of a reference GPU
// (1000 = as fast as the reference). Used by heterogeneity-aware policies; ignored otherwise.
struct WorkloadSpeed {
  std::string workload_class;
  int64_t speed_milli = 1000;
};

// A GPU model such as "H100-80GB". Nodes name their model; jobs list the models they accept.
struct GpuModel {
  // Unique name; also the key that quotas and job requests use. Must not be "*".
  std::string name;
  // Memory of one GPU of this model, in MiB. Must be positive.
  int64_t memory_mib = 0;
  // Optional per-workload-class speeds.
  std::vector<WorkloadSpeed> speeds;
};

}  // namespace gpupool

#endif  // GPUPOOL_GPU_MODEL_H_
