// Helpers shared by the backfill tests (backfill_test.cc, backfill_property_test.cc): the moment
// of their snapshots and a policy with backfill on, the comparison of a cycle with the same cycle
// without its backfilled jobs, and the builders they use by their short names (the tests live in
// this namespace).
#ifndef GPUPOOL_TESTS_CORE_BACKFILL_HELPERS_H_
#define GPUPOOL_TESTS_CORE_BACKFILL_HELPERS_H_

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "gpupool/decisions.h"
#include "gpupool/policy.h"
#include "gpupool/schedule.h"
#include "gpupool/snapshot.h"
#include "testing/builders.h"

namespace gpupool::backfill_testing {

using testing::FindPending;
using testing::FindStart;
using testing::GpuRequest;
using testing::MakeNode;
using testing::MakePendingJob;
using testing::MakeRunningJob;
using testing::Placement;
using testing::SnapshotBuilder;

inline constexpr int64_t kNow = 10000;

inline Policy BackfillPolicy(int64_t margin_s = 300) {
  Policy policy;
  policy.placement = PlacementStrategy::kBestFit;
  policy.job_order = JobOrder::kPriorityFifo;
  policy.queue_order = QueueOrder::kNone;
  policy.backfill.enabled = true;
  policy.backfill.margin_s = margin_s;
  return policy;
}

// Against the same cycle without the backfilled jobs: each reservation with a known expected
// start E is no later than the same job's E' there (when it is reserved there with a known
// start). This sees what a check of the settled decisions alone cannot: a backfilled start that
// moves a reservation onto nodes that empty later, or keeps it from coming earlier, in a later
// settling pass of the same cycle (such a check takes the moved E as given). Counts the
// reservations compared; returns a description of the first that starts later, or "".
inline std::string LaterThanWithoutTheBackfilledJobs(const Snapshot& snapshot, const Policy& policy,
                                                     int64_t& compared) {
  absl::StatusOr<Decisions> d = Schedule(snapshot, policy);
  if (!d.ok()) return d.status().ToString();
  std::set<std::string> backfilled;
  for (const StartDecision& s : d->starts) {
    if (s.backfilled) backfilled.insert(s.job);
  }
  if (backfilled.empty()) return "";
  Snapshot without = snapshot;
  std::erase_if(without.jobs, [&](const Job& job) { return backfilled.count(job.id) > 0; });
  absl::StatusOr<Decisions> w = Schedule(without, policy);
  if (!w.ok()) return w.status().ToString();
  for (const ReserveDecision& r : d->reservations) {
    auto there = std::find_if(w->reservations.begin(), w->reservations.end(),
                              [&](const ReserveDecision& x) { return x.job == r.job; });
    if (r.expected_start < 0 || there == w->reservations.end() || there->expected_start < 0) {
      continue;
    }
    ++compared;
    if (r.expected_start > there->expected_start) {
      return fmt::format(
          "{} is reserved at {}, and at {} without the backfilled jobs\nwith:\n{}"
          "\nwithout:\n{}",
          r.job, r.expected_start, there->expected_start, testing::DecisionsToText(*d),
          testing::DecisionsToText(*w));
    }
  }
  return "";
}

}  // namespace gpupool::backfill_testing

#endif  // GPUPOOL_TESTS_CORE_BACKFILL_HELPERS_H_
