// The rules of preemption (see victim_rules.h). The three cross-queue rules are written once,
// in Compare() and Refuses(); PlanAllowed(), the tally the searches grow plans with, the
// candidates filter and WhyKept() all read them from there, so that the rule a plan is refused
// by and the rule a pending job is told about cannot drift apart.
#include "victim_rules.h"

#include <algorithm>
#include <limits>

#include "fmt/format.h"
#include "internal/check.h"
#include "internal/saturating.h"
#include "lost_work.h"
#include "order.h"

namespace gpupool::internal {

bool VictimRules::WithinBudget(int32_t v) const {
  const int32_t q = index_.job(v).queue;
  return q == kNone || !entitlements_.budget_enforced(q);
}

VictimRules::VictimRules(const SnapshotIndex& index, const WorkingState& state,
                         const Entitlements& entitlements, const Policy& policy)
    : index_(index),
      state_(state),
      entitlements_(entitlements),
      policy_(policy),
      taken_(index.job_count(), 0),
      cost_(index.job_count(), -1) {
  for (const HeadroomRule& rule : policy.headroom) {
    headroom_model_.push_back(index.FindModel(rule.gpu_model));
  }
}

// --- Eligibility. ---

bool VictimRules::MayEverEvict(int32_t v) const {
  if (may_ever_evict_.empty()) may_ever_evict_.assign(index_.job_count(), -1);
  if (may_ever_evict_[v] < 0) may_ever_evict_[v] = ComputeMayEverEvict(v) ? 1 : 0;
  return may_ever_evict_[v] != 0;
}

bool VictimRules::ComputeMayEverEvict(int32_t v, bool own_minimum, bool restored_stays) const {
  // A job pinned in the cycle being settled (SnapshotIndex::pinned) stays, also when a pass
  // started it again elsewhere after it yielded (settle.cc).
  if (index_.pinned(v)) return false;
  // A start made earlier in the cycle being settled may be revoked, whatever the job's rules:
  // it has not run.
  if (index_.tentative(v)) return true;
  // One that an earlier pass evicted and a later one started again where it ran: evicting it
  // again for a drain, a reclaim or a move would send the passes round in a loop (settle.cc).
  if (restored_stays && index_.restored(v)) return false;
  const Job& victim = *index_.job(v).job;
  const int64_t now = index_.snapshot().now;
  // One the host started at this very moment (start_time at or after now) has not run either,
  // but it is no longer this cycle's to revoke: a cycle run again at the same moment, on the
  // snapshot with the decisions carried out, must not undo them (the fixed point).
  if (victim.start_time.value_or(now) >= now) return false;
  const int64_t ran = now - victim.start_time.value_or(now);
  if (!victim.preemptible || (own_minimum && ran < victim.min_runtime_s)) return false;
  if (ran < policy_.preemption.min_victim_run_s) return false;
  // No job loses the same work twice: one that resumed stays until it has checkpointed since.
  if (RedoingLostWork(victim, now)) return false;
  const int64_t most_lost = policy_.preemption.max_victim_lost_s;
  return most_lost <= 0 || LostSeconds(v) <= most_lost;
}

const HeadroomRule* VictimRules::HeadroomKeeps(int32_t j, int32_t v) const {
  if (policy_.headroom.empty()) return nullptr;
  const int32_t below = index_.job(j).job->priority;
  const int32_t priority = index_.job(v).job->priority;
  if (priority <= below) return nullptr;
  const absl::Span<const RunningPlacement> placements = index_.job(v).placements;
  const HeadroomRule* keeps = nullptr;
  for (size_t r = 0; r < policy_.headroom.size(); ++r) {
    const HeadroomRule& rule = policy_.headroom[r];
    if (!rule.restore || below >= rule.min_priority || priority < rule.min_priority) continue;
    if (keeps != nullptr && keeps->min_priority <= rule.min_priority) continue;
    if (std::any_of(placements.begin(), placements.end(), [&](const RunningPlacement& p) {
          return !p.gpus.empty() && index_.node_model(p.node) == headroom_model_[r];
        })) {
      keeps = &rule;
    }
  }
  return keeps;
}

int64_t VictimRules::PreemptorPriority(int32_t j) const {
  const Job& job = *index_.job(j).job;
  // Past the starvation bound a job outranks every running job of its queue (order.h).
  if (policy_.preemption.starving_outrank && Starving(job, policy_, index_.snapshot().now)) {
    return std::numeric_limits<int64_t>::max();
  }
  return job.priority;
}

bool VictimRules::Outranks(int32_t j, int32_t v) const {
  return OutranksAt(j, v, VictimPriority(v));
}

bool VictimRules::OutranksOnceRunning(int32_t j, int32_t v) const {
  return OutranksAt(j, v, index_.job(v).job->priority);
}

bool VictimRules::OutranksAt(int32_t j, int32_t v, int64_t victim) const {
  const int64_t preemptor = PreemptorPriority(j);
  const bool by_priority = victim < preemptor || (victim == preemptor && TakesBack(j, v));
  return by_priority && !ShorterVictimStays(j, v, victim);
}

bool VictimRules::ShorterVictimStays(int32_t j, int32_t v, int64_t victim) const {
  const PreemptionOptions& options = policy_.preemption;
  if (options.victim_remaining_percent <= 0 || index_.tentative(v)) return false;
  const Job& job = *index_.job(j).job;
  const std::optional<int64_t> needs = RemainingWork(job);
  const std::optional<int64_t> left = RemainingWork(*index_.job(v).job);
  if (!needs || !left || Starving(job, policy_, index_.snapshot().now)) return false;
  const int64_t gap = int64_t{job.priority} - victim;
  if (options.victim_remaining_max_gap > 0 && gap > options.victim_remaining_max_gap) {
    return false;
  }
  // left <= percent / 100 x needs, in integers.
  return SaturatingMultiply(*left, 100) <=
         SaturatingMultiply(*needs, options.victim_remaining_percent);
}

std::string VictimRules::WhyShorterVictimStays(int32_t j, int32_t v) const {
  if (!ShorterVictimStays(j, v, VictimPriority(v))) return {};
  const Job& job = *index_.job(j).job;
  const Job& running = *index_.job(v).job;
  return fmt::format(
      "{} is expected to need {} s more, not above {} % of the {} s {} is expected to need, so "
      "it stays (preemption.victim_remaining_percent)",
      running.id, *RemainingWork(running), policy_.preemption.victim_remaining_percent,
      *RemainingWork(job), job.id);
}

bool VictimRules::TakesBack(int32_t j, int32_t v) const { return TakeBackWaitLeft(j, v) == 0; }

std::optional<int64_t> VictimRules::TakeBackWaitLeft(int32_t j, int32_t v) const {
  const int64_t from = policy_.preemption.take_back_from_gpus;
  const JobInfo& info = index_.job(j);
  if (from <= 0 || info.gang_milli < SaturatingMultiply(from, kMilliPerGpu)) return std::nullopt;
  const Job& job = *info.job;
  if (Milli(v) >= info.gang_milli || index_.job(v).job->submit_time <= job.submit_time) {
    return std::nullopt;
  }
  const int64_t waited = index_.snapshot().now - job.pending_since.value_or(job.submit_time);
  return std::max<int64_t>(0, policy_.preemption.take_back_after_s - waited);
}

std::string VictimRules::TakeBackLater(int32_t j, int32_t v) const {
  const std::optional<int64_t> left = TakeBackWaitLeft(j, v);
  if (!left || *left == 0 || VictimPriority(v) != PreemptorPriority(j)) return {};
  return fmt::format(
      "{} may take {} back (preemption.take_back_from_gpus) once it has been pending "
      "take_back_after_s {} s, in {} s",
      index_.job(j).job->id, index_.job(v).job->id, policy_.preemption.take_back_after_s, *left);
}

// --- Price. ---

int64_t VictimRules::KeptUpTo(int32_t v) const {
  const Job& job = *index_.job(v).job;
  const int64_t start = job.start_time.value_or(index_.snapshot().now);
  return std::max(start, job.checkpointing.last_checkpoint_time.value_or(start));
}

int64_t VictimRules::LostSeconds(int32_t v) const {
  // The rule every stop shares (lost_work.h), at now.
  const int64_t now = index_.snapshot().now;
  return LostWorkSeconds(*index_.job(v).job, now, now, policy_);
}

int64_t VictimRules::ComputeVictimCost(int32_t v) const {
  // A revoked start loses nothing.
  cost_[v] = index_.tentative(v) ? 0 : RunningCost(v);
  return cost_[v];
}

int64_t VictimRules::RunningCost(int32_t v) const {
  const Job& job = *index_.job(v).job;
  const int64_t seconds = SaturatingAdd(LostSeconds(v), job.checkpointing.restore_time_s);
  return SaturatingMultiply(Milli(v), seconds);
}

void VictimRules::ComputeMilli() const {
  milli_.resize(index_.job_count());
  for (int32_t v = 0; v < index_.job_count(); ++v) milli_[v] = state_.running_milli(v);
}

// --- The queue tree. ---

int32_t VictimRules::Side(int32_t q, int32_t other) const {
  // Climb to equal depths, then together to the lowest common ancestor, remembering the last
  // queue on q's path below it.
  int32_t a = q, b = other;
  int32_t depth_a = index_.queue_depth(q), depth_b = index_.queue_depth(other);
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

void VictimRules::ResetSides(int32_t jq) const {
  sides_for_ = jq;
  sides_.assign(index_.queue_count(), {kUnset, kUnset});
}

bool VictimRules::InSubtree(int32_t q, int32_t ancestor) const {
  for (int32_t depth = index_.queue_depth(q); depth > index_.queue_depth(ancestor); --depth) {
    q = index_.queue_parent(q);
  }
  return q == ancestor;
}

// --- The cross-queue rules. ---

int64_t VictimRules::GuaranteeTotal(int32_t q) const {
  if (guarantee_total_.empty()) guarantee_total_.assign(index_.queue_count(), -1);
  if (guarantee_total_[q] >= 0) return guarantee_total_[q];
  int64_t per_model = 0;
  for (int32_t m = 0; m < index_.model_count(); ++m) {
    per_model += entitlements_.guaranteed(q, m);
  }
  guarantee_total_[q] = std::max(per_model, entitlements_.guaranteed(q, index_.any_model_slot()));
  return guarantee_total_[q];
}

VictimRules::Comparison VictimRules::Compare(int32_t mine, int64_t mine_after, int32_t side) const {
  const int32_t any = index_.any_model_slot();
  Comparison c;
  c.mine = mine;
  c.side = side;
  c.mine_after = mine_after;
  c.mine_over = mine_after - entitlements_.entitlement(mine, any);
  c.borrowing = mine_after > GuaranteeTotal(mine);
  c.usage = state_.queue_usage(side, any);
  c.entitlement = entitlements_.entitlement(side, any);
  c.guarantee = GuaranteeTotal(side);
  return c;
}

VictimRules::Refusal VictimRules::Refuses(const Comparison& c, int64_t milli) {
  if (c.usage <= c.entitlement) return Refusal::kNotAboveEntitlement;
  if (c.borrowing ? c.usage - milli < c.guarantee : c.usage <= c.guarantee) {
    return Refusal::kGuarantee;
  }
  if (c.mine_over > c.usage - milli - c.entitlement) return Refusal::kNoLoop;
  return Refusal::kAllowed;
}

int64_t VictimRules::MostTaken(const Comparison& c) {
  // Refuses() solved for `milli`.
  if (c.usage <= c.entitlement || (!c.borrowing && c.usage <= c.guarantee)) return -1;
  int64_t most = c.usage - c.entitlement - c.mine_over;  // no loops
  if (c.borrowing) most = std::min(most, c.usage - c.guarantee);
  return most;
}

bool VictimRules::SideAboveEntitlement(int32_t q, int32_t jq) const {
  const auto [side, mine] = Sides(q, jq);
  if (side == kNone || mine == kNone) return false;
  const int32_t any = index_.any_model_slot();
  return state_.queue_usage(side, any) > entitlements_.entitlement(side, any);
}

void VictimRules::DropNeverAllowed(int32_t j, std::vector<int32_t>& candidates) const {
  // At most a cap per side, the same for every victim of the side.
  const JobInfo& info = index_.job(j);
  const int32_t jq = info.queue;
  const int32_t any = index_.any_model_slot();
  int64_t own_freed = 0;
  for (int32_t v : candidates) {
    if (index_.job(v).queue == jq && !restarts(v)) own_freed += Milli(v);
  }
  constexpr int64_t kUnknown = std::numeric_limits<int64_t>::min();
  std::vector<int64_t> cap(index_.queue_count(), kUnknown);
  std::erase_if(candidates, [&](int32_t v) {
    const int32_t vq = index_.job(v).queue;
    if (vq == jq) return false;
    const auto [side, mine] = Sides(vq, jq);
    if (side == kNone || mine == kNone) return true;
    if (cap[side] == kUnknown) {
      const int64_t mine_after = state_.queue_usage(mine, any) + info.gang_milli - own_freed;
      cap[side] = MostTaken(Compare(mine, mine_after, side));
    }
    return Milli(v) > cap[side];
  });
}

bool VictimRules::TallyAdd(int32_t j, int32_t v, RuleTally& tally) const {
  const int32_t jq = index_.job(j).queue;
  const int32_t vq = index_.job(v).queue;
  const int64_t milli = Milli(v);
  if (vq == jq) {
    if (!restarts(v)) tally.own_freed += milli;
    return true;
  }
  const auto [side, mine] = Sides(vq, jq);
  if (side == kNone || mine == kNone) return false;
  // One comparison per plan: victims of other queues all under one sibling of the job's side.
  if (tally.cross > 0 && mine != tally.job_side) return false;
  tally.job_side = mine;
  ++tally.cross;
  auto it = std::find_if(tally.taken.begin(), tally.taken.end(),
                         [side = side](const RuleTally::Taken& t) { return t.side == side; });
  if (it == tally.taken.end()) {
    tally.taken.push_back({side, milli, 1});
  } else {
    it->milli += milli;
    ++it->victims;
  }
  return true;
}

void VictimRules::TallyRemove(int32_t j, int32_t v, RuleTally& tally) const {
  const int32_t jq = index_.job(j).queue;
  const int32_t vq = index_.job(v).queue;
  const int64_t milli = Milli(v);
  if (vq == jq) {
    if (!restarts(v)) tally.own_freed -= milli;
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

bool VictimRules::TallyAllows(int32_t j, const RuleTally& tally) const {
  if (tally.taken.empty()) return true;  // only own-queue victims: the priority rule holds
  const int32_t any = index_.any_model_slot();
  const int64_t mine_after =
      state_.queue_usage(tally.job_side, any) + index_.job(j).gang_milli - tally.own_freed;
  for (const RuleTally::Taken& t : tally.taken) {
    if (Refuses(Compare(tally.job_side, mine_after, t.side), t.milli) != Refusal::kAllowed) {
      return false;
    }
  }
  return true;
}

bool VictimRules::PlanAllowed(int32_t j, const std::vector<int32_t>& victims) const {
  RuleTally tally;
  for (int32_t v : victims) {
    if (!TallyAdd(j, v, tally)) return false;
  }
  return TallyAllows(j, tally);
}

// --- In words. ---

std::string VictimRules::WhyKept(int32_t j, int32_t v) const {
  const Job& job = *index_.job(j).job;
  const Job& victim = *index_.job(v).job;
  // The policy's victim rules first: a victim they keep now may go later, so the job waits for
  // a reclaim in progress.
  const int64_t now = index_.snapshot().now;
  if (const int64_t start = victim.start_time.value_or(now); start >= now && !index_.tentative(v)) {
    return fmt::format("{} started at {}, this very moment: it may go once it has run", victim.id,
                       start);
  }
  const int64_t ran = now - victim.start_time.value_or(now);
  if (victim.preemptible && ran >= victim.min_runtime_s) {
    if (state_.OnHeldNode(v)) {
      return fmt::format(
          "{} runs on a node held for a reservation (a starving job's, or with backfill a blocked "
          "job's)",
          victim.id);
    }
    const int64_t min_run = policy_.preemption.min_victim_run_s;
    if (ran < min_run) {
      return fmt::format(
          "waiting for a reclaim in progress: {} has run {} s since it started, less than "
          "min_victim_run_s {}; it may go in {} s",
          victim.id, ran, min_run, min_run - ran);
    }
    if (RedoingLostWork(victim, now)) {
      const Checkpointing& c = victim.checkpointing;
      const int64_t start = *victim.start_time;
      const std::string next =
          c.interval_s > 0
              ? fmt::format("after its next checkpoint, due at {}", start + c.interval_s)
              : std::string("only when it ends: it does not checkpoint");
      return fmt::format(
          "{} resumed at {} and has not checkpointed since: evicting it now would lose the same "
          "work a second time; it may go {}",
          victim.id, start, next);
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
  if (const HeadroomRule* rule = HeadroomKeeps(j, v); rule != nullptr) {
    return fmt::format(
        "{} has priority {}, at or above the {} of the headroom rule for {} GPUs that restores: "
        "evicted, it could take the headroom, and restoring it would evict {}",
        victim.id, victim.priority, rule->min_priority, rule->gpu_model, job.id);
  }
  if (victim.queue == job.queue) {
    if (!Outranks(j, v)) {
      if (std::string stays = WhyShorterVictimStays(j, v); !stays.empty()) return stays;
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
  const auto [side, mine] = Sides(index_.job(v).queue, index_.job(j).queue);
  if (side == kNone || mine == kNone) {
    return fmt::format("{} is in queue {}, an ancestor or descendant of {}", victim.id,
                       victim.queue, job.queue);
  }
  // The rules for this victim alone (PlanAllowed(j, {v})), to name the one that refuses.
  const int32_t any = index_.any_model_slot();
  const int64_t milli = Milli(v);
  const Comparison c =
      Compare(mine, state_.queue_usage(mine, any) + index_.job(j).gang_milli, side);
  switch (Refuses(c, milli)) {
    case Refusal::kAllowed:
      return {};
    case Refusal::kNotAboveEntitlement:
      return fmt::format("queue {} holds {} milli-GPUs, not above its entitlement of {}",
                         index_.queue(side).id, c.usage, c.entitlement);
    case Refusal::kGuarantee:
      if (c.borrowing) {
        return fmt::format(
            "the guarantee rule: queue {} would borrow ({} milli-GPUs after, guaranteed {}) and "
            "evicting {} would take queue {} below its guarantee of {}",
            index_.queue(mine).id, c.mine_after, GuaranteeTotal(mine), victim.id,
            index_.queue(side).id, c.guarantee);
      }
      return fmt::format(
          "the guarantee rule: queue {} reclaims within its guarantee, but queue {} holds {} "
          "milli-GPUs, not above its guarantee of {}",
          index_.queue(mine).id, index_.queue(side).id, c.usage, c.guarantee);
    case Refusal::kNoLoop:
      return fmt::format(
          "the no-loop rule keeps {0}: with {0} evicted and this job started, queue {1} would be "
          "{2} milli-GPUs above its entitlement, more than queue {3} ({4})",
          victim.id, index_.queue(mine).id, c.mine_over, index_.queue(side).id,
          c.usage - milli - c.entitlement);
  }
  return {};
}

}  // namespace gpupool::internal
