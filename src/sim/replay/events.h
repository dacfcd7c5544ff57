// The replay's event queue: what makes the clock move. Three kinds of event, taken in this
// order at equal times:
//   - completions, at the second a running job's work is done (cancelled when it is preempted);
//   - arrivals, at each job's submit time, in (submit time, input index) order;
//   - wake-ups: while jobs wait, a cycle `wake_up_every_s` after the previous one even when
//     nothing arrives or completes (ReplayOptions::wake_up_every_s; a checkpoint is not an
//     event, so a policy that waits for victims to checkpoint needs them), and at the moment
//     the driver sets after each cycle (ReplayOptions::wake_up_at_checkpoints_s,
//     checkpoint_wake_ups.h);
// Time never goes backwards: a wake-up is at least one second after the last event handled.
//
//   - pool events (pool_events.h): failures and repairs of GPUs and nodes, maintenance windows,
//     spot reclaims, added nodes, handled after the completions and before the arrivals of their
//     second.
//
// Not API: one of the parts RunReplay() (replay.cc) is built from. A new kind of event (a
// checkpoint) is a new queue here and a new handler in the driver; a new kind of pool event is a
// new kind in pool_events.h.
#ifndef GPUPOOL_SRC_SIM_REPLAY_EVENTS_H_
#define GPUPOOL_SRC_SIM_REPLAY_EVENTS_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "sim/replay/pool_events.h"
#include "sim/replay/run_state.h"

namespace gpupool::sim::internal {

class ReplayEvents {
 public:
  // Arrivals of every job of `state` that can ever run; wake-ups every `wake_up_every_s`
  // seconds (0: none).
  ReplayEvents(const RunState& state, int64_t wake_up_every_s);

  // True while an arrival or a completion is due, or while jobs wait (`jobs_waiting`) and
  // capacity may come back (a repair, a window's end, a spot node's return, an added node) that
  // may let them start. Wake-ups and failures alone do not keep the replay going.
  bool HasMore(bool jobs_waiting) const {
    return next_arrival_ < arrivals_.size() || !completions_.empty() ||
           (jobs_waiting && pool_ != nullptr && pool_->CapacityMayReturn());
  }
  // Pool events come from `pool` (which must outlive this object) from now on.
  void SetPoolEvents(PoolEvents* pool) { pool_ = pool; }
  // The submit time of the first arrival (0 when there is none).
  int64_t FirstArrivalTime() const { return first_arrival_time_; }
  // The time of the next event after `last_time` (the last event handled); wake-ups count only
  // when `jobs_waiting`. Requires HasMore(jobs_waiting).
  int64_t NextTime(int64_t last_time, bool jobs_waiting) const;

  // The next completion or arrival due at `t`, removed from the queue; none when no more are.
  std::optional<int32_t> PopCompletionAt(int64_t t);
  std::optional<int32_t> PopArrivalAt(int64_t t);

  // A started job completes at `t` / a preempted one no longer does.
  void AddCompletion(int64_t t, int32_t job) { completions_.insert({t, job}); }
  void CancelCompletion(int64_t t, int32_t job) { completions_.erase({t, job}); }
  // A scheduling cycle ran at `t`: the next wake-up is counted from it.
  void CycleRanAt(int64_t t) { last_cycle_ = t; }
  // While jobs wait, also a cycle at `t` (none: no such wake-up), until the next call.
  void SetCheckpointWakeUp(std::optional<int64_t> t) { checkpoint_wake_up_ = t; }

 private:
  static constexpr int64_t kNever = std::numeric_limits<int64_t>::min();

  std::vector<std::pair<int64_t, int32_t>> arrivals_;  // (submit time, job)
  size_t next_arrival_ = 0;
  int64_t first_arrival_time_ = 0;
  std::set<std::pair<int64_t, int32_t>> completions_;  // (time, job)
  int64_t wake_up_every_s_;
  int64_t last_cycle_ = kNever;
  std::optional<int64_t> checkpoint_wake_up_;
  PoolEvents* pool_ = nullptr;
};

}  // namespace gpupool::sim::internal

#endif  // GPUPOOL_SRC_SIM_REPLAY_EVENTS_H_
