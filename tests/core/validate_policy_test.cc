// ValidatePolicy: one case per kind of bad policy value, each asserting the exact status code and
// message; the default policy, every built-in enumerator and the boundary values pass; Schedule()
// refuses a bad policy with ValidatePolicy's error, after ValidateSnapshot's.
#include <cstdint>
#include <functional>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gpupool/schedule.h"
#include "gpupool/validate.h"
#include "gtest/gtest.h"
#include "testing/builders.h"

namespace gpupool {
namespace {

using ::gpupool::testing::GpuRequest;
using ::gpupool::testing::MakeModel;
using ::gpupool::testing::MakeNode;
using ::gpupool::testing::MakePendingJob;
using ::gpupool::testing::MakeQueue;

struct BadPolicy {
  std::string name;
  std::function<void(Policy&)> mutate;
  std::string message;
};

std::ostream& operator<<(std::ostream& os, const BadPolicy& c) { return os << c.name; }

std::vector<BadPolicy> BadPolicies() {
  return {
      // --- enumerators cast from integers no enumerator has ---
      {"PlacementUnknown", [](Policy& p) { p.placement = static_cast<PlacementStrategy>(7); },
       "policy.placement: unknown value 7"},
      {"JobOrderUnknown", [](Policy& p) { p.job_order = static_cast<JobOrder>(-1); },
       "policy.job_order: unknown value -1"},
      {"QueueOrderUnknown", [](Policy& p) { p.queue_order = static_cast<QueueOrder>(2); },
       "policy.queue_order: unknown value 2"},
      {"VictimOrderUnknown",
       [](Policy& p) { p.preemption.victim_order = static_cast<VictimOrder>(5); },
       "policy.preemption.victim_order: unknown value 5"},
      {"BudgetEnforcementUnknown",
       [](Policy& p) { p.fair_share.gpu_hour_budgets = static_cast<BudgetEnforcement>(7); },
       "policy.fair_share.gpu_hour_budgets: unknown value 7"},
      // --- LAS thresholds ---
      {"LasThresholdsDescending",
       [](Policy& p) {
         p.las_thresholds_gpu_seconds = {7200, 3250};
       },
       "policy.las_thresholds_gpu_seconds[1]: 3250 is not above the threshold before it, 7200 "
       "(thresholds must be strictly ascending)"},
      {"LasThresholdsRepeated",
       [](Policy& p) {
         p.las_thresholds_gpu_seconds = {100, 3250, 3250};
       },
       "policy.las_thresholds_gpu_seconds[2]: 3250 is not above the threshold before it, 3250 "
       "(thresholds must be strictly ascending)"},
      {"LasThresholdNegative",
       [](Policy& p) {
         p.las_thresholds_gpu_seconds = {-1, 3250};
       },
       "policy.las_thresholds_gpu_seconds[0]: must be >= 0"},
      // --- seconds ---
      {"StarvationBoundNegative", [](Policy& p) { p.starvation_bound_s = -1; },
       "policy.starvation_bound_s: must be >= 0"},
      {"UsageHalfLifeNegative", [](Policy& p) { p.fair_share.usage_half_life_s = -3600; },
       "policy.fair_share.usage_half_life_s: must be >= 0"},
      {"CheckpointGraceNegative", [](Policy& p) { p.preemption.checkpoint_grace_s = -1; },
       "policy.preemption.checkpoint_grace_s: must be >= 0"},
      {"MaxVictimLostNegative", [](Policy& p) { p.preemption.max_victim_lost_s = -60; },
       "policy.preemption.max_victim_lost_s: must be >= 0"},
      {"MinVictimRunNegative",
       [](Policy& p) { p.preemption.min_victim_run_s = std::numeric_limits<int64_t>::min(); },
       "policy.preemption.min_victim_run_s: must be >= 0"},
      {"DrainBlockedJobsNegative", [](Policy& p) { p.preemption.drain_blocked_jobs = -1; },
       "policy.preemption.drain_blocked_jobs: must be >= 0"},
      {"TakeBackFromGpusNegative", [](Policy& p) { p.preemption.take_back_from_gpus = -8; },
       "policy.preemption.take_back_from_gpus: must be >= 0"},
      {"TakeBackAfterNegative", [](Policy& p) { p.preemption.take_back_after_s = -1; },
       "policy.preemption.take_back_after_s: must be >= 0"},
      {"VictimRemainingPercentNegative",
       [](Policy& p) { p.preemption.victim_remaining_percent = -1; },
       "policy.preemption.victim_remaining_percent: must be >= 0"},
      {"VictimRemainingMaxGapNegative",
       [](Policy& p) { p.preemption.victim_remaining_max_gap = -2; },
       "policy.preemption.victim_remaining_max_gap: must be >= 0"},
      // --- budgets ---
      {"MaxCandidatesNegative", [](Policy& p) { p.budgets.max_candidates = -1; },
       "policy.budgets.max_candidates: must be >= 0"},
      {"MaxPreemptionPlansNegative", [](Policy& p) { p.budgets.max_preemption_plans = -1; },
       "policy.budgets.max_preemption_plans: must be >= 0"},
      {"MaxCounterfactualPlansNegative",
       [](Policy& p) { p.budgets.max_counterfactual_plans = -2000; },
       "policy.budgets.max_counterfactual_plans: must be >= 0"},
      // --- consolidation ---
      {"ConsolidationGainFactorZero", [](Policy& p) { p.consolidation.gain_factor = 0; },
       "policy.consolidation.gain_factor: must be >= 1, got 0"},
      {"ConsolidationMaxMovesZero", [](Policy& p) { p.consolidation.max_moves = 0; },
       "policy.consolidation.max_moves: must be >= 1, got 0"},
      {"ConsolidationMaxPlansNegative", [](Policy& p) { p.consolidation.max_plans = -1; },
       "policy.consolidation.max_plans: must be >= 0"},
      // --- health and maintenance ---
      {"XidErrorsToCordonNegative", [](Policy& p) { p.health.xid_errors_to_cordon = -1; },
       "policy.health.xid_errors_to_cordon: must be >= 0"},
      {"EccErrorsToCordonNegative", [](Policy& p) { p.health.ecc_errors_to_cordon = -1; },
       "policy.health.ecc_errors_to_cordon: must be >= 0"},
      {"DiagnosticIntervalNegative", [](Policy& p) { p.health.diagnostic_interval_s = -1; },
       "policy.health.diagnostic_interval_s: must be >= 0"},
      {"DiagnosticIdleWindowNegative", [](Policy& p) { p.health.diagnostic_idle_window_s = -1; },
       "policy.health.diagnostic_idle_window_s: must be >= 0"},
      {"MaxDiagnosingNodesNegative", [](Policy& p) { p.health.max_diagnosing_nodes = -1; },
       "policy.health.max_diagnosing_nodes: must be >= 0"},
      {"DrainNoticeNegative", [](Policy& p) { p.maintenance.drain_notice_s = -1; },
       "policy.maintenance.drain_notice_s: must be >= 0"},
      // --- headroom and spot ---
      {"HeadroomModelEmpty",
       [](Policy& p) {
         p.headroom = {HeadroomRule{"", 4, HeadroomShape::kGpus, 100, false}};
       },
       "policy.headroom[0].gpu_model: must not be empty"},
      {"HeadroomCountZero",
       [](Policy& p) {
         p.headroom = {HeadroomRule{"A100", 0, HeadroomShape::kGpus, 100, false}};
       },
       "policy.headroom[0].count: must be >= 1 (0 gpus kept free for A100)"},
      {"HeadroomCountNegative",
       [](Policy& p) {
         p.headroom = {HeadroomRule{"A100", 4, HeadroomShape::kGpus, 100, false},
                       HeadroomRule{"A100", -2, HeadroomShape::kNodes, 100, false}};
       },
       "policy.headroom[1].count: must be >= 1 (-2 nodes kept free for A100)"},
      {"HeadroomShapeUnknown",
       [](Policy& p) {
         p.headroom = {HeadroomRule{"A100", 4, static_cast<HeadroomShape>(9), 100, false}};
       },
       "policy.headroom[0].shape: unknown value 9"},
      {"HeadroomDuplicateRule",
       [](Policy& p) {
         p.headroom = {HeadroomRule{"A100", 4, HeadroomShape::kIslands, 100, false},
                       HeadroomRule{"A100", 8, HeadroomShape::kGpus, 50, false},
                       HeadroomRule{"A100", 2, HeadroomShape::kIslands, 10, true}};
       },
       "policy.headroom[2]: a second rule for A100 in islands (the first is headroom[0]); keep "
       "one rule per model and shape"},
      {"SpotMaxCheckpointIntervalNegative",
       [](Policy& p) { p.spot.max_checkpoint_interval_s = -1; },
       "policy.spot.max_checkpoint_interval_s: must be >= 0"},
      // --- two bad fields: the first in the order of struct Policy is reported ---
      {"FirstBadFieldInDeclarationOrder",
       [](Policy& p) {
         p.budgets.max_candidates = -1;
         p.starvation_bound_s = -1;
       },
       "policy.starvation_bound_s: must be >= 0"},
  };
}

class ValidatePolicyBadValueTest : public ::testing::TestWithParam<BadPolicy> {};

TEST_P(ValidatePolicyBadValueTest, RefusedWithFieldInMessage) {
  Policy policy;
  GetParam().mutate(policy);
  const absl::Status status = ValidatePolicy(policy);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_EQ(std::string(status.message()), GetParam().message);
}

// A valid snapshot with one pending job, so that only the policy can be wrong.
Snapshot SmallSnapshot() {
  Snapshot snapshot;
  snapshot.gpu_models = {MakeModel("A100")};
  snapshot.nodes = {MakeNode("n1", "A100", 8)};
  snapshot.queues = {MakeQueue("q")};
  snapshot.jobs = {MakePendingJob("j1", "q", GpuRequest(1000), 2)};
  return snapshot;
}

TEST_P(ValidatePolicyBadValueTest, ScheduleRefusesWithTheSameError) {
  Policy policy;
  GetParam().mutate(policy);
  const absl::StatusOr<Decisions> decisions = Schedule(SmallSnapshot(), policy);
  ASSERT_FALSE(decisions.ok());
  EXPECT_EQ(decisions.status(), ValidatePolicy(policy));
}

INSTANTIATE_TEST_SUITE_P(AllKinds, ValidatePolicyBadValueTest, ::testing::ValuesIn(BadPolicies()),
                         [](const ::testing::TestParamInfo<BadPolicy>& param_info) {
                           return param_info.param.name;
                         });

TEST(ValidatePolicyTest, DefaultPolicyPasses) { EXPECT_TRUE(ValidatePolicy(Policy{}).ok()); }

// Zero everywhere ("off", "unbounded", "no counterfactuals"), an empty threshold list (one
// level), the int64 maximum ("never"), and every enumerator pass.
TEST(ValidatePolicyTest, BoundaryValuesPass) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  Policy zero;
  zero.las_thresholds_gpu_seconds = {};
  zero.starvation_bound_s = 0;
  zero.fair_share.usage_half_life_s = 0;
  zero.preemption.checkpoint_grace_s = 0;
  zero.preemption.max_victim_lost_s = 0;
  zero.preemption.min_victim_run_s = 0;
  zero.budgets = Budgets{0, 0, 0};
  EXPECT_TRUE(ValidatePolicy(zero).ok()) << ValidatePolicy(zero);

  Policy large;
  large.las_thresholds_gpu_seconds = {0, 1, kMax};
  large.starvation_bound_s = kMax;
  large.fair_share.usage_half_life_s = kMax;
  large.preemption.checkpoint_grace_s = kMax;
  large.preemption.max_victim_lost_s = kMax;
  large.preemption.min_victim_run_s = kMax;
  large.budgets = Budgets{kMax, kMax, kMax};
  EXPECT_TRUE(ValidatePolicy(large).ok()) << ValidatePolicy(large);

  for (PlacementStrategy placement :
       {PlacementStrategy::kBestFit, PlacementStrategy::kFirstFit, PlacementStrategy::kSpread,
        PlacementStrategy::kExpectedWaste}) {
    for (JobOrder order :
         {JobOrder::kPriorityFifo, JobOrder::kLeastAttainedService, JobOrder::kShortestRemaining}) {
      for (QueueOrder queues : {QueueOrder::kNone, QueueOrder::kFairShare}) {
        for (VictimOrder victims :
             {VictimOrder::kCheapestFirst, VictimOrder::kLowestPriorityFirst}) {
          Policy policy;
          policy.placement = placement;
          policy.job_order = order;
          policy.queue_order = queues;
          policy.preemption.victim_order = victims;
          EXPECT_TRUE(ValidatePolicy(policy).ok()) << ValidatePolicy(policy);
        }
      }
    }
  }
}

// Labels and switches take any value: an empty name and a negative version are reported as given.
// A headroom rule may only name a GPU model the snapshot declares: the policy alone cannot tell,
// so Schedule() refuses it (FailedPrecondition), naming the rule and the model.
TEST(ValidatePolicyTest, HeadroomOfAnUnknownModelIsRefusedBySchedule) {
  Policy policy;
  policy.headroom = {HeadroomRule{"A100", 1, HeadroomShape::kGpus, 10, false},
                     HeadroomRule{"H200", 8, HeadroomShape::kGpus, 100, false}};
  EXPECT_TRUE(ValidatePolicy(policy).ok());
  const absl::StatusOr<Decisions> decisions = Schedule(SmallSnapshot(), policy);
  ASSERT_FALSE(decisions.ok());
  EXPECT_EQ(decisions.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(std::string(decisions.status().message()),
            "policy.headroom[1].gpu_model: unknown GPU model \"H200\" (not in the snapshot's "
            "gpu_models)");
}

TEST(ValidatePolicyTest, LabelsAreNotChecked) {
  Policy policy;
  policy.name = "";
  policy.version = -3;
  policy.preemption.reclaim_lower_priority_only = true;  // without reclaim_across_queues
  EXPECT_TRUE(ValidatePolicy(policy).ok()) << ValidatePolicy(policy);
  const absl::StatusOr<Decisions> decisions = Schedule(SmallSnapshot(), policy);
  ASSERT_TRUE(decisions.ok()) << decisions.status();
  EXPECT_EQ(decisions->policy_name, "");
  EXPECT_EQ(decisions->policy_version, -3);
}

// The snapshot is checked before the policy: with both bad, the snapshot's error is returned.
TEST(ValidatePolicyTest, ScheduleReportsTheSnapshotErrorFirst) {
  Snapshot snapshot = SmallSnapshot();
  snapshot.jobs[0].queue = "nope";
  Policy policy;
  policy.las_thresholds_gpu_seconds = {2, 1};
  const absl::StatusOr<Decisions> decisions = Schedule(snapshot, policy);
  ASSERT_FALSE(decisions.ok());
  EXPECT_EQ(decisions.status(), ValidateSnapshot(snapshot));
}

}  // namespace
}  // namespace gpupool
