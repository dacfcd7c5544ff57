// Stage 7, second half: backfill into held capacity (policy.backfill).
//
// A reservation holds capacity for a job that cannot start yet (reserve.cc); left alone, that
// capacity idles until the reservation's expected start. Backfill lends it to a job that is
// expected to be gone by then: a job with a runtime_estimate_s for which now + runtime_estimate_s
// + margin_s is at most the reservation's expected start. Such a job, if the ordinary start
// failed, is tried once more with the capacity of every reservation it would end before given
// back to the working state; if it places, it starts (backfilled), and each of those reservations
// holds again what the job left of its capacity, so that jobs after it see only the rest.
//
// What this guarantees: at a reservation's expected start, if every job runs no longer than its
// estimate (plus the margin, for backfilled ones), every backfilled job that took some of the
// reservation's capacity has ended, and nothing else started on its nodes (they are held whole).
// So no backfilled start makes a reservation's job start later than its expected start.
// A reservation whose expected start is unknown (-1: some work it waits for has no estimate) lends
// nothing. The estimate is taken whole, not minus attained_service_s: a resumed job is treated as
// if it started over (conservative), and that is also what overrun measures (reserve.cc). A job
// that has already run longer than its estimate (attained_service_s above it) never backfills.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "internal/saturating.h"
#include "reserve.h"

namespace gpupool::internal {

std::optional<std::vector<ReplicaPlacement>> Reserver::Backfill(int32_t j) {
  if (!policy_.backfill.enabled || holds_.empty()) return std::nullopt;
  const Job& job = *index_.job(j).job;
  if (!job.runtime_estimate_s.has_value()) return std::nullopt;
  // An estimate the job has already outrun is not counted on again: an overrun job evicted for a
  // reservation (overrun: preempt) would otherwise backfill at once into the capacity it left.
  if (job.attained_service_s > *job.runtime_estimate_s) return std::nullopt;
  const int64_t end = BackfillEnd(job);
  if (end == kNever) return std::nullopt;

  std::vector<Held*> lenders;
  for (Held& held : holds_) {
    if (held.expected_start != kNever && end <= held.expected_start) lenders.push_back(&held);
  }
  if (lenders.empty()) return std::nullopt;

  const WorkingState::Mark mark = state_.Checkpoint();
  for (const Held* held : lenders) {
    for (const Slice& s : held->slices) {
      // As TakeSlice() took it: the rest of a node was charged to nobody. What was charged stays
      // held under the queue's limits: a backfill borrows capacity, never limit room.
      if (s.gpu != kNone) {
        if (s.charged) state_.HoldLimitRoom(held->job, index_.node_model(s.node), s.milli);
        state_.Deallocate(held->job, s.node, {s.gpu}, s.milli, s.gpu_memory_mib, 0, 0, s.charged);
        held_gpu_milli_[s.gpu] -= s.milli;
      } else {
        state_.Deallocate(held->job, s.node, {}, 0, 0, s.cpu_milli, s.memory_mib, s.charged);
      }
    }
  }
  auto placements = placer_.TryStart(j);
  if (!placements) {
    state_.Rollback(mark);
    for (const Held* held : lenders) {
      for (const Slice& s : held->slices) {
        if (s.gpu != kNone) held_gpu_milli_[s.gpu] += s.milli;
      }
    }
    return std::nullopt;
  }
  // Each lender holds again what the backfilled job left of its capacity.
  for (Held* held : lenders) {
    std::vector<Slice> kept;
    for (Slice s : held->slices) {
      if (!TakeSlice(held->job, s)) continue;
      // Charged again: no longer held as limit room only.
      if (s.charged && s.gpu != kNone) {
        state_.HoldLimitRoom(held->job, index_.node_model(s.node), -s.milli);
      }
      kept.push_back(s);
    }
    held->slices = std::move(kept);
  }
  state_.Commit();
  return placements;
}

std::string Reserver::BackfillRefusal(int32_t j) const {
  if (!policy_.backfill.enabled) return {};
  int64_t held = 0;
  for (const Held& h : holds_) {
    for (const Slice& s : h.slices) {
      if (s.gpu != kNone) held += s.milli;
    }
  }
  if (held <= 0) return {};
  const std::string prefix = fmt::format(
      "; {} milli-GPUs more in the pool are held for reservations, and it may not "
      "backfill into them: ",
      held);
  const Job& job = *index_.job(j).job;
  if (!job.runtime_estimate_s.has_value()) return prefix + "it has no runtime_estimate_s";
  if (job.attained_service_s > *job.runtime_estimate_s) {
    return prefix + fmt::format("it has run {} s, longer than its runtime_estimate_s {}",
                                job.attained_service_s, *job.runtime_estimate_s);
  }
  const int64_t end = BackfillEnd(job);
  int64_t latest = -1;  // the latest known expected start among the holds, or -1
  for (const Held& h : holds_) {
    if (h.expected_start != kNever) latest = std::max(latest, h.expected_start);
  }
  if (latest < 0) return prefix + "their reservations' expected start is unknown (-1)";
  if (end > latest) {
    return prefix + fmt::format(
                        "it would end at {} (now + runtime_estimate_s + backfill.margin_s), after "
                        "their reservations' expected starts (the latest {})",
                        end, latest);
  }
  return prefix + fmt::format(
                      "it would end by {}, before some of their reservations' expected starts, "
                      "but does not fit in what those hold",
                      end);
}

int64_t Reserver::BackfillEnd(const Job& job) const {
  return SaturatingAdd(SaturatingAdd(index_.snapshot().now, *job.runtime_estimate_s),
                       policy_.backfill.margin_s);
}

}  // namespace gpupool::internal
