// Settling's bookkeeping between passes (src/engine/settle_compose.h, settle.cc; docs/engine.md,
// "Settling: the cycle is a fixed point"): a victim started again on its own GPUs with its
// replicas swapped is left as it ran, a job that yielded once and was started again stays, and
// a job evicted for nothing goes back where it ran unless that joins another tenant its
// queue's isolation forbids.
// Exact outcomes on small cases; the random properties are in preemption_cycles_test.cc.
#include "settle_compose.h"

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cycle.h"
#include "gpupool/schedule.h"
#include "gtest/gtest.h"
#include "testing/builders.h"

namespace gpupool {
namespace {

using ::gpupool::testing::GpuRequest;
using ::gpupool::testing::MakeGroup;
using ::gpupool::testing::MakeNode;
using ::gpupool::testing::MakePendingJob;
using ::gpupool::testing::MakeRunningJob;
using ::gpupool::testing::Placement;
using ::gpupool::testing::SnapshotBuilder;

// Two 2-GPU nodes of 8,000 milli-CPUs. `pair` runs two one-GPU groups, "lead" (3,000
// milli-CPUs) on n1 GPU 0 and "aide" (1,000) on n2 GPU 0; `side` (4,000) runs on n1 GPU 1: n1
// holds 7,000 milli-CPUs. `big` (one GPU, 6,000 milli-CPUs) waits.
Snapshot PairSnapshot() {
  Job pair = MakeRunningJob("pair", "q", GpuRequest(1000), {}, /*start_time=*/100);
  pair.groups = {MakeGroup("lead", GpuRequest(1000, 3000)),
                 MakeGroup("aide", GpuRequest(1000, 1000))};
  pair.placements = {Placement("n1", {0}, 0, "lead"), Placement("n2", {0}, 0, "aide")};
  return SnapshotBuilder()
      .Now(1000)
      .Model("a100")
      .Node(MakeNode("n1", "a100", 2, {}, /*cpu_milli=*/8000))
      .Node(MakeNode("n2", "a100", 2, {}, /*cpu_milli=*/8000))
      .Queue("q")
      .Job(pair)
      .Job(MakeRunningJob("side", "q", GpuRequest(1000, 4000), {Placement("n1", {1})},
                          /*start_time=*/100))
      .Job(MakePendingJob("big", "q", GpuRequest(1000, 6000)))
      .Build();
}

// `pair` evicted and started again at `lead` and `aide`.
internal::Moves Restart(ReplicaPlacement lead, ReplicaPlacement aide) {
  internal::Moves moves;
  PreemptDecision preempt;
  preempt.job = "pair";
  preempt.for_job = "big";
  moves.preemptions.push_back(preempt);
  StartDecision start;
  start.job = "pair";
  start.placements = {std::move(lead), std::move(aide)};
  moves.starts.push_back(start);
  return moves;
}

// Its own GPUs, the replicas swapped: lead on n2 GPU 0, aide on n1 GPU 0.
internal::Moves SwappedRestart() {
  return Restart(Placement("n2", {0}, 0, "lead", 1000), Placement("n1", {0}, 0, "aide", 1000));
}

TEST(SettleComposeTest, AVictimStartedAgainOnItsGpusWithItsReplicasSwappedIsLeftAsItRan) {
  const Snapshot snapshot = PairSnapshot();
  internal::SettleState state(snapshot, {});
  internal::Moves composed = SwappedRestart();
  state.Apply(composed);
  EXPECT_EQ(internal::KeepPermutedInPlace(composed, state), std::vector<std::string>{"pair"});
  // No decision for it: the host leaves it running.
  EXPECT_TRUE(composed.preemptions.empty());
  EXPECT_TRUE(composed.starts.empty());
  EXPECT_EQ(state.StateJob("pair").state, JobState::kRunning);
  EXPECT_TRUE(
      internal::SamePlace(state.StateJob("pair").placements, state.SnapshotJob("pair").placements));
}

TEST(SettleComposeTest, TheSwapStaysWhenTheNodesCpuNoLongerAllowsTheOldArrangement) {
  // side gone and big started on n1 GPU 1: n1 holds aide's 1,000 and big's 6,000 milli-CPUs.
  // Lead's 3,000 in aide's place would make 9,000 of 8,000: pair stays swapped.
  const Snapshot snapshot = PairSnapshot();
  internal::SettleState state(snapshot, {});
  internal::Moves composed = SwappedRestart();
  PreemptDecision evict_side;
  evict_side.job = "side";
  evict_side.for_job = "big";
  composed.preemptions.push_back(evict_side);
  StartDecision start_big;
  start_big.job = "big";
  start_big.placements = {Placement("n1", {1}, 0, "main", 1000)};
  composed.starts.push_back(start_big);
  state.Apply(composed);
  const internal::Moves before = composed;
  EXPECT_TRUE(internal::KeepPermutedInPlace(composed, state).empty());
  EXPECT_EQ(composed.preemptions.size(), before.preemptions.size());
  EXPECT_EQ(composed.starts.size(), before.starts.size());
  EXPECT_EQ(state.StateJob("pair").placements, before.starts[0].placements);
}

TEST(SettleComposeTest, AVictimStartedAgainOnOtherGpusIsNotLeftAsItRan) {
  // lead on n2 GPU 1 instead of GPU 0: another GPU, a real move.
  const Snapshot snapshot = PairSnapshot();
  internal::SettleState state(snapshot, {});
  internal::Moves composed =
      Restart(Placement("n2", {1}, 0, "lead", 1000), Placement("n1", {0}, 0, "aide", 1000));
  state.Apply(composed);
  EXPECT_TRUE(internal::KeepPermutedInPlace(composed, state).empty());
  EXPECT_EQ(composed.starts.size(), 1u);
  EXPECT_EQ(composed.preemptions.size(), 1u);
}

// One 1-GPU node runs `back` (priority 1), started by an earlier pass of the cycle being settled;
// `high` (priority 5, the same queue) waits.
Snapshot TentativeSnapshot() {
  Job back = MakeRunningJob("back", "q", GpuRequest(1000), {Placement("n1", {0})},
                            /*start_time=*/1000);
  back.priority = 1;
  Job high = MakePendingJob("high", "q", GpuRequest(1000));
  high.priority = 5;
  return SnapshotBuilder()
      .Now(1000)
      .Model("a100")
      .Node(MakeNode("n1", "a100", 1))
      .Queue("q")
      .Job(back)
      .Job(high)
      .Build();
}

TEST(SettleComposeTest, AJobThatYieldedOnceAndWasStartedAgainStays) {
  Policy policy;
  policy.preemption.enabled = true;
  const Snapshot snapshot = TentativeSnapshot();
  const std::vector<std::pair<std::string, int64_t>> tentative = {{"back", 1}};
  // A start of an earlier pass: high revokes it at no cost.
  const Decisions revoked = internal::RunCyclePass(snapshot, policy, tentative);
  ASSERT_EQ(revoked.preemptions.size(), 1u);
  EXPECT_EQ(revoked.preemptions[0].job, "back");
  EXPECT_EQ(revoked.preemptions[0].lost_milli_gpu_seconds, 0);
  EXPECT_NE(testing::FindStart(revoked, "high"), nullptr);
  // Restored (put back where it ran) but not pinned: it may still yield once to high.
  const Decisions yields = internal::RunCyclePass(snapshot, policy, tentative, true, {"back"}, {});
  EXPECT_EQ(yields.preemptions.size(), 1u);
  // Pinned (it yielded once already and a pass started it again, settle.cc): it stays.
  const Decisions stays =
      internal::RunCyclePass(snapshot, policy, tentative, true, {"back"}, {"back"});
  EXPECT_TRUE(stays.preemptions.empty());
  EXPECT_EQ(testing::FindStart(stays, "high"), nullptr);
}

// Two 2-GPU nodes. `kept` (queue a, `isolation`) ran on n1 GPU 0 and was evicted for `gone`
// (queue a), whose start the passes then undid; `guest` (queue b) starts on `guest_node` GPU 1.
struct PutBackCase {
  Snapshot snapshot;
  internal::History history;
  internal::Moves composed;
};

PutBackCase EvictedForNothing(Isolation isolation, const std::string& guest_node) {
  Queue a = testing::MakeQueue("a");
  a.isolation = isolation;
  PutBackCase c;
  c.snapshot = SnapshotBuilder()
                   .Now(1000)
                   .Model("a100")
                   .Node(MakeNode("n1", "a100", 2))
                   .Node(MakeNode("n2", "a100", 2))
                   .Queue(a)
                   .Queue("b")
                   .Job(MakeRunningJob("kept", "a", GpuRequest(1000), {Placement("n1", {0})},
                                       /*start_time=*/100))
                   .Job(MakePendingJob("gone", "a", GpuRequest(2000)))
                   .Job(MakePendingJob("guest", "b", GpuRequest(1000)))
                   .Build();
  PreemptDecision preempt;
  preempt.job = "kept";
  preempt.for_job = "gone";
  c.history.first_preempt.emplace("kept", preempt);
  StartDecision start;
  start.job = "guest";
  start.placements = {Placement(guest_node, {1}, 0, "main", 1000)};
  c.composed.preemptions.push_back(preempt);
  c.composed.starts.push_back(start);
  return c;
}

TEST(SettleComposeTest, AJobEvictedForNothingIsPutBackWhereItRan) {
  PutBackCase c = EvictedForNothing(Isolation::kNone, "n1");
  internal::SettleState state(c.snapshot, {});
  state.Apply(c.composed);
  EXPECT_EQ(internal::KeepEvictedForNothing(c.history, {}, c.composed, state),
            std::vector<std::string>{"kept"});
  EXPECT_TRUE(c.composed.preemptions.empty());
  EXPECT_EQ(state.StateJob("kept").state, JobState::kRunning);
}

TEST(SettleComposeTest, AJobPutBackJoinsNoOtherTenantItsIsolationForbids) {
  // guest (queue b) now runs on n1 GPU 1: kept, exclusive-node, may not run beside it. On
  // exclusive-GPU terms, or with guest on n2, it goes back.
  for (const auto& [isolation, guest_node, back] :
       std::vector<std::tuple<Isolation, std::string, bool>>{
           {Isolation::kExclusiveNode, "n1", false},
           {Isolation::kExclusiveGpu, "n1", true},
           {Isolation::kExclusiveNode, "n2", true}}) {
    SCOPED_TRACE(guest_node + (back ? " back" : " stays off"));
    PutBackCase c = EvictedForNothing(isolation, guest_node);
    internal::SettleState state(c.snapshot, {});
    state.Apply(c.composed);
    const std::vector<std::string> kept =
        internal::KeepEvictedForNothing(c.history, {}, c.composed, state);
    EXPECT_EQ(kept.size(), back ? 1u : 0u);
    EXPECT_EQ(c.composed.preemptions.size(), back ? 0u : 1u);
    EXPECT_EQ(state.StateJob("kept").state, back ? JobState::kRunning : JobState::kPending);
  }
}

}  // namespace
}  // namespace gpupool
