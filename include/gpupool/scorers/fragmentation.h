// Task classes and the FGD fragmentation measure.
//
// "Beware of Fragmentation" (Weng et al., USENIX ATC 2023) measures how fragmented a node is
// against the workload it expects: for every task class m (a distinct request shape) with
// popularity p_m, the idle GPU milli of the node that m could not use there. The measure, the
// FGD scorer and gpupool's default scorer all read the same TaskClassTable.
//
// Everything here is integer arithmetic: popularity is kept as a count, and a node's weighted
// fragmentation is the sum over classes of count x milli. Divide by TotalCount() to get milli.
#ifndef GPUPOOL_SCORERS_FRAGMENTATION_H_
#define GPUPOOL_SCORERS_FRAGMENTATION_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpupool/placement_scorer.h"
#include "gpupool/resources.h"

namespace gpupool {

// One task class: a request shape, the GPU models it accepts (empty: any) and how many pods of
// the workload have it.
struct TaskClass {
  // Only cpu_milli, gpu_milli (the whole GPU request, as in ResourceRequest) matter for the
  // measure; memory is ignored, as in FGD (memory_mib is set only in tables built with memory).
  ResourceRequest request;
  std::vector<std::string> gpu_models;
  int64_t count = 0;
};

// The popularity table of a workload: task classes in a canonical order (count descending, then
// request, then models), so that the same workload always gives the same table.
class TaskClassTable {
 public:
  TaskClassTable() = default;

  // Builds the table from the pods of a workload, one entry per distinct (cpu, gpu request, GPU
  // models); memory is not part of a class. `requests` and `models` are parallel: pod i asks for
  // requests[i] on any of models[i] (empty: any model). With `coverage_percent` below 100 only
  // the most popular classes are kept, the fewest whose pods make up at least that share of all
  // pods (FGD keeps 95%), and popularity is renormalised over them. With `with_memory`, memory is
  // part of a class (and of TaskClass::request) too. With `counts` (parallel to `requests`,
  // each >= 1), entry i stands for counts[i] identical pods (a group's replicas, say); empty:
  // one pod each.
  static TaskClassTable FromPods(std::span<const ResourceRequest> requests,
                                 std::span<const std::vector<std::string>> models,
                                 int coverage_percent = 100, bool with_memory = false,
                                 std::span<const int64_t> counts = {});

  const std::vector<TaskClass>& classes() const { return classes_; }
  // Sum of the counts of the kept classes (0 for an empty table).
  int64_t TotalCount() const { return total_count_; }

 private:
  std::vector<TaskClass> classes_;
  int64_t total_count_ = 0;
};

// How a CPU-only task class counts when it fits the node.
enum class CpuClassRule {
  // As the FGD protocol (docs/simulator.md) words it: a class that fits can use the node, so none
  // of the node's idle
  // GPU milli is fragmented for it (it needs no GPU at all).
  kFitsIsNotFragmented,
  // As the FGD simulator's code does it: every idle GPU milli counts as fragmented for a class
  // that needs no GPU, whether it fits or not.
  kAlwaysFragmented,
};

// Whether a node of model `gpu_model` is allowed for a class accepting `models` (empty: any).
bool ModelAllowed(std::span<const std::string> models, std::string_view gpu_model);

// The node's fragmentation against one class, in milli-GPUs: all idle GPU milli if the class does
// not fit the node at all (model, CPU, or not enough GPUs with room for its per-GPU share), else
// the idle milli of the GPUs whose free milli is below the class's per-GPU need.
int64_t ClassFragmentationMilli(const TaskClass& task_class, bool model_allowed,
                                int64_t free_cpu_milli, std::span<const int64_t> free_gpu_milli,
                                CpuClassRule rule);

// The node's weighted fragmentation: sum over classes of count x ClassFragmentationMilli. Divide
// by table.TotalCount() for milli-GPUs. O(classes x GPUs).
int64_t WeightedFragmentation(const TaskClassTable& table, std::string_view gpu_model,
                              int64_t free_cpu_milli, std::span<const int64_t> free_gpu_milli,
                              CpuClassRule rule);

}  // namespace gpupool

#endif  // GPUPOOL_SCORERS_FRAGMENTATION_H_
