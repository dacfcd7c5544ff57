// Failures and repairs in the replay (ReplayOptions::failures, docs/replay.md "Failures and
// repairs"): exact outcomes of injected failures worked out by hand, then on seeded random
// traces that every job completes, the ledger's identities, determinism (same seed, same bytes;
// shuffled input, same outcome), that failures off change nothing, the drawn rates, and one
// test per kind of bad failure model.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "gpupool/sim/replay.h"
#include "gpupool/sim/replay_report.h"
#include "gpupool/sim/rng.h"
#include "gtest/gtest.h"
#include "tests/sim/replay_testing.h"

namespace gpupool::sim {
namespace {

using testing_replay::ExpectLedgerIdentities;
using testing_replay::J;
using testing_replay::kOneNode;
using testing_replay::Named;

// The hand-worked cases depend on the order and placement: first come, first served, best fit.
ReplayOptions Fifo(ReplayPool pool) {
  ReplayOptions o = Named("fifo", pool);
  o.policy.job_order = JobOrder::kPriorityFifo;
  o.policy.queue_order = QueueOrder::kNone;
  o.policy.placement = PlacementStrategy::kBestFit;
  return o;
}

TEST(ReplayFailures, NodeFailureByHand) {
  // One 4-GPU job of 5,000 s on a node of 8 GPUs. The node fails at 2,000 s and is repaired
  // 600 s later. The job had 2,000 s of work, its last checkpoint at 1,800 s: it keeps 1,800 and
  // loses 200 s on 4 GPUs. It restarts at 2,600, pays the 60 s restore and runs the 3,200 s
  // left: done at 5,860.
  ReplayOptions o = Fifo(kOneNode);
  o.failures.repair_s = 600;
  o.failures.injected = {ReplayInjectedFailure{.time = 2000, .node = 0, .gpu = -1}};
  auto r = RunReplay(o, {J(0, 4, 5000, "a")});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->jobs[0].first_start, 0);
  EXPECT_EQ(r->jobs[0].completion, 5860);
  EXPECT_EQ(r->jobs[0].failures, 1);
  EXPECT_EQ(r->jobs[0].preemptions, 0);
  // Pending from 2,000 to 2,600.
  EXPECT_EQ(r->jobs[0].pending_s, 600);
  const ReplayMetrics& m = r->metrics;
  EXPECT_TRUE(m.failures_on);
  EXPECT_EQ(m.gpu_failures, 0);
  EXPECT_EQ(m.node_failures, 1);
  EXPECT_EQ(m.failure_stops, 1);
  EXPECT_DOUBLE_EQ(m.gpu_hours_lost_to_failures, 4.0 * (200 + 60) / 3600);
  EXPECT_DOUBLE_EQ(m.gpu_hours_under_repair, 8.0 * 600 / 3600);
  EXPECT_DOUBLE_EQ(m.node_hours_under_repair, 600.0 / 3600);
  EXPECT_EQ(m.preemptions, 0);
  EXPECT_DOUBLE_EQ(m.gpu_hours_lost_to_preemption, 0);
  // The ledger: 200 s x 4 GPUs lost to the failure, 60 s x 4 of restore, the 5,000 s of work
  // productive; the node under repair stays in the capacity, idle.
  const LedgerReport& l = r->ledger;
  EXPECT_EQ(l.end_time, 5860);
  EXPECT_EQ(l.pool.capacity, 8 * 1000 * 5860);
  EXPECT_EQ(l.pool.time.work.lost_to_failure, 4 * 1000 * 200);
  EXPECT_EQ(l.pool.time.work.restore, 4 * 1000 * 60);
  EXPECT_EQ(l.pool.time.work.productive, 4 * 1000 * 5000);
  EXPECT_EQ(l.pool.time.work.lost_to_preemption, 0);
  ASSERT_EQ(l.jobs.size(), 1u);
  EXPECT_EQ(l.jobs[0].failures, 1);
  EXPECT_EQ(l.jobs[0].runs, 2);
  ExpectLedgerIdentities(l);
}

TEST(ReplayFailures, GpuFailureByHand) {
  // An 8-GPU job of 5,000 s holds the whole node; GPU 5 fails at 4,000 s for 1,000 s. The job
  // keeps 3,600 s (checkpoint at 3,600), loses 400 s on 8 GPUs, and needs all 8 GPUs again: it
  // waits for the repair at 5,000, restores 60 s and runs 1,400 s: done at 6,460. A 4-GPU job
  // arriving at 4,500 fits on the 7 GPUs in service and runs 4,500..4,600.
  ReplayOptions o = Fifo(kOneNode);
  o.failures.repair_s = 1000;
  o.failures.injected = {ReplayInjectedFailure{.time = 4000, .node = 0, .gpu = 5}};
  auto r = RunReplay(o, {J(0, 8, 5000, "a"), J(4500, 4, 100, "b")});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->jobs[0].completion, 6460);
  EXPECT_EQ(r->jobs[0].failures, 1);
  EXPECT_EQ(r->jobs[1].first_start, 4500);
  EXPECT_EQ(r->jobs[1].completion, 4600);
  EXPECT_EQ(r->jobs[1].failures, 0);
  EXPECT_EQ(r->metrics.gpu_failures, 1);
  EXPECT_EQ(r->metrics.node_failures, 0);
  EXPECT_DOUBLE_EQ(r->metrics.gpu_hours_lost_to_failures, 8.0 * (400 + 60) / 3600);
  EXPECT_DOUBLE_EQ(r->metrics.gpu_hours_under_repair, 1000.0 / 3600);
  EXPECT_DOUBLE_EQ(r->metrics.node_hours_under_repair, 0);
  EXPECT_EQ(r->ledger.pool.time.work.lost_to_failure, 8 * 1000 * 400);
  ExpectLedgerIdentities(r->ledger);
}

TEST(ReplayFailures, FailureDuringRestoreAndOnIdleGpu) {
  // A failure of a GPU no job holds stops nothing; a second failure of the job's node during
  // its restore loses no work (none done since the checkpoint it resumed from) but the restore
  // is paid again. Job: 4 GPUs... the whole node: 8 GPUs, 4,000 s.
  //   1,000: node fails (repair 100 s): kept 0 (no checkpoint yet), lost 1,000 s.
  //   1,100: restart, restore until 1,160; 1,130: node fails again: lost 0 work, 30 s of
  //   restore spent; back at 1,230, restore 60, 4,000 s of work: done at 5,290.
  ReplayOptions o = Fifo(kOneNode);
  o.failures.repair_s = 100;
  o.failures.injected = {ReplayInjectedFailure{.time = 1000, .node = 0, .gpu = -1},
                         ReplayInjectedFailure{.time = 1130, .node = 0, .gpu = -1}};
  auto r = RunReplay(o, {J(0, 8, 4000, "a")});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->jobs[0].completion, 5290);
  EXPECT_EQ(r->jobs[0].failures, 2);
  EXPECT_EQ(r->metrics.node_failures, 2);
  EXPECT_EQ(r->ledger.pool.time.work.lost_to_failure, 8 * 1000 * 1000);
  EXPECT_EQ(r->ledger.pool.time.work.restore, 8 * 1000 * (30 + 60));
  ExpectLedgerIdentities(r->ledger);

  // A GPU failure on a node where the job holds GPUs 0..3 only: with first-fit packing the job
  // takes the lowest indices, so GPU 7 failing stops nothing.
  ReplayOptions idle = Fifo(kOneNode);
  idle.policy.placement = PlacementStrategy::kFirstFit;
  idle.failures.injected = {ReplayInjectedFailure{.time = 10, .node = 0, .gpu = 7}};
  auto q = RunReplay(idle, {J(0, 4, 100, "a")});
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(q->metrics.gpu_failures, 1);
  EXPECT_EQ(q->metrics.failure_stops, 0);
  EXPECT_EQ(q->jobs[0].completion, 100);
}

TEST(ReplayFailures, LasFreeFailureLosesSinceTheRealCheckpoint) {
  // Under las-free a preemption keeps everything, but a failure is never free: it keeps the
  // work of the last checkpoint (1,800 s here) and pays the 60 s restore.
  ReplayOptions o = Named("las-free", kOneNode);
  o.failures.repair_s = 100;
  o.failures.injected = {ReplayInjectedFailure{.time = 2500, .node = 0, .gpu = -1}};
  auto r = RunReplay(o, {J(0, 8, 3000, "a")});
  ASSERT_TRUE(r.ok()) << r.status();
  // 2,500 - 1,800 = 700 s lost; back at 2,600, restore to 2,660, 1,200 s left: 3,860.
  EXPECT_EQ(r->jobs[0].completion, 3860);
  EXPECT_EQ(r->ledger.pool.time.work.lost_to_failure, 8 * 1000 * 700);
  ExpectLedgerIdentities(r->ledger);
}

std::vector<TraceJob> RandomTrace(uint64_t seed, int n, bool distinct_submits) {
  Rng rng(seed);
  std::vector<TraceJob> jobs;
  for (int i = 0; i < n; ++i) {
    const int32_t gpus = std::vector<int32_t>{1, 2, 4, 8, 16}[rng.Uniform(5)];
    const int64_t submit = distinct_submits ? i * 997 + static_cast<int64_t>(rng.Uniform(900))
                                            : static_cast<int64_t>(rng.Uniform(20000));
    jobs.push_back(J(submit, gpus, 1 + static_cast<int64_t>(rng.Uniform(30000)),
                     std::string(1, static_cast<char>('a' + rng.Uniform(3)))));
  }
  return jobs;
}

// A failure model that hits often on a small pool: 20 GPU and 20 node failures per 1,000
// unit-days, 2 h repairs (a rack of 16 GPUs: 16 x 0.04 x 1/12 = 0.05 GPUs under repair).
ReplayFailures Frequent(uint64_t seed) {
  return ReplayFailures{.gpu_per_million_gpu_days = 20'000,
                        .node_per_million_node_days = 20'000,
                        .repair_s = 7200,
                        .seed = seed};
}

TEST(ReplayFailures, EveryJobCompletesAndTheLedgerHoldsOnRandomTraces) {
  const ReplayPool pool{.nodes = 2, .gpus_per_node = 8, .nodes_per_rack = 2};
  int64_t runs_with_loss = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const std::vector<TraceJob> jobs = RandomTrace(seed, 30, false);
    int64_t work = 0;
    for (const TraceJob& j : jobs) work += j.duration_s * j.num_gpus * 1000;
    for (const std::string& name : ReplayPolicyNames()) {
      SCOPED_TRACE(testing::Message() << "seed " << seed << " policy " << name);
      ReplayOptions o = Named(name, pool);
      o.failures = Frequent(seed);
      auto r = RunReplay(o, jobs);
      ASSERT_TRUE(r.ok()) << r.status();
      const ReplayMetrics& m = r->metrics;
      EXPECT_EQ(m.jobs_completed, m.jobs);
      for (const JobOutcome& out : r->jobs) EXPECT_GE(out.completion, 0);
      const LedgerReport& l = r->ledger;
      ExpectLedgerIdentities(l);
      // Every job ran its whole duration productively exactly once, whatever it lost.
      EXPECT_EQ(l.pool.time.work.productive, work);
      int64_t failures = 0;
      for (const JobLedger& j : l.jobs) failures += j.failures;
      EXPECT_EQ(failures, m.failure_stops);
      // The metric counts each stop's lost work and the restore it will pay; the ledger's
      // lost_to_failure is the work part alone.
      EXPECT_LE(static_cast<double>(l.pool.time.work.lost_to_failure),
                m.gpu_hours_lost_to_failures * 3600 * 1000 + 1e-3);
      EXPECT_EQ(m.failure_stops > 0, m.gpu_hours_lost_to_failures > 0);
      // Out of service at most the repair time of each failure, a node's failure for its GPUs.
      EXPECT_LE(m.gpu_hours_under_repair, (m.gpu_failures + 8.0 * m.node_failures) * 2 + 1e-9);
      EXPECT_LE(m.node_hours_under_repair, m.node_failures * 2.0 + 1e-9);
      EXPECT_EQ(m.gpu_failures + m.node_failures > 0, m.gpu_hours_under_repair > 0);
      runs_with_loss += l.pool.time.work.lost_to_failure > 0 ? 1 : 0;
    }
  }
  // The rates are high enough that most runs lose work (so the checks above see failures).
  EXPECT_GE(runs_with_loss, 20);
}

std::string Bytes(const ReplayResult& r) {
  const LedgerReport& l = r.ledger;
  return ReplayMetricsToJson(r.metrics) +
         fmt::format("{} {} {} {} {} {}\n", l.pool.capacity, l.pool.idle,
                     l.pool.time.work.productive, l.pool.time.work.lost_to_preemption,
                     l.pool.time.work.lost_to_failure, l.pool.time.work.restore);
}

TEST(ReplayFailures, SameSeedSameBytesOtherSeedOtherFailures) {
  const ReplayPool pool{.nodes = 4, .gpus_per_node = 8, .nodes_per_rack = 2};
  const std::vector<TraceJob> jobs = RandomTrace(5, 60, false);
  for (const std::string& name : {std::string("fifo"), std::string("default")}) {
    ReplayOptions o = Named(name, pool);
    o.failures = Frequent(42);
    auto a = RunReplay(o, jobs);
    auto b = RunReplay(o, jobs);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(Bytes(*a), Bytes(*b)) << name;
    EXPECT_NE(Bytes(*a).find("\"failures\": {"), std::string::npos);
    o.failures.seed = 43;
    auto c = RunReplay(o, jobs);
    ASSERT_TRUE(c.ok());
    EXPECT_NE(Bytes(*a), Bytes(*c)) << name;
  }
}

TEST(ReplayFailures, ShuffledInputSameOutcome) {
  // Distinct submit times (ties would go by input order) under fifo: the same metrics bytes,
  // ledger totals and per-job outcomes, whatever the order of the input lines. The failures
  // depend on the seed and the pool alone, never on the jobs. (Under the preemptive policies the
  // replay depends on the input order already without failures: job ids, which the engine's
  // comparators end on, are given in input order; docs/replay.md.)
  const ReplayPool pool{.nodes = 4, .gpus_per_node = 8, .nodes_per_rack = 2};
  const std::vector<TraceJob> jobs = RandomTrace(9, 50, true);
  std::vector<size_t> order(jobs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  Rng rng(77);
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.Uniform(i)]);
  std::vector<TraceJob> shuffled;
  for (size_t i : order) shuffled.push_back(jobs[i]);
  {
    ReplayOptions o = Fifo(pool);
    o.failures = Frequent(3);
    auto a = RunReplay(o, jobs);
    auto b = RunReplay(o, shuffled);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_GT(a->metrics.failure_stops, 0);
    EXPECT_EQ(Bytes(*a), Bytes(*b));
    for (size_t k = 0; k < order.size(); ++k) {
      EXPECT_EQ(a->jobs[order[k]].completion, b->jobs[k].completion) << k;
      EXPECT_EQ(a->jobs[order[k]].failures, b->jobs[k].failures) << k;
    }
  }
}

TEST(ReplayFailures, OffChangesNothing) {
  // Rates 0 and nothing injected: the other settings of the model are ignored, and the result
  // is the replay without failures, byte for byte, with no "failures" member in the JSON.
  const ReplayPool pool{.nodes = 2, .gpus_per_node = 8, .nodes_per_rack = 2};
  const std::vector<TraceJob> jobs = RandomTrace(4, 30, false);
  for (const std::string& name : ReplayPolicyNames()) {
    ReplayOptions plain = Named(name, pool);
    ReplayOptions off = plain;
    off.failures.seed = 99;
    off.failures.repair_s = 5;
    auto a = RunReplay(plain, jobs);
    auto b = RunReplay(off, jobs);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(Bytes(*a), Bytes(*b)) << name;
    EXPECT_EQ(Bytes(*a).find("failures"), std::string::npos) << name;
    EXPECT_FALSE(a->metrics.failures_on);
    EXPECT_EQ(a->ledger.pool.time.work.lost_to_failure, 0);
  }
}

TEST(ReplayFailures, DrawnRatesMatchTheModel) {
  // 512 GPUs and 64 nodes for 200 days (one 1-GPU job keeps the replay going), 10 failures per
  // 1,000 GPU-days and per 1,000 node-days, 24 h repairs: about 1,024 GPU failures (sd 32) and
  // 128 node failures (sd 11), a little fewer since failures of GPUs and nodes out of service
  // are dropped (0.4% of GPUs and 1% of nodes are under repair at a time).
  ReplayOptions o = Named("fifo", ReplayPool{});
  o.failures = ReplayFailures{.gpu_per_million_gpu_days = 10'000,
                              .node_per_million_node_days = 10'000,
                              .repair_s = 86400,
                              .seed = 11};
  auto r = RunReplay(o, {J(0, 1, 200 * 86400, "a")});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->metrics.jobs_completed, 1);
  EXPECT_GT(r->metrics.gpu_failures, 1024 - 4 * 32);
  EXPECT_LT(r->metrics.gpu_failures, 1024 + 4 * 32);
  EXPECT_GT(r->metrics.node_failures, 128 - 4 * 11);
  EXPECT_LT(r->metrics.node_failures, 128 + 4 * 11);
  // Each failure is out of service exactly 24 h, except those cut by the end of the replay.
  const double hours = r->metrics.gpu_hours_under_repair;
  EXPECT_LE(hours, 24.0 * (r->metrics.gpu_failures + 8 * r->metrics.node_failures));
  EXPECT_GE(hours, 24.0 * (r->metrics.gpu_failures + 8 * r->metrics.node_failures) - 24.0 * 200);
}

TEST(ReplayFailures, HtmlReportHasTheFailureTableOnlyWithFailures) {
  ReplayOptions o = Fifo(kOneNode);
  o.failures.repair_s = 600;
  o.failures.injected = {ReplayInjectedFailure{.time = 2000, .node = 0, .gpu = -1}};
  auto with = RunReplay(o, {J(0, 4, 5000, "a")});
  auto without = RunReplay(Fifo(kOneNode), {J(0, 4, 5000, "a")});
  ASSERT_TRUE(with.ok() && without.ok());
  ReplayReportInfo info;
  info.pool = kOneNode;
  const std::string html = ReplayHtmlReport(*with, info);
  // The node failure of NodeFailureByHand: 1 node failure, 1 run stopped, 4 x 260 s lost, 8 GPUs
  // x 600 s and 1 node x 600 s under repair.
  EXPECT_NE(html.find("<h3>Failures and repairs</h3>"), std::string::npos);
  EXPECT_NE(html.find("<td>0.000 / 0.000</td><td>0.2 h</td><td>1</td><td>0</td><td>1</td>"
                      "<td>1</td><td>0.3</td><td>1.3</td><td>0.2</td>"),
            std::string::npos)
      << html;
  EXPECT_EQ(ReplayHtmlReport(*without, info).find("Failures and repairs"), std::string::npos);
}

TEST(ReplayFailures, BadModelsAreRefused) {
  const std::vector<TraceJob> jobs = {J(100, 1, 10, "a")};
  auto refused = [&](ReplayOptions o, const std::string& message) {
    auto r = RunReplay(o, jobs);
    ASSERT_FALSE(r.ok()) << message;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(message), std::string_view::npos) << r.status();
  };
  const ReplayOptions base = Named("fifo", ReplayPool{});
  ReplayOptions o = base;
  o.failures.gpu_per_million_gpu_days = -1;
  refused(o, "failures.gpu_per_million_gpu_days: must be in [0, 100000]");
  o = base;
  o.failures.gpu_per_million_gpu_days = 100'001;
  refused(o, "failures.gpu_per_million_gpu_days");
  o = base;
  o.failures.node_per_million_node_days = -5;
  refused(o, "failures.node_per_million_node_days");
  o = base;
  o.failures.repair_s = 0;
  refused(o, "failures.repair_s: must be in [1, 31536000]");
  o = base;
  o.failures.repair_s = 8761 * 3600;
  refused(o, "failures.repair_s");
  o = base;
  o.failures.injected = {ReplayInjectedFailure{.time = 99, .node = 0, .gpu = 0}};
  refused(o, "failures.injected[0].time: 99 is before the first arrival 100");
  o.failures.injected = {ReplayInjectedFailure{.time = 100, .node = 64, .gpu = 0}};
  refused(o, "failures.injected[0].node: 64 is not a node of the pool (0..63)");
  o.failures.injected = {ReplayInjectedFailure{.time = 100, .node = 0, .gpu = 8}};
  refused(o, "failures.injected[0].gpu: 8 is not a GPU");
  o.failures.injected = {ReplayInjectedFailure{.time = 100, .node = 0, .gpu = -2}};
  refused(o, "failures.injected[0].gpu: -2");
  o = base;
  o.failures.gpu_per_million_gpu_days = 303;
  o.checkpoint_interval_s = 0;
  refused(o, "failures: need checkpoint_interval_s > 0");
  // A rack of 128 GPUs, 10 + 10 per 1,000 unit-days and 30-day repairs: 128 x 0.02 x 30 = 76.8
  // GPUs under repair on average.
  o = base;
  o.failures.gpu_per_million_gpu_days = 10'000;
  o.failures.node_per_million_node_days = 10'000;
  o.failures.repair_s = 30 * 86400;
  refused(o, "a rack of 128 GPUs would have 76.80 GPUs under repair on average");
  // The published rates with two-week repairs pass (128 x 0.000782 x 14 = 1.40).
  o.failures.gpu_per_million_gpu_days = kPublishedGpuFailuresPerMillionGpuDays;
  o.failures.node_per_million_node_days = kPublishedNodeFailuresPerMillionNodeDays;
  o.failures.repair_s = 14 * 86400;
  EXPECT_TRUE(RunReplay(o, jobs).ok());
}

}  // namespace
}  // namespace gpupool::sim
