// The operations scenarios of docs/operations.md (examples/scenarios/health_cordon.*,
// maintenance_drain.*): applying their decisions and scheduling again changes nothing more, as
// the page says, and their snapshots survive a JSON round trip with the same decisions.
#include <filesystem>
#include <string>

#include "gpupool/apply.h"
#include "gpupool/io/json.h"
#include "gpupool/schedule.h"
#include "gtest/gtest.h"

namespace gpupool::io {
namespace {

namespace fs = std::filesystem;
const fs::path kScenarios = fs::path(GPUPOOL_SOURCE_DIR) / "examples" / "scenarios";

class OperationsScenarioTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OperationsScenarioTest, ApplyingTheDecisionsReachesAFixedPoint) {
  absl::StatusOr<Snapshot> snapshot =
      ReadSnapshotFile((kScenarios / (GetParam() + ".snapshot.json")).string());
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  absl::StatusOr<Policy> policy =
      ReadPolicyFile((kScenarios / (GetParam() + ".policy.json")).string());
  ASSERT_TRUE(policy.ok()) << policy.status();
  absl::StatusOr<Decisions> first = Schedule(*snapshot, *policy);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->node_actions.empty());
  EXPECT_FALSE(first->preemptions.empty());

  // Canonical JSON of the snapshot schedules identically.
  absl::StatusOr<Snapshot> reread = ParseSnapshot(SnapshotToJson(*snapshot));
  ASSERT_TRUE(reread.ok()) << reread.status();
  absl::StatusOr<Decisions> same = Schedule(*reread, *policy);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(DecisionsToJson(*same), DecisionsToJson(*first));

  Snapshot next = *snapshot;
  ASSERT_TRUE(ApplyDecisions(*first, next).ok());
  absl::StatusOr<Decisions> second = Schedule(next, *policy);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->starts.empty());
  EXPECT_TRUE(second->preemptions.empty());
  EXPECT_TRUE(second->node_actions.empty()) << DecisionsToJson(*second);
}

INSTANTIATE_TEST_SUITE_P(Scenarios, OperationsScenarioTest,
                         ::testing::Values("health_cordon", "maintenance_drain"));

}  // namespace
}  // namespace gpupool::io
