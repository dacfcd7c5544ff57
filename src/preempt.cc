#include "preempt.h"

#include <algorithm>
#include <limits>

#include "fmt/format.h"
#include "internal/saturating.h"

namespace gpupool::internal {

PreemptionPlanner::PreemptionPlanner(const SnapshotIndex& index, WorkingState& state,
                                     Placer& placer, const Entitlements& entitlements,
                                     const Policy& policy, Counters& counters)
    : index_(index),
      state_(state),
      placer_(placer),
      entitlements_(entitlements),
      policy_(policy),
      counters_(counters),
      evicted_(index.job_count(), 0),
      cost_cache_(index.job_count(), -1),
      running_by_queue_(index.queue_count()) {
  for (int32_t j = 0; j < index.job_count(); ++j) {
    const JobInfo& info = index.job(j);
    if (info.job->state == JobState::kRunning && info.queue != kNone) {
      running_by_queue_[info.queue].push_back(j);
    }
  }
}

int32_t PreemptionPlanner::Side(int32_t q, int32_t other) const {
  // Ancestors of `other`, then walk up from q to the first one of them.
  std::vector<int32_t> above_other;
  for (int32_t a = other; a != kNone; a = index_.queue_parent(a)) above_other.push_back(a);
  int32_t child = kNone;
  for (int32_t a = q; a != kNone; a = index_.queue_parent(a)) {
    if (std::find(above_other.begin(), above_other.end(), a) != above_other.end()) {
      // `a` is the lowest common ancestor; q's side is the child of it on q's path.
      return child;  // kNone when q itself is the ancestor
    }
    child = a;
  }
  return child;  // different trees: the roots are the sides
}

int64_t PreemptionPlanner::GuaranteeTotal(int32_t q) const {
  int64_t per_model = 0;
  for (int32_t m = 0; m < index_.model_count(); ++m) {
    per_model += entitlements_.guaranteed(q, m);
  }
  return std::max(per_model, entitlements_.guaranteed(q, index_.any_model_slot()));
}

bool PreemptionPlanner::PlanAllowed(int32_t j, const std::vector<int32_t>& victims) const {
  const JobInfo& info = index_.job(j);
  const int32_t any = index_.any_model_slot();
  // Victim sides and what the plan takes from each; own-queue victims lower the job's side.
  std::vector<std::pair<int32_t, int64_t>> taken;  // (side, milli)
  int64_t own_freed = 0;
  int32_t job_side = kNone;
  for (int32_t v : victims) {
    const int32_t vq = index_.job(v).queue;
    if (vq == info.queue) {
      own_freed += state_.running_milli(v);
      continue;
    }
    const int32_t side = Side(vq, info.queue);
    const int32_t mine = Side(info.queue, vq);
    if (side == kNone || mine == kNone) return false;
    if (job_side == kNone) job_side = mine;
    if (mine != job_side) return false;  // one comparison per plan: victims under one sibling
    auto it =
        std::find_if(taken.begin(), taken.end(), [side](const auto& e) { return e.first == side; });
    if (it == taken.end()) {
      taken.emplace_back(side, state_.running_milli(v));
    } else {
      it->second += state_.running_milli(v);
    }
  }
  if (taken.empty()) return true;  // only own-queue victims: the priority rule already holds
  const int64_t job_usage_after = state_.queue_usage(job_side, any) + info.gang_milli - own_freed;
  const int64_t job_over = job_usage_after - entitlements_.entitlement(job_side, any);
  const bool borrowing = job_usage_after > GuaranteeTotal(job_side);
  for (const auto& [side, milli] : taken) {
    const int64_t usage = state_.queue_usage(side, any);
    const int64_t entitlement = entitlements_.entitlement(side, any);
    const int64_t guarantee = GuaranteeTotal(side);
    if (usage <= entitlement) return false;
    if (borrowing ? usage - milli < guarantee : usage <= guarantee) return false;
    if (job_over > usage - milli - entitlement) return false;
  }
  return true;
}

int64_t PreemptionPlanner::VictimCost(int32_t v) const {
  if (cost_cache_[v] >= 0) return cost_cache_[v];
  const Job& job = *index_.job(v).job;
  const int64_t now = index_.snapshot().now;
  const int64_t start = job.start_time.value_or(now);
  const int64_t since = std::max(start, job.checkpointing.last_checkpoint_time.value_or(start));
  int64_t lost_s = std::max<int64_t>(0, now - since);
  const int64_t grace = policy_.preemption.checkpoint_grace_s;
  if (grace > 0 && job.checkpointing.interval_s > 0 &&
      job.checkpointing.checkpoint_cost_s <= grace) {
    lost_s = std::min(lost_s, job.checkpointing.checkpoint_cost_s);
  }
  const int64_t seconds = SaturatingAdd(lost_s, job.checkpointing.restore_time_s);
  cost_cache_[v] = SaturatingMultiply(state_.running_milli(v), seconds);
  return cost_cache_[v];
}

bool PreemptionPlanner::BudgetLeft() const {
  const int64_t budget = policy_.budgets.max_preemption_plans;
  return budget <= 0 || counters_.preemption_plans < budget;
}

std::vector<int32_t> PreemptionPlanner::Candidates(int32_t j) const {
  const JobInfo& info = index_.job(j);
  std::vector<int32_t> out;
  if (info.queue == kNone) return out;
  const int64_t now = index_.snapshot().now;
  const int32_t any = index_.any_model_slot();
  for (int32_t q = 0; q < index_.queue_count(); ++q) {
    const bool own = q == info.queue;
    if (!own && !policy_.preemption.reclaim_across_queues) continue;
    if (!own) {
      // Only queues whose side holds more than its entitlement can give anything back.
      const int32_t side = Side(q, info.queue);
      if (side == kNone || Side(info.queue, q) == kNone) continue;
      if (state_.queue_usage(side, any) <= entitlements_.entitlement(side, any)) continue;
    }
    for (int32_t v : running_by_queue_[q]) {
      const Job& victim = *index_.job(v).job;
      if (evicted_[v] || !victim.preemptible) continue;
      if (own && victim.priority >= info.job->priority) continue;
      if (now - victim.start_time.value_or(now) < victim.min_runtime_s) continue;
      if (state_.running_milli(v) == 0 && info.needs_gpu) continue;
      out.push_back(v);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<std::vector<ReplicaPlacement>> PreemptionPlanner::Simulate(
    int32_t j, const std::vector<int32_t>& victims, int64_t& plans) {
  ++plans;
  const WorkingState::Mark mark = state_.Checkpoint();
  for (int32_t v : victims) state_.ReleaseRunningJob(v);
  auto placements = placer_.TryStart(j);
  state_.Rollback(mark);
  return placements;
}

std::optional<PreemptionPlanner::Plan> PreemptionPlanner::TryPreempt(int32_t j) {
  std::vector<int32_t> candidates = Candidates(j);
  if (candidates.empty() || !BudgetLeft()) return std::nullopt;
  std::vector<int64_t> cost(index_.job_count(), 0);
  for (int32_t v : candidates) cost[v] = VictimCost(v);
  auto priority = [this](int32_t v) { return index_.job(v).job->priority; };
  const bool priority_first = policy_.preemption.victim_order == VictimOrder::kLowestPriorityFirst;
  // In the policy's order: (priority, cost) or (cost, priority); ties by id (dense index order).
  std::stable_sort(candidates.begin(), candidates.end(), [&](int32_t a, int32_t b) {
    if (priority_first && priority(a) != priority(b)) return priority(a) < priority(b);
    if (cost[a] != cost[b]) return cost[a] < cost[b];
    return priority(a) < priority(b);
  });

  // Evicting every candidate is the most that can be freed: if that is not enough, stop. (A
  // set the rules forbid may still free enough; its allowed subsets are searched below.)
  if (!Simulate(j, candidates)) return std::nullopt;

  std::vector<int32_t> chosen;
  if (static_cast<int>(candidates.size()) <= kExactCandidates) {
    // Every subset, in the policy's victim order.
    struct Subset {
      int32_t top_priority;  // the highest priority among the victims
      int64_t cost;
      int32_t count;
      std::vector<int32_t> victims;  // sorted by index
    };
    std::vector<Subset> subsets;
    const uint32_t n = static_cast<uint32_t>(candidates.size());
    for (uint32_t mask = 1; mask < (1u << n); ++mask) {
      Subset s{std::numeric_limits<int32_t>::min(), 0, 0, {}};
      for (uint32_t i = 0; i < n; ++i) {
        if (mask & (1u << i)) {
          s.top_priority = std::max(s.top_priority, priority(candidates[i]));
          s.cost = SaturatingAdd(s.cost, cost[candidates[i]]);
          ++s.count;
          s.victims.push_back(candidates[i]);
        }
      }
      std::sort(s.victims.begin(), s.victims.end());
      subsets.push_back(std::move(s));
    }
    std::sort(subsets.begin(), subsets.end(), [priority_first](const Subset& a, const Subset& b) {
      if (priority_first && a.top_priority != b.top_priority) {
        return a.top_priority < b.top_priority;
      }
      if (a.cost != b.cost) return a.cost < b.cost;
      if (a.count != b.count) return a.count < b.count;
      if (a.top_priority != b.top_priority) return a.top_priority < b.top_priority;
      return a.victims < b.victims;
    });
    std::vector<int32_t> all = candidates;
    std::sort(all.begin(), all.end());
    for (const Subset& s : subsets) {
      if (!PlanAllowed(j, s.victims)) continue;
      if (s.victims == all) {  // known to free enough
        chosen = all;
        break;
      }
      if (!BudgetLeft()) {
        counters_.budget_exhausted = true;
        break;
      }
      if (Simulate(j, s.victims)) {
        chosen = s.victims;
        break;
      }
    }
    if (chosen.empty()) return std::nullopt;
  } else {
    // Greedy: cheapest first (skipping victims the rules forbid) until the job fits, then drop
    // what is not needed.
    bool fits = false;
    for (int32_t v : candidates) {
      chosen.push_back(v);
      if (!PlanAllowed(j, chosen)) {
        chosen.pop_back();
        continue;
      }
      if (!BudgetLeft()) {
        counters_.budget_exhausted = true;
        break;
      }
      if (Simulate(j, chosen)) {
        fits = true;
        break;
      }
    }
    if (!fits) return std::nullopt;
    for (size_t i = chosen.size(); i-- > 0;) {
      if (chosen.size() == 1 || !BudgetLeft()) break;
      std::vector<int32_t> without = chosen;
      without.erase(without.begin() + static_cast<std::ptrdiff_t>(i));
      if (PlanAllowed(j, without) && Simulate(j, without)) chosen = std::move(without);
    }
    std::sort(chosen.begin(), chosen.end());
  }

  // The decisions, worded with the state before the plan.
  Plan plan;
  const Job& job = *index_.job(j).job;
  const int32_t any = index_.any_model_slot();
  for (int32_t v : chosen) {
    const Job& victim = *index_.job(v).job;
    PreemptDecision decision;
    decision.job = victim.id;
    decision.for_job = job.id;
    if (victim.queue == job.queue) {
      decision.reason =
          fmt::format("job {} (priority {}) of the same queue {} outranks it (priority {})", job.id,
                      job.priority, job.queue, victim.priority);
    } else {
      const int32_t side = Side(index_.job(v).queue, index_.job(j).queue);
      decision.reason = fmt::format(
          "queue {} holds {} milli-GPUs, above its entitlement of {}; job {} of queue {} "
          "reclaims",
          index_.queue(side).id, state_.queue_usage(side, any),
          entitlements_.entitlement(side, any), job.id, job.queue);
    }
    decision.lost_milli_gpu_seconds = cost[v];
    plan.preemptions.push_back(std::move(decision));
  }

  // Evict for real, then place (the same steps the simulation took, so it places).
  const WorkingState::Mark mark = state_.Checkpoint();
  for (int32_t v : chosen) state_.ReleaseRunningJob(v);
  auto placements = placer_.TryStart(j);
  if (!placements) {
    state_.Rollback(mark);
    return std::nullopt;
  }
  for (int32_t v : chosen) evicted_[v] = true;
  counters_.preemptions += static_cast<int64_t>(chosen.size());
  plan.placements = std::move(*placements);
  return plan;
}

std::string PreemptionPlanner::WhyKept(int32_t j, int32_t v) const {
  const Job& job = *index_.job(j).job;
  const Job& victim = *index_.job(v).job;
  if (victim.queue == job.queue) {
    if (victim.priority >= job.priority) {
      return fmt::format("{} has priority {}, not below {}", victim.id, victim.priority,
                         job.priority);
    }
    return {};
  }
  if (!policy_.preemption.reclaim_across_queues) {
    return fmt::format("{} is in queue {} and reclaim_across_queues is off", victim.id,
                       victim.queue);
  }
  if (PlanAllowed(j, {v})) return {};
  const int32_t side = Side(index_.job(v).queue, index_.job(j).queue);
  if (side == kNone || Side(index_.job(j).queue, index_.job(v).queue) == kNone) {
    return fmt::format("{} is in queue {}, an ancestor or descendant of {}", victim.id,
                       victim.queue, job.queue);
  }
  const int32_t any = index_.any_model_slot();
  const int64_t usage = state_.queue_usage(side, any);
  const int64_t entitlement = entitlements_.entitlement(side, any);
  if (usage <= entitlement) {
    return fmt::format("queue {} holds {} milli-GPUs, not above its entitlement of {}",
                       index_.queue(side).id, usage, entitlement);
  }
  return fmt::format(
      "evicting {} would break the guarantee of queue {} (guaranteed {}) or leave {} further "
      "above its entitlement than {}",
      victim.id, index_.queue(side).id, GuaranteeTotal(side), job.queue, index_.queue(side).id);
}

void PreemptionPlanner::ExplainCounterfactual(int32_t j, PendingDecision& pending) {
  const int64_t budget = policy_.budgets.max_counterfactual_plans;
  if (budget <= 0 || counters_.counterfactual_plans >= budget) return;
  const JobInfo& info = index_.job(j);
  if (!counterfactual_pool_built_) {
    counterfactual_pool_built_ = true;
    const int64_t now = index_.snapshot().now;
    for (int32_t q = 0; q < index_.queue_count(); ++q) {
      for (int32_t v : running_by_queue_[q]) {
        const Job& victim = *index_.job(v).job;
        if (!victim.preemptible) continue;
        if (now - victim.start_time.value_or(now) < victim.min_runtime_s) continue;
        counterfactual_pool_.push_back(v);
      }
    }
    std::sort(counterfactual_pool_.begin(), counterfactual_pool_.end(),
              [this](int32_t a, int32_t b) {
                const int64_t ca = VictimCost(a), cb = VictimCost(b);
                return ca != cb ? ca < cb : a < b;
              });
  }
  // The cheapest usable ones, at most this many, so the search stays small.
  constexpr size_t kMostVictims = 64;
  std::vector<int32_t> sorted;
  for (int32_t v : counterfactual_pool_) {
    if (sorted.size() == kMostVictims) break;
    if (evicted_[v] || (state_.running_milli(v) == 0 && info.needs_gpu)) continue;
    sorted.push_back(v);
  }
  if (sorted.empty()) return;
  // The shortest prefix that lets the job start, by binary search (fitting is monotone in
  // practice: evicting more never takes room away).
  auto fits = [&](size_t k) {
    return Simulate(j, std::vector<int32_t>(sorted.begin(), sorted.begin() + k),
                    counters_.counterfactual_plans)
        .has_value();
  };
  if (!fits(sorted.size())) return;
  size_t lo = 0, hi = sorted.size();  // fits(hi), !fits(lo) as far as known
  while (hi - lo > 1 && counters_.counterfactual_plans < budget) {
    const size_t mid = lo + (hi - lo) / 2;
    if (fits(mid)) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  std::vector<int32_t> victims(sorted.begin(), sorted.begin() + hi);
  std::sort(victims.begin(), victims.end());
  int64_t lost = 0;
  std::string why;
  for (int32_t v : victims) {
    pending.would_preempt.push_back(index_.job(v).job->id);
    lost += VictimCost(v);
    if (!policy_.preemption.enabled) continue;
    const std::string kept = WhyKept(j, v);
    if (!kept.empty() && why.empty()) why = kept;
  }
  if (!policy_.preemption.enabled) {
    why = "preemption is off in this policy";
  } else if (why.empty()) {
    why = counters_.budget_exhausted ? "the preemption budget ran out"
                                     : "no plan the rules allow was found";
  }
  std::string names;
  for (const std::string& name : pending.would_preempt) {
    names += names.empty() ? name : ", " + name;
  }
  pending.counterfactual = fmt::format(
      "would start now if {} were preempted (losing {} milli-GPU-seconds of work), but {}", names,
      lost, why);
}

}  // namespace gpupool::internal
