// The replay's queue settings (ReplayOptions::queues, docs/accounting.md "The replay's queues"):
// labels reach the ledger (cost centers), budgets are tracked period by period from the ledger
// with exact figures by hand, the engine acts on them, the budgets file is read strictly (one
// test per kind of bad input), the budgets JSON, and the HTML burn-down.
#include "gpupool/sim/replay_budgets.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gpupool/chargeback.h"
#include "gpupool/sim/replay.h"
#include "gpupool/sim/replay_report.h"
#include "gpupool/sim/rng.h"
#include "gtest/gtest.h"
#include "simdjson.h"

namespace gpupool::sim {
namespace {

constexpr int64_t kGpuHour = 3'600'000;
constexpr int64_t kDay = 86'400;

TraceJob J(int64_t submit, int32_t gpus, int64_t duration, std::string vc) {
  return TraceJob{
      .submit_time = submit, .duration_s = duration, .num_gpus = gpus, .cluster = std::move(vc)};
}

ReplayOptions Named(const std::string& name) {
  absl::StatusOr<ReplayOptions> o = MakeReplayOptions(name);
  EXPECT_TRUE(o.ok()) << o.status();
  o->pool = ReplayPool{.nodes = 1, .gpus_per_node = 8, .nodes_per_rack = 1};
  return *o;
}

// "a" runs 4 GPUs for two whole days from midnight; "b" runs 1 GPU for 100 s at 50,000 s and
// again on day 2. Budget of "a": 10 GPU-hours per day.
std::vector<TraceJob> TwoDays() {
  return {J(0, 4, 2 * kDay, "a"), J(50'000, 1, 100, "b"), J(kDay + 3600, 1, 100, "b")};
}

TEST(ReplayBudgets, UsedPerPeriodByHand) {
  ReplayOptions o = Named("fifo");
  o.budget_period_s = kDay;
  o.queues = {ReplayQueue{.queue = "a", .labels = {}, .budget_milli_gpu_seconds = 10 * kGpuHour}};
  absl::StatusOr<ReplayResult> r = RunReplay(o, TwoDays());
  ASSERT_TRUE(r.ok()) << r.status();
  const ReplayBudgets& b = r->budgets;
  EXPECT_EQ(b.period_start, 0);
  EXPECT_EQ(b.period_s, kDay);
  // The last completion is at 2 days, a period's start: two periods, not a third empty one.
  EXPECT_EQ(b.periods, 2);
  EXPECT_TRUE(b.enforced);
  ASSERT_EQ(b.queues.size(), 1u);
  const QueueBudgetUse& a = b.queues[0];
  EXPECT_EQ(a.queue, "a");
  EXPECT_EQ(a.budget_milli_gpu_s, 36'000'000);
  // 4 GPUs all day, each day.
  EXPECT_EQ(a.used_milli_gpu_s, (std::vector<int64_t>{4 * 1000 * kDay, 4 * 1000 * kDay}));
  // Cycles run at 0 (a used nothing yet), at 50,000 (a used 200 GPU-s x 1000 > 36,000,000:
  // over) and at 90,000 (day 2: a used 4 GPUs x 3600 s = 14,400,000, not over).
  EXPECT_EQ(a.over_budget_since, (std::vector<int64_t>{50'000, -1}));
  // The identity with the ledger: the periods sum to the queue's busy time.
  EXPECT_EQ(a.used_milli_gpu_s[0] + a.used_milli_gpu_s[1], r->ledger.queues[0].own.work.busy);
}

TEST(ReplayBudgets, PeriodsStartAtMidnightUtcOfTheFirstArrival) {
  ReplayOptions o = Named("fifo");
  o.budget_period_s = kDay;
  o.queues = {ReplayQueue{.queue = "a", .labels = {}, .budget_milli_gpu_seconds = 0}};
  // First arrival at 2017-11-01 00:20:34 UTC; one job of 1 GPU until 01:20:34 the next day.
  const int64_t t0 = 1'509'494'400 + 1234;
  absl::StatusOr<ReplayResult> r = RunReplay(o, {J(t0, 1, kDay + 3600, "a")});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->budgets.period_start, 1'509'494'400);
  EXPECT_EQ(r->budgets.periods, 2);
  ASSERT_EQ(r->budgets.queues.size(), 1u);
  // Day 1 from 00:20:34, day 2 until 01:20:34; the last period is cut at the last completion.
  EXPECT_EQ(r->budgets.queues[0].used_milli_gpu_s,
            (std::vector<int64_t>{1000 * (kDay - 1234), 1000 * (3600 + 1234)}));
  // A budget of 0 is spent from the start: over at the first cycle.
  EXPECT_EQ(r->budgets.queues[0].over_budget_since, (std::vector<int64_t>{t0, -1}));
}

TEST(ReplayBudgets, NoBudgetsNoRecord) {
  absl::StatusOr<ReplayResult> r = RunReplay(Named("fifo"), TwoDays());
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->budgets.queues.empty());
  EXPECT_EQ(r->budgets.periods, 0);
}

TEST(ReplayBudgets, SingleQueuePoliciesRecordButDoNotEnforce) {
  for (const char* name : {"las", "las-free"}) {
    ReplayOptions o = Named(name);
    o.budget_period_s = kDay;
    o.queues = {ReplayQueue{.queue = "a", .labels = {}, .budget_milli_gpu_seconds = 0}};
    absl::StatusOr<ReplayResult> r = RunReplay(o, TwoDays());
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_FALSE(r->budgets.enforced) << name;
    EXPECT_EQ(r->budgets.queues[0].used_milli_gpu_s[0], 4 * 1000 * kDay) << name;
  }
}

// Under `guarantees` (one engine queue per cluster), the budget decides whether "b" may reclaim
// GPUs from "a". "a" fills the node
// with eight 1-GPU jobs of 20,000 s; "b" asks for 4 GPUs at 8,000 s. Within budget, "a"'s
// guarantee (its share of the demand: 8 x 20,000 of 8 x 20,000 + 4 x 1,000 GPU-s, 7.8 GPUs)
// protects its jobs and "b" waits for them to end. Over its budget "a" has no guarantee, holds
// more than its entitlement, and "b" reclaims 4 GPUs once victims have just checkpointed.
TEST(ReplayBudgets, TheEngineActsOnASpentBudget) {
  std::vector<TraceJob> jobs;
  for (int i = 0; i < 8; ++i) jobs.push_back(J(0, 1, 20'000, "a"));
  jobs.push_back(J(8'000, 4, 1'000, "b"));
  ReplayOptions within = Named("guarantees");
  within.queues = {
      ReplayQueue{.queue = "a", .labels = {}, .budget_milli_gpu_seconds = 1000 * kGpuHour}};
  absl::StatusOr<ReplayResult> kept = RunReplay(within, jobs);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(kept->metrics.preemptions, 0);
  EXPECT_EQ(kept->jobs[8].first_start, 20'000);
  EXPECT_EQ(kept->budgets.queues[0].over_budget_since, (std::vector<int64_t>{-1}));

  ReplayOptions over = within;
  over.queues[0].budget_milli_gpu_seconds = 10 * kGpuHour;  // spent at 4,500 s
  absl::StatusOr<ReplayResult> reclaimed = RunReplay(over, jobs);
  ASSERT_TRUE(reclaimed.ok()) << reclaimed.status();
  EXPECT_EQ(reclaimed->metrics.preemptions, 4);
  // Victims must have lost at most 300 s since their last checkpoint (every 1800 s of work):
  // the host wakes up every 300 s from the cycle at 8,000 s; the first wake-up after the
  // checkpoint at 9,000 s is at 9,200 s.
  EXPECT_EQ(reclaimed->jobs[8].first_start, 9'200);
  EXPECT_EQ(reclaimed->budgets.queues[0].over_budget_since, (std::vector<int64_t>{8'000}));
  // The preemptions are in the ledger as work "a" lost to "b".
  ASSERT_EQ(reclaimed->ledger.preemption_losses.size(), 1u);
  EXPECT_EQ(reclaimed->ledger.preemption_losses[0].victim_queue, "a");
  EXPECT_EQ(reclaimed->ledger.preemption_losses[0].by_queue, "b");
}

TEST(ReplayBudgets, LabelsReachTheLedgerAndTheChargeback) {
  ReplayOptions o = Named("fifo");
  o.queues = {ReplayQueue{
      .queue = "b", .labels = {{"cost_center", "ads"}}, .budget_milli_gpu_seconds = {}}};
  absl::StatusOr<ReplayResult> r = RunReplay(o, TwoDays());
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->ledger.queues.size(), 2u);
  EXPECT_TRUE(r->ledger.queues[0].labels.empty());
  EXPECT_EQ(r->ledger.queues[1].labels, (std::vector<TopologyLabel>{{"cost_center", "ads"}}));
  EXPECT_THAT(CostCenters(r->ledger, Prices{}), testing::ElementsAre("a", "ads"));
}

TEST(ReplayBudgets, BadQueueSettingsAreRefused) {
  auto error = [](std::vector<ReplayQueue> queues, int64_t period_s = kDay) {
    ReplayOptions o = Named("fifo");
    o.queues = std::move(queues);
    o.budget_period_s = period_s;
    absl::StatusOr<ReplayResult> r = RunReplay(o, TwoDays());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(r.status().message());
  };
  EXPECT_EQ(error({ReplayQueue{.queue = "x"}}),
            "queues[0].queue: no virtual cluster \"x\" among the replayed jobs");
  EXPECT_EQ(error({ReplayQueue{.queue = "a"}, ReplayQueue{.queue = "a"}}),
            "queues[1].queue: \"a\" is given twice");
  EXPECT_EQ(error({ReplayQueue{.queue = "a", .labels = {{"", "x"}}}}),
            "queues[a].labels[]: key must not be empty");
  EXPECT_EQ(error({ReplayQueue{.queue = "a", .labels = {{"cost_center", ""}}}}),
            "queues[a].labels[cost_center].value: must not be empty");
  EXPECT_EQ(error({ReplayQueue{.queue = "a", .labels = {}, .budget_milli_gpu_seconds = -1}}),
            "queues[a].budget_milli_gpu_seconds: must be >= 0");
  EXPECT_EQ(error({ReplayQueue{
                .queue = "a", .labels = {}, .budget_milli_gpu_seconds = (int64_t{1} << 40) + 1}}),
            "queues[a].budget_milli_gpu_seconds: 1099511627777 is above the maximum "
            "1099511627776");
  EXPECT_EQ(error({}, 0), "budget_period_s: must be > 0");
}

// ---- The budgets file ---------------------------------------------------------------------

TEST(ReplayBudgetsFile, ReadsPeriodAndBudgets) {
  absl::StatusOr<ReplayBudgetFile> f = ParseReplayBudgets(
      R"({"period_days": 2, "queues": [{"queue": "a", "gpu_hours": 10}, {"gpu_hours": 0, "queue": "b"}]})");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->period_s, 2 * kDay);
  ASSERT_EQ(f->queues.size(), 2u);
  EXPECT_EQ(f->queues[0].queue, "a");
  EXPECT_EQ(f->queues[0].budget_milli_gpu_seconds, 36'000'000);
  EXPECT_EQ(f->queues[1].budget_milli_gpu_seconds, 0);
  absl::StatusOr<ReplayBudgetFile> empty = ParseReplayBudgets("{}");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->period_s, 7 * kDay);
  EXPECT_TRUE(empty->queues.empty());
}

TEST(ReplayBudgetsFile, BadInputNamesThePath) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[]", "(root): expected an object"},
      {R"({"period": 7})", "period: unknown field"},
      {R"({"period_days": 7, "period_days": 7})", "period_days: duplicate field"},
      {R"({"period_days": 1.5})", "period_days: expected an integer"},
      {R"({"period_days": 0})", "period_days: must be in [1, 366], got 0"},
      {R"({"period_days": 367})", "period_days: must be in [1, 366], got 367"},
      {R"({"queues": {}})", "queues: expected an array"},
      {R"({"queues": [{"gpu_hours": 1}]})", "queues[0]: missing required field \"queue\""},
      {R"({"queues": [{"queue": "a"}]})", "queues[0]: missing required field \"gpu_hours\""},
      {R"({"queues": [{"queue": "a", "gpu_hours": 1, "cost": 2}]})",
       "queues[0].cost: unknown field"},
      {R"({"queues": [{"queue": 7, "gpu_hours": 1}]})", "queues[0].queue: expected a string"},
      {R"({"queues": [{"queue": "", "gpu_hours": 1}]})", "queues[0].queue: must not be empty"},
      {R"({"queues": [{"queue": "a", "gpu_hours": -5}]})",
       "queues[0].gpu_hours: must be in [0, 305419], got -5"},
      {R"({"queues": [{"queue": "a", "gpu_hours": 305420}]})",
       "queues[0].gpu_hours: must be in [0, 305419], got 305420"},
      {R"({"queues": [{"queue": "a", "gpu_hours": 1}, {"queue": "a", "gpu_hours": 2}]})",
       "queues[1].queue: \"a\" is given twice (also queues[0])"},
  };
  for (const auto& [json, message] : cases) {
    absl::StatusOr<ReplayBudgetFile> f = ParseReplayBudgets(json);
    EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument) << json;
    EXPECT_EQ(f.status().message(), message) << json;
  }
  absl::StatusOr<ReplayBudgetFile> missing = ReadReplayBudgetsFile("/nonexistent/budgets.json");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
}

// ---- Outputs -------------------------------------------------------------------------------

TEST(ReplayBudgets, JsonHasEveryPeriodAndTheTotal) {
  ReplayOptions o = Named("fifo");
  o.budget_period_s = kDay;
  o.queues = {ReplayQueue{.queue = "a", .labels = {}, .budget_milli_gpu_seconds = 10 * kGpuHour}};
  absl::StatusOr<ReplayResult> r = RunReplay(o, TwoDays());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(ReplayBudgetsToJson(r->budgets), R"({
  "period_start": 0,
  "period_s": 86400,
  "periods": 2,
  "enforced": true,
  "queues": [
    {"queue": "a", "budget_milli_gpu_s": 36000000, "used_milli_gpu_s": [345600000, 345600000], "over_budget_since": [50000, -1], "used_total_milli_gpu_s": 691200000}
  ]
}
)");
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(ReplayBudgetsToJson(r->budgets)).get(doc), simdjson::SUCCESS);
}

TEST(ReplayBudgets, HtmlReportDrawsTheBurnDown) {
  ReplayOptions o = Named("default");
  o.budget_period_s = kDay;
  o.queues = {ReplayQueue{.queue = "a", .labels = {}, .budget_milli_gpu_seconds = 10 * kGpuHour}};
  absl::StatusOr<ReplayResult> r = RunReplay(o, TwoDays());
  ASSERT_TRUE(r.ok());
  ReplayReportInfo info;
  info.pool = o.pool;
  const std::string html = ReplayHtmlReport(std::vector<ReplayRun>{{"default", *r}}, info);
  EXPECT_EQ(html.find("No GPU-hour budgets are set"), std::string::npos);
  EXPECT_NE(html.find("<h3>Budget burn-down</h3>"), std::string::npos);
  EXPECT_NE(html.find("aria-label=\"Budget burn-down\""), std::string::npos);
  EXPECT_NE(html.find("GPU-hour budgets per period of 1 day (2 periods from 1970-01-01 00:00 UTC)"),
            std::string::npos);
  // The table: budget 10.0 GPU-hours, day 1 used 96.0 (960%) and over from 50,000 s.
  EXPECT_NE(html.find("<tr><td>a</td><td>10.0</td><td style=\"color:#d62728\">96.0 (960%)</td>"
                      "<td>1970-01-01 13:53</td>"),
            std::string::npos);
  // The line starts at 100% and ends below 0%.
  EXPECT_NE(html.find("<title>a</title></path>"), std::string::npos);
  // Without budgets the section says so.
  absl::StatusOr<ReplayResult> none = RunReplay(Named("default"), TwoDays());
  ASSERT_TRUE(none.ok());
  EXPECT_NE(ReplayHtmlReport(*none, info).find("No GPU-hour budgets are set"), std::string::npos);
}

}  // namespace
}  // namespace gpupool::sim
