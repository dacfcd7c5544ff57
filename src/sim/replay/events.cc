// The replay's event queue (events.h).
#include "sim/replay/events.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>

namespace gpupool::sim::internal {

ReplayEvents::ReplayEvents(const RunState& state, int64_t wake_up_every_s)
    : wake_up_every_s_(wake_up_every_s) {
  for (int32_t i = 0; i < state.size(); ++i) {
    if (state.job(i).phase != Phase::kUnschedulable) {
      arrivals_.push_back({state.job(i).submit_time, i});
    }
  }
  // Submit time, then input index (the pairs are unique, so the order is total).
  std::sort(arrivals_.begin(), arrivals_.end());
  if (!arrivals_.empty()) first_arrival_time_ = arrivals_.front().first;
}

int64_t ReplayEvents::NextTime(int64_t last_time, bool jobs_waiting) const {
  int64_t t = std::numeric_limits<int64_t>::max();
  if (next_arrival_ < arrivals_.size()) t = arrivals_[next_arrival_].first;
  if (!completions_.empty()) t = std::min(t, completions_.begin()->first);
  if (pool_ != nullptr) {
    if (std::optional<int64_t> p = pool_->NextTime()) t = std::min(t, *p);
  }
  if (wake_up_every_s_ > 0 && jobs_waiting && last_cycle_ != kNever) {
    t = std::min(t, std::max(last_time + 1, last_cycle_ + wake_up_every_s_));
  }
  if (jobs_waiting && checkpoint_wake_up_ && *checkpoint_wake_up_ > last_time) {
    t = std::min(t, *checkpoint_wake_up_);
  }
  return t;
}

std::optional<int32_t> ReplayEvents::PopCompletionAt(int64_t t) {
  if (completions_.empty() || completions_.begin()->first != t) return std::nullopt;
  const int32_t job = completions_.begin()->second;
  completions_.erase(completions_.begin());
  return job;
}

std::optional<int32_t> ReplayEvents::PopArrivalAt(int64_t t) {
  if (next_arrival_ >= arrivals_.size() || arrivals_[next_arrival_].first != t) {
    return std::nullopt;
  }
  return arrivals_[next_arrival_++].second;
}

}  // namespace gpupool::sim::internal
