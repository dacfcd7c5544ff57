// Helpers shared by the worked examples of Schedule() (schedule_test.cc,
// schedule_placement_test.cc, schedule_filters_test.cc, schedule_queues_test.cc): scheduling that
// must succeed, a policy with one placement strategy, exact Start and Pending expectations, and
// small edits of jobs and nodes; and the builders and matchers they use, by their short names (the
// tests live in this namespace).
#ifndef GPUPOOL_TESTS_CORE_SCHEDULE_HELPERS_H_
#define GPUPOOL_TESTS_CORE_SCHEDULE_HELPERS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gpupool/schedule.h"
#include "gtest/gtest.h"
#include "testing/builders.h"

namespace gpupool::schedule_testing {

using ::gpupool::testing::DecisionsToText;
using ::gpupool::testing::FindPending;
using ::gpupool::testing::FindStart;
using ::gpupool::testing::GpuRequest;
using ::gpupool::testing::MakeCpuNode;
using ::gpupool::testing::MakeGroup;
using ::gpupool::testing::MakeLimit;
using ::gpupool::testing::MakeModel;
using ::gpupool::testing::MakeNode;
using ::gpupool::testing::MakePendingJob;
using ::gpupool::testing::MakeQueue;
using ::gpupool::testing::MakeRunningJob;
using ::gpupool::testing::PendingJobs;
using ::gpupool::testing::Placement;
using ::gpupool::testing::ShuffleSnapshot;
using ::gpupool::testing::SnapshotBuilder;
using ::gpupool::testing::StartedJobs;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

inline Decisions ScheduleOk(const Snapshot& snapshot, const Policy& policy = Policy{}) {
  absl::StatusOr<Decisions> decisions = Schedule(snapshot, policy);
  EXPECT_TRUE(decisions.ok()) << decisions.status();
  return decisions.ok() ? *std::move(decisions) : Decisions{};
}

inline Policy WithPlacement(PlacementStrategy strategy) {
  Policy policy;
  policy.placement = strategy;
  return policy;
}

// A placement as a Start decision states it: gpu_milli always set.
inline ReplicaPlacement At(std::string node, std::vector<int32_t> gpus, int64_t gpu_milli,
                           int32_t replica = 0, std::string group = "main") {
  return Placement(std::move(node), std::move(gpus), replica, std::move(group), gpu_milli);
}

// Asserts that `job` starts with exactly `want`.
inline void ExpectStart(const Decisions& decisions, std::string_view job,
                        const std::vector<ReplicaPlacement>& want) {
  const StartDecision* start = FindStart(decisions, job);
  ASSERT_NE(start, nullptr) << job << " did not start:\n" << DecisionsToText(decisions);
  EXPECT_EQ(start->placements, want) << job;
}

// Asserts that `job` stays pending for `reason`.
inline const PendingDecision* ExpectPending(const Decisions& decisions, std::string_view job,
                                            PendingReason reason) {
  const PendingDecision* pending = FindPending(decisions, job);
  EXPECT_NE(pending, nullptr) << job << " is not pending:\n" << DecisionsToText(decisions);
  if (pending == nullptr) return nullptr;
  EXPECT_EQ(PendingReasonName(pending->reason), std::string(PendingReasonName(reason)))
      << job << ": " << pending->detail;
  EXPECT_FALSE(pending->detail.empty()) << job;
  return pending;
}

inline Job WithPriority(Job job, int32_t priority, int64_t submit_time = 0) {
  job.priority = priority;
  job.submit_time = submit_time;
  return job;
}

inline Job WithModels(Job job, std::vector<std::string> models) {
  for (TaskGroup& group : job.groups) group.gpu_models = models;
  return job;
}

inline Node WithPath(Node node, std::vector<TopologyLabel> path) {
  node.path = std::move(path);
  return node;
}

}  // namespace gpupool::schedule_testing

#endif  // GPUPOOL_TESTS_CORE_SCHEDULE_HELPERS_H_
