// The simulators' JSON goes through gpupool::io's one writer: every name is escaped, so a
// document parses back with the names it was given, whatever characters they hold. Regression:
// ReplayMetricsToJson once wrote policy and queue names without escaping them.
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "gpupool/sim/inflation.h"
#include "gpupool/sim/inflation_report.h"
#include "gpupool/sim/replay.h"
#include "gtest/gtest.h"
#include "simdjson.h"

namespace gpupool::sim {
namespace {

// A quote, a backslash, a newline and a control character: what broke the old output.
constexpr std::string_view kAwkward = "team \"a\\b\"\n\x01";

TEST(ReplayMetricsToJson, NamesWithQuotesAndBackslashesRoundTrip) {
  ReplayMetrics m;
  m.policy = std::string(kAwkward);
  m.jobs = 2;
  QueueMetrics q;
  q.queue = std::string(kAwkward) + "2";
  q.jobs = 2;
  m.queues = {q};
  const std::string json = ReplayMetricsToJson(m);
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  ASSERT_EQ(parser.parse(json).get(root), simdjson::SUCCESS) << json;
  std::string_view policy;
  ASSERT_EQ(root["policy"].get(policy), simdjson::SUCCESS);
  EXPECT_EQ(policy, kAwkward);
  std::string_view queue;
  ASSERT_EQ(root["queues"].at(0)["queue"].get(queue), simdjson::SUCCESS);
  EXPECT_EQ(queue, std::string(kAwkward) + "2");
  int64_t jobs = 0;
  ASSERT_EQ(root["queues"].at(0)["jobs"].get(jobs), simdjson::SUCCESS);
  EXPECT_EQ(jobs, 2);
}

TEST(ReplayMetricsToJson, NonFiniteNumbersAreNull) {
  ReplayMetrics m;
  m.jain_fairness = std::numeric_limits<double>::quiet_NaN();
  m.utilization = std::numeric_limits<double>::infinity();
  const std::string json = ReplayMetricsToJson(m);
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  ASSERT_EQ(parser.parse(json).get(root), simdjson::SUCCESS) << json;
  EXPECT_TRUE(root["jain_fairness"].is_null());
  EXPECT_TRUE(root["utilization"].is_null());
}

TEST(InflationJson, FileNamesWithQuotesAndBackslashesRoundTrip) {
  PolicyResult r;
  r.policy = "best-fit";
  r.per_seed.push_back(SeedResult{.seed = 18446744073709551615ULL});
  InflationRunInfo info;
  info.nodes = std::string(kAwkward);
  info.pods = "C:\\traces\\\"pods\".csv";
  // One policy, and several (the "runs" form).
  for (const std::vector<PolicyResult>& results :
       {std::vector<PolicyResult>{r}, std::vector<PolicyResult>{r, r}}) {
    const std::string json = InflationJson(info, results);
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    ASSERT_EQ(parser.parse(json).get(root), simdjson::SUCCESS) << json;
    simdjson::dom::element run = root;
    if (results.size() > 1) {
      ASSERT_EQ(root["runs"].at(1).get(run), simdjson::SUCCESS);
    }
    std::string_view nodes, pods;
    ASSERT_EQ(run["nodes"].get(nodes), simdjson::SUCCESS);
    ASSERT_EQ(run["pods"].get(pods), simdjson::SUCCESS);
    EXPECT_EQ(nodes, info.nodes);
    EXPECT_EQ(pods, info.pods);
    uint64_t seed = 0;
    ASSERT_EQ(run["seeds"].at(0).get(seed), simdjson::SUCCESS);
    EXPECT_EQ(seed, 18446744073709551615ULL);
  }
}

}  // namespace
}  // namespace gpupool::sim
