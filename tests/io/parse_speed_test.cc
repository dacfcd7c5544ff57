// Reading speed on the E3 S2 headline snapshot (10,000 nodes, 100,000 pending jobs): the JSON
// reader must take well under a second. Prints the throughput; the bound is loose because the
// machines are shared.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "gpupool/io/json.h"
#include "gtest/gtest.h"
#include "testing/generator.h"

namespace gpupool::io {
namespace {

TEST(ParseSpeedTest, HeadlineSnapshotParsesWellUnderASecond) {
  const Snapshot snapshot = testing::GenerateScenarioS2(/*seed=*/1);
  ASSERT_GE(snapshot.nodes.size(), 10000u);

  const auto write_start = std::chrono::steady_clock::now();
  const std::string text = SnapshotToJson(snapshot);
  const double write_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - write_start).count();

  std::vector<double> seconds;
  for (int run = 0; run < 3; ++run) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<Snapshot> parsed = ParseSnapshot(text);
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    ASSERT_EQ(parsed->jobs.size(), snapshot.jobs.size());
  }
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[1];
  const double mb = static_cast<double>(text.size()) / 1e6;
  std::printf(
      "S2 snapshot: %zu nodes, %zu jobs, %.1f MB of JSON; parse median %.3f s (%.0f MB/s);"
      " write %.3f s (%.0f MB/s)\n",
      snapshot.nodes.size(), snapshot.jobs.size(), mb, median, mb / median, write_s, mb / write_s);
  EXPECT_LT(median, 1.0);
}

}  // namespace
}  // namespace gpupool::io
