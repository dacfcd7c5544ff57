// The replay's ledger (ledger_recorder.h).
#include "sim/replay/ledger_recorder.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"

namespace gpupool::sim::internal {
namespace {

// A ledger error in the replay is a bug of the replay (it only reports what it did).
absl::Status Internal(const absl::Status& status) {
  if (status.ok()) return status;
  return absl::InternalError("replay ledger: " + std::string(status.message()));
}

// The id the replay gives job i in its snapshots (CycleSnapshot's templates).
std::string JobId(int32_t i) { return fmt::format("j{:06}", i); }

}  // namespace

absl::StatusOr<LedgerRecorder> LedgerRecorder::Create(const ReplayPool& pool,
                                                      const Tenants& tenants, int64_t start,
                                                      int64_t bucket_s) {
  LedgerSetup setup;
  setup.start_time = start;
  setup.nodes = MakePoolSnapshot(pool).nodes;
  for (size_t q = 0; q < tenants.size(); ++q) {
    setup.queues.push_back(Queue{.id = tenants.names[q],
                                 .quotas = {Quota{.guaranteed_milli = tenants.guarantee_milli[q]}},
                                 .labels = tenants.labels[q]});
  }
  setup.series_bucket_s = bucket_s;
  absl::StatusOr<Ledger> ledger = Ledger::Create(setup);
  if (!ledger.ok()) return Internal(ledger.status());
  return LedgerRecorder(*std::move(ledger), tenants);
}

absl::Status LedgerRecorder::Started(int32_t i, int64_t now, const JobRun& run,
                                     const std::vector<ReplicaPlacement>& placements) {
  LedgerStart start;
  start.job = JobId(i);
  start.queue = QueueOf(i);
  start.placements = placements;
  start.restore_s = run.restore_due;
  return Internal(ledger_.Start(now, start));
}

absl::Status LedgerRecorder::Preempted(int32_t i, int64_t now,
                                       std::optional<int64_t> last_checkpoint, int32_t for_job) {
  const std::string by = for_job >= 0 ? QueueOf(for_job) : std::string();
  // No checkpoint: a time before every run, which the ledger counts as none in this run.
  return Internal(ledger_.Preempt(now, JobId(i), by,
                                  last_checkpoint.value_or(std::numeric_limits<int64_t>::min())));
}

absl::Status LedgerRecorder::Completed(int32_t i, int64_t now) {
  return Internal(ledger_.Finish(now, JobId(i)));
}

absl::Status LedgerRecorder::Failed(int32_t i, int64_t now,
                                    std::optional<int64_t> last_checkpoint) {
  return Internal(
      ledger_.Fail(now, JobId(i), last_checkpoint.value_or(std::numeric_limits<int64_t>::min())));
}

absl::Status LedgerRecorder::AdvanceTo(int64_t now) { return Internal(ledger_.AdvanceTo(now)); }

int64_t LedgerRecorder::Busy(int32_t q) const {
  // Every tenant is a queue of the ledger (Create), so the lookup cannot fail.
  return ledger_.SubtreeBusy(tenants_->names[static_cast<size_t>(q)]).value_or(0);
}

absl::StatusOr<LedgerReport> LedgerRecorder::Finish(int64_t end) {
  if (absl::Status status = ledger_.AdvanceTo(end); !status.ok()) return Internal(status);
  return ledger_.Report();
}

}  // namespace gpupool::sim::internal
