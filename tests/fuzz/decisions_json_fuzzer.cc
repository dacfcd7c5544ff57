// Fuzzes io::ParseDecisions() and ApplyDecisions(). Properties: never crashes, hangs or trips a
// sanitizer; decisions it accepts survive DecisionsToJson -> ParseDecisions -> DecisionsToJson
// byte for byte; carried out on a fixed snapshot (examples/scenarios/backfill.snapshot.json),
// they either are refused (FailedPrecondition, the snapshot unchanged) or give a snapshot that
// validation accepts or refuses with one of its codes, and an accepted one round-trips through
// JSON and schedules under the default policy.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_common.h"
#include "gpupool/apply.h"
#include "gpupool/io/json.h"
#include "gpupool/schedule.h"
#include "gpupool/validate.h"

namespace {

// examples/scenarios/backfill.snapshot.json, compact: the job ids the seeds' decisions name.
constexpr std::string_view kSnapshot =
    R"json({"now": 10000, "gpu_models": [{"name": "A100-80GB", "memory_mib": 81920}],
 "nodes": [
  {"id": "n1", "gpu_model": "A100-80GB", "cpu_milli": 64000, "memory_mib": 524288, "gpus": [{"index": 0, "island": 0}, {"index": 1, "island": 0}, {"index": 2, "island": 0}, {"index": 3, "island": 0}]},
  {"id": "n2", "gpu_model": "A100-80GB", "cpu_milli": 64000, "memory_mib": 524288, "gpus": [{"index": 0, "island": 0}, {"index": 1, "island": 0}, {"index": 2, "island": 0}, {"index": 3, "island": 0}]}
 ], "queues": [{"id": "lab"}],
 "jobs": [
  {"id": "r1", "queue": "lab", "submit_time": 1, "groups": [{"request": {"gpu_milli": 2000}}], "state": "running", "start_time": 9000, "placements": [{"group": "main", "replica": 0, "node": "n1", "gpus": [0, 1]}], "runtime_estimate_s": 2000, "attained_service_s": 1000},
  {"id": "r2", "queue": "lab", "submit_time": 2, "groups": [{"request": {"gpu_milli": 3000}}], "state": "running", "start_time": 9000, "placements": [{"group": "main", "replica": 0, "node": "n2", "gpus": [0, 1, 2]}], "runtime_estimate_s": 4000, "attained_service_s": 1000},
  {"id": "big", "queue": "lab", "submit_time": 100, "groups": [{"request": {"gpu_milli": 4000}}], "runtime_estimate_s": 3600},
  {"id": "noest", "queue": "lab", "submit_time": 110, "groups": [{"request": {"gpu_milli": 2000}}]},
  {"id": "tight", "queue": "lab", "submit_time": 120, "groups": [{"request": {"gpu_milli": 2000}}], "runtime_estimate_s": 800},
  {"id": "short", "queue": "lab", "submit_time": 130, "groups": [{"request": {"gpu_milli": 2000}}], "runtime_estimate_s": 600},
  {"id": "long", "queue": "lab", "submit_time": 140, "groups": [{"request": {"gpu_milli": 1000}}], "runtime_estimate_s": 5000}
]})json";

// Carries `decisions` out on kSnapshot and checks what comes back.
void CheckApplied(const gpupool::Decisions& decisions) {
  static const gpupool::Snapshot* const base = [] {
    auto parsed = gpupool::io::ParseSnapshot(kSnapshot);
    FUZZ_CHECK(parsed.ok() && gpupool::ValidateSnapshot(*parsed).ok(), "the fixed snapshot");
    return new gpupool::Snapshot(std::move(*parsed));
  }();
  gpupool::Snapshot next = *base;
  const absl::Status applied = gpupool::ApplyDecisions(decisions, next);
  if (!applied.ok()) {
    FUZZ_CHECK(applied.code() == absl::StatusCode::kFailedPrecondition, applied.ToString());
    FUZZ_CHECK(gpupool::io::SnapshotToJson(next) == gpupool::io::SnapshotToJson(*base),
               "a refused apply changes nothing");
    return;
  }
  const absl::Status valid = gpupool::ValidateSnapshot(next);
  if (!valid.ok()) {
    // validate.h: InvalidArgument for a malformed value, FailedPrecondition for parts that do
    // not agree (a placement on an unknown group or node, an over-committed GPU).
    FUZZ_CHECK(valid.code() == absl::StatusCode::kInvalidArgument ||
                   valid.code() == absl::StatusCode::kFailedPrecondition,
               valid.ToString());
    return;
  }
  const std::string json = gpupool::io::SnapshotToJson(next);
  absl::StatusOr<gpupool::Snapshot> reread = gpupool::io::ParseSnapshot(json);
  FUZZ_CHECK(reread.ok(), reread.status().ToString());
  FUZZ_CHECK(gpupool::io::SnapshotToJson(*reread) == json, "applied snapshot JSON round trip");
  absl::StatusOr<gpupool::Decisions> again = gpupool::Schedule(next, gpupool::Policy());
  FUZZ_CHECK(again.ok(), again.status().ToString());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<gpupool::Decisions> decisions = gpupool::io::ParseDecisions(text);
  if (!decisions.ok()) return 0;
  const std::string json = gpupool::io::DecisionsToJson(*decisions);
  absl::StatusOr<gpupool::Decisions> reread = gpupool::io::ParseDecisions(json);
  FUZZ_CHECK(reread.ok(), reread.status().ToString());
  FUZZ_CHECK(gpupool::io::DecisionsToJson(*reread) == json, "decisions JSON round trip");
  CheckApplied(*decisions);
  return 0;
}
