// Scaling the replay's pool from the engine's advice (scale.h).
#include "sim/replay/scale.h"

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace gpupool::sim::internal {

Scaler::Scaler(const ReplayOptions& options, const PoolLayout& layout, const Node& added_node)
    : options_(options), layout_(layout), policy_(options.policy) {
  // The replay reads no pending job's explanation: its cycles ask for none (the same decisions).
  policy_.budgets.max_counterfactual_plans = 0;
  with_scale_ = policy_;
  if (!options.scaling.enabled()) return;
  with_scale_.scale = ScaleOptions{
      .templates = {NodeTemplate{.name = "node",
                                 .node = added_node,
                                 .max_count = 0,
                                 .cost_per_hour_micro = options.scaling.cost_per_hour_micro}},
      .max_simulations = options.scaling.max_simulations};
}

bool Scaler::AdviceDue(int64_t now) const {
  return options_.scaling.enabled() && (last_advice_ == std::numeric_limits<int64_t>::min() ||
                                        now - last_advice_ >= options_.scaling.advice_every_s);
}

bool Scaler::WantsCycle(int64_t now, const PoolHealth& health) const {
  return AdviceDue(now) && health.added_in_pool() > 0;
}

const Policy& Scaler::PolicyAt(int64_t now, const PoolHealth& health) {
  asked_ = AdviceDue(now);
  if (!asked_) return policy_;
  last_advice_ = now;
  with_scale_.scale->templates.front().max_count =
      static_cast<int32_t>(options_.scaling.max_nodes - health.added_in_pool());
  return with_scale_;
}

absl::Status Scaler::Apply(const Decisions& decisions, int64_t now, const ReplayTargets& t) {
  if (!asked_) return absl::OkStatus();
  asked_ = false;
  if (!decisions.scale_advice.has_value()) {
    return absl::InternalError("a cycle that asked for scale advice got none");
  }
  const ScaleAdvice& advice = *decisions.scale_advice;
  t.metrics.ScaleAdviceTaken();
  int64_t wanted = 0;
  for (const ScaleAdd& add : advice.add) {
    if (add.template_name != "node") {
      return absl::InternalError(fmt::format("scale advice names template {}", add.template_name));
    }
    wanted += add.count;
  }
  // The nodes on their way count toward the advice.
  int64_t to_order = wanted - t.health.ordered();
  for (int32_t n = layout_.own_nodes; n < layout_.all_nodes() && to_order > 0; ++n) {
    if (!t.health.Order(n)) continue;
    --to_order;
    t.metrics.NodeOrdered();
    t.pool_events.Add(PoolEvent{.time = now + options_.scaling.provision_s,
                                .kind = PoolEventKind::kNodeProvisioned,
                                .node = n});
  }
  for (const std::string& id : advice.release) {
    const std::optional<int32_t> node = NodeIndex(id, layout_.all_nodes());
    if (!node) return absl::InternalError(fmt::format("scale advice releases unknown node {}", id));
    const int32_t n = *node;
    if (!layout_.IsAdded(n) || JobsOn(n, t.state)) continue;
    if (!t.health.Release(n)) continue;
    t.metrics.NodeReleased();
    t.state.SetOutOfService(t.health.unusable_gpus(), t.health.nodes_down());
    t.cycle.UpdateNode(n, t.health);
  }
  return absl::OkStatus();
}

}  // namespace gpupool::sim::internal
