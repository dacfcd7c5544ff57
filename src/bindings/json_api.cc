#include "bindings/json_api.h"

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "gpupool/apply.h"
#include "gpupool/explain.h"
#include "gpupool/io/json.h"
#include "gpupool/schedule.h"
#include "gpupool/validate.h"

namespace gpupool::bindings {
namespace {

// `status` with `name: ` in front of its message: how the CLI names the file an error is in.
absl::Status Named(std::string_view name, const absl::Status& status) {
  return absl::Status(status.code(), fmt::format("{}: {}", name, std::string(status.message())));
}

// The CLI's LoadValidSnapshot() on text.
absl::StatusOr<Snapshot> ParseValidSnapshot(std::string_view json) {
  if (absl::Status size = CheckDocumentSize("snapshot", json.size()); !size.ok()) return size;
  absl::StatusOr<Snapshot> snapshot = io::ParseSnapshot(json);
  if (!snapshot.ok()) return Named("snapshot", snapshot.status());
  if (absl::Status valid = ValidateSnapshot(*snapshot); !valid.ok()) {
    return Named("snapshot", valid);
  }
  return snapshot;
}

struct Scheduled {
  Snapshot snapshot;
  Decisions decisions;
};

// The CLI's LoadAndSchedule() on text: the snapshot first, then the policy, then Schedule().
absl::StatusOr<Scheduled> ParseAndSchedule(std::string_view snapshot_json,
                                           std::optional<std::string_view> policy_json) {
  absl::StatusOr<Snapshot> snapshot = ParseValidSnapshot(snapshot_json);
  if (!snapshot.ok()) return snapshot.status();
  Policy policy;
  if (policy_json.has_value()) {
    if (absl::Status size = CheckDocumentSize("policy", policy_json->size()); !size.ok())
      return size;
    absl::StatusOr<Policy> parsed = io::ParsePolicy(*policy_json);
    if (!parsed.ok()) return Named("policy", parsed.status());
    // Schedule() would refuse a bad policy too, naming no document; here, as in the CLI, the
    // message names the document at fault.
    if (absl::Status valid = ValidatePolicy(*parsed); !valid.ok()) return Named("policy", valid);
    policy = std::move(*parsed);
  }
  absl::StatusOr<Decisions> decisions = Schedule(*snapshot, policy);
  if (!decisions.ok()) return Named("snapshot", decisions.status());
  return Scheduled{std::move(*snapshot), std::move(*decisions)};
}

// "1 node", "3 nodes".
std::string Count(int64_t n, std::string_view singular, std::string_view plural) {
  return fmt::format("{} {}", n, n == 1 ? singular : plural);
}

}  // namespace

absl::Status CheckDocumentSize(std::string_view name, size_t size) {
  if (size <= kMaxJsonBytes) return absl::OkStatus();
  return absl::InvalidArgumentError(fmt::format(
      "{}: {} bytes is more than the {} bytes a document may have", name, size, kMaxJsonBytes));
}

absl::StatusOr<std::string> ScheduleJson(std::string_view snapshot_json,
                                         std::optional<std::string_view> policy_json) {
  absl::StatusOr<Scheduled> scheduled = ParseAndSchedule(snapshot_json, policy_json);
  if (!scheduled.ok()) return scheduled.status();
  return io::DecisionsToJson(scheduled->decisions);
}

absl::StatusOr<std::string> ValidateJson(std::string_view snapshot_json) {
  absl::StatusOr<Snapshot> snapshot = ParseValidSnapshot(snapshot_json);
  if (!snapshot.ok()) return snapshot.status();
  int64_t gpus = 0;
  for (const Node& node : snapshot->nodes) gpus += static_cast<int64_t>(node.gpus.size());
  int64_t running = 0;
  for (const Job& job : snapshot->jobs) running += job.state == JobState::kRunning ? 1 : 0;
  const int64_t jobs = static_cast<int64_t>(snapshot->jobs.size());
  const auto size = [](const auto& list) { return static_cast<int64_t>(list.size()); };
  return fmt::format("ok: {} ({}), {}, {}, {} ({} pending, {} running)\n",
                     Count(size(snapshot->nodes), "node", "nodes"), Count(gpus, "GPU", "GPUs"),
                     Count(size(snapshot->gpu_models), "GPU model", "GPU models"),
                     Count(size(snapshot->queues), "queue", "queues"), Count(jobs, "job", "jobs"),
                     jobs - running, running);
}

absl::StatusOr<std::string> ExplainJson(std::string_view snapshot_json,
                                        std::optional<std::string_view> policy_json,
                                        std::string_view job_id) {
  absl::StatusOr<Scheduled> scheduled = ParseAndSchedule(snapshot_json, policy_json);
  if (!scheduled.ok()) return scheduled.status();
  absl::StatusOr<std::string> text = ExplainJob(scheduled->snapshot, scheduled->decisions, job_id);
  if (!text.ok()) return Named("snapshot", text.status());
  return text;
}

absl::StatusOr<std::string> ApplyJson(std::string_view snapshot_json,
                                      std::string_view decisions_json) {
  absl::StatusOr<Snapshot> snapshot = ParseValidSnapshot(snapshot_json);
  if (!snapshot.ok()) return snapshot.status();
  if (absl::Status size = CheckDocumentSize("decisions", decisions_json.size()); !size.ok()) {
    return size;
  }
  absl::StatusOr<Decisions> decisions = io::ParseDecisions(decisions_json);
  if (!decisions.ok()) return Named("decisions", decisions.status());
  if (absl::Status applied = ApplyDecisions(*decisions, *snapshot); !applied.ok()) {
    return Named("decisions", applied);
  }
  if (absl::Status valid = ValidateSnapshot(*snapshot); !valid.ok()) {
    return absl::Status(valid.code(),
                        fmt::format("decisions: the applied snapshot is not valid: {}",
                                    std::string(valid.message())));
  }
  return io::SnapshotToJson(*snapshot);
}

}  // namespace gpupool::bindings
