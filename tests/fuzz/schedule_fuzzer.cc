// Fuzzes Schedule() on every snapshot the reader and ValidateSnapshot() accept, under a policy
// whose every knob comes from the input (fuzz_common.h: SNAPSHOT-JSON '\0' POLICY-BYTES), so
// preemption, reclaim across queues, every victim rule, job and queue order, LAS thresholds,
// budgets and the built-in scorers are all explored. Properties: never crashes, hangs or trips a
// sanitizer; a Schedule() that succeeds gives decisions that apply cleanly to a valid snapshot
// with no GPU over-committed, round-trip through JSON, and explain every job (ExplainJob).
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"
#include "gpupool/explain.h"
#include "gpupool/io/json.h"
#include "gpupool/schedule.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const gpupool::fuzz::ScheduleInput input = gpupool::fuzz::SplitScheduleInput(data, size);
  absl::StatusOr<gpupool::Snapshot> snapshot = gpupool::io::ParseSnapshot(input.snapshot_json);
  if (!snapshot.ok() || !gpupool::ValidateSnapshot(*snapshot).ok()) return 0;
  const gpupool::Policy policy = gpupool::fuzz::PolicyFromBytes(input.policy_bytes, *snapshot);
  absl::StatusOr<gpupool::Decisions> decisions = gpupool::Schedule(*snapshot, policy);
  if (!decisions.ok()) {
    // A valid snapshot is refused only for its policy (InvalidArgument naming the field).
    FUZZ_CHECK(decisions.status().code() == absl::StatusCode::kInvalidArgument,
               decisions.status().ToString());
    return 0;
  }
  gpupool::fuzz::CheckDecisions(*snapshot, *decisions);
  for (const gpupool::Job& job : snapshot->jobs) {
    absl::StatusOr<std::string> why = gpupool::ExplainJob(*snapshot, *decisions, job.id);
    FUZZ_CHECK(why.ok(), why.status().ToString());
  }
  return 0;
}
