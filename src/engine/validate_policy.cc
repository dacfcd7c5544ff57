// Policy validation (validate.h): the policy's half of stage 1.
//
// Rationale. The snapshot validator makes every later stage trust its input; a policy deserves the
// same. A negative budget used to read as "unbounded", a negative bound as "off", and unsorted
// LAS thresholds as levels nobody asked for: each a silent surprise. So every field with a
// meaningless range is refused, by name, in the order of `struct Policy`, before the cycle starts.
// Large values are not clipped (LevelDB's SanitizeOptions clips them): the int64 maximum is a
// meaningful "never", and every stage compares or saturates instead of adding.
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "fmt/core.h"
#include "gpupool/validate.h"
#include "internal/check.h"

namespace gpupool {
namespace {

absl::Status NotNegative(int64_t value, std::string_view field) {
  if (value >= 0) return absl::OkStatus();
  return absl::InvalidArgumentError(fmt::format("policy.{}: must be >= 0", field));
}

absl::Status UnknownValue(std::string_view field, int value) {
  return absl::InvalidArgumentError(fmt::format("policy.{}: unknown value {}", field, value));
}

absl::Status CheckLasThresholds(const std::vector<int64_t>& thresholds) {
  for (size_t i = 0; i < thresholds.size(); ++i) {
    const int64_t threshold = thresholds[i];
    if (threshold < 0) {
      return absl::InvalidArgumentError(
          fmt::format("policy.las_thresholds_gpu_seconds[{}]: must be >= 0", i));
    }
    if (i > 0 && threshold <= thresholds[i - 1]) {
      return absl::InvalidArgumentError(
          fmt::format("policy.las_thresholds_gpu_seconds[{}]: {} is not above the threshold "
                      "before it, {} (thresholds must be strictly ascending)",
                      i, threshold, thresholds[i - 1]));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckHeadroom(const std::vector<HeadroomRule>& rules) {
  for (size_t i = 0; i < rules.size(); ++i) {
    const HeadroomRule& rule = rules[i];
    if (rule.gpu_model.empty()) {
      return absl::InvalidArgumentError(
          fmt::format("policy.headroom[{}].gpu_model: must not be empty", i));
    }
    switch (rule.shape) {
      case HeadroomShape::kGpus:
      case HeadroomShape::kNodes:
      case HeadroomShape::kIslands:
        break;
      default:
        return absl::InvalidArgumentError(fmt::format("policy.headroom[{}].shape: unknown value {}",
                                                      i, static_cast<int>(rule.shape)));
    }
    if (rule.count < 1) {
      return absl::InvalidArgumentError(
          fmt::format("policy.headroom[{}].count: must be >= 1 ({} {} kept free for {})", i,
                      rule.count, HeadroomShapeName(rule.shape), rule.gpu_model));
    }
    for (size_t k = 0; k < i; ++k) {
      if (rules[k].gpu_model == rule.gpu_model && rules[k].shape == rule.shape) {
        return absl::InvalidArgumentError(fmt::format(
            "policy.headroom[{}]: a second rule for {} in {} (the first is headroom[{}]); keep "
            "one rule per model and shape",
            i, rule.gpu_model, HeadroomShapeName(rule.shape), k));
      }
    }
  }
  return absl::OkStatus();
}

// The snapshot-free rules of the scale object; the template nodes against the snapshot are
// ValidateScaleTemplates()'s.
absl::Status CheckScale(const ScaleOptions& scale) {
  GPUPOOL_RETURN_IF_ERROR(NotNegative(scale.max_simulations, "scale.max_simulations"));
  std::set<std::string_view> names;
  for (size_t i = 0; i < scale.templates.size(); ++i) {
    const NodeTemplate& t = scale.templates[i];
    const std::string field = fmt::format("scale.templates[{}]", i);
    if (t.name.empty()) {
      return absl::InvalidArgumentError(fmt::format("policy.{}.name: must not be empty", field));
    }
    if (!names.insert(t.name).second) {
      return absl::InvalidArgumentError(
          fmt::format("policy.{}.name: duplicate template name \"{}\"", field, t.name));
    }
    if (!t.node.id.empty()) {
      return absl::InvalidArgumentError(fmt::format(
          "policy.{}.node.id: must be empty (the host names the nodes it adds)", field));
    }
    if (t.node.state != NodeState::kReady) {
      return absl::InvalidArgumentError(
          fmt::format("policy.{}.node.state: must be ready (a template node that takes no work "
                      "is never advised)",
                      field));
    }
    if (t.max_count < 0) {
      return absl::InvalidArgumentError(fmt::format("policy.{}.max_count: must be >= 0", field));
    }
    GPUPOOL_RETURN_IF_ERROR(NotNegative(t.cost_per_hour_micro, field + ".cost_per_hour"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateScaleTemplates(const Snapshot& snapshot, const Policy& policy) {
  if (!policy.scale) return absl::OkStatus();
  // The template's node, alone in a snapshot with the pool's levels, models and queues, is
  // checked by the snapshot's own rules; the error is renamed from the node to the template.
  static constexpr std::string_view kProbeId = "template";
  Snapshot probe;
  probe.topology = snapshot.topology;
  probe.gpu_models = snapshot.gpu_models;
  probe.queues = snapshot.queues;
  for (size_t i = 0; i < policy.scale->templates.size(); ++i) {
    const std::string field = fmt::format("policy.scale.templates[{}].node", i);
    probe.nodes.assign(1, policy.scale->templates[i].node);
    probe.nodes[0].id = std::string(kProbeId);
    absl::Status status = ValidateSnapshot(probe);
    if (status.ok()) continue;
    std::string message(status.message());
    const std::string prefix = fmt::format("nodes[{}]", kProbeId);
    if (message.compare(0, prefix.size(), prefix) == 0) {
      message = field + message.substr(prefix.size());
    } else {
      message = field + ": " + message;
    }
    return absl::Status(status.code(), message);
  }
  return absl::OkStatus();
}

absl::Status ValidatePolicy(const Policy& policy) {
  switch (policy.placement) {
    case PlacementStrategy::kBestFit:
    case PlacementStrategy::kFirstFit:
    case PlacementStrategy::kSpread:
    case PlacementStrategy::kExpectedWaste:
      break;
    default:
      return UnknownValue("placement", static_cast<int>(policy.placement));
  }
  switch (policy.job_order) {
    case JobOrder::kPriorityFifo:
    case JobOrder::kLeastAttainedService:
    case JobOrder::kShortestRemaining:
      break;
    default:
      return UnknownValue("job_order", static_cast<int>(policy.job_order));
  }
  GPUPOOL_RETURN_IF_ERROR(CheckLasThresholds(policy.las_thresholds_gpu_seconds));
  GPUPOOL_RETURN_IF_ERROR(NotNegative(policy.starvation_bound_s, "starvation_bound_s"));
  switch (policy.queue_order) {
    case QueueOrder::kNone:
    case QueueOrder::kFairShare:
      break;
    default:
      return UnknownValue("queue_order", static_cast<int>(policy.queue_order));
  }
  GPUPOOL_RETURN_IF_ERROR(
      NotNegative(policy.fair_share.usage_half_life_s, "fair_share.usage_half_life_s"));
  switch (policy.fair_share.gpu_hour_budgets) {
    case BudgetEnforcement::kEnforce:
    case BudgetEnforcement::kReportOnly:
      break;
    default:
      return UnknownValue("fair_share.gpu_hour_budgets",
                          static_cast<int>(policy.fair_share.gpu_hour_budgets));
  }

  const PreemptionOptions& preemption = policy.preemption;
  GPUPOOL_RETURN_IF_ERROR(
      NotNegative(preemption.checkpoint_grace_s, "preemption.checkpoint_grace_s"));
  switch (preemption.victim_order) {
    case VictimOrder::kCheapestFirst:
    case VictimOrder::kLowestPriorityFirst:
      break;
    default:
      return UnknownValue("preemption.victim_order", static_cast<int>(preemption.victim_order));
  }
  GPUPOOL_RETURN_IF_ERROR(
      NotNegative(preemption.max_victim_lost_s, "preemption.max_victim_lost_s"));
  GPUPOOL_RETURN_IF_ERROR(NotNegative(preemption.min_victim_run_s, "preemption.min_victim_run_s"));
  GPUPOOL_RETURN_IF_ERROR(
      NotNegative(preemption.drain_blocked_jobs, "preemption.drain_blocked_jobs"));
  GPUPOOL_RETURN_IF_ERROR(
      NotNegative(preemption.take_back_from_gpus, "preemption.take_back_from_gpus"));
  GPUPOOL_RETURN_IF_ERROR(
      NotNegative(preemption.take_back_after_s, "preemption.take_back_after_s"));
  GPUPOOL_RETURN_IF_ERROR(
      NotNegative(preemption.victim_remaining_percent, "preemption.victim_remaining_percent"));
  GPUPOOL_RETURN_IF_ERROR(
      NotNegative(preemption.victim_remaining_max_gap, "preemption.victim_remaining_max_gap"));

  const HealthOptions& health = policy.health;
  GPUPOOL_RETURN_IF_ERROR(NotNegative(health.xid_errors_to_cordon, "health.xid_errors_to_cordon"));
  GPUPOOL_RETURN_IF_ERROR(NotNegative(health.ecc_errors_to_cordon, "health.ecc_errors_to_cordon"));
  GPUPOOL_RETURN_IF_ERROR(
      NotNegative(health.diagnostic_interval_s, "health.diagnostic_interval_s"));
  GPUPOOL_RETURN_IF_ERROR(
      NotNegative(health.diagnostic_idle_window_s, "health.diagnostic_idle_window_s"));
  GPUPOOL_RETURN_IF_ERROR(NotNegative(health.max_diagnosing_nodes, "health.max_diagnosing_nodes"));
  GPUPOOL_RETURN_IF_ERROR(
      NotNegative(policy.maintenance.drain_notice_s, "maintenance.drain_notice_s"));

  const Budgets& budgets = policy.budgets;
  GPUPOOL_RETURN_IF_ERROR(NotNegative(budgets.max_candidates, "budgets.max_candidates"));
  GPUPOOL_RETURN_IF_ERROR(
      NotNegative(budgets.max_preemption_plans, "budgets.max_preemption_plans"));
  GPUPOOL_RETURN_IF_ERROR(
      NotNegative(budgets.max_counterfactual_plans, "budgets.max_counterfactual_plans"));

  const BackfillOptions& backfill = policy.backfill;
  GPUPOOL_RETURN_IF_ERROR(NotNegative(backfill.reservations, "backfill.reservations"));
  GPUPOOL_RETURN_IF_ERROR(NotNegative(backfill.margin_s, "backfill.margin_s"));
  switch (backfill.overrun) {
    case OverrunAction::kWait:
    case OverrunAction::kPreempt:
      break;
    default:
      return UnknownValue("backfill.overrun", static_cast<int>(backfill.overrun));
  }

  const ConsolidationOptions& consolidation = policy.consolidation;
  if (consolidation.gain_factor < 1) {
    return absl::InvalidArgumentError(fmt::format(
        "policy.consolidation.gain_factor: must be >= 1, got {}", consolidation.gain_factor));
  }
  if (consolidation.max_moves < 1) {
    return absl::InvalidArgumentError(fmt::format(
        "policy.consolidation.max_moves: must be >= 1, got {}", consolidation.max_moves));
  }
  GPUPOOL_RETURN_IF_ERROR(NotNegative(consolidation.max_plans, "consolidation.max_plans"));
  if (policy.scale) GPUPOOL_RETURN_IF_ERROR(CheckScale(*policy.scale));
  GPUPOOL_RETURN_IF_ERROR(CheckHeadroom(policy.headroom));
  return NotNegative(policy.spot.max_checkpoint_interval_s, "spot.max_checkpoint_interval_s");
}

}  // namespace gpupool
