// ValidateSnapshot: a rich valid snapshot passes, so do the empty snapshot and boundary values;
// the first error does not depend on list order (the smallest id, nodes before jobs, duplicate
// ids); extreme values are refused without overflow; mutated snapshots get the same verdict
// whatever the order.
// One case per kind of bad input, with its exact status code and message, is in
// validate_bad_input_test.cc.
#include "gpupool/validate.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/generator.h"
#include "tests/core/validate_helpers.h"

namespace gpupool {
namespace {

using ::gpupool::testing::GenerateRandomSnapshot;
using ::gpupool::testing::GpuRequest;
using ::gpupool::testing::MakeCpuNode;
using ::gpupool::testing::MakePendingJob;
using ::gpupool::testing::MakeRunningJob;
using ::gpupool::testing::MutateSnapshot;
using ::gpupool::testing::Placement;
using ::gpupool::testing::ShuffleSnapshot;
using ::gpupool::validate_testing::JobById;
using ::gpupool::validate_testing::kInconsistent;
using ::gpupool::validate_testing::kInvalid;
using ::gpupool::validate_testing::NodeById;
using ::gpupool::validate_testing::QueueById;
using ::gpupool::validate_testing::RichSnapshot;

TEST(ValidateTest, RichSnapshotPasses) {
  EXPECT_TRUE(ValidateSnapshot(RichSnapshot()).ok()) << ValidateSnapshot(RichSnapshot());
}

TEST(ValidateTest, EmptySnapshotPasses) { EXPECT_TRUE(ValidateSnapshot(Snapshot{}).ok()); }

TEST(ValidateTest, ShuffledRichSnapshotPasses) {
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    Snapshot snapshot = RichSnapshot();
    ShuffleSnapshot(snapshot, seed);
    EXPECT_TRUE(ValidateSnapshot(snapshot).ok()) << "seed " << seed;
  }
}

// Decision documented in validate.cc: a job may ask for a model the pool lacks, or that is not
// even declared; it stays pending (no-allowed-gpu-model) instead of being refused.
TEST(ValidateTest, UnknownModelInJobPreferencesIsAccepted) {
  Snapshot snapshot = RichSnapshot();
  JobById(snapshot, "j4").groups[0].gpu_models = {"B300", "MI300X"};
  EXPECT_TRUE(ValidateSnapshot(snapshot).ok());
}

// Fields that are allowed to be at their extremes.
TEST(ValidateTest, BoundaryValuesPass) {
  Snapshot snapshot = RichSnapshot();
  snapshot.now = kMaxQuantity;
  NodeById(snapshot, "n1").gpus[7].index = 1023;
  NodeById(snapshot, "n3").cpu_milli = kMaxQuantity;
  QueueById(snapshot, "org").quotas[1].guaranteed_milli = 16000;  // == limit
  QueueById(snapshot, "org").quotas[1].over_quota_weight = 0;
  QueueById(snapshot, "org").labels = {{std::string(63, 'k'), std::string(253, 'v')}};
  JobById(snapshot, "j1").groups[0].request.gpu_milli = 1024000;  // 1024 GPUs
  JobById(snapshot, "j1").groups[0].request.cpu_milli = kMaxQuantity / 2;
  JobById(snapshot, "j5").groups[0].replicas = 1 << 20;
  JobById(snapshot, "j5").groups[0].min_replicas = 1;
  // A node without GPUs may leave its model empty; a running GPU job at exactly 1000 milli.
  NodeById(snapshot, "n3").gpu_model = "";
  snapshot.jobs.push_back(
      MakeRunningJob("j6", "team-a", GpuRequest(500), {Placement("n2", {0}, 0, "main", 500)}, 0));
  EXPECT_TRUE(ValidateSnapshot(snapshot).ok()) << ValidateSnapshot(snapshot);
}

// The first error is the one first in the fixed order (sections, then ids), not the first in
// the lists: two broken jobs report the smaller id whichever comes first in the list.
TEST(ValidateTest, FirstErrorIsSmallestIdWhateverTheOrder) {
  Snapshot snapshot = RichSnapshot();
  JobById(snapshot, "j5").queue = "nope";
  JobById(snapshot, "j4").groups[0].replicas = 0;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    Snapshot shuffled = snapshot;
    ShuffleSnapshot(shuffled, seed);
    absl::Status status = ValidateSnapshot(shuffled);
    EXPECT_EQ(status.code(), kInvalid);
    EXPECT_EQ(std::string(status.message()), "jobs[j4].groups[main].replicas: must be >= 1")
        << "seed " << seed;
  }
}

// Sections are checked in a fixed order: a node error comes before a job error.
TEST(ValidateTest, NodesAreCheckedBeforeJobs) {
  Snapshot snapshot = RichSnapshot();
  JobById(snapshot, "j1").queue = "nope";
  NodeById(snapshot, "n4").gpus[0].island = -2;
  absl::Status status = ValidateSnapshot(snapshot);
  EXPECT_EQ(status.code(), kInvalid);
  EXPECT_EQ(std::string(status.message()), "nodes[n4].gpus[0].island: must be >= 0");
}

// 100,000 jobs with one id: refused as a duplicate, in time linear-logarithmic in their number
// (a quadratic search for repeats would take minutes here).
TEST(ValidateTest, ManyIdenticalIdsAreRefused) {
  Snapshot snapshot = RichSnapshot();
  snapshot.jobs.assign(100000, MakePendingJob("same", "org", GpuRequest(1000)));
  snapshot.jobs.push_back(MakePendingJob("other", "org", GpuRequest(1000)));
  absl::Status status = ValidateSnapshot(snapshot);
  EXPECT_EQ(status.code(), kInvalid);
  EXPECT_EQ(std::string(status.message()), "jobs[same].id: duplicate id");
}

// The smallest repeated id is reported, whatever the order; nodes come before jobs.
TEST(ValidateTest, SmallestDuplicateIdIsReported) {
  Snapshot jobs_repeat = RichSnapshot();
  for (const char* id : {"j5", "j2", "j4"}) {
    jobs_repeat.jobs.push_back(MakePendingJob(id, "org", GpuRequest(0)));
  }
  Snapshot both_repeat = jobs_repeat;
  both_repeat.nodes.push_back(MakeCpuNode("n4"));
  both_repeat.nodes.push_back(MakeCpuNode("n3"));
  for (uint64_t seed = 0; seed < 10; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    Snapshot a = jobs_repeat;
    ShuffleSnapshot(a, seed);
    EXPECT_EQ(std::string(ValidateSnapshot(a).message()), "jobs[j2].id: duplicate id");
    Snapshot b = both_repeat;
    ShuffleSnapshot(b, seed);
    EXPECT_EQ(std::string(ValidateSnapshot(b).message()), "nodes[n3].id: duplicate id");
  }
}

// Jobs listed in id order (as a replay host lists them, which skips the hashing of ids) are
// checked like any other list: the smallest id's error is reported, an empty first id is refused,
// and a repeat, being out of strict order, is still found.
TEST(ValidateTest, JobsInIdOrderAreCheckedLikeAnyOther) {
  auto in_order = [](Snapshot s) {
    std::sort(s.jobs.begin(), s.jobs.end(), [](const Job& a, const Job& b) { return a.id < b.id; });
    return s;
  };
  Snapshot bad = RichSnapshot();
  JobById(bad, "j4").groups[0].replicas = 0;
  JobById(bad, "j2").queue = "";
  EXPECT_EQ(std::string(ValidateSnapshot(in_order(bad)).message()),
            "jobs[j2].queue: must not be empty");
  Snapshot empty = RichSnapshot();
  empty.jobs.push_back(MakePendingJob("", "org", GpuRequest(0)));
  EXPECT_EQ(std::string(ValidateSnapshot(in_order(empty)).message()),
            "jobs[].id: must not be empty");
  Snapshot repeat = RichSnapshot();
  repeat.jobs.push_back(MakePendingJob("j3", "org", GpuRequest(0)));
  EXPECT_EQ(std::string(ValidateSnapshot(in_order(repeat)).message()), "jobs[j3].id: duplicate id");
  EXPECT_TRUE(ValidateSnapshot(in_order(RichSnapshot())).ok());
}

// Extreme values everywhere are refused without overflow or crash (run under sanitizers).
TEST(ValidateTest, ExtremeValuesAreRefusedWithoutOverflow) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  {
    Snapshot snapshot = RichSnapshot();
    JobById(snapshot, "j2").groups[0].request.cpu_milli = kMax;
    absl::Status status = ValidateSnapshot(snapshot);
    EXPECT_EQ(std::string(status.message()),
              "jobs[j2].groups[main].request.cpu_milli: 9223372036854775807 is above the maximum "
              "1099511627776");
  }
  {
    Snapshot snapshot = RichSnapshot();
    JobById(snapshot, "j3").placements[0].gpu_milli = kMin;
    absl::Status status = ValidateSnapshot(snapshot);
    EXPECT_EQ(std::string(status.message()),
              "jobs[j3].placements[worker/0].gpu_milli: must be >= 0");
  }
  {
    // Many running replicas at the maximum CPU each: the node sum is exact, far above capacity.
    Snapshot snapshot = RichSnapshot();
    NodeById(snapshot, "n3").cpu_milli = kMaxQuantity;
    for (int i = 0; i < 40; ++i) {
      snapshot.jobs.push_back(MakeRunningJob("x" + std::to_string(100 + i), "team-a",
                                             GpuRequest(0, kMaxQuantity), {Placement("n3", {})},
                                             0));
    }
    absl::Status status = ValidateSnapshot(snapshot);
    EXPECT_EQ(status.code(), kInconsistent);
    EXPECT_EQ(std::string(status.message()),
              "nodes[n3].cpu_milli: over-committed: running jobs use 43980465115040 of "
              "1099511627776");
  }
  {
    Snapshot snapshot = RichSnapshot();
    snapshot.now = kMin;
    EXPECT_EQ(std::string(ValidateSnapshot(snapshot).message()), "now: must be >= 0");
  }
}

// Random careless edits of valid snapshots (see MutateSnapshot): validation never crashes (this
// runs under the sanitizers), refuses with one of its two codes and a message naming a field,
// and its verdict, first error included, does not depend on list order.
TEST(ValidateTest, MutatedSnapshotsGetOrderFreeVerdicts) {
  int refused = 0;
  constexpr uint64_t kSnapshots = 3000;
  for (uint64_t seed = 0; seed < kSnapshots; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    Snapshot snapshot = GenerateRandomSnapshot(seed);
    MutateSnapshot(snapshot, seed, 1 + static_cast<int>(seed % 4));
    const absl::Status status = ValidateSnapshot(snapshot);
    if (!status.ok()) {
      ++refused;
      EXPECT_TRUE(status.code() == kInvalid || status.code() == kInconsistent) << status;
      EXPECT_NE(status.message().find(": "), absl::string_view::npos) << status;
    }
    Snapshot shuffled = snapshot;
    ShuffleSnapshot(shuffled, seed + 1);
    EXPECT_EQ(ValidateSnapshot(shuffled), status);
  }
  // Most edits break something, some do not: both paths are exercised.
  EXPECT_GT(refused, static_cast<int>(kSnapshots / 2));
  EXPECT_LT(refused, static_cast<int>(kSnapshots));
}

}  // namespace
}  // namespace gpupool
