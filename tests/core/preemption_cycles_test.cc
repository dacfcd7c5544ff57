// Preemption over many cycles: 1,000 seeded multi-queue scenarios (GenerateMultiQueueScenario),
// each replayed for kCycles cycles as a host would run them: Schedule(), check the decisions,
// ApplyDecisions() (evictions, then starts), advance `now` by a fixed step (300 s or 1,200 s,
// by seed) and each running job's attained_service_s by the same step, and at the end of each
// stretch of 4-8 cycles inject an external change (1-3 jobs arrive, a running job completes, a
// running job reports a checkpoint). Within a stretch nothing changes but time and what the
// decisions do. Policies: preemption on; reclaim_across_queues on 3 seeds in 5; fair-share queue
// turns on 1 in 3; victim_order cheapest-first or lowest-priority-first, half each; best-fit or
// spread; a checkpoint grace on some.
//
// Properties, checked on every cycle (the letters are those of the issue):
//   (s) sanity: Schedule() and ApplyDecisions() succeed and the applied snapshot validates;
//   (a) nothing is evicted without the beneficiary placing: every Preempt's for_job was pending
//       (or is a victim of the same cycle placed again) and has a Start in the same decisions;
//   A cycle that settled in several passes (counters.passes > 1; docs/engine.md, "Settling") is
//   also checked pass by pass, each pass on the state it saw (CheckPasses()): (a)-(d) hold for
//   every pass exactly as for a one-pass cycle, and (c) is judged only there;
//   (b) victims are whole gangs, preemptible and past their minimum runtime: each victim runs in
//       the snapshot, is preempted once, is preemptible, has run at least min_runtime_s (now -
//       start_time), and once applied holds nothing unless the same decisions restart it whole
//       (every Start places every replica of every group);
//   (c) guarantees, exactly the rules of PlanAllowed (src/engine/preempt.h) for each plan (the
//       victims with one for_job) that takes victims of other queues: sides S (victim) and J
//       (beneficiary) are the queues just below the lowest common ancestor (neither queue is an
//       ancestor of the other) and J is the same for every victim; m_S is what the plan takes
//       from S, own the beneficiary's own-queue victims, gang the beneficiary at min replicas,
//       U the usage over all models at the time of the plan, E the "*" entitlement of the cycle
//       (queue_shares), G the guarantee (max of the "*" guarantee and the per-model sum):
//         (c1) U_S > E_S;
//         (c2) if J borrows (U_J + gang - own > G_J): U_S - m_S >= G_S (usage within the
//              guarantee is never taken for another queue's borrowing); else U_S > G_S;
//         (c3) no loops: U_J + gang - own - E_J <= U_S - m_S - E_S.
//       U_S at the time of the plan is read from the Preempt's reason ("queue S holds U
//       milli-GPUs, above its entitlement of E"), which must name S and E_S. U_J is known only
//       within bounds (starts earlier in the cycle raise it, other plans' evictions lower it):
//       low = its usage at the start of the cycle minus every other plan's victims in J, high =
//       start plus every other start into J. A rule is failed when it fails for every U_J in
//       [low, high]; plans where (c2) depends on where U_J lies are counted as undetermined;
//   (d) within a queue a victim has a strictly lower priority than its beneficiary; a victim of
//       another queue only with reclaim_across_queues;
//   (e) no loop. A cycle is quiet when it has no Start and no Preempt. A trigger is an external
//       change before the cycle (or the first cycle), or a preemptible job that was running at
//       the previous cycle inside its minimum runtime and is past it now (a new possible
//       victim). Checked:
//         (e1) quiescence: there are never 4 consecutive non-quiet cycles of which the last 3
//              follow no trigger;
//         (e2) a quiet state stays quiet: a cycle after a quiet one is quiet unless a trigger
//              precedes it (the snapshot differs only in `now`);
//         (e3) no eviction back: within a stretch (between external changes), if A was evicted
//              for B, B is never evicted for A;
//         (e4) within a stretch, no job is preempted more than once;
//   (f) determinism: replaying the same seed again gives byte-identical decisions every cycle.
// A failure prints the seed, the cycle, the snapshot before it and its decisions; replay one seed
// cycle by cycle with
//   GPUPOOL_CYCLES_SEED=<seed> preemption_cycles_test --gtest_also_run_disabled_tests
//       --gtest_filter='*PrintReplay*'
//
// (e1), (e3) and (e4), which failed on some seeds once, are checked in their own tests below,
// with the seeds they failed on and the causes; the others are all checked by
// InvariantsHoldOverCycles.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "cycle.h"
#include "fmt/format.h"
#include "gpupool/apply.h"
#include "gpupool/schedule.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/generator.h"
#include "testing/seeds.h"

namespace gpupool {
namespace {

using ::gpupool::testing::DecisionsToText;
using ::gpupool::testing::GenerateMultiQueueJob;
using ::gpupool::testing::GenerateMultiQueueScenario;
using ::gpupool::testing::Rng;

// 1,000 seeds in the regular suite; the long run sets GPUPOOL_PROPERTY_SEEDS (testing/seeds.h).
const uint64_t kSeeds = ::gpupool::testing::PropertySeeds(1000);
constexpr int kCycles = 20;
// Non-quiet cycles in a row, after a trigger, that (e1) tolerates.
constexpr int kQuiesceWithin = 4;
constexpr int kReportedSeeds = 3;

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

constexpr std::array<const char*, kPropertyCount> kPropertyNames = {
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

Setup SetupForSeed(uint64_t seed) {
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

std::string SetupText(const Setup& setup) {
  const Policy& p = setup.policy;
  return fmt::format(
      "reclaim_across_queues={} queue_order={} victim_order={} placement={} grace={} step={}s",
      p.preemption.reclaim_across_queues, QueueOrderName(p.queue_order),
      VictimOrderName(p.preemption.victim_order), PlacementStrategyName(p.placement),
      p.preemption.checkpoint_grace_s, setup.step);
}

// The snapshot in a few lines: queues with quotas, nodes, jobs with their state.
std::string SnapshotText(const Snapshot& s) {
  std::string out = fmt::format("now {}\n", s.now);
  for (const Queue& q : s.queues) {
    out += fmt::format("  queue {} parent '{}' can_borrow {}", q.id, q.parent, q.can_borrow);
    for (const Quota& quota : q.quotas) {
      out += fmt::format(" [{} g={} limit={} w={}]", quota.gpu_model, quota.guaranteed_milli,
                         quota.limit_milli ? fmt::format("{}", *quota.limit_milli) : "-",
                         quota.over_quota_weight);
    }
    out += "\n";
  }
  for (const Node& n : s.nodes) {
    out += fmt::format("  node {} {} x{}\n", n.id, n.gpu_model, n.gpus.size());
  }
  for (const Job& j : s.jobs) {
    out += fmt::format("  job {} queue {} prio {} {} {}", j.id, j.queue, j.priority,
                       j.state == JobState::kRunning ? "running" : "pending",
                       j.preemptible ? "preemptible" : "not-preemptible");
    if (j.min_runtime_s > 0) out += fmt::format(" min_runtime {}", j.min_runtime_s);
    for (const TaskGroup& g : j.groups) {
      out += fmt::format(" {}:{}x{}", g.name, g.replicas, g.request.gpu_milli);
      if (!g.gpu_models.empty()) out += fmt::format("({})", fmt::join(g.gpu_models, "|"));
    }
    if (j.start_time) out += fmt::format(" start {}", *j.start_time);
    if (j.checkpointing.interval_s > 0) {
      out += fmt::format(" every {} restore {}", j.checkpointing.interval_s,
                         j.checkpointing.restore_time_s);
    }
    if (j.checkpointing.last_checkpoint_time) {
      out += fmt::format(" ckpt {}", *j.checkpointing.last_checkpoint_time);
    }
    if (j.attained_service_s > 0) out += fmt::format(" attained {}", j.attained_service_s);
    for (const ReplicaPlacement& p : j.placements) {
      out += fmt::format(" {}/{}@{}:{}", p.group, p.replica, p.node, fmt::join(p.gpus, ","));
    }
    out += "\n";
  }
  return out;
}

// The fair-share rows of the cycle, one line.
std::string SharesText(const Decisions& d) {
  std::string out = "shares (entitlement/usage/demand/guarantee):";
  for (const QueueShare& r : d.queue_shares) {
    out += fmt::format(" {}[{}]={}/{}/{}/{}", r.queue, r.gpu_model, r.entitlement_milli,
                       r.usage_milli, r.demand_milli, r.guaranteed_milli);
  }
  return out + "\n";
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
int64_t Entitlement(const Decisions& d, const std::string& q) {
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
std::optional<ReasonFacts> ParseReason(const std::string& reason) {
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
std::string BeneficiaryInReason(const std::string& reason) {
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

struct Violation {
  Property property;
  int cycle;
  std::string what;
  std::string context;  // snapshot and decisions of that cycle
};

struct Replay {
  std::vector<std::string> texts;  // decisions of each cycle
  std::vector<Violation> violations;
  Stats stats;
};

// Checks (a)-(d) on one cycle.
// `tentative`: jobs of `s` running on a start an earlier pass of the same cycle made (settling
// may revoke those whatever their minimum runtime or preemptible flag; docs/engine.md).
void CheckCycle(const Setup& setup, const Snapshot& s, const Decisions& d, const Snapshot& applied,
                Stats& stats, std::vector<std::pair<Property, std::string>>& out,
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
void CheckPasses(const Setup& setup, const Snapshot& s, Stats& stats,
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

Replay RunReplay(uint64_t seed, bool verbose = false) {
  Replay replay;
  const Setup setup = SetupForSeed(seed);
  Snapshot s = GenerateMultiQueueScenario(seed);
  Rng rng(seed * 0x9e3779b97f4a7c15ULL + 12345);
  int next_job = static_cast<int>(s.jobs.size());

  // Cycles that follow an external change: stretches of 4-8 cycles.
  std::vector<bool> change_before(kCycles, false);
  for (int at = static_cast<int>(rng.UniformInt(4, 8)); at < kCycles;
       at += static_cast<int>(rng.UniformInt(4, 8))) {
    change_before[at] = true;
  }

  // Per stretch: (victim, beneficiary) pairs and preemptions per job.
  std::set<std::pair<std::string, std::string>> evicted_for;
  std::map<std::string, int> preempted;
  // "*" entitlements at the first cycle of the stretch, and whether any has moved since.
  std::map<std::string, int64_t> stretch_entitlements;
  bool entitlements_moved = false;
  int active_run = 0;
  bool previous_quiet = false;
  // Jobs running at the previous cycle inside their minimum runtime: their start time.
  std::map<std::string, int64_t> inside_min_runtime;

  for (int cycle = 0; cycle < kCycles; ++cycle) {
    bool trigger = cycle == 0;
    if (change_before[cycle]) {
      trigger = true;
      // An external change: arrivals, a completion, a checkpoint.
      std::vector<size_t> running;
      for (size_t i = 0; i < s.jobs.size(); ++i) {
        if (s.jobs[i].state == JobState::kRunning) running.push_back(i);
      }
      bool changed = false;
      if (!running.empty() && rng.Percent(30)) {
        Job& job = s.jobs[running[rng.UniformInt(0, static_cast<int64_t>(running.size()) - 1)]];
        if (job.checkpointing.interval_s > 0) job.checkpointing.last_checkpoint_time = s.now;
      }
      if (!running.empty() && rng.Percent(50)) {
        s.jobs.erase(s.jobs.begin() +
                     static_cast<std::ptrdiff_t>(
                         running[rng.UniformInt(0, static_cast<int64_t>(running.size()) - 1)]));
        changed = true;
      }
      if (!changed || rng.Percent(60)) {
        const int64_t arrivals = rng.UniformInt(1, 3);
        for (int64_t a = 0; a < arrivals; ++a) {
          s.jobs.push_back(GenerateMultiQueueJob(rng, s, fmt::format("j{:02d}", next_job++)));
        }
      }
      evicted_for.clear();
      preempted.clear();
      ++replay.stats.stretches;
    }
    if (cycle == 0) ++replay.stats.stretches;
    // A job running at the previous cycle that was inside its minimum runtime and is not now.
    for (const Job& job : s.jobs) {
      auto it = inside_min_runtime.find(job.id);
      if (job.state == JobState::kRunning && it != inside_min_runtime.end() &&
          *job.start_time == it->second && s.now - *job.start_time >= job.min_runtime_s) {
        trigger = true;
      }
    }

    const Snapshot before = s;
    absl::StatusOr<Decisions> result = Schedule(before, setup.policy);
    std::vector<std::pair<Property, std::string>> found;
    std::string text;
    if (!result.ok()) {
      found.emplace_back(kSanity, fmt::format("Schedule failed: {}", result.status().ToString()));
    } else {
      text = DecisionsToText(*result) + SharesText(*result);
      if (absl::Status status = ApplyDecisions(*result, s); !status.ok()) {
        found.emplace_back(kSanity, fmt::format("ApplyDecisions failed: {}", status.ToString()));
      } else if (absl::Status valid = ValidateSnapshot(s); !valid.ok()) {
        found.emplace_back(kSanity, fmt::format("applied snapshot invalid: {}", valid.ToString()));
      } else {
        if (result->counters.passes >= 8) {
          found.emplace_back(kSanity,
                             fmt::format("cut at {} passes: not settled", result->counters.passes));
        }
        CheckCycle(setup, before, *result, s, replay.stats, found);
        if (result->counters.passes > 1) CheckPasses(setup, before, replay.stats, found);
      }
    }
    replay.texts.push_back(text);
    if (verbose) {
      std::cout << fmt::format("=== seed {} cycle {}{}{} ({})\n{}--- decisions\n{}", seed, cycle,
                               change_before[cycle] ? " after an external change" : "",
                               trigger ? " [trigger]" : "", SetupText(setup), SnapshotText(before),
                               text);
    }

    const Decisions empty;
    const Decisions& d = result.ok() ? *result : empty;
    const bool quiet = d.starts.empty() && d.preemptions.empty();
    std::map<std::string, int64_t> entitlements;
    for (const QueueShare& share : d.queue_shares) {
      if (share.gpu_model == kAnyGpuModel) entitlements[share.queue] = share.entitlement_milli;
    }
    if (cycle == 0 || change_before[cycle]) {
      stretch_entitlements = entitlements;
      entitlements_moved = false;
    } else if (entitlements != stretch_entitlements) {
      entitlements_moved = true;
    }
    const char* moved = entitlements_moved ? " (entitlements moved in this stretch)"
                                           : " (entitlements constant in this stretch)";
    ++replay.stats.cycles;
    replay.stats.starts += static_cast<int64_t>(d.starts.size());
    if (quiet) ++replay.stats.quiet_cycles;
    // (e1), (e2)
    if (trigger) active_run = 0;
    active_run = quiet ? 0 : active_run + 1;
    if (active_run == kQuiesceWithin) {
      found.emplace_back(kQuiesces, fmt::format("{} non-quiet cycles in a row without a trigger "
                                                "since the first of them{}",
                                                kQuiesceWithin, moved));
    }
    if (previous_quiet && !quiet && !trigger) {
      found.emplace_back(kStaysQuiet, "the previous cycle was quiet and nothing changed but time");
    }
    previous_quiet = quiet;
    // (e3), (e4)
    for (const PreemptDecision& p : d.preemptions) {
      if (evicted_for.count({p.for_job, p.job})) {
        found.emplace_back(kNoEvictionBack,
                           fmt::format("{} evicted for {}, which it evicted earlier in this "
                                       "stretch{}",
                                       p.job, p.for_job, moved));
      }
      evicted_for.insert({p.job, p.for_job});
      if (++preempted[p.job] == 2) {
        found.emplace_back(
            kOnePreemptionPerStretch,
            fmt::format("{} preempted a second time in this stretch{}", p.job, moved));
      }
    }

    for (auto& [property, what] : found) {
      replay.violations.push_back({property, cycle, std::move(what),
                                   fmt::format("snapshot before the cycle:\n{}decisions:\n{}",
                                               SnapshotText(before), text)});
    }
    if (!result.ok()) break;

    inside_min_runtime.clear();
    for (const Job& job : before.jobs) {
      if (job.state == JobState::kRunning && job.preemptible &&
          before.now - *job.start_time < job.min_runtime_s) {
        inside_min_runtime[job.id] = *job.start_time;
      }
    }
    // As a host reports it: a job running through the step has done a step more work.
    for (Job& job : s.jobs) {
      if (job.state == JobState::kRunning) job.attained_service_s += setup.step;
    }
    s.now += setup.step;
  }
  return replay;
}

struct Results {
  Stats stats;
  std::array<std::vector<uint64_t>, kPropertyCount> failing;  // seeds, ascending
  std::array<std::string, kPropertyCount> reports;            // the first kReportedSeeds
  // Failing seeds per property with reclaim_across_queues off/on, and per victim order
  // (cheapest-first, lowest-priority-first).
  std::array<std::array<int, 2>, kPropertyCount> by_reclaim{};
  std::array<std::array<int, 2>, kPropertyCount> by_victim_order{};
};

const Results& AllResults() {
  static const Results* results = [] {
    auto* r = new Results;
    for (uint64_t seed = 0; seed < kSeeds; ++seed) {
      const Replay replay = RunReplay(seed);
      r->stats.Add(replay.stats);
      std::array<bool, kPropertyCount> seen{};
      auto record = [&](Property p, const std::string& text) {
        if (seen[p]) return;
        seen[p] = true;
        r->failing[p].push_back(seed);
        const Policy policy = SetupForSeed(seed).policy;
        ++r->by_reclaim[p][policy.preemption.reclaim_across_queues ? 1 : 0];
        ++r->by_victim_order[p]
                            [policy.preemption.victim_order == VictimOrder::kCheapestFirst ? 0 : 1];
        if (r->failing[p].size() <= kReportedSeeds) r->reports[p] += text;
      };
      for (const Violation& v : replay.violations) {
        record(v.property, fmt::format("--- seed {} ({}), cycle {}: {}\n{}", seed,
                                       SetupText(SetupForSeed(seed)), v.cycle, v.what, v.context));
      }
      // (f): the same seed again, the same decisions.
      const Replay again = RunReplay(seed);
      if (again.texts != replay.texts) {
        size_t c = 0;
        while (c < std::min(again.texts.size(), replay.texts.size()) &&
               again.texts[c] == replay.texts[c]) {
          ++c;
        }
        record(kDeterminism,
               fmt::format("--- seed {}: cycle {} differs between two replays\n", seed, c));
      }
    }
    return r;
  }();
  return *results;
}

void ExpectProperty(Property p) {
  const Results& r = AllResults();
  const std::vector<uint64_t>& seeds = r.failing[p];
  EXPECT_TRUE(seeds.empty()) << kPropertyNames[p] << ": fails on " << seeds.size() << " of "
                             << kSeeds << " seeds: " << fmt::format("{}", fmt::join(seeds, " "))
                             << "\nthe first " << kReportedSeeds << ":\n"
                             << r.reports[p];
}

// Every property that holds today, and that the scenarios exercise what they check.
TEST(PreemptionCyclesTest, InvariantsHoldOverCycles) {
  const Results& r = AllResults();
  std::string summary;
  for (int p = 0; p < kPropertyCount; ++p) {
    summary += fmt::format(
        "  {}: {} failing seeds (reclaim off/on {}/{}, cheapest-first/lowest-priority-first "
        "{}/{})\n",
        kPropertyNames[p], r.failing[p].size(), r.by_reclaim[p][0], r.by_reclaim[p][1],
        r.by_victim_order[p][0], r.by_victim_order[p][1]);
  }
  const Stats& s = r.stats;
  std::cout << fmt::format(
      "{} seeds x {} cycles: {} cycles ({} quiet) in {} stretches, {} starts, {} preemptions "
      "({} across queues, {} victims restarted at once, {} handed on by settling), {} "
      "cross-queue plans ({} leaving the victim side within one GPU of its guarantee, {} taking "
      "it below (J reclaiming), {} of "
      "them undetermined; {} reasons unparsed)\n{}",
      kSeeds, kCycles, s.cycles, s.quiet_cycles, s.stretches, s.starts, s.preemptions,
      s.cross_queue_preemptions, s.restarted_victims, s.handed_on, s.cross_queue_plans,
      s.near_guarantee_plans, s.below_guarantee_plans, s.undetermined_plans, s.unparsed_reasons,
      summary);
  for (Property p : {kSanity, kBeneficiaryStarts, kWholePreemptibleVictims, kGuarantees,
                     kPriorityWithinQueue, kStaysQuiet, kDeterminism}) {
    ExpectProperty(p);
  }
  // Not vacuous.
  EXPECT_GT(s.preemptions, 1000);
  EXPECT_GT(s.cross_queue_plans, 200);
  EXPECT_GT(s.stretches, 3 * static_cast<int64_t>(kSeeds));
  EXPECT_GT(s.cycles - s.quiet_cycles, 2000);
}

// (e1), (e3) and (e4) failed on a few seeds, found by replaying them (GPUPOOL_CYCLES_SEED, see
// the top of the file); each failure says whether the "*" entitlements moved during its stretch.
// Three causes, all fixed: (e1), (e3) and (e4) hold on every seed.
//
// 1. (Fixed.) Entitlements moved with placement. A running job's demand counted on the GPU model it
// ran
//    on, a pending job's on the first model it accepts (src/engine/entitlements.cc), so evicting or
//    (re)starting a job that accepts several models moves its demand between models; the
//    per-model water-filling changes and so do the "*" entitlements that PlanAllowed compares.
//    The no-loop rule (c3) holds in each cycle against that cycle's entitlements, but the next
//    cycle's may let the victim's side reclaim back. Seed 171 (one A100 and three H100 nodes):
//    cycle 0, j06 (q1) evicts j05 and j10 of q2 (entitlements q1 2438, q2 2562); j05 and j10
//    ran on H100 and now count as pending A100 demand, so in cycle 1 q1's entitlement is 1626
//    and q2's 3374, and j05 (q2) reclaims j06 from q1 (3500 > 1626): B evicts A after A evicted
//    B (e3); j06 then evicts j00 a second time in cycle 2 (e4). Seed 715: j05 (q0) reclaims
//    j04 on H100 while counted as A100 demand; running on H100 it drops q0's entitlement from
//    6000 to 5000 (H100 is contended) and j04 reclaims it back. Seed 272 is the same. Counting
//    a running job's demand like a pending one's (on its first accepted model) removes every
//    (e3) failure and 3 of the 5 (e1) ones; src/engine/entitlements.cc now does so for jobs that
//    accept several models, and (e3) is enabled: 0 of 1,000 seeds fail it (engine of 353cc65 plus
//    that change); (e1) fails on 502 635 and (e4) on 107 216 372 385 421 456 476 502 582 606 635
//    686 800 821, all with reclaim across queues on.
//
// 2. (Fixed by settling, src/engine/settle.cc.) No second chance within the cycle. Victims were
//    retried only
//    without preemption (stage 6b), a job that failed before an eviction or a start is not
//    retried with preemption afterwards, jobs started in the cycle are never victims, and both
//    passes serve jobs in job order whatever their queue's share. So capacity a reclaim frees
//    can go to a job of a queue far above its entitlement (or to the victim itself, restarted
//    in 6b), which the under-served queue reclaims the next cycle; each hop of such a cascade
//    takes a cycle, and a job just restarted, having lost almost no work, is the cheapest
//    victim. Seed 222 (entitlements constant): cycle 16, j15 (q0, below its entitlement)
//    reclaims j12 from q2 (5500 > 750); cycle 17, j00 (q1) evicts j15 and j10 of q0; cycle 18,
//    j10 reclaims j11 from q4 and j12 (q2, priority 3) starts in what that freed before j15
//    (priority 1) is tried; cycle 19, j15 reclaims j12 again: four busy cycles in a row (e1) and
//    j12 preempted twice in one stretch (e4). Seed 216: j11 (q1, above its entitlement) is
//    reclaimed for j06 (q0) and restarted in 6b in the same cycle, then reclaimed again the next
//    cycle by j13 (q0), itself a victim of the first cycle that could not preempt until then.
//    Retrying failed jobs and victims with preemption in 6b (tried on a scratch copy) did not
//    fix this alone (e4 17 -> 16 seeds). Settling does: a cycle that evicts runs more passes on
//    the state its decisions leave, where the victims are pending again and may preempt, and
//    where this cycle's own starts may be revoked at no cost whatever their minimum runtime, until
//    a pass changes nothing. With it (e1) went from 5 seeds to 0 and (e4) from 17 to 3.
//
// 3. (Fixed: no job loses the same work twice, src/engine/lost_work.h RedoingLostWork().) A
//    restarted victim was protected only for a while. A victim that stage 6b places again (or
//    a job whose start the cycle keeps) starts a new minimum runtime. Later in the same
//    stretch, once a job's minimum runtime lapses (a trigger of (e1): time passes, nothing else
//    changes), a pending job may take that job and the restarted victim together. Seed 728
//    (reclaim off, cheapest-first): cycle 0, j07 (priority 3) is evicted for j11 (4) and placed
//    again elsewhere; cycle 1, j09's minimum runtime lapses and j04 (4) evicts j09 and j07, the
//    only set that frees j04's quota. Seeds 385 and 711 are the same across queues; in all
//    three the restarted victim is in the only set that works, so no victim order or price can
//    spare it, and a protection that lapses with time (tried: 600 to 7,200 s from the restart)
//    only moves the second eviction later in the stretch and breaks (e2) on 4 to 23 seeds (its
//    lapse is a change the host does not see). The rule (docs/engine.md, stage 6, "Who may be
//    evicted"): a job that resumed (its last checkpoint is before its start, or its attained
//    service is more than its time since its start) and has not checkpointed since is no
//    victim: evicting it would lose the same work a second time. A victim restarted in a stretch
//    is such a job until its next checkpoint, which this host reports only as an external change.
//    The replay reports attained service as a host does (a running job does a step more work each
//    step; it did not before, which changes nothing by itself: the same 3 seeds failed (e4) and
//    no other property failed on any seed). With the rule (e4) holds on 1,000 of 1,000 seeds,
//    with 1,790 preemptions instead of 1,912.
//
// Failing seeds of 1,000 before settling (engine of 19d1f5e, the same at 67c5ff8 and 91f63a4):
// (e1) 222 502 635 802 955; (e3) 171 272 715; (e4) 171 216 222 272 385 421 456 476 502 522 582
// 606 635 686 802 912 955. With settling: (e4) 385 711 728. With the resumed-job rule: none.
TEST(PreemptionCyclesTest, QuietWithinFourCyclesOfATrigger) { ExpectProperty(kQuiesces); }

TEST(PreemptionCyclesTest, NoJobEvictsAJobThatEvictedIt) { ExpectProperty(kNoEvictionBack); }

TEST(PreemptionCyclesTest, NoJobPreemptedTwiceInAStretch) {
  ExpectProperty(kOnePreemptionPerStretch);
}

// Seeds on which a victim was named for a job that does not start (found with 10,000 seeds):
// the passes moved the victim for a job that a later pass undid again (seed 1695: j00 evicted
// for j12's quota, re-placed on another node; a reclaim undid j12, and j13 took the GPU j00
// had held). for_job now names the job that took the victim's GPUs (docs/engine.md,
// "Settling").
// The replay of `seed`, with a failure for each violation of a property.
Replay ReplayWithoutViolations(uint64_t seed) {
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  Replay replay = RunReplay(seed);
  for (const Violation& v : replay.violations) {
    ADD_FAILURE() << fmt::format("cycle {}: {}: {}", v.cycle, kPropertyNames[v.property], v.what);
  }
  return replay;
}

TEST(PreemptionCyclesTest, AVictimMovedForAnUndoneStartNamesWhoTookItsRoom) {
  for (uint64_t seed : {1695, 3610}) ReplayWithoutViolations(seed);
}

// Seeds on which victims were moved for nothing (found with 10,000 seeds), now put back where
// they ran (docs/engine.md, "Settling"):
//   - 8655, (a) and (e1): in cycle 1, j06 (q1) was moved from n3 to n4 "for j05", a running job
//     of q1 that the passes evicted (queues q0 and q1 reclaim from each other) and put back where
//     it ran; in cycle 2 j00 the same way, and so on for four cycles. Cycles 1 and 2 now decide
//     nothing;
//   - 9740, (e3): in cycle 0, q0 and q2 reclaimed from each other and two running jobs on n0
//     swapped places, j01 moved "for" j04 and j04 "for" j01 (the job the reclaim was for, j00,
//     lost its start to j01). Neither goes back alone (each holds the other's room); both go
//     back together, and cycle 0 only starts j08 and j12.
TEST(PreemptionCyclesTest, VictimsMovedForNothingGoBack) {
  const Replay a = ReplayWithoutViolations(8655);
  const Replay b = ReplayWithoutViolations(9740);
  ASSERT_GE(a.texts.size(), 3u);
  ASSERT_GE(b.texts.size(), 1u);
  for (const std::string& text : {a.texts[1], a.texts[2], b.texts[0]}) {
    EXPECT_EQ(text.find("\npreempt "), std::string::npos) << text;
  }
  const std::string& first = b.texts[0];
  EXPECT_NE(first.find("\nstart j08 main/0@n1[1,2]x1000\nstart j12 "), std::string::npos) << first;
  EXPECT_EQ(first.find("start j01"), std::string::npos) << first;
  EXPECT_EQ(first.find("start j04"), std::string::npos) << first;
}

// Prints one replay cycle by cycle: GPUPOOL_CYCLES_SEED=<seed>.
TEST(PreemptionCyclesTest, DISABLED_PrintReplay) {
  const char* env = std::getenv("GPUPOOL_CYCLES_SEED");
  if (env == nullptr) GTEST_SKIP() << "set GPUPOOL_CYCLES_SEED";
  const uint64_t seed = std::strtoull(env, nullptr, 10);
  const Replay replay = RunReplay(seed, /*verbose=*/true);
  for (const Violation& v : replay.violations) {
    std::cout << fmt::format("VIOLATION cycle {}: {}: {}\n", v.cycle, kPropertyNames[v.property],
                             v.what);
  }
}

}  // namespace
}  // namespace gpupool
