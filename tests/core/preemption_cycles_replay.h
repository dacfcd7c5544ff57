// The replay of preemption_cycles_test.cc: one seeded multi-queue scenario run for kCycles cycles
// as a host would run them (RunReplay()), with (a)-(d) checked on every cycle
// (preemption_cycles_checks.h) and (e1)-(e4) across cycles, and the results over every seed
// (AllResults(), computed once per test executable, with (f): each seed replayed twice).
#ifndef GPUPOOL_TESTS_CORE_PREEMPTION_CYCLES_REPLAY_H_
#define GPUPOOL_TESTS_CORE_PREEMPTION_CYCLES_REPLAY_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "gpupool/apply.h"
#include "gpupool/schedule.h"
#include "gpupool/validate.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/generator.h"
#include "testing/seeds.h"
#include "tests/core/preemption_cycles_checks.h"

namespace gpupool::preemption_cycles {

using ::gpupool::testing::DecisionsToText;
using ::gpupool::testing::GenerateMultiQueueJob;
using ::gpupool::testing::GenerateMultiQueueScenario;
using ::gpupool::testing::Rng;

// 1,000 seeds in the regular suite; the long run sets GPUPOOL_PROPERTY_SEEDS (testing/seeds.h).
inline const uint64_t kSeeds = ::gpupool::testing::PropertySeeds(1000);
inline constexpr int kCycles = 20;
// Non-quiet cycles in a row, after a trigger, that (e1) tolerates.
inline constexpr int kQuiesceWithin = 4;
inline constexpr int kReportedSeeds = 3;

// The snapshot in a few lines: queues with quotas, nodes, jobs with their state.
inline std::string SnapshotText(const Snapshot& s) {
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
inline std::string SharesText(const Decisions& d) {
  std::string out = "shares (entitlement/usage/demand/guarantee):";
  for (const QueueShare& r : d.queue_shares) {
    out += fmt::format(" {}[{}]={}/{}/{}/{}", r.queue, r.gpu_model, r.entitlement_milli,
                       r.usage_milli, r.demand_milli, r.guaranteed_milli);
  }
  return out + "\n";
}

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

inline Replay RunReplay(uint64_t seed, bool verbose = false) {
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
        if (result->counters.passes >= kMaxSettlingPasses) {
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

inline const Results& AllResults() {
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

inline void ExpectProperty(Property p) {
  const Results& r = AllResults();
  const std::vector<uint64_t>& seeds = r.failing[p];
  EXPECT_TRUE(seeds.empty()) << kPropertyNames[p] << ": fails on " << seeds.size() << " of "
                             << kSeeds << " seeds: " << fmt::format("{}", fmt::join(seeds, " "))
                             << "\nthe first " << kReportedSeeds << ":\n"
                             << r.reports[p];
}

}  // namespace gpupool::preemption_cycles

#endif  // GPUPOOL_TESTS_CORE_PREEMPTION_CYCLES_REPLAY_H_
