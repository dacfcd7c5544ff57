// Helpers shared by the replay's tests: a trace job in one line, a named policy on a given pool,
// the ledger's identities (docs/accounting.md) every replay must keep, and a check that a replay
// refuses its options.
#ifndef GPUPOOL_TESTS_SIM_REPLAY_TESTING_H_
#define GPUPOOL_TESTS_SIM_REPLAY_TESTING_H_

#include <cstdint>
#include <string>
#include <utility>

#include "gpupool/ledger.h"
#include "gpupool/sim/replay.h"
#include "gtest/gtest.h"

namespace gpupool::sim::testing_replay {

// A trace job; its cluster (virtual cluster) is "a" unless stated.
inline TraceJob J(int64_t submit, int32_t gpus, int64_t duration, std::string vc = "a") {
  return TraceJob{
      .submit_time = submit, .duration_s = duration, .num_gpus = gpus, .cluster = std::move(vc)};
}

// MakeReplayOptions(name) on `pool`.
inline ReplayOptions Named(const std::string& name, ReplayPool pool) {
  absl::StatusOr<ReplayOptions> o = MakeReplayOptions(name);
  EXPECT_TRUE(o.ok()) << o.status();
  o->pool = pool;
  return *o;
}

inline constexpr ReplayPool kOneNode{.nodes = 1, .gpus_per_node = 8, .nodes_per_rack = 1};

// capacity = busy + idle (pool and every node), busy = productive + lost + restore, within +
// borrowed = busy, and the busy time of the nodes, queues and jobs each summing to the pool's.
inline void ExpectLedgerIdentities(const LedgerReport& l) {
  const WorkTime& w = l.pool.time.work;
  EXPECT_EQ(l.pool.capacity, w.busy + l.pool.idle);
  EXPECT_EQ(w.busy, w.productive + w.lost_to_preemption + w.lost_to_failure + w.restore);
  EXPECT_EQ(l.pool.time.within_guarantee + l.pool.time.borrowed, w.busy);
  int64_t nodes_busy = 0, queues_busy = 0, jobs_busy = 0;
  for (const NodeLedger& n : l.nodes) {
    EXPECT_EQ(n.capacity, n.work.busy + n.idle) << n.node;
    nodes_busy += n.work.busy;
  }
  for (const QueueLedger& q : l.queues) queues_busy += q.own.work.busy;
  for (const JobLedger& j : l.jobs) jobs_busy += j.work.busy;
  EXPECT_EQ(nodes_busy, w.busy);
  EXPECT_EQ(queues_busy, w.busy);
  EXPECT_EQ(jobs_busy, w.busy);
}

// RunReplay(options) on one small job fails with InvalidArgument and a message holding `text`.
inline ::testing::AssertionResult InvalidArgumentNaming(const ReplayOptions& options,
                                                        const std::string& text) {
  auto r = RunReplay(options, {J(0, 1, 10)});
  if (r.ok()) return ::testing::AssertionFailure() << "RunReplay succeeded";
  if (r.status().code() != absl::StatusCode::kInvalidArgument ||
      r.status().message().find(text) == std::string::npos) {
    return ::testing::AssertionFailure()
           << r.status() << " is not InvalidArgument naming \"" << text << "\"";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace gpupool::sim::testing_replay

#endif  // GPUPOOL_TESTS_SIM_REPLAY_TESTING_H_
