// Headroom rules: counting free units, refusing placements, restoring (see headroom.h).
#include "headroom.h"

#include <algorithm>
#include <numeric>

#include "fmt/format.h"
#include "internal/saturating.h"
#include "victim_search.h"

namespace gpupool::internal {

absl::Status Headroom::CheckModels(const Snapshot& snapshot, const Policy& policy) {
  for (size_t i = 0; i < policy.headroom.size(); ++i) {
    const std::string& model = policy.headroom[i].gpu_model;
    if (std::none_of(snapshot.gpu_models.begin(), snapshot.gpu_models.end(),
                     [&model](const GpuModel& m) { return m.name == model; })) {
      return absl::FailedPreconditionError(fmt::format(
          "policy.headroom[{}].gpu_model: unknown GPU model \"{}\" (not in the snapshot's "
          "gpu_models)",
          i, model));
    }
  }
  return absl::OkStatus();
}

Headroom::Headroom(const SnapshotIndex& index, const WorkingState& state, const Policy& policy)
    : index_(index), state_(state) {
  if (policy.headroom.empty()) return;
  for (const HeadroomRule& rule : policy.headroom) {
    rules_.push_back(Rule{&rule, index.FindModel(rule.gpu_model)});
  }
  std::sort(rules_.begin(), rules_.end(), [](const Rule& a, const Rule& b) {
    if (a.rule->gpu_model != b.rule->gpu_model) return a.rule->gpu_model < b.rule->gpu_model;
    return a.rule->shape < b.rule->shape;
  });
  rules_of_model_.resize(index.model_count());
  for (size_t r = 0; r < rules_.size(); ++r) {
    rules_of_model_[rules_[r].model].push_back(static_cast<int32_t>(r));
  }
}

bool Headroom::HasUncountedNodes(int32_t m) const {
  const std::vector<int32_t>& nodes = index_.nodes_of_model(m);
  return std::any_of(nodes.begin(), nodes.end(),
                     [&](int32_t n) { return state_.node_open(n) && index_.node_spot(n); });
}

int64_t Headroom::Free(int32_t r) const {
  const Rule& rule = rules_[r];
  int64_t free = 0;
  std::vector<uint8_t> island_whole;
  for (int32_t n : index_.nodes_of_model(rule.model)) {
    if (!Counts(n)) continue;
    const int32_t begin = index_.gpu_begin(n), end = index_.gpu_end(n);
    auto whole = [&](int32_t g) {
      const int64_t held = held_gpu_milli_ == nullptr ? 0 : (*held_gpu_milli_)[g];
      return index_.gpu_healthy(g) && state_.gpu_free_milli(g) + held == kMilliPerGpu;
    };
    switch (rule.rule->shape) {
      case HeadroomShape::kGpus:
        for (int32_t g = begin; g < end; ++g) free += whole(g) ? 1 : 0;
        break;
      case HeadroomShape::kNodes: {
        bool all = begin < end;
        for (int32_t g = begin; g < end && all; ++g) all = whole(g);
        free += all ? 1 : 0;
        break;
      }
      case HeadroomShape::kIslands:
        island_whole.assign(index_.island_count(n), 1);
        for (int32_t g = begin; g < end; ++g) {
          if (!whole(g)) island_whole[index_.gpu_island(g)] = 0;
        }
        for (uint8_t w : island_whole) free += w;
        break;
    }
  }
  return free;
}

std::optional<HeadroomBlock> Headroom::Violated(int32_t j, int32_t model) const {
  if (model == kNone || rules_.empty()) return std::nullopt;
  const int32_t priority = index_.job(j).job->priority;
  for (int32_t r : rules_of_model_[model]) {
    const HeadroomRule& rule = *rules_[r].rule;
    if (priority >= rule.min_priority) continue;
    const int64_t free = Free(r);
    if (free < rule.count) return HeadroomBlock{r, 0, free};
  }
  return std::nullopt;
}

std::string Headroom::Units(int64_t count, const HeadroomRule& rule) {
  const char* plural = count == 1 ? "" : "s";
  switch (rule.shape) {
    case HeadroomShape::kGpus:
      return fmt::format("{} {} GPU{}", count, rule.gpu_model, plural);
    case HeadroomShape::kNodes:
      return fmt::format("{} whole {} node{}", count, rule.gpu_model, plural);
    case HeadroomShape::kIslands:
      return fmt::format("{} whole {} NVLink island{}", count, rule.gpu_model, plural);
  }
  return std::string();
}

PendingDecision Headroom::Pending(int32_t j, const HeadroomBlock& block) const {
  const HeadroomRule& rule = *rules_[block.rule].rule;
  PendingDecision out;
  out.job = index_.job(j).job->id;
  out.reason = PendingReason::kHeadroom;
  out.gpu_model = rule.gpu_model;
  out.detail = fmt::format(
      "{} {} kept free for priority >= {}; {} free now, and starting this job (priority {}) "
      "would leave {}",
      Units(rule.count, rule), rule.count == 1 ? "is" : "are", rule.min_priority, block.free_now,
      index_.job(j).job->priority, block.free_after);
  return out;
}

namespace {

// The search state of one restoration: candidates with their prices, and the checks.
class Restoration {
 public:
  Restoration(const SnapshotIndex& index, WorkingState& state, const Headroom& headroom, int32_t r,
              const VictimRules& rules, const Policy& policy, Counters& counters)
      : index_(index),
        state_(state),
        headroom_(headroom),
        r_(r),
        rules_(rules),
        policy_(policy),
        counters_(counters),
        rule_(*headroom.rules()[r].rule),
        model_(headroom.rules()[r].model) {}

  std::vector<int32_t> Find() {
    ListCandidates();
    if (candidates_.empty() || !Feasible(candidates_, /*guarantees=*/false)) return {};
    std::vector<int32_t> found =
        candidates_.size() <= VictimSearch::kExactCandidates ? Exhaustive() : Greedy();
    std::sort(found.begin(), found.end());
    return found;
  }

 private:
  void ListCandidates() {
    for (int32_t v = 0; v < index_.job_count(); ++v) {
      const JobInfo& info = index_.job(v);
      if (info.placements.empty() || info.job->priority >= rule_.min_priority) continue;
      if (rules_.taken(v) || state_.released(v) || !rules_.MayEvict(v)) continue;
      const bool here = std::any_of(info.placements.begin(), info.placements.end(),
                                    [&](const RunningPlacement& p) {
                                      return index_.node_model(p.node) == model_ &&
                                             headroom_.Counts(p.node) && !p.gpus.empty();
                                    });
      if (here) candidates_.push_back(v);
    }
    std::stable_sort(candidates_.begin(), candidates_.end(), [&](int32_t a, int32_t b) {
      return rules_.VictimCost(a) < rules_.VictimCost(b);
    });
  }

  // Units free with `victims` evicted (simulated and rolled back).
  int64_t FreeWithout(const std::vector<int32_t>& victims) {
    const WorkingState::Mark mark = state_.Checkpoint();
    for (int32_t v : victims) state_.ReleaseRunningJob(v);
    const int64_t free = headroom_.Free(r_);
    state_.Rollback(mark);
    return free;
  }

  // Every victim's queue and ancestors keep at least their guarantee over all models.
  bool GuaranteesKept(const std::vector<int32_t>& victims) const {
    const int32_t any = index_.any_model_slot();
    std::vector<int64_t> taken(index_.queue_count(), 0);
    for (int32_t v : victims) {
      for (int32_t q = index_.job(v).queue; q != kNone; q = index_.queue_parent(q)) {
        taken[q] = SaturatingAdd(taken[q], rules_.Milli(v));
      }
    }
    for (int32_t q = 0; q < index_.queue_count(); ++q) {
      if (taken[q] == 0) continue;
      const int64_t guarantee = rules_.GuaranteeTotal(q);
      if (guarantee > 0 && state_.queue_usage(q, any) - taken[q] < guarantee) return false;
    }
    return true;
  }

  bool Feasible(const std::vector<int32_t>& victims, bool guarantees) {
    if (guarantees && !GuaranteesKept(victims)) return false;
    return FreeWithout(victims) >= rule_.count;
  }

  bool BudgetLeft() const { return PlanBudgetLeft(policy_, counters_); }

  int64_t Cost(const std::vector<int32_t>& victims) const {
    int64_t total = 0;
    for (int32_t v : victims) total = SaturatingAdd(total, rules_.VictimCost(v));
    return total;
  }

  // Every subset, cheapest first (then fewest victims, then victims in id order).
  std::vector<int32_t> Exhaustive() {
    const size_t k = candidates_.size();
    struct Subset {
      int64_t cost;
      int32_t count;
      std::vector<int32_t> ids;
    };
    std::vector<Subset> subsets;
    for (uint32_t mask = 1; mask < (1u << k); ++mask) {
      Subset s{0, 0, {}};
      for (size_t i = 0; i < k; ++i) {
        if (mask & (1u << i)) s.ids.push_back(candidates_[i]);
      }
      std::sort(s.ids.begin(), s.ids.end());
      s.cost = Cost(s.ids);
      s.count = static_cast<int32_t>(s.ids.size());
      subsets.push_back(std::move(s));
    }
    std::sort(subsets.begin(), subsets.end(), [](const Subset& a, const Subset& b) {
      if (a.cost != b.cost) return a.cost < b.cost;
      if (a.count != b.count) return a.count < b.count;
      return a.ids < b.ids;
    });
    for (const Subset& s : subsets) {
      if (!GuaranteesKept(s.ids)) continue;
      if (!BudgetLeft()) {
        counters_.budget_exhausted = true;
        return {};
      }
      ++counters_.preemption_plans;
      if (FreeWithout(s.ids) >= rule_.count) return s.ids;
    }
    return {};
  }

  // Above kExactCandidates: add the candidate with the lowest price per unit freed (else the
  // cheapest) until the rule is met, then drop victims, dearest first, that are not needed.
  std::vector<int32_t> Greedy() {
    std::vector<int32_t> chosen;
    std::vector<uint8_t> in(index_.job_count(), 0);
    int64_t free = FreeWithout(chosen);
    while (free < rule_.count) {
      int32_t best = kNone, fallback = kNone;
      int64_t best_gain = 0, best_free = 0;
      for (int32_t c : candidates_) {
        if (in[c]) continue;
        chosen.push_back(c);
        const bool kept = GuaranteesKept(chosen);
        int64_t with = free;
        if (kept && BudgetLeft()) {
          ++counters_.preemption_plans;
          with = FreeWithout(chosen);
        }
        chosen.pop_back();
        if (!kept) continue;
        if (fallback == kNone) fallback = c;  // candidates_ is cheapest first
        const int64_t gain = with - free;
        if (gain <= 0) continue;
        // Lowest cost / gain; ties by candidate order (cheaper, then id).
        if (best == kNone || SaturatingMultiply(rules_.VictimCost(c), best_gain) <
                                 SaturatingMultiply(rules_.VictimCost(best), gain)) {
          best = c;
          best_gain = gain;
          best_free = with;
        }
      }
      if (!BudgetLeft()) {
        counters_.budget_exhausted = true;
        return {};
      }
      const int32_t take = best != kNone ? best : fallback;
      if (take == kNone) return {};
      chosen.push_back(take);
      in[take] = 1;
      free = best != kNone ? best_free : FreeWithout(chosen);
    }
    // Trim, dearest first.
    std::vector<int32_t> order = chosen;
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
      return rules_.VictimCost(a) > rules_.VictimCost(b);
    });
    for (int32_t v : order) {
      if (!BudgetLeft()) break;
      std::vector<int32_t> without;
      for (int32_t c : chosen) {
        if (c != v) without.push_back(c);
      }
      ++counters_.preemption_plans;
      if (FreeWithout(without) >= rule_.count) chosen = std::move(without);
    }
    return chosen;
  }

  const SnapshotIndex& index_;
  WorkingState& state_;
  const Headroom& headroom_;
  const int32_t r_;
  const VictimRules& rules_;
  const Policy& policy_;
  Counters& counters_;
  const HeadroomRule& rule_;
  const int32_t model_;
  // Cheapest first, then id.
  std::vector<int32_t> candidates_;
};

}  // namespace

std::vector<int32_t> FindRestoration(const SnapshotIndex& index, WorkingState& state,
                                     const Headroom& headroom, int32_t r, const VictimRules& rules,
                                     const Policy& policy, Counters& counters) {
  return Restoration(index, state, headroom, r, rules, policy, counters).Find();
}

void Headroom::Describe(const HeadroomRule& rule, bool preemption_enabled, HeadroomReport& report) {
  const std::string kept =
      fmt::format("{} kept free for priority >= {}", Units(rule.count, rule), rule.min_priority);
  if (!report.preempted.empty()) {
    report.detail = fmt::format(
        "urgent work left {} free of the {}; evicting {} job{} below priority {} made {} free",
        report.free_before_restore, kept, report.preempted.size(),
        report.preempted.size() == 1 ? "" : "s", rule.min_priority, report.free);
  } else {
    report.detail = fmt::format("{} free of the {}", report.free, kept);
  }
  if (report.shortfall > 0) {
    report.detail += fmt::format(
        "; {} short: {}", report.shortfall,
        !rule.restore         ? std::string("restore is off for this rule")
        : !preemption_enabled ? std::string("preemption is off (preemption.enabled)")
                              : fmt::format("no set of running jobs below priority {} that the "
                                            "preemption rules let go frees that much",
                                            rule.min_priority));
  }
}

}  // namespace gpupool::internal
