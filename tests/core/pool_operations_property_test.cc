// Pool operations (docs/operations.md) on random snapshots: GenerateRandomSnapshot() with
// AddRandomOperations() on top (spot nodes, reclaims, spot-tolerant jobs, headroom rules),
// scheduled under the policy of the seed (PolicyForSeed()). The invariants are listed above the
// test. Failures name the seed; only the first few failing seeds are reported in full.
#include <algorithm>
#include <cstdint>
#include <cstdio>
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
#include "tests/core/property_helpers.h"

namespace gpupool {
namespace {

using ::gpupool::property_testing::kReportedSeeds;
using ::gpupool::property_testing::kSeeds;
using ::gpupool::property_testing::PolicyForSeed;
using ::gpupool::property_testing::WithVictimsEvicted;
using ::gpupool::property_testing::World;
using ::gpupool::testing::AddRandomOperations;
using ::gpupool::testing::DecisionsToText;
using ::gpupool::testing::GenerateRandomSnapshot;
using ::gpupool::testing::ShuffleSnapshot;

// The spot rule of docs/operations.md, restated: spot_tolerant, or preemptible and checkpointing
// at least every spot.max_checkpoint_interval_s (any interval when 0).
bool MayUseSpotNode(const Job& job, const Policy& policy) {
  if (job.spot_tolerant) return true;
  const int64_t interval = job.checkpointing.interval_s;
  const int64_t most = policy.spot.max_checkpoint_interval_s;
  return job.preemptible && interval > 0 && (most == 0 || interval <= most);
}

// Units of `rule` free when the GPUs in `occupied` (node, index) are taken: healthy GPUs of the
// rule's model on ready nodes that are neither spot nor reclaiming (docs/operations.md).
int64_t FreeUnits(const Snapshot& snapshot, const HeadroomRule& rule,
                  const std::set<std::pair<std::string, int32_t>>& occupied) {
  int64_t free = 0;
  for (const Node& node : snapshot.nodes) {
    if (node.gpu_model != rule.gpu_model || node.gpus.empty() || node.state != NodeState::kReady ||
        node.spot || node.reclaiming) {
      continue;
    }
    std::map<int32_t, bool> island_whole;
    bool node_whole = true;
    for (const Gpu& gpu : node.gpus) {
      const bool whole = gpu.healthy && !occupied.count({node.id, gpu.index});
      if (rule.shape == HeadroomShape::kGpus) free += whole ? 1 : 0;
      node_whole = node_whole && whole;
      auto [it, inserted] = island_whole.emplace(gpu.island, whole);
      if (!inserted) it->second = it->second && whole;
    }
    if (rule.shape == HeadroomShape::kNodes) free += node_whole ? 1 : 0;
    if (rule.shape == HeadroomShape::kIslands) {
      for (const auto& [island, whole] : island_whole) free += whole ? 1 : 0;
    }
  }
  return free;
}

// Pool operations on random snapshots (AddRandomOperations: spot nodes, reclaims, spot-tolerant
// jobs, headroom rules). For every seed: no start on a reclaiming node; no replica on a spot
// node for a job that may not use one; every running job on a reclaiming node is stopped with a
// spot-reclaim Preempt; every Preempt without for_job is a spot reclaim or a headroom
// restoration of a preemptible job below the rule's priority; no low-priority start eats into
// headroom: when a job below a rule's min_priority starts on the rule's model, the units free at
// the end of the cycle plus the units urgent starts took are at least the rule's count (each
// low-priority start left the count free; only urgent starts take units after it); shuffled
// input gives the same bytes; and after applying the decisions the next cycle neither reclaims
// nor restores again.
TEST(PropertyTest, OperationsInvariantsOnRandomSnapshots) {
  int failing_seeds = 0;
  int64_t reclaims = 0, restorations = 0, headroom_pending = 0, spot_starts = 0;
  std::string failing_list;
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    Snapshot snapshot = GenerateRandomSnapshot(seed);
    Policy policy = PolicyForSeed(seed);
    AddRandomOperations(seed, snapshot, policy);
    std::vector<std::string> violations;
    auto fail = [&](std::string what) {
      violations.push_back(fmt::format("seed {}: {}", seed, what));
    };
    if (absl::Status valid = ValidateSnapshot(snapshot); !valid.ok()) {
      fail(fmt::format("invalid snapshot: {}", valid.ToString()));
    }
    absl::StatusOr<Decisions> result = Schedule(snapshot, policy);
    if (!result.ok()) fail(fmt::format("Schedule failed: {}", result.status().ToString()));
    if (violations.empty()) {
      const Decisions& d = *result;
      const World world(snapshot);
      Snapshot shuffled = snapshot;
      ShuffleSnapshot(shuffled, seed + 17);
      absl::StatusOr<Decisions> again = Schedule(shuffled, policy);
      if (!again.ok() || DecisionsToText(*again) != DecisionsToText(d)) {
        fail("shuffled input changed the decisions");
      }
      std::set<std::string> preempted;
      for (const PreemptDecision& p : d.preemptions) {
        preempted.insert(p.job);
        if (!p.for_job.empty()) continue;
        const Job* victim = world.job(p.job);
        if (victim == nullptr) {
          fail(fmt::format("preemption of unknown job {}", p.job));
        } else if (p.reason.rfind("spot reclaim:", 0) == 0) {
          ++reclaims;
        } else if (p.reason.rfind("headroom:", 0) == 0) {
          ++restorations;
          const bool below_a_rule = std::any_of(
              policy.headroom.begin(), policy.headroom.end(), [&](const HeadroomRule& r) {
                return r.restore && victim->priority < r.min_priority;
              });
          if (!victim->preemptible || !below_a_rule || !policy.preemption.enabled) {
            fail(fmt::format("{} evicted for headroom against the rules", p.job));
          }
        } else {
          fail(fmt::format("{} preempted for no job: {}", p.job, p.reason));
        }
      }
      for (const Job& job : snapshot.jobs) {
        if (job.state != JobState::kRunning) continue;
        for (const ReplicaPlacement& p : job.placements) {
          const Node* node = world.node(p.node);
          if (node != nullptr && node->reclaiming && !preempted.count(job.id)) {
            fail(fmt::format("{} runs on reclaimed node {} and is not stopped", job.id, p.node));
          }
        }
      }
      for (const StartDecision& s : d.starts) {
        const Job* job = world.job(s.job);
        for (const ReplicaPlacement& p : s.placements) {
          const Node* node = world.node(p.node);
          if (node == nullptr || job == nullptr) continue;
          if (node->reclaiming) fail(fmt::format("{} starts on reclaimed node {}", s.job, p.node));
          if (node->spot) {
            ++spot_starts;
            if (!MayUseSpotNode(*job, policy)) {
              fail(fmt::format("{} may not use spot node {}", s.job, p.node));
            }
          }
        }
      }
      for (const PendingDecision& p : d.pending) {
        headroom_pending += p.reason == PendingReason::kHeadroom ? 1 : 0;
      }
      // A job a rule stops is pending again: it gets exactly one Start or PendingDecision.
      for (const PreemptDecision& p : d.preemptions) {
        if (!p.for_job.empty()) continue;
        const auto count = std::count_if(d.starts.begin(), d.starts.end(),
                                         [&p](const StartDecision& s) { return s.job == p.job; }) +
                           std::count_if(d.pending.begin(), d.pending.end(),
                                         [&p](const PendingDecision& q) { return q.job == p.job; });
        if (count != 1) fail(fmt::format("{}, stopped by a rule, has {} outcomes", p.job, count));
      }
      // Headroom: GPUs held at the end of the cycle (what stays, and what starts).
      std::set<std::pair<std::string, int32_t>> occupied;
      const Snapshot staying = WithVictimsEvicted(snapshot, d);
      for (const Job& job : staying.jobs) {
        if (preempted.count(job.id)) continue;
        for (const ReplicaPlacement& p : job.placements) {
          for (int32_t g : p.gpus) occupied.insert({p.node, g});
        }
      }
      for (const StartDecision& s : d.starts) {
        for (const ReplicaPlacement& p : s.placements) {
          for (int32_t g : p.gpus) occupied.insert({p.node, g});
        }
      }
      for (const HeadroomRule& rule : policy.headroom) {
        bool low_started = false;
        std::set<std::string> urgent_units;
        for (const StartDecision& s : d.starts) {
          const Job* job = world.job(s.job);
          for (const ReplicaPlacement& p : s.placements) {
            const Node* node = world.node(p.node);
            if (job == nullptr || node == nullptr || p.gpus.empty() ||
                node->gpu_model != rule.gpu_model) {
              continue;
            }
            if (job->priority < rule.min_priority) {
              low_started = true;
              continue;
            }
            if (node->spot) continue;
            for (int32_t g : p.gpus) {
              int32_t island = 0;
              for (const Gpu& gpu : node->gpus) island = gpu.index == g ? gpu.island : island;
              urgent_units.insert(
                  rule.shape == HeadroomShape::kGpus    ? fmt::format("{}/{}", p.node, g)
                  : rule.shape == HeadroomShape::kNodes ? p.node
                                                        : fmt::format("{}/i{}", p.node, island));
            }
          }
        }
        const int64_t free_end = FreeUnits(snapshot, rule, occupied);
        if (low_started && free_end + static_cast<int64_t>(urgent_units.size()) < rule.count) {
          fail(
              fmt::format("a job below priority {} ate into the {} {} of {}: {} free at the end, "
                          "{} taken by urgent starts",
                          rule.min_priority, rule.count, HeadroomShapeName(rule.shape),
                          rule.gpu_model, free_end, urgent_units.size()));
        }
        const auto report =
            std::find_if(d.headroom.begin(), d.headroom.end(), [&](const HeadroomReport& r) {
              return r.gpu_model == rule.gpu_model && r.shape == rule.shape;
            });
        if (report == d.headroom.end() || report->free != free_end) {
          fail(fmt::format("headroom report for {} {} does not say the {} free at the end",
                           rule.gpu_model, HeadroomShapeName(rule.shape), free_end));
        }
      }
      // The next cycle neither reclaims nor restores again.
      Snapshot next = snapshot;
      if (absl::Status applied = ApplyDecisions(d, next); !applied.ok()) {
        fail(fmt::format("ApplyDecisions failed: {}", applied.ToString()));
      } else if (absl::StatusOr<Decisions> d2 = Schedule(next, policy); d2.ok()) {
        for (const PreemptDecision& p : d2->preemptions) {
          if (p.for_job.empty()) {
            fail(fmt::format("the next cycle stops {} again: {}", p.job, p.reason));
          }
        }
      } else {
        fail(fmt::format("the next cycle failed: {}", d2.status().ToString()));
      }
    }
    if (!violations.empty()) {
      ++failing_seeds;
      failing_list += fmt::format(" {}", seed);
      if (failing_seeds <= kReportedSeeds) {
        std::string text;
        for (const std::string& v : violations) text += v + "\n";
        ADD_FAILURE() << text;
      }
    }
  }
  EXPECT_EQ(failing_seeds, 0) << "seeds with violations:" << failing_list;
  std::printf(
      "%llu seeds: %lld spot reclaims, %lld headroom restorations, %lld pending for "
      "headroom, %lld replicas started on spot nodes\n",
      static_cast<unsigned long long>(kSeeds), static_cast<long long>(reclaims),
      static_cast<long long>(restorations), static_cast<long long>(headroom_pending),
      static_cast<long long>(spot_starts));
  // Not vacuous: every feature happens on some seeds.
  EXPECT_GT(reclaims, 0);
  EXPECT_GT(restorations, 0);
  EXPECT_GT(headroom_pending, 0);
  EXPECT_GT(spot_starts, 0);
}

}  // namespace
}  // namespace gpupool
