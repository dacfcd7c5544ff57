// DecisionsToJson() and PolicyToJson(): canonical output of what a cycle decided and under which
// policy. Every field is written, so that a reader never has to know the defaults.
#include "gpupool/io/json.h"
#include "io/enum_names.h"
#include "io/json_writer.h"

namespace gpupool::io {
namespace {

using internal::JsonWriter;

void WriteCounters(JsonWriter& w, const Counters& counters) {
  w.BeginObject();
  w.IntField("jobs_considered", counters.jobs_considered);
  w.IntField("jobs_started", counters.jobs_started);
  w.IntField("candidates_evaluated", counters.candidates_evaluated);
  w.IntField("transactions_rolled_back", counters.transactions_rolled_back);
  w.IntField("equivalence_hits", counters.equivalence_hits);
  w.IntField("preemption_plans", counters.preemption_plans);
  w.IntField("preemptions", counters.preemptions);
  w.IntField("resizes", counters.resizes);
  w.IntField("counterfactual_plans", counters.counterfactual_plans);
  // Written only when consolidation did something, so that output without it is unchanged.
  if (counters.migrations != 0 || counters.consolidation_plans != 0) {
    w.IntField("migrations", counters.migrations);
    w.IntField("consolidation_plans", counters.consolidation_plans);
  }
  // Written only when the cycle settled in more than one pass.
  if (counters.passes != 1) w.IntField("passes", counters.passes);
  w.BoolField("budget_exhausted", counters.budget_exhausted);
  w.EndObject();
}

// Written only when the policy has a scale object, after the counters.
void WriteScaleAdvice(JsonWriter& w, const ScaleAdvice& advice) {
  w.Key("scale_advice");
  w.BeginObject();
  w.Key("add");
  w.BeginArray();
  for (const ScaleAdd& add : advice.add) {
    w.BeginOneLineObject();
    w.StringField("template", add.template_name);
    w.IntField("count", add.count);
    w.EndObject();
  }
  w.EndArray();
  w.Key("release");
  w.StringArray(advice.release);
  w.Key("covers");
  w.StringArray(advice.covers);
  w.IntField("cost_per_hour_micro", advice.cost_per_hour_micro);
  w.BoolField("cheapest", advice.cheapest);
  w.IntField("simulations", advice.simulations);
  w.BoolField("budget_exhausted", advice.budget_exhausted);
  w.EndObject();
}

}  // namespace

std::string DecisionsToJson(const Decisions& decisions) {
  JsonWriter w;
  w.BeginObject();
  w.StringField("policy_name", decisions.policy_name);
  w.IntField("policy_version", decisions.policy_version);
  w.StringField("scorer", decisions.scorer);
  w.StringField("input_fingerprint", decisions.input_fingerprint);

  w.Key("starts");
  w.BeginArray();
  for (const StartDecision& start : decisions.starts) {
    w.BeginObject();
    w.StringField("job", start.job);
    w.Key("placements");
    internal::WritePlacements(w, start.placements);
    if (start.backfilled) w.BoolField("backfilled", true);
    w.EndObject();
  }
  w.EndArray();

  w.Key("preemptions");
  w.BeginArray();
  for (const PreemptDecision& preempt : decisions.preemptions) {
    w.BeginObject();
    w.StringField("job", preempt.job);
    w.StringField("for_job", preempt.for_job);
    w.StringField("reason", preempt.reason);
    w.IntField("lost_milli_gpu_seconds", preempt.lost_milli_gpu_seconds);
    w.EndObject();
  }
  w.EndArray();

  w.Key("migrations");
  w.BeginArray();
  for (const MigrateDecision& migrate : decisions.migrations) {
    w.BeginObject();
    w.StringField("job", migrate.job);
    w.Key("from");
    internal::WritePlacements(w, migrate.from);
    w.Key("to");
    internal::WritePlacements(w, migrate.to);
    if (!migrate.for_job.empty()) {
      w.StringField("for_job", migrate.for_job);
      w.IntField("lost_milli_gpu_seconds", migrate.lost_milli_gpu_seconds);
    }
    w.EndObject();
  }
  w.EndArray();

  w.Key("resizes");
  w.BeginArray();
  for (const ResizeDecision& resize : decisions.resizes) {
    w.BeginOneLineObject();
    w.StringField("job", resize.job);
    w.StringField("group", resize.group);
    w.IntField("from_replicas", resize.from_replicas);
    w.IntField("to_replicas", resize.to_replicas);
    if (!resize.for_job.empty()) {
      w.StringField("for_job", resize.for_job);
      w.IntField("lost_milli_gpu_seconds", resize.lost_milli_gpu_seconds);
    }
    w.EndObject();
  }
  w.EndArray();

  w.Key("reservations");
  w.BeginArray();
  for (const ReserveDecision& reserve : decisions.reservations) {
    w.BeginObject();
    w.StringField("job", reserve.job);
    w.Key("nodes");
    w.StringArray(reserve.nodes);
    w.IntField("expected_start", reserve.expected_start);
    w.EndObject();
  }
  w.EndArray();

  w.Key("pending");
  w.BeginArray();
  for (const PendingDecision& pending : decisions.pending) {
    w.BeginObject();
    w.StringField("job", pending.job);
    w.StringField("reason", PendingReasonName(pending.reason));
    w.StringField("detail", pending.detail);
    w.StringField("queue", pending.queue);
    w.StringField("gpu_model", pending.gpu_model);
    w.IntField("shortfall_milli", pending.shortfall_milli);
    w.Key("would_preempt");
    w.StringArray(pending.would_preempt);
    w.StringField("counterfactual", pending.counterfactual);
    w.EndObject();
  }
  w.EndArray();

  w.Key("queue_shares");
  w.BeginArray();
  for (const QueueShare& share : decisions.queue_shares) {
    w.BeginOneLineObject();
    w.StringField("queue", share.queue);
    w.StringField("gpu_model", share.gpu_model);
    w.IntField("entitlement_milli", share.entitlement_milli);
    w.IntField("usage_milli", share.usage_milli);
    w.IntField("demand_milli", share.demand_milli);
    w.IntField("guaranteed_milli", share.guaranteed_milli);
    if (share.over_budget) w.BoolField("over_budget", true);
    w.EndObject();
  }
  w.EndArray();

  w.Key("counters");
  WriteCounters(w, decisions.counters);
  // Only when there are any, so that the decisions of a pool without operations read as before.
  if (!decisions.node_actions.empty()) {
    w.Key("node_actions");
    w.BeginArray();
    for (const NodeActionDecision& action : decisions.node_actions) {
      w.BeginObject();
      w.StringField("node", action.node);
      w.StringField("action", NodeActionName(action.action));
      w.StringField("reason", action.reason);
      if (action.action == NodeAction::kDrain || action.action == NodeAction::kDiagnose) {
        w.IntField("expected_empty_time", action.expected_empty_time);
      }
      w.EndObject();
    }
    w.EndArray();
  }
  if (decisions.scale_advice) WriteScaleAdvice(w, *decisions.scale_advice);
  // Only with headroom rules, so that decisions without them read as before.
  if (!decisions.headroom.empty()) {
    w.Key("headroom");
    w.BeginArray();
    for (const HeadroomReport& report : decisions.headroom) {
      w.BeginObject();
      w.StringField("gpu_model", report.gpu_model);
      w.StringField("shape", HeadroomShapeName(report.shape));
      w.IntField("min_priority", report.min_priority);
      w.IntField("required", report.required);
      w.IntField("free_before_restore", report.free_before_restore);
      w.IntField("free", report.free);
      w.Key("preempted");
      w.StringArray(report.preempted);
      w.IntField("shortfall", report.shortfall);
      w.StringField("detail", report.detail);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  return w.Finish();
}

std::string DrainPlanToJson(const DrainPlan& plan) {
  JsonWriter w;
  w.BeginObject();
  w.IntField("now", plan.now);
  w.IntField("deadline", plan.deadline);
  w.Key("nodes");
  w.BeginArray();
  for (const NodeDrain& node : plan.nodes) {
    w.BeginObject();
    w.StringField("node", node.node);
    w.IntField("expected_empty_time", node.expected_empty_time);
    w.Key("jobs");
    w.BeginArray();
    for (const DrainJob& job : node.jobs) {
      w.BeginOneLineObject();
      w.StringField("job", job.job);
      if (job.expected_end.has_value()) w.IntField("expected_end", *job.expected_end);
      w.BoolField("stopped", job.stopped);
      w.IntField("lost_milli_gpu_seconds", job.lost_milli_gpu_seconds);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.Key("stopped_jobs");
  w.StringArray(plan.stopped_jobs);
  w.IntField("lost_milli_gpu_seconds", plan.lost_milli_gpu_seconds);
  w.EndObject();
  return w.Finish();
}

std::string PolicyToJson(const Policy& policy) {
  JsonWriter w;
  w.BeginObject();
  w.StringField("name", policy.name);
  w.IntField("version", policy.version);
  w.StringField("placement", PlacementStrategyName(policy.placement));
  w.StringField("job_order", JobOrderName(policy.job_order));
  w.Key("las_thresholds_gpu_seconds");
  w.Int64Array(policy.las_thresholds_gpu_seconds);
  w.IntField("starvation_bound_s", policy.starvation_bound_s);
  w.StringField("queue_order", QueueOrderName(policy.queue_order));
  w.Key("fair_share");
  w.BeginOneLineObject();
  w.IntField("usage_half_life_s", policy.fair_share.usage_half_life_s);
  w.StringField("gpu_hour_budgets", BudgetEnforcementName(policy.fair_share.gpu_hour_budgets));
  w.EndObject();
  w.Key("preemption");
  w.BeginOneLineObject();
  w.BoolField("enabled", policy.preemption.enabled);
  w.IntField("checkpoint_grace_s", policy.preemption.checkpoint_grace_s);
  w.BoolField("reclaim_across_queues", policy.preemption.reclaim_across_queues);
  w.StringField("victim_order", VictimOrderName(policy.preemption.victim_order));
  w.IntField("max_victim_lost_s", policy.preemption.max_victim_lost_s);
  w.IntField("min_victim_run_s", policy.preemption.min_victim_run_s);
  w.BoolField("reclaim_lower_priority_only", policy.preemption.reclaim_lower_priority_only);
  w.BoolField("starving_outrank", policy.preemption.starving_outrank);
  w.BoolField("starving_drain", policy.preemption.starving_drain);
  // Written only when on, so that policies without it keep their bytes.
  if (policy.preemption.starving_drain_past_min_runtime) {
    w.BoolField("starving_drain_past_min_runtime", true);
  }
  w.IntField("drain_blocked_jobs", policy.preemption.drain_blocked_jobs);
  if (policy.preemption.take_back_from_gpus != 0) {
    w.IntField("take_back_from_gpus", policy.preemption.take_back_from_gpus);
  }
  if (policy.preemption.take_back_after_s != 0) {
    w.IntField("take_back_after_s", policy.preemption.take_back_after_s);
  }
  if (policy.preemption.victim_remaining_percent != 0) {
    w.IntField("victim_remaining_percent", policy.preemption.victim_remaining_percent);
  }
  if (policy.preemption.victim_remaining_max_gap != 0) {
    w.IntField("victim_remaining_max_gap", policy.preemption.victim_remaining_max_gap);
  }
  w.EndObject();
  w.Key("budgets");
  w.BeginOneLineObject();
  w.IntField("max_candidates", policy.budgets.max_candidates);
  w.IntField("max_preemption_plans", policy.budgets.max_preemption_plans);
  w.IntField("max_counterfactual_plans", policy.budgets.max_counterfactual_plans);
  w.EndObject();
  // Written only when some field differs from the default, so that the policies of before
  // backfill keep their bytes; then every field of it.
  const BackfillOptions& backfill = policy.backfill;
  const BackfillOptions off;
  if (backfill.enabled != off.enabled || backfill.reservations != off.reservations ||
      backfill.margin_s != off.margin_s || backfill.overrun != off.overrun) {
    w.Key("backfill");
    w.BeginOneLineObject();
    w.BoolField("enabled", backfill.enabled);
    w.IntField("reservations", backfill.reservations);
    w.IntField("margin_s", backfill.margin_s);
    w.StringField("overrun", OverrunActionName(backfill.overrun));
    w.EndObject();
  }
  // Written only when it is not the default, so that policies without it read as before.
  const ConsolidationOptions& consolidation = policy.consolidation;
  const ConsolidationOptions defaults;
  if (consolidation.enabled != defaults.enabled ||
      consolidation.gain_factor != defaults.gain_factor ||
      consolidation.max_moves != defaults.max_moves ||
      consolidation.max_plans != defaults.max_plans) {
    w.Key("consolidation");
    w.BeginOneLineObject();
    w.BoolField("enabled", consolidation.enabled);
    w.IntField("gain_factor", consolidation.gain_factor);
    w.IntField("max_moves", consolidation.max_moves);
    w.IntField("max_plans", consolidation.max_plans);
    w.EndObject();
  }
  // The operations options only when not the defaults, so that existing policies write as before.
  const HealthOptions& health = policy.health;
  if (health.enabled || health.xid_errors_to_cordon != 0 || health.ecc_errors_to_cordon != 0 ||
      health.diagnostic_interval_s != 0 || health.diagnostic_idle_window_s != 0 ||
      health.max_diagnosing_nodes != 0) {
    w.Key("health");
    w.BeginOneLineObject();
    w.BoolField("enabled", health.enabled);
    w.IntField("xid_errors_to_cordon", health.xid_errors_to_cordon);
    w.IntField("ecc_errors_to_cordon", health.ecc_errors_to_cordon);
    w.IntField("diagnostic_interval_s", health.diagnostic_interval_s);
    w.IntField("diagnostic_idle_window_s", health.diagnostic_idle_window_s);
    w.IntField("max_diagnosing_nodes", health.max_diagnosing_nodes);
    w.EndObject();
  }
  if (policy.maintenance.drain_notice_s != 0 || policy.maintenance.start_without_estimate) {
    w.Key("maintenance");
    w.BeginOneLineObject();
    w.IntField("drain_notice_s", policy.maintenance.drain_notice_s);
    w.BoolField("start_without_estimate", policy.maintenance.start_without_estimate);
    w.EndObject();
  }
  if (policy.scale) {
    w.Key("scale");
    w.BeginObject();
    w.Key("templates");
    w.BeginArray();
    for (const NodeTemplate& t : policy.scale->templates) {
      w.BeginObject();
      w.StringField("name", t.name);
      w.Key("node");
      internal::WriteNode(w, t.node, /*with_id=*/false);
      w.IntField("max_count", t.max_count);
      w.Key("cost_per_hour");
      w.Fixed(t.cost_per_hour_micro, 6);
      w.EndObject();
    }
    w.EndArray();
    w.IntField("max_simulations", policy.scale->max_simulations);
    w.EndObject();
  }
  // Headroom and spot only when set, so that policies without them read as before.
  if (!policy.headroom.empty()) {
    w.Key("headroom");
    w.BeginArray();
    for (const HeadroomRule& rule : policy.headroom) {
      w.BeginOneLineObject();
      w.StringField("gpu_model", rule.gpu_model);
      w.IntField("count", rule.count);
      w.StringField("shape", HeadroomShapeName(rule.shape));
      w.IntField("min_priority", rule.min_priority);
      w.BoolField("restore", rule.restore);
      w.EndObject();
    }
    w.EndArray();
  }
  if (policy.spot.max_checkpoint_interval_s != 0) {
    w.Key("spot");
    w.BeginOneLineObject();
    w.IntField("max_checkpoint_interval_s", policy.spot.max_checkpoint_interval_s);
    w.EndObject();
  }
  w.EndObject();
  return w.Finish();
}

}  // namespace gpupool::io
