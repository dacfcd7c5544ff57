// The snapshot format: round trips, defaults, canonical bytes and every error message.
#include <limits>
#include <string>
#include <string_view>

#include "gmock/gmock.h"
#include "gpupool/io/json.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/generator.h"

namespace gpupool::io {
namespace {

using ::testing::HasSubstr;

// A snapshot in which every field has a value other than its default, so that a field the
// writer or the reader forgets shows up as a difference.
Snapshot EveryFieldSnapshot() {
  Snapshot s;
  s.now = 1700000000;
  s.topology.levels = {"block", "rack"};
  s.gpu_models.push_back(GpuModel{"H100-80GB", 81920, {{"llm", 1800}, {"cnn", 1500}}});
  Node n;
  n.id = "n1";
  n.gpu_model = "H100-80GB";
  n.gpus = {{0, 0, true}, {1, 0, false}, {2, 1, true}};
  n.cpu_milli = 96000;
  n.memory_mib = 1048576;
  n.path = {{"block", "b1"}, {"rack", "r7"}};
  n.labels = {{"zone", "eu \"west\"\n"}, {"kind", "dgx"}};
  n.state = NodeState::kDraining;
  n.owner_queues = {"research", "prod"};
  n.gpus[2].xid_errors = 3;
  n.gpus[2].ecc_errors = 1;
  n.gpus[2].errors_since = 1699990000;
  n.maintenance = {{1700003600, 1700007200}, {1700100000, 1700200000}};
  n.last_diagnostic = DiagnosticRun{1699900000, false};
  n.state_cause = NodeStateCause::kMaintenance;
  s.nodes.push_back(n);
  Queue q;
  q.id = "team";
  q.parent = "org";
  q.priority = -3;
  q.quotas = {Quota{"*", 4000, 8000, 2}, Quota{"H100-80GB", 1000, std::nullopt, 0}};
  q.can_borrow = false;
  q.can_lend = false;
  q.isolation = Isolation::kExclusiveNode;
  q.labels = {{"cost_center", "research \"ml\""}, {"tier", "gold"}};
  q.budget_milli_gpu_seconds = 3600000;
  q.budget_used_milli_gpu_seconds = 1800000;
  q.decayed_usage_milli_gpu_seconds = 12345;
  s.queues.push_back(q);
  Job j;
  j.id = "j1";
  j.queue = "team";
  j.priority = 7;
  j.submit_time = 1699999000;
  TaskGroup g;
  g.name = "workers";
  g.replicas = 4;
  g.min_replicas = 2;
  g.request = {2000, 40000, 8000, 65536};
  g.gpu_models = {"H100-80GB", "A100-80GB"};
  g.topology = {ReplicaScope::kIsland, Strictness::kPreferred, "rack", Strictness::kPreferred, 2};
  j.groups = {g};
  j.preemptible = false;
  j.checkpointing = {1800, 1699999500, 30, 60};
  j.min_runtime_s = 600;
  j.runtime_estimate_s = 7200;
  j.state = JobState::kRunning;
  j.start_time = 1699999100;
  j.placements = {ReplicaPlacement{"workers", 1, "n1", {0, 2}, 1000}};
  j.attained_service_s = 900;
  s.jobs.push_back(j);
  return s;
}

TEST(SnapshotJsonTest, EveryFieldSurvivesARoundTrip) {
  const Snapshot original = EveryFieldSnapshot();
  absl::StatusOr<Snapshot> parsed = ParseSnapshot(SnapshotToJson(original));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const Snapshot& s = *parsed;
  EXPECT_EQ(s.now, 1700000000);
  EXPECT_EQ(s.topology.levels, original.topology.levels);
  ASSERT_EQ(s.gpu_models.size(), 1u);
  EXPECT_EQ(s.gpu_models[0].name, "H100-80GB");
  EXPECT_EQ(s.gpu_models[0].memory_mib, 81920);
  ASSERT_EQ(s.gpu_models[0].speeds.size(), 2u);
  EXPECT_EQ(s.gpu_models[0].speeds[1].workload_class, "cnn");
  EXPECT_EQ(s.gpu_models[0].speeds[1].speed_milli, 1500);

  ASSERT_EQ(s.nodes.size(), 1u);
  const Node& n = s.nodes[0];
  EXPECT_EQ(n.id, "n1");
  EXPECT_EQ(n.gpu_model, "H100-80GB");
  ASSERT_EQ(n.gpus.size(), 3u);
  EXPECT_EQ(n.gpus[1].index, 1);
  EXPECT_FALSE(n.gpus[1].healthy);
  EXPECT_EQ(n.gpus[2].island, 1);
  EXPECT_EQ(n.cpu_milli, 96000);
  EXPECT_EQ(n.memory_mib, 1048576);
  EXPECT_EQ(n.path, original.nodes[0].path);
  EXPECT_EQ(n.labels, original.nodes[0].labels);
  EXPECT_EQ(n.state, NodeState::kDraining);
  EXPECT_EQ(n.owner_queues, original.nodes[0].owner_queues);
  EXPECT_EQ(n.gpus[2].xid_errors, 3);
  EXPECT_EQ(n.gpus[2].ecc_errors, 1);
  EXPECT_EQ(n.gpus[2].errors_since, 1699990000);
  EXPECT_EQ(n.gpus[0].errors_since, std::nullopt);
  EXPECT_EQ(n.maintenance, original.nodes[0].maintenance);
  EXPECT_EQ(n.last_diagnostic, (DiagnosticRun{1699900000, false}));
  EXPECT_EQ(n.state_cause, NodeStateCause::kMaintenance);

  ASSERT_EQ(s.queues.size(), 1u);
  const Queue& q = s.queues[0];
  EXPECT_EQ(q.id, "team");
  EXPECT_EQ(q.parent, "org");
  EXPECT_EQ(q.priority, -3);
  ASSERT_EQ(q.quotas.size(), 2u);
  EXPECT_EQ(q.quotas[0].gpu_model, "*");
  EXPECT_EQ(q.quotas[0].guaranteed_milli, 4000);
  EXPECT_EQ(q.quotas[0].limit_milli, 8000);
  EXPECT_EQ(q.quotas[0].over_quota_weight, 2);
  EXPECT_EQ(q.quotas[1].limit_milli, std::nullopt);
  EXPECT_EQ(q.quotas[1].over_quota_weight, 0);
  EXPECT_FALSE(q.can_borrow);
  EXPECT_FALSE(q.can_lend);
  EXPECT_EQ(q.isolation, Isolation::kExclusiveNode);
  EXPECT_EQ(q.labels, original.queues[0].labels);
  EXPECT_EQ(q.budget_milli_gpu_seconds, 3600000);
  EXPECT_EQ(q.budget_used_milli_gpu_seconds, 1800000);
  EXPECT_EQ(q.decayed_usage_milli_gpu_seconds, 12345);

  ASSERT_EQ(s.jobs.size(), 1u);
  const Job& j = s.jobs[0];
  EXPECT_EQ(j.id, "j1");
  EXPECT_EQ(j.queue, "team");
  EXPECT_EQ(j.priority, 7);
  EXPECT_EQ(j.submit_time, 1699999000);
  ASSERT_EQ(j.groups.size(), 1u);
  const TaskGroup& g = j.groups[0];
  EXPECT_EQ(g.name, "workers");
  EXPECT_EQ(g.replicas, 4);
  EXPECT_EQ(g.min_replicas, 2);
  EXPECT_EQ(g.request, (ResourceRequest{2000, 40000, 8000, 65536}));
  EXPECT_EQ(g.gpu_models, original.jobs[0].groups[0].gpu_models);
  EXPECT_EQ(g.topology.replica_scope, ReplicaScope::kIsland);
  EXPECT_EQ(g.topology.replica_strictness, Strictness::kPreferred);
  EXPECT_EQ(g.topology.gang_level, "rack");
  EXPECT_EQ(g.topology.gang_strictness, Strictness::kPreferred);
  EXPECT_EQ(g.topology.max_replicas_per_node, 2);
  EXPECT_FALSE(j.preemptible);
  EXPECT_EQ(j.checkpointing.interval_s, 1800);
  EXPECT_EQ(j.checkpointing.last_checkpoint_time, 1699999500);
  EXPECT_EQ(j.checkpointing.checkpoint_cost_s, 30);
  EXPECT_EQ(j.checkpointing.restore_time_s, 60);
  EXPECT_EQ(j.min_runtime_s, 600);
  EXPECT_EQ(j.runtime_estimate_s, 7200);
  EXPECT_EQ(j.state, JobState::kRunning);
  EXPECT_EQ(j.start_time, 1699999100);
  EXPECT_EQ(j.placements, original.jobs[0].placements);
  EXPECT_EQ(j.attained_service_s, 900);

  // And the text is a fixed point.
  EXPECT_EQ(SnapshotToJson(s), SnapshotToJson(original));
}

// The writer writes every field, so equal text means equal snapshots: write, read, write again
// must give the same bytes for any snapshot the generator makes.
// Spot facts of nodes and jobs: written only when set, read back.
TEST(SnapshotJsonTest, SpotFieldsRoundTrip) {
  Snapshot original = EveryFieldSnapshot();
  EXPECT_EQ(SnapshotToJson(original).find("spot"), std::string::npos);
  original.nodes[0].spot = true;
  original.nodes[0].reclaiming = true;
  original.nodes[0].reclaim_deadline = 1700000120;
  original.jobs[0].spot_tolerant = true;
  const std::string json = SnapshotToJson(original);
  absl::StatusOr<Snapshot> parsed = ParseSnapshot(json);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->nodes[0].spot);
  EXPECT_TRUE(parsed->nodes[0].reclaiming);
  EXPECT_EQ(parsed->nodes[0].reclaim_deadline, 1700000120);
  EXPECT_TRUE(parsed->jobs[0].spot_tolerant);
  EXPECT_EQ(SnapshotToJson(*parsed), json);
  EXPECT_EQ(ParseSnapshot(R"({"nodes": [{"id": "n", "spot": "yes"}]})").status().message(),
            "nodes[0].spot: expected true or false");
}

TEST(SnapshotJsonTest, GeneratedSnapshotsRoundTrip) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    const std::string text = SnapshotToJson(testing::GenerateRandomSnapshot(seed));
    absl::StatusOr<Snapshot> parsed = ParseSnapshot(text);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(SnapshotToJson(*parsed), text);
  }
}

TEST(SnapshotJsonTest, OmittedFieldsTakeTheStructDefaults) {
  absl::StatusOr<Snapshot> parsed = ParseSnapshot(R"({
    "nodes": [{"id": "n1", "gpus": [{"index": 0}]}],
    "queues": [{"id": "q"}],
    "jobs": [{"id": "j1", "queue": "q", "groups": [{}]}]
  })");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const Snapshot& s = *parsed;
  EXPECT_EQ(s.now, 0);
  EXPECT_TRUE(s.topology.levels.empty());
  EXPECT_TRUE(s.gpu_models.empty());
  EXPECT_TRUE(s.nodes[0].gpus[0].healthy);
  EXPECT_EQ(s.nodes[0].gpus[0].island, 0);
  EXPECT_EQ(s.nodes[0].state, NodeState::kReady);
  EXPECT_TRUE(s.queues[0].can_borrow);
  EXPECT_EQ(s.queues[0].isolation, Isolation::kNone);
  EXPECT_TRUE(s.queues[0].labels.empty());
  EXPECT_EQ(s.queues[0].budget_milli_gpu_seconds, std::nullopt);
  const Job& j = s.jobs[0];
  EXPECT_EQ(j.state, JobState::kPending);
  EXPECT_TRUE(j.preemptible);
  EXPECT_EQ(j.runtime_estimate_s, std::nullopt);
  EXPECT_EQ(j.start_time, std::nullopt);
  EXPECT_EQ(j.groups[0].name, "main");
  EXPECT_EQ(j.groups[0].replicas, 1);
  EXPECT_EQ(j.groups[0].min_replicas, std::nullopt);
  EXPECT_EQ(j.groups[0].request, ResourceRequest{});
  EXPECT_EQ(j.groups[0].topology.gang_level, std::nullopt);
  EXPECT_EQ(j.groups[0].topology.max_replicas_per_node, std::nullopt);
}

TEST(SnapshotJsonTest, NullLeavesOptionalFieldsUnset) {
  absl::StatusOr<Snapshot> parsed = ParseSnapshot(R"({
    "queues": [{"id": "q", "budget_milli_gpu_seconds": null,
                "quotas": [{"limit_milli": null}]}],
    "jobs": [{"id": "j1", "queue": "q", "runtime_estimate_s": null, "start_time": null,
              "checkpointing": {"last_checkpoint_time": null},
              "groups": [{"min_replicas": null,
                          "topology": {"gang_level": null, "max_replicas_per_node": null}}]}]
  })");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->queues[0].budget_milli_gpu_seconds, std::nullopt);
  EXPECT_EQ(parsed->queues[0].quotas[0].limit_milli, std::nullopt);
  EXPECT_EQ(parsed->jobs[0].runtime_estimate_s, std::nullopt);
  EXPECT_EQ(parsed->jobs[0].checkpointing.last_checkpoint_time, std::nullopt);
  EXPECT_EQ(parsed->jobs[0].groups[0].min_replicas, std::nullopt);
  EXPECT_EQ(parsed->jobs[0].groups[0].topology.gang_level, std::nullopt);
  EXPECT_EQ(parsed->jobs[0].groups[0].topology.max_replicas_per_node, std::nullopt);
}

TEST(SnapshotJsonTest, KeysMayComeInAnyOrder) {
  absl::StatusOr<Snapshot> parsed =
      ParseSnapshot(R"({"jobs": [], "now": 5, "nodes": [{"state": "down", "id": "n"}]})");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->now, 5);
  EXPECT_EQ(parsed->nodes[0].state, NodeState::kDown);
}

TEST(SnapshotJsonTest, CanonicalBytesOfASmallSnapshot) {
  Snapshot s = testing::SnapshotBuilder()
                   .Now(100)
                   .Levels({"rack"})
                   .Model("A100", 40960)
                   .Queue("q")
                   .Job(testing::MakePendingJob("j1", "q", testing::GpuRequest(1000)))
                   .Build();
  Node n = testing::MakeNode("n1", "A100", 2, {}, 8000, 65536);
  n.path = {{"rack", "r1"}};
  s.nodes.push_back(n);
  EXPECT_EQ(SnapshotToJson(s), R"({
  "now": 100,
  "topology": {"levels": ["rack"]},
  "gpu_models": [
    {
      "name": "A100",
      "memory_mib": 40960,
      "speeds": []
    }
  ],
  "nodes": [
    {
      "id": "n1",
      "gpu_model": "A100",
      "gpus": [
        {"index": 0, "island": 0, "healthy": true},
        {"index": 1, "island": 0, "healthy": true}
      ],
      "cpu_milli": 8000,
      "memory_mib": 65536,
      "path": {"rack": "r1"},
      "labels": {},
      "state": "ready",
      "owner_queues": []
    }
  ],
  "queues": [
    {
      "id": "q",
      "parent": "",
      "priority": 0,
      "quotas": [],
      "can_borrow": true,
      "can_lend": true,
      "isolation": "none",
      "decayed_usage_milli_gpu_seconds": 0
    }
  ],
  "jobs": [
    {
      "id": "j1",
      "queue": "q",
      "priority": 0,
      "submit_time": 0,
      "groups": [
        {
          "name": "main",
          "replicas": 1,
          "request": {"gpu_milli": 1000, "gpu_memory_mib": 0, "cpu_milli": 0, "memory_mib": 0},
          "gpu_models": [],
          "topology": {"replica_scope": "node", "replica_strictness": "required", "gang_strictness": "required"}
        }
      ],
      "preemptible": true,
      "checkpointing": {"interval_s": 0, "checkpoint_cost_s": 0, "restore_time_s": 0},
      "min_runtime_s": 0,
      "state": "pending",
      "placements": [],
      "attained_service_s": 0
    }
  ]
}
)");
}

TEST(SnapshotJsonTest, StringsAreEscapedAndInvalidUtf8IsReplaced) {
  Snapshot s;
  Node n;
  n.id = std::string("a\"b\\c\n\x01 \xC3\xA9 \xFF", 12);
  s.nodes.push_back(n);
  const std::string text = SnapshotToJson(s);
  EXPECT_THAT(text, HasSubstr(R"("id": "a\"b\\c\n\u0001 é \ufffd")"));
  absl::StatusOr<Snapshot> parsed = ParseSnapshot(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->nodes[0].id, "a\"b\\c\n\x01 \xC3\xA9 \xEF\xBF\xBD");
}

struct ErrorCase {
  const char* json;
  const char* message;
};

// Every way the reader refuses a document, with its exact message.
TEST(SnapshotJsonTest, ErrorsNameThePathAndTheProblem) {
  const ErrorCase kCases[] = {
      {R"([])", "(root): expected an object"},
      {R"({"now": "5"})", "now: expected an integer"},
      {R"({"now": 1.5})", "now: expected an integer"},
      {R"({"now": 1e3})", "now: expected an integer"},
      {R"({"now": 9223372036854775808})", "now: integer out of range (must fit in 64 bits)"},
      {R"({"now": true})", "now: expected an integer"},
      {R"({"now": null})", "now: expected an integer"},
      {R"({"nodes": {}})", "nodes: expected an array"},
      {R"({"nodes": [1]})", "nodes[0]: expected an object"},
      {R"({"nodes": [{}]})", "nodes[0]: missing required field \"id\""},
      {R"({"nodes": [{"id": 3}]})", "nodes[0].id: expected a string"},
      {R"({"nodes": [{"id": "a"}, {"id": "b", "state": "readyy"}]})",
       "nodes[1].state: unknown value \"readyy\" (expected ready, cordoned, draining, down)"},
      {R"({"nodes": [{"id": "a", "gpus": [{"index": 0, "healthy": 1}]}]})",
       "nodes[0].gpus[0].healthy: expected true or false"},
      {R"({"nodes": [{"id": "a", "gpus": [{"index": 2147483648}]}]})",
       "nodes[0].gpus[0].index: integer out of range (must fit in 32 bits)"},
      {R"({"nodes": [{"id": "a", "gpus": [{"island": 0}]}]})",
       "nodes[0].gpus[0]: missing required field \"index\""},
      {R"({"nodes": [{"id": "a", "path": {"rack": 1}}]})", "nodes[0].path.rack: expected a string"},
      {R"({"nodes": [{"id": "a", "path": ["rack"]}]})", "nodes[0].path: expected an object"},
      {R"({"nodes": [{"id": "a", "labels": {"k": "1", "k": "2"}}]})",
       "nodes[0].labels.k: duplicate key"},
      {R"({"nodes": [{"id": "a", "owner_queues": "q"}]})",
       "nodes[0].owner_queues: expected an array"},
      {R"({"nodes": [{"id": "a", "id": "b"}]})", "nodes[0].id: duplicate field"},
      {R"({"gpu_models": [{"name": "A100"}]})",
       "gpu_models[0]: missing required field \"memory_mib\""},
      {R"({"gpu_models": [{"name": "A100", "memory_mib": 1, "speeds": [{"speed_milli": 1}]}]})",
       "gpu_models[0].speeds[0]: missing required field \"workload_class\""},
      {R"({"topology": {"levels": ["rack", 2]}})", "topology.levels[1]: expected a string"},
      {R"({"topology": {"level": ["rack"]}})", "topology.level: unknown field"},
      {R"({"queues": [{"id": "q", "labels": {"cost_center": "a", "cost_center": "b"}}]})",
       "queues[0].labels.cost_center: duplicate key"},
      {R"({"queues": [{"id": "q", "labels": {"cost_center": 7}}]})",
       "queues[0].labels.cost_center: expected a string"},
      {R"({"queues": [{"id": "q", "labels": ["cost_center"]}]})",
       "queues[0].labels: expected an object"},
      {R"({"queues": [{"id": "q", "isolation": "exclusive"}]})",
       "queues[0].isolation: unknown value \"exclusive\" (expected none, exclusive-gpu, "
       "exclusive-node)"},
      {R"({"queues": [{"id": "q", "quotas": [{"limit_milli": "lots"}]}]})",
       "queues[0].quotas[0].limit_milli: expected an integer"},
      {R"({"queues": [{"id": "q", "can_borrow": "yes"}]})",
       "queues[0].can_borrow: expected true or false"},
      {R"({"queues": [{"id": "q", "priority": -2147483649}]})",
       "queues[0].priority: integer out of range (must fit in 32 bits)"},
      {R"({"jobs": [{"id": "j", "queue": "q"}]})", "jobs[0]: missing required field \"groups\""},
      {R"({"jobs": [{"id": "j", "groups": []}]})", "jobs[0]: missing required field \"queue\""},
      {R"({"jobs": [{"id": "a", "queue": "q", "groups": []},
                    {"id": "b", "queue": "q", "groups": []},
                    {"id": "c", "queue": "q", "groups": [], "gpu_mili": 500}]})",
       "jobs[2].gpu_mili: unknown field"},
      {R"({"jobs": [{"id": "j", "queue": "q", "groups": [{}, {"replicas": "2"}]}]})",
       "jobs[0].groups[1].replicas: expected an integer"},
      {R"({"jobs": [{"id": "j", "queue": "q", "groups": [{"request": {"gpu": 1000}}]}]})",
       "jobs[0].groups[0].request.gpu: unknown field"},
      {R"({"jobs": [{"id": "j", "queue": "q", "groups": [{"gpu_models": ["A100", null]}]}]})",
       "jobs[0].groups[0].gpu_models[1]: expected a string"},
      {R"({"jobs": [{"id": "j", "queue": "q",
                     "groups": [{"topology": {"replica_scope": "rack"}}]}]})",
       "jobs[0].groups[0].topology.replica_scope: unknown value \"rack\" (expected node, island)"},
      {R"({"jobs": [{"id": "j", "queue": "q",
                     "groups": [{"topology": {"gang_strictness": "must"}}]}]})",
       "jobs[0].groups[0].topology.gang_strictness: unknown value \"must\" (expected required, "
       "preferred)"},
      {R"({"jobs": [{"id": "j", "queue": "q", "groups": [{"topology": {"gang_level": 1}}]}]})",
       "jobs[0].groups[0].topology.gang_level: expected a string"},
      {R"({"jobs": [{"id": "j", "queue": "q",
                     "groups": [{"topology": {"max_replicas_per_node": "1"}}]}]})",
       "jobs[0].groups[0].topology.max_replicas_per_node: expected an integer"},
      {R"({"jobs": [{"id": "j", "queue": "q",
                     "groups": [{"topology": {"max_replicas_per_node": 4294967296}}]}]})",
       "jobs[0].groups[0].topology.max_replicas_per_node: integer out of range (must fit in 32 "
       "bits)"},
      {R"({"jobs": [{"id": "j", "queue": "q", "groups": [], "state": "done"}]})",
       "jobs[0].state: unknown value \"done\" (expected pending, running)"},
      {R"({"jobs": [{"id": "j", "queue": "q", "groups": [], "checkpointing": {"every": 5}}]})",
       "jobs[0].checkpointing.every: unknown field"},
      {R"({"jobs": [{"id": "j", "queue": "q", "groups": [], "placements": [{"group": "main"}]}]})",
       "jobs[0].placements[0]: missing required field \"node\""},
      {R"({"jobs": [{"id": "j", "queue": "q", "groups": [],
                     "placements": [{"group": "main", "node": "n", "gpus": [0, -1.5]}]}]})",
       "jobs[0].placements[0].gpus[1]: expected an integer"},
      {R"({"jobs": [{"id": "j", "queue": "q", "groups": [], "preemptible": "no"}]})",
       "jobs[0].preemptible: expected true or false"},
  };
  for (const ErrorCase& c : kCases) {
    SCOPED_TRACE(c.json);
    absl::StatusOr<Snapshot> parsed = ParseSnapshot(c.json);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(parsed.status().message(), c.message);
  }
}

// An integer token too large for 64 bits, in either direction and however long, is "out of
// range" (it is valid JSON), as the error table of snapshot-format.md says; a fraction or an
// exponent is a type error.
TEST(SnapshotJsonTest, IntegersBeyond64BitsAreOutOfRangeNotInvalidJsonOrWrongType) {
  const ErrorCase kCases[] = {
      {R"({"now": 100000000000000000000000000000})",
       "now: integer out of range (must fit in 64 bits)"},
      {R"({"now": -9223372036854775809})", "now: integer out of range (must fit in 64 bits)"},
      {R"({"now": 18446744073709551616})", "now: integer out of range (must fit in 64 bits)"},
      {R"({"now": -100000000000000000000000000000 })",
       "now: integer out of range (must fit in 64 bits)"},
      {R"({"queues": [{"id": "q", "priority": -9223372036854775809}]})",
       "queues[0].priority: integer out of range (must fit in 64 bits)"},
      {R"({"now": 1.0})", "now: expected an integer"},
      {R"({"now": -1e30})", "now: expected an integer"},
  };
  for (const ErrorCase& c : kCases) {
    SCOPED_TRACE(c.json);
    absl::StatusOr<Snapshot> parsed = ParseSnapshot(c.json);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(parsed.status().message(), c.message);
  }
  absl::StatusOr<Snapshot> extremes =
      ParseSnapshot(R"({"now": -9223372036854775808, "nodes": []})");
  ASSERT_TRUE(extremes.ok()) << extremes.status();
  EXPECT_EQ(extremes->now, std::numeric_limits<int64_t>::min());
}

// Nesting deeper than 1,024 arrays and objects is invalid JSON, and that wins over the type error
// the walk would meet first ("(root): expected an object", "now: expected an integer").
TEST(SnapshotJsonTest, NestingDeeperThan1024IsInvalidJsonBeforeAnyTypeError) {
  const std::string kTooDeep = "invalid JSON: nesting deeper than 1024 arrays and objects";
  const std::string kInputs[] = {
      std::string(1025, '[') + std::string(1025, ']'),
      std::string(100000, '['),
      R"({"now": )" + std::string(1024, '[') + std::string(1024, ']') + "}",
      R"({"nodes": [{"id": "n", "labels": {"k": )" + std::string(2000, '{') + "}]}",
      R"({"jobs": [], "x": )" + std::string(1100, '[') + std::string(1100, ']') + "}",
  };
  for (const std::string& input : kInputs) {
    SCOPED_TRACE(input.substr(0, 60));
    absl::StatusOr<Snapshot> parsed = ParseSnapshot(input);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(parsed.status().message(), kTooDeep);
    EXPECT_EQ(ParsePolicy(input).status().message(), kTooDeep);
    EXPECT_EQ(ParseDecisions(input).status().message(), kTooDeep);
  }
  // Exactly 1,024 deep is not too deep: the type error is reported.
  absl::StatusOr<Snapshot> deep =
      ParseSnapshot(R"({"now": )" + std::string(1023, '[') + std::string(1023, ']') + "}");
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().message(), "now: expected an integer");
  // Brackets inside strings do not count.
  absl::StatusOr<Snapshot> in_string =
      ParseSnapshot(R"({"nodes": [{"id": ")" + std::string(3000, '[') + R"(\"}"}], "now": "x"})");
  ASSERT_FALSE(in_string.ok());
  EXPECT_EQ(in_string.status().message(), "now: expected an integer");
}

TEST(SnapshotJsonTest, UnknownEnumNamesAreQuotedShort) {
  const std::string long_name(200, 'x');
  absl::StatusOr<Snapshot> parsed =
      ParseSnapshot(R"({"nodes": [{"id": "n", "state": ")" + long_name + R"("}]})");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(), "nodes[0].state: unknown value \"" + std::string(64, 'x') +
                                           "...\" (expected ready, cordoned, draining, down)");
}

TEST(SnapshotJsonTest, ReadSnapshotFileNamesTheFile) {
  absl::StatusOr<Snapshot> missing = ReadSnapshotFile("/nonexistent/pool.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "/nonexistent/pool.json: cannot read file");

  const std::string bad = std::string(GPUPOOL_SOURCE_DIR) + "/tests/cli/data/unknown_field.json";
  absl::StatusOr<Snapshot> parsed = ReadSnapshotFile(bad);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(parsed.status().message(), bad + ": jobs[1].gpu_mili: unknown field");
}

}  // namespace
}  // namespace gpupool::io
