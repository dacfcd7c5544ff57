// The input fingerprint (Decisions::input_fingerprint) covers every Policy field: changing any
// one of them changes it. The table of mutators below must name every field; a count of the
// Policy's aggregate members catches a field added to Policy (or one of its option structs)
// without a row here, so the fingerprint cannot silently drift again (it once left out
// budgets.max_counterfactual_plans).
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "gpupool/schedule.h"
#include "gpupool/scorers/scorers.h"
#include "gtest/gtest.h"
#include "testing/builders.h"

namespace gpupool {
namespace {

using ::gpupool::testing::GpuRequest;
using ::gpupool::testing::MakeNode;
using ::gpupool::testing::MakePendingJob;
using ::gpupool::testing::SnapshotBuilder;

// Converts to any member type, so that T{AnyMember{}, ...} with N initializers compiles exactly
// when the aggregate T has at least N members (brace elision never applies: every member takes
// an AnyMember whole).
struct AnyMember {
  template <typename T>
  operator T() const;  // NOLINT(google-explicit-constructor): declared only, never called
};

template <typename T, typename... Members>
constexpr size_t AggregateMemberCount() {
  if constexpr (requires { T{Members{}..., AnyMember{}}; }) {
    return AggregateMemberCount<T, Members..., AnyMember>();
  } else {
    return sizeof...(Members);
  }
}

// Leaf fields of Policy: its own, with the option structs counted by their members.
constexpr size_t kPolicyLeafFields =
    AggregateMemberCount<Policy>() - 8 + AggregateMemberCount<FairShareOptions>() +
    AggregateMemberCount<PreemptionOptions>() + AggregateMemberCount<Budgets>() +
    AggregateMemberCount<BackfillOptions>() + AggregateMemberCount<ConsolidationOptions>() +
    AggregateMemberCount<HealthOptions>() + AggregateMemberCount<MaintenanceOptions>() +
    AggregateMemberCount<SpotOptions>();

// One change per Policy field, each to a valid value other than the default.
const std::vector<std::pair<std::string, std::function<void(Policy&)>>>& FieldMutators() {
  static const auto* const kMutators = new std::vector<
      std::pair<std::string, std::function<void(Policy&)>>>{
      {"name", [](Policy& p) { p.name = "other"; }},
      {"version", [](Policy& p) { p.version = 2; }},
      {"placement", [](Policy& p) { p.placement = PlacementStrategy::kSpread; }},
      {"scorer", [](Policy& p) { p.scorer = MakeGpuPackingScorer(); }},
      {"job_order", [](Policy& p) { p.job_order = JobOrder::kLeastAttainedService; }},
      {"las_thresholds_gpu_seconds",
       [](Policy& p) {
         p.las_thresholds_gpu_seconds = {3250, 7201};
       }},
      {"starvation_bound_s", [](Policy& p) { p.starvation_bound_s = 600; }},
      {"queue_order", [](Policy& p) { p.queue_order = QueueOrder::kFairShare; }},
      {"fair_share.usage_half_life_s", [](Policy& p) { p.fair_share.usage_half_life_s = 3600; }},
      {"fair_share.gpu_hour_budgets",
       [](Policy& p) { p.fair_share.gpu_hour_budgets = BudgetEnforcement::kReportOnly; }},
      {"preemption.enabled", [](Policy& p) { p.preemption.enabled = true; }},
      {"preemption.checkpoint_grace_s", [](Policy& p) { p.preemption.checkpoint_grace_s = 30; }},
      {"preemption.reclaim_across_queues",
       [](Policy& p) { p.preemption.reclaim_across_queues = true; }},
      {"preemption.reclaim_lower_priority_only",
       [](Policy& p) { p.preemption.reclaim_lower_priority_only = true; }},
      {"preemption.victim_order",
       [](Policy& p) { p.preemption.victim_order = VictimOrder::kLowestPriorityFirst; }},
      {"preemption.max_victim_lost_s", [](Policy& p) { p.preemption.max_victim_lost_s = 900; }},
      {"preemption.min_victim_run_s", [](Policy& p) { p.preemption.min_victim_run_s = 300; }},
      {"preemption.starving_outrank", [](Policy& p) { p.preemption.starving_outrank = false; }},
      {"preemption.starving_drain", [](Policy& p) { p.preemption.starving_drain = true; }},
      {"preemption.starving_drain_past_min_runtime",
       [](Policy& p) { p.preemption.starving_drain_past_min_runtime = true; }},
      {"preemption.drain_blocked_jobs", [](Policy& p) { p.preemption.drain_blocked_jobs = 1; }},
      {"preemption.take_back_from_gpus", [](Policy& p) { p.preemption.take_back_from_gpus = 8; }},
      {"preemption.take_back_after_s", [](Policy& p) { p.preemption.take_back_after_s = 3600; }},
      {"preemption.victim_remaining_percent",
       [](Policy& p) { p.preemption.victim_remaining_percent = 100; }},
      {"preemption.victim_remaining_max_gap",
       [](Policy& p) { p.preemption.victim_remaining_max_gap = 2; }},
      {"budgets.max_candidates", [](Policy& p) { p.budgets.max_candidates = 1000; }},
      {"budgets.max_preemption_plans", [](Policy& p) { p.budgets.max_preemption_plans = 100; }},
      {"budgets.max_counterfactual_plans",
       [](Policy& p) { p.budgets.max_counterfactual_plans = 0; }},
      {"backfill.enabled", [](Policy& p) { p.backfill.enabled = true; }},
      {"backfill.reservations", [](Policy& p) { p.backfill.reservations = 2; }},
      {"backfill.margin_s", [](Policy& p) { p.backfill.margin_s = 60; }},
      {"backfill.overrun", [](Policy& p) { p.backfill.overrun = OverrunAction::kPreempt; }},
      {"consolidation.enabled", [](Policy& p) { p.consolidation.enabled = true; }},
      {"consolidation.gain_factor", [](Policy& p) { p.consolidation.gain_factor = 3; }},
      {"consolidation.max_moves", [](Policy& p) { p.consolidation.max_moves = 4; }},
      {"consolidation.max_plans", [](Policy& p) { p.consolidation.max_plans = 10; }},
      {"health.enabled", [](Policy& p) { p.health.enabled = true; }},
      {"health.xid_errors_to_cordon", [](Policy& p) { p.health.xid_errors_to_cordon = 5; }},
      {"health.ecc_errors_to_cordon", [](Policy& p) { p.health.ecc_errors_to_cordon = 1; }},
      {"health.diagnostic_interval_s", [](Policy& p) { p.health.diagnostic_interval_s = 86400; }},
      {"health.diagnostic_idle_window_s",
       [](Policy& p) { p.health.diagnostic_idle_window_s = 600; }},
      {"health.max_diagnosing_nodes", [](Policy& p) { p.health.max_diagnosing_nodes = 2; }},
      {"maintenance.drain_notice_s", [](Policy& p) { p.maintenance.drain_notice_s = 3600; }},
      {"maintenance.start_without_estimate",
       [](Policy& p) { p.maintenance.start_without_estimate = true; }},
      {"scale",
       [](Policy& p) {
         p.scale.emplace();
         p.scale->templates.push_back(NodeTemplate{"a100", MakeNode("", "A100", 8), 2, 1000000});
       }},
      {"headroom",
       [](Policy& p) {
         p.headroom = {HeadroomRule{"A100", 2, HeadroomShape::kGpus, 100, false}};
       }},
      {"spot.max_checkpoint_interval_s",
       [](Policy& p) { p.spot.max_checkpoint_interval_s = 3600; }},
  };
  return *kMutators;
}

std::string FingerprintOf(const Policy& policy) {
  const Snapshot snapshot = SnapshotBuilder()
                                .Model("A100")
                                .Node(MakeNode("n1", "A100", 8))
                                .Queue("q")
                                .Job(MakePendingJob("j", "q", GpuRequest(1000)))
                                .Build();
  absl::StatusOr<Decisions> decisions = Schedule(snapshot, policy);
  EXPECT_TRUE(decisions.ok()) << decisions.status();
  return decisions.ok() ? decisions->input_fingerprint : std::string();
}

TEST(FingerprintTest, EveryPolicyFieldHasAMutator) {
  EXPECT_EQ(FieldMutators().size(), kPolicyLeafFields)
      << "a Policy field was added or removed: add (or remove) its row in FieldMutators() and "
         "hash it in src/engine/fingerprint.cc";
}

// Each field changed alone gives a fingerprint of its own, different from the default policy's
// and from every other single change.
TEST(FingerprintTest, ChangingAnyPolicyFieldChangesTheFingerprint) {
  const std::string base = FingerprintOf(Policy{});
  ASSERT_FALSE(base.empty());
  std::map<std::string, std::string> seen;  // fingerprint -> field
  for (const auto& [field, mutate] : FieldMutators()) {
    SCOPED_TRACE(field);
    Policy policy;
    mutate(policy);
    const std::string fingerprint = FingerprintOf(policy);
    EXPECT_NE(fingerprint, base) << field << " is not part of the fingerprint";
    auto [it, inserted] = seen.emplace(fingerprint, field);
    EXPECT_TRUE(inserted) << field << " and " << it->second << " give the same fingerprint";
  }
}

// Regression: two policies that differ only in budgets.max_counterfactual_plans (and so in their
// would_preempt lists) shared one input_fingerprint.
TEST(FingerprintTest, MaxCounterfactualPlansIsPartOfTheFingerprint) {
  Policy none;
  none.budgets.max_counterfactual_plans = 0;
  Policy few;
  few.budgets.max_counterfactual_plans = 5;
  EXPECT_NE(FingerprintOf(none), FingerprintOf(Policy{}));
  EXPECT_NE(FingerprintOf(few), FingerprintOf(Policy{}));
  EXPECT_NE(FingerprintOf(none), FingerprintOf(few));
}

// The same policy gives the same fingerprint (it is a function of the input only).
TEST(FingerprintTest, SamePolicySameFingerprint) {
  EXPECT_EQ(FingerprintOf(Policy{}), FingerprintOf(Policy{}));
  EXPECT_EQ(FingerprintOf(Policy{}).size(), 16u);
}

}  // namespace
}  // namespace gpupool
