// Helpers shared by the backfill tests (backfill_test.cc, backfill_property_test.cc): the moment
// of their snapshots and a policy with backfill on, and the builders they use by their short names
// (the tests live in this namespace).
#ifndef GPUPOOL_TESTS_CORE_BACKFILL_HELPERS_H_
#define GPUPOOL_TESTS_CORE_BACKFILL_HELPERS_H_

#include <cstdint>

#include "gpupool/policy.h"
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

}  // namespace gpupool::backfill_testing

#endif  // GPUPOOL_TESTS_CORE_BACKFILL_HELPERS_H_
