// The replay's per-queue time series and its HTML report: the buckets sum exactly to the metrics'
// totals, a hand-checked series, one chart per queue plus the JCT chart, and the same bytes twice.
#include "gpupool/sim/replay_report.h"

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "gpupool/sim/replay.h"
#include "gtest/gtest.h"

namespace gpupool::sim {
namespace {

TraceJob J(int64_t submit, int32_t gpus, int64_t duration, std::string vc) {
  return TraceJob{.submit_time = submit,
                  .duration_s = duration,
                  .num_gpus = gpus,
                  .cluster = std::move(vc),
                  .line = 0};
}

// Two nodes of 8 GPUs, one rack.
constexpr ReplayPool kTwoNodes{.nodes = 2, .gpus_per_node = 8, .nodes_per_rack = 2};

ReplayResult RunNamed(const char* policy, const std::vector<TraceJob>& jobs, int64_t bucket_s) {
  absl::StatusOr<ReplayOptions> o = MakeReplayOptions(policy);
  EXPECT_TRUE(o.ok()) << o.status();
  o->pool = kTwoNodes;
  o->series_bucket_s = bucket_s;
  absl::StatusOr<ReplayResult> r = RunReplay(*o, jobs);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *std::move(r) : ReplayResult{};
}

// Three tenants competing for 16 GPUs over a few hours, submitted off the hour.
std::vector<TraceJob> TinyTrace() {
  const int64_t t0 = 1'509'494'400 + 1234;  // 2017-11-01 00:20:34 UTC
  return {J(t0, 8, 5000, "aaa"),         J(t0 + 10, 8, 7000, "bbb"),    J(t0 + 20, 4, 900, "ccc"),
          J(t0 + 30, 2, 4000, "ccc"),    J(t0 + 4000, 16, 3000, "aaa"), J(t0 + 4100, 1, 100, "bbb"),
          J(t0 + 9000, 4, 20000, "bbb"), J(t0 + 9001, 8, 600, "ccc")};
}

int64_t Sum(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t{0});
}

TEST(ReplaySeries, BucketsSumExactlyToTheMetricsTotals) {
  for (const char* policy : {"fifo", "las", "las-free", "default"}) {
    for (int64_t bucket_s : {int64_t{60}, int64_t{3600}, int64_t{7}}) {
      const ReplayResult r = RunNamed(policy, TinyTrace(), bucket_s);
      const ReplaySeries& s = r.series;
      ASSERT_EQ(s.queues.size(), r.metrics.queues.size()) << policy;
      EXPECT_EQ(s.bucket_s, bucket_s);
      EXPECT_EQ(s.start % bucket_s, 0);
      EXPECT_LE(s.start, TinyTrace()[0].submit_time);
      EXPECT_GT(s.start + bucket_s, TinyTrace()[0].submit_time);
      EXPECT_EQ(s.end - TinyTrace()[0].submit_time, r.metrics.makespan_s);
      const auto buckets = static_cast<size_t>((s.end - s.start + bucket_s - 1) / bucket_s);
      double received = 0;
      for (size_t q = 0; q < s.queues.size(); ++q) {
        const QueueSeries& qs = s.queues[q];
        const QueueMetrics& qm = r.metrics.queues[q];
        EXPECT_EQ(qs.queue, qm.queue);
        EXPECT_EQ(qs.received_milli_gpu_s.size(), buckets);
        EXPECT_EQ(qs.entitled_milli_gpu_s.size(), buckets);
        // Exactly, not approximately: the totals are the sums of the buckets.
        EXPECT_EQ(static_cast<double>(Sum(qs.received_milli_gpu_s)) / 1000.0,
                  qm.received_gpu_seconds)
            << policy << " " << qm.queue;
        EXPECT_EQ(static_cast<double>(Sum(qs.entitled_milli_gpu_s)) / 1000.0,
                  qm.entitled_gpu_seconds)
            << policy << " " << qm.queue;
        EXPECT_GT(qm.entitled_gpu_seconds, 0);
        received += qm.received_gpu_seconds;
        // No bucket holds more than the pool for its width.
        for (size_t k = 0; k < buckets; ++k) {
          EXPECT_LE(qs.received_milli_gpu_s[k], 16 * 1000 * bucket_s);
          EXPECT_GE(qs.received_milli_gpu_s[k], 0);
        }
      }
      // Nothing is preempted away in las-free and fifo: held GPU-seconds = the work.
      if (std::string(policy) == "fifo") {
        EXPECT_EQ(received, 8.0 * 5000 + 8 * 7000 + 4 * 900 + 2 * 4000 + 16 * 3000 + 100 +
                                4 * 20000 + 8 * 600);
      }
    }
  }
}

TEST(ReplaySeries, OneJobByHand) {
  // 8 GPUs from 30 to 130 with one-minute buckets from 0: 30 s, 60 s and 10 s of 8 GPUs. The
  // only queue is entitled to exactly its demand.
  const ReplayResult r = RunNamed("fifo", {J(30, 8, 100, "a")}, 60);
  ASSERT_EQ(r.series.queues.size(), 1u);
  EXPECT_EQ(r.series.start, 0);
  EXPECT_EQ(r.series.end, 130);
  const std::vector<int64_t> expected = {30 * 8000, 60 * 8000, 10 * 8000};
  EXPECT_EQ(r.series.queues[0].received_milli_gpu_s, expected);
  EXPECT_EQ(r.series.queues[0].entitled_milli_gpu_s, expected);
  EXPECT_EQ(r.jobs[0].jct_s, 100);
}

TEST(ReplaySeries, RejectsANonPositiveBucket) {
  absl::StatusOr<ReplayOptions> o = MakeReplayOptions("fifo");
  ASSERT_TRUE(o.ok());
  o->series_bucket_s = 0;
  EXPECT_FALSE(RunReplay(*o, {J(0, 1, 1, "a")}).ok());
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ReplayHtmlReport, OneChartPerQueueAndTheJctChart) {
  std::vector<ReplayRun> runs;
  for (const char* policy : {"fifo", "las", "default"}) {
    runs.push_back(ReplayRun{.label = policy, .result = RunNamed(policy, TinyTrace(), 3600)});
  }
  ReplayReportInfo info{.trace = "tiny <trace>.csv", .window = "whole trace", .pool = kTwoNodes};
  const std::string html = ReplayHtmlReport(runs, info);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  EXPECT_EQ(Count(html, "aria-label=\"queue "), 3u);
  for (const char* q : {"aaa", "bbb", "ccc"}) {
    EXPECT_NE(html.find(std::string("aria-label=\"queue ") + q + "\""), std::string::npos) << q;
  }
  EXPECT_EQ(Count(html, "aria-label=\"JCT distribution (CDF)\""), 1u);
  // Per queue chart: one received and one entitled line per run; two CDF charts of 3 lines.
  EXPECT_EQ(Count(html, "<polyline"), 3u * 3 * 2 + 2 * 3);
  // Every line is clipped to its plot area.
  for (size_t at = html.find("<polyline"); at != std::string::npos;
       at = html.find("<polyline", at + 1)) {
    const std::string element = html.substr(at, html.find("/>", at) - at);
    EXPECT_NE(element.find("clip-path=\"url(#clip-"), std::string::npos) << element;
  }
  // No scripts, names escaped, every E2 metric in the table.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("tiny &lt;trace&gt;.csv"), std::string::npos);
  for (const char* header :
       {"JCT mean", "JCT p50", "JCT p99", "queue delay mean", "queue delay p99", "makespan",
        "utilization", "preemptions", "GPU-hours lost", "Jain fairness", "max wait"}) {
    EXPECT_NE(html.find(std::string("<th>") + header + "</th>"), std::string::npos) << header;
  }
  for (const char* policy : {"fifo", "las", "default"}) {
    EXPECT_NE(html.find(std::string(policy) + " received"), std::string::npos) << policy;
  }
}

TEST(ReplayHtmlReport, SameBytesTwice) {
  const ReplayReportInfo info{.trace = "t.csv", .window = "", .pool = kTwoNodes};
  const std::string a = ReplayHtmlReport(RunNamed("default", TinyTrace(), 3600), info);
  const std::string b = ReplayHtmlReport(RunNamed("default", TinyTrace(), 3600), info);
  EXPECT_EQ(a, b);
  EXPECT_EQ(Count(a, "aria-label=\"queue "), 3u);
}

TEST(ReplayHtmlReport, EmptyRunsAndEmptyTraceStillMakeAPage) {
  const std::string none = ReplayHtmlReport(std::vector<ReplayRun>{}, ReplayReportInfo{});
  EXPECT_NE(none.find("</html>"), std::string::npos);
  const std::string empty = ReplayHtmlReport(RunNamed("fifo", {}, 3600), ReplayReportInfo{});
  EXPECT_NE(empty.find("</html>"), std::string::npos);
  EXPECT_EQ(empty.find("nan"), std::string::npos);
  EXPECT_EQ(empty.find("inf"), std::string::npos);
}

}  // namespace
}  // namespace gpupool::sim
