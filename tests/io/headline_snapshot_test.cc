// The E3 S2 headline snapshot (10,000 nodes, 100,000 pending jobs) reads back exactly what was
// written. How fast it reads is a benchmark's claim, not a test's: bench/json_read_bench.cc
// measures it (bench/README.md has the medians), so no test here depends on how busy the
// machine is.
#include <string>

#include "gpupool/io/json.h"
#include "gtest/gtest.h"
#include "testing/generator.h"

namespace gpupool::io {
namespace {

TEST(HeadlineSnapshotTest, ReadsBackWhatWasWritten) {
  const Snapshot snapshot = testing::GenerateScenarioS2(/*seed=*/1);
  ASSERT_GE(snapshot.nodes.size(), 10000u);
  const std::string text = SnapshotToJson(snapshot);
  absl::StatusOr<Snapshot> parsed = ParseSnapshot(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->nodes.size(), snapshot.nodes.size());
  ASSERT_EQ(parsed->jobs.size(), snapshot.jobs.size());
  // Canonical writing: the parsed snapshot writes the same bytes, so nothing was lost or changed.
  EXPECT_EQ(SnapshotToJson(*parsed), text);
}

}  // namespace
}  // namespace gpupool::io
