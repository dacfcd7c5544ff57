// The simulator's inputs: a cluster of nodes and a workload of pods, with readers for the Alibaba
// openb CSV files, gpupool's own trace format, and a built-in synthetic cluster and workload.
#ifndef GPUPOOL_SIM_WORKLOAD_H_
#define GPUPOOL_SIM_WORKLOAD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "gpupool/resources.h"

namespace gpupool::sim {

// A machine: `gpu_count` GPUs of one model, each of 1000 milli-GPUs, one NVLink island each.
struct SimNode {
  std::string id;
  std::string gpu_model;  // empty for a CPU-only node
  int32_t gpu_count = 0;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
};

struct Cluster {
  std::vector<SimNode> nodes;
  int64_t TotalGpuMilli() const;
};

// One pod (a single-replica job). `request.gpu_milli` is the whole GPU request: below 1000 a
// share of one GPU, else whole GPUs.
struct SimPod {
  std::string id;
  ResourceRequest request;
  // Accepted GPU models; empty: any.
  std::vector<std::string> gpu_models;
  // Arrival and run time in seconds (used by trace replay; the inflation protocol ignores them).
  int64_t arrival_s = 0;
  std::optional<int64_t> duration_s;
};

struct Workload {
  std::vector<SimPod> pods;
  int64_t TotalGpuMilli() const;
};

// Parses openb_node_list_*.csv text (columns sn,cpu_milli,memory_mib,gpu,model). `file_label` names
// the file in errors. InvalidArgument on a malformed row: "FILE:LINE: COLUMN: expected ..., got
// "VALUE"".
absl::StatusOr<Cluster> ParseOpenbNodes(std::string_view text, std::string_view file_label);
// Parses openb_pod_list_*.csv text (columns name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,
// qos,pod_phase,creation_time,deletion_time,scheduled_time). gpu_spec models are split on '|'.
absl::StatusOr<Workload> ParseOpenbPods(std::string_view text, std::string_view file_label);

// Reads a file and parses it as above, errors naming the file by its base name. NotFound when the
// file cannot be read.
absl::StatusOr<Cluster> ReadOpenbNodes(const std::string& path);
absl::StatusOr<Workload> ReadOpenbPods(const std::string& path);

// gpupool's own trace format (docs/simulator.md): a text file of comma-separated records, one per
// line; blank lines and lines starting with '#' are ignored; the first record is the header
// "gpupool-trace,1".
//   node,ID,MODEL,GPUS,CPU_MILLI,MEMORY_MIB
//   pod,ID,ARRIVAL_S,DURATION_S,GPU_MILLI,CPU_MILLI,MEMORY_MIB,MODELS
// DURATION_S is empty for a pod that never ends; MODELS is empty or models separated by '|'.
struct Trace {
  Cluster cluster;
  Workload workload;
};
absl::StatusOr<Trace> ParseTrace(std::string_view text, std::string_view file_label);
absl::StatusOr<Trace> ReadTrace(const std::string& path);
// Writes a trace in the format above (ParseTrace(WriteTrace(t)) gives t back).
std::string WriteTrace(const Trace& trace);

// The built-in cluster: the 1213 GPU nodes of openb (12 GPU models, 6212 GPUs) with the CPU and
// memory of each node type, as published in alibaba/clusterdata cluster-trace-gpu-v2023.
Cluster BuiltinCluster();
// A synthetic workload of `pods` pods whose mix follows the openb default pod list's published
// statistics: 13.3% CPU-only, 37.8% GPU-sharing (its share sizes), 48.0% one-GPU and a few 2-, 4-
// and 8-GPU pods, with CPU and memory drawn from the trace's most common shapes per class.
// Deterministic in `seed`.
Workload SyntheticWorkload(int pods, uint64_t seed);

}  // namespace gpupool::sim

#endif  // GPUPOOL_SIM_WORKLOAD_H_
