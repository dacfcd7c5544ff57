// Same seed, same bytes: the JSON, CSV, summary and HTML outputs of a run.
#include <string>
#include <vector>

#include "gpupool/scorers/scorers.h"
#include "gpupool/sim/inflation.h"
#include "gpupool/sim/inflation_report.h"
#include "gtest/gtest.h"

namespace gpupool::sim {
namespace {

// Every 10th node of the built-in cluster (all node types) and a 1,000-pod synthetic workload.
Cluster SmallCluster() {
  const Cluster all = BuiltinCluster();
  Cluster c;
  for (size_t i = 0; i < all.nodes.size(); i += 10) c.nodes.push_back(all.nodes[i]);
  return c;
}

std::vector<PolicyResult> RunAll(const Cluster& c, const Workload& w) {
  InflationOptions options;
  options.seeds = {1, 2, 3};
  std::vector<PolicyResult> results;
  for (std::string_view name : BuiltinScorerNames()) {
    absl::StatusOr<PolicyResult> r = RunInflation(c, w, name, options);
    EXPECT_TRUE(r.ok()) << r.status();
    if (r.ok()) results.push_back(*r);
  }
  return results;
}

TEST(Determinism, SameSeedSameBytes) {
  const Cluster c = SmallCluster();
  const Workload w = SyntheticWorkload(1000, 5);
  const std::vector<PolicyResult> a = RunAll(c, w);
  const std::vector<PolicyResult> b = RunAll(c, w);
  InflationRunInfo info;
  EXPECT_EQ(InflationJson(info, a), InflationJson(info, b));
  EXPECT_EQ(InflationCurvesCsv(a), InflationCurvesCsv(b));
  EXPECT_EQ(InflationSummaryTable(info, a), InflationSummaryTable(info, b));
  EXPECT_EQ(InflationHtmlReport(info, a), InflationHtmlReport(info, b));
}

TEST(Determinism, SeedsChangeTheRun) {
  const Cluster c = SmallCluster();
  const Workload w = SyntheticWorkload(1000, 5);
  InflationOptions options;
  options.seeds = {1, 2};
  options.keep_placements = true;
  absl::StatusOr<PolicyResult> r = RunInflation(c, w, "random", options);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->per_seed[0].placements, r->per_seed[1].placements);
}

TEST(Reports, JsonHasTheKeysE1Lists) {
  const Cluster c = SmallCluster();
  const Workload w = SyntheticWorkload(500, 5);
  InflationOptions options;
  options.seeds = {42, 43};
  absl::StatusOr<PolicyResult> r = RunInflation(c, w, "fgd", options);
  ASSERT_TRUE(r.ok());
  const std::string json = InflationJson(InflationRunInfo{}, {*r});
  for (const char* key : {"\"policy\": \"fgd\"", "\"seeds\": [42, 43]", "\"alloc_ratio_at_100\"",
                          "\"alloc_ratio_at_130\"", "\"unallocated_gpus_at_130\"",
                          "\"frag_ratio_at_90\"", "\"per_seed\""}) {
    EXPECT_NE(json.find(key), std::string::npos) << key;
  }
  const std::string html = InflationHtmlReport(InflationRunInfo{}, {*r});
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // no network
  EXPECT_EQ(html.find("<script"), std::string::npos);
  const std::string csv = InflationCurvesCsv({*r});
  EXPECT_EQ(csv.rfind("policy,seed,arrived_percent", 0), 0u);
  EXPECT_NE(csv.find("\nfgd,43,130,"), std::string::npos);
}

}  // namespace
}  // namespace gpupool::sim
