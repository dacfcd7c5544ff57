// Stage 5's search for gangs the greedy pass misplaces (src/engine/gang_search.cc): exact
// placements on small cases, and the fixed point they restore.
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gpupool/apply.h"
#include "gpupool/schedule.h"
#include "gtest/gtest.h"
#include "testing/builders.h"

namespace gpupool {
namespace {

using ::gpupool::testing::DecisionsToText;
using ::gpupool::testing::FindPending;
using ::gpupool::testing::FindStart;
using ::gpupool::testing::GpuRequest;
using ::gpupool::testing::MakeGroup;
using ::gpupool::testing::MakeNode;
using ::gpupool::testing::MakePendingJob;
using ::gpupool::testing::Placement;
using ::gpupool::testing::SnapshotBuilder;

Policy WithPlacement(PlacementStrategy strategy) {
  Policy policy;
  policy.placement = strategy;
  return policy;
}

// A gang of a "launcher" (1 GPU, 14.5 cores) and a "worker" (2 GPUs, 11 cores) on node a (2 GPUs,
// 64 cores) and node b (3 GPUs, 12 cores). Only a has the CPU for the launcher, so the worker
// must go on b.
Snapshot LauncherAndWorker() {
  Job job = MakePendingJob("j", "q", GpuRequest(1000, 14500));
  job.groups[0].name = "launcher";
  job.groups.push_back(MakeGroup("worker", GpuRequest(2000, 11000)));
  return SnapshotBuilder()
      .Model("A100")
      .Node(MakeNode("a", "A100", 2))
      .Node(MakeNode("b", "A100", 3, {}, 12000))
      .Queue("q")
      .Job(job)
      .Build();
}

// Best-fit's greedy pass puts the larger worker on a (2 GPUs free, none left after), and the
// launcher then fits nowhere. The search places the launcher first (one node fits it) and
// the worker on b.
TEST(GangSearchTest, LauncherGoesWhereOnlyItFitsAndWorkerElsewhere) {
  const Snapshot snapshot = LauncherAndWorker();
  absl::StatusOr<Decisions> d = Schedule(snapshot, WithPlacement(PlacementStrategy::kBestFit));
  ASSERT_TRUE(d.ok()) << d.status();
  const StartDecision* start = FindStart(*d, "j");
  ASSERT_NE(start, nullptr) << DecisionsToText(*d);
  const std::vector<ReplicaPlacement> want = {Placement("a", {0}, 0, "launcher", 1000),
                                              Placement("b", {0, 1}, 0, "worker", 1000)};
  EXPECT_EQ(start->placements, want);
}

// Every built-in strategy starts the gang (first-fit's greedy pass fails the same way as
// best-fit's; spread's puts the worker on b at once), and the next cycle starts nothing more.
TEST(GangSearchTest, EveryStrategyStartsTheGangAndTheNextCycleIsQuiet) {
  for (PlacementStrategy strategy :
       {PlacementStrategy::kBestFit, PlacementStrategy::kFirstFit, PlacementStrategy::kSpread}) {
    SCOPED_TRACE(PlacementStrategyName(strategy));
    Snapshot snapshot = LauncherAndWorker();
    const Policy policy = WithPlacement(strategy);
    absl::StatusOr<Decisions> d = Schedule(snapshot, policy);
    ASSERT_TRUE(d.ok()) << d.status();
    ASSERT_NE(FindStart(*d, "j"), nullptr) << DecisionsToText(*d);
    ASSERT_TRUE(ApplyStarts(*d, snapshot).ok());
    absl::StatusOr<Decisions> next = Schedule(snapshot, policy);
    ASSERT_TRUE(next.ok()) << next.status();
    EXPECT_TRUE(next->starts.empty()) << DecisionsToText(*next);
  }
}

// Two interchangeable workers and a launcher: the launcher takes the only node with its CPU, and
// the workers take the other nodes in node order (worker 0 on b, worker 1 on c).
TEST(GangSearchTest, InterchangeableReplicasTakeNodesInOrder) {
  Job job = MakePendingJob("j", "q", GpuRequest(1000, 14500));
  job.groups[0].name = "launcher";
  job.groups.push_back(MakeGroup("worker", GpuRequest(2000, 11000), 2));
  const Snapshot snapshot = SnapshotBuilder()
                                .Model("A100")
                                .Node(MakeNode("a", "A100", 2))
                                .Node(MakeNode("b", "A100", 3, {}, 12000))
                                .Node(MakeNode("c", "A100", 3, {}, 12000))
                                .Queue("q")
                                .Job(job)
                                .Build();
  absl::StatusOr<Decisions> d = Schedule(snapshot, WithPlacement(PlacementStrategy::kBestFit));
  ASSERT_TRUE(d.ok()) << d.status();
  const StartDecision* start = FindStart(*d, "j");
  ASSERT_NE(start, nullptr) << DecisionsToText(*d);
  const std::vector<ReplicaPlacement> want = {Placement("a", {0}, 0, "launcher", 1000),
                                              Placement("b", {0, 1}, 0, "worker", 1000),
                                              Placement("c", {0, 1}, 1, "worker", 1000)};
  EXPECT_EQ(start->placements, want);
}

// When no arrangement fits (b lacks the worker's CPU too), the gang stays pending, as before the
// search, and nothing is left allocated: a later job still gets node a.
TEST(GangSearchTest, GangThatFitsNowhereStaysPendingAndLeavesNoTrace) {
  Job job = MakePendingJob("j", "q", GpuRequest(1000, 14500));
  job.priority = 5;
  job.groups[0].name = "launcher";
  job.groups.push_back(MakeGroup("worker", GpuRequest(2000, 13000)));
  const Snapshot snapshot = SnapshotBuilder()
                                .Model("A100")
                                .Node(MakeNode("a", "A100", 2))
                                .Node(MakeNode("b", "A100", 3, {}, 12000))
                                .Queue("q")
                                .Job(job)
                                .Job(MakePendingJob("later", "q", GpuRequest(2000, 1000)))
                                .Build();
  absl::StatusOr<Decisions> d = Schedule(snapshot, WithPlacement(PlacementStrategy::kBestFit));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_NE(FindPending(*d, "j"), nullptr) << DecisionsToText(*d);
  const StartDecision* later = FindStart(*d, "later");
  ASSERT_NE(later, nullptr) << DecisionsToText(*d);
  EXPECT_EQ(later->placements[0].node, "a");
}

}  // namespace
}  // namespace gpupool
