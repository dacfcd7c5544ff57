// ParsePolicy(): the strict reader of policy documents. Each table pairs a key with the reader
// of its value; docs/policy-format.md lists the same keys.
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gpupool/io/json.h"
#include "io/enum_names.h"
#include "io/json_reader.h"

namespace gpupool::io {
namespace {

using internal::Field;
using internal::JsonValue;
using internal::Path;
using internal::ReadBool;
using internal::ReadEnumOf;
using internal::ReadInt32;
using internal::ReadInt64;
using internal::ReadMember;
using internal::ReadString;

absl::Status ReadBudgets(JsonValue value, const Path& path, Budgets& out) {
  static constexpr Field<Budgets> kFields[] = {
      {"max_candidates", ReadMember<&Budgets::max_candidates, ReadInt64>},
      {"max_preemption_plans", ReadMember<&Budgets::max_preemption_plans, ReadInt64>},
      {"max_counterfactual_plans", ReadMember<&Budgets::max_counterfactual_plans, ReadInt64>},
  };
  return internal::ReadFields(value, path, kFields, out);
}

absl::Status ReadPreemption(JsonValue value, const Path& path, PreemptionOptions& out) {
  using P = PreemptionOptions;
  static constexpr Field<P> kFields[] = {
      {"enabled", ReadMember<&P::enabled, ReadBool>},
      {"checkpoint_grace_s", ReadMember<&P::checkpoint_grace_s, ReadInt64>},
      {"reclaim_across_queues", ReadMember<&P::reclaim_across_queues, ReadBool>},
      {"victim_order",
       ReadMember<&P::victim_order,
                  ReadEnumOf<internal::ParseVictimOrder, internal::VictimOrderNames>>},
      {"max_victim_lost_s", ReadMember<&P::max_victim_lost_s, ReadInt64>},
      {"min_victim_run_s", ReadMember<&P::min_victim_run_s, ReadInt64>},
      {"reclaim_lower_priority_only", ReadMember<&P::reclaim_lower_priority_only, ReadBool>},
      {"starving_outrank", ReadMember<&P::starving_outrank, ReadBool>},
      {"starving_drain", ReadMember<&P::starving_drain, ReadBool>},
      {"starving_drain_past_min_runtime",
       ReadMember<&P::starving_drain_past_min_runtime, ReadBool>},
      {"drain_blocked_jobs", ReadMember<&P::drain_blocked_jobs, ReadInt64>},
      {"take_back_from_gpus", ReadMember<&P::take_back_from_gpus, ReadInt64>},
      {"take_back_after_s", ReadMember<&P::take_back_after_s, ReadInt64>},
      {"victim_remaining_percent", ReadMember<&P::victim_remaining_percent, ReadInt64>},
      {"victim_remaining_max_gap", ReadMember<&P::victim_remaining_max_gap, ReadInt64>},
  };
  return internal::ReadFields(value, path, kFields, out);
}

absl::Status ReadBackfill(JsonValue value, const Path& path, BackfillOptions& out) {
  using B = BackfillOptions;
  static constexpr Field<B> kFields[] = {
      {"enabled", ReadMember<&B::enabled, ReadBool>},
      {"reservations", ReadMember<&B::reservations, ReadInt64>},
      {"margin_s", ReadMember<&B::margin_s, ReadInt64>},
      {"overrun",
       ReadMember<&B::overrun,
                  ReadEnumOf<internal::ParseOverrunAction, internal::OverrunActionNames>>},
  };
  return internal::ReadFields(value, path, kFields, out);
}

absl::Status ReadConsolidation(JsonValue value, const Path& path, ConsolidationOptions& out) {
  using C = ConsolidationOptions;
  static constexpr Field<C> kFields[] = {
      {"enabled", ReadMember<&C::enabled, ReadBool>},
      {"gain_factor", ReadMember<&C::gain_factor, ReadInt64>},
      {"max_moves", ReadMember<&C::max_moves, ReadInt64>},
      {"max_plans", ReadMember<&C::max_plans, ReadInt64>},
  };
  return internal::ReadFields(value, path, kFields, out);
}

absl::Status ReadFairShare(JsonValue value, const Path& path, FairShareOptions& out) {
  static constexpr Field<FairShareOptions> kFields[] = {
      {"usage_half_life_s", ReadMember<&FairShareOptions::usage_half_life_s, ReadInt64>},
      {"gpu_hour_budgets",
       ReadMember<&FairShareOptions::gpu_hour_budgets,
                  ReadEnumOf<internal::ParseBudgetEnforcement, internal::BudgetEnforcementNames>>},
  };
  return internal::ReadFields(value, path, kFields, out);
}

absl::Status ReadHeadroomRule(JsonValue value, const Path& path, HeadroomRule& out) {
  using H = HeadroomRule;
  static constexpr Field<H> kFields[] = {
      {"gpu_model", ReadMember<&H::gpu_model, ReadString>, true},
      {"count", ReadMember<&H::count, ReadInt64>, true},
      {"shape", ReadMember<&H::shape,
                           ReadEnumOf<internal::ParseHeadroomShape, internal::HeadroomShapeNames>>},
      {"min_priority", ReadMember<&H::min_priority, ReadInt32>, true},
      {"restore", ReadMember<&H::restore, ReadBool>},
  };
  return internal::ReadFields(value, path, kFields, out);
}

absl::Status ReadHealth(JsonValue value, const Path& path, HealthOptions& out) {
  using H = HealthOptions;
  static constexpr Field<H> kFields[] = {
      {"enabled", ReadMember<&H::enabled, ReadBool>},
      {"xid_errors_to_cordon", ReadMember<&H::xid_errors_to_cordon, ReadInt64>},
      {"ecc_errors_to_cordon", ReadMember<&H::ecc_errors_to_cordon, ReadInt64>},
      {"diagnostic_interval_s", ReadMember<&H::diagnostic_interval_s, ReadInt64>},
      {"diagnostic_idle_window_s", ReadMember<&H::diagnostic_idle_window_s, ReadInt64>},
      {"max_diagnosing_nodes", ReadMember<&H::max_diagnosing_nodes, ReadInt64>},
  };
  return internal::ReadFields(value, path, kFields, out);
}

absl::Status ReadSpot(JsonValue value, const Path& path, SpotOptions& out) {
  static constexpr Field<SpotOptions> kFields[] = {
      {"max_checkpoint_interval_s", ReadMember<&SpotOptions::max_checkpoint_interval_s, ReadInt64>},
  };
  return internal::ReadFields(value, path, kFields, out);
}

absl::Status ReadTemplate(JsonValue value, const Path& path, NodeTemplate& out) {
  static constexpr Field<NodeTemplate> kFields[] = {
      {"name", ReadMember<&NodeTemplate::name, ReadString>, true},
      {"node", ReadMember<&NodeTemplate::node, internal::ReadNodeWithoutId>, true},
      {"max_count", ReadMember<&NodeTemplate::max_count, ReadInt32>, true},
      {"cost_per_hour", ReadMember<&NodeTemplate::cost_per_hour_micro, internal::ReadMicros>},
  };
  return internal::ReadFields(value, path, kFields, out);
}

absl::Status ReadMaintenance(JsonValue value, const Path& path, MaintenanceOptions& out) {
  using M = MaintenanceOptions;
  static constexpr Field<M> kFields[] = {
      {"drain_notice_s", ReadMember<&M::drain_notice_s, ReadInt64>},
      {"start_without_estimate", ReadMember<&M::start_without_estimate, ReadBool>},
  };
  return internal::ReadFields(value, path, kFields, out);
}

absl::Status ReadScale(JsonValue value, const Path& path, std::optional<ScaleOptions>& out) {
  static constexpr Field<ScaleOptions> kFields[] = {
      {"templates", ReadMember<&ScaleOptions::templates, internal::ReadArrayOf<ReadTemplate>>},
      {"max_simulations", ReadMember<&ScaleOptions::max_simulations, ReadInt64>},
  };
  out.emplace();
  return internal::ReadFields(value, path, kFields, *out);
}

// "scorer" is listed so that it gets its own message instead of "unknown field".
absl::Status RefuseScorer(JsonValue, const Path& path, Policy&) {
  return internal::PathError(path,
                             "a placement scorer is host code and cannot be set in a policy file "
                             "(use \"placement\")");
}

absl::Status ReadPolicy(internal::JsonObject& object, const Path& path, Policy& out) {
  static constexpr Field<Policy> kFields[] = {
      {"name", ReadMember<&Policy::name, ReadString>},
      {"version", ReadMember<&Policy::version, ReadInt32>},
      {"placement",
       ReadMember<&Policy::placement,
                  ReadEnumOf<internal::ParsePlacementStrategy, internal::PlacementStrategyNames>>},
      {"job_order", ReadMember<&Policy::job_order,
                               ReadEnumOf<internal::ParseJobOrder, internal::JobOrderNames>>},
      {"las_thresholds_gpu_seconds",
       ReadMember<&Policy::las_thresholds_gpu_seconds, internal::ReadInt64Array>},
      {"starvation_bound_s", ReadMember<&Policy::starvation_bound_s, ReadInt64>},
      {"queue_order", ReadMember<&Policy::queue_order,
                                 ReadEnumOf<internal::ParseQueueOrder, internal::QueueOrderNames>>},
      {"fair_share", ReadMember<&Policy::fair_share, ReadFairShare>},
      {"preemption", ReadMember<&Policy::preemption, ReadPreemption>},
      {"budgets", ReadMember<&Policy::budgets, ReadBudgets>},
      {"backfill", ReadMember<&Policy::backfill, ReadBackfill>},
      {"consolidation", ReadMember<&Policy::consolidation, ReadConsolidation>},
      {"health", ReadMember<&Policy::health, ReadHealth>},
      {"maintenance", ReadMember<&Policy::maintenance, ReadMaintenance>},
      {"scale", ReadMember<&Policy::scale, ReadScale>},
      {"scorer", RefuseScorer},
      {"headroom", ReadMember<&Policy::headroom, internal::ReadArrayOf<ReadHeadroomRule>>},
      {"spot", ReadMember<&Policy::spot, ReadSpot>},
  };
  return internal::ReadObjectFields(object, path, kFields, out);
}

}  // namespace

absl::StatusOr<Policy> ParsePolicy(std::string_view json) {
  return internal::ParseDocument<Policy>(json, ReadPolicy);
}

absl::StatusOr<Policy> ReadPolicyFile(const std::string& path) {
  return internal::ReadDocumentFile<Policy>(path, ReadPolicy);
}

}  // namespace gpupool::io
