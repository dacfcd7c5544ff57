// Metrics (metrics.h): the Prometheus text of small pools, read line by line.
#include "gpupool/metrics.h"

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gpupool/schedule.h"
#include "gtest/gtest.h"
#include "testing/builders.h"

namespace gpupool {
namespace {

using ::gpupool::testing::GpuRequest;
using ::gpupool::testing::MakeNode;
using ::gpupool::testing::MakePendingJob;
using ::gpupool::testing::MakeRunningJob;
using ::gpupool::testing::Placement;
using ::gpupool::testing::SnapshotBuilder;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

struct Rendered {
  Decisions decisions;
  std::string text;
};

Rendered ScheduleAndRender(const Snapshot& snapshot, const Policy& policy = Policy{}) {
  absl::StatusOr<Decisions> decisions = Schedule(snapshot, policy);
  EXPECT_TRUE(decisions.ok()) << decisions.status();
  MetricsTotals totals;
  AddCycle(*decisions, totals);
  absl::StatusOr<std::string> text = RenderMetrics(snapshot, *decisions, totals);
  EXPECT_TRUE(text.ok()) << text.status();
  return {*decisions, text.value_or("")};
}

// Two A100 nodes of 4 GPUs: n1 runs a job of 2 whole GPUs and a quarter-GPU job
// on GPU 2; n2 is cordoned with one unhealthy GPU. One pending job of 8 GPUs cannot fit.
Snapshot SmallPool() {
  Node cordoned = MakeNode("n2", "A100", 4);
  cordoned.state = NodeState::kCordoned;
  cordoned.gpus[3].healthy = false;
  return SnapshotBuilder()
      .Now(5'000)
      .Model("A100")
      .Node(MakeNode("n1", "A100", 4))
      .Node(cordoned)
      .Queue("team-a")
      .Job(MakeRunningJob("whole", "team-a", GpuRequest(2000), {Placement("n1", {0, 1})}))
      .Job(MakeRunningJob("quarter", "team-a", GpuRequest(250), {Placement("n1", {2})}))
      .Job(MakePendingJob("big", "team-a", GpuRequest(8000)))
      .Build();
}

// Each GPU counts once: n1 has 3 GPUs in use (two whole, one shared) and one free; n2's
// unhealthy GPU counts as unhealthy, its other three as cordoned.
TEST(MetricsTest, GpusByModelAndState) {
  const std::vector<std::string> lines = Lines(ScheduleAndRender(SmallPool()).text);
  EXPECT_THAT(lines, Contains("gpupool_gpus{gpu_model=\"A100\",state=\"allocated\"} 3"));
  EXPECT_THAT(lines, Contains("gpupool_gpus{gpu_model=\"A100\",state=\"free\"} 1"));
  EXPECT_THAT(lines, Contains("gpupool_gpus{gpu_model=\"A100\",state=\"cordoned\"} 3"));
  EXPECT_THAT(lines, Contains("gpupool_gpus{gpu_model=\"A100\",state=\"unhealthy\"} 1"));
  EXPECT_THAT(lines, Contains("gpupool_gpus{gpu_model=\"A100\",state=\"draining\"} 0"));
  EXPECT_THAT(lines, Contains("gpupool_gpus{gpu_model=\"A100\",state=\"down\"} 0"));
  // Fractions are exact decimals of milli-GPUs: 2 + 0.25.
  EXPECT_THAT(lines, Contains("gpupool_gpu_allocated_gpus{gpu_model=\"A100\"} 2.25"));
  EXPECT_THAT(lines, Contains("gpupool_gpu_capacity_gpus{gpu_model=\"A100\"} 8"));
  EXPECT_THAT(lines, Contains("gpupool_nodes{state=\"cordoned\"} 1"));
  EXPECT_THAT(lines, Contains("gpupool_nodes{state=\"ready\"} 1"));
  EXPECT_THAT(lines, Contains("gpupool_jobs{state=\"running\"} 2"));
  EXPECT_THAT(lines, Contains("gpupool_jobs{state=\"pending\"} 1"));
  EXPECT_THAT(lines, Contains("gpupool_snapshot_time_seconds 5000"));
}

// Every pending reason has a series, 0 when no job has it, so dashboards never see one vanish.
TEST(MetricsTest, PendingJobsByEveryReason) {
  const Rendered rendered = ScheduleAndRender(SmallPool());
  ASSERT_EQ(rendered.decisions.pending.size(), 1u);
  const std::string reason = PendingReasonName(rendered.decisions.pending[0].reason);
  const std::vector<std::string> lines = Lines(rendered.text);
  EXPECT_THAT(lines, Contains("gpupool_pending_jobs{reason=\"" + reason + "\"} 1"));
  for (int code = 0;; ++code) {
    const std::string name = PendingReasonName(static_cast<PendingReason>(code));
    if (name == "unknown") break;
    // "headroom" is listed only under headroom rules (docs/metrics.md): see the test below.
    if (name == "headroom") {
      EXPECT_THAT(rendered.text, Not(HasSubstr("reason=\"headroom\"")));
      continue;
    }
    EXPECT_THAT(rendered.text, HasSubstr("gpupool_pending_jobs{reason=\"" + name + "\"}"));
  }
  EXPECT_THAT(lines, Contains("gpupool_queue_pending_jobs{queue=\"team-a\"} 1"));
}

// With a headroom rule the decisions report it, and the headroom reason is listed, 0 included.
TEST(MetricsTest, HeadroomReasonListedUnderHeadroomRules) {
  Policy policy;
  policy.headroom = {HeadroomRule{"A100", 1, HeadroomShape::kGpus, 100, false}};
  const Rendered rendered = ScheduleAndRender(SmallPool(), policy);
  ASSERT_EQ(rendered.decisions.headroom.size(), 1u);
  EXPECT_THAT(rendered.text, HasSubstr("gpupool_pending_jobs{reason=\"headroom\"} 0"));
}

TEST(MetricsTest, QueueSharesInGpus) {
  Snapshot snapshot = SmallPool();
  snapshot.queues[0].quotas.push_back({.gpu_model = "A100", .guaranteed_milli = 1500});
  const std::vector<std::string> lines = Lines(ScheduleAndRender(snapshot).text);
  EXPECT_THAT(lines,
              Contains("gpupool_queue_guarantee_gpus{queue=\"team-a\",gpu_model=\"A100\"} 1.5"));
  EXPECT_THAT(lines,
              Contains("gpupool_queue_usage_gpus{queue=\"team-a\",gpu_model=\"A100\"} 2.25"));
}

TEST(MetricsTest, BudgetSeriesOnlyForQueuesWithABudget) {
  Snapshot snapshot = SmallPool();
  snapshot.queues.push_back(Queue{.id = "no-budget"});
  snapshot.queues[0].budget_milli_gpu_seconds = 36'000'000;  // 10 GPU-hours
  snapshot.queues[0].budget_used_milli_gpu_seconds = 1'800'500;
  const std::string text = ScheduleAndRender(snapshot).text;
  const std::vector<std::string> lines = Lines(text);
  EXPECT_THAT(lines, Contains("gpupool_queue_budget_gpu_seconds{queue=\"team-a\"} 36000"));
  EXPECT_THAT(lines, Contains("gpupool_queue_budget_used_gpu_seconds{queue=\"team-a\"} 1800.5"));
  EXPECT_THAT(lines, Contains("gpupool_queue_over_budget{queue=\"team-a\"} 0"));
  EXPECT_THAT(text, Not(HasSubstr("budget_gpu_seconds{queue=\"no-budget\"}")));
}

// Label values are escaped: a backslash, a double quote and a newline in a queue id.
TEST(MetricsTest, LabelValuesAreEscaped) {
  Snapshot snapshot = SmallPool();
  const std::string odd = "a\\b\"c\nd";
  snapshot.queues.push_back(Queue{.id = odd});
  const std::string text = ScheduleAndRender(snapshot).text;
  EXPECT_THAT(Lines(text), Contains("gpupool_queue_pending_jobs{queue=\"a\\\\b\\\"c\\nd\"} 0"));
}

// Counters add up over cycles; gauges describe the last cycle only.
TEST(MetricsTest, TotalsAccumulateOverCycles) {
  const Snapshot snapshot = SmallPool();
  absl::StatusOr<Decisions> decisions = Schedule(snapshot, Policy{});
  ASSERT_TRUE(decisions.ok());
  Decisions with_eviction = *decisions;
  with_eviction.preemptions.push_back(
      {.job = "quarter", .for_job = "big", .reason = "test", .lost_milli_gpu_seconds = 1'500});
  MetricsTotals totals;
  AddCycle(with_eviction, totals);
  AddCycle(with_eviction, totals);
  EXPECT_EQ(totals.cycles, 2);
  EXPECT_EQ(totals.preemptions, 2);
  EXPECT_EQ(totals.lost_milli_gpu_seconds, 3'000);
  absl::StatusOr<std::string> text = RenderMetrics(snapshot, with_eviction, totals);
  ASSERT_TRUE(text.ok()) << text.status();
  const std::vector<std::string> lines = Lines(*text);
  EXPECT_THAT(lines, Contains("gpupool_cycles_total 2"));
  EXPECT_THAT(lines, Contains("gpupool_preemptions_total 2"));
  EXPECT_THAT(lines, Contains("gpupool_preemption_lost_gpu_seconds_total 3"));
  EXPECT_THAT(lines, Contains("gpupool_cycle_preemptions 1"));
  EXPECT_THAT(lines, Contains("gpupool_cycle_lost_gpu_seconds 1.5"));
  EXPECT_THAT(lines, Contains("# TYPE gpupool_cycles_total counter"));
}

TEST(MetricsTest, SameInputSameBytesWhateverTheListOrder) {
  Snapshot snapshot = SmallPool();
  const std::string first = ScheduleAndRender(snapshot).text;
  std::reverse(snapshot.nodes.begin(), snapshot.nodes.end());
  std::reverse(snapshot.jobs.begin(), snapshot.jobs.end());
  EXPECT_EQ(ScheduleAndRender(snapshot).text, first);
}

TEST(MetricsTest, InvalidSnapshotIsRefused) {
  Snapshot snapshot = SmallPool();
  snapshot.jobs[0].queue = "no-such-queue";
  absl::StatusOr<std::string> text = RenderMetrics(snapshot, Decisions{}, MetricsTotals{});
  ASSERT_FALSE(text.ok());
  EXPECT_THAT(std::string(text.status().message()), HasSubstr("no-such-queue"));
}

TEST(MetricsTest, DecisionForAnUnknownJobIsRefused) {
  Decisions decisions;
  decisions.pending.push_back({.job = "ghost"});
  absl::StatusOr<std::string> text = RenderMetrics(SmallPool(), decisions, MetricsTotals{});
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(text.status().message()), HasSubstr("decisions.pending: job \"ghost\""));
}

}  // namespace
}  // namespace gpupool
