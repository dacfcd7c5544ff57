// Built-in scorers by name.
#include <array>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "gpupool/scorers/scorers.h"

namespace gpupool {

namespace {

constexpr std::array<std::string_view, 7> kNames = {
    "random", "dotprod", "gpu-packing", "gpu-clustering", "best-fit", "fgd", "default"};

}  // namespace

std::span<const std::string_view> BuiltinScorerNames() { return kNames; }

absl::StatusOr<std::shared_ptr<const PlacementScorer>> MakeScorerByName(
    std::string_view name, const ScorerContext& context) {
  if (name == "random") return MakeRandomScorer(context.seed);
  if (name == "dotprod") return MakeDotProductScorer();
  if (name == "gpu-packing") return MakeGpuPackingScorer();
  if (name == "gpu-clustering") {
    return std::shared_ptr<const PlacementScorer>(MakeGpuClusteringScorer());
  }
  if (name == "best-fit") return MakeBestFitScorer();
  if (name == "fgd") {
    return MakeFgdScorer(TaskClassTable::FromPods(context.requests, context.models, 95));
  }
  if (name == "default") {
    return MakeDefaultScorer(
        TaskClassTable::FromPods(context.requests, context.models, 100, /*with_memory=*/true));
  }
  std::string known;
  for (std::string_view n : kNames) {
    if (!known.empty()) known += ", ";
    known += n;
  }
  return absl::InvalidArgumentError("unknown placement scorer \"" + std::string(name) +
                                    "\"; known: " + known);
}

}  // namespace gpupool
