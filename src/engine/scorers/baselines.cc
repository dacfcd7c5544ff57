// The FGD paper's baseline scorers: random, dotprod, gpu-packing, gpu-clustering, best-fit.
//
// Each reproduces the integer score of the corresponding plugin of the FGD authors' simulator,
// computed here in exact integer arithmetic (their float64 expressions floor to the same integers
// away from exact bucket edges), so that ties fall where theirs fall.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "gpupool/scorers/scorers.h"
#include "scorers/internal.h"

namespace gpupool {

namespace {

// Largest node spec of the openb trace, the normaliser the FGD simulator uses.
constexpr int64_t kMaxSpecCpuMilli = 128000;
constexpr int64_t kMaxSpecGpuMilli = 8000;
constexpr int64_t kMaxNodeScore = 100;

int64_t CeilDiv(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

class RandomScorer final : public PlacementScorer {
 public:
  explicit RandomScorer(uint64_t seed) : seed_(seed) {}
  std::string_view Name() const override { return "random"; }
  int64_t Score(const NodeView& node, const ResourceRequest& request) const override {
    uint64_t h = internal::Mix64(seed_ ^ 0x72616e646f6dULL);
    h = internal::HashRequest(h, request);
    h = internal::HashNodeState(h, node);
    return static_cast<int64_t>(h >> 2);
  }

 private:
  uint64_t seed_;
};

class DotProductScorer final : public PlacementScorer {
 public:
  std::string_view Name() const override { return "dotprod"; }
  int64_t Score(const NodeView& node, const ResourceRequest& request) const override {
    // 100 x (1 - ((cpu_free x cpu) / S_cpu^2 + (gpu_free x gpu) / S_gpu^2) / 2), floored.
    // S_cpu = 16 x S_gpu, so both terms share the denominator S_cpu^2.
    const int64_t a = node.free_cpu_milli * request.cpu_milli;
    const int64_t b = node.free_gpu_milli_total * request.gpu_milli;
    const int64_t numerator = 50 * (a + 256 * b);
    return kMaxNodeScore - CeilDiv(numerator, kMaxSpecCpuMilli * kMaxSpecCpuMilli);
  }
};

class LeastLeftoverScorer final : public PlacementScorer {
 public:
  std::string_view Name() const override { return "least-leftover"; }
  int64_t Score(const NodeView& node, const ResourceRequest& request) const override {
    // 100 x (1 - 0.5 x cpu_left / S_cpu - 0.5 x gpu_left / S_gpu), floored.
    const int64_t cpu_left = node.free_cpu_milli - request.cpu_milli;
    const int64_t gpu_left = node.free_gpu_milli_total - request.gpu_milli;
    const int64_t numerator = 50 * (cpu_left + 16 * gpu_left);
    return kMaxNodeScore - CeilDiv(numerator, kMaxSpecCpuMilli);
  }
};

class GpuPackingScorer final : public PlacementScorer {
 public:
  std::string_view Name() const override { return "gpu-packing"; }
  int64_t Score(const NodeView& node, const ResourceRequest& request) const override {
    if (request.gpu_milli <= 0) return 0;
    const int64_t gpus = static_cast<int64_t>(node.free_gpu_milli.size());
    int64_t fully_free = 0;
    for (int64_t f : node.free_gpu_milli) fully_free += (f == kMilliPerGpu) ? 1 : 0;
    // Idle node: the fewer GPUs it has, the better, below every used node.
    if (fully_free == gpus) return std::max(kMaxNodeScore / 3 - fully_free, fully_free);
    // The GPUs the replica would take, the least free first.
    std::vector<int64_t> sorted(node.free_gpu_milli.begin(), node.free_gpu_milli.end());
    std::stable_sort(sorted.begin(), sorted.end());
    const int64_t per = request.MilliPerGpu();
    int64_t want = request.GpuCount();
    int64_t fully_free_used = 0;
    int64_t free_ratio_on_used = 0;
    for (int64_t f : sorted) {
      if (want == 0) break;
      if (per <= f) {
        --want;
        if (f == kMilliPerGpu) ++fully_free_used;
        free_ratio_on_used += f * 100 / kMilliPerGpu;
      }
    }
    if (want != 0) return 0;
    if (fully_free_used > 0) {
      return std::max(kMaxNodeScore / 2 - fully_free_used, kMaxNodeScore / 3);
    }
    return std::max(kMaxNodeScore - free_ratio_on_used / 10, kMaxNodeScore / 2);
  }
};

class GpuClusteringScorer final : public HistoryAwareScorer {
 public:
  std::string_view Name() const override { return "gpu-clustering"; }
  int64_t ScoreWithHistory(const NodeView& node, const NodeHistory& history,
                           const ResourceRequest& request) const override {
    const uint32_t kind = GpuRequestKindBit(request);
    if (kind == 0) return 0;
    // The fuller the node, the higher within its tier (25 points per tier).
    const int64_t fill =
        kMaxNodeScore / 4 * (kMaxSpecGpuMilli - node.free_gpu_milli_total) / kMaxSpecGpuMilli;
    const uint32_t kinds = history.gpu_request_kinds;
    if ((kinds & kind) != 0) {
      const bool only_this_kind = (kinds & ~kind) == 0;
      return fill + (only_this_kind ? kMaxNodeScore * 3 / 4 : kMaxNodeScore * 2 / 4);
    }
    return fill + (kinds == 0 ? kMaxNodeScore / 4 : 0);
  }
};

}  // namespace

uint32_t GpuRequestKindBit(const ResourceRequest& request) {
  if (request.gpu_milli <= 0) return 0;
  if (request.gpu_milli < kMilliPerGpu) return 1u;
  const int64_t count = std::min<int64_t>(request.GpuCount(), 30);
  return 1u << count;
}

int64_t HistoryAwareScorer::Score(const NodeView& node, const ResourceRequest& request) const {
  NodeHistory history;
  for (int64_t f : node.free_gpu_milli) {
    if (f > 0 && f < kMilliPerGpu) history.gpu_request_kinds |= 1u;
  }
  return ScoreWithHistory(node, history, request);
}

std::shared_ptr<const PlacementScorer> MakeRandomScorer(uint64_t seed) {
  return std::make_shared<RandomScorer>(seed);
}
std::shared_ptr<const PlacementScorer> MakeDotProductScorer() {
  return std::make_shared<DotProductScorer>();
}
std::shared_ptr<const PlacementScorer> MakeGpuPackingScorer() {
  return std::make_shared<GpuPackingScorer>();
}
std::shared_ptr<const HistoryAwareScorer> MakeGpuClusteringScorer() {
  return std::make_shared<GpuClusteringScorer>();
}
std::shared_ptr<const PlacementScorer> MakeLeastLeftoverScorer() {
  return std::make_shared<LeastLeftoverScorer>();
}

}  // namespace gpupool
