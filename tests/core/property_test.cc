// Seeded property test of the invariants of EVALUATION.md E4, over 1,000 random snapshots from
// GenerateRandomSnapshot(seed), each scheduled with one of the built-in strategies: every
// invariant of CheckSnapshot() (property_invariants.h) on each seed, and on mutated snapshots that
// still validate; shuffle invariance; and the fixed point (applying the decisions and scheduling
// again starts nothing), with preemption on and with the default policy.
// Failures name the seed; only the first few failing seeds are reported in full.
// The settling options and the seeds that once broke the settling passes are in
// settling_property_test.cc; pool operations (spot nodes, headroom) in
// pool_operations_property_test.cc.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cycle.h"
#include "fmt/format.h"
#include "gpupool/apply.h"
#include "gpupool/schedule.h"
#include "gpupool/validate.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/generator.h"
#include "tests/core/property_helpers.h"
#include "tests/core/property_invariants.h"

namespace gpupool {
namespace {

using ::gpupool::property_testing::CheckSnapshot;
using ::gpupool::property_testing::kReportedSeeds;
using ::gpupool::property_testing::kSeeds;
using ::gpupool::property_testing::PolicyForSeed;
using ::gpupool::property_testing::WithVictimsEvicted;
using ::gpupool::testing::DecisionsToText;
using ::gpupool::testing::GenerateRandomSnapshot;
using ::gpupool::testing::MutateSnapshot;
using ::gpupool::testing::ShuffleSnapshot;

TEST(PropertyTest, InvariantsHoldOnRandomSnapshots) {
  int failing_seeds = 0;
  int64_t starts = 0;
  std::string failing_list;
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    std::vector<std::string> violations;
    CheckSnapshot(seed, GenerateRandomSnapshot(seed), violations);
    if (!violations.empty()) {
      ++failing_seeds;
      failing_list += fmt::format(" {}", seed);
      if (failing_seeds <= kReportedSeeds) {
        std::string text;
        for (const std::string& v : violations) text += v + "\n";
        ADD_FAILURE() << text;
      }
    }
    absl::StatusOr<Decisions> d = Schedule(GenerateRandomSnapshot(seed), PolicyForSeed(seed));
    if (d.ok()) starts += static_cast<int64_t>(d->starts.size());
  }
  EXPECT_EQ(failing_seeds, 0) << "seeds with violations (the first " << kReportedSeeds
                              << " are reported above):" << failing_list;
  ::testing::Test::RecordProperty("seeds", static_cast<int>(kSeeds));
  std::printf("%llu seeds (one random cycle each), %lld starts, %d failing seeds\n",
              static_cast<unsigned long long>(kSeeds), static_cast<long long>(starts),
              failing_seeds);
  // The property is not vacuous: the snapshots do start work.
  EXPECT_GT(starts, static_cast<int64_t>(kSeeds));
}

// Found by the long run (1,000,000 seeds) when the cap of passes was 8: seed 777337's cycle was
// cut at 8, a chain of settling passes that ends in the 9th. With the cap at kMaxSettlingPasses
// (16) it settles, and every invariant holds, the fixed point included (docs/engine.md,
// "Guarantees", "The cap of passes").
TEST(PropertyTest, AChainOfNinePassesSettles) {
  constexpr uint64_t kSeed = 777337;
  absl::StatusOr<Decisions> d = Schedule(GenerateRandomSnapshot(kSeed), PolicyForSeed(kSeed));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->counters.passes, 9);
  std::vector<std::string> violations;
  CheckSnapshot(kSeed, GenerateRandomSnapshot(kSeed), violations);
  EXPECT_TRUE(violations.empty()) << violations.front();
}

// Snapshots a careless host might send (random edits of generated ones, see MutateSnapshot)
// that still validate: Schedule() succeeds on them and every invariant holds.
TEST(PropertyTest, InvariantsHoldOnMutatedValidSnapshots) {
  int failing_seeds = 0;
  int valid = 0;
  for (uint64_t seed = 0; seed < 1000; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    Snapshot snapshot = GenerateRandomSnapshot(seed);
    MutateSnapshot(snapshot, seed, 1 + static_cast<int>(seed % 3));
    if (!ValidateSnapshot(snapshot).ok()) continue;
    ++valid;
    std::vector<std::string> violations;
    CheckSnapshot(seed, snapshot, violations);
    if (!violations.empty() && ++failing_seeds <= kReportedSeeds) {
      std::string text;
      for (const std::string& v : violations) text += v + "\n";
      ADD_FAILURE() << text;
    }
  }
  EXPECT_EQ(failing_seeds, 0) << "seeds with violations (mutated snapshots)";
  EXPECT_GT(valid, 150) << "too few mutated snapshots stayed valid to test anything";
}

// Each invariant is checked separately on the seeds where it is most likely to break, so that a
// regression names the invariant in the test name too.
TEST(PropertyTest, ShuffleInvarianceOnRandomSnapshots) {
  int failing = 0;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    const Snapshot snapshot = GenerateRandomSnapshot(seed);
    absl::StatusOr<Decisions> a = Schedule(snapshot, Policy{});
    ASSERT_TRUE(a.ok()) << a.status();
    for (uint64_t shuffle = 1; shuffle <= 3; ++shuffle) {
      Snapshot shuffled = snapshot;
      ShuffleSnapshot(shuffled, seed * 1000 + shuffle);
      absl::StatusOr<Decisions> b = Schedule(shuffled, Policy{});
      ASSERT_TRUE(b.ok()) << b.status();
      if (DecisionsToText(*a) != DecisionsToText(*b)) {
        if (++failing <= 2) {
          EXPECT_EQ(DecisionsToText(*a), DecisionsToText(*b));
        }
        break;
      }
    }
  }
  EXPECT_EQ(failing, 0) << "seeds whose decisions depend on list order";
}

// DESIGN.md: applying the decisions (evictions and starts) and scheduling again yields no further
// Start or Preempt, with preemption on (every odd seed) too. A single pass of the stages did not
// get there on a few seeds, two ways, which the settling passes (src/engine/settle.cc) now
// resolve:
//   - victims were not re-queued within the cycle, so a lower-priority job started while a
//     higher-priority one of the same queue was evicted, and next cycle the victim preempted it
//     (seed 241, queue q0: j07 (priority 8) evicted for j19 (9), then j11 (6) started by
//     evicting j02 (1); next cycle j07 preempted j11);
//   - a job that failed before an eviction in the same cycle was not tried again, though the
//     evicted gang freed more than its beneficiary took (seed 795: j05 (q2, priority 9) needs
//     j09 (q2) evicted and room where j04 (q0) runs; it failed, then j02 (q0) evicted j04; next
//     cycle j05 preempted j09 and started).
TEST(PropertyTest, PreemptionReachesAFixedPoint) {
  int failing = 0;
  for (uint64_t seed = 1; seed < kSeeds; seed += 2) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    const Snapshot snapshot = GenerateRandomSnapshot(seed);
    const Policy policy = PolicyForSeed(seed);
    ASSERT_TRUE(policy.preemption.enabled);
    absl::StatusOr<Decisions> a = Schedule(snapshot, policy);
    ASSERT_TRUE(a.ok()) << a.status();
    // Settled, not cut at the cap of passes (docs/engine.md, "Settling"); passes counts the
    // passes run, each once.
    EXPECT_LT(a->counters.passes, kMaxSettlingPasses);
    int64_t run = 0;
    internal::RunCycle(snapshot, policy, [&run](const Snapshot&, const Decisions&) { ++run; });
    EXPECT_EQ(a->counters.passes, run);
    Snapshot applied = WithVictimsEvicted(snapshot, *a);
    ASSERT_TRUE(ApplyStarts(*a, applied).ok());
    absl::StatusOr<Decisions> b = Schedule(applied, policy);
    ASSERT_TRUE(b.ok()) << b.status();
    if ((!b->starts.empty() || !b->preemptions.empty()) && ++failing <= 3) {
      ADD_FAILURE() << "the next cycle starts or preempts more:\n" << DecisionsToText(*b);
    }
  }
  EXPECT_EQ(failing, 0) << "seeds without a fixed point";
}

TEST(PropertyTest, FixedPointOnRandomSnapshots) {
  int failing = 0;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    Snapshot snapshot = GenerateRandomSnapshot(seed);
    absl::StatusOr<Decisions> a = Schedule(snapshot, Policy{});
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(ApplyStarts(*a, snapshot).ok());
    absl::StatusOr<Decisions> b = Schedule(snapshot, Policy{});
    ASSERT_TRUE(b.ok()) << b.status();
    if (!b->starts.empty() && ++failing <= 2) {
      ADD_FAILURE() << "second cycle started more:\n" << DecisionsToText(*b);
    }
  }
  EXPECT_EQ(failing, 0);
}

}  // namespace
}  // namespace gpupool
