// gpupool's default placement scorer.
//
// Starting point: FGD's idea (place where the expected fragmentation grows least), computed
// exactly in integers instead of through a 100-bucket sigmoid, so that small differences still
// decide; then a best-fit term so that among equally fragmenting nodes the fuller one is chosen.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "gpupool/scorers/scorers.h"

namespace gpupool {

namespace {

class DefaultScorer final : public PlacementScorer {
 public:
  explicit DefaultScorer(TaskClassTable table) : table_(std::move(table)) {}
  std::string_view Name() const override { return "default"; }

  int64_t Score(const NodeView& node, const ResourceRequest& request) const override {
    std::vector<int64_t> free(node.free_gpu_milli.begin(), node.free_gpu_milli.end());
    const int64_t before = Fragmentation(node, node.free_cpu_milli, free);
    // The engine's own GPU choice: a share on the GPU with the least free milli that fits, whole
    // GPUs on fully free ones.
    if (request.gpu_milli > 0 && request.gpu_milli < kMilliPerGpu) {
      int best = -1;
      for (size_t i = 0; i < free.size(); ++i) {
        if (free[i] >= request.gpu_milli && (best < 0 || free[i] < free[best])) {
          best = static_cast<int>(i);
        }
      }
      if (best >= 0) free[best] -= request.gpu_milli;
    } else {
      int64_t want = request.GpuCount();
      for (size_t i = 0; i < free.size() && want > 0; ++i) {
        if (free[i] == kMilliPerGpu) {
          free[i] = 0;
          --want;
        }
      }
    }
    const int64_t cpu_after = node.free_cpu_milli - request.cpu_milli;
    const int64_t after = Fragmentation(node, cpu_after, free);
    // Growth of fragmentation in milli-GPU x class count: lower is better.
    const int64_t growth = after - before;
    // Best fit: the share of the node left free (CPU and GPU, 0..2^20), lower is better.
    int64_t gpu_left_total = 0;
    for (int64_t f : free) gpu_left_total += f;
    const int64_t gpu_cap = static_cast<int64_t>(free.size()) * kMilliPerGpu;
    int64_t left = 0;
    if (node.cpu_milli_capacity > 0) left += (cpu_after << 19) / node.cpu_milli_capacity;
    if (gpu_cap > 0) left += (gpu_left_total << 19) / gpu_cap;
    return -growth * (int64_t{1} << 21) - left;
  }

 private:
  int64_t Fragmentation(const NodeView& node, int64_t free_cpu,
                        std::span<const int64_t> free_gpu) const {
    return WeightedFragmentation(table_, node.gpu_model, free_cpu, free_gpu,
                                 CpuClassRule::kFitsIsNotFragmented);
  }

  TaskClassTable table_;
};

}  // namespace

std::shared_ptr<const PlacementScorer> MakeDefaultScorer(TaskClassTable popularity) {
  return std::make_shared<DefaultScorer>(std::move(popularity));
}

}  // namespace gpupool
