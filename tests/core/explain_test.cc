// ExplainJob() (src/engine/explain.cc): the words `gpupool explain` prints, exactly, on the
// worked examples of docs/engine.md (examples/scenarios): a backfilled start, a reservation, an
// overrun backfilled job evicted for it, a consolidation move, a victim started again elsewhere,
// a job a rule stops that stays pending, and a running job the cycle leaves alone.
#include "gpupool/explain.h"

#include <string>
#include <string_view>

#include "gpupool/io/json.h"
#include "gpupool/schedule.h"
#include "gtest/gtest.h"

namespace gpupool {
namespace {

// Schedules examples/scenarios/NAME.{snapshot,policy}.json and explains `job`.
std::string Explain(const std::string& name, const std::string& job) {
  const std::string base = std::string(GPUPOOL_SOURCE_DIR) + "/examples/scenarios/" + name;
  absl::StatusOr<Snapshot> snapshot = io::ReadSnapshotFile(base + ".snapshot.json");
  EXPECT_TRUE(snapshot.ok()) << snapshot.status();
  absl::StatusOr<Policy> policy = io::ReadPolicyFile(base + ".policy.json");
  EXPECT_TRUE(policy.ok()) << policy.status();
  if (!snapshot.ok() || !policy.ok()) return "";
  absl::StatusOr<Decisions> decisions = Schedule(*snapshot, *policy);
  EXPECT_TRUE(decisions.ok()) << decisions.status();
  if (!decisions.ok()) return "";
  absl::StatusOr<std::string> text = ExplainJob(*snapshot, *decisions, job);
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? *text : "";
}

TEST(ExplainTest, ABackfilledStartSaysSo) {
  EXPECT_EQ(Explain("backfill", "short"),
            "job short (queue lab, priority 0, submitted at 130)\n"
            "starts now (1 replica), backfilled into capacity held for a reservation:\n"
            "  main[0] on node n1, GPUs 2,3\n");
  EXPECT_EQ(Explain("backfill", "long"),
            "job long (queue lab, priority 0, submitted at 140)\n"
            "starts now (1 replica):\n"
            "  main[0] on node n2, GPU 3\n");
}

// A job a rule stops is pending again within the cycle: after its Preempt, its pending reason
// (the headroom rule also keeps it from the GPUs it gave back; found by an outside test, which saw
// only "preempted now").
TEST(ExplainTest, AJobStoppedByARuleIsPendingAgain) {
  EXPECT_EQ(Explain("headroom_restore", "train-b"),
            "job train-b (queue research, priority 0, submitted at 7900)\n"
            "running since 8000:\n"
            "  main[0] on node n2, GPUs 0,1\n"
            "preempted now: headroom: urgent work left 0 free of the 2 H100-80GB GPUs kept free "
            "for priority >= 100; evicting jobs below priority 100 restores them\n"
            "  loses 440000 milli-GPU-seconds (work since its last checkpoint, and its restore)\n"
            "then pending: headroom\n"
            "  2 H100-80GB GPUs are kept free for priority >= 100; 2 free now, and starting this "
            "job (priority 0) would leave 0\n");
}

// A running placement that leaves gpu_milli at 0 (the group's share) shows the share, as a
// Migrate's `from` does (an outside test of the docs saw "GPU 0" on the running line and "GPU 0
// (500 milli-GPUs)" on the move's).
TEST(ExplainTest, ARunningShareOfAGpuShowsItsShare) {
  absl::StatusOr<Snapshot> snapshot = io::ParseSnapshot(R"({
    "now": 100, "gpu_models": [{"name": "A100", "memory_mib": 81920}],
    "nodes": [{"id": "n1", "gpu_model": "A100", "gpus": [{"index": 0}], "cpu_milli": 8000,
               "memory_mib": 65536}],
    "queues": [{"id": "q"}],
    "jobs": [{"id": "half", "queue": "q", "groups": [{"request": {"gpu_milli": 500}}],
              "state": "running", "start_time": 50,
              "placements": [{"group": "main", "replica": 0, "node": "n1", "gpus": [0]}]}]})");
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  absl::StatusOr<Decisions> decisions = Schedule(*snapshot, Policy{});
  ASSERT_TRUE(decisions.ok()) << decisions.status();
  absl::StatusOr<std::string> text = ExplainJob(*snapshot, *decisions, "half");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(text->substr(0, text->find("\n", text->find("running since")) + 1),
            "job half (queue q, priority 0, submitted at 0)\n"
            "running since 50:\n");
  EXPECT_NE(text->find("  main[0] on node n1, GPU 0 (500 milli-GPUs)\n"), std::string::npos)
      << *text;
}

// An unknown id comes back in the message as text: bytes that are not UTF-8, and control
// characters (a NUL among them), as \xNN (found by an outside test of the C API, whose messages
// promise valid UTF-8 without NUL bytes).
TEST(ExplainTest, AnUnknownIdIsQuotedAsText) {
  const Snapshot snapshot;
  const Decisions decisions;
  const absl::StatusOr<std::string> text =
      ExplainJob(snapshot, decisions, std::string_view("a\0b\xff\xfe\xc3\xa9\n", 8));
  EXPECT_EQ(text.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(text.status().message(), "no job \"a\\x00b\\xff\\xfe\xc3\xa9\\x0a\" in the snapshot");
}

TEST(ExplainTest, APendingJobNamesItsReservation) {
  EXPECT_EQ(Explain("backfill", "big"),
            "job big (queue lab, priority 0, submitted at 100)\n"
            "pending: insufficient-capacity\n"
            "  the gang needs 4000 milli-GPUs but only 0 are free on eligible nodes of any model\n"
            "  missing: 4000 milli-GPUs\n"
            "  would start now if long, r1, short were preempted (losing 2000000 "
            "milli-GPU-seconds of work), but preemption is off in this policy\n"
            "  reserved: node n1, expected to start at 11000\n");
}

TEST(ExplainTest, AnOverrunBackfilledJobEvictedForTheReservation) {
  EXPECT_EQ(Explain("backfill_overrun_preempt", "bf"),
            "job bf (queue lab, priority 0, submitted at 300)\n"
            "running since 20000 (backfilled, runtime estimate 800 s):\n"
            "  main[0] on node n1, GPU 3\n"
            "preempted now for job g4: backfilled at 20000 with runtime_estimate_s 800, it ran "
            "past its estimate plus margin_s 200 (backfill.overrun: preempt); job g4's "
            "reservation needs its node\n"
            "  loses 340000 milli-GPU-seconds (work since its last checkpoint, and its restore)\n");
}

TEST(ExplainTest, AMoveForAGang) {
  EXPECT_EQ(Explain("consolidation", "a"),
            "job a (queue lab, priority 0, submitted at 0)\n"
            "running since 0:\n"
            "  main[0] on node n1, GPUs 0,1\n"
            "moves now for job big (consolidation; loses 320000 milli-GPU-seconds), to:\n"
            "  main[0] on node n2, GPUs 2,3\n");
}

TEST(ExplainTest, AGangStartedByAMoveNamesIt) {
  EXPECT_EQ(Explain("consolidation", "big"),
            "job big (queue lab, priority 0, submitted at 500)\n"
            "starts now (1 replica):\n"
            "  main[0] on node n1, GPUs 0,1,2,3,4,5,6,7\n"
            "  in room made by moving a (consolidation; losing 320000 milli-GPU-seconds)\n");
}

TEST(ExplainTest, AStartNamesTheJobsPreemptedForIt) {
  const std::string text = Explain("settle_requeue", "hi");
  EXPECT_NE(text.find("  in room made by preempting mid (losing "), std::string::npos) << text;
}

TEST(ExplainTest, AReservationNamesTheJobsEvictedForIt) {
  EXPECT_EQ(Explain("backfill_overrun_preempt", "g4"),
            "job g4 (queue lab, priority 0, submitted at 100)\n"
            "pending: insufficient-capacity\n"
            "  the gang needs 4000 milli-GPUs but only 1000 are free on eligible nodes of any "
            "model\n"
            "  missing: 3000 milli-GPUs\n"
            "  would start now if r2 were preempted (losing 4000000 milli-GPU-seconds of work), "
            "but preemption is off in this policy\n"
            "  reserved: node n1, expected to start at 21500\n"
            "  for it, preempting bf (losing 340000 milli-GPU-seconds)\n");
}

TEST(ExplainTest, AVictimStartedAgainElsewhere) {
  EXPECT_EQ(Explain("settle_requeue", "mid"),
            "job mid (queue lab, priority 5, submitted at 10)\n"
            "running since 100:\n"
            "  main[0] on node n1, GPUs 0,1,2,3\n"
            "preempted now for job hi: job hi (priority 9) of the same queue lab outranks it "
            "(priority 5)\n"
            "  loses 7600000 milli-GPU-seconds (work since its last checkpoint, and its restore)\n"
            "starts again now:\n"
            "  main[0] on node n2, GPUs 0,1,2,3\n");
}

TEST(ExplainTest, ARunningJobLeftAlone) {
  EXPECT_EQ(Explain("consolidation", "b"),
            "job b (queue lab, priority 0, submitted at 0)\n"
            "running since 0:\n"
            "  main[0] on node n2, GPUs 0,1\n");
}

}  // namespace
}  // namespace gpupool
