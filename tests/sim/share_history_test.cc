// ShareHistory (src/sim/replay/share_history.h): each tenant's held and entitled GPU-seconds
// over a sliding window of whole hours, for the replay's fair-share boost
// (ReplayOptions::fair_share_history_hours). Small cases worked by hand.
#include "sim/replay/share_history.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace gpupool::sim::internal {
namespace {

// Tenant 0 holds 2 GPUs while entitled to 1; tenant 1 holds nothing while entitled to 1.
const std::vector<int64_t> kOver = {2000, 0};
const std::vector<int64_t> kEntitledOne = {1000, 1000};
const std::vector<int64_t> kNone = {0, 0};

TEST(ShareHistory, WithoutHoursEveryTenantIsWithin) {
  ShareHistory history(2, 100, 0);
  history.Add(100, 10000, kOver, kEntitledOne);
  EXPECT_TRUE(history.WithinShare(0));
  EXPECT_TRUE(history.WithinShare(1));
}

// Hours count from the origin (100): hour 0 is [100, 3700). Tenant 0 is over by 1 GPU for the
// first hour; with 2 hours of history that stays in the window until the third hour begins.
TEST(ShareHistory, AnHourLeavesTheWindowOnceHoursMoreHaveBegun) {
  ShareHistory history(2, 100, 2);
  history.Add(100, 3700, kOver, kEntitledOne);
  EXPECT_FALSE(history.WithinShare(0));
  EXPECT_TRUE(history.WithinShare(1));
  // Hour 1 entitles tenant 0 to 1 GPU and gives it none: 3,600,000 milli-GPU-s back, exactly
  // what it took over in hour 0 (held 7.2e6, entitled 7.2e6: "no more than" holds).
  history.Add(3700, 7300, kNone, kEntitledOne);
  EXPECT_TRUE(history.WithinShare(0));
  // Fresh start: over for the whole of hour 0 again, then hour 1 with nothing at all.
  ShareHistory again(2, 100, 2);
  again.Add(100, 3700, kOver, kEntitledOne);
  again.Add(3700, 7300, kNone, kNone);
  EXPECT_FALSE(again.WithinShare(0));  // the window is hours 0 and 1 (7,299 is in hour 1)
  again.Add(7300, 7301, kNone, kNone);
  EXPECT_TRUE(again.WithinShare(0));  // hour 2 has begun: hour 0 has left
}

// A long gap in one call walks through every hour; a first call far from the origin empties the
// whole window at once. Both forget what is older than the window.
TEST(ShareHistory, LongGapsForgetWhatIsOlderThanTheWindow) {
  ShareHistory history(2, 0, 3);
  history.Add(0, 3600, kOver, kEntitledOne);
  history.Add(3600, 100 * 3600 + 5, kNone, kNone);
  EXPECT_TRUE(history.WithinShare(0));
  ShareHistory late(2, 0, 3);
  late.Add(50 * 3600, 50 * 3600 + 10, kOver, kEntitledOne);
  EXPECT_FALSE(late.WithinShare(0));
  late.Add(50 * 3600 + 10, 53 * 3600 + 1, kNone, kNone);
  EXPECT_TRUE(late.WithinShare(0));
}

// Within an hour the sums are exact: 10 s over by 1 GPU (10,000) against 20 s under by 1 GPU
// (20,000), for a net 10,000 milli-GPU-s under.
TEST(ShareHistory, SumsAreExactWithinAnHour) {
  ShareHistory history(2, 0, 1);
  history.Add(0, 10, kOver, kEntitledOne);
  EXPECT_FALSE(history.WithinShare(0));
  history.Add(10, 25, kNone, kEntitledOne);
  EXPECT_TRUE(history.WithinShare(0));  // 20,000 held against 25,000 entitled
  history.Add(25, 30, {6000, 0}, kEntitledOne);
  EXPECT_FALSE(history.WithinShare(0));  // 50,000 held against 30,000 entitled
}

// AbovePercent (ReplayOptions::demote_running_above_history_percent): strictly more than the
// percent of the entitlement. Tenant 0 holds 2 GPUs against 1 for 10 s: exactly 200%, so above
// 199% but not above 200%; 5 s more at 3 GPUs make it 35,000 against 15,000 (233%). Tenant 1,
// holding nothing, is above no percent, and without hours no tenant is above any.
TEST(ShareHistory, AbovePercentIsStrict) {
  ShareHistory history(2, 0, 1);
  history.Add(0, 10, kOver, kEntitledOne);
  EXPECT_TRUE(history.AbovePercent(0, 199));
  EXPECT_FALSE(history.AbovePercent(0, 200));
  EXPECT_FALSE(history.AbovePercent(1, 0));
  history.Add(10, 15, {3000, 0}, kEntitledOne);
  EXPECT_TRUE(history.AbovePercent(0, 233));
  EXPECT_FALSE(history.AbovePercent(0, 234));
  // The products do not overflow: a year of 2^20 GPUs held against half of that entitled
  // (3.4e16 milli-GPU-s entitled, times 1,000,000 percent, is past 64 bits).
  ShareHistory year(1, 0, 8784);
  year.Add(0, int64_t{8784} * 3600, {int64_t{1} << 30}, {int64_t{1} << 29});
  EXPECT_TRUE(year.AbovePercent(0, 199));
  EXPECT_FALSE(year.AbovePercent(0, 200));
  EXPECT_FALSE(year.AbovePercent(0, 1000000));
  ShareHistory none(2, 0, 0);
  none.Add(0, 10, kOver, kEntitledOne);
  EXPECT_FALSE(none.AbovePercent(0, 100));
}

}  // namespace
}  // namespace gpupool::sim::internal
