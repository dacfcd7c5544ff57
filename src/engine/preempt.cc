// Stage 6, the coordinator (see preempt.h): candidates, elastic shrinks, then the victim search,
// each plan simulated before anything is taken. The rules live in victim_rules.cc, the search in
// victim_search.cc, the explanation of pending jobs in counterfactual.cc.
#include "preempt.h"

#include <algorithm>
#include <limits>

#include "fmt/format.h"
#include "internal/saturating.h"
#include "internal/shortest_prefix.h"
#include "lost_work.h"
#include "order.h"

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
      rules_(index, state, entitlements, policy),
      search_(index, state, rules_, policy, counters),
      counterfactual_(index, state, rules_, policy, counters),
      running_by_queue_(index.queue_count()) {
  for (int32_t j = 0; j < index.job_count(); ++j) {
    const JobInfo& info = index.job(j);
    if (info.job->state == JobState::kRunning && info.queue != kNone) {
      running_by_queue_[info.queue].push_back(j);
    }
  }
}

std::optional<PreemptionPlanner::Plan> PreemptionPlanner::TryPreempt(int32_t j) {
  std::vector<int32_t> candidates = Candidates(j);
  if (candidates.empty()) return std::nullopt;
  if (policy_.preemption.reclaim_across_queues) rules_.DropNeverAllowed(j, candidates);
  // Jobs on nodes held for a starving job's reservation stay (checked last: it is the dearest).
  std::erase_if(candidates,
                [this](int32_t v) { return !rules_.MayEvict(v) && !rules_.MayEvictRestored(v); });
  if (candidates.empty()) return std::nullopt;
  if (!BudgetLeft()) {
    counters_.budget_exhausted = true;
    return std::nullopt;
  }
  if (auto plan = TryShrink(j, candidates)) return plan;

  auto find = [&](std::vector<int32_t> among) {
    return search_.Find(j, std::move(among), [&](const std::vector<int32_t>& victims) {
      return Simulate(j, victims, counters_.preemption_plans);
    });
  };
  std::vector<int32_t> chosen = find(candidates);
  // A plan that takes victims of other queues counts those of j's own queue off j's side for
  // the cross-queue rules. One that would start again elsewhere once the plan is carried out
  // does not free anything for good: the plan is searched again without counting it, until the
  // chosen plan counts only victims that stay off (each round marks one more, so it ends).
  while (!chosen.empty()) {
    const std::vector<int32_t> restarting = OwnVictimsThatRestart(j, chosen);
    if (restarting.empty()) break;
    for (int32_t v : restarting) rules_.NoteRestarts(v);
    std::vector<int32_t> among = candidates;
    rules_.DropNeverAllowed(j, among);
    chosen = find(std::move(among));
  }
  rules_.ClearRestarts();
  if (chosen.empty()) return std::nullopt;
  Plan plan;
  plan.preemptions = PreemptDecisions(j, chosen);
  auto placements = Evict(j, chosen);
  if (!placements) return std::nullopt;
  counters_.preemptions += static_cast<int64_t>(chosen.size());
  plan.placements = std::move(*placements);
  return plan;
}

void PreemptionPlanner::ExplainCounterfactual(int32_t j, PendingDecision& pending) {
  counterfactual_.Explain(j, pending, [&](const std::vector<int32_t>& victims) {
    return Simulate(j, victims, counters_.counterfactual_plans);
  });
}

bool PreemptionPlanner::MayDrain(int32_t j, int32_t v, const std::vector<int32_t>& drained) const {
  const PreemptionOptions& options = policy_.preemption;
  if (!options.enabled) return false;
  // A job that started at this moment is not drained: not a start made earlier in the cycle
  // being settled (revoking it would leave whatever it evicted without a beneficiary), nor, so
  // that the next cycle at the same moment agrees, one the host has just applied.
  const int64_t now = index_.snapshot().now;
  const bool past_min_runtime =
      options.starving_drain_past_min_runtime && Starving(*index_.job(j).job, policy_, now);
  // A restored job goes once at most (VictimRules::MayEvictRestored).
  const bool restored = index_.restored(v);
  if (index_.tentative(v) || rules_.taken(v)) return false;
  if (restored ? !rules_.MayEvictRestored(v)
               : !(past_min_runtime ? rules_.MayEvictPastMinRuntime(v) : rules_.MayEvict(v))) {
    return false;
  }
  const Job& victim = *index_.job(v).job;
  if (victim.start_time.value_or(now) >= now || rules_.HeadroomKeeps(j, v) != nullptr) return false;
  const int32_t jq = index_.job(j).queue;
  const int32_t vq = index_.job(v).queue;
  if (jq == kNone || vq == kNone) return false;
  if (vq == jq) return rules_.Outranks(j, v);
  const bool outranked = rules_.VictimPriority(v) < rules_.PreemptorPriority(j);
  if (!options.reclaim_across_queues || (options.reclaim_lower_priority_only && !outranked)) {
    return false;
  }
  std::vector<int32_t> plan = drained;
  plan.push_back(v);
  return rules_.PlanAllowed(j, plan);
}

int64_t PreemptionPlanner::DrainableFrom(int32_t j, int32_t v) const {
  const PreemptionOptions& options = policy_.preemption;
  constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
  if (!options.enabled || rules_.taken(v)) return kNever;
  const int32_t jq = index_.job(j).queue;
  if (jq == kNone || index_.job(v).queue != jq) return kNever;
  // A start an earlier pass of the cycle made counts as the next cycle will count it, running
  // since now: with its own priority (not the rank it started with, which may be a starving
  // job's), from when it may go. A restored job that may not yield again, never.
  if (!rules_.OutranksOnceRunning(j, v) || rules_.HeadroomKeeps(j, v) != nullptr) return kNever;
  if (index_.restored(v) && !rules_.RestoredMayYield(v)) return kNever;
  return EligibleVictimFrom(*index_.job(v).job, index_.snapshot().now, policy_);
}

std::vector<int32_t> PreemptionPlanner::Candidates(int32_t j) const {
  const JobInfo& info = index_.job(j);
  std::vector<int32_t> out;
  if (info.queue == kNone) return out;
  const int64_t priority = rules_.PreemptorPriority(j);
  auto consider = [&](int32_t v, bool own) {
    // Nodes held for reservations, and a restored job's other rules: TryPreempt().
    if (rules_.taken(v) || !(rules_.MayEverEvict(v) || rules_.RestoredMayYield(v))) {
      return;
    }
    if (own && !rules_.Outranks(j, v)) return;
    if ((info.needs_gpu && rules_.Milli(v) == 0) || rules_.HeadroomKeeps(j, v) != nullptr) return;
    out.push_back(v);
  };
  if (!policy_.preemption.reclaim_across_queues) {
    for (int32_t v : running_by_queue_[info.queue]) consider(v, true);  // in id order
    return out;
  }
  // Queues whose jobs may go: the job's own (1), and those whose side holds more than its
  // entitlement (2: only they can give anything back). Then every running job, in id order.
  std::vector<uint8_t> open(index_.queue_count(), 0);
  for (int32_t q = 0; q < index_.queue_count(); ++q) {
    if (q == info.queue) {
      open[q] = 1;
    } else if (rules_.SideAboveEntitlement(q, info.queue)) {
      open[q] = 2;
    }
  }
  if (!running_built_) {
    running_built_ = true;
    for (int32_t v = 0; v < index_.job_count(); ++v) {
      const JobInfo& vi = index_.job(v);
      if (vi.job->state != JobState::kRunning || vi.queue == kNone ||
          !(rules_.MayEverEvict(v) || rules_.RestoredMayYield(v))) {
        continue;
      }
      running_.push_back(v);
      running_queue_.push_back(vi.queue);
    }
  }
  for (size_t k = 0; k < running_.size(); ++k) {
    const uint8_t o = open[running_queue_[k]];
    if (o == 2) {
      const int32_t v = running_[k];
      if (policy_.preemption.reclaim_lower_priority_only && rules_.VictimPriority(v) >= priority) {
        continue;
      }
      if (!rules_.taken(v) && (!info.needs_gpu || rules_.Milli(v) > 0) &&
          rules_.HeadroomKeeps(j, v) == nullptr) {
        out.push_back(v);
      }
    } else if (o == 1) {
      consider(running_[k], true);
    }
  }
  return out;
}

std::optional<PreemptionPlanner::Plan> PreemptionPlanner::TryShrink(
    int32_t j, const std::vector<int32_t>& candidates) {
  // Units: one per elastic group of a same-queue candidate running above its minimum, shrunk to
  // its minimum. Across queues the rules are stated for whole jobs, so only whole jobs go there.
  struct Unit {
    int64_t cost;
    int32_t victim, group, from, to;
  };
  std::vector<Unit> units;
  const int32_t jq = index_.job(j).queue;
  for (int32_t v : candidates) {
    if (index_.job(v).queue != jq) continue;
    const Job& victim = *index_.job(v).job;
    const size_t before = units.size();
    for (int32_t g = 0; g < static_cast<int32_t>(victim.groups.size()); ++g) {
      const int32_t running = state_.running_replicas(v, g);
      const int32_t keep = victim.groups[g].MinReplicas();
      if (running <= keep) continue;
      const int64_t milli = SaturatingMultiply(victim.groups[g].request.gpu_milli, running - keep);
      const int64_t seconds =
          SaturatingAdd(rules_.LostSeconds(v), victim.checkpointing.restore_time_s);
      units.push_back(Unit{SaturatingMultiply(milli, seconds), v, g, running, keep});
    }
    // The working state shrinks a job once per cycle, so a candidate with two groups above their
    // minimum sends the job to the whole-job search.
    if (units.size() > before + 1) return std::nullopt;
  }
  if (units.empty()) return std::nullopt;
  std::sort(units.begin(), units.end(), [](const Unit& a, const Unit& b) {
    return a.cost != b.cost       ? a.cost < b.cost
           : a.victim != b.victim ? a.victim < b.victim
                                  : a.group < b.group;
  });
  // The shortest prefix, cheapest first, that lets the job start.
  auto shrink = [&](size_t k) {
    for (size_t i = 0; i < k; ++i) {
      state_.ShrinkRunningGroup(units[i].victim, units[i].group, units[i].to);
    }
  };
  auto fits = [&](size_t k) {
    ++counters_.preemption_plans;
    const WorkingState::Mark mark = state_.Checkpoint();
    shrink(k);
    const bool placed = placer_.TryStart(j).has_value();
    state_.Rollback(mark);
    return placed;
  };
  if (!fits(units.size())) return std::nullopt;
  const size_t hi = ShortestWorkingPrefix(units.size(), fits, [this] { return BudgetLeft(); });
  const WorkingState::Mark mark = state_.Checkpoint();
  shrink(hi);
  auto placements = placer_.TryStart(j);
  if (!placements) {
    state_.Rollback(mark);
    return std::nullopt;
  }
  Plan plan;
  const Job& job = *index_.job(j).job;
  for (size_t i = 0; i < hi; ++i) {
    const Unit& u = units[i];
    const Job& victim = *index_.job(u.victim).job;
    plan.resizes.push_back(ResizeDecision{.job = victim.id,
                                          .group = victim.groups[u.group].name,
                                          .from_replicas = u.from,
                                          .to_replicas = u.to,
                                          .for_job = job.id,
                                          .lost_milli_gpu_seconds = u.cost});
    rules_.NoteTaken(u.victim);
  }
  std::sort(plan.resizes.begin(), plan.resizes.end(),
            [](const ResizeDecision& a, const ResizeDecision& b) {
              return a.job != b.job ? a.job < b.job : a.group < b.group;
            });
  counters_.resizes += static_cast<int64_t>(hi);
  plan.placements = std::move(*placements);
  return plan;
}

std::vector<PreemptDecision> PreemptionPlanner::PreemptDecisions(
    int32_t j, const std::vector<int32_t>& victims) const {
  std::vector<PreemptDecision> decisions;
  const Job& job = *index_.job(j).job;
  const int32_t any = index_.any_model_slot();
  for (int32_t v : victims) {
    const Job& victim = *index_.job(v).job;
    PreemptDecision decision;
    decision.job = victim.id;
    decision.for_job = job.id;
    if (victim.queue == job.queue && victim.priority == job.priority &&
        !Starving(job, policy_, index_.snapshot().now) && rules_.TakesBack(j, v)) {
      decision.reason = fmt::format(
          "job {} of the same queue {} and priority {} was submitted before it and needs more "
          "GPUs than it holds (preemption.take_back_from_gpus)",
          job.id, job.queue, victim.priority);
    } else if (victim.queue == job.queue && victim.priority >= job.priority) {
      decision.reason = fmt::format(
          "job {} of the same queue {} has waited past the starvation bound and outranks it "
          "(priority {})",
          job.id, job.queue, victim.priority);
    } else if (victim.queue == job.queue) {
      decision.reason =
          fmt::format("job {} (priority {}) of the same queue {} outranks it (priority {})", job.id,
                      job.priority, job.queue, victim.priority);
    } else {
      const int32_t side = rules_.Side(index_.job(v).queue, index_.job(j).queue);
      decision.reason = fmt::format(
          "queue {} holds {} milli-GPUs, above its entitlement of {}; job {} of queue {} "
          "reclaims",
          index_.queue(side).id, state_.queue_usage(side, any),
          entitlements_.entitlement(side, any), job.id, job.queue);
    }
    decision.lost_milli_gpu_seconds = rules_.VictimCost(v);
    decisions.push_back(std::move(decision));
  }
  return decisions;
}

std::optional<std::vector<ReplicaPlacement>> PreemptionPlanner::Evict(
    int32_t j, const std::vector<int32_t>& victims) {
  const WorkingState::Mark mark = state_.Checkpoint();
  for (int32_t v : victims) state_.ReleaseRunningJob(v);
  auto placements = placer_.TryStart(j);
  if (!placements) {
    state_.Rollback(mark);
    return std::nullopt;
  }
  for (int32_t v : victims) rules_.NoteTaken(v);
  return placements;
}

std::vector<int32_t> PreemptionPlanner::OwnVictimsThatRestart(int32_t j,
                                                              const std::vector<int32_t>& victims) {
  std::vector<int32_t> out;
  if (!policy_.preemption.reclaim_across_queues) return out;
  const int32_t jq = index_.job(j).queue;
  auto own = [&](int32_t v) { return index_.job(v).queue == jq; };
  if (std::all_of(victims.begin(), victims.end(), own) ||
      std::none_of(victims.begin(), victims.end(), own)) {
    return out;
  }
  const Placer::LimitsFound found = placer_.limits_found();
  const WorkingState::Mark mark = state_.Checkpoint();
  for (int32_t v : victims) state_.ReleaseRunningJob(v);
  if (placer_.TryStart(j)) {
    for (int32_t v : victims) {
      if (!own(v) || rules_.restarts(v)) continue;
      const WorkingState::Mark before = state_.Checkpoint();
      if (placer_.TryStart(v)) out.push_back(v);
      state_.Rollback(before);
    }
  }
  state_.Rollback(mark);
  placer_.set_limits_found(found);
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

}  // namespace gpupool::internal
