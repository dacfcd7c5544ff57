// FGD: Fragmentation Gradient Descent (Weng et al., USENIX ATC 2023), as its authors' simulator
// scores it.
//
// A node's fragmentation is the popularity-weighted idle GPU milli that each task class could not
// use there (fragmentation.h; their code counts every idle milli as fragmented for classes that
// need no GPU). The score of a placement is floor(100 x sigmoid(decrease / 1000)) where decrease
// is the node's fragmentation before minus after, in milli-GPUs. For a sharing pod every GPU that
// fits is tried and the best one is both the node's score and the GPU the pod goes to (first
// index on equal scores); whole-GPU pods take the lowest-index fully free GPUs.
#include <cmath>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "gpupool/scorers/scorers.h"

namespace gpupool {

namespace {

class FgdScorer final : public PlacementScorer, public GpuSelectingScorer {
 public:
  explicit FgdScorer(TaskClassTable table) : table_(std::move(table)) {}
  std::string_view Name() const override { return "fgd"; }

  int64_t Score(const NodeView& node, const ResourceRequest& request) const override {
    int64_t best = 0;
    Evaluate(node, request, &best);
    return best;
  }

  int32_t SelectSharedGpu(const NodeView& node, const ResourceRequest& request) const override {
    int64_t best = 0;
    return Evaluate(node, request, &best);
  }

 private:
  int64_t Fragmentation(const NodeView& node, int64_t free_cpu,
                        std::span<const int64_t> free_gpu) const {
    return WeightedFragmentation(table_, node.gpu_model, free_cpu, free_gpu,
                                 CpuClassRule::kAlwaysFragmented);
  }

  int64_t Quantize(int64_t weighted_decrease) const {
    if (table_.TotalCount() == 0) return kMaxScore / 2;
    const double decrease_milli =
        static_cast<double>(weighted_decrease) / static_cast<double>(table_.TotalCount());
    const double sigmoid = 1.0 / (1.0 + std::exp(-decrease_milli / 1000.0));
    return static_cast<int64_t>(sigmoid * static_cast<double>(kMaxScore));
  }

  // Scores the placement; returns the GPU a sharing pod would take (-1 otherwise).
  int32_t Evaluate(const NodeView& node, const ResourceRequest& request, int64_t* score) const {
    std::vector<int64_t> free(node.free_gpu_milli.begin(), node.free_gpu_milli.end());
    const int64_t before = Fragmentation(node, node.free_cpu_milli, free);
    const int64_t cpu_after = node.free_cpu_milli - request.cpu_milli;
    if (request.gpu_milli > 0 && request.gpu_milli < kMilliPerGpu) {
      int32_t chosen = -1;
      for (size_t i = 0; i < free.size(); ++i) {
        if (free[i] < request.gpu_milli) continue;
        free[i] -= request.gpu_milli;
        const int64_t q = Quantize(before - Fragmentation(node, cpu_after, free));
        free[i] += request.gpu_milli;
        if (chosen < 0 || q > *score) {
          *score = q;
          chosen = static_cast<int32_t>(i);
        }
      }
      return chosen;
    }
    int64_t want = request.GpuCount();
    for (size_t i = 0; i < free.size() && want > 0; ++i) {
      if (free[i] == kMilliPerGpu) {
        free[i] = 0;
        --want;
      }
    }
    *score = Quantize(before - Fragmentation(node, cpu_after, free));
    return -1;
  }

  static constexpr int64_t kMaxScore = 100;
  TaskClassTable table_;
};

}  // namespace

std::shared_ptr<const PlacementScorer> MakeFgdScorer(TaskClassTable popularity) {
  return std::make_shared<FgdScorer>(std::move(popularity));
}

}  // namespace gpupool
