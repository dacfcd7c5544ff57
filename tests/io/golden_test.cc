// Golden decisions: each example snapshot in examples/snapshots/, scheduled with the default
// policy, must give exactly the bytes of tests/golden/<name>.decisions.json.
//
// After an intended change of behaviour, regenerate with
//   GPUPOOL_UPDATE_GOLDEN=1 ctest -R io_golden_test
// and read the diff: every changed decision must be explained by the change.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gpupool/apply.h"
#include "gpupool/io/json.h"
#include "gpupool/schedule.h"
#include "gtest/gtest.h"

namespace gpupool::io {
namespace {

namespace fs = std::filesystem;

const fs::path kSourceDir = GPUPOOL_SOURCE_DIR;

// The example snapshot names, sorted ("fractions", "single_gpu", ...).
std::vector<std::string> ExampleNames() {
  std::vector<std::string> names;
  std::error_code error;
  for (const fs::directory_entry& entry :
       fs::directory_iterator(kSourceDir / "examples" / "snapshots", error)) {
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool UpdateGolden() {
  const char* update = std::getenv("GPUPOOL_UPDATE_GOLDEN");
  return update != nullptr && std::string(update) == "1";
}

class GoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenTest, DecisionsMatchTheGoldenFile) {
  const fs::path snapshot_path = kSourceDir / "examples" / "snapshots" / (GetParam() + ".json");
  const fs::path golden_path = kSourceDir / "tests" / "golden" / (GetParam() + ".decisions.json");
  absl::StatusOr<Snapshot> snapshot = ReadSnapshotFile(snapshot_path.string());
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  absl::StatusOr<Decisions> decisions = Schedule(*snapshot, Policy());
  ASSERT_TRUE(decisions.ok()) << decisions.status();
  const std::string actual = DecisionsToJson(*decisions);

  if (UpdateGolden()) {
    std::ofstream(golden_path, std::ios::binary) << actual;
    GTEST_SKIP() << "rewrote " << golden_path;
  }
  ASSERT_TRUE(fs::exists(golden_path))
      << golden_path << " is missing; run with GPUPOOL_UPDATE_GOLDEN=1 to create it";
  EXPECT_EQ(actual, ReadText(golden_path))
      << "decisions differ from " << golden_path
      << "; if the change is intended, rerun with GPUPOOL_UPDATE_GOLDEN=1 and review the diff";
  // The golden file is itself a valid decisions document.
  EXPECT_TRUE(ParseDecisions(ReadText(golden_path)).ok());
}

// The example is a fixed point once its starts are applied: nothing more starts.
TEST_P(GoldenTest, ApplyingTheStartsReachesAFixedPoint) {
  const fs::path snapshot_path = kSourceDir / "examples" / "snapshots" / (GetParam() + ".json");
  absl::StatusOr<Snapshot> snapshot = ReadSnapshotFile(snapshot_path.string());
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  absl::StatusOr<Decisions> first = Schedule(*snapshot, Policy());
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(ApplyStarts(*first, *snapshot).ok());
  absl::StatusOr<Decisions> second = Schedule(*snapshot, Policy());
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->starts.empty()) << DecisionsToJson(*second);
  EXPECT_EQ(second->pending.size(), first->pending.size());
}

// Writing a snapshot and reading it back schedules identically.
TEST_P(GoldenTest, CanonicalSnapshotSchedulesIdentically) {
  const fs::path snapshot_path = kSourceDir / "examples" / "snapshots" / (GetParam() + ".json");
  absl::StatusOr<Snapshot> snapshot = ReadSnapshotFile(snapshot_path.string());
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  absl::StatusOr<Snapshot> reread = ParseSnapshot(SnapshotToJson(*snapshot));
  ASSERT_TRUE(reread.ok()) << reread.status();
  absl::StatusOr<Decisions> a = Schedule(*snapshot, Policy());
  absl::StatusOr<Decisions> b = Schedule(*reread, Policy());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(DecisionsToJson(*a), DecisionsToJson(*b));
}

TEST(GoldenExamplesTest, AtLeastSixExamples) { EXPECT_GE(ExampleNames().size(), 6u); }

INSTANTIATE_TEST_SUITE_P(Examples, GoldenTest, ::testing::ValuesIn(ExampleNames()),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           return param_info.param;
                         });

}  // namespace
}  // namespace gpupool::io
