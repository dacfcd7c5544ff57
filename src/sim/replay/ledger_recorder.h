// The replay's ledger (gpupool/ledger.h): every start, preemption and completion of the replay
// told to a gpupool::Ledger as a host would, so that ReplayResult::ledger holds the GPU time of
// each virtual cluster, split into productive work, work lost to preemption and restore time,
// within its guarantee or borrowed (docs/accounting.md).
//
// The ledger's queues are the virtual clusters with their guarantees (Tenants), whatever queue
// layout the policy gives the engine (the LAS policies put every job in one queue "all"): the
// teams are what is charged back and compared with dedicated pools, under every policy alike.
//
// The replay's own checkpoint model decides what a preemption loses: the ledger is told the
// victim's last checkpoint (CheckpointModel::LastCheckpointTime) and each run's restore time
// (the restore_due the run pays), so the ledger's lost work is the replay's work - kept.
//
// Not API: one of the parts RunReplay() (replay.cc) is built from.
#ifndef GPUPOOL_SRC_SIM_REPLAY_LEDGER_RECORDER_H_
#define GPUPOOL_SRC_SIM_REPLAY_LEDGER_RECORDER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gpupool/ledger.h"
#include "gpupool/sim/replay.h"
#include "sim/replay/run_state.h"
#include "sim/replay/tenants.h"

namespace gpupool::sim::internal {

class LedgerRecorder {
 public:
  // A ledger of the nodes of `pool` (MakePoolSnapshot) and one queue per tenant with its
  // guarantee and labels, from `start` on, with series buckets of `bucket_s`. `tenants` must
  // outlive it.
  static absl::StatusOr<LedgerRecorder> Create(const ReplayPool& pool, const Tenants& tenants,
                                               int64_t start, int64_t bucket_s);

  // Job `i` (in state `run`, before the start is applied) starts at `now` on `placements`.
  absl::Status Started(int32_t i, int64_t now, const JobRun& run,
                       const std::vector<ReplicaPlacement>& placements);
  // Job `i` is preempted at `now` for job `for_job` (-1: unknown), its last checkpoint at
  // `last_checkpoint` (none: no checkpoint).
  absl::Status Preempted(int32_t i, int64_t now, std::optional<int64_t> last_checkpoint,
                         int32_t for_job);
  absl::Status Completed(int32_t i, int64_t now);
  // Job `i` is stopped at `now` by a failure of a GPU or node it runs on, its last checkpoint
  // at `last_checkpoint` (CheckpointModel::FailureCheckpointTime; none: no checkpoint).
  absl::Status Failed(int32_t i, int64_t now, std::optional<int64_t> last_checkpoint);
  // Moves the ledger's time to `now` (>= every event so far).
  absl::Status AdvanceTo(int64_t now);
  // The busy milli-GPU-seconds of tenant `q`'s jobs from the start to the ledger's time.
  int64_t Busy(int32_t q) const;
  // The report at `end` (the last completion).
  absl::StatusOr<LedgerReport> Finish(int64_t end);

 private:
  LedgerRecorder(Ledger ledger, const Tenants& tenants)
      : ledger_(std::move(ledger)), tenants_(&tenants) {}
  const std::string& QueueOf(int32_t i) const {
    return tenants_->names[static_cast<size_t>(tenants_->of_job[static_cast<size_t>(i)])];
  }

  Ledger ledger_;
  const Tenants* tenants_;
};

}  // namespace gpupool::sim::internal

#endif  // GPUPOOL_SRC_SIM_REPLAY_LEDGER_RECORDER_H_
