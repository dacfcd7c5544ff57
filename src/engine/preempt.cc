#include "preempt.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "fmt/format.h"
#include "internal/check.h"
#include "internal/saturating.h"
#include "internal/shortest_prefix.h"

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
      running_by_queue_(index.queue_count()),
      queue_depth_(index.queue_count(), 0) {
  for (int32_t j = 0; j < index.job_count(); ++j) {
    const JobInfo& info = index.job(j);
    if (info.job->state == JobState::kRunning && info.queue != kNone) {
      running_by_queue_[info.queue].push_back(j);
    }
  }
  for (int32_t q = 0; q < index.queue_count(); ++q) {
    for (int32_t a = index.queue_parent(q); a != kNone; a = index.queue_parent(a)) {
      ++queue_depth_[q];
    }
  }
}

int32_t PreemptionPlanner::Side(int32_t q, int32_t other) const {
  // Climb to equal depths, then together to the lowest common ancestor, remembering the last
  // queue on q's path below it.
  int32_t a = q, b = other;
  int32_t depth_a = queue_depth_[q], depth_b = queue_depth_[other];
  int32_t child = kNone;
  for (; depth_a > depth_b; --depth_a) {
    child = a;
    a = index_.queue_parent(a);
  }
  for (; depth_b > depth_a; --depth_b) b = index_.queue_parent(b);
  while (a != b) {  // different trees meet at kNone: the roots are the sides
    child = a;
    a = index_.queue_parent(a);
    b = index_.queue_parent(b);
  }
  return child;  // kNone when q itself is the ancestor
}

int64_t PreemptionPlanner::GuaranteeTotal(int32_t q) const {
  if (guarantee_total_.empty()) guarantee_total_.assign(index_.queue_count(), -1);
  if (guarantee_total_[q] >= 0) return guarantee_total_[q];
  int64_t per_model = 0;
  for (int32_t m = 0; m < index_.model_count(); ++m) {
    per_model += entitlements_.guaranteed(q, m);
  }
  guarantee_total_[q] = std::max(per_model, entitlements_.guaranteed(q, index_.any_model_slot()));
  return guarantee_total_[q];
}

std::pair<int32_t, int32_t> PreemptionPlanner::Sides(int32_t vq, int32_t jq) const {
  if (jq != sides_for_) {
    sides_for_ = jq;
    sides_.assign(index_.queue_count(), {kNone - 1, kNone - 1});
  }
  if (sides_[vq].first == kNone - 1) sides_[vq] = {Side(vq, jq), Side(jq, vq)};
  return sides_[vq];
}

bool PreemptionPlanner::TallyAdd(int32_t j, int32_t v, RuleTally& tally) const {
  const int32_t jq = index_.job(j).queue;
  const int32_t vq = index_.job(v).queue;
  const int64_t milli = Milli(v);
  if (vq == jq) {
    tally.own_freed += milli;
    return true;
  }
  const auto [side, mine] = Sides(vq, jq);
  if (side == kNone || mine == kNone) return false;
  // One comparison per plan: victims of other queues all under one sibling of the job's side.
  if (tally.cross > 0 && mine != tally.job_side) return false;
  tally.job_side = mine;
  ++tally.cross;
  auto it = std::find_if(tally.taken.begin(), tally.taken.end(),
                         [side](const RuleTally::Taken& t) { return t.side == side; });
  if (it == tally.taken.end()) {
    tally.taken.push_back({side, milli, 1});
  } else {
    it->milli += milli;
    ++it->victims;
  }
  return true;
}

void PreemptionPlanner::TallyRemove(int32_t j, int32_t v, RuleTally& tally) const {
  const int32_t jq = index_.job(j).queue;
  const int32_t vq = index_.job(v).queue;
  const int64_t milli = Milli(v);
  if (vq == jq) {
    tally.own_freed -= milli;
    return;
  }
  const int32_t side = Sides(vq, jq).first;
  auto it = std::find_if(tally.taken.begin(), tally.taken.end(),
                         [side](const RuleTally::Taken& t) { return t.side == side; });
  GPUPOOL_CHECK(it != tally.taken.end());
  it->milli -= milli;
  if (--it->victims == 0) tally.taken.erase(it);
  if (--tally.cross == 0) tally.job_side = kNone;
}

bool PreemptionPlanner::TallyAllows(int32_t j, const RuleTally& tally) const {
  if (tally.taken.empty()) return true;  // only own-queue victims: the priority rule holds
  const JobInfo& info = index_.job(j);
  const int32_t any = index_.any_model_slot();
  const int32_t job_side = tally.job_side;
  const int64_t job_usage_after =
      state_.queue_usage(job_side, any) + info.gang_milli - tally.own_freed;
  const int64_t job_over = job_usage_after - entitlements_.entitlement(job_side, any);
  const bool borrowing = job_usage_after > GuaranteeTotal(job_side);
  for (const RuleTally::Taken& t : tally.taken) {
    const int64_t usage = state_.queue_usage(t.side, any);
    const int64_t entitlement = entitlements_.entitlement(t.side, any);
    const int64_t guarantee = GuaranteeTotal(t.side);
    if (usage <= entitlement) return false;
    if (borrowing ? usage - t.milli < guarantee : usage <= guarantee) return false;
    if (job_over > usage - t.milli - entitlement) return false;
  }
  return true;
}

bool PreemptionPlanner::PlanAllowed(int32_t j, const std::vector<int32_t>& victims) const {
  RuleTally tally;
  for (int32_t v : victims) {
    if (!TallyAdd(j, v, tally)) return false;
  }
  return TallyAllows(j, tally);
}

int64_t PreemptionPlanner::KeptUpTo(int32_t v) const {
  const Job& job = *index_.job(v).job;
  const int64_t start = job.start_time.value_or(index_.snapshot().now);
  return std::max(start, job.checkpointing.last_checkpoint_time.value_or(start));
}

int64_t PreemptionPlanner::LostSeconds(int32_t v) const {
  const Job& job = *index_.job(v).job;
  int64_t lost_s = std::max<int64_t>(0, index_.snapshot().now - KeptUpTo(v));
  const int64_t grace = policy_.preemption.checkpoint_grace_s;
  if (grace > 0 && job.checkpointing.interval_s > 0 &&
      job.checkpointing.checkpoint_cost_s <= grace) {
    lost_s = std::min(lost_s, job.checkpointing.checkpoint_cost_s);
  }
  return lost_s;
}

int64_t PreemptionPlanner::PreemptorPriority(int32_t j) const {
  const Job& job = *index_.job(j).job;
  // Past the starvation bound a job outranks every running job of its queue (order.h).
  if (policy_.preemption.starving_outrank && Starving(job, policy_, index_.snapshot().now)) {
    return std::numeric_limits<int64_t>::max();
  }
  return job.priority;
}

bool PreemptionPlanner::MayEvict(int32_t v) const {
  return Evictable(v) && !state_.OnHeldNode(v);  // held for a starving job's reservation
}

bool PreemptionPlanner::Evictable(int32_t v) const {
  if (may_evict_.empty()) may_evict_.assign(index_.job_count(), -1);
  if (may_evict_[v] < 0) may_evict_[v] = MayEverEvict(v) ? 1 : 0;
  return may_evict_[v] != 0;
}

bool PreemptionPlanner::MayEverEvict(int32_t v) const {
  const Job& victim = *index_.job(v).job;
  const int64_t now = index_.snapshot().now;
  const int64_t ran = now - victim.start_time.value_or(now);
  if (!victim.preemptible || ran < victim.min_runtime_s) return false;
  if (ran < policy_.preemption.min_victim_run_s) return false;
  const int64_t most_lost = policy_.preemption.max_victim_lost_s;
  return most_lost <= 0 || LostSeconds(v) <= most_lost;
}

int64_t PreemptionPlanner::VictimCost(int32_t v) const {
  if (cost_cache_[v] >= 0) return cost_cache_[v];
  const Job& job = *index_.job(v).job;
  const int64_t seconds = SaturatingAdd(LostSeconds(v), job.checkpointing.restore_time_s);
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
  const int32_t any = index_.any_model_slot();
  const int64_t priority = PreemptorPriority(j);
  auto consider = [&](int32_t v, bool own) {
    const Job& victim = *index_.job(v).job;
    if (evicted_[v] || !Evictable(v)) return;  // nodes held for reservations: TryPreempt()
    if (own && victim.priority >= priority) return;
    if (info.needs_gpu && Milli(v) == 0) return;
    out.push_back(v);
  };
  if (!policy_.preemption.reclaim_across_queues) {
    for (int32_t v : running_by_queue_[info.queue]) consider(v, true);  // in id order
    return out;
  }
  // Queues whose jobs may go: the job's own, and those whose side holds more than its
  // entitlement (only they can give anything back). Then every running job, in id order.
  std::vector<uint8_t> open(index_.queue_count(), 0);
  for (int32_t q = 0; q < index_.queue_count(); ++q) {
    if (q == info.queue) {
      open[q] = 1;
      continue;
    }
    const auto [side, mine] = Sides(q, info.queue);
    if (side == kNone || mine == kNone) continue;
    if (state_.queue_usage(side, any) > entitlements_.entitlement(side, any)) open[q] = 2;
  }
  if (!running_built_) {
    running_built_ = true;
    for (int32_t v = 0; v < index_.job_count(); ++v) {
      const JobInfo& vi = index_.job(v);
      if (vi.job->state != JobState::kRunning || vi.queue == kNone || !Evictable(v)) continue;
      running_.push_back(v);
      running_queue_.push_back(vi.queue);
    }
  }
  for (size_t k = 0; k < running_.size(); ++k) {
    const uint8_t o = open[running_queue_[k]];
    if (o == 2) {
      const int32_t v = running_[k];
      if (policy_.preemption.reclaim_lower_priority_only &&
          index_.job(v).job->priority >= priority) {
        continue;
      }
      if (!evicted_[v] && (!info.needs_gpu || Milli(v) > 0)) out.push_back(v);
    } else if (o == 1) {
      consider(running_[k], true);
    }
  }
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
  if (candidates.empty()) return std::nullopt;
  if (policy_.preemption.reclaim_across_queues) {
    // A victim of another queue can be in an allowed plan only if the rules allow taking it
    // alone together with every candidate of the job's own queue (which only loosens them:
    // dropping other victims of other queues loosens them too).
    // That is: at most a cap per side, the same for every victim of the side.
    const JobInfo& info = index_.job(j);
    const int32_t jq = info.queue;
    const int32_t any = index_.any_model_slot();
    int64_t own_freed = 0;
    for (int32_t v : candidates) {
      if (index_.job(v).queue == jq) own_freed += Milli(v);
    }
    constexpr int64_t kUnknown = std::numeric_limits<int64_t>::min();
    std::vector<int64_t> cap(index_.queue_count(), kUnknown);
    std::erase_if(candidates, [&](int32_t v) {
      const int32_t vq = index_.job(v).queue;
      if (vq == jq) return false;
      const auto [side, mine] = Sides(vq, jq);
      if (side == kNone || mine == kNone) return true;
      if (cap[side] == kUnknown) {
        // TallyAllows() for one victim of `side`, solved for its milli-GPUs.
        const int64_t job_after = state_.queue_usage(mine, any) + info.gang_milli - own_freed;
        const int64_t job_over = job_after - entitlements_.entitlement(mine, any);
        const bool borrowing = job_after > GuaranteeTotal(mine);
        const int64_t usage = state_.queue_usage(side, any);
        const int64_t entitlement = entitlements_.entitlement(side, any);
        const int64_t guarantee = GuaranteeTotal(side);
        int64_t most = usage - entitlement - job_over;  // no loops
        if (borrowing) most = std::min(most, usage - guarantee);
        if (usage <= entitlement || (!borrowing && usage <= guarantee)) most = -1;
        cap[side] = most;
      }
      return Milli(v) > cap[side];
    });
  }
  // Jobs on nodes held for a starving job's reservation stay (checked last: it is the dearest).
  std::erase_if(candidates, [this](int32_t v) { return state_.OnHeldNode(v); });
  if (candidates.empty()) return std::nullopt;
  if (!BudgetLeft()) {
    counters_.budget_exhausted = true;
    return std::nullopt;
  }
  if (auto plan = TryShrink(j, candidates)) return plan;
  if (holdings_.empty()) BuildHoldings();
  const bool exact = static_cast<int>(candidates.size()) <= kExactCandidates;
  BuildScopes(j, candidates, exact);
  // Evicting every candidate is the most that can be freed: if no scope could then hold the
  // job, no plan can.
  if (candidates.empty() || !MayFit(candidates, /*mark_scopes=*/true)) return std::nullopt;
  const std::vector<int32_t> chosen =
      exact ? ExactSearch(j, std::move(candidates)) : HeuristicSearch(j, candidates);
  if (chosen.empty()) return std::nullopt;

  // The decisions, worded with the state before the plan.
  Plan plan;
  const Job& job = *index_.job(j).job;
  const int32_t any = index_.any_model_slot();
  for (int32_t v : chosen) {
    const Job& victim = *index_.job(v).job;
    PreemptDecision decision;
    decision.job = victim.id;
    decision.for_job = job.id;
    if (victim.queue == job.queue && victim.priority >= job.priority) {
      decision.reason = fmt::format(
          "job {} of the same queue {} has waited past the starvation bound and outranks it "
          "(priority {})",
          job.id, job.queue, victim.priority);
    } else if (victim.queue == job.queue) {
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
    decision.lost_milli_gpu_seconds = VictimCost(v);
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
      const int64_t seconds = SaturatingAdd(LostSeconds(v), victim.checkpointing.restore_time_s);
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
    evicted_[u.victim] = true;
  }
  std::sort(plan.resizes.begin(), plan.resizes.end(),
            [](const ResizeDecision& a, const ResizeDecision& b) {
              return a.job != b.job ? a.job < b.job : a.group < b.group;
            });
  counters_.preemptions += static_cast<int64_t>(hi);
  plan.placements = std::move(*placements);
  return plan;
}

// --- Search. ---
//
// Simulating a plan is a full TryStart(), so the search spends its effort on arithmetic first:
// per node, how many replicas of the job's largest group would fit once some candidates are gone
// (Fit), per scope whether the gang could fit at all (MayFit), and, above kExactCandidates
// candidates, one greedy plan per scope built from node-local steps; only the few best plans are
// simulated. Everything is ordered by integers and dense indices.

bool PreemptionPlanner::KeyLess(const PlanKey& a, const PlanKey& b) const {
  if (PriorityFirst()) {
    return std::tie(a.top_priority, a.cost, a.count) < std::tie(b.top_priority, b.cost, b.count);
  }
  return std::tie(a.cost, a.count, a.top_priority) < std::tie(b.cost, b.count, b.top_priority);
}

bool PreemptionPlanner::CandidateLess(const Candidate& a, const Candidate& b) const {
  if (KeyLess(a.key, b.key)) return true;
  if (KeyLess(b.key, a.key)) return false;
  if (a.victims != b.victims) return a.victims < b.victims;
  return a.scope < b.scope;
}

bool PreemptionPlanner::VictimBefore(int32_t a, int32_t b) const {
  if (!victim_rank_.empty()) return victim_rank_[a] < victim_rank_[b];
  const int32_t pa = index_.job(a).job->priority, pb = index_.job(b).job->priority;
  const int64_t ca = VictimCost(a), cb = VictimCost(b);
  if (PriorityFirst()) return std::tie(pa, ca, a) < std::tie(pb, cb, b);
  return std::tie(ca, pa, a) < std::tie(cb, pb, b);
}

void PreemptionPlanner::AddToKey(PlanKey& key, int32_t v) const {
  key.cost = SaturatingAdd(key.cost, VictimCost(v));
  ++key.count;
  key.top_priority = std::max(key.top_priority, index_.job(v).job->priority);
}

void PreemptionPlanner::BuildHoldings() {
  holdings_.resize(index_.job_count());
  for (const std::vector<int32_t>& running : running_by_queue_) {
    for (int32_t v : running) {
      const Job& job = *index_.job(v).job;
      for (const ReplicaPlacement& placement : job.placements) {
        const int32_t n = index_.FindNode(placement.node);
        const int32_t group = index_.FindGroup(v, placement.group);
        GPUPOOL_CHECK(n != kNone && group != kNone);
        const ResourceRequest& request = job.groups[group].request;
        Holding holding{n, request.MilliPerGpu(), request.cpu_milli, request.memory_mib, {}};
        for (int32_t gpu_index : placement.gpus) {
          const int32_t g = index_.FindGpu(n, gpu_index);
          GPUPOOL_CHECK(g != kNone);
          holding.gpus.push_back(g);
        }
        holdings_[v].push_back(std::move(holding));
      }
    }
  }
  victim_milli_.assign(index_.job_count(), 0);
  victim_model_.assign(index_.job_count(), kNone);
  std::vector<int32_t> order;
  std::vector<int32_t> per_node(index_.node_count() + 1, 0);
  for (int32_t v = 0; v < index_.job_count(); ++v) {
    if (holdings_[v].empty()) continue;
    order.push_back(v);
    for (const Holding& holding : holdings_[v]) {
      victim_milli_[v] += holding.milli_per_gpu * static_cast<int64_t>(holding.gpus.size());
      const int32_t m = index_.node_model(holding.node);
      victim_model_[v] = victim_model_[v] == kNone || victim_model_[v] == m ? m : kMixedModels;
      ++per_node[holding.node + 1];
    }
  }
  std::sort(order.begin(), order.end(),
            [this](int32_t a, int32_t b) { return VictimBefore(a, b); });
  victim_rank_.assign(index_.job_count(), 0);
  for (size_t r = 0; r < order.size(); ++r) victim_rank_[order[r]] = static_cast<int32_t>(r);
  // Running jobs per node (once per node), in victim order.
  for (int32_t n = 0; n < index_.node_count(); ++n) per_node[n + 1] += per_node[n];
  node_jobs_begin_ = per_node;
  node_jobs_.assign(per_node.back(), kNone);
  for (int32_t v : order) {
    for (const Holding& holding : holdings_[v]) node_jobs_[per_node[holding.node]++] = v;
  }
  is_candidate_.assign(index_.job_count(), 0);
  freed_gpu_.assign(index_.gpu_count(), 0);
  freed_cpu_.assign(index_.node_count(), 0);
  freed_memory_.assign(index_.node_count(), 0);
  node_first_.assign(index_.node_count(), -1);
  node_end_.assign(index_.node_count(), -1);
  scope_pos_.assign(index_.node_count(), -1);
  chosen_.assign(index_.job_count(), 0);
}

bool PreemptionPlanner::Usable(int32_t j, int32_t n, int32_t model) const {
  const JobInfo& info = index_.job(j);
  if (!state_.node_open(n) || !index_.QueueMayUseNode(info.queue, n)) return false;
  if (need_.gpu_count == 0) return true;
  const int32_t m = index_.node_model(n);
  if (m == kNone) return false;
  if (model != kNone) return m == model;
  return std::find(info.models.begin(), info.models.end(), m) != info.models.end();
}

void PreemptionPlanner::BuildScopes(int32_t j, std::vector<int32_t>& candidates, bool exact) {
  const JobInfo& info = index_.job(j);
  for (int32_t n : touched_nodes_) node_first_[n] = node_end_[n] = -1;
  touched_nodes_.clear();
  node_victims_.clear();
  scopes_.clear();
  ClearFreed();

  // The largest group, as the placer orders groups: most milli-GPUs, then most CPU.
  const TaskGroup* largest = nullptr;
  const TaskGroup* constrained = nullptr;
  for (int32_t g : info.groups_by_name) {
    const TaskGroup& group = info.job->groups[g];
    if (largest == nullptr || group.request.gpu_milli > largest->request.gpu_milli ||
        (group.request.gpu_milli == largest->request.gpu_milli &&
         group.request.cpu_milli > largest->request.cpu_milli)) {
      largest = &group;
    }
    if (constrained == nullptr && group.topology.gang_level.has_value()) constrained = &group;
  }
  need_ = Need{};
  if (largest != nullptr) {
    const ResourceRequest& request = largest->request;
    need_.gpu_count = request.GpuCount();
    need_.milli_per_gpu = need_.gpu_count > 0 ? request.MilliPerGpu() : 0;
    need_.gpu_memory_mib = request.gpu_memory_mib;
    need_.cpu_milli = request.cpu_milli;
    need_.memory_mib = request.memory_mib;
    need_.replicas = largest->MinReplicas();
    need_.one_island = need_.milli_per_gpu >= kMilliPerGpu &&
                       largest->topology.replica_scope == ReplicaScope::kIsland &&
                       largest->topology.replica_strictness == Strictness::kRequired;
  }

  std::vector<int32_t> models = info.models;
  if (need_.gpu_count == 0) models = {kNone};
  // The limits the gang exceeds, per model, as the placer checks them.
  limits_.clear();
  for (int32_t m : models) {
    if (info.gang_milli <= 0) break;
    for (int32_t q = info.queue; q != kNone; q = index_.queue_parent(q)) {
      for (int32_t slot : {m, index_.any_model_slot()}) {
        if (slot == kNone) continue;
        const int64_t limit = index_.queue_limit(q, slot);
        if (limit == kNoLimit) continue;
        const int64_t over = state_.queue_usage(q, slot) + info.gang_milli - limit;
        if (over <= 0) continue;
        LimitNeed need{m, q, slot, over, std::vector<uint8_t>(index_.queue_count(), 0), {}};
        for (int32_t k = 0; k < index_.queue_count(); ++k) need.counts[k] = InSubtree(k, q);
        limits_.push_back(std::move(need));
      }
    }
  }
  // Above kExactCandidates, when every group needs GPUs: a candidate that holds nothing on a node
  // the job may use, and counts against no limit it would exceed, cannot help.
  const bool all_need_gpus =
      std::all_of(info.groups_by_name.begin(), info.groups_by_name.end(),
                  [&](int32_t g) { return info.job->groups[g].request.gpu_milli > 0; });
  if (all_need_gpus && !exact) {
    std::vector<int8_t> usable(index_.node_count(), -1);
    std::erase_if(candidates, [&](int32_t v) {
      for (const Holding& holding : holdings_[v]) {
        int8_t& u = usable[holding.node];
        if (u < 0) u = Usable(j, holding.node, kNone) ? 1 : 0;
        if (u) return false;
      }
      return std::none_of(limits_.begin(), limits_.end(),
                          [&](const LimitNeed& limit) { return Relief(v, limit) > 0; });
    });
  }
  for (LimitNeed& limit : limits_) {
    for (int32_t v : candidates) {
      if (Relief(v, limit) > 0) limit.relievers.push_back(v);
    }
    std::sort(limit.relievers.begin(), limit.relievers.end(),
              [this](int32_t a, int32_t b) { return victim_rank_[a] < victim_rank_[b]; });
  }

  // Candidates of each usable node, in victim order (a job on a node twice counts once).
  for (int32_t v : candidates) is_candidate_[v] = 1;
  for (int32_t v : candidates) {
    for (const Holding& holding : holdings_[v]) touched_nodes_.push_back(holding.node);
  }
  std::sort(touched_nodes_.begin(), touched_nodes_.end());
  touched_nodes_.erase(std::unique(touched_nodes_.begin(), touched_nodes_.end()),
                       touched_nodes_.end());
  std::erase_if(touched_nodes_, [&](int32_t n) { return !Usable(j, n, kNone); });
  for (int32_t n : touched_nodes_) {
    node_first_[n] = static_cast<int32_t>(node_victims_.size());
    for (int32_t k = node_jobs_begin_[n]; k < node_jobs_begin_[n + 1]; ++k) {
      const int32_t v = node_jobs_[k];
      if (is_candidate_[v] && (node_victims_.empty() || node_victims_.back() != v ||
                               static_cast<int32_t>(node_victims_.size()) == node_first_[n])) {
        node_victims_.push_back(v);
      }
    }
    node_end_[n] = static_cast<int32_t>(node_victims_.size());
  }
  for (int32_t v : candidates) is_candidate_[v] = 0;

  // Scopes: per accepted model, the domains of the gang level that hold candidates and, unless
  // the level is required, the whole pool.
  const int32_t level = info.gang_level;
  const bool required = level != kNone && constrained != nullptr &&
                        constrained->topology.gang_strictness == Strictness::kRequired;
  const int64_t replica_milli = need_.milli_per_gpu * need_.gpu_count;
  for (int32_t m : models) {
    const bool limited = std::any_of(limits_.begin(), limits_.end(),
                                     [m](const LimitNeed& limit) { return limit.model == m; });
    if (limited) {
      Scope scope;
      scope.model = m;
      scope.quota_only = true;
      scopes_.push_back(std::move(scope));
    }
    std::vector<int32_t> of_model;
    for (int32_t n : touched_nodes_) {
      if (m == kNone || index_.node_model(n) == m) of_model.push_back(n);
    }
    if (of_model.empty()) continue;
    if (level != kNone) {
      std::vector<std::pair<int32_t, int32_t>> by_domain;  // (domain, node)
      for (int32_t n : of_model) {
        const int32_t d = index_.node_domain(n, level);
        if (d != kNone) by_domain.emplace_back(d, n);
      }
      std::sort(by_domain.begin(), by_domain.end());
      for (size_t i = 0; i < by_domain.size();) {
        Scope scope;
        scope.model = m;
        scope.level = level;
        scope.domain = by_domain[i].first;
        for (; i < by_domain.size() && by_domain[i].first == scope.domain; ++i) {
          scope.nodes.push_back(by_domain[i].second);
        }
        for (int32_t n : index_.domain_nodes(level, scope.domain)) {
          if (node_first_[n] >= 0 || state_.node_free_gpu(n) < replica_milli) continue;
          if (Usable(j, n, m)) scope.untouched += Fit(n);
        }
        scope.untouched_known = scope.untouched;
        scopes_.push_back(std::move(scope));
      }
    }
    if (!required) {
      Scope scope;
      scope.model = m;
      scope.nodes = std::move(of_model);
      // Nodes without candidates: at most what their free milli-GPUs hold; and what the first
      // kLookedAt of them with room for a replica's milli-GPUs hold.
      constexpr int kLookedAt = 64;
      if (replica_milli > 0 && m != kNone) {
        scope.untouched = state_.model_free_gpu(m) / replica_milli;
        int looked_at = 0;
        const absl::btree_set<NodeKey>& ordered = state_.ordered_nodes(m);
        const int sign = state_.key_sign();
        auto it = sign > 0 ? ordered.lower_bound(
                                 NodeKey{replica_milli, std::numeric_limits<int64_t>::min(), 0})
                           : ordered.begin();
        for (; it != ordered.end() && looked_at < kLookedAt; ++it) {
          if (sign * it->gpu < replica_milli) break;  // spread: descending free capacity
          if (node_first_[it->node] >= 0 || !Usable(j, it->node, m)) continue;
          ++looked_at;
          scope.untouched_known += Fit(it->node);
        }
      } else {
        scope.untouched = std::numeric_limits<int32_t>::max();
      }
      scopes_.push_back(std::move(scope));
    }
  }
}

int64_t PreemptionPlanner::Fit(int32_t n) const {
  constexpr int64_t kMany = std::numeric_limits<int32_t>::max();
  int64_t fit = kMany;
  if (need_.cpu_milli > 0) {
    fit = std::min(fit, (state_.node_free_cpu(n) + freed_cpu_[n]) / need_.cpu_milli);
  }
  if (need_.memory_mib > 0) {
    fit = std::min(fit, (state_.node_free_memory(n) + freed_memory_[n]) / need_.memory_mib);
  }
  if (need_.gpu_count == 0 || fit <= 0) return std::max<int64_t>(fit, 0);
  if (index_.node_model(n) == kNone || need_.gpu_memory_mib > index_.gpu_memory_mib(n)) return 0;
  int64_t on_gpus = 0;
  if (need_.one_island) island_free_.assign(index_.island_count(n), 0);
  for (int32_t g = index_.gpu_begin(n); g < index_.gpu_end(n); ++g) {
    if (!index_.gpu_healthy(g)) continue;
    const int64_t free = state_.gpu_free_milli(g) + freed_gpu_[g];
    if (need_.milli_per_gpu < kMilliPerGpu) {
      on_gpus += free / need_.milli_per_gpu;
    } else if (free >= kMilliPerGpu) {
      ++(need_.one_island ? island_free_[index_.gpu_island(g)] : on_gpus);
    }
  }
  if (need_.one_island) {
    for (int64_t whole : island_free_) on_gpus += whole / need_.gpu_count;
  } else if (need_.milli_per_gpu >= kMilliPerGpu) {
    on_gpus /= need_.gpu_count;
  }
  return std::min(fit, on_gpus);
}

void PreemptionPlanner::Free(int32_t v, int sign) {
  for (const Holding& holding : holdings_[v]) {
    const int32_t n = holding.node;
    if (sign > 0) freed_nodes_touched_.push_back(n);
    freed_cpu_[n] += sign * holding.cpu_milli;
    freed_memory_[n] += sign * holding.memory_mib;
    for (int32_t g : holding.gpus) {
      if (sign > 0) freed_gpus_touched_.push_back(g);
      freed_gpu_[g] += sign * holding.milli_per_gpu;
    }
  }
}

void PreemptionPlanner::ClearFreed() {
  for (int32_t n : freed_nodes_touched_) freed_cpu_[n] = freed_memory_[n] = 0;
  for (int32_t g : freed_gpus_touched_) freed_gpu_[g] = 0;
  freed_nodes_touched_.clear();
  freed_gpus_touched_.clear();
}

bool PreemptionPlanner::MayFit(const std::vector<int32_t>& victims, bool mark_scopes) {
  ClearFreed();
  for (int32_t v : victims) Free(v, +1);
  bool fits = false;
  int32_t quota_model = kNone;
  bool quota_met = false;
  for (Scope& scope : scopes_) {
    if (scope.model != quota_model || quota_model == kNone) {
      quota_model = scope.model;
      quota_met = QuotaMet(scope.model, victims);
    }
    bool ok = quota_met;
    if (ok && !scope.quota_only) {
      int64_t total = scope.untouched;
      for (int32_t n : scope.nodes) {
        if (total >= need_.replicas) break;
        total += Fit(n);
      }
      ok = total >= need_.replicas;
    }
    fits = fits || ok;
    if (mark_scopes) {
      scope.may_fit = ok;
    } else if (fits) {
      break;
    }
  }
  ClearFreed();
  return fits;
}

bool PreemptionPlanner::InSubtree(int32_t q, int32_t ancestor) const {
  for (int32_t depth = queue_depth_[q]; depth > queue_depth_[ancestor]; --depth) {
    q = index_.queue_parent(q);
  }
  return q == ancestor;
}

int64_t PreemptionPlanner::Relief(int32_t v, const LimitNeed& limit) const {
  if (!limit.counts[index_.job(v).queue]) return 0;
  if (limit.slot == index_.any_model_slot()) return victim_milli_[v];
  if (victim_model_[v] != kMixedModels)
    return victim_model_[v] == limit.slot ? victim_milli_[v] : 0;
  int64_t milli = 0;
  for (const Holding& holding : holdings_[v]) {
    if (index_.node_model(holding.node) == limit.slot) {
      milli += holding.milli_per_gpu * static_cast<int64_t>(holding.gpus.size());
    }
  }
  return milli;
}

bool PreemptionPlanner::QuotaMet(int32_t model, const std::vector<int32_t>& victims) const {
  for (const LimitNeed& limit : limits_) {
    if (limit.model != model) continue;
    int64_t relieved = 0;
    for (int32_t v : victims) relieved += Relief(v, limit);
    if (relieved < limit.shortfall) return false;
  }
  return true;
}

std::vector<int32_t> PreemptionPlanner::ExactSearch(int32_t j, std::vector<int32_t> candidates) {
  // Evicting every candidate is the most that can be freed: if that is not enough, stop. (A
  // set the rules forbid may still free enough; its allowed subsets are searched below.)
  if (!Simulate(j, candidates)) return {};
  // Every subset, in the policy's victim order.
  struct Subset {
    PlanKey key;
    std::vector<int32_t> victims;  // ascending
  };
  std::vector<Subset> subsets;
  const uint32_t n = static_cast<uint32_t>(candidates.size());
  for (uint32_t mask = 1; mask < (1u << n); ++mask) {
    Subset s;
    for (uint32_t i = 0; i < n; ++i) {
      if (mask & (1u << i)) {
        AddToKey(s.key, candidates[i]);
        s.victims.push_back(candidates[i]);
      }
    }
    subsets.push_back(std::move(s));
  }
  std::sort(subsets.begin(), subsets.end(), [this](const Subset& a, const Subset& b) {
    if (KeyLess(a.key, b.key)) return true;
    if (KeyLess(b.key, a.key)) return false;
    return a.victims < b.victims;
  });
  for (const Subset& s : subsets) {
    if (!PlanAllowed(j, s.victims)) continue;
    if (s.victims == candidates) return candidates;  // known to free enough
    if (!MayFit(s.victims, false)) continue;         // cannot be enough
    if (!BudgetLeft()) {
      counters_.budget_exhausted = true;
      break;
    }
    if (Simulate(j, s.victims)) return s.victims;
  }
  return {};
}

bool PreemptionPlanner::NodeStep(int32_t j, int32_t n, RuleTally& tally,
                                 std::vector<int32_t>& step) {
  step.clear();
  const int64_t current = Fit(n);
  bool found = false;
  for (int32_t i = node_first_[n]; i < node_end_[n] && !found; ++i) {
    const int32_t v = node_victims_[i];
    if (chosen_[v]) continue;
    if (!TallyAdd(j, v, tally)) continue;
    if (!TallyAllows(j, tally)) {
      TallyRemove(j, v, tally);
      continue;
    }
    Free(v, +1);
    step.push_back(v);
    found = Fit(n) > current;
  }
  for (int32_t v : step) {
    Free(v, -1);
    TallyRemove(j, v, tally);
  }
  if (!found) step.clear();
  return found;
}

std::optional<PreemptionPlanner::Candidate> PreemptionPlanner::PlanScope(int32_t j, int32_t s,
                                                                         int64_t target,
                                                                         const Candidate* bound) {
  const Scope& scope = scopes_[s];
  ClearFreed();
  Candidate plan;
  plan.scope = s;
  RuleTally tally;
  auto take = [&](int32_t v) {
    chosen_[v] = 1;
    const bool added = TallyAdd(j, v, tally);
    GPUPOOL_CHECK(added);
    Free(v, +1);
    AddToKey(plan.key, v);
    plan.victims.push_back(v);
  };
  // Room: node-local steps, the one that adds least first.
  bool complete = scope.quota_only;
  if (!scope.quota_only) {
    const size_t size = scope.nodes.size();
    for (size_t i = 0; i < size; ++i) scope_pos_[scope.nodes[i]] = static_cast<int32_t>(i);
    std::vector<int64_t> fit(size);
    int64_t have = scope.untouched_known;
    for (size_t i = 0; i < size; ++i) {
      fit[i] = Fit(scope.nodes[i]);
      have += fit[i];
    }
    if (have >= target) target = have + 1;  // the estimate is short of something: add room
    plan.target = target;
    // The next step of each node, and its key.
    std::vector<std::vector<int32_t>> steps(size);
    std::vector<PlanKey> step_keys(size);
    std::vector<uint8_t> has_step(size, 0);
    auto compute = [&](size_t i) {
      has_step[i] = NodeStep(j, scope.nodes[i], tally, steps[i]) ? 1 : 0;
      step_keys[i] = PlanKey{};
      for (int32_t v : steps[i]) AddToKey(step_keys[i], v);
    };
    for (size_t i = 0; i < size; ++i) compute(i);
    std::vector<int32_t> affected;
    while (!complete) {
      size_t best = size;
      for (size_t i = 0; i < size; ++i) {
        if (has_step[i] && (best == size || KeyLess(step_keys[i], step_keys[best]))) best = i;
      }
      if (best == size) break;
      // The rules tighten as victims of other queues join: recheck the step, and if it no
      // longer passes, recompute it and choose again.
      if (tally.cross > 0) {
        size_t added = 0;
        bool allowed = true;
        for (; added < steps[best].size() && allowed; ++added) {
          allowed = TallyAdd(j, steps[best][added], tally);
          if (!allowed) break;
        }
        allowed = allowed && TallyAllows(j, tally);
        for (size_t k = 0; k < added; ++k) TallyRemove(j, steps[best][k], tally);
        if (!allowed) {
          compute(best);
          continue;
        }
      }
      affected.clear();
      for (int32_t v : std::vector<int32_t>(steps[best])) {
        take(v);
        for (const Holding& holding : holdings_[v]) {
          if (scope_pos_[holding.node] >= 0) affected.push_back(scope_pos_[holding.node]);
        }
      }
      if (bound != nullptr && KeyLess(bound->key, plan.key)) break;  // cannot beat it any more
      std::sort(affected.begin(), affected.end());
      affected.erase(std::unique(affected.begin(), affected.end()), affected.end());
      for (int32_t i : affected) {
        const int64_t now = Fit(scope.nodes[i]);
        have += now - fit[i];
        fit[i] = now;
      }
      complete = have >= target;
      if (complete) break;
      // Steps of nodes that gained room, or that hold a chosen victim, are stale.
      for (size_t i = 0; i < size; ++i) {
        bool stale = std::binary_search(affected.begin(), affected.end(), static_cast<int32_t>(i));
        for (int32_t v : steps[i]) stale = stale || chosen_[v];
        if (stale) compute(i);
      }
    }
    for (int32_t n : scope.nodes) scope_pos_[n] = -1;
  }
  // Limits: the first candidates, in victim order, that bring the gang within each limit the
  // model would exceed.
  if (complete) {
    std::vector<std::pair<const LimitNeed*, int64_t>> short_by;  // (limit, still missing)
    for (const LimitNeed& limit : limits_) {
      if (limit.model != scope.model) continue;
      int64_t missing = limit.shortfall;
      for (int32_t v : plan.victims) missing -= Relief(v, limit);
      if (missing > 0) short_by.emplace_back(&limit, missing);
    }
    // One limit at a time, from the candidates that count against it.
    while (!short_by.empty() && (bound == nullptr || !KeyLess(bound->key, plan.key))) {
      const LimitNeed& limit = *short_by.front().first;
      for (size_t k = 0; k < limit.relievers.size() && short_by.front().second > 0; ++k) {
        const int32_t v = limit.relievers[k];
        if (chosen_[v] || !TallyAdd(j, v, tally)) continue;
        const bool allowed = TallyAllows(j, tally);
        TallyRemove(j, v, tally);
        if (!allowed) continue;
        take(v);
        for (auto& e : short_by) e.second -= Relief(v, *e.first);
      }
      if (short_by.front().second > 0) break;  // cannot be met
      std::erase_if(short_by, [](const auto& e) { return e.second <= 0; });
    }
    complete = short_by.empty() && !plan.victims.empty() &&
               (bound == nullptr || !KeyLess(bound->key, plan.key));
  }
  for (int32_t v : plan.victims) chosen_[v] = 0;
  ClearFreed();
  if (!complete) return std::nullopt;
  std::sort(plan.victims.begin(), plan.victims.end());
  return plan;
}

std::vector<int32_t> PreemptionPlanner::HeuristicSearch(int32_t j,
                                                        const std::vector<int32_t>& candidates) {
  // Scopes by a lower bound on their plan's key: every plan holds at least one victim, none
  // cheaper or of lower priority than the cheapest and lowest of the scope's candidates. Once
  // the bound is worse than the kPlansSimulated-th best plan, no later scope can do better.
  std::vector<std::pair<PlanKey, int32_t>> order;  // (lower bound, scope)
  PlanKey anyone;                                  // for quota-only scopes: any candidate
  anyone.count = 1;
  anyone.cost = std::numeric_limits<int64_t>::max();
  anyone.top_priority = std::numeric_limits<int32_t>::max();
  for (int32_t v : candidates) {
    anyone.cost = std::min(anyone.cost, VictimCost(v));
    anyone.top_priority = std::min(anyone.top_priority, index_.job(v).job->priority);
  }
  for (int32_t s = 0; s < static_cast<int32_t>(scopes_.size()); ++s) {
    const Scope& scope = scopes_[s];
    if (!scope.may_fit) continue;
    PlanKey low = anyone;
    if (!scope.quota_only) {
      low.cost = std::numeric_limits<int64_t>::max();
      low.top_priority = std::numeric_limits<int32_t>::max();
      for (int32_t n : scope.nodes) {
        for (int32_t i = node_first_[n]; i < node_end_[n]; ++i) {
          low.cost = std::min(low.cost, VictimCost(node_victims_[i]));
          low.top_priority = std::min(low.top_priority, index_.job(node_victims_[i]).job->priority);
        }
      }
    }
    order.emplace_back(low, s);
  }
  std::stable_sort(order.begin(), order.end(),
                   [this](const auto& a, const auto& b) { return KeyLess(a.first, b.first); });
  // The best kPlansSimulated scope plans, best first, without duplicates.
  std::vector<Candidate> best;
  for (const auto& [low, s] : order) {
    const Candidate* bound =
        static_cast<int>(best.size()) == kPlansSimulated ? &best.back() : nullptr;
    if (bound != nullptr && KeyLess(bound->key, low)) break;
    std::optional<Candidate> plan = PlanScope(j, s, need_.replicas, bound);
    if (!plan) continue;
    if (std::any_of(best.begin(), best.end(),
                    [&](const Candidate& c) { return c.victims == plan->victims; })) {
      continue;
    }
    auto at = std::upper_bound(
        best.begin(), best.end(), *plan,
        [this](const Candidate& a, const Candidate& b) { return CandidateLess(a, b); });
    best.insert(at, std::move(*plan));
    if (static_cast<int>(best.size()) > kPlansSimulated) best.pop_back();
  }
  if (best.empty()) return {};

  std::vector<int32_t> chosen;
  int32_t chosen_scope = kNone;
  std::vector<ReplicaPlacement> placed;
  auto attempt = [&](const std::vector<int32_t>& victims, int32_t scope) {
    if (!PlanAllowed(j, victims)) return false;
    if (!BudgetLeft()) {
      counters_.budget_exhausted = true;
      return false;
    }
    auto placements = Simulate(j, victims);
    if (!placements) return false;
    chosen = victims;
    chosen_scope = scope;
    placed = std::move(*placements);
    return true;
  };
  bool found = false;
  for (const Candidate& c : best) {
    if ((found = attempt(c.victims, c.scope)) || counters_.budget_exhausted) break;
  }
  // None placed: the estimate was short of something (islands, isolation, other groups); give
  // the best plan room for one more replica at a time.
  const Candidate first = best.front();
  std::vector<int32_t> tried = first.victims;
  for (int grow = 1; !found && !counters_.budget_exhausted && !scopes_[first.scope].quota_only &&
                     grow <= kGrowths;
       ++grow) {
    std::optional<Candidate> bigger = PlanScope(j, first.scope, first.target + grow, nullptr);
    if (!bigger) break;
    if (bigger->victims == tried) continue;
    tried = bigger->victims;
    found = attempt(bigger->victims, first.scope);
  }
  if (!found) return {};

  // Victims that hold nothing on the nodes the job took are not needed where it went.
  std::vector<int32_t> used;
  for (const ReplicaPlacement& p : placed) used.push_back(index_.FindNode(p.node));
  std::sort(used.begin(), used.end());
  std::vector<int32_t> kept;
  for (int32_t v : chosen) {
    const bool holds = std::any_of(holdings_[v].begin(), holdings_[v].end(), [&](const Holding& h) {
      return std::binary_search(used.begin(), used.end(), h.node);
    });
    if (holds) kept.push_back(v);
  }
  const bool limited = std::any_of(limits_.begin(), limits_.end(), [&](const LimitNeed& l) {
    return l.model == scopes_[chosen_scope].model;
  });
  if (!limited && !kept.empty() && kept.size() < chosen.size()) {
    const std::vector<int32_t> all = chosen;
    if (!attempt(kept, chosen_scope)) chosen = all;
  }
  return chosen;
}

std::string PreemptionPlanner::WhyKept(int32_t j, int32_t v) const {
  const Job& job = *index_.job(j).job;
  const Job& victim = *index_.job(v).job;
  // The policy's victim rules first: a victim they keep now may go later, so the job waits for
  // a reclaim in progress.
  const int64_t now = index_.snapshot().now;
  const int64_t ran = now - victim.start_time.value_or(now);
  if (victim.preemptible && ran >= victim.min_runtime_s) {
    if (state_.OnHeldNode(v)) {
      return fmt::format("{} runs on a node held for a starving job's reservation", victim.id);
    }
    const int64_t min_run = policy_.preemption.min_victim_run_s;
    if (ran < min_run) {
      return fmt::format(
          "waiting for a reclaim in progress: {} has run {} s since it started, less than "
          "min_victim_run_s {}; it may go in {} s",
          victim.id, ran, min_run, min_run - ran);
    }
    const int64_t most_lost = policy_.preemption.max_victim_lost_s;
    if (most_lost > 0 && LostSeconds(v) > most_lost) {
      const Checkpointing& c = victim.checkpointing;
      const int64_t since = KeptUpTo(v);
      const std::string next =
          c.interval_s > 0 ? fmt::format("its next checkpoint, due at {}", since + c.interval_s)
                           : std::string("a checkpoint, which it does not take");
      return fmt::format(
          "waiting for a reclaim in progress: {} would lose {} s of work now, more than "
          "max_victim_lost_s {}; it may go after {}",
          victim.id, LostSeconds(v), most_lost, next);
    }
  }
  if (victim.queue == job.queue) {
    if (victim.priority >= PreemptorPriority(j)) {
      return fmt::format("{} has priority {}, not below {}", victim.id, victim.priority,
                         job.priority);
    }
    return {};
  }
  if (!policy_.preemption.reclaim_across_queues) {
    return fmt::format("{} is in queue {} and reclaim_across_queues is off", victim.id,
                       victim.queue);
  }
  if (policy_.preemption.reclaim_lower_priority_only && victim.priority >= PreemptorPriority(j)) {
    return fmt::format(
        "{} of queue {} has priority {}, not below {}, and "
        "reclaim_lower_priority_only is on",
        victim.id, victim.queue, victim.priority, job.priority);
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
  // Rules 2 and 3 of PlanAllowed for this victim alone, to name the one that refuses.
  const int32_t mine = Side(index_.job(j).queue, index_.job(v).queue);
  const int64_t milli = Milli(v);
  const int64_t job_after = state_.queue_usage(mine, any) + index_.job(j).gang_milli;
  const int64_t job_over = job_after - entitlements_.entitlement(mine, any);
  const bool borrowing = job_after > GuaranteeTotal(mine);
  const int64_t guarantee = GuaranteeTotal(side);
  if (borrowing && usage - milli < guarantee) {
    return fmt::format(
        "the guarantee rule: queue {} would borrow ({} milli-GPUs after, guaranteed {}) and "
        "evicting {} would take queue {} below its guarantee of {}",
        index_.queue(mine).id, job_after, GuaranteeTotal(mine), victim.id, index_.queue(side).id,
        guarantee);
  }
  if (!borrowing && usage <= guarantee) {
    return fmt::format(
        "the guarantee rule: queue {} reclaims within its guarantee, but queue {} holds {} "
        "milli-GPUs, not above its guarantee of {}",
        index_.queue(mine).id, index_.queue(side).id, usage, guarantee);
  }
  if (job_over > usage - milli - entitlement) {
    return fmt::format(
        "the no-loop rule: after evicting {}, queue {} would be {} milli-GPUs above its "
        "entitlement, more than queue {} ({})",
        victim.id, index_.queue(mine).id, job_over, index_.queue(side).id,
        usage - milli - entitlement);
  }
  return fmt::format("evicting {} is allowed alone, but no plan the rules allow was found",
                     victim.id);
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
  const size_t hi = ShortestWorkingPrefix(sorted.size(), fits,
                                          [&] { return counters_.counterfactual_plans < budget; });
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
