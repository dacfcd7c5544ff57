// Maintenance windows, spot reclaims and scaling from the engine's advice in the replay
// (ReplayOptions::maintenance, spot, scaling; docs/replay.md "Maintenance, spot reclaims and
// scaling"): exact outcomes worked out by hand, then on seeded random traces with all three on
// that every job completes and the ledger's identities hold, determinism (same options, same
// bytes; shuffled input, same outcome), and one test per kind of bad option.
#include <algorithm>
#include <cstdint>
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

constexpr ReplayPool kTwoNodes{.nodes = 2, .gpus_per_node = 8, .nodes_per_rack = 2};

TEST(ReplayMaintenance, WindowStopsTheJobsThereByHand) {
  // A 4-GPU job of 5,000 s on the one node. A window [2,000, 2,600) announced at its start
  // (notice 0): at 2,000 the engine stops the job (work 2,000, checkpoint at 1,800: it keeps
  // 1,800 and loses 200 s on 4 GPUs, plus the 60 s restore). Nothing starts in the window; at
  // 2,600 the job restarts, restores 60 s and runs the 3,200 s left: done at 5,860.
  ReplayOptions o = Named("fifo", kOneNode);
  o.maintenance.notice_s = 0;
  o.maintenance.windows = {ReplayMaintenanceWindow{.node = 0, .start = 2000, .end = 2600}};
  auto r = RunReplay(o, {J(0, 4, 5000, "a")});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->jobs[0].first_start, 0);
  EXPECT_EQ(r->jobs[0].completion, 5860);
  EXPECT_EQ(r->jobs[0].pending_s, 600);
  EXPECT_EQ(r->jobs[0].preemptions, 1);
  const ReplayMetrics& m = r->metrics;
  EXPECT_TRUE(m.maintenance_on);
  EXPECT_EQ(m.maintenance_windows, 1);
  EXPECT_EQ(m.maintenance_stops, 1);
  EXPECT_DOUBLE_EQ(m.gpu_hours_lost_to_maintenance, 4.0 * (200 + 60) / 3600);
  EXPECT_DOUBLE_EQ(m.node_hours_under_maintenance, 600.0 / 3600);
  // Not a preemption: nothing was stopped for another job.
  EXPECT_EQ(m.preemptions, 0);
  EXPECT_DOUBLE_EQ(m.gpu_hours_lost_to_preemption, 0);
  // The ledger counts the stop's lost work with preemptions (it has no maintenance category).
  EXPECT_EQ(r->ledger.pool.time.work.lost_to_preemption, 4 * 1000 * 200);
  EXPECT_EQ(r->ledger.pool.time.work.restore, 4 * 1000 * 60);
  ExpectLedgerIdentities(r->ledger);
}

TEST(ReplayMaintenance, AnnouncedWindowKeepsLongJobsOffByHand) {
  // A window [3,000, 4,000) announced 10,000 s ahead, so at 0 already. The 1,000 s job ends
  // before it and starts at once; the 5,000 s job would run into it and waits for its end (the
  // node is the only one), then runs 4,000..9,000. Nothing is stopped.
  ReplayOptions o = Named("fifo", kOneNode);
  o.maintenance.notice_s = 10000;
  o.maintenance.windows = {ReplayMaintenanceWindow{.node = 0, .start = 3000, .end = 4000}};
  auto r = RunReplay(o, {J(0, 4, 1000, "a"), J(0, 4, 5000, "b")});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->jobs[0].first_start, 0);
  EXPECT_EQ(r->jobs[0].completion, 1000);
  EXPECT_EQ(r->jobs[1].first_start, 4000);
  EXPECT_EQ(r->jobs[1].completion, 9000);
  EXPECT_EQ(r->metrics.maintenance_stops, 0);
  EXPECT_EQ(r->metrics.maintenance_windows, 1);
  EXPECT_DOUBLE_EQ(r->metrics.node_hours_under_maintenance, 1000.0 / 3600);
}

TEST(ReplayMaintenance, RollingWindowsTakeTurns) {
  // Two nodes, each down 1 h every 10 h, node 1 five hours after node 0; announced 1 h ahead.
  // Over the 30 h of one job per node of 8 GPUs x 20 h (with stops and restarts), the windows
  // that start before the last completion are counted, each a whole hour unless cut by the end.
  ReplayOptions o = Named("fifo", kTwoNodes);
  o.maintenance.every_s = 36000;
  o.maintenance.duration_s = 3600;
  o.maintenance.notice_s = 3600;
  auto r = RunReplay(o, {J(0, 8, 72000, "a"), J(0, 8, 72000, "b")});
  ASSERT_TRUE(r.ok()) << r.status();
  const ReplayMetrics& m = r->metrics;
  EXPECT_EQ(m.jobs_completed, 2);
  EXPECT_GT(m.maintenance_windows, 2);
  EXPECT_GT(m.maintenance_stops, 0);
  // At most one node in a window at a time (the turns are 5 h apart, each 1 h long).
  EXPECT_LE(m.node_hours_under_maintenance, m.maintenance_windows * 1.0 + 1e-9);
  EXPECT_GE(m.node_hours_under_maintenance, (m.maintenance_windows - 2) * 1.0 - 1e-9);
  ExpectLedgerIdentities(r->ledger);
}

TEST(ReplaySpot, ReclaimedNodesJobsCheckpointAndWaitByHand) {
  // Two nodes, n001 spot. Two 8-GPU jobs of 5,000 s start at 0, j1 on n001 (best fit, ties in
  // node order). At 2,000 the provider announces it takes n001 back in 120 s: the engine stops
  // j1, which checkpoints on demand and keeps its 2,000 s (losing only the 60 s restore it will
  // pay); n000 is full, so j1 waits. The node is taken at 2,120 and back 1,000 s later, at
  // 3,120: j1 restores 60 s and runs the 3,000 s left, done at 6,180.
  ReplayOptions o = Named("fifo", kTwoNodes);
  o.spot.nodes = 1;
  o.spot.away_s = 1000;
  o.spot.injected = {ReplayInjectedReclaim{.time = 2000, .node = 1}};
  auto r = RunReplay(o, {J(0, 8, 5000, "a"), J(0, 8, 5000, "b")});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->jobs[0].completion, 5000);
  EXPECT_EQ(r->jobs[1].completion, 6180);
  EXPECT_EQ(r->jobs[1].preemptions, 1);
  const ReplayMetrics& m = r->metrics;
  EXPECT_TRUE(m.spot_on);
  EXPECT_EQ(m.spot_reclaims, 1);
  EXPECT_EQ(m.spot_stops, 1);
  EXPECT_DOUBLE_EQ(m.gpu_hours_lost_to_spot, 8.0 * 60 / 3600);
  EXPECT_DOUBLE_EQ(m.node_hours_reclaimed, 1000.0 / 3600);
  EXPECT_EQ(m.preemptions, 0);
  EXPECT_EQ(r->ledger.pool.time.work.lost_to_preemption, 0);
  EXPECT_EQ(r->ledger.pool.time.work.restore, 8 * 1000 * 60);
  ExpectLedgerIdentities(r->ledger);
}

TEST(ReplaySpot, ReclaimedJobMovesWhenItFitsByHand) {
  // Two nodes, n001 spot. x (8 GPUs, 1,000 s) takes n000 at 0, y (4 GPUs, 5,000 s) n001. x ends
  // at 1,000. At 2,000 n001 is reclaimed: the engine stops y (it checkpoints on demand and keeps
  // its 2,000 s) and starts it on n000 in the same cycle; it restores 60 s and runs the 3,000 s
  // left: done at 5,060, without waiting.
  ReplayOptions o = Named("fifo", kTwoNodes);
  o.spot.nodes = 1;
  o.spot.injected = {ReplayInjectedReclaim{.time = 2000, .node = 1}};
  auto r = RunReplay(o, {J(0, 8, 1000, "a"), J(0, 4, 5000, "b")});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->jobs[0].completion, 1000);
  EXPECT_EQ(r->jobs[1].completion, 5060);
  EXPECT_EQ(r->jobs[1].pending_s, 0);
  EXPECT_EQ(r->jobs[1].preemptions, 1);
  EXPECT_EQ(r->metrics.spot_reclaims, 1);
  EXPECT_EQ(r->metrics.spot_stops, 1);
  EXPECT_DOUBLE_EQ(r->metrics.gpu_hours_lost_to_spot, 4.0 * 60 / 3600);
  ExpectLedgerIdentities(r->ledger);
}

TEST(ReplayScaling, AdviceAddsANodeAndReleasesItByHand) {
  // One node of 8 GPUs; the pool may add 2. Two 8-GPU jobs at 0: j0 starts, j1 waits, and the
  // advice says add one node; it joins at 600 and j1 starts there, done at 5,600. At that
  // completion the added node is idle and the advice releases it. j0 ends at 10,000.
  ReplayOptions o = Named("fifo", kOneNode);
  o.scaling.max_nodes = 2;
  o.scaling.cost_per_hour_micro = 3'000'000;
  o.scaling.provision_s = 600;
  o.scaling.advice_every_s = 1;
  auto r = RunReplay(o, {J(0, 8, 10000, "a"), J(0, 8, 5000, "b")});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->jobs[0].completion, 10000);
  EXPECT_EQ(r->jobs[1].first_start, 600);
  EXPECT_EQ(r->jobs[1].completion, 5600);
  const ReplayMetrics& m = r->metrics;
  EXPECT_TRUE(m.scaling_on);
  EXPECT_EQ(m.nodes_added, 1);
  EXPECT_EQ(m.nodes_released, 1);
  EXPECT_EQ(m.max_added_nodes, 1);
  EXPECT_DOUBLE_EQ(m.added_node_hours, 5000.0 / 3600);
  EXPECT_DOUBLE_EQ(m.scale_cost, 5000.0 / 3600 * 3);
  // Utilization over the capacity that was there: 8 x 10,000 + 8 x 5,000 GPU-seconds, all busy
  // but the added node's first... all of it busy: j0 10,000 s, j1 5,000 s on 8 GPUs each.
  EXPECT_DOUBLE_EQ(m.utilization, 1.0);
  ExpectLedgerIdentities(r->ledger);
}

TEST(ReplayPoolOperations, HtmlReportHasTheTableOnlyWithThem) {
  ReplayOptions o = Named("fifo", kOneNode);
  o.maintenance.notice_s = 0;
  o.maintenance.windows = {ReplayMaintenanceWindow{.node = 0, .start = 2000, .end = 2600}};
  auto with = RunReplay(o, {J(0, 4, 5000, "a")});
  auto without = RunReplay(Named("fifo", kOneNode), {J(0, 4, 5000, "a")});
  ASSERT_TRUE(with.ok() && without.ok());
  ReplayReportInfo info;
  info.pool = kOneNode;
  const std::string html = ReplayHtmlReport(*with, info);
  // WindowStopsTheJobsThereByHand: 1 window, 1 run stopped, 4 x 260 s lost, 600 s in the window;
  // spot and scaling off.
  EXPECT_NE(html.find("<h3>Maintenance, spot reclaims and scaling</h3>"), std::string::npos);
  EXPECT_NE(html.find("<td>1</td><td>1</td><td>0.3</td><td>0.2</td><td>-</td>"), std::string::npos)
      << html;
  EXPECT_EQ(ReplayHtmlReport(*without, info).find("Maintenance, spot"), std::string::npos);
}

std::vector<TraceJob> RandomTrace(uint64_t seed, int n) {
  Rng rng(seed);
  std::vector<TraceJob> jobs;
  for (int i = 0; i < n; ++i) {
    const int32_t gpus = std::vector<int32_t>{1, 2, 4, 8, 16}[rng.Uniform(5)];
    jobs.push_back(J(static_cast<int64_t>(rng.Uniform(40000)), gpus,
                     1 + static_cast<int64_t>(rng.Uniform(30000)),
                     std::string(1, static_cast<char>('a' + rng.Uniform(3)))));
  }
  return jobs;
}

// All three on a pool of 4 nodes of 8 in racks of 2: rolling windows every 20 h of 2 h,
// announced 2 h ahead (a rack's two nodes 5 h apart: 5 + 2 + 2 < 20), one spot node reclaimed
// about every 4 days (and once at a known time), up to 2 added nodes.
ReplayOptions AllOn(const std::string& name, uint64_t seed) {
  ReplayOptions o = Named(name, ReplayPool{.nodes = 4, .gpus_per_node = 8, .nodes_per_rack = 2});
  o.maintenance.every_s = 72000;
  o.maintenance.duration_s = 7200;
  o.maintenance.notice_s = 7200;
  o.spot.nodes = 1;
  o.spot.reclaims_per_million_node_days = 250'000;
  o.spot.away_s = 3600;
  o.spot.seed = seed;
  o.spot.injected = {ReplayInjectedReclaim{.time = 30000, .node = 3}};
  o.scaling.max_nodes = 2;
  o.scaling.advice_every_s = 1800;
  o.scaling.max_simulations = 8;
  return o;
}

TEST(ReplayPoolOperations, EveryJobCompletesAndTheLedgerHoldsOnRandomTraces) {
  int64_t with_maintenance_stops = 0, with_spot_stops = 0, with_added = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const std::vector<TraceJob> jobs = RandomTrace(seed, 30);
    int64_t work = 0;
    for (const TraceJob& j : jobs) work += j.duration_s * j.num_gpus * 1000;
    for (const std::string& name : ReplayPolicyNames()) {
      SCOPED_TRACE(testing::Message() << "seed " << seed << " policy " << name);
      auto r = RunReplay(AllOn(name, seed), jobs);
      ASSERT_TRUE(r.ok()) << r.status();
      const ReplayMetrics& m = r->metrics;
      EXPECT_EQ(m.jobs_completed, m.jobs);
      for (const JobOutcome& out : r->jobs) EXPECT_GE(out.completion, 0);
      ExpectLedgerIdentities(r->ledger);
      // Every job ran its whole duration productively exactly once, whatever it lost.
      EXPECT_EQ(r->ledger.pool.time.work.productive, work);
      EXPECT_LE(m.max_added_nodes, 2);
      EXPECT_LE(m.nodes_released, m.nodes_added);
      EXPECT_GE(m.spot_reclaims, 1);
      EXPECT_GT(m.maintenance_windows, 0);
      with_maintenance_stops += m.maintenance_stops > 0 ? 1 : 0;
      with_spot_stops += m.spot_stops > 0 ? 1 : 0;
      with_added += m.nodes_added > 0 ? 1 : 0;
    }
  }
  // Not vacuous: the runs above see stops and added nodes.
  EXPECT_GE(with_maintenance_stops, 6);
  EXPECT_GE(with_spot_stops, 3);
  EXPECT_GE(with_added, 6);
}

std::string Bytes(const ReplayResult& r) {
  std::string out = ReplayMetricsToJson(r.metrics);
  for (const JobOutcome& j : r.jobs) {
    out += fmt::format("{} {} {} {}\n", j.first_start, j.completion, j.pending_s, j.preemptions);
  }
  return out;
}

TEST(ReplayPoolOperations, SameOptionsSameBytesAndShuffledInputSameOutcome) {
  std::vector<TraceJob> jobs = RandomTrace(9, 40);
  for (const std::string& name : {std::string("fifo"), std::string("default")}) {
    auto a = RunReplay(AllOn(name, 3), jobs);
    auto b = RunReplay(AllOn(name, 3), jobs);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(Bytes(*a), Bytes(*b)) << name;
    EXPECT_NE(Bytes(*a).find("\"maintenance\": {"), std::string::npos);
    EXPECT_NE(Bytes(*a).find("\"spot\": {"), std::string::npos);
    EXPECT_NE(Bytes(*a).find("\"scaling\": {"), std::string::npos);
    // The same jobs in another order: job i of the result is job i of the input, so compare
    // by job, through the permutation (ties between equal submit times break by input index,
    // so only jobs with distinct submit times keep their exact outcome; all of these do).
    std::vector<size_t> order(jobs.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = order.size() - 1 - i;
    std::vector<TraceJob> reversed;
    for (size_t i : order) reversed.push_back(jobs[i]);
    std::vector<int64_t> submits;
    for (const TraceJob& j : jobs) submits.push_back(j.submit_time);
    std::sort(submits.begin(), submits.end());
    if (std::adjacent_find(submits.begin(), submits.end()) != submits.end()) continue;
    auto c = RunReplay(AllOn(name, 3), reversed);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(ReplayMetricsToJson(a->metrics), ReplayMetricsToJson(c->metrics)) << name;
    for (size_t k = 0; k < order.size(); ++k) {
      EXPECT_EQ(a->jobs[order[k]].completion, c->jobs[k].completion) << name << " job " << k;
    }
  }
}

TEST(ReplayPoolOperations, BadOptionsAreRefused) {
  const std::vector<TraceJob> jobs = {J(100, 1, 10, "a")};
  auto refused = [&](const ReplayOptions& o, const std::string& message) {
    auto r = RunReplay(o, jobs);
    ASSERT_FALSE(r.ok()) << message;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(message), std::string_view::npos) << r.status();
  };
  const ReplayOptions base = Named("fifo", ReplayPool{});
  ReplayOptions o = base;
  o.maintenance.every_s = -1;
  refused(o, "maintenance.every_s: must be in [0, 315360000]");
  o = base;
  o.maintenance.every_s = 86400;
  o.maintenance.duration_s = 86400;
  refused(o, "maintenance.duration_s: must be in (0, every_s = 86400), got 86400");
  o.maintenance.duration_s = 0;
  refused(o, "maintenance.duration_s");
  o = base;
  o.maintenance.notice_s = -1;
  refused(o, "maintenance.notice_s: must be in [0, 31622400]");
  // 64 nodes in racks of 16: a rack's windows start over 15 x 30 / 64 = 7.03 days of a 30-day
  // period; with 8 h windows, 23 days of notice leave no moment free.
  o = base;
  o.maintenance.every_s = 30 * 86400;
  o.maintenance.duration_s = 8 * 3600;
  o.maintenance.notice_s = 23 * 86400;
  refused(o, "leave no moment when a job as wide as a rack could start");
  o.maintenance.notice_s = 86400;
  EXPECT_TRUE(RunReplay(o, jobs).ok());
  o = base;
  o.maintenance.windows = {ReplayMaintenanceWindow{.node = 64, .start = 200, .end = 300}};
  refused(o, "maintenance.windows[0].node: 64 is not a node of the pool (0..63)");
  o.maintenance.windows = {ReplayMaintenanceWindow{.node = 0, .start = 99, .end = 300}};
  refused(o, "maintenance.windows[0].start: 99 is before the first arrival 100");
  o.maintenance.windows = {ReplayMaintenanceWindow{.node = 0, .start = 300, .end = 300}};
  refused(o, "maintenance.windows[0].end: must be after start (300)");
  o.maintenance.windows = {ReplayMaintenanceWindow{.node = 0, .start = 300, .end = 400}};
  o.checkpoint_interval_s = 0;
  refused(o, "maintenance: need checkpoint_interval_s > 0");

  o = base;
  o.spot.nodes = 65;
  refused(o, "spot.nodes: must be in [0, 64] (the pool's nodes), got 65");
  o.spot.nodes = -1;
  refused(o, "spot.nodes");
  o = base;
  o.spot.nodes = 4;
  o.spot.reclaims_per_million_node_days = 1'000'001;
  refused(o, "spot.reclaims_per_million_node_days: must be in [0, 1000000]");
  o.spot.reclaims_per_million_node_days = 0;
  o.spot.notice_s = 86401;
  refused(o, "spot.notice_s: must be in [0, 86400], got 86401");
  o.spot.notice_s = 120;
  o.spot.away_s = 0;
  refused(o, "spot.away_s: must be in [1, 31536000]");
  o.spot.away_s = 3600;
  o.spot.injected = {ReplayInjectedReclaim{.time = 50, .node = 63}};
  refused(o, "spot.injected[0].time: 50 is before the first arrival 100");
  o.spot.injected = {ReplayInjectedReclaim{.time = 150, .node = 59}};
  refused(o, "spot.injected[0].node: 59 is not a spot node (the spot nodes are 60..63)");

  o = base;
  o.scaling.max_nodes = 937;
  refused(o, "scaling.max_nodes: must be in [0, 936] (1,000 nodes in all), got 937");
  o.scaling.max_nodes = -1;
  refused(o, "scaling.max_nodes");
  o = base;
  o.scaling.max_nodes = 4;
  o.scaling.cost_per_hour_micro = -1;
  refused(o, "scaling.cost_per_hour_micro: must be in [0, 2^40]");
  o.scaling.cost_per_hour_micro = 0;
  o.scaling.provision_s = 86401;
  refused(o, "scaling.provision_s: must be in [0, 86400]");
  o.scaling.provision_s = 600;
  o.scaling.advice_every_s = 0;
  refused(o, "scaling.advice_every_s: must be in [1, 86400]");
  o.scaling.advice_every_s = 600;
  o.scaling.max_simulations = 0;
  refused(o, "scaling.max_simulations: must be in [1, 10000]");
  o = base;
  o.pool.nodes = 1001;
  o.pool.nodes_per_rack = 1001;
  o.spot.nodes = 1;
  refused(o, "pool.nodes: at most 1000");
}

}  // namespace
}  // namespace gpupool::sim
