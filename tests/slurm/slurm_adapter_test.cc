// The Slurm adapter on recorded command outputs (tests/slurm/data): the snapshot it builds, the
// exact commands it runs, and its errors. cluster.* was captured from the loopback cluster of
// examples/slurm/cluster.sh (jobs of every kind: running, a 2-node gang, held with and without
// directives, unmappable, released onto a drained node); full.* is written by hand (a full
// partition, a foreign job on a shared node, a high-priority arrival).
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gpupool/io/json.h"
#include "gpupool/schedule.h"
#include "gpupool/validate.h"
#include "gtest/gtest.h"
#include "hosts/slurm/cycle.h"
#include "hosts/slurm/slurm_state.h"
#include "hosts/slurm/snapshot_builder.h"
#include "slurm/fake_runner.h"

namespace gpupool::slurm {
namespace {

using ::testing::ElementsAre;
using testing::FakeRunner;
using ::testing::HasSubstr;
using testing::ReadFixture;

// Compares with tests/slurm/data/<name>; GPUPOOL_UPDATE_GOLDEN=1 rewrites it.
void ExpectGolden(const std::string& name, const std::string& actual) {
  if (const char* update = std::getenv("GPUPOOL_UPDATE_GOLDEN"); update != nullptr) {
    std::ofstream(std::string(GPUPOOL_SOURCE_DIR) + "/tests/slurm/data/" + name, std::ios::binary)
        << actual;
  }
  EXPECT_EQ(actual, ReadFixture(name)) << "golden file tests/slurm/data/" << name;
}

constexpr int64_t kClusterNow = 1795593960;  // a minute after the capture's submissions
constexpr int64_t kFullNow = 10000;

absl::StatusOr<SlurmState> StateOf(FakeRunner& runner) { return ReadSlurmState(runner); }

TEST(SlurmSnapshotTest, CapturedClusterMapsToTheGoldenSnapshot) {
  FakeRunner runner;
  runner.AnswerState("cluster");
  absl::StatusOr<SlurmState> state = StateOf(runner);
  ASSERT_TRUE(state.ok()) << state.status();
  absl::StatusOr<BuiltSnapshot> built = BuildSnapshot(*state, AdapterOptions{}, kClusterNow);
  ASSERT_TRUE(built.ok()) << built.status();
  // Nodes n1-n4 (n2 drained: cordoned; in-flight job 9 waits on it), racks rack1/rack2; running
  // jobs 1 (n1, GPUs 0-1) and 2 (gang on n3, n4); pending 3, 4, 8; 5, 6, 7 unmapped.
  ExpectGolden("cluster.snapshot.json", io::SnapshotToJson(built->snapshot));
  ASSERT_EQ(built->snapshot.jobs.size(), 5u);
  EXPECT_EQ(built->snapshot.jobs[2].id, "3");
  // --nice=-10, which squeue --json writes as 4294967286.
  EXPECT_EQ(built->snapshot.jobs[2].priority, 10);
  ASSERT_EQ(built->unmapped.size(), 3u);
  EXPECT_EQ(built->unmapped[0].id, "5");
  EXPECT_THAT(built->unmapped[0].why, HasSubstr("--gpus=4 over 2 nodes"));
  EXPECT_EQ(built->unmapped[1].id, "6");
  EXPECT_THAT(built->unmapped[1].why, HasSubstr("job arrays are not supported"));
  EXPECT_EQ(built->unmapped[2].id, "7");
  EXPECT_THAT(built->unmapped[2].why, HasSubstr("--exclude is not supported"));
  ASSERT_EQ(built->in_flight.size(), 1u);
  EXPECT_EQ(built->in_flight[0].id, "9");
  EXPECT_THAT(built->in_flight[0].nodes, ElementsAre("n2"));
  EXPECT_EQ(built->in_flight[0].unschedulable_node, "n2");
}

TEST(SlurmCycleTest, CapturedClusterStartsTakesBackAndExplains) {
  FakeRunner runner;
  runner.AnswerState("cluster");
  absl::StatusOr<CycleResult> cycle =
      RunCycle(runner, AdapterOptions{}, Policy{}, kClusterNow, /*dry_run=*/false);
  ASSERT_TRUE(cycle.ok()) << cycle.status();
  ExpectGolden("cluster.decisions.json", io::DecisionsToJson(cycle->decisions));
  // Job 9 was released onto n2, which is drained: taken back. Jobs 3 (4 GPUs, nice -10, first)
  // and 4 fill n1 next to job 1; the CPU-only 8 goes where no GPU is free (best fit: n1 before
  // n3 and n4, which the gang fills, by id). 5, 6, 7 get their reason as comment.
  EXPECT_THAT(
      runner.Changes(),
      ElementsAre(
          "scontrol hold 9",
          "scontrol update JobId=9 'Comment=gpupool: taken back: node n2 can no longer run it'",
          "scontrol update JobId=3 NodeList=n1 StartTime=now "
          "'Comment=resnet checkpoint=USR1@5 gpupool: started on n1'",
          "scontrol release 3",
          "scontrol update JobId=4 NodeList=n1 StartTime=now 'Comment=gpupool: started on n1'",
          "scontrol release 4",
          "scontrol update JobId=8 NodeList=n1 StartTime=now 'Comment=gpupool: started on n1'",
          "scontrol release 8",
          "scontrol update JobId=5 'Comment=gpupool: not scheduled: --gpus=4 over 2 nodes: "
          "Slurm may split it unevenly; ask --gpus-per-node (or --gres) instead'",
          "scontrol update JobId=6 'Comment=gpupool: not scheduled: job arrays are not "
          "supported: submit the tasks as separate jobs'",
          "scontrol update JobId=7 'Comment=gpupool: not scheduled: --exclude is not supported: "
          "gpupool chooses the nodes (see docs/slurm.md)'"));
  EXPECT_TRUE(cycle->report.errors.empty());
  EXPECT_TRUE(cycle->report.not_applied.empty());
}

// docs/slurm.md promises that `gpupool schedule` on the --snapshot-out file gives the cycle's
// decisions: the snapshot the adapter builds survives its JSON round trip.
TEST(SlurmCycleTest, SnapshotOutReproducesTheDecisions) {
  for (const auto& [fixture, now] :
       {std::pair{"cluster", kClusterNow}, std::pair{"full", kFullNow}}) {
    FakeRunner runner;
    runner.AnswerState(fixture);
    absl::StatusOr<CycleResult> cycle =
        RunCycle(runner, AdapterOptions{}, Policy{}, now, /*dry_run=*/true);
    ASSERT_TRUE(cycle.ok()) << cycle.status();
    absl::StatusOr<Snapshot> reread = io::ParseSnapshot(io::SnapshotToJson(cycle->built.snapshot));
    ASSERT_TRUE(reread.ok()) << reread.status();
    absl::StatusOr<Decisions> again = Schedule(*reread, Policy{});
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(io::DecisionsToJson(*again), io::DecisionsToJson(cycle->decisions)) << fixture;
  }
}

TEST(SlurmCycleTest, DryRunRunsOnlyTheReadingCommands) {
  FakeRunner runner;
  runner.AnswerState("cluster");
  absl::StatusOr<CycleResult> cycle =
      RunCycle(runner, AdapterOptions{}, Policy{}, kClusterNow, /*dry_run=*/true);
  ASSERT_TRUE(cycle.ok()) << cycle.status();
  EXPECT_THAT(runner.Changes(), ::testing::IsEmpty());
  EXPECT_EQ(cycle->report.commands.size(), 11u);  // what the real cycle above runs
}

TEST(SlurmSnapshotTest, ForeignWorkKeepsItsGpusAndCpus) {
  FakeRunner runner;
  runner.AnswerState("full");
  absl::StatusOr<BuiltSnapshot> built = BuildSnapshot(*StateOf(runner), AdapterOptions{}, kFullNow);
  ASSERT_TRUE(built.ok()) << built.status();
  ExpectGolden("full.snapshot.json", io::SnapshotToJson(built->snapshot));
  // n3 is shared with partition "other", whose job 15 holds GPUs 0-3 and 4 CPUs; x1 is not in
  // the managed partition.
  ASSERT_EQ(built->snapshot.nodes.size(), 3u);
  const Node& n3 = built->snapshot.nodes[2];
  EXPECT_EQ(n3.id, "n3");
  EXPECT_EQ(n3.cpu_milli, 12000);
  for (const Gpu& gpu : n3.gpus) EXPECT_EQ(gpu.healthy, gpu.index >= 4) << gpu.index;
  EXPECT_THAT(built->notes,
              ElementsAre("node n3: GPUs 0,1,2,3 are in use by work outside gpupool's jobs: "
                          "kept out"));
}

// With several managed partitions a job may run only on its own partition's nodes: each node
// belongs to the root queues of the managed partitions it is in (an outside test found jobs of
// one partition started on a node of the other only, which Slurm then never ran).
TEST(SlurmSnapshotTest, SeveralPartitionsKeepTheirJobsOnTheirNodes) {
  FakeRunner runner;
  runner.AnswerState("full");
  AdapterOptions options;
  options.partitions = {"gpupool", "other"};
  absl::StatusOr<BuiltSnapshot> built = BuildSnapshot(*StateOf(runner), options, kFullNow);
  ASSERT_TRUE(built.ok()) << built.status();
  ASSERT_EQ(built->snapshot.nodes.size(), 4u);
  EXPECT_THAT(built->snapshot.nodes[0].owner_queues, ElementsAre("gpupool"));           // n1
  EXPECT_THAT(built->snapshot.nodes[1].owner_queues, ElementsAre("gpupool"));           // n2
  EXPECT_THAT(built->snapshot.nodes[2].owner_queues, ElementsAre("gpupool", "other"));  // n3
  EXPECT_THAT(built->snapshot.nodes[3].owner_queues, ElementsAre("other"));             // x1
  EXPECT_TRUE(ValidateSnapshot(built->snapshot).ok());
  // One managed partition: no owners (every node is its own).
  built = BuildSnapshot(*StateOf(runner), AdapterOptions{}, kFullNow);
  ASSERT_TRUE(built.ok()) << built.status();
  for (const Node& node : built->snapshot.nodes)
    EXPECT_THAT(node.owner_queues, ::testing::IsEmpty());
}

// A held job submitted to several partitions, one of them managed, is not scheduled (Slurm may
// run it on either) and is told so; one that names no managed partition is not gpupool's.
TEST(SlurmSnapshotTest, AJobOfSeveralPartitionsIsToldWhyItWaits) {
  FakeRunner runner;
  runner.Answer("sinfo --json", std::string(R"js({"nodes": [
    {"name": "n1", "state": "idle", "partitions": ["gpupool"], "cpus": 16, "gres": "gpu:h100:8",
     "gres_used": "gpu:h100:0(IDX:N/A)"}]})js"));
  runner.Answer("squeue --json", std::string(R"js({"jobs": [
    {"job_id": 31, "partition": "gpupool,other", "job_state": "PENDING",
     "state_reason": "JobHeldUser", "priority": 0, "tres_per_node": "gres:gpu:1", "node_count": 1,
     "cpus": 1, "comment": ""},
    {"job_id": 32, "partition": "other,x", "job_state": "PENDING", "state_reason": "JobHeldUser",
     "priority": 0, "tres_per_node": "gres:gpu:1", "node_count": 1, "cpus": 1, "comment": ""}]})js"));
  runner.Answer("scontrol -o show partition",
                std::string("PartitionName=gpupool Nodes=n1 PriorityTier=1 State=UP\n"));
  absl::StatusOr<BuiltSnapshot> built = BuildSnapshot(*StateOf(runner), AdapterOptions{}, 100);
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_THAT(built->snapshot.jobs, ::testing::IsEmpty());
  ASSERT_EQ(built->unmapped.size(), 1u);
  EXPECT_EQ(built->unmapped[0].id, "31");
  EXPECT_EQ(built->unmapped[0].why,
            "submitted to several partitions (gpupool,other): gpupool schedules jobs of one "
            "managed partition; submit with -p naming it alone");
}

TEST(SlurmCycleTest, PreemptionSignalsWaitsRequeuesThenStarts) {
  FakeRunner runner;
  runner.AnswerState("full");
  runner.Answer("squeue -h -j 11 -o %T", std::string("RUNNING\n"));
  absl::StatusOr<Policy> policy = io::ParsePolicy(ReadFixture("preempt.policy.json"));
  ASSERT_TRUE(policy.ok()) << policy.status();
  absl::StatusOr<CycleResult> cycle = RunCycle(runner, AdapterOptions{}, *policy, kFullNow, false);
  ASSERT_TRUE(cycle.ok()) << cycle.status();
  ExpectGolden("full.decisions.json", io::DecisionsToJson(cycle->decisions));
  // Job 13 (nice -100) needs a whole node; job 11 started last, so it loses the least: it is
  // the victim. It asked for USR1 and 7 s to checkpoint (its comment) before it goes.
  // Job 14 (two whole nodes, queue gpupool/lab) waits; its comment says why.
  ASSERT_EQ(cycle->decisions.preemptions.size(), 1u);
  const std::vector<std::string> changes = runner.Changes();
  ASSERT_EQ(changes.size(), 8u);
  EXPECT_EQ(changes[0], "scancel --signal=USR1 --full 11");
  EXPECT_EQ(changes[1], "(sleep 7)");
  EXPECT_EQ(changes[2], "squeue -h -j 11 -o %T");
  EXPECT_EQ(changes[3], "scontrol requeuehold 11");
  EXPECT_THAT(changes[4], HasSubstr("scontrol update JobId=11 'Comment=checkpoint=USR1@7 "
                                    "gpupool: preempted for job 13: "));
  EXPECT_EQ(changes[5],
            "scontrol update JobId=13 NodeList=n1 StartTime=now 'Comment=gpupool: started on n1'");
  EXPECT_EQ(changes[6], "scontrol release 13");
  EXPECT_THAT(changes[7], HasSubstr("scontrol update JobId=14 'Comment=gpupool: waiting: "));
}

TEST(SlurmCycleTest, VictimThatEndsDuringItsCheckpointIsNotRequeued) {
  FakeRunner runner;
  runner.AnswerState("full");
  runner.Answer("squeue -h -j 11 -o %T", std::string("COMPLETED\n"));
  absl::StatusOr<Policy> policy = io::ParsePolicy(ReadFixture("preempt.policy.json"));
  absl::StatusOr<CycleResult> cycle = RunCycle(runner, AdapterOptions{}, *policy, kFullNow, false);
  ASSERT_TRUE(cycle.ok()) << cycle.status();
  for (const std::string& line : runner.Changes()) EXPECT_NE(line, "scontrol requeuehold 11");
  EXPECT_THAT(cycle->report.not_applied,
              ElementsAre("Preempt of job 11: it is COMPLETED after its checkpoint signal "
                          "(not requeued)"));
}

TEST(SlurmCycleTest, FailingCommandIsReportedAndTheOthersRun) {
  FakeRunner runner;
  runner.AnswerState("cluster");
  runner.Answer("scontrol release 3",
                absl::InternalError("scontrol release 3: exit status 1: Job is not held"));
  absl::StatusOr<CycleResult> cycle =
      RunCycle(runner, AdapterOptions{}, Policy{}, kClusterNow, false);
  ASSERT_TRUE(cycle.ok()) << cycle.status();
  EXPECT_THAT(cycle->report.errors,
              ElementsAre("scontrol release 3: exit status 1: Job is not held"));
  // The job stays held, and its comment no longer says it started.
  EXPECT_EQ(runner.Changes().size(), 12u);
  EXPECT_THAT(runner.Changes(),
              ::testing::Contains("scontrol update JobId=3 'Comment=resnet checkpoint=USR1@5 "
                                  "gpupool: not started: scontrol release failed (scontrol "
                                  "release 3: exit status 1: Job is not held); tried again next "
                                  "cycle'"));
}

TEST(SlurmCycleTest, CommentsAreWrittenOnlyWhenTheyChange) {
  FakeRunner runner;
  runner.AnswerState("full");
  // Without preemption job 13 waits too; the second cycle sees the comments the first wrote.
  absl::StatusOr<CycleResult> first = RunCycle(runner, AdapterOptions{}, Policy{}, kFullNow, false);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->report.commands.size(), 2u);
  EXPECT_THAT(runner.Changes()[0],
              HasSubstr("scontrol update JobId=13 'Comment=gpupool: waiting: "));
  // Feed the comments written back into squeue's answer.
  std::string squeue = ReadFixture("full.squeue.json");
  for (const std::vector<std::string>& argv : first->report.commands) {
    ASSERT_EQ(argv.size(), 4u);
    const std::string job = argv[2].substr(std::string("JobId=").size());
    const std::string comment = argv[3].substr(std::string("Comment=").size());
    const size_t at = squeue.find("\"comment\": \"\"", squeue.find("\"job_id\": " + job + ","));
    ASSERT_NE(at, std::string::npos) << job;
    squeue.replace(at, 13, "\"comment\": \"" + comment + "\"");
  }
  FakeRunner again;
  again.AnswerState("full");
  again.Answer("squeue --json", squeue);
  absl::StatusOr<CycleResult> second = RunCycle(again, AdapterOptions{}, Policy{}, kFullNow, false);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_THAT(again.Changes(), ::testing::IsEmpty());
}

// A 2-node job of 4 GPUs per node: Slurm runs its share of each node there, so the adapter asks
// for one replica per node (topology.max_replicas_per_node 1). With one free 8-GPU node it waits,
// told why, though the node has room for both halves; with a second node it starts on both.
TEST(SlurmCycleTest, AMultiNodeJobGetsOneReplicaPerNode) {
  const std::string squeue = R"js({"jobs": [
    {"job_id": 21, "partition": "gpupool", "job_state": "PENDING", "state_reason": "JobHeldUser",
     "priority": 0, "tres_per_node": "gres:gpu:4", "node_count": 2, "cpus": 2, "comment": ""}]})js";
  auto node = [](const char* name) {
    return absl::StrCat(R"js({"name": ")js", name,
                        R"js(", "state": "idle", "partitions": ["gpupool"], "cpus": 16,
                        "gres": "gpu:h100:8", "gres_used": "gpu:h100:0(IDX:N/A)"})js");
  };
  {
    SCOPED_TRACE("one node");
    FakeRunner runner;
    runner.Answer("sinfo --json", absl::StrCat(R"({"nodes": [)", node("n1"), "]}"));
    runner.Answer("squeue --json", squeue);
    runner.Answer("scontrol -o show partition",
                  std::string("PartitionName=gpupool Nodes=n1 PriorityTier=1 State=UP\n"));
    absl::StatusOr<CycleResult> cycle = RunCycle(runner, AdapterOptions{}, Policy{}, 100, false);
    ASSERT_TRUE(cycle.ok()) << cycle.status();
    EXPECT_THAT(cycle->decisions.starts, ::testing::IsEmpty());
    EXPECT_THAT(cycle->report.not_applied, ::testing::IsEmpty());
    EXPECT_THAT(runner.Changes(),
                ElementsAre("scontrol update JobId=21 'Comment=gpupool: waiting: never-fits: "
                            "group main needs its 2 replicas on at least 2 nodes (at most 1 per "
                            "node, topology.max_replicas_per_node), and only 1 eligible node of "
                            "any model can hold one, even when empty'"));
  }
  {
    SCOPED_TRACE("two nodes");
    FakeRunner runner;
    runner.Answer("sinfo --json",
                  absl::StrCat(R"({"nodes": [)", node("n1"), ", ", node("n2"), "]}"));
    runner.Answer("squeue --json", squeue);
    runner.Answer("scontrol -o show partition",
                  std::string("PartitionName=gpupool Nodes=n1,n2 PriorityTier=1 State=UP\n"));
    absl::StatusOr<CycleResult> cycle = RunCycle(runner, AdapterOptions{}, Policy{}, 100, false);
    ASSERT_TRUE(cycle.ok()) << cycle.status();
    EXPECT_THAT(cycle->report.not_applied, ::testing::IsEmpty());
    EXPECT_THAT(runner.Changes(),
                ElementsAre("scontrol update JobId=21 NodeList=n1,n2 StartTime=now "
                            "'Comment=gpupool: started on n1,n2'",
                            "scontrol release 21"));
  }
}

// Decisions made elsewhere (another policy, a host scorer) may still put two replicas of a job
// on one node: Slurm runs one task group per node, so the adapter leaves the job held.
TEST(SlurmCycleTest, TwoReplicasOnOneNodeAreNotApplied) {
  BuiltSnapshot built;
  built.jobs["21"] = JobFacts{};
  built.jobs["21"].node_count = 2;
  Decisions decisions;
  decisions.starts.push_back({.job = "21",
                              .placements = {{"main", 0, "n1", {0, 1, 2, 3}, 1000},
                                             {"main", 1, "n1", {4, 5, 6, 7}, 1000}}});
  FakeRunner runner;
  const ApplyReport report = ApplyDecisions(decisions, built, runner, /*dry_run=*/false);
  EXPECT_THAT(report.not_applied,
              ElementsAre("Start of job 21: gpupool placed its 2 replicas on 1 node(s) (n1); "
                          "Slurm runs one per node: left held"));
  EXPECT_THAT(runner.Changes(),
              ElementsAre("scontrol update JobId=21 'Comment=gpupool: gpupool placed its 2 "
                          "replicas on 1 node(s) (n1); Slurm runs one per node: left held'"));
}

// A start that needs the GPUs a Migrate (or a Resize) frees is left held: Slurm can neither move
// nor shrink a running job, so the GPUs stay taken (an outside test saw job 75 released onto a
// node job 73 still held). Nothing is evicted for a start left held; other starts go ahead.
TEST(SlurmCycleTest, AStartNeedingAMoveSlurmCannotMakeIsLeftHeld) {
  BuiltSnapshot built;
  for (const char* id : {"73", "75", "77", "80"}) built.jobs[id] = JobFacts{};
  built.jobs["73"].running = built.jobs["80"].running = true;
  Decisions decisions;
  decisions.starts.push_back(
      {.job = "75", .placements = {{"main", 0, "n1", {0, 1, 2, 3, 4, 5, 6, 7}, 1000}}});
  decisions.starts.push_back({.job = "77", .placements = {{"main", 0, "n3", {0}, 1000}}});
  decisions.migrations.push_back({.job = "73",
                                  .from = {{"main", 0, "n1", {0, 1, 2, 3}, 1000}},
                                  .to = {{"main", 0, "n2", {4, 5, 6, 7}, 1000}},
                                  .for_job = "75"});
  decisions.preemptions.push_back({.job = "80", .for_job = "75", .reason = "r"});
  FakeRunner runner;
  const ApplyReport report = ApplyDecisions(decisions, built, runner, /*dry_run=*/false);
  EXPECT_THAT(report.not_applied,
              ElementsAre("Preempt of job 80: for job 75, whose start Slurm cannot carry out "
                          "(not applied: it keeps running)",
                          "Start of job 75: it needs GPUs that job 73 would free by moving, and "
                          "Slurm cannot move a running job: left held",
                          "Migrate of job 73: Slurm cannot move a running job (not applied)"));
  EXPECT_THAT(runner.Changes(),
              ElementsAre("scontrol update JobId=75 'Comment=gpupool: it needs GPUs that job 73 "
                          "would free by moving, and Slurm cannot move a running job: left held'",
                          "scontrol update JobId=77 NodeList=n3 StartTime=now "
                          "'Comment=gpupool: started on n3'",
                          "scontrol release 77"));
}

TEST(SlurmStateTest, BadOutputsNameTheCommandAndField) {
  EXPECT_THAT(ParseSqueueJson("{\"jobs\": [").status().message(),
              HasSubstr("squeue --json: invalid JSON"));
  EXPECT_THAT(ParseSqueueJson("{\"meta\": {}}").status().message(),
              HasSubstr("squeue --json: missing \"jobs\""));
  EXPECT_THAT(ParseSqueueJson("{\"jobs\": {}}").status().message(),
              HasSubstr("squeue --json.jobs: expected an array"));
  EXPECT_EQ(ParseSqueueJson(
                R"js({"jobs": [{"job_id": "7", "partition": "p", "job_state": "RUNNING"}]})js")
                .status()
                .message(),
            "squeue --json: jobs[0].job_id: expected an integer");
  EXPECT_EQ(ParseSqueueJson(R"js({"jobs": [{"job_id": 7, "job_state": "RUNNING"}]})js")
                .status()
                .message(),
            "squeue --json: jobs[0].partition: missing");
  EXPECT_EQ(
      ParseSqueueJson(
          R"js({"jobs": [{"job_id": 7, "partition": "p", "job_state": "RUNNING", "nodes": "n[1-"}]})js")
          .status()
          .message(),
      "squeue --json: jobs[0].nodes: hostlist \"n[1-\": unbalanced '[' in \"n[1-\"");
  EXPECT_EQ(ParseSinfoJson(R"js({"nodes": [{"name": "n1", "state": 3}]})js").status().message(),
            "sinfo --json: nodes[0].state: expected a string");
  EXPECT_EQ(
      ParseSinfoJson(R"js({"nodes": [{"name": "n1", "state": "idle", "state_flags": "DRAIN"}]})js")
          .status()
          .message(),
      "sinfo --json: nodes[0].state_flags: expected an array");
  EXPECT_EQ(ParsePartitions("PartitionName=p PriorityTier=high\n").status().message(),
            "scontrol show partition: line 1: PriorityTier: expected an integer");
  EXPECT_EQ(ParsePartitions("Nodes=n1\n").status().message(),
            "scontrol show partition: line 1: missing PartitionName");
  EXPECT_EQ(ParseTopology("SwitchName=s1 Level=x Nodes=n1\n").status().message(),
            "scontrol show topology: line 1: Level: expected an integer");
}

TEST(SlurmCycleTest, UnknownPartitionAndBadGresAreClearErrors) {
  FakeRunner runner;
  runner.AnswerState("cluster");
  AdapterOptions options;
  options.partitions = {"nosuch"};
  absl::StatusOr<CycleResult> cycle = RunCycle(runner, options, Policy{}, kClusterNow, false);
  EXPECT_EQ(cycle.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(cycle.status().message(), HasSubstr("partition nosuch: not found"));

  FakeRunner bad_gres;
  bad_gres.AnswerState("full");
  bad_gres.Answer("sinfo --json", std::string(R"js({"nodes": [{"name": "n1", "state": "idle",
      "partitions": ["gpupool"], "gres": "gpu:h100:8(IDX:0-"}]})js"));
  cycle = RunCycle(bad_gres, AdapterOptions{}, Policy{}, kFullNow, false);
  EXPECT_EQ(cycle.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(cycle.status().message(), HasSubstr("node n1: GRES \"gpu:h100:8(IDX:0-\""));
}

TEST(SlurmCycleTest, SlurmUnreachableIsTheCommandsError) {
  FakeRunner runner;
  runner.Answer(
      "sinfo --json",
      absl::InternalError("sinfo --json: exit status 1: Unable to contact slurm controller"));
  absl::StatusOr<CycleResult> cycle = RunCycle(runner, AdapterOptions{}, Policy{}, 0, false);
  EXPECT_THAT(cycle.status().message(), HasSubstr("Unable to contact slurm controller"));
}

TEST(SlurmCycleTest, BadPolicyIsRefusedBeforeSlurmIsRead) {
  FakeRunner runner;
  Policy policy;
  policy.budgets.max_candidates = -1;
  absl::StatusOr<CycleResult> cycle = RunCycle(runner, AdapterOptions{}, policy, 0, false);
  EXPECT_EQ(cycle.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(cycle.status().message(), HasSubstr("policy: "));
  EXPECT_TRUE(runner.ran().empty());
}

TEST(SubprocessRunnerTest, RunsCapturesAndReportsFailures) {
  SubprocessRunner runner;
  EXPECT_EQ(*runner.Run({"printf", "%s", "a b"}), "a b");
  absl::StatusOr<std::string> failed = runner.Run({"sh", "-c", "echo oops >&2; exit 3"});
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(failed.status().message(), HasSubstr("exit status 3: oops"));
  absl::StatusOr<std::string> missing = runner.Run({"gpupool-no-such-program"});
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(missing.status().message(), HasSubstr("cannot run gpupool-no-such-program"));
  EXPECT_EQ(CommandLine({"scontrol", "update", "Comment=a b", "it's"}),
            "scontrol update 'Comment=a b' 'it'\\''s'");
}

}  // namespace
}  // namespace gpupool::slurm
