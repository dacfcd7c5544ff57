// Helpers shared by the tests of ValidateSnapshot (validate_test.cc, validate_bad_input_test.cc):
// the two status codes it answers with, a rich valid snapshot that uses every part of the model,
// and accessors by id into it.
#ifndef GPUPOOL_TESTS_CORE_VALIDATE_HELPERS_H_
#define GPUPOOL_TESTS_CORE_VALIDATE_HELPERS_H_

#include <string>

#include "absl/status/status.h"
#include "gpupool/snapshot.h"
#include "gtest/gtest.h"
#include "testing/builders.h"

namespace gpupool::validate_testing {

using ::gpupool::testing::GpuRequest;
using ::gpupool::testing::MakeCpuNode;
using ::gpupool::testing::MakeGroup;
using ::gpupool::testing::MakeLimit;
using ::gpupool::testing::MakeModel;
using ::gpupool::testing::MakeNode;
using ::gpupool::testing::MakePendingJob;
using ::gpupool::testing::MakeQueue;
using ::gpupool::testing::MakeRunningJob;
using ::gpupool::testing::Placement;
using ::gpupool::testing::SnapshotBuilder;

inline constexpr absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;
inline constexpr absl::StatusCode kInconsistent = absl::StatusCode::kFailedPrecondition;

// A valid snapshot that uses every part of the model:
//   levels block > rack; models A100, H100 (with a speed), L4;
//   n1: 8 x A100 in islands {4,4}, block b1 / rack r1; n2: 8 x H100, block b1 / rack r2;
//   n3: CPU only; n4: 2 x L4 in islands {1,1}, cordoned, GPU 1 unhealthy, reserved to "org".
//   queues org > {team-a, team-b}; org has a "*" limit and an A100 guarantee and limit;
//   team-b is exclusive-gpu with a budget.
//   j1 pending (2 x 1000, prefers A100 then B200, a model the pool lacks);
//   j2 running on n1 (2 replicas x 2 GPUs: GPUs 0,1 and 2,3);
//   j3 running: elastic "worker" 1 of [1,2] replicas of 500 on n2 GPU 0, "ps" CPU-only on n3;
//   j4 pending with a preferred rack gang and island scope; j5 pending with a "node" gang.
inline Snapshot RichSnapshot() {
  Node n1 = MakeNode("n1", "A100", 8, {4, 4});
  n1.path = {{"block", "b1"}, {"rack", "r1"}};
  n1.labels = {{"kind", "dgx"}};
  Node n2 = MakeNode("n2", "H100", 8);
  n2.path = {{"block", "b1"}, {"rack", "r2"}};
  Node n3 = MakeCpuNode("n3");
  Node n4 = MakeNode("n4", "L4", 2, {1, 1});
  n4.state = NodeState::kCordoned;
  n4.gpus[1].healthy = false;
  n4.owner_queues = {"org"};

  GpuModel h100 = MakeModel("H100");
  h100.speeds = {{"train", 2000}, {"infer", 1500}};

  Queue org = MakeQueue("org");
  org.quotas = {MakeLimit("*", 32000), MakeLimit("A100", 16000)};
  org.quotas[1].guaranteed_milli = 8000;
  org.quotas[1].over_quota_weight = 2;
  Queue team_b = MakeQueue("team-b", "org");
  team_b.isolation = Isolation::kExclusiveGpu;
  team_b.budget_milli_gpu_seconds = 1000000;
  team_b.decayed_usage_milli_gpu_seconds = 5000;
  team_b.labels = {{"cost_center", "ads"}, {"tier", "gold"}};

  Job j1 = MakePendingJob("j1", "team-a", GpuRequest(1000, 2000, 4096), 2);
  j1.groups[0].gpu_models = {"A100", "B200"};
  j1.submit_time = 10;
  j1.checkpointing = {
      .interval_s = 600, .last_checkpoint_time = 5, .checkpoint_cost_s = 30, .restore_time_s = 60};
  j1.runtime_estimate_s = 3600;

  Job j2 = MakeRunningJob("j2", "team-a", GpuRequest(2000, 8000, 16384),
                          {Placement("n1", {0, 1}, 0), Placement("n1", {3, 2}, 1, "main", 1000)},
                          /*start_time=*/100);
  j2.groups[0].gpu_models = {"A100"};

  Job j3;
  j3.id = "j3";
  j3.queue = "team-b";
  j3.groups = {MakeGroup("worker", GpuRequest(500, 1000, 2048, 20000), 2),
               MakeGroup("ps", GpuRequest(0, 4000, 8192), 1)};
  j3.groups[0].min_replicas = 1;
  j3.state = JobState::kRunning;
  j3.start_time = 200;
  j3.placements = {Placement("n2", {0}, 0, "worker", 500), Placement("n3", {}, 0, "ps")};
  j3.attained_service_s = 800;

  Job j4 = MakePendingJob("j4", "team-a", GpuRequest(8000), 2);
  j4.groups[0].gpu_models = {"H100"};
  j4.groups[0].topology = {.replica_scope = ReplicaScope::kIsland,
                           .replica_strictness = Strictness::kRequired,
                           .gang_level = "rack",
                           .gang_strictness = Strictness::kPreferred};
  Job j5 = MakePendingJob("j5", "org", GpuRequest(250), 3);
  j5.groups[0].topology.gang_level = "node";
  j5.min_runtime_s = 120;

  return SnapshotBuilder()
      .Now(1000)
      .Levels({"block", "rack"})
      .Model("A100")
      .Model(h100)
      .Model("L4", 24576)
      .Node(n1)
      .Node(n2)
      .Node(n3)
      .Node(n4)
      .Queue(org)
      .Queue("team-a", "org")
      .Queue(team_b)
      .Job(j1)
      .Job(j2)
      .Job(j3)
      .Job(j4)
      .Job(j5)
      .Build();
}

// Accessors by id, so that cases read as "the thing they break".
inline Node& NodeById(Snapshot& s, const std::string& id) {
  for (Node& n : s.nodes) {
    if (n.id == id) return n;
  }
  ADD_FAILURE() << "no node " << id;
  return s.nodes.front();
}
inline Queue& QueueById(Snapshot& s, const std::string& id) {
  for (Queue& q : s.queues) {
    if (q.id == id) return q;
  }
  ADD_FAILURE() << "no queue " << id;
  return s.queues.front();
}
inline Job& JobById(Snapshot& s, const std::string& id) {
  for (Job& j : s.jobs) {
    if (j.id == id) return j;
  }
  ADD_FAILURE() << "no job " << id;
  return s.jobs.front();
}
inline GpuModel& ModelByName(Snapshot& s, const std::string& name) {
  for (GpuModel& m : s.gpu_models) {
    if (m.name == name) return m;
  }
  ADD_FAILURE() << "no model " << name;
  return s.gpu_models.front();
}

}  // namespace gpupool::validate_testing

#endif  // GPUPOOL_TESTS_CORE_VALIDATE_HELPERS_H_
