// Each tenant's share over the recent past (ReplayOptions::fair_share_history_hours): the
// GPU-seconds it held and those it was entitled to over a sliding window of whole hours, so that
// the fair-share boost (cycle_snapshot.h) can ask whether a cluster has had its share lately, not
// only whether it fits in it at this moment.
//
// Time is cut into hours from `origin` (the first arrival). After Add(..., to) the window is the
// hour that holds the second before `to` (the last second added), so far, and the hours-1 hours
// before it: at a cycle at t, integrated up to t, the hour holding t - 1 and the ones before.
// Integer milli-GPU-seconds throughout, kept per hour in a ring, with the window's sums updated as
// hours enter and leave: O(1) per question, O(tenants) per hour passed.
//
// Not API: one of the parts RunReplay() (replay.cc) is built from.
#ifndef GPUPOOL_SRC_SIM_REPLAY_SHARE_HISTORY_H_
#define GPUPOOL_SRC_SIM_REPLAY_SHARE_HISTORY_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpupool::sim::internal {

class ShareHistory {
 public:
  // `hours` 0: no history is kept and every tenant is within its share.
  ShareHistory(size_t tenants, int64_t origin, int32_t hours);

  // Over [from, to) (from at least the previous call's `to`) tenant q held usage_milli[q] and was
  // entitled to entitled_milli[q] milli-GPUs.
  void Add(int64_t from, int64_t to, const std::vector<int64_t>& usage_milli,
           const std::vector<int64_t>& entitled_milli);

  // Has tenant q held at most what it was entitled to over the window (GPU-seconds)? Always true
  // without a history.
  bool WithinShare(size_t q) const;
  // Has tenant q held more than `percent` percent of what it was entitled to over the window
  // (compared in 128 bits)? Always false without a history.
  bool AbovePercent(size_t q, int64_t percent) const;

 private:
  static constexpr int64_t kHourS = 3600;
  // Makes `hour` the hour under way: every hour that leaves the window is taken out of the sums.
  void MoveTo(int64_t hour);

  int64_t origin_;
  int64_t hours_;
  int64_t hour_ = 0;  // the hour under way, counted from origin_
  // Per tenant q and ring slot h (hour modulo hours_): [q * hours_ + h].
  std::vector<int64_t> held_, entitled_;
  std::vector<int64_t> held_sum_, entitled_sum_;
};

}  // namespace gpupool::sim::internal

#endif  // GPUPOOL_SRC_SIM_REPLAY_SHARE_HISTORY_H_
