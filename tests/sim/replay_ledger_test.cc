// The replay's ledger (ReplayResult::ledger, docs/accounting.md): a hand-checked preemption, and
// on seeded random traces under every policy the ledger's identities and its agreement with the
// replay's own integrals (the per-queue series of GPUs held).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gpupool/chargeback.h"
#include "gpupool/pooling.h"
#include "gpupool/sim/replay.h"
#include "gpupool/sim/replay_report.h"
#include "gpupool/sim/rng.h"
#include "gtest/gtest.h"
#include "tests/sim/replay_testing.h"

namespace gpupool::sim {
namespace {

using testing_replay::J;
using testing_replay::kOneNode;
using testing_replay::Named;

TEST(ReplayLedger, FifoIsAllProductive) {
  // Two 4-GPU jobs of two clusters side by side on one node, 100 s and 50 s.
  auto r = RunReplay(Named("fifo", kOneNode), {J(0, 4, 100, "a"), J(0, 4, 50, "b")});
  ASSERT_TRUE(r.ok()) << r.status();
  const LedgerReport& l = r->ledger;
  EXPECT_EQ(l.start_time, 0);
  EXPECT_EQ(l.end_time, 100);
  EXPECT_EQ(l.pool.capacity, 8 * 1000 * 100);
  EXPECT_EQ(l.pool.time.work.busy, (4 * 100 + 4 * 50) * 1000);
  EXPECT_EQ(l.pool.time.work.productive, l.pool.time.work.busy);
  ASSERT_EQ(l.queues.size(), 2u);
  // Both clusters asked for half... a: 400 of 600 GPU-s, so 2/3 of 8 GPUs guaranteed (5333
  // milli): its 4 GPUs are all within; b: 2666 milli guaranteed, 1334 of its 4000 borrowed.
  EXPECT_EQ(l.queues[0].own.borrowed, 0);
  EXPECT_EQ(l.queues[1].own.borrowed, (4000 - 2666) * 50);
  // Each cluster's dedicated pool: 4 GPUs; 8 in all, the pool's size.
  absl::StatusOr<PoolingReport> p = ComparePooling(l, Prices{.default_micros_per_gpu_hour = 0});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->dedicated_gpus, 8);
  EXPECT_EQ(p->pool_gpus, 8);
}

TEST(ReplayLedger, PreemptionLossMatchesTheCheckpointModel) {
  // las-free charges nothing for preemption; las loses the work since the last 1800 s
  // checkpoint and pays a 60 s restore. A long 8-GPU job of "a" is preempted by a short one of
  // "b" under las once it has passed the first LAS threshold (3250 GPU-s: 407 s on 8 GPUs).
  const std::vector<TraceJob> jobs = {J(0, 8, 5000, "a"), J(1000, 8, 100, "b")};
  auto las = RunReplay(Named("las", kOneNode), jobs);
  ASSERT_TRUE(las.ok()) << las.status();
  ASSERT_EQ(las->metrics.preemptions, 1);
  // Preempted at 1000 with 1000 s of work and no checkpoint yet (interval 1800): 8 GPUs x
  // 1000 s lost, then a 60 s restore on the restart.
  EXPECT_EQ(las->ledger.pool.time.work.lost_to_preemption, 8 * 1000 * 1000);
  EXPECT_EQ(las->ledger.pool.time.work.restore, 8 * 1000 * 60);
  EXPECT_EQ(las->ledger.pool.time.work.productive, 8 * 1000 * (5000 + 100));
  ASSERT_EQ(las->ledger.preemption_losses.size(), 1u);
  EXPECT_EQ(las->ledger.preemption_losses[0].victim_queue, "a");
  EXPECT_EQ(las->ledger.preemption_losses[0].by_queue, "b");
  // The replay's own metric counts the same loss plus the restore.
  EXPECT_DOUBLE_EQ(las->metrics.gpu_hours_lost_to_preemption, 8.0 * (1000 + 60) / 3600);

  auto free = RunReplay(Named("las-free", kOneNode), jobs);
  ASSERT_TRUE(free.ok());
  EXPECT_EQ(free->ledger.pool.time.work.lost_to_preemption, 0);
  EXPECT_EQ(free->ledger.pool.time.work.restore, 0);
}

// Random traces on a small pool under every named policy: the identities, and the ledger's
// busy time per queue equal to the replay's own per-queue integral of GPUs held.
TEST(ReplayLedger, IdentitiesAndReplayIntegralsOnRandomTraces) {
  const ReplayPool pool{.nodes = 2, .gpus_per_node = 8, .nodes_per_rack = 2};
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    Rng rng(seed);
    std::vector<TraceJob> jobs;
    for (int i = 0; i < 30; ++i) {
      const int32_t gpus = std::vector<int32_t>{1, 2, 4, 8, 16}[rng.Uniform(5)];
      jobs.push_back(J(static_cast<int64_t>(rng.Uniform(20000)), gpus,
                       1 + static_cast<int64_t>(rng.Uniform(6000)),
                       std::string(1, static_cast<char>('a' + rng.Uniform(3)))));
    }
    for (const std::string& name : ReplayPolicyNames()) {
      SCOPED_TRACE(testing::Message() << "seed " << seed << " policy " << name);
      auto r = RunReplay(Named(name, pool), jobs);
      ASSERT_TRUE(r.ok()) << r.status();
      const LedgerReport& l = r->ledger;
      const WorkTime& w = l.pool.time.work;
      EXPECT_EQ(l.pool.capacity, l.pool.time.work.busy + l.pool.idle);
      EXPECT_EQ(l.pool.capacity, 16 * 1000 * (l.end_time - l.start_time));
      EXPECT_EQ(w.busy, w.productive + w.lost_to_preemption + w.lost_to_failure + w.restore);
      EXPECT_EQ(w.lost_to_failure, 0);
      EXPECT_EQ(l.pool.time.within_guarantee + l.pool.time.borrowed, w.busy);
      // Every job ran its whole duration productively, exactly once.
      int64_t work = 0;
      for (const TraceJob& j : jobs) work += j.duration_s * j.num_gpus * 1000;
      EXPECT_EQ(w.productive, work);
      int64_t queues_busy = 0;
      std::map<std::string, int64_t> series;
      for (const QueueSeries& s : r->series.queues) {
        for (int64_t v : s.received_milli_gpu_s) series[s.queue] += v;
      }
      for (const QueueLedger& q : l.queues) {
        EXPECT_EQ(q.own.work.busy, series[q.queue]) << q.queue;
        queues_busy += q.own.work.busy;
      }
      EXPECT_EQ(queues_busy, w.busy);
      // The replay's utilization is the ledger's busy over its capacity.
      EXPECT_NEAR(r->metrics.utilization,
                  static_cast<double>(w.busy) / static_cast<double>(l.pool.capacity), 1e-9);
    }
  }
}

}  // namespace
}  // namespace gpupool::sim

namespace gpupool::sim {
namespace {

TEST(ReplayLedger, HtmlReportHasTheCostSection) {
  const ReplayPool pool{.nodes = 1, .gpus_per_node = 8, .nodes_per_rack = 1};
  absl::StatusOr<ReplayOptions> options = MakeReplayOptions("las");
  ASSERT_TRUE(options.ok());
  options->pool = pool;
  auto r = RunReplay(*options, {J(0, 8, 5000, "a"), J(1000, 8, 100, "b")});
  ASSERT_TRUE(r.ok());
  ReplayReportInfo info;
  info.pool = pool;
  info.prices.currency = "USD";
  // 3.60 per GPU-hour: 8 GPUs x (5000 + 100 + 1000 lost + 60 restore) s = 49.28 USD.
  info.prices.gpu_models = {ModelPrice{.gpu_model = "gpu", .micros_per_gpu_hour = 3'600'000}};
  const std::string html = ReplayHtmlReport(*r, info);
  EXPECT_NE(html.find("<h2 id=\"cost\">Cost, chargeback and pooling</h2>"), std::string::npos);
  EXPECT_NE(html.find("costing <b>USD 49.28</b>"), std::string::npos);
  EXPECT_NE(html.find("Lost work by cause"), std::string::npos);
  EXPECT_NE(html.find("No GPU-hour budgets are set"), std::string::npos);
  EXPECT_EQ(html.rfind("</body></html>\n"), html.size() - 15);
}

}  // namespace
}  // namespace gpupool::sim
