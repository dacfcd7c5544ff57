// The ledger (ledger.h): worked examples with every figure checked, bad events, and a seeded
// property test of the identities on random histories against a second-by-second oracle.
#include "gpupool/ledger.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gpupool/sim/rng.h"

namespace gpupool {
namespace {

Node MakeNode(const std::string& id, const std::string& model, int32_t gpus) {
  Node node;
  node.id = id;
  node.gpu_model = model;
  for (int32_t g = 0; g < gpus; ++g) node.gpus.push_back(Gpu{.index = g, .island = 0});
  return node;
}

Queue MakeQueue(const std::string& id, const std::string& parent, std::vector<Quota> quotas) {
  Queue q;
  q.id = id;
  q.parent = parent;
  q.quotas = std::move(quotas);
  return q;
}

ReplicaPlacement On(const std::string& node, std::vector<int32_t> gpus, int64_t milli,
                    int32_t replica = 0) {
  return ReplicaPlacement{.group = "main",
                          .replica = replica,
                          .node = node,
                          .gpus = std::move(gpus),
                          .gpu_milli = milli};
}

const QueueLedger& QueueRow(const LedgerReport& r, const std::string& id) {
  for (const QueueLedger& q : r.queues) {
    if (q.queue == id) return q;
  }
  ADD_FAILURE() << "no queue " << id;
  return r.queues.front();
}

const JobLedger& JobRow(const LedgerReport& r, const std::string& id) {
  for (const JobLedger& j : r.jobs) {
    if (j.job == id) return j;
  }
  ADD_FAILURE() << "no job " << id;
  return r.jobs.front();
}

// The pool of the worked example: n1 with 2 GPUs of model A, n2 with 1 GPU of model B; org >
// {team-a (1 A guaranteed), team-b (half a GPU of any model guaranteed)}.
LedgerSetup ExampleSetup() {
  LedgerSetup setup;
  setup.start_time = 0;
  setup.nodes = {MakeNode("n1", "A", 2), MakeNode("n2", "B", 1)};
  setup.queues = {MakeQueue("org", "", {}),
                  MakeQueue("team-a", "org", {Quota{.gpu_model = "A", .guaranteed_milli = 1000}}),
                  MakeQueue("team-b", "org", {Quota{.gpu_model = "*", .guaranteed_milli = 500}})};
  setup.series_bucket_s = 25;
  return setup;
}

// The worked example of docs/accounting.md:
//   t=0   j1 (team-a) starts on n1 GPU 0          t=30  j3 (team-b) starts on half of n1 GPU 0,
//   t=10  j2 (team-a) starts on n1 GPU 1                restoring for 5 s
//   t=20  j1 checkpoints                          t=40  j2 fails (no checkpoint)
//   t=30  j1 is preempted for team-b              t=50  j3 finishes; the ledger is read at 60.
Ledger ExampleLedger() {
  absl::StatusOr<Ledger> ledger = Ledger::Create(ExampleSetup());
  EXPECT_TRUE(ledger.ok()) << ledger.status();
  Ledger& l = *ledger;
  EXPECT_TRUE(
      l.Start(0, {.job = "j1", .queue = "team-a", .placements = {On("n1", {0}, 1000)}}).ok());
  EXPECT_TRUE(
      l.Start(10, {.job = "j2", .queue = "team-a", .placements = {On("n1", {1}, 1000)}}).ok());
  EXPECT_TRUE(l.Checkpoint(20, "j1").ok());
  EXPECT_TRUE(l.Preempt(30, "j1", "team-b").ok());
  EXPECT_TRUE(
      l.Start(30,
              {.job = "j3", .queue = "team-b", .placements = {On("n1", {0}, 500)}, .restore_s = 5})
          .ok());
  EXPECT_TRUE(l.Fail(40, "j2").ok());
  EXPECT_TRUE(l.Finish(50, "j3").ok());
  EXPECT_TRUE(l.AdvanceTo(60).ok());
  return std::move(l);
}

TEST(LedgerTest, WorkedExampleEveryFigure) {
  const LedgerReport r = ExampleLedger().Report();
  EXPECT_EQ(r.start_time, 0);
  EXPECT_EQ(r.end_time, 60);
  // Capacity: 3 GPUs x 60 s. Busy: j1 30 s + j2 30 s on whole GPUs, j3 20 s on half a GPU.
  EXPECT_EQ(r.pool.gpus, 3);
  EXPECT_EQ(r.pool.capacity, 180'000);
  EXPECT_EQ(r.pool.time.work.busy, 70'000);
  EXPECT_EQ(r.pool.idle, 110'000);
  // j1: 20 s kept by its checkpoint, 10 s lost to the preemption.
  EXPECT_EQ(JobRow(r, "j1").work, (WorkTime{.busy = 30'000,
                                            .productive = 20'000,
                                            .lost_to_preemption = 10'000,
                                            .lost_to_failure = 0,
                                            .restore = 0}));
  // j2: all 30 s lost to the failure.
  EXPECT_EQ(JobRow(r, "j2").work, (WorkTime{.busy = 30'000, .lost_to_failure = 30'000}));
  // j3: half a GPU for 20 s, the first 5 s restoring.
  EXPECT_EQ(JobRow(r, "j3").work,
            (WorkTime{.busy = 10'000, .productive = 7'500, .restore = 2'500}));
  EXPECT_EQ(JobRow(r, "j1").preemptions, 1);
  EXPECT_EQ(JobRow(r, "j2").failures, 1);

  // team-a holds 1 GPU in [0,10), 2 in [10,30), 1 in [30,40); 1 A is guaranteed.
  const QueueLedger& a = QueueRow(r, "team-a");
  EXPECT_EQ(a.own.work.busy, 60'000);
  EXPECT_EQ(a.own.within_guarantee, 40'000);
  EXPECT_EQ(a.own.borrowed, 20'000);
  EXPECT_EQ(a.own.work.lost_to_preemption, 10'000);
  EXPECT_EQ(a.own.work.lost_to_failure, 30'000);
  // team-b's "*" guarantee of 500 covers j3's half GPU.
  const QueueLedger& b = QueueRow(r, "team-b");
  EXPECT_EQ(b.own.within_guarantee, 10'000);
  EXPECT_EQ(b.own.borrowed, 0);
  // org runs nothing itself; its subtree is the sum of its children.
  const QueueLedger& org = QueueRow(r, "org");
  EXPECT_EQ(org.own, QueueTime{});
  EXPECT_EQ(org.subtree.work.busy, 70'000);
  EXPECT_EQ(org.subtree.within_guarantee, 50'000);
  EXPECT_EQ(org.subtree.borrowed, 20'000);
  EXPECT_EQ(org.depth, 0);
  EXPECT_EQ(a.depth, 1);
  EXPECT_EQ(a.parent, "org");

  ASSERT_EQ(r.models.size(), 2u);
  EXPECT_EQ(r.models[0].gpu_model, "A");
  EXPECT_EQ(r.models[0].usage.capacity, 120'000);
  EXPECT_EQ(r.models[0].usage.idle, 50'000);
  EXPECT_EQ(r.models[1].usage.capacity, 60'000);
  EXPECT_EQ(r.models[1].usage.idle, 60'000);
  ASSERT_EQ(r.nodes.size(), 2u);
  EXPECT_EQ(r.nodes[0].work.busy, 70'000);
  EXPECT_EQ(r.nodes[1].idle, 60'000);

  ASSERT_EQ(r.preemption_losses.size(), 1u);
  EXPECT_EQ(r.preemption_losses[0].victim_queue, "team-a");
  EXPECT_EQ(r.preemption_losses[0].by_queue, "team-b");
  EXPECT_EQ(r.preemption_losses[0].lost, 10'000);

  // Peaks and series (buckets of 25 s: [0,25), [25,50), [50,60)).
  ASSERT_EQ(r.queue_models.size(), 2u);
  EXPECT_EQ(r.queue_models[0].queue, "team-a");
  EXPECT_EQ(r.queue_models[0].peak_milli, 2000);
  EXPECT_EQ(r.queue_models[1].peak_milli, 500);
  EXPECT_EQ(r.series_buckets, 3);
  EXPECT_THAT(r.queue_models[0].busy_series, testing::ElementsAre(40'000, 20'000, 0));
  EXPECT_THAT(r.queue_models[0].borrowed_series, testing::ElementsAre(15'000, 5'000, 0));
  EXPECT_THAT(r.queue_models[1].busy_series, testing::ElementsAre(0, 10'000, 0));
}

TEST(LedgerTest, RunningJobCountsAsProductiveUntilLost) {
  absl::StatusOr<Ledger> l = Ledger::Create(ExampleSetup());
  ASSERT_TRUE(l.ok());
  ASSERT_TRUE(
      l->Start(
           0,
           {.job = "j", .queue = "team-a", .placements = {On("n1", {0, 1}, 1000)}, .restore_s = 4})
          .ok());
  ASSERT_TRUE(l->AdvanceTo(10).ok());
  // Read while running: 2 GPUs x 10 s, 4 s of it restoring.
  EXPECT_EQ(JobRow(l->Report(), "j").work,
            (WorkTime{.busy = 20'000, .productive = 12'000, .restore = 8'000}));
  EXPECT_TRUE(l->IsRunning("j"));
  // Preempted at 12 without a checkpoint: everything after the restore is lost.
  ASSERT_TRUE(l->Preempt(12, "j").ok());
  EXPECT_EQ(JobRow(l->Report(), "j").work,
            (WorkTime{.busy = 24'000, .lost_to_preemption = 16'000, .restore = 8'000}));
}

TEST(LedgerTest, PreemptedDuringRestoreLosesNoWork) {
  absl::StatusOr<Ledger> l = Ledger::Create(ExampleSetup());
  ASSERT_TRUE(l.ok());
  ASSERT_TRUE(
      l->Start(
           0, {.job = "j", .queue = "team-a", .placements = {On("n1", {0}, 1000)}, .restore_s = 60})
          .ok());
  ASSERT_TRUE(l->Preempt(10, "j").ok());
  EXPECT_EQ(JobRow(l->Report(), "j").work, (WorkTime{.busy = 10'000, .restore = 10'000}));
}

TEST(LedgerTest, LastCheckpointGivenAtPreemption) {
  absl::StatusOr<Ledger> l = Ledger::Create(ExampleSetup());
  ASSERT_TRUE(l.ok());
  ASSERT_TRUE(
      l->Start(100, {.job = "j", .queue = "team-a", .placements = {On("n1", {0}, 250)}}).ok());
  // The host says the last checkpoint was at 130: 30 s kept, 10 s lost, a quarter GPU each.
  ASSERT_TRUE(l->Preempt(140, "j", "", 130).ok());
  EXPECT_EQ(JobRow(l->Report(), "j").work,
            (WorkTime{.busy = 10'000, .productive = 7'500, .lost_to_preemption = 2'500}));
  // A checkpoint before the run (from an earlier run) counts as none in this run.
  ASSERT_TRUE(
      l->Start(150, {.job = "j", .queue = "team-a", .placements = {On("n1", {0}, 250)}}).ok());
  ASSERT_TRUE(l->Fail(154, "j", 130).ok());
  EXPECT_EQ(JobRow(l->Report(), "j").work.lost_to_failure, 1'000);
  EXPECT_EQ(JobRow(l->Report(), "j").work.lost_to_preemption, 2'500);
  EXPECT_EQ(JobRow(l->Report(), "j").runs, 2);
}

TEST(LedgerTest, ShrinkLosesOnlyTheRemovedReplicas) {
  absl::StatusOr<Ledger> l = Ledger::Create(ExampleSetup());
  ASSERT_TRUE(l.ok());
  ASSERT_TRUE(l->Start(0, {.job = "e",
                           .queue = "team-a",
                           .placements = {On("n1", {0}, 1000, 0), On("n1", {1}, 1000, 1)}})
                  .ok());
  ASSERT_TRUE(l->Checkpoint(4, "e").ok());
  ASSERT_TRUE(l->Shrink(10, "e", "main", 1, /*lost=*/true, "team-b").ok());
  ASSERT_TRUE(l->Finish(20, "e").ok());
  // Replica 1: 4 s kept, 6 s lost. Replica 0: 20 s productive.
  EXPECT_EQ(JobRow(l->Report(), "e").work,
            (WorkTime{.busy = 30'000, .productive = 24'000, .lost_to_preemption = 6'000}));
  EXPECT_EQ(l->Shrink(20, "e", "main", 0, true).code(), absl::StatusCode::kFailedPrecondition);
}

TEST(LedgerTest, GpuSharedUpToOneThousandMilli) {
  absl::StatusOr<Ledger> l = Ledger::Create(ExampleSetup());
  ASSERT_TRUE(l.ok());
  ASSERT_TRUE(
      l->Start(0, {.job = "a", .queue = "team-a", .placements = {On("n1", {0}, 600)}}).ok());
  ASSERT_TRUE(
      l->Start(0, {.job = "b", .queue = "team-b", .placements = {On("n1", {0}, 400)}}).ok());
  const absl::Status over =
      l->Start(0, {.job = "c", .queue = "team-b", .placements = {On("n1", {0}, 1)}});
  EXPECT_EQ(over.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(over.message(), testing::HasSubstr("Start c"));
  EXPECT_THAT(over.message(), testing::HasSubstr("GPU 0 of node n1"));
  // The refused start changed nothing: c is unknown, the GPU still has room after a leaves.
  EXPECT_FALSE(l->IsRunning("c"));
  ASSERT_TRUE(l->Finish(5, "a").ok());
  EXPECT_TRUE(
      l->Start(5, {.job = "c", .queue = "team-b", .placements = {On("n1", {0}, 600)}}).ok());
}

// One test per kind of bad event: each names the event and the id, and changes nothing.
TEST(LedgerTest, BadEventsAreErrorsNamingEventAndId) {
  absl::StatusOr<Ledger> l = Ledger::Create(ExampleSetup());
  ASSERT_TRUE(l.ok());
  ASSERT_TRUE(
      l->Start(10, {.job = "j1", .queue = "team-a", .placements = {On("n1", {0}, 1000)}}).ok());
  struct Case {
    absl::Status status;
    absl::StatusCode code;
    std::string text;
  };
  const std::vector<Case> cases = {
      {l->Finish(20, "nope"), absl::StatusCode::kInvalidArgument, "Finish nope: unknown job"},
      {l->Preempt(5, "j1"), absl::StatusCode::kInvalidArgument, "Preempt j1: time 5 is before"},
      {l->Start(20, {.job = "j1", .queue = "team-a", .placements = {On("n1", {1}, 1000)}}),
       absl::StatusCode::kFailedPrecondition, "Start j1: the job is already running"},
      {l->Start(20, {.job = "j2", .queue = "team-x", .placements = {On("n1", {1}, 1000)}}),
       absl::StatusCode::kInvalidArgument, "Start j2: queue: unknown queue \"team-x\""},
      {l->Start(20, {.job = "j2", .queue = "team-a", .placements = {On("n9", {1}, 1000)}}),
       absl::StatusCode::kInvalidArgument, "Start j2: placements[0].node: unknown node \"n9\""},
      {l->Start(20, {.job = "j2", .queue = "team-a", .placements = {On("n1", {7}, 1000)}}),
       absl::StatusCode::kInvalidArgument, "Start j2: placements[0].gpus: node n1 has no GPU 7"},
      {l->Start(20, {.job = "j2", .queue = "team-a", .placements = {On("n1", {1}, 0)}}),
       absl::StatusCode::kInvalidArgument, "Start j2: placements[0].gpu_milli: must be in 1..1000"},
      {l->Start(20, {.job = "j2", .queue = "team-a", .placements = {On("n1", {0}, 1000)}}),
       absl::StatusCode::kFailedPrecondition, "Start j2: placements[0]: GPU 0 of node n1"},
      {l->Start(
           20,
           {.job = "j2", .queue = "team-a", .placements = {On("n1", {1}, 1000)}, .restore_s = -1}),
       absl::StatusCode::kInvalidArgument, "Start j2: restore_s: negative"},
      {l->Start(20, {.job = "j2", .queue = "team-a", .placements = {}}),
       absl::StatusCode::kInvalidArgument, "Start j2: placements: empty"},
      {l->Preempt(20, "j1", "team-x"), absl::StatusCode::kInvalidArgument,
       "Preempt j1: by_queue: unknown queue \"team-x\""},
      {l->Fail(20, "j1", 30), absl::StatusCode::kInvalidArgument,
       "Fail j1: last_checkpoint 30 is after"},
      {l->Checkpoint(20, "j9"), absl::StatusCode::kInvalidArgument, "Checkpoint j9: unknown job"},
      // Found by an outside test: a GPU listed twice counted twice, a replica placed twice
      // counted twice, a negative to_replicas named no field.
      {l->Start(20, {.job = "j2", .queue = "team-a", .placements = {On("n1", {1, 1}, 500)}}),
       absl::StatusCode::kInvalidArgument, "Start j2: placements[0].gpus: GPU 1 is listed twice"},
      {l->Start(20, {.job = "j2",
                     .queue = "team-a",
                     .placements = {On("n1", {1}, 500), On("n2", {0}, 500)}}),
       absl::StatusCode::kInvalidArgument,
       "Start j2: placements[1]: replica 0 of group \"main\" is placed twice"},
      {l->Shrink(20, "j1", "main", -1, true), absl::StatusCode::kInvalidArgument,
       "Shrink j1: to_replicas: must be >= 0, got -1"},
      {l->AdvanceTo(5), absl::StatusCode::kInvalidArgument,
       "AdvanceTo: time 5 is before the ledger's time 10"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(c.status.code(), c.code) << c.status;
    EXPECT_THAT(c.status.message(), testing::HasSubstr(c.text));
  }
  // Nothing above changed the ledger.
  EXPECT_EQ(l->now(), 10);
  ASSERT_TRUE(l->Finish(20, "j1").ok());
  const absl::Status twice = l->Finish(21, "j1");
  EXPECT_EQ(twice.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(twice.message(), testing::HasSubstr("Finish j1: the job is not running"));
  const absl::Status moved =
      l->Start(30, {.job = "j1", .queue = "team-b", .placements = {On("n1", {0}, 1000)}});
  EXPECT_EQ(moved.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(moved.message(), testing::HasSubstr("ran in queue \"team-a\" before"));
  EXPECT_EQ(l->AdvanceTo(19).code(), absl::StatusCode::kInvalidArgument);
}

TEST(LedgerTest, BadSetupsAreRefused) {
  auto error = [](const LedgerSetup& setup) { return Ledger::Create(setup).status(); };
  LedgerSetup dup = ExampleSetup();
  dup.nodes.push_back(MakeNode("n1", "A", 1));
  EXPECT_THAT(error(dup).message(), testing::HasSubstr("duplicate id \"n1\""));
  LedgerSetup cycle = ExampleSetup();
  cycle.queues[0].parent = "team-a";
  EXPECT_EQ(error(cycle).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(error(cycle).message(), testing::HasSubstr("cycle"));
  LedgerSetup orphan = ExampleSetup();
  orphan.queues[1].parent = "nobody";
  EXPECT_THAT(error(orphan).message(), testing::HasSubstr("(team-a).parent: unknown queue"));
  LedgerSetup negative = ExampleSetup();
  negative.queues[1].quotas[0].guaranteed_milli = -1;
  EXPECT_THAT(error(negative).message(), testing::HasSubstr("guaranteed_milli: negative"));
  LedgerSetup twice = ExampleSetup();
  twice.queues[1].quotas.push_back(Quota{.gpu_model = "A", .guaranteed_milli = 1});
  EXPECT_THAT(error(twice).message(), testing::HasSubstr("a second quota for \"A\""));
  LedgerSetup gpu = ExampleSetup();
  gpu.nodes[0].gpus[1].index = 0;
  EXPECT_THAT(error(gpu).message(), testing::HasSubstr("duplicate GPU index"));
  LedgerSetup model = ExampleSetup();
  model.nodes[0].gpu_model = "";
  EXPECT_THAT(error(model).message(), testing::HasSubstr("gpu_model: empty"));
  LedgerSetup bucket = ExampleSetup();
  bucket.series_bucket_s = -1;
  EXPECT_THAT(error(bucket).message(), testing::HasSubstr("series_bucket_s"));
  LedgerSetup label_key = ExampleSetup();
  label_key.queues[1].labels = {{"", "x"}};
  EXPECT_EQ(error(label_key).message(), "queues (team-a).labels[]: key must not be empty");
  LedgerSetup label_twice = ExampleSetup();
  label_twice.queues[1].labels = {{"cost_center", "a"}, {"cost_center", "b"}};
  EXPECT_EQ(error(label_twice).message(), "queues (team-a).labels[cost_center]: duplicate key");
  LedgerSetup label_value = ExampleSetup();
  label_value.queues[1].labels = {{"cost_center", ""}};
  EXPECT_EQ(error(label_value).message(),
            "queues (team-a).labels[cost_center].value: must not be empty");
}

TEST(LedgerTest, CapacityOverflowIsOutOfRange) {
  absl::StatusOr<Ledger> l = Ledger::Create(ExampleSetup());
  ASSERT_TRUE(l.ok());
  // 3 GPUs x 1000 x 2^62 s does not fit in int64.
  const absl::Status status = l->AdvanceTo(int64_t{1} << 62);
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(l->now(), 0);
}

TEST(LedgerTest, RecordAppliesPreemptionsThenStarts) {
  absl::StatusOr<Ledger> l = Ledger::Create(ExampleSetup());
  ASSERT_TRUE(l.ok());
  Snapshot s;
  s.now = 0;
  Job v;
  v.id = "v";
  v.queue = "team-a";
  v.checkpointing.restore_time_s = 30;
  Job p = v;
  p.id = "p";
  p.queue = "team-b";
  s.jobs = {v, p};
  Decisions start_v;
  start_v.starts.push_back(StartDecision{.job = "v", .placements = {On("n1", {0}, 1000)}});
  ASSERT_TRUE(l->Record(s, start_v).ok());
  // At 100: v (last checkpoint at 70) is preempted for p, which starts on its GPU.
  s.now = 100;
  s.jobs[0].state = JobState::kRunning;
  s.jobs[0].checkpointing.last_checkpoint_time = 70;
  Decisions swap;
  swap.preemptions.push_back(PreemptDecision{.job = "v", .for_job = "p"});
  swap.starts.push_back(StartDecision{.job = "p", .placements = {On("n1", {0}, 1000)}});
  ASSERT_TRUE(l->Record(s, swap).ok());
  // At 200 v starts again (it ran before: it restores for 30 s) and p finishes.
  s.now = 200;
  ASSERT_TRUE(l->Finish(200, "p").ok());
  ASSERT_TRUE(l->Record(s, start_v).ok());
  ASSERT_TRUE(l->AdvanceTo(250).ok());
  const LedgerReport r = l->Report();
  EXPECT_EQ(JobRow(r, "v").work, (WorkTime{.busy = 150'000,
                                           .productive = 70'000 + 20'000,
                                           .lost_to_preemption = 30'000,
                                           .restore = 30'000}));
  EXPECT_EQ(JobRow(r, "p").work, (WorkTime{.busy = 100'000, .productive = 100'000}));
  ASSERT_EQ(r.preemption_losses.size(), 1u);
  EXPECT_EQ(r.preemption_losses[0].by_queue, "team-b");
  // A start of a job the snapshot does not hold is refused.
  Decisions ghost;
  ghost.starts.push_back(StartDecision{.job = "ghost", .placements = {On("n1", {1}, 1000)}});
  EXPECT_THAT(l->Record(s, ghost).message(), testing::HasSubstr("ghost"));
}

// ---- The property test -------------------------------------------------------------------

// A random history on a random pool, replayed both into the ledger and into a second-by-second
// oracle of what each queue held of each model; the report must match the oracle and satisfy
// every identity of ledger.h.
void CheckRandomHistory(uint64_t seed) {
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  sim::Rng rng(seed);
  auto pick = [&](int64_t n) {
    return static_cast<int64_t>(rng.Uniform(static_cast<uint64_t>(n)));
  };

  LedgerSetup setup;
  setup.start_time = pick(100) - 50;
  setup.series_bucket_s = 1 + pick(20);
  const std::vector<std::string> models = {"A", "B"};
  const int64_t num_nodes = 1 + pick(4);
  for (int64_t n = 0; n < num_nodes; ++n) {
    setup.nodes.push_back(MakeNode("n" + std::to_string(n), models[static_cast<size_t>(pick(2))],
                                   static_cast<int32_t>(1 + pick(4))));
  }
  const int64_t num_queues = 1 + pick(6);
  for (int64_t q = 0; q < num_queues; ++q) {
    std::vector<Quota> quotas;
    if (pick(2) == 0) quotas.push_back(Quota{.gpu_model = "A", .guaranteed_milli = pick(3000)});
    if (pick(2) == 0) quotas.push_back(Quota{.gpu_model = "*", .guaranteed_milli = pick(3000)});
    const std::string parent = q == 0 || pick(3) == 0 ? "" : "q" + std::to_string(pick(q));
    setup.queues.push_back(MakeQueue("q" + std::to_string(q), parent, quotas));
  }
  absl::StatusOr<Ledger> ledger = Ledger::Create(setup);
  ASSERT_TRUE(ledger.ok()) << ledger.status();

  // The oracle: what each GPU holds, per job.
  struct Use {
    std::string node;
    int32_t gpu;
    int64_t milli;
    int32_t replica;
  };
  std::map<std::string, std::vector<Use>> running;  // job -> uses
  std::map<std::string, std::string> queue_of;
  std::map<std::pair<std::string, int32_t>, int64_t> used;  // (node, gpu) -> milli
  std::map<std::string, const Node*> nodes;
  for (const Node& n : setup.nodes) nodes[n.id] = &n;
  // Expected integrals per (queue, model): busy, within.
  std::map<std::pair<std::string, std::string>, std::pair<int64_t, int64_t>> expected;
  std::map<std::pair<std::string, std::string>, int64_t> expected_peak;

  auto integrate_second = [&]() {
    std::map<std::pair<std::string, std::string>, int64_t> usage;
    for (const auto& [job, uses] : running) {
      for (const Use& u : uses) usage[{queue_of[job], nodes[u.node]->gpu_model}] += u.milli;
    }
    // Within: per-model guarantee, then "*" in model order.
    for (const Queue& q : setup.queues) {
      int64_t star = 0, a = 0;
      for (const Quota& quota : q.quotas) {
        if (quota.gpu_model == "*") star = quota.guaranteed_milli;
        if (quota.gpu_model == "A") a = quota.guaranteed_milli;
      }
      for (const std::string& m : models) {
        const int64_t u = usage.count({q.id, m}) ? usage[{q.id, m}] : 0;
        const int64_t own = std::min(u, m == "A" ? a : 0);
        const int64_t extra = std::min(u - own, star);
        star -= extra;
        auto& e = expected[{q.id, m}];
        e.first += u;
        e.second += own + extra;
        if (u > 0) expected_peak[{q.id, m}] = std::max(expected_peak[{q.id, m}], u);
      }
    }
  };

  // SubtreeBusy() against the oracle: a queue's own busy so far plus its descendants'.
  auto check_subtree_busy = [&]() {
    for (const Queue& q : setup.queues) {
      int64_t want = 0;
      for (const Queue& r : setup.queues) {
        std::string at = r.id;
        while (!at.empty() && at != q.id) {
          at = std::find_if(setup.queues.begin(), setup.queues.end(), [&](const Queue& x) {
                 return x.id == at;
               })->parent;
        }
        if (at != q.id) continue;
        for (const std::string& m : models) {
          auto e = expected.find({r.id, m});
          if (e != expected.end()) want += e->second.first;
        }
      }
      absl::StatusOr<int64_t> got = ledger->SubtreeBusy(q.id);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(*got, want) << q.id << " at " << ledger->now();
    }
  };

  int64_t t = setup.start_time;
  int32_t next_job = 0;
  for (int32_t step = 0; step < 60; ++step) {
    const int64_t dt = pick(4);
    for (int64_t k = 0; k < dt; ++k) integrate_second();
    t += dt;
    ASSERT_TRUE(ledger->AdvanceTo(t).ok());
    check_subtree_busy();
    const int64_t action = pick(7);
    std::vector<std::string> ids;
    for (const auto& [id, uses] : running) ids.push_back(id);
    if (action <= 1 || ids.empty()) {
      // Start a new job (or an old one again) on random GPUs with room.
      std::string id = next_job > 0 && pick(3) == 0 ? "j" + std::to_string(pick(next_job))
                                                    : "j" + std::to_string(next_job++);
      if (running.count(id)) continue;
      if (!queue_of.count(id)) queue_of[id] = "q" + std::to_string(pick(num_queues));
      LedgerStart start{.job = id, .queue = queue_of[id], .placements = {}, .restore_s = pick(3)};
      std::vector<Use> uses;
      std::map<std::pair<std::string, int32_t>, int64_t> extra;
      const int64_t replicas = 1 + pick(2);
      for (int32_t r = 0; r < replicas; ++r) {
        const Node& node = setup.nodes[static_cast<size_t>(pick(num_nodes))];
        const auto gpu = static_cast<int32_t>(pick(static_cast<int64_t>(node.gpus.size())));
        const int64_t milli = pick(2) == 0 ? 1000 : 1 + pick(1000);
        if (used[{node.id, gpu}] + extra[{node.id, gpu}] + milli > 1000) continue;
        extra[{node.id, gpu}] += milli;
        start.placements.push_back(On(node.id, {gpu}, milli, r));
        uses.push_back(Use{node.id, gpu, milli, r});
      }
      if (uses.empty()) continue;
      ASSERT_TRUE(ledger->Start(t, start).ok()) << ledger->Start(t, start);
      for (const Use& u : uses) used[{u.node, u.gpu}] += u.milli;
      running[id] = uses;
      continue;
    }
    const std::string id = ids[static_cast<size_t>(pick(static_cast<int64_t>(ids.size())))];
    auto release = [&](const std::vector<Use>& uses) {
      for (const Use& u : uses) used[{u.node, u.gpu}] -= u.milli;
    };
    switch (action) {
      case 2:
        ASSERT_TRUE(ledger->Checkpoint(t, id).ok());
        break;
      case 3:
        ASSERT_TRUE(ledger->Finish(t, id).ok());
        release(running[id]);
        running.erase(id);
        break;
      case 4: {
        const std::string by = pick(2) == 0 ? "" : "q" + std::to_string(pick(num_queues));
        ASSERT_TRUE(ledger->Preempt(t, id, by).ok());
        release(running[id]);
        running.erase(id);
        break;
      }
      case 5:
        ASSERT_TRUE(ledger->Fail(t, id).ok());
        release(running[id]);
        running.erase(id);
        break;
      default: {
        std::vector<Use>& uses = running[id];
        if (uses.size() < 2 || uses.front().replica != 0 || uses.back().replica != 1) break;
        ASSERT_TRUE(ledger->Shrink(t, id, "main", 1, pick(2) == 0).ok());
        std::vector<Use> kept, gone;
        for (const Use& u : uses) (u.replica >= 1 ? gone : kept).push_back(u);
        release(gone);
        uses = kept;
        break;
      }
    }
  }
  const int64_t tail = pick(5);
  for (int64_t k = 0; k < tail; ++k) integrate_second();
  t += tail;
  ASSERT_TRUE(ledger->AdvanceTo(t).ok());
  const LedgerReport r = ledger->Report();
  for (const QueueLedger& q : r.queues) {
    EXPECT_EQ(ledger->SubtreeBusy(q.queue).value_or(-1), q.subtree.work.busy) << q.queue;
  }
  EXPECT_EQ(ledger->SubtreeBusy("nobody").status().code(), absl::StatusCode::kNotFound);

  auto split_adds_up = [](const WorkTime& w) {
    return w.busy == w.productive + w.lost_to_preemption + w.lost_to_failure + w.restore;
  };
  // Queue x model rows against the oracle; each identity per row.
  int64_t qm_busy = 0;
  for (const QueueModelLedger& qm : r.queue_models) {
    const auto& e = expected[{qm.queue, qm.gpu_model}];
    EXPECT_EQ(qm.own.work.busy, e.first) << qm.queue << " " << qm.gpu_model;
    EXPECT_EQ(qm.own.within_guarantee, e.second) << qm.queue << " " << qm.gpu_model;
    const int64_t peak = expected_peak[{qm.queue, qm.gpu_model}];
    EXPECT_EQ(qm.peak_milli, peak);
    EXPECT_TRUE(split_adds_up(qm.own.work));
    EXPECT_EQ(qm.own.within_guarantee + qm.own.borrowed, qm.own.work.busy);
    int64_t sum_busy = 0, sum_within = 0, sum_borrowed = 0;
    for (int64_t b = 0; b < r.series_buckets; ++b) {
      sum_busy += qm.busy_series[static_cast<size_t>(b)];
      sum_within += qm.within_guarantee_series[static_cast<size_t>(b)];
      sum_borrowed += qm.borrowed_series[static_cast<size_t>(b)];
    }
    EXPECT_EQ(sum_busy, qm.own.work.busy);
    EXPECT_EQ(sum_within, qm.own.within_guarantee);
    EXPECT_EQ(sum_borrowed, qm.own.borrowed);
    qm_busy += qm.own.work.busy;
  }
  for (const auto& [key, e] : expected) {
    if (e.first == 0) continue;
    EXPECT_TRUE(std::any_of(r.queue_models.begin(), r.queue_models.end(),
                            [&](const QueueModelLedger& qm) {
                              return qm.queue == key.first && qm.gpu_model == key.second;
                            }))
        << key.first << " " << key.second;
  }

  // Pool: capacity = busy + idle; the split adds up; within + borrowed = busy.
  EXPECT_EQ(r.pool.capacity, r.pool.time.work.busy + r.pool.idle);
  EXPECT_TRUE(split_adds_up(r.pool.time.work));
  EXPECT_EQ(r.pool.time.within_guarantee + r.pool.time.borrowed, r.pool.time.work.busy);
  EXPECT_EQ(r.pool.time.work.busy, qm_busy);
  int64_t gpus = 0;
  for (const Node& n : setup.nodes) gpus += static_cast<int64_t>(n.gpus.size());
  EXPECT_EQ(r.pool.capacity, gpus * 1000 * (t - setup.start_time));

  // Models, nodes and jobs each sum to the pool.
  WorkTime models_sum, nodes_sum, jobs_sum, roots_sum, own_sum;
  auto add = [](WorkTime& into, const WorkTime& w) {
    into.busy += w.busy;
    into.productive += w.productive;
    into.lost_to_preemption += w.lost_to_preemption;
    into.lost_to_failure += w.lost_to_failure;
    into.restore += w.restore;
  };
  for (const ModelLedger& m : r.models) {
    EXPECT_EQ(m.usage.capacity, m.usage.time.work.busy + m.usage.idle);
    EXPECT_TRUE(split_adds_up(m.usage.time.work));
    EXPECT_EQ(m.usage.time.within_guarantee + m.usage.time.borrowed, m.usage.time.work.busy);
    add(models_sum, m.usage.time.work);
  }
  for (const NodeLedger& n : r.nodes) {
    EXPECT_EQ(n.capacity, n.work.busy + n.idle);
    EXPECT_GE(n.idle, 0);
    EXPECT_TRUE(split_adds_up(n.work));
    add(nodes_sum, n.work);
  }
  for (const JobLedger& j : r.jobs) {
    EXPECT_TRUE(split_adds_up(j.work));
    add(jobs_sum, j.work);
  }
  EXPECT_EQ(models_sum, r.pool.time.work);
  EXPECT_EQ(nodes_sum, r.pool.time.work);
  EXPECT_EQ(jobs_sum, r.pool.time.work);

  // Queues: own figures sum to the pool; a subtree is its own plus its children's subtrees;
  // the roots' subtrees sum to the pool.
  std::map<std::string, QueueTime> children_sum;
  for (const QueueLedger& q : r.queues) {
    EXPECT_TRUE(split_adds_up(q.own.work));
    EXPECT_TRUE(split_adds_up(q.subtree.work));
    EXPECT_EQ(q.subtree.within_guarantee + q.subtree.borrowed, q.subtree.work.busy);
    add(own_sum, q.own.work);
    if (q.parent.empty()) add(roots_sum, q.subtree.work);
    QueueTime& c = children_sum[q.parent];
    add(c.work, q.subtree.work);
    c.within_guarantee += q.subtree.within_guarantee;
    c.borrowed += q.subtree.borrowed;
  }
  for (const QueueLedger& q : r.queues) {
    QueueTime expect = q.own;
    const QueueTime& c = children_sum[q.queue];
    add(expect.work, c.work);
    expect.within_guarantee += c.within_guarantee;
    expect.borrowed += c.borrowed;
    EXPECT_EQ(q.subtree, expect) << q.queue;
  }
  EXPECT_EQ(own_sum, r.pool.time.work);
  EXPECT_EQ(roots_sum, r.pool.time.work);

  // Preemption losses sum to each victim's lost_to_preemption.
  std::map<std::pair<std::string, std::string>, int64_t> losses;
  for (const PreemptionLoss& p : r.preemption_losses)
    losses[{p.victim_queue, p.gpu_model}] += p.lost;
  for (const QueueModelLedger& qm : r.queue_models) {
    const int64_t lost = losses[{qm.queue, qm.gpu_model}];
    EXPECT_EQ(lost, qm.own.work.lost_to_preemption);
  }
}

TEST(LedgerPropertyTest, IdentitiesHoldOnRandomHistories) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    CheckRandomHistory(seed);
    if (testing::Test::HasFailure()) break;
  }
}

}  // namespace
}  // namespace gpupool
