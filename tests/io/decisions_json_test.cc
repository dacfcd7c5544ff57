// The decisions and policy formats: canonical bytes, round trips and errors.
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gpupool/io/json.h"
#include "gtest/gtest.h"

namespace gpupool::io {
namespace {

// One decision of every kind, every field set.
Decisions EveryKindOfDecision() {
  Decisions d;
  d.policy_name = "default";
  d.policy_version = 3;
  d.scorer = "best-fit";
  d.input_fingerprint = "00ff00ff00ff00ff";
  d.starts.push_back(StartDecision{"a",
                                   {ReplicaPlacement{"main", 0, "n1", {0, 1}, 1000},
                                    ReplicaPlacement{"main", 1, "n2", {3}, 250}}});
  d.preemptions.push_back(PreemptDecision{"b", "a", "priority", 5400000});
  d.migrations.push_back(MigrateDecision{"c",
                                         {ReplicaPlacement{"main", 0, "n1", {2}, 1000}},
                                         {ReplicaPlacement{"main", 0, "n3", {0}, 1000}}});
  d.resizes.push_back(ResizeDecision{"d", "workers", 4, 2});
  d.reservations.push_back(ReserveDecision{"e", {"n1", "n2"}, 1700003600});
  PendingDecision pending;
  pending.job = "f";
  pending.reason = PendingReason::kQueueLimit;
  pending.detail = "queue team is limited to 4000 milli-GPUs";
  pending.queue = "team";
  pending.gpu_model = "*";
  pending.shortfall_milli = 2000;
  pending.would_preempt = {"b", "c"};
  pending.counterfactual = "would start if b and c were preempted";
  d.pending.push_back(pending);
  d.queue_shares.push_back(QueueShare{"team", "*", 6000, 4000, 8000, 2000});
  d.counters.jobs_considered = 6;
  d.counters.jobs_started = 1;
  d.counters.candidates_evaluated = 42;
  d.counters.transactions_rolled_back = 2;
  d.counters.equivalence_hits = 1;
  d.counters.preemption_plans = 9;
  d.counters.preemptions = 1;
  d.counters.resizes = 2;
  d.counters.counterfactual_plans = 3;
  d.counters.budget_exhausted = true;
  return d;
}

TEST(DecisionsJsonTest, CanonicalBytes) {
  EXPECT_EQ(DecisionsToJson(EveryKindOfDecision()), R"({
  "policy_name": "default",
  "policy_version": 3,
  "scorer": "best-fit",
  "input_fingerprint": "00ff00ff00ff00ff",
  "starts": [
    {
      "job": "a",
      "placements": [
        {"group": "main", "replica": 0, "node": "n1", "gpus": [0, 1], "gpu_milli": 1000},
        {"group": "main", "replica": 1, "node": "n2", "gpus": [3], "gpu_milli": 250}
      ]
    }
  ],
  "preemptions": [
    {
      "job": "b",
      "for_job": "a",
      "reason": "priority",
      "lost_milli_gpu_seconds": 5400000
    }
  ],
  "migrations": [
    {
      "job": "c",
      "from": [
        {"group": "main", "replica": 0, "node": "n1", "gpus": [2], "gpu_milli": 1000}
      ],
      "to": [
        {"group": "main", "replica": 0, "node": "n3", "gpus": [0], "gpu_milli": 1000}
      ]
    }
  ],
  "resizes": [
    {"job": "d", "group": "workers", "from_replicas": 4, "to_replicas": 2}
  ],
  "reservations": [
    {
      "job": "e",
      "nodes": ["n1", "n2"],
      "expected_start": 1700003600
    }
  ],
  "pending": [
    {
      "job": "f",
      "reason": "queue-limit",
      "detail": "queue team is limited to 4000 milli-GPUs",
      "queue": "team",
      "gpu_model": "*",
      "shortfall_milli": 2000,
      "would_preempt": ["b", "c"],
      "counterfactual": "would start if b and c were preempted"
    }
  ],
  "queue_shares": [
    {"queue": "team", "gpu_model": "*", "entitlement_milli": 6000, "usage_milli": 4000, "demand_milli": 8000, "guaranteed_milli": 2000}
  ],
  "counters": {
    "jobs_considered": 6,
    "jobs_started": 1,
    "candidates_evaluated": 42,
    "transactions_rolled_back": 2,
    "equivalence_hits": 1,
    "preemption_plans": 9,
    "preemptions": 1,
    "resizes": 2,
    "counterfactual_plans": 3,
    "budget_exhausted": true
  }
}
)");
}

TEST(DecisionsJsonTest, EmptyDecisions) {
  EXPECT_EQ(DecisionsToJson(Decisions{}), R"({
  "policy_name": "",
  "policy_version": 0,
  "scorer": "",
  "input_fingerprint": "",
  "starts": [],
  "preemptions": [],
  "migrations": [],
  "resizes": [],
  "reservations": [],
  "pending": [],
  "queue_shares": [],
  "counters": {
    "jobs_considered": 0,
    "jobs_started": 0,
    "candidates_evaluated": 0,
    "transactions_rolled_back": 0,
    "equivalence_hits": 0,
    "preemption_plans": 0,
    "preemptions": 0,
    "resizes": 0,
    "counterfactual_plans": 0,
    "budget_exhausted": false
  }
}
)");
}

TEST(DecisionsJsonTest, RoundTrip) {
  const std::string text = DecisionsToJson(EveryKindOfDecision());
  absl::StatusOr<Decisions> parsed = ParseDecisions(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->starts[0].placements[1].gpu_milli, 250);
  EXPECT_EQ(parsed->pending[0].reason, PendingReason::kQueueLimit);
  EXPECT_EQ(parsed->pending[0].would_preempt, (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(parsed->pending[0].counterfactual, "would start if b and c were preempted");
  EXPECT_EQ(parsed->counters.counterfactual_plans, 3);
  EXPECT_EQ(parsed->counters.resizes, 2);
  EXPECT_EQ(parsed->resizes[0].to_replicas, 2);
  ASSERT_EQ(parsed->queue_shares.size(), 1u);
  EXPECT_EQ(parsed->queue_shares[0].entitlement_milli, 6000);
  EXPECT_EQ(parsed->queue_shares[0].guaranteed_milli, 2000);
  EXPECT_TRUE(parsed->counters.budget_exhausted);
  EXPECT_EQ(DecisionsToJson(*parsed), text);
}

TEST(DecisionsJsonTest, EveryPendingReasonRoundTrips) {
  for (PendingReason reason :
       {PendingReason::kNoAllowedGpuModel, PendingReason::kNodeRestrictions,
        PendingReason::kNeverFits, PendingReason::kInsufficientCapacity,
        PendingReason::kFragmentation, PendingReason::kTopology, PendingReason::kQueueLimit,
        PendingReason::kBudgetExhausted, PendingReason::kMaintenance, PendingReason::kHeadroom}) {
    Decisions d;
    PendingDecision pending;
    pending.job = "j";
    pending.reason = reason;
    d.pending.push_back(pending);
    absl::StatusOr<Decisions> parsed = ParseDecisions(DecisionsToJson(d));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(parsed->pending[0].reason, reason) << PendingReasonName(reason);
  }
}

TEST(DecisionsJsonTest, NodeActionsRoundTripAndAreOmittedWhenEmpty) {
  EXPECT_EQ(DecisionsToJson(Decisions()).find("node_actions"), std::string::npos);
  Decisions d;
  d.node_actions = {{"n1", NodeAction::kCordon, "GPU 1 has 5 XID errors (threshold 5)", 0},
                    {"n2", NodeAction::kDrain, "maintenance window", 4000},
                    {"n3", NodeAction::kUncordon, "passes", 0},
                    {"n4", NodeAction::kDiagnose, "idle", 100}};
  const std::string text = DecisionsToJson(d);
  EXPECT_NE(text.find(R"("action": "diagnose")"), std::string::npos) << text;
  absl::StatusOr<Decisions> parsed = ParseDecisions(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->node_actions.size(), 4u);
  EXPECT_EQ(parsed->node_actions[0].reason, "GPU 1 has 5 XID errors (threshold 5)");
  EXPECT_EQ(parsed->node_actions[1].action, NodeAction::kDrain);
  EXPECT_EQ(parsed->node_actions[1].expected_empty_time, 4000);
  EXPECT_EQ(parsed->node_actions[3].expected_empty_time, 100);
  EXPECT_EQ(DecisionsToJson(*parsed), text);
  EXPECT_EQ(ParseDecisions(R"({"node_actions": [{"node": "n1", "action": "reboot"}]})")
                .status()
                .message(),
            "node_actions[0].action: unknown value \"reboot\" (expected cordon, drain, "
            "uncordon, diagnose)");
}

TEST(DecisionsJsonTest, Errors) {
  struct Case {
    const char* json;
    const char* message;
  };
  const Case kCases[] = {
      {R"({"pending": [{"job": "j", "reason": "capacity"}]})",
       "pending[0].reason: unknown value \"capacity\" (expected no-allowed-gpu-model, "
       "node-restrictions, never-fits, insufficient-capacity, fragmentation, topology, "
       "queue-limit, budget-exhausted, maintenance, headroom)"},
      {R"({"pending": [{"job": "j"}]})", "pending[0]: missing required field \"reason\""},
      {R"({"starts": [{"placements": []}]})", "starts[0]: missing required field \"job\""},
      {R"({"starts": [{"job": "j", "placements": [{"group": "g", "node": "n", "gpus": 0}]}]})",
       "starts[0].placements[0].gpus: expected an array"},
      {R"({"counters": {"budget_exhausted": 0}})",
       "counters.budget_exhausted: expected true or false"},
      {R"({"counters": {"wall_time_ms": 3}})", "counters.wall_time_ms: unknown field"},
      {R"({"resizes": [{"job": "j", "to_replicas": 1.0}]})",
       "resizes[0].to_replicas: expected an integer"},
      {R"({"queue_shares": [{"queue": "q"}]})",
       "queue_shares[0]: missing required field \"gpu_model\""},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.json);
    absl::StatusOr<Decisions> parsed = ParseDecisions(c.json);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(parsed.status().message(), c.message);
  }
}

TEST(PolicyJsonTest, CanonicalBytesOfTheDefaultPolicy) {
  EXPECT_EQ(PolicyToJson(Policy{}), R"({
  "name": "default",
  "version": 1,
  "placement": "best-fit",
  "job_order": "priority-fifo",
  "las_thresholds_gpu_seconds": [3250, 7200],
  "starvation_bound_s": 0,
  "queue_order": "none",
  "fair_share": {"usage_half_life_s": 0, "gpu_hour_budgets": "enforce"},
  "preemption": {"enabled": false, "checkpoint_grace_s": 0, "reclaim_across_queues": false, "victim_order": "cheapest-first", "max_victim_lost_s": 0, "min_victim_run_s": 0, "reclaim_lower_priority_only": false, "starving_outrank": true, "starving_drain": false, "drain_blocked_jobs": 0},
  "budgets": {"max_candidates": 0, "max_preemption_plans": 0, "max_counterfactual_plans": 2000}
}
)");
}

// "expected-waste" reads, and writes back under the same name.
TEST(PolicyJsonTest, ExpectedWastePlacementRoundTrips) {
  absl::StatusOr<Policy> policy = ParsePolicy(R"({"placement": "expected-waste"})");
  ASSERT_TRUE(policy.ok()) << policy.status();
  EXPECT_EQ(policy->placement, PlacementStrategy::kExpectedWaste);
  EXPECT_NE(PolicyToJson(*policy).find(R"("placement": "expected-waste")"), std::string::npos);
}

TEST(PolicyJsonTest, OmittedKeysKeepTheDefaults) {
  absl::StatusOr<Policy> policy = ParsePolicy(R"({"placement": "spread"})");
  ASSERT_TRUE(policy.ok()) << policy.status();
  EXPECT_EQ(policy->name, "default");
  EXPECT_EQ(policy->version, 1);
  EXPECT_EQ(policy->placement, PlacementStrategy::kSpread);
  EXPECT_EQ(policy->job_order, JobOrder::kPriorityFifo);
  EXPECT_EQ(policy->las_thresholds_gpu_seconds, Policy().las_thresholds_gpu_seconds);
  EXPECT_EQ(policy->queue_order, QueueOrder::kNone);
  EXPECT_EQ(policy->budgets.max_counterfactual_plans, Policy().budgets.max_counterfactual_plans);
  EXPECT_EQ(policy->budgets.max_candidates, 0);
  EXPECT_EQ(policy->budgets.max_preemption_plans, 0);
  EXPECT_FALSE(policy->preemption.enabled);
  EXPECT_EQ(policy->preemption.checkpoint_grace_s, 0);
  EXPECT_EQ(policy->preemption.victim_order, VictimOrder::kCheapestFirst);
  EXPECT_EQ(policy->scorer, nullptr);
}

TEST(PolicyJsonTest, RoundTrip) {
  Policy p;
  p.name = "experiment";
  p.version = 12;
  p.placement = PlacementStrategy::kFirstFit;
  p.job_order = JobOrder::kLeastAttainedService;
  p.las_thresholds_gpu_seconds = {100, 1000, 10000};
  p.starvation_bound_s = 3600;
  p.queue_order = QueueOrder::kFairShare;
  p.budgets.max_counterfactual_plans = 7;
  p.budgets.max_candidates = 100000;
  p.budgets.max_preemption_plans = 500;
  p.preemption.enabled = true;
  p.preemption.checkpoint_grace_s = 120;
  p.preemption.reclaim_across_queues = true;
  p.preemption.victim_order = VictimOrder::kLowestPriorityFirst;
  p.preemption.starving_drain = true;
  p.preemption.starving_drain_past_min_runtime = true;
  p.preemption.drain_blocked_jobs = 2;
  p.preemption.take_back_from_gpus = 8;
  p.preemption.take_back_after_s = 14400;
  p.preemption.victim_remaining_percent = 100;
  p.preemption.victim_remaining_max_gap = 2;
  p.fair_share.usage_half_life_s = 86400;
  p.health = {true, 5, 1, 86400, 600, 2};
  p.maintenance = {3600, true};
  absl::StatusOr<Policy> parsed = ParsePolicy(PolicyToJson(p));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->name, "experiment");
  EXPECT_EQ(parsed->version, 12);
  EXPECT_EQ(parsed->placement, PlacementStrategy::kFirstFit);
  EXPECT_EQ(parsed->job_order, JobOrder::kLeastAttainedService);
  EXPECT_EQ(parsed->las_thresholds_gpu_seconds, (std::vector<int64_t>{100, 1000, 10000}));
  EXPECT_EQ(parsed->starvation_bound_s, 3600);
  EXPECT_EQ(parsed->queue_order, QueueOrder::kFairShare);
  EXPECT_EQ(parsed->budgets.max_counterfactual_plans, 7);
  EXPECT_EQ(parsed->budgets.max_candidates, 100000);
  EXPECT_EQ(parsed->budgets.max_preemption_plans, 500);
  EXPECT_TRUE(parsed->preemption.enabled);
  EXPECT_EQ(parsed->preemption.checkpoint_grace_s, 120);
  EXPECT_TRUE(parsed->preemption.reclaim_across_queues);
  EXPECT_EQ(parsed->preemption.victim_order, VictimOrder::kLowestPriorityFirst);
  EXPECT_TRUE(parsed->preemption.starving_drain);
  EXPECT_TRUE(parsed->preemption.starving_drain_past_min_runtime);
  EXPECT_EQ(parsed->preemption.drain_blocked_jobs, 2);
  EXPECT_EQ(parsed->preemption.take_back_from_gpus, 8);
  EXPECT_EQ(parsed->preemption.take_back_after_s, 14400);
  EXPECT_EQ(parsed->preemption.victim_remaining_percent, 100);
  EXPECT_EQ(parsed->preemption.victim_remaining_max_gap, 2);
  EXPECT_EQ(parsed->fair_share.usage_half_life_s, 86400);
  EXPECT_TRUE(parsed->health.enabled);
  EXPECT_EQ(parsed->health.xid_errors_to_cordon, 5);
  EXPECT_EQ(parsed->health.ecc_errors_to_cordon, 1);
  EXPECT_EQ(parsed->health.diagnostic_interval_s, 86400);
  EXPECT_EQ(parsed->health.diagnostic_idle_window_s, 600);
  EXPECT_EQ(parsed->health.max_diagnosing_nodes, 2);
  EXPECT_EQ(parsed->maintenance.drain_notice_s, 3600);
  EXPECT_TRUE(parsed->maintenance.start_without_estimate);
  EXPECT_EQ(PolicyToJson(*parsed), PolicyToJson(p));
}

TEST(PolicyJsonTest, Errors) {
  struct Case {
    const char* json;
    const char* message;
  };
  const Case kCases[] = {
      {R"({"scorer": "fgd"})",
       "scorer: a placement scorer is host code and cannot be set in a policy file (use "
       "\"placement\")"},
      {R"({"placement": "worst-fit"})",
       "placement: unknown value \"worst-fit\" (expected best-fit, first-fit, spread, "
       "expected-waste)"},
      {R"({"job_order": "fifo"})",
       "job_order: unknown value \"fifo\" (expected priority-fifo, las, shortest-remaining)"},
      {R"({"queue_order": "drf"})",
       "queue_order: unknown value \"drf\" (expected none, fair-share)"},
      {R"({"las_thresholds_gpu_seconds": [3250, "7200"]})",
       "las_thresholds_gpu_seconds[1]: expected an integer"},
      {R"({"budgets": {"max_candidates": "10"}})", "budgets.max_candidates: expected an integer"},
      {R"({"budgets": {"max_plans": 10}})", "budgets.max_plans: unknown field"},
      {R"({"preemption": {"enabled": "yes"}})", "preemption.enabled: expected true or false"},
      {R"({"preemption": {"starving_drain": 1}})",
       "preemption.starving_drain: expected true or false"},
      {R"({"preemption": {"starving_drain_past_min_runtime": "yes"}})",
       "preemption.starving_drain_past_min_runtime: expected true or false"},
      {R"({"preemption": {"drain_blocked_jobs": "1"}})",
       "preemption.drain_blocked_jobs: expected an integer"},
      {R"({"preemption": {"take_back_from_gpus": 8.5}})",
       "preemption.take_back_from_gpus: expected an integer"},
      {R"({"preemption": {"take_back_after_s": "4h"}})",
       "preemption.take_back_after_s: expected an integer"},
      {R"({"preemption": {"victim_remaining_percent": 99.5}})",
       "preemption.victim_remaining_percent: expected an integer"},
      {R"({"preemption": {"victim_remaining_max_gap": "2"}})",
       "preemption.victim_remaining_max_gap: expected an integer"},
      {R"({"preemption": true})", "preemption: expected an object"},
      {R"({"preemption": {"victim_order": "oldest-first"}})",
       "preemption.victim_order: unknown value \"oldest-first\" (expected cheapest-first, "
       "lowest-priority-first)"},
      {R"({"fair_share": {"half_life": 5}})", "fair_share.half_life: unknown field"},
      {R"({"consolidation": {"gain_factor": "2"}})",
       "consolidation.gain_factor: expected an integer"},
      {R"({"consolidation": {"factor": 2}})", "consolidation.factor: unknown field"},
      {R"({"consolidation": {"enabled": 1}})", "consolidation.enabled: expected true or false"},
      {R"({"consolidation": []})", "consolidation: expected an object"},
      {R"({"version": 4294967296})", "version: integer out of range (must fit in 32 bits)"},
      {R"({"name": "a", "name": "b"})", "name: duplicate field"},
      {R"("default")", "(root): expected an object"},
      {R"({"headroom": [{"gpu_model": "A100", "count": 4, "shape": "racks", "min_priority": 1}]})",
       "headroom[0].shape: unknown value \"racks\" (expected gpus, nodes, islands)"},
      {R"({"headroom": [{"gpu_model": "A100", "min_priority": 1}]})",
       "headroom[0]: missing required field \"count\""},
      {R"({"headroom": [{"gpu_model": "A100", "count": 4, "min_priority": 1, "units": 2}]})",
       "headroom[0].units: unknown field"},
      {R"({"spot": {"max_checkpoint_interval_s": "1h"}})",
       "spot.max_checkpoint_interval_s: expected an integer"},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.json);
    absl::StatusOr<Policy> parsed = ParsePolicy(c.json);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(parsed.status().message(), c.message);
  }
}

TEST(PolicyJsonTest, ExamplePoliciesParse) {
  for (const char* name : {"best-fit", "first-fit", "spread"}) {
    const std::string path =
        std::string(GPUPOOL_SOURCE_DIR) + "/examples/policies/" + name + ".json";
    absl::StatusOr<Policy> policy = ReadPolicyFile(path);
    ASSERT_TRUE(policy.ok()) << policy.status();
    EXPECT_STREQ(PlacementStrategyName(policy->placement), name);
  }
  // best-fit.json spells out the default policy in canonical form.
  std::ifstream in(std::string(GPUPOOL_SOURCE_DIR) + "/examples/policies/best-fit.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, PolicyToJson(Policy{}));
}

// "over_budget" is written only when true, and read back.
TEST(DecisionsJsonTest, OverBudgetShareRoundTrips) {
  Decisions d;
  QueueShare share{"team", "*", 1000, 4000, 4000, 0};
  share.over_budget = true;
  d.queue_shares.push_back(share);
  d.queue_shares.push_back(QueueShare{"other", "*", 3000, 0, 3000, 0});
  const std::string json = DecisionsToJson(d);
  EXPECT_NE(json.find(R"("guaranteed_milli": 0, "over_budget": true})"), std::string::npos) << json;
  EXPECT_EQ(json.find("over_budget", json.find(R"("queue": "other")")), std::string::npos) << json;
  absl::StatusOr<Decisions> parsed = ParseDecisions(json);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->queue_shares.size(), 2u);
  EXPECT_TRUE(parsed->queue_shares[0].over_budget);
  EXPECT_FALSE(parsed->queue_shares[1].over_budget);
}

// Headroom rules and the spot bound: written only when set, read back field by field.
TEST(PolicyJsonTest, HeadroomAndSpotRoundTrip) {
  Policy p;
  p.headroom = {HeadroomRule{"H100", 8, HeadroomShape::kGpus, 100, true},
                HeadroomRule{"A100", 1, HeadroomShape::kIslands, 50, false}};
  p.spot.max_checkpoint_interval_s = 1800;
  const std::string json = PolicyToJson(p);
  EXPECT_NE(
      json.find(
          R"({"gpu_model": "H100", "count": 8, "shape": "gpus", "min_priority": 100, "restore": true})"),
      std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("spot": {"max_checkpoint_interval_s": 1800})"), std::string::npos) << json;
  absl::StatusOr<Policy> parsed = ParsePolicy(json);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->headroom.size(), 2u);
  EXPECT_EQ(parsed->headroom[1].gpu_model, "A100");
  EXPECT_EQ(parsed->headroom[1].count, 1);
  EXPECT_EQ(parsed->headroom[1].shape, HeadroomShape::kIslands);
  EXPECT_EQ(parsed->headroom[1].min_priority, 50);
  EXPECT_FALSE(parsed->headroom[1].restore);
  EXPECT_TRUE(parsed->headroom[0].restore);
  EXPECT_EQ(parsed->spot.max_checkpoint_interval_s, 1800);
  EXPECT_EQ(PolicyToJson(*parsed), json);
  // Left out, the shape is "gpus" and restore false.
  absl::StatusOr<Policy> short_form =
      ParsePolicy(R"({"headroom": [{"gpu_model": "H100", "count": 2, "min_priority": 7}]})");
  ASSERT_TRUE(short_form.ok()) << short_form.status();
  EXPECT_EQ(short_form->headroom[0].shape, HeadroomShape::kGpus);
  EXPECT_FALSE(short_form->headroom[0].restore);
  EXPECT_EQ(PolicyToJson(Policy{}).find("headroom"), std::string::npos);
}

// The headroom report: written only when the policy has rules, read back.
TEST(DecisionsJsonTest, HeadroomReportRoundTrips) {
  Decisions d;
  EXPECT_EQ(DecisionsToJson(d).find("headroom"), std::string::npos);
  HeadroomReport report;
  report.gpu_model = "H100";
  report.shape = HeadroomShape::kNodes;
  report.min_priority = 100;
  report.required = 2;
  report.free_before_restore = 0;
  report.free = 1;
  report.preempted = {"a", "b"};
  report.shortfall = 1;
  report.detail = "urgent work left 0 free";
  d.headroom.push_back(report);
  const std::string json = DecisionsToJson(d);
  absl::StatusOr<Decisions> parsed = ParseDecisions(json);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->headroom.size(), 1u);
  const HeadroomReport& r = parsed->headroom[0];
  EXPECT_EQ(r.gpu_model, "H100");
  EXPECT_EQ(r.shape, HeadroomShape::kNodes);
  EXPECT_EQ(r.min_priority, 100);
  EXPECT_EQ(r.required, 2);
  EXPECT_EQ(r.free_before_restore, 0);
  EXPECT_EQ(r.free, 1);
  EXPECT_EQ(r.preempted, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r.shortfall, 1);
  EXPECT_EQ(r.detail, "urgent work left 0 free");
  EXPECT_EQ(DecisionsToJson(*parsed), json);
}

// A consolidation's Migrate carries for_job and the lost work; the counters migrations and
// consolidation_plans are written only when not 0 (so output without consolidation is unchanged).
TEST(DecisionsJsonTest, ConsolidationRoundTrips) {
  Decisions d;
  d.migrations.push_back(MigrateDecision{"a",
                                         {ReplicaPlacement{"main", 0, "n1", {0, 1}, 1000}},
                                         {ReplicaPlacement{"main", 0, "n2", {2, 3}, 1000}},
                                         "gang",
                                         320000});
  d.counters.migrations = 1;
  d.counters.consolidation_plans = 4;
  const std::string json = DecisionsToJson(d);
  EXPECT_NE(json.find(R"("for_job": "gang",
      "lost_milli_gpu_seconds": 320000)"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("migrations": 1,
    "consolidation_plans": 4,)"),
            std::string::npos)
      << json;
  absl::StatusOr<Decisions> parsed = ParseDecisions(json);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->migrations.size(), 1u);
  EXPECT_EQ(parsed->migrations[0].for_job, "gang");
  EXPECT_EQ(parsed->migrations[0].lost_milli_gpu_seconds, 320000);
  EXPECT_EQ(parsed->migrations[0].to, d.migrations[0].to);
  EXPECT_EQ(parsed->counters.migrations, 1);
  EXPECT_EQ(parsed->counters.consolidation_plans, 4);
  EXPECT_EQ(DecisionsToJson(*parsed), json);

  EXPECT_EQ(DecisionsToJson(Decisions{}).find("consolidation_plans"), std::string::npos);
}

// The consolidation block is written only when it is not the default, and read back.
TEST(PolicyJsonTest, ConsolidationRoundTrips) {
  EXPECT_EQ(PolicyToJson(Policy{}).find("consolidation"), std::string::npos);
  Policy p;
  p.consolidation.enabled = true;
  p.consolidation.gain_factor = 3;
  p.consolidation.max_moves = 4;
  p.consolidation.max_plans = 100;
  const std::string json = PolicyToJson(p);
  EXPECT_NE(
      json.find(
          R"("consolidation": {"enabled": true, "gain_factor": 3, "max_moves": 4, "max_plans": 100})"),
      std::string::npos)
      << json;
  absl::StatusOr<Policy> parsed = ParsePolicy(json);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->consolidation.enabled);
  EXPECT_EQ(parsed->consolidation.gain_factor, 3);
  EXPECT_EQ(parsed->consolidation.max_moves, 4);
  EXPECT_EQ(parsed->consolidation.max_plans, 100);
  EXPECT_EQ(PolicyToJson(*parsed), json);

  absl::StatusOr<Policy> partial = ParsePolicy(R"({"consolidation": {"enabled": true}})");
  ASSERT_TRUE(partial.ok()) << partial.status();
  EXPECT_TRUE(partial->consolidation.enabled);
  EXPECT_EQ(partial->consolidation.gain_factor, ConsolidationOptions{}.gain_factor);
}

}  // namespace
}  // namespace gpupool::io
