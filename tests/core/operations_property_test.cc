// Seeded property test of the operations rules (docs/operations.md) over random snapshots with
// health facts and maintenance windows (GenerateRandomSnapshot + AddOperationsFacts), scheduled
// with the health rules on and a drain notice that varies by seed:
//   - Schedule() succeeds, gives the same bytes twice and for a shuffled input;
//   - at most one node action per node, in node-id order;
//   - no start on a node given cordon, drain or diagnose in the cycle, on an unhealthy GPU, or
//     on a node whose maintenance window the job would run into (or that has any window ahead,
//     for a job without an estimate);
//   - every Preempt without a for_job stops a job that ran on a failed GPU or on a node in its
//     window, and every such job is stopped;
//   - applying the decisions gives a valid snapshot, and scheduling it again starts nothing,
//     stops nothing and repeats no node action.
// Preemption is off here: the preemption planner's own fixed point is property_test.cc's
// business. Failures name the seed.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gpupool/apply.h"
#include "gpupool/schedule.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/generator.h"
#include "testing/seeds.h"

namespace gpupool {
namespace {

using ::gpupool::testing::AddOperationsFacts;
using ::gpupool::testing::DecisionsToText;
using ::gpupool::testing::GenerateRandomSnapshot;
using ::gpupool::testing::ShuffleSnapshot;

const uint64_t kSeeds = ::gpupool::testing::PropertySeeds(1000);

Policy OperationsPolicy(uint64_t seed) {
  Policy policy;
  policy.placement = seed % 2 == 0 ? PlacementStrategy::kBestFit : PlacementStrategy::kFirstFit;
  policy.job_order = JobOrder::kPriorityFifo;
  policy.queue_order = QueueOrder::kNone;
  policy.health.enabled = true;
  policy.health.xid_errors_to_cordon = 5;
  policy.health.ecc_errors_to_cordon = 1;
  policy.health.diagnostic_interval_s = seed % 3 == 0 ? 0 : 5'000;
  policy.health.diagnostic_idle_window_s = static_cast<int64_t>(seed % 4) * 600;
  policy.health.max_diagnosing_nodes = static_cast<int64_t>(seed % 3);
  policy.maintenance.drain_notice_s = static_cast<int64_t>(seed % 5) * 2'000;
  return policy;
}

const Node* FindNode(const Snapshot& s, const std::string& id) {
  for (const Node& node : s.nodes) {
    if (node.id == id) return &node;
  }
  return nullptr;
}

// Would a job starting now, `remaining` seconds long (nullopt: no end), run into a window?
bool RunsIntoWindow(const Node& node, int64_t now, std::optional<int64_t> remaining) {
  for (const MaintenanceWindow& w : node.maintenance) {
    if (w.end <= now) continue;
    if (w.start <= now || !remaining || now + *remaining > w.start) return true;
  }
  return false;
}

void CheckSeed(uint64_t seed, std::vector<std::string>& violations, int64_t& actions,
               int64_t& stops) {
  auto fail = [&](const std::string& what) { violations.push_back(what); };
  Snapshot snapshot = GenerateRandomSnapshot(seed);
  AddOperationsFacts(snapshot, seed);
  const Policy policy = OperationsPolicy(seed);
  absl::StatusOr<Decisions> result = Schedule(snapshot, policy);
  if (!result.ok()) return fail("Schedule failed: " + result.status().ToString());
  const Decisions& d = *result;
  actions += static_cast<int64_t>(d.node_actions.size());

  absl::StatusOr<Decisions> again = Schedule(snapshot, policy);
  if (!again.ok() || DecisionsToText(*again) != DecisionsToText(d)) fail("not deterministic");
  Snapshot shuffled = snapshot;
  ShuffleSnapshot(shuffled, seed * 31 + 7);
  absl::StatusOr<Decisions> other = Schedule(shuffled, policy);
  if (!other.ok() || DecisionsToText(*other) != DecisionsToText(d)) fail("shuffle changed it");

  std::set<std::string> closed;
  for (size_t i = 0; i < d.node_actions.size(); ++i) {
    const NodeActionDecision& a = d.node_actions[i];
    if (i > 0 && !(d.node_actions[i - 1].node < a.node)) fail("node actions not in id order");
    if (a.action != NodeAction::kUncordon) closed.insert(a.node);
  }

  std::map<std::string, const Job*> jobs;
  for (const Job& job : snapshot.jobs) jobs[job.id] = &job;
  for (const StartDecision& start : d.starts) {
    const Job& job = *jobs.at(start.job);
    // The job starts from scratch (a stopped job is pending again): its whole estimate counts.
    const std::optional<int64_t> remaining = job.runtime_estimate_s;
    for (const ReplicaPlacement& p : start.placements) {
      const Node* node = FindNode(snapshot, p.node);
      if (closed.count(p.node))
        fail(fmt::format("{} starts on {}, closed this cycle", job.id, p.node));
      if (RunsIntoWindow(*node, snapshot.now, remaining)) {
        fail(fmt::format("{} starts on {} and runs into its window", job.id, p.node));
      }
      for (int32_t index : p.gpus) {
        for (const Gpu& gpu : node->gpus) {
          if (gpu.index == index && !gpu.healthy) {
            fail(fmt::format("{} starts on unhealthy GPU {} of {}", job.id, index, p.node));
          }
        }
      }
    }
  }

  std::set<std::string> must_stop;
  for (const Job& job : snapshot.jobs) {
    for (const ReplicaPlacement& p : job.placements) {
      const Node* node = FindNode(snapshot, p.node);
      for (const MaintenanceWindow& w : node->maintenance) {
        if (w.start <= snapshot.now && snapshot.now < w.end) must_stop.insert(job.id);
      }
      for (int32_t index : p.gpus) {
        for (const Gpu& gpu : node->gpus) {
          if (gpu.index == index && !gpu.healthy) must_stop.insert(job.id);
        }
      }
    }
  }
  std::set<std::string> stopped;
  for (const PreemptDecision& p : d.preemptions) {
    if (!p.for_job.empty()) fail("a Preempt for a job with preemption off");
    stopped.insert(p.job);
    if (p.lost_milli_gpu_seconds < 0) fail("negative lost work");
  }
  stops += static_cast<int64_t>(stopped.size());
  if (stopped != must_stop) fail("stopped jobs differ from those on failed GPUs or in windows");

  Snapshot applied = snapshot;
  if (absl::Status s = ApplyDecisions(d, applied); !s.ok()) return fail("apply: " + s.ToString());
  if (absl::Status s = ValidateSnapshot(applied); !s.ok()) {
    return fail("applied snapshot invalid: " + s.ToString());
  }
  absl::StatusOr<Decisions> next = Schedule(applied, policy);
  if (!next.ok()) return fail("second cycle failed: " + next.status().ToString());
  if (!next->starts.empty()) fail("second cycle starts " + next->starts.front().job);
  if (!next->preemptions.empty()) fail("second cycle stops " + next->preemptions.front().job);
  for (const NodeActionDecision& a : next->node_actions) {
    // Only a diagnostic for a node that the first cycle's starts will leave idle soon is new.
    if (a.action != NodeAction::kDiagnose) {
      fail(fmt::format("second cycle: {} {}", NodeActionName(a.action), a.node));
    }
    for (const NodeActionDecision& b : d.node_actions) {
      if (a.node == b.node && a.action == b.action) fail("second cycle repeats " + a.node);
    }
  }
}

TEST(OperationsPropertyTest, RulesHoldOnRandomSnapshotsWithHealthFactsAndWindows) {
  int failing = 0;
  int64_t actions = 0, stops = 0;
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    std::vector<std::string> violations;
    CheckSeed(seed, violations, actions, stops);
    if (violations.empty()) continue;
    if (++failing <= 5) {
      std::string text;
      for (const std::string& v : violations) text += v + "\n";
      ADD_FAILURE() << "seed " << seed << ":\n" << text;
    }
  }
  EXPECT_EQ(failing, 0);
  std::printf("%llu seeds, %lld node actions, %lld jobs stopped\n",
              static_cast<unsigned long long>(kSeeds), static_cast<long long>(actions),
              static_cast<long long>(stops));
  // Not vacuous: the rules do act.
  EXPECT_GT(actions, static_cast<int64_t>(kSeeds) / 10);
  EXPECT_GT(stops, 0);
}

}  // namespace
}  // namespace gpupool
