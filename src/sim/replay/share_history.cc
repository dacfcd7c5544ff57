#include "sim/replay/share_history.h"

#include <algorithm>

#include "absl/numeric/int128.h"

namespace gpupool::sim::internal {

ShareHistory::ShareHistory(size_t tenants, int64_t origin, int32_t hours)
    : origin_(origin),
      hours_(hours),
      held_(tenants * static_cast<size_t>(hours), 0),
      entitled_(tenants * static_cast<size_t>(hours), 0),
      held_sum_(tenants, 0),
      entitled_sum_(tenants, 0) {}

void ShareHistory::MoveTo(int64_t hour) {
  if (hour <= hour_) return;
  if (hour - hour_ >= hours_) {
    // The whole window has passed.
    std::fill(held_.begin(), held_.end(), 0);
    std::fill(entitled_.begin(), entitled_.end(), 0);
    std::fill(held_sum_.begin(), held_sum_.end(), 0);
    std::fill(entitled_sum_.begin(), entitled_sum_.end(), 0);
    hour_ = hour;
    return;
  }
  while (hour_ < hour) {
    ++hour_;
    // The slot of the new hour held the hour that now leaves the window.
    const auto slot = static_cast<size_t>(hour_ % hours_);
    for (size_t q = 0; q < held_sum_.size(); ++q) {
      const size_t i = q * static_cast<size_t>(hours_) + slot;
      held_sum_[q] -= held_[i];
      entitled_sum_[q] -= entitled_[i];
      held_[i] = 0;
      entitled_[i] = 0;
    }
  }
}

void ShareHistory::Add(int64_t from, int64_t to, const std::vector<int64_t>& usage_milli,
                       const std::vector<int64_t>& entitled_milli) {
  if (hours_ == 0) return;
  while (from < to) {
    const int64_t hour = (from - origin_) / kHourS;
    const int64_t until = std::min(to, origin_ + (hour + 1) * kHourS);
    MoveTo(hour);
    const auto slot = static_cast<size_t>(hour % hours_);
    for (size_t q = 0; q < held_sum_.size(); ++q) {
      const size_t i = q * static_cast<size_t>(hours_) + slot;
      const int64_t held = (until - from) * usage_milli[q];
      const int64_t entitled = (until - from) * entitled_milli[q];
      held_[i] += held;
      entitled_[i] += entitled;
      held_sum_[q] += held;
      entitled_sum_[q] += entitled;
    }
    from = until;
  }
}

bool ShareHistory::WithinShare(size_t q) const {
  return hours_ == 0 || held_sum_[q] <= entitled_sum_[q];
}

bool ShareHistory::AbovePercent(size_t q, int64_t percent) const {
  return hours_ != 0 &&
         absl::int128(held_sum_[q]) * 100 > absl::int128(entitled_sum_[q]) * absl::int128(percent);
}

}  // namespace gpupool::sim::internal
