// The per-cycle checks of preemption_cycles_test.cc, whose top comment states the properties:
// the policy of a seed (SetupForSeed()), the queue-tree arithmetic the engine uses (Tree), the
// facts a cross-queue Preempt's reason states, and properties (a)-(d) on one cycle's decisions
// (CheckCycle()) and, for a cycle that settled in several passes, pass by pass (CheckPasses()).
#ifndef GPUPOOL_TESTS_CORE_PREEMPTION_CYCLES_CHECKS_H_
#define GPUPOOL_TESTS_CORE_PREEMPTION_CYCLES_CHECKS_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cycle.h"
#include "fmt/format.h"
#include "gpupool/apply.h"
#include "gpupool/schedule.h"

namespace gpupool::preemption_cycles {

enum Property {
  kSanity,
  kBeneficiaryStarts,
  kWholePreemptibleVictims,
  kGuarantees,
  kPriorityWithinQueue,
  kQuiesces,
  kStaysQuiet,
  kNoEvictionBack,
  kOnePreemptionPerStretch,
  kDeterminism,
  kPropertyCount,
};

inline constexpr std::array<const char*, kPropertyCount> kPropertyNames = {
    "(s) sanity",
    "(a) every eviction's beneficiary starts",
    "(b) victims are whole preemptible gangs past min runtime",
    "(c) cross-queue rules (guarantees, no loops)",
    "(d) within a queue, victims have lower priority",
    "(e1) quiet within 4 cycles of a trigger",
    "(e2) a quiet state stays quiet",
    "(e3) no job evicts a job that evicted it in the same stretch",
    "(e4) no job preempted twice in a stretch",
    "(f) replay is deterministic",
};

struct Setup {
  Policy policy;
  int64_t step = 0;
};

inline Setup SetupForSeed(uint64_t seed) {
  Setup setup;
  Policy& policy = setup.policy;
  policy.preemption.enabled = true;
  policy.preemption.reclaim_across_queues = seed % 5 < 3;
  policy.queue_order = (seed / 5) % 3 == 0 ? QueueOrder::kFairShare : QueueOrder::kNone;
  policy.placement = (seed / 3) % 4 == 0 ? PlacementStrategy::kSpread : PlacementStrategy::kBestFit;
  policy.preemption.checkpoint_grace_s = (seed / 7) % 3 == 0 ? 60 : 0;
  policy.preemption.victim_order =
      (seed / 11) % 2 == 0 ? VictimOrder::kCheapestFirst : VictimOrder::kLowestPriorityFirst;
  setup.step = (seed / 2) % 2 == 0 ? 300 : 1200;
  return setup;
}

inline std::string SetupText(const Setup& setup) {
  const Policy& p = setup.policy;
  return fmt::format(
      "reclaim_across_queues={} queue_order={} victim_order={} placement={} grace={} step={}s",
      p.preemption.reclaim_across_queues, QueueOrderName(p.queue_order),
      VictimOrderName(p.preemption.victim_order), PlacementStrategyName(p.placement),
      p.preemption.checkpoint_grace_s, setup.step);
}

// Queue-tree and usage arithmetic over one snapshot, as the engine defines it
// (src/engine/preempt.cc): usage is over all models, a queue's usage includes its descendants'.
class Tree {
 public:
  explicit Tree(const Snapshot& s) : s_(s) {
    for (const Queue& q : s.queues) queues_[q.id] = &q;
    for (const Job& j : s.jobs) jobs_[j.id] = &j;
    for (const GpuModel& m : s.gpu_models) models_.insert(m.name);
  }

  const Job* job(const std::string& id) const {
    auto it = jobs_.find(id);
    return it == jobs_.end() ? nullptr : it->second;
  }

  // The queue and its ancestors, nearest first.
  std::vector<std::string> Chain(const std::string& q) const {
    std::vector<std::string> chain;
    for (std::string at = q; !at.empty() && chain.size() <= queues_.size();) {
      chain.push_back(at);
      auto it = queues_.find(at);
      at = it == queues_.end() ? std::string() : it->second->parent;
    }
    return chain;
  }

  bool InSubtree(const std::string& q, const std::string& root) const {
    const std::vector<std::string> chain = Chain(q);
    return std::find(chain.begin(), chain.end(), root) != chain.end();
  }

  // The queue standing for q against `other`: q's ancestor (or q) just below their lowest
  // common ancestor; empty when q is an ancestor of `other` (or the same queue); q's root when
  // they share no ancestor.
  std::string Side(const std::string& q, const std::string& other) const {
    const std::vector<std::string> above_other = Chain(other);
    std::string child;
    for (const std::string& a : Chain(q)) {
      if (std::find(above_other.begin(), above_other.end(), a) != above_other.end()) return child;
      child = a;
    }
    return child;
  }

  int64_t Guarantee(const std::string& q) const {
    auto it = queues_.find(q);
    if (it == queues_.end()) return 0;
    int64_t per_model = 0, any = 0;
    for (const Quota& quota : it->second->quotas) {
      if (quota.gpu_model == kAnyGpuModel) {
        any = quota.guaranteed_milli;
      } else if (models_.count(quota.gpu_model)) {
        per_model += quota.guaranteed_milli;
      }
    }
    return std::max(per_model, any);
  }

  // Milli-GPUs a running job holds.
  int64_t RunningMilli(const Job& job) const { return PlacedMilli(job, job.placements); }
  int64_t PlacedMilli(const Job& job, const std::vector<ReplicaPlacement>& placements) const {
    int64_t total = 0;
    for (const ReplicaPlacement& p : placements) {
      for (const TaskGroup& g : job.groups) {
        if (g.name == p.group) {
          total += g.request.MilliPerGpu() * static_cast<int64_t>(p.gpus.size());
        }
      }
    }
    return total;
  }
  // The gang at its minimum size, as the planner counts it.
  static int64_t GangMilli(const Job& job) {
    int64_t total = 0;
    for (const TaskGroup& g : job.groups) total += g.request.gpu_milli * g.MinReplicas();
    return total;
  }

  // Usage of q's subtree at the start of the cycle.
  int64_t Usage(const std::string& q) const {
    int64_t total = 0;
    for (const Job& j : s_.jobs) {
      if (j.state == JobState::kRunning && InSubtree(j.queue, q)) total += RunningMilli(j);
    }
    return total;
  }

 private:
  const Snapshot& s_;
  std::map<std::string, const Queue*> queues_;
  std::map<std::string, const Job*> jobs_;
  std::set<std::string> models_;
};

// The "*" entitlement of a queue in the cycle (0 when the queue has no row).
inline int64_t Entitlement(const Decisions& d, const std::string& q) {
  for (const QueueShare& share : d.queue_shares) {
    if (share.queue == q && share.gpu_model == kAnyGpuModel) return share.entitlement_milli;
  }
  return 0;
}

// Reads "queue S holds U milli-GPUs, above its entitlement of E" from a cross-queue reason.
struct ReasonFacts {
  std::string side;
  int64_t usage = 0;
  int64_t entitlement = 0;
};
inline std::optional<ReasonFacts> ParseReason(const std::string& reason) {
  static constexpr std::string_view kQueue = "queue ", kHolds = " holds ",
                                    kAbove = " milli-GPUs, above its entitlement of ";
  if (reason.rfind(kQueue, 0) != 0) return std::nullopt;
  const size_t holds = reason.find(kHolds);
  const size_t above = reason.find(kAbove);
  if (holds == std::string::npos || above == std::string::npos || above < holds) {
    return std::nullopt;
  }
  ReasonFacts facts;
  facts.side = reason.substr(kQueue.size(), holds - kQueue.size());
  char* end = nullptr;
  const std::string usage = reason.substr(holds + kHolds.size(), above - holds - kHolds.size());
  facts.usage = std::strtoll(usage.c_str(), &end, 10);
  if (end == usage.c_str() || *end != '\0') return std::nullopt;
  const char* e = reason.c_str() + above + kAbove.size();
  facts.entitlement = std::strtoll(e, &end, 10);
  if (end == e) return std::nullopt;
  return facts;
}

// The job a preemption reason names as the one it makes room for ("job j08 (priority 3) of the
// same queue ...", "queue q1 holds ...; job j08 of queue q0 reclaims"), or "" when it names none.
// With settling (docs/engine.md), it is the beneficiary of the pass that evicted the victim, which
// may differ from for_job: that names the job that finally took the room.
inline std::string BeneficiaryInReason(const std::string& reason) {
  size_t at = std::string::npos;
  if (reason.rfind("job ", 0) == 0) {
    at = 4;
  } else if (size_t i = reason.find("; job "); i != std::string::npos) {
    at = i + 6;
  }
  if (at == std::string::npos) return "";
  const size_t end = reason.find(' ', at);
  return end == std::string::npos ? "" : reason.substr(at, end - at);
}

struct Stats {
  int64_t cycles = 0;
  int64_t quiet_cycles = 0;
  int64_t starts = 0;
  int64_t preemptions = 0;
  int64_t cross_queue_preemptions = 0;
  int64_t cross_queue_plans = 0;
  // Cross-queue plans that take a side below its guarantee (c2: only when J reclaims), and
  // those of them whose borrowing the bounds on U_J could not settle.
  int64_t below_guarantee_plans = 0;
  int64_t undetermined_plans = 0;
  // Cross-queue plans that leave the victim side less than one GPU above its guarantee.
  int64_t near_guarantee_plans = 0;
  int64_t unparsed_reasons = 0;
  int64_t restarted_victims = 0;
  // Preemptions whose reason names another beneficiary than for_job (settling handed the room on).
  int64_t handed_on = 0;
  int64_t stretches = 0;

  void Add(const Stats& o) {
    cycles += o.cycles;
    quiet_cycles += o.quiet_cycles;
    starts += o.starts;
    preemptions += o.preemptions;
    cross_queue_preemptions += o.cross_queue_preemptions;
    cross_queue_plans += o.cross_queue_plans;
    below_guarantee_plans += o.below_guarantee_plans;
    undetermined_plans += o.undetermined_plans;
    near_guarantee_plans += o.near_guarantee_plans;
    unparsed_reasons += o.unparsed_reasons;
    restarted_victims += o.restarted_victims;
    handed_on += o.handed_on;
    stretches += o.stretches;
  }
};

// Checks (a)-(d) on one cycle.
// `tentative`: jobs of `s` running on a start an earlier pass of the same cycle made (settling
// may revoke those whatever their minimum runtime or preemptible flag; docs/engine.md).
inline void CheckCycle(const Setup& setup, const Snapshot& s, const Decisions& d,
                       const Snapshot& applied, Stats& stats,
                       std::vector<std::pair<Property, std::string>>& out,
                       const std::set<std::string>& tentative = {}) {
  const Tree tree(s);
  auto fail = [&out](Property p, std::string what) { out.emplace_back(p, std::move(what)); };
  std::map<std::string, const StartDecision*> started;
  for (const StartDecision& st : d.starts) started[st.job] = &st;

  // Whole gangs started (no elastic groups in these scenarios).
  for (const StartDecision& st : d.starts) {
    const Job* job = tree.job(st.job);
    if (job == nullptr) continue;
    for (const TaskGroup& g : job->groups) {
      const auto n = std::count_if(st.placements.begin(), st.placements.end(),
                                   [&g](const ReplicaPlacement& p) { return p.group == g.name; });
      if (n != g.replicas) {
        fail(kWholePreemptibleVictims,
             fmt::format("{} starts {} of {} replicas of group {}", st.job, n, g.replicas, g.name));
      }
    }
  }

  std::map<std::string, std::vector<const PreemptDecision*>> plans;  // by beneficiary
  std::set<std::string> victims;
  for (const PreemptDecision& p : d.preemptions) {
    ++stats.preemptions;
    const Job* victim = tree.job(p.job);
    const Job* beneficiary = tree.job(p.for_job);
    // (a) The beneficiary was pending, or is a victim of this cycle placed again (settling may
    // hand a victim's room to another victim of a higher rank).
    const bool replaced_victim =
        beneficiary != nullptr && beneficiary->state == JobState::kRunning &&
        started.count(p.for_job) &&
        std::any_of(d.preemptions.begin(), d.preemptions.end(),
                    [&](const PreemptDecision& q) { return q.job == p.for_job; });
    if (beneficiary == nullptr || (beneficiary->state != JobState::kPending && !replaced_victim)) {
      fail(kBeneficiaryStarts,
           fmt::format("{} evicted for {}, not a pending job", p.job, p.for_job));
    }
    if (!started.count(p.for_job)) {
      fail(kBeneficiaryStarts,
           fmt::format("{} evicted for {}, which does not start", p.job, p.for_job));
    }
    if (p.for_job == p.job) fail(kBeneficiaryStarts, fmt::format("{} evicted for itself", p.job));
    // (b)
    if (!victims.insert(p.job).second) {
      fail(kWholePreemptibleVictims, fmt::format("{} preempted twice in one cycle", p.job));
    }
    if (victim == nullptr || victim->state != JobState::kRunning) {
      fail(kWholePreemptibleVictims, fmt::format("{} preempted, not a running job", p.job));
      continue;
    }
    if (tentative.count(p.job)) {
      // A revoked start: no minimum runtime, and not a preemption the host will see.
    } else if (!victim->preemptible) {
      fail(kWholePreemptibleVictims, fmt::format("{} preempted, not preemptible", p.job));
    }
    if (!tentative.count(p.job) &&
        (!victim->start_time || s.now - *victim->start_time < victim->min_runtime_s)) {
      fail(kWholePreemptibleVictims,
           fmt::format("{} preempted {} s after its start, min runtime {} s", p.job,
                       victim->start_time ? s.now - *victim->start_time : -1,
                       victim->min_runtime_s));
    }
    for (const Job& after : applied.jobs) {
      if (after.id != p.job) continue;
      auto restart = started.find(p.job);
      if (restart != started.end()) {
        ++stats.restarted_victims;
        if (after.placements != restart->second->placements) {
          fail(kWholePreemptibleVictims,
               fmt::format("{} restarted, not where its Start says", p.job));
        }
      } else if (after.state != JobState::kPending || !after.placements.empty()) {
        fail(kWholePreemptibleVictims,
             fmt::format("{} still holds placements once evicted", p.job));
      }
    }
    if (beneficiary == nullptr) continue;
    // (c) and (d) judge the plan of the pass that evicted the victim: its beneficiary is the one
    // the reason names (for_job may name a later one, see BeneficiaryInReason()).
    if (const std::string named = BeneficiaryInReason(p.reason);
        !named.empty() && named != p.for_job) {
      ++stats.handed_on;
      beneficiary = tree.job(named);
      if (beneficiary == nullptr) {
        fail(kBeneficiaryStarts, fmt::format("{}'s reason names {}, not a job", p.job, named));
        continue;
      }
    }
    // (d)
    if (victim->queue == beneficiary->queue) {
      if (victim->priority >= beneficiary->priority) {
        fail(
            kPriorityWithinQueue,
            fmt::format("{} (priority {}) evicted for {} (priority {}) of the same queue {}", p.job,
                        victim->priority, beneficiary->id, beneficiary->priority, victim->queue));
      }
    } else {
      ++stats.cross_queue_preemptions;
      if (!setup.policy.preemption.reclaim_across_queues) {
        fail(kPriorityWithinQueue,
             fmt::format("{} of queue {} evicted for {} of queue {} without "
                         "reclaim_across_queues",
                         p.job, victim->queue, beneficiary->id, beneficiary->queue));
      }
    }
    plans[beneficiary->id].push_back(&p);
  }

  // (c) Each plan with victims of other queues. A cycle that settled in several passes made its
  // plans on states the decisions do not show (a pass may evict a job a later one restores); its
  // passes are checked one by one instead (CheckPasses()).
  if (d.counters.passes > 1) return;
  for (const auto& [for_job, plan] : plans) {
    const Job& b = *tree.job(for_job);
    int64_t own = 0;
    std::string job_side;
    bool bad_sides = false;
    std::map<std::string, int64_t> taken;  // victim side -> milli
    std::map<std::string, const PreemptDecision*> reason_of;
    for (const PreemptDecision* p : plan) {
      const Job& v = *tree.job(p->job);
      if (v.queue == b.queue) {
        own += tree.RunningMilli(v);
        continue;
      }
      const std::string side = tree.Side(v.queue, b.queue);
      const std::string mine = tree.Side(b.queue, v.queue);
      if (side.empty() || mine.empty()) {
        fail(kGuarantees, fmt::format("{} of queue {} evicted for {} of queue {}: one queue is "
                                      "an ancestor of the other",
                                      v.id, v.queue, b.id, b.queue));
        bad_sides = true;
        continue;
      }
      if (!job_side.empty() && job_side != mine) {
        fail(kGuarantees,
             fmt::format("the plan for {} compares two sides, {} and {}", b.id, job_side, mine));
        bad_sides = true;
      }
      job_side = mine;
      taken[side] += tree.RunningMilli(v);
      reason_of[side] = p;
    }
    if (taken.empty() || bad_sides) continue;
    ++stats.cross_queue_plans;
    // Other plans' victims and other starts, to bound usage at the time of this plan.
    auto evicted_elsewhere = [&](const std::string& side) {
      int64_t total = 0;
      for (const auto& [other, other_plan] : plans) {
        if (other == for_job) continue;
        for (const PreemptDecision* p : other_plan) {
          const Job& v = *tree.job(p->job);
          if (tree.InSubtree(v.queue, side)) total += tree.RunningMilli(v);
        }
      }
      return total;
    };
    auto started_elsewhere = [&](const std::string& side) {
      int64_t total = 0;
      for (const StartDecision& st : d.starts) {
        const Job* j = tree.job(st.job);
        // Victims restart only in the pass after every plan.
        if (st.job == for_job || j == nullptr || j->state != JobState::kPending) continue;
        if (tree.InSubtree(j->queue, side)) total += tree.PlacedMilli(*j, st.placements);
      }
      return total;
    };
    const int64_t gang = Tree::GangMilli(b);
    const int64_t j_start = tree.Usage(job_side);
    const int64_t j_low = j_start - evicted_elsewhere(job_side) + gang - own;
    const int64_t j_high = j_start + started_elsewhere(job_side) + gang - own;
    const int64_t g_j = tree.Guarantee(job_side);
    const int64_t e_j = Entitlement(d, job_side);
    const bool surely_borrowing = j_low > g_j;
    const bool surely_reclaiming = j_high <= g_j;
    for (const auto& [side, m] : taken) {
      const int64_t g_s = tree.Guarantee(side);
      const int64_t e_s = Entitlement(d, side);
      int64_t u_low = tree.Usage(side) - evicted_elsewhere(side);
      int64_t u_high = tree.Usage(side) + started_elsewhere(side);
      const PreemptDecision& p = *reason_of[side];
      if (std::optional<ReasonFacts> facts = ParseReason(p.reason)) {
        if (facts->side != side || facts->entitlement != e_s || facts->usage < u_low ||
            facts->usage > u_high) {
          fail(kGuarantees,
               fmt::format("{} evicted for {}: the reason '{}' does not match side {} (usage "
                           "between {} and {}, entitlement {})",
                           p.job, for_job, p.reason, side, u_low, u_high, e_s));
        }
        u_low = u_high = facts->usage;
      } else {
        ++stats.unparsed_reasons;
      }
      const std::string plan_text = fmt::format(
          "plan for {} (side {}: {} + gang {} - own {} -> [{}, {}], guarantee {}, "
          "entitlement {}) takes {} from side {} (usage [{}, {}], guarantee {}, "
          "entitlement {})",
          for_job, job_side, j_start, gang, own, j_low, j_high, g_j, e_j, m, side, u_low, u_high,
          g_s, e_s);
      // (c1)
      if (u_high <= e_s)
        fail(kGuarantees, "(c1) victim side not above its entitlement: " + plan_text);
      // (c2)
      if (u_high - m < g_s + kMilliPerGpu) ++stats.near_guarantee_plans;
      if (u_high <= g_s) {
        fail(kGuarantees, "(c2) victim side not above its guarantee: " + plan_text);
      } else if (u_high - m < g_s) {
        ++stats.below_guarantee_plans;
        if (surely_borrowing) {
          fail(kGuarantees,
               "(c2) victim side taken below its guarantee for a borrowing side: " + plan_text);
        } else if (!surely_reclaiming) {
          ++stats.undetermined_plans;
        }
      }
      // (c3)
      if (j_low - e_j > u_high - m - e_s) {
        fail(kGuarantees,
             "(c3) the beneficiary's side ends further above its entitlement: " + plan_text);
      }
    }
  }
}

// A cycle that settled in several passes (docs/engine.md, "Settling"): each pass, on the state
// it saw, is one pass of the stages, so (a)-(d) hold for it exactly as for a one-pass cycle.
inline void CheckPasses(const Setup& setup, const Snapshot& s, Stats& stats,
                        std::vector<std::pair<Property, std::string>>& out) {
  int pass = 0;
  internal::RunCycle(s, setup.policy, [&](const Snapshot& input, const Decisions& d) {
    ++pass;
    Snapshot applied = input;
    if (absl::Status status = ApplyDecisions(d, applied); !status.ok()) {
      out.emplace_back(kSanity,
                       fmt::format("pass {}: ApplyDecisions failed: {}", pass, status.ToString()));
      return;
    }
    // Jobs the earlier passes started (or restarted, elsewhere or in place: a victim stage 6b
    // re-placed where it ran starts again at `now`).
    std::set<std::string> tentative;
    for (size_t i = 0; i < input.jobs.size(); ++i) {
      const Job& now = input.jobs[i];
      const Job& before = s.jobs[i];
      if (now.state == JobState::kRunning &&
          (before.state != JobState::kRunning || before.placements != now.placements ||
           before.start_time != now.start_time)) {
        tentative.insert(now.id);
      }
    }
    Stats pass_stats;
    std::vector<std::pair<Property, std::string>> found;
    CheckCycle(setup, input, d, applied, pass_stats, found, tentative);
    stats.cross_queue_plans += pass_stats.cross_queue_plans;
    stats.near_guarantee_plans += pass_stats.near_guarantee_plans;
    stats.below_guarantee_plans += pass_stats.below_guarantee_plans;
    stats.undetermined_plans += pass_stats.undetermined_plans;
    stats.unparsed_reasons += pass_stats.unparsed_reasons;
    for (auto& [property, what] : found) {
      out.emplace_back(property, fmt::format("pass {}: {}", pass, what));
    }
  });
}

}  // namespace gpupool::preemption_cycles

#endif  // GPUPOOL_TESTS_CORE_PREEMPTION_CYCLES_CHECKS_H_
