// Built-in scorers by name.
#include <array>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "gpupool/scorers/scorers.h"

namespace gpupool {

namespace {

// The simulator's policy names. Two differ from their scorer's Name(): "best-fit" is the FGD
// paper's label for the least-leftover scorer, and "default" is the simulator's default policy,
// the expected-waste scorer. Both stay, so that `gpupool simulate --policy best-fit,default`
// and the published tables keep their meaning.
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
  if (name == "best-fit" || name == "least-leftover") return MakeLeastLeftoverScorer();
  if (name == "fgd") {
    return MakeFgdScorer(TaskClassTable::FromPods(context.requests, context.models, 95));
  }
  if (name == "default" || name == "expected-waste") {
    return MakeExpectedWasteScorer(
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
