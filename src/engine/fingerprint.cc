#include "fingerprint.h"

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "fmt/format.h"
#include "internal/hash.h"

namespace gpupool::internal {
namespace {

// Mixes 64-bit words (internal/hash.h, one HashCombine each), strings 8 bytes at a time,
// assembled little-endian by hand so the value is the same on every platform.
class Hasher {
 public:
  void Int(int64_t value) { Word(static_cast<uint64_t>(value)); }
  void Str(std::string_view s) {
    Int(static_cast<int64_t>(s.size()));
    size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
      uint64_t w = 0;
      for (int k = 7; k >= 0; --k) w = (w << 8) | static_cast<uint8_t>(s[i + k]);
      Word(w);
    }
    uint64_t tail = 0;
    for (size_t k = s.size(); k > i; --k) tail = (tail << 8) | static_cast<uint8_t>(s[k - 1]);
    Word(tail);
  }
  template <typename T>
  void Opt(const std::optional<T>& value) {
    Int(value.has_value() ? 1 : 0);
    if (value) Int(*value);
  }
  uint64_t value() const { return h_; }

 private:
  void Word(uint64_t w) { h_ = HashCombine(h_, w); }
  uint64_t h_ = 0x6a09e667f3bcc908ULL;
};

// Labels in (level, value) order, through pointers into `labels` (reused scratch `sorted`).
void SortLabels(const std::vector<TopologyLabel>& labels,
                std::vector<const TopologyLabel*>& sorted) {
  sorted.clear();
  for (const TopologyLabel& label : labels) sorted.push_back(&label);
  std::sort(sorted.begin(), sorted.end(), [](const TopologyLabel* a, const TopologyLabel* b) {
    return a->level != b->level ? a->level < b->level : a->value < b->value;
  });
}

void HashRequest(Hasher& h, const ResourceRequest& r) {
  h.Int(r.gpu_milli);
  h.Int(r.gpu_memory_mib);
  h.Int(r.cpu_milli);
  h.Int(r.memory_mib);
}

// A node's CPU, memory, path, labels, state and owner queues, order-free: shared by the
// snapshot's nodes and the scale templates' nodes. `sorted` is scratch.
void HashNodeFacts(Hasher& h, const Node& node, std::vector<const TopologyLabel*>& sorted) {
  h.Int(node.cpu_milli);
  h.Int(node.memory_mib);
  // Sorted through pointers, not copies: the same order, as the sort sees the same comparisons
  // (and equal elements hash alike).
  for (const auto* labels : {&node.path, &node.labels}) {
    SortLabels(*labels, sorted);
    h.Int(static_cast<int64_t>(sorted.size()));
    for (const TopologyLabel* label : sorted) {
      h.Str(label->level);
      h.Str(label->value);
    }
  }
  h.Int(static_cast<int64_t>(node.state));
  std::vector<std::string_view> owners(node.owner_queues.begin(), node.owner_queues.end());
  std::sort(owners.begin(), owners.end());
  h.Int(static_cast<int64_t>(owners.size()));
  for (std::string_view owner : owners) h.Str(owner);
}

}  // namespace

std::string Fingerprint(const SnapshotIndex& index, const Policy& policy) {
  Hasher h;
  const Snapshot& s = index.snapshot();
  h.Int(s.now);
  h.Int(static_cast<int64_t>(s.topology.levels.size()));
  for (const std::string& level : s.topology.levels) h.Str(level);
  h.Int(index.model_count());
  for (int32_t m = 0; m < index.model_count(); ++m) {
    const GpuModel& model = index.model(m);
    h.Str(model.name);
    h.Int(model.memory_mib);
    std::vector<WorkloadSpeed> speeds = model.speeds;
    std::sort(speeds.begin(), speeds.end(), [](const WorkloadSpeed& a, const WorkloadSpeed& b) {
      return a.workload_class < b.workload_class;
    });
    h.Int(static_cast<int64_t>(speeds.size()));
    for (const WorkloadSpeed& speed : speeds) {
      h.Str(speed.workload_class);
      h.Int(speed.speed_milli);
    }
  }
  h.Int(index.node_count());
  std::vector<const TopologyLabel*> labels;
  for (int32_t n = 0; n < index.node_count(); ++n) {
    const Node& node = index.node(n);
    h.Str(node.id);
    h.Str(node.gpu_model);
    h.Int(index.gpu_end(n) - index.gpu_begin(n));
    for (int32_t g = index.gpu_begin(n); g < index.gpu_end(n); ++g) {
      h.Int(index.gpu_index(g));
      h.Int(index.gpu_island(g));
      h.Int(index.gpu_healthy(g) ? 1 : 0);
    }
    HashNodeFacts(h, node, labels);
    // Operations facts, hashed only when set, so that fingerprints of snapshots without them stay
    // as they were.
    std::vector<const Gpu*> erring;
    for (const Gpu& gpu : node.gpus) {
      if (gpu.xid_errors != 0 || gpu.ecc_errors != 0 || gpu.errors_since) erring.push_back(&gpu);
    }
    std::sort(erring.begin(), erring.end(),
              [](const Gpu* a, const Gpu* b) { return a->index < b->index; });
    for (const Gpu* gpu : erring) {
      h.Str("gpu_errors");
      h.Int(gpu->index);
      h.Int(gpu->xid_errors);
      h.Int(gpu->ecc_errors);
      h.Opt(gpu->errors_since);
    }
    if (!node.maintenance.empty()) {
      h.Str("maintenance");
      h.Int(static_cast<int64_t>(node.maintenance.size()));
      for (const MaintenanceWindow& window : node.maintenance) {
        h.Int(window.start);
        h.Int(window.end);
      }
    }
    if (node.last_diagnostic) {
      h.Str("last_diagnostic");
      h.Int(node.last_diagnostic->time);
      h.Int(node.last_diagnostic->passed ? 1 : 0);
    }
    if (node.state_cause != NodeStateCause::kHost) {
      h.Str("state_cause");
      h.Int(static_cast<int64_t>(node.state_cause));
    }
    // Spot facts hashed only when set, so that fingerprints without them stay as they were.
    if (node.spot) h.Str("spot");
    if (node.reclaiming) h.Str("reclaiming");
    if (node.reclaim_deadline.has_value()) h.Int(*node.reclaim_deadline);
  }
  h.Int(index.queue_count());
  std::vector<const Quota*> quotas;
  for (int32_t q = 0; q < index.queue_count(); ++q) {
    const Queue& queue = index.queue(q);
    h.Str(queue.id);
    h.Str(queue.parent);
    h.Int(queue.priority);
    quotas.clear();
    for (const Quota& quota : queue.quotas) quotas.push_back(&quota);
    std::sort(quotas.begin(), quotas.end(),
              [](const Quota* a, const Quota* b) { return a->gpu_model < b->gpu_model; });
    h.Int(static_cast<int64_t>(quotas.size()));
    for (const Quota* quota : quotas) {
      h.Str(quota->gpu_model);
      h.Int(quota->guaranteed_milli);
      h.Opt(quota->limit_milli);
      h.Int(quota->over_quota_weight);
    }
    h.Int(queue.can_borrow ? 1 : 0);
    h.Int(queue.can_lend ? 1 : 0);
    h.Int(static_cast<int64_t>(queue.isolation));
    h.Opt(queue.budget_milli_gpu_seconds);
    h.Int(queue.decayed_usage_milli_gpu_seconds);
    // Hashed only when set, so that fingerprints of snapshots without budgets stay as they were.
    if (queue.budget_used_milli_gpu_seconds != 0) {
      h.Str("budget_used");
      h.Int(queue.budget_used_milli_gpu_seconds);
    }
  }
  h.Int(index.job_count());
  std::vector<const ReplicaPlacement*> placements;
  std::vector<int32_t> sorted_gpus;
  for (int32_t j = 0; j < index.job_count(); ++j) {
    const Job& job = *index.job(j).job;
    h.Str(job.id);
    h.Str(job.queue);
    h.Int(job.priority);
    h.Int(job.submit_time);
    h.Int(static_cast<int64_t>(job.groups.size()));
    for (int32_t g : index.job(j).groups_by_name) {
      const TaskGroup& group = job.groups[g];
      h.Str(group.name);
      h.Int(group.replicas);
      h.Opt(group.min_replicas);
      HashRequest(h, group.request);
      h.Int(static_cast<int64_t>(group.gpu_models.size()));
      for (const std::string& model : group.gpu_models) h.Str(model);
      h.Int(static_cast<int64_t>(group.topology.replica_scope));
      h.Int(static_cast<int64_t>(group.topology.replica_strictness));
      h.Int(group.topology.gang_level.has_value() ? 1 : 0);
      if (group.topology.gang_level) h.Str(*group.topology.gang_level);
      h.Int(static_cast<int64_t>(group.topology.gang_strictness));
      if (group.topology.max_replicas_per_node.has_value()) {
        h.Str("max_replicas_per_node");
        h.Int(*group.topology.max_replicas_per_node);
      }
    }
    h.Int(job.preemptible ? 1 : 0);
    h.Int(job.checkpointing.interval_s);
    h.Opt(job.checkpointing.last_checkpoint_time);
    h.Int(job.checkpointing.checkpoint_cost_s);
    h.Int(job.checkpointing.restore_time_s);
    h.Int(job.min_runtime_s);
    h.Opt(job.runtime_estimate_s);
    h.Int(static_cast<int64_t>(job.state));
    h.Opt(job.start_time);
    h.Int(job.attained_service_s);
    if (job.pending_since.has_value()) h.Int(*job.pending_since);  // unset: as before it existed
    if (job.backfilled) h.Str("backfilled");                       // unset: as before it existed
    if (job.spot_tolerant) h.Str("spot_tolerant");                 // likewise
    // Sorted through pointers, not copies (the same order: the sort sees the same comparisons).
    placements.clear();
    for (const ReplicaPlacement& p : job.placements) placements.push_back(&p);
    std::sort(placements.begin(), placements.end(),
              [](const ReplicaPlacement* a, const ReplicaPlacement* b) {
                return a->group != b->group ? a->group < b->group : a->replica < b->replica;
              });
    h.Int(static_cast<int64_t>(placements.size()));
    for (const ReplicaPlacement* p : placements) {
      h.Str(p->group);
      h.Int(p->replica);
      h.Str(p->node);
      const std::vector<int32_t>* gpus = &p->gpus;
      if (!std::is_sorted(gpus->begin(), gpus->end())) {
        sorted_gpus = p->gpus;
        std::sort(sorted_gpus.begin(), sorted_gpus.end());
        gpus = &sorted_gpus;
      }
      h.Int(static_cast<int64_t>(gpus->size()));
      for (int32_t g : *gpus) h.Int(g);
      h.Int(p->gpu_milli);
    }
  }
  h.Str(policy.name);
  h.Int(policy.version);
  h.Int(static_cast<int64_t>(policy.placement));
  h.Str(policy.scorer ? policy.scorer->Name() : std::string_view());
  h.Int(static_cast<int64_t>(policy.job_order));
  h.Int(static_cast<int64_t>(policy.las_thresholds_gpu_seconds.size()));
  for (int64_t threshold : policy.las_thresholds_gpu_seconds) h.Int(threshold);
  h.Int(policy.starvation_bound_s);
  h.Int(static_cast<int64_t>(policy.queue_order));
  h.Int(policy.fair_share.usage_half_life_s);
  h.Int(policy.preemption.enabled ? 1 : 0);
  h.Int(policy.preemption.checkpoint_grace_s);
  h.Int(policy.preemption.reclaim_across_queues ? 1 : 0);
  // Hashed only when it is not the default, so that fingerprints of policies that leave it
  // unset are those of before the option existed.
  if (policy.preemption.victim_order != PreemptionOptions{}.victim_order) {
    h.Int(static_cast<int64_t>(policy.preemption.victim_order));
  }
  if (policy.preemption.reclaim_lower_priority_only) h.Str("reclaim_lower_priority_only");
  if (!policy.preemption.starving_outrank) h.Str("no starving_outrank");
  if (policy.preemption.starving_drain) h.Str("starving_drain");
  if (policy.preemption.starving_drain_past_min_runtime) h.Str("starving_drain_past_min_runtime");
  // Options added later: named and hashed only when set, as above.
  auto hash_if_set = [&h](std::string_view name, int64_t value) {
    if (value == 0) return;
    h.Str(name);
    h.Int(value);
  };
  hash_if_set("drain_blocked_jobs", policy.preemption.drain_blocked_jobs);
  hash_if_set("take_back_from_gpus", policy.preemption.take_back_from_gpus);
  hash_if_set("take_back_after_s", policy.preemption.take_back_after_s);
  hash_if_set("victim_remaining_percent", policy.preemption.victim_remaining_percent);
  hash_if_set("victim_remaining_max_gap", policy.preemption.victim_remaining_max_gap);
  if (policy.preemption.max_victim_lost_s != 0 || policy.preemption.min_victim_run_s != 0) {
    h.Int(policy.preemption.max_victim_lost_s);
    h.Int(policy.preemption.min_victim_run_s);
  }
  h.Int(policy.budgets.max_candidates);
  h.Int(policy.budgets.max_preemption_plans);
  // Hashed only when it is not the default (2,000), as above.
  if (policy.budgets.max_counterfactual_plans != Budgets{}.max_counterfactual_plans) {
    h.Str("max_counterfactual_plans");
    h.Int(policy.budgets.max_counterfactual_plans);
  }
  // Hashed only when it is not the default, as above.
  const BackfillOptions& backfill = policy.backfill;
  const BackfillOptions off;
  if (backfill.enabled != off.enabled || backfill.reservations != off.reservations ||
      backfill.margin_s != off.margin_s || backfill.overrun != off.overrun) {
    h.Str("backfill");
    h.Int(backfill.enabled ? 1 : 0);
    h.Int(backfill.reservations);
    h.Int(backfill.margin_s);
    h.Int(static_cast<int64_t>(backfill.overrun));
  }
  // Hashed only when it is not the default (enforce), as above.
  if (policy.fair_share.gpu_hour_budgets != FairShareOptions{}.gpu_hour_budgets) {
    h.Str("gpu_hour_budgets");
    h.Int(static_cast<int64_t>(policy.fair_share.gpu_hour_budgets));
  }
  // Hashed only when it is not the default, as above.
  const ConsolidationOptions& consolidation = policy.consolidation;
  const ConsolidationOptions defaults;
  if (consolidation.enabled != defaults.enabled ||
      consolidation.gain_factor != defaults.gain_factor ||
      consolidation.max_moves != defaults.max_moves ||
      consolidation.max_plans != defaults.max_plans) {
    h.Str("consolidation");
    h.Int(consolidation.enabled ? 1 : 0);
    h.Int(consolidation.gain_factor);
    h.Int(consolidation.max_moves);
    h.Int(consolidation.max_plans);
  }
  // Hashed only when not the default, as above.
  const HealthOptions& health = policy.health;
  if (health.enabled || health.xid_errors_to_cordon != 0 || health.ecc_errors_to_cordon != 0 ||
      health.diagnostic_interval_s != 0 || health.diagnostic_idle_window_s != 0 ||
      health.max_diagnosing_nodes != 0) {
    h.Str("health");
    h.Int(health.enabled ? 1 : 0);
    h.Int(health.xid_errors_to_cordon);
    h.Int(health.ecc_errors_to_cordon);
    h.Int(health.diagnostic_interval_s);
    h.Int(health.diagnostic_idle_window_s);
    h.Int(health.max_diagnosing_nodes);
  }
  if (policy.maintenance.drain_notice_s != 0 || policy.maintenance.start_without_estimate) {
    h.Str("maintenance");
    h.Int(policy.maintenance.drain_notice_s);
    h.Int(policy.maintenance.start_without_estimate ? 1 : 0);
  }
  // Hashed only when set (the scale advice is part of the decisions then), as above. Templates
  // in name order (names are unique), so their order in the policy does not matter.
  if (policy.scale) {
    h.Str("scale");
    h.Int(policy.scale->max_simulations);
    std::vector<const NodeTemplate*> templates;
    for (const NodeTemplate& t : policy.scale->templates) templates.push_back(&t);
    std::sort(templates.begin(), templates.end(),
              [](const NodeTemplate* a, const NodeTemplate* b) { return a->name < b->name; });
    h.Int(static_cast<int64_t>(templates.size()));
    for (const NodeTemplate* t : templates) {
      h.Str(t->name);
      h.Int(t->max_count);
      h.Int(t->cost_per_hour_micro);
      const Node& node = t->node;
      h.Str(node.gpu_model);
      std::vector<Gpu> gpus = node.gpus;
      std::sort(gpus.begin(), gpus.end(),
                [](const Gpu& a, const Gpu& b) { return a.index < b.index; });
      h.Int(static_cast<int64_t>(gpus.size()));
      for (const Gpu& gpu : gpus) {
        h.Int(gpu.index);
        h.Int(gpu.island);
        h.Int(gpu.healthy ? 1 : 0);
      }
      HashNodeFacts(h, node, labels);
    }
  }
  // Headroom rules in (model, shape) order, and the spot bound, only when set, as above.
  if (!policy.headroom.empty()) {
    std::vector<HeadroomRule> rules = policy.headroom;
    std::sort(rules.begin(), rules.end(), [](const HeadroomRule& a, const HeadroomRule& b) {
      return a.gpu_model != b.gpu_model ? a.gpu_model < b.gpu_model : a.shape < b.shape;
    });
    h.Str("headroom");
    h.Int(static_cast<int64_t>(rules.size()));
    for (const HeadroomRule& rule : rules) {
      h.Str(rule.gpu_model);
      h.Int(rule.count);
      h.Int(static_cast<int64_t>(rule.shape));
      h.Int(rule.min_priority);
      h.Int(rule.restore ? 1 : 0);
    }
  }
  if (policy.spot.max_checkpoint_interval_s != 0) {
    h.Str("spot.max_checkpoint_interval_s");
    h.Int(policy.spot.max_checkpoint_interval_s);
  }
  return fmt::format("{:016x}", h.value());
}

}  // namespace gpupool::internal
