// Stage 7, reservations: what keeps a starving job from waiting forever.
//
// A job past the policy's starvation bound is considered before younger work (order.h), but that
// alone does not let a large gang start in a busy pool: every GPU that frees up is taken by
// smaller jobs behind it before enough free up together. So a starving job that still cannot
// start gets a reservation: the nodes where it can start soonest, whose free capacity (up to what
// the job needs on each) is then held for it for the rest of the cycle. Nothing else starts
// there, and no job running there is evicted for another job (WorkingState::MarkHeld), so those
// nodes drain as their running work ends.
//
// Where: nodes are ranked by when their running work is expected to end (each job's
// runtime_estimate_s minus its attained service, from now; a job without an estimate never ends
// for this purpose), then by how much of them is busy, then topology order. The reservation is
// the placement the job gets (by the placement policy) when the shortest prefix of that ranking
// is emptied, found by binary search over the prefix length. Emptying releases the running work
// and, for a reservation that drains nothing, this cycle's starts on those nodes too, as the
// next cycle, where they run, does (Drain::drains). With backfill on, the backfilled jobs running
// in the snapshot (not those on a node held for an earlier reservation) are events of the ranking
// too, at their own expected ends, before nodes of the same time: each goes then, wherever it
// runs, as it was admitted to be gone by then, and the prefix is one of nodes and backfilled jobs
// (a backfilled job ending before the next node empties counts at its own end).
// Ranking by expected end keeps the choice stable from cycle to cycle: held nodes take no new work,
// so they only get closer to empty, while other nodes may take new work.
//
// The Reserve decision names the nodes (in id order) and the expected start: the latest expected
// end of the work on them, or -1 when some of that work has no estimate.
//
// With policy.backfill on, reservations are also made for the first `reservations` jobs of the
// cycle left pending for lack of room (schedule.cc decides who), and the hold covers the whole of
// each node the reservation uses: what its placement uses (what is free of each of its GPUs, its
// CPU and memory up to what is free), charged to the job's queue, and the rest of the node's free
// capacity, charged to nobody, each recorded, so that backfill.cc can lend them to a job expected
// to end before the reservation's expected start and hold again what that job left. Holding the
// whole node keeps work of unknown length off it, so the next cycle finds the node where this one
// left it and makes the same reservation (a fixed point). A backfilled job
// that ran past its estimate plus the margin (Job::backfilled, overrun) no longer counts as
// ending: with overrun "wait" its end is unknown; with "preempt" (and a preemptible job) it ends
// now, and the reservation that empties its node evicts it, unless a settling pass found that
// the evicted job starts again in the same place (SnapshotIndex::restored): it then counts as
// under "wait".
#ifndef GPUPOOL_RESERVE_H_
#define GPUPOOL_RESERVE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "gpupool/decisions.h"
#include "gpupool/policy.h"
#include "place.h"
#include "snapshot_index.h"
#include "working_state.h"

namespace gpupool::internal {

class Reserver {
 public:
  Reserver(const SnapshotIndex& index, WorkingState& state, Placer& placer, const Policy& policy);

  // Records a job started in this cycle (its work ends `runtime_estimate_s` from now).
  void NoteStart(int32_t j, const std::vector<ReplicaPlacement>& placements);

  // A reservation made for a pending job, the overrun backfilled jobs it evicts (with
  // backfill.overrun "preempt") and the jobs it drains (preemption.starving_drain); both
  // released in the working state, each in id order.
  struct Reservation {
    ReserveDecision decision;
    std::vector<int32_t> evicted;
    std::vector<int32_t> drained;
  };
  // How a starving job's reservation drains its nodes (preemption.starving_drain). `from(v)`:
  // when running job v may next go for the job (INT64_MAX: not before its work ends); a job
  // counts as ending then if that is sooner than its estimate, for the ranking and the expected
  // start. `take(v)`: asked about each running job on the GPUs the reservation's placement uses
  // (once per job, in id order), whether it goes now (it then counts the job as taken).
  // `drains`: whether the reservation drains at all. One that does not also empties a node of
  // the starts made earlier in the cycle, as the next cycle, where they run, does (a drain does
  // not: a start of this cycle is no victim, and it would drain jobs for a reservation that the
  // next pass, seeing that start running, may make elsewhere).
  // `may(v, planned)`: whether v could go now after the jobs `planned`, without taking it (the
  // same answer `take` would give, with no effect). `without_start`: whether it drains also when
  // the reservation's expected start is unknown (a starving job's drain; a blocked job's,
  // preemption.drain_blocked_jobs, does not).
  struct Drain {
    absl::FunctionRef<int64_t(int32_t)> from;
    absl::FunctionRef<bool(int32_t)> take;
    absl::FunctionRef<bool(int32_t, const std::vector<int32_t>&)> may;
    bool drains = false;
    bool without_start = false;
  };
  // For pending job j, which has just failed to start: holds capacity for it where it can start
  // soonest and returns the reservation; nullopt when it could not start even on an empty pool.
  // A transaction of its own: what it holds is committed; with nothing held, the working state is
  // as it was.
  std::optional<Reservation> Reserve(int32_t j, const Drain& drain);

  // Backfill (backfill.cc): tries to start pending job j in the capacity held for the
  // reservations it is expected to end before (now + runtime_estimate_s + margin_s at most their
  // expected start). On success returns its placements, committed, and holds again for each of
  // those reservations what j left of its capacity; otherwise the state is unchanged. Call only
  // after an ordinary start of j failed.
  std::optional<std::vector<ReplicaPlacement>> Backfill(int32_t j);

  // Why job j, left pending, did not start in the capacity this cycle's reservations hold so
  // far (with backfill on, when they hold some milli-GPUs), as a clause for its pending detail:
  // "N milli-GPUs are held for reservations ...: it has no runtime_estimate_s" and so on. Empty
  // when nothing is held or backfill is off.
  std::string BackfillRefusal(int32_t j) const;

  // Is node n held for a reservation made in this cycle?
  bool held(int32_t n) const { return held_[n] != 0; }
  // Milli-GPUs held for this cycle's reservations, per flat GPU id: capacity that is idle but
  // closed to later jobs (headroom counts it as free, headroom.h).
  const std::vector<int64_t>& held_gpu_milli() const { return held_gpu_milli_; }

 private:
  static constexpr int64_t kNever = INT64_MAX;
  // When running job v's work is expected to end, or kNever, as job j's reservation sees it.
  int64_t ExpectedEnd(int32_t j, int32_t v) const;
  // When `job` (with a runtime_estimate_s) would have to end if it backfilled now: now + its
  // whole estimate + margin_s, saturating at kNever (past the int64 range: never).
  int64_t BackfillEnd(const Job& job) const;
  // When the work on node n is expected to end (now if none is left), or kNever, as job j's
  // reservation sees it; a job that may be drained sooner (Drain::from) counts as ending then.
  int64_t NodeEnd(int32_t j, int32_t n, const Drain& drain) const;
  // Is running job j a backfilled job past its estimate plus the margin (backfill on only)?
  bool Overrun(int32_t j) const;
  // May overrun job v go for job j's reservation (backfill.overrun "preempt")? Not when v,
  // waiting, would come before j in the job order: it would start again at once, where it ran
  // or elsewhere, before j's reservation holds anything.
  bool OverrunGoesFor(int32_t j, int32_t v) const;
  // Holds, for job j, up to what its placement needs of its nodes' free capacity (backfill
  // off): per replica its share on as many GPUs as it uses, its own GPUs first.
  void Hold(int32_t j, const std::vector<ReplicaPlacement>& placements);

  // Capacity held for one reservation (backfill on): what its placement uses, one slice per GPU
  // (its milli-GPUs and GPU memory) and one per replica for CPU and memory, charged to the job's
  // queue; then the rest of each of its nodes' free capacity, the same way, charged to nobody.
  // Each slice as WorkingState::Allocate() took it.
  struct Slice {
    int32_t node;
    int32_t gpu;  // flat GPU id, or kNone for a CPU-and-memory slice
    int64_t milli, gpu_memory_mib, cpu_milli, memory_mib;
    bool charged;  // the job's own part (charged to its queue), or the rest of the node
  };
  struct Held {
    int32_t job;
    int64_t expected_start;  // kNever when unknown
    std::vector<Slice> slices;
  };
  // Takes slice s (as much of it as is free now, at most what it records) for reservation r's
  // job; updates s to what was taken. False when nothing of it was free.
  bool TakeSlice(int32_t job, Slice& s);
  void HoldExactly(Held& held, int32_t j, const ReplicaPlacement& p);
  // The rest of node n's free capacity, uncharged.
  void HoldRest(Held& held, int32_t j, int32_t n);

  const SnapshotIndex& index_;
  WorkingState& state_;
  Placer& placer_;
  const Policy& policy_;
  // Jobs with work on each node: running ones from the snapshot and this cycle's starts.
  std::vector<std::vector<int32_t>> jobs_on_node_;
  std::vector<uint8_t> started_now_;
  // Where this cycle started each job (NoteStart()).
  std::vector<std::vector<ReplicaPlacement>> placed_;
  // Does job v, started in this cycle, have work on node n from that start?
  bool PlacedOn(int32_t v, int32_t n) const;
  std::vector<uint8_t> held_;
  std::vector<int64_t> held_gpu_milli_;
  // With backfill on: what each reservation of the cycle holds, in the order they were made.
  std::vector<Held> holds_;
};

}  // namespace gpupool::internal

#endif  // GPUPOOL_RESERVE_H_
