// The Python module `gpupool`: the `gpupool` commands as functions of JSON text, and the trace
// replay returning its metrics as a dict (docs/embedding.md).
//
// Each call releases the GIL while gpupool works (the library is thread-safe), so threads of a
// notebook or a controller can schedule in parallel. Input errors raise gpupool.Error (a
// ValueError) with the library's message; a bug of ours raises RuntimeError.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bindings/json_api.h"
#include "gpupool/io/json.h"
#include "gpupool/sim/philly.h"
#include "gpupool/sim/replay.h"
#include "gpupool/sim/trace_job.h"
#include "gpupool/sim/utc_time.h"
#include "gpupool/version.h"
#include "pybind11/pybind11.h"
#include "pybind11/stl.h"

namespace py = pybind11;

namespace gpupool::bindings {
namespace {

// Raised to Python as gpupool.Error.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

bool IsInputError(absl::StatusCode code) {
  return code == absl::StatusCode::kInvalidArgument ||
         code == absl::StatusCode::kFailedPrecondition || code == absl::StatusCode::kNotFound ||
         code == absl::StatusCode::kOutOfRange;
}

// The value, or the status as a Python exception (to be called with the GIL held).
template <typename T>
T Unwrap(absl::StatusOr<T> result) {
  if (result.ok()) return std::move(*result);
  if (IsInputError(result.status().code())) {
    throw InputError(std::string(result.status().message()));
  }
  throw std::runtime_error("gpupool internal error: " + result.status().ToString());
}

std::string Schedule(const std::string& snapshot_json,
                     const std::optional<std::string>& policy_json) {
  absl::StatusOr<std::string> decisions;
  {
    py::gil_scoped_release release;
    decisions = ScheduleJson(snapshot_json, policy_json);
  }
  return Unwrap(std::move(decisions));
}

std::string Validate(const std::string& snapshot_json) {
  absl::StatusOr<std::string> summary;
  {
    py::gil_scoped_release release;
    summary = ValidateJson(snapshot_json);
  }
  return Unwrap(std::move(summary));
}

std::string Explain(const std::string& snapshot_json, const std::string& job_id,
                    const std::optional<std::string>& policy_json) {
  absl::StatusOr<std::string> text;
  {
    py::gil_scoped_release release;
    text = ExplainJson(snapshot_json, policy_json, job_id);
  }
  return Unwrap(std::move(text));
}

std::string Apply(const std::string& snapshot_json, const std::string& decisions_json) {
  absl::StatusOr<std::string> next;
  {
    py::gil_scoped_release release;
    next = ApplyJson(snapshot_json, decisions_json);
  }
  return Unwrap(std::move(next));
}

// The replay of docs/replay.md on a trace held in `trace_csv`: the metrics JSON
// (ReplayMetricsToJson), or an input error.
absl::StatusOr<std::string> ReplayMetricsJson(const std::string& trace_csv,
                                              const std::string& policy,
                                              const std::optional<std::string>& policy_json,
                                              const std::optional<std::string>& window_start,
                                              int64_t window_days, int32_t nodes,
                                              int32_t gpus_per_node, int32_t nodes_per_rack) {
  if (nodes < 1 || gpus_per_node < 1 || nodes_per_rack < 1) {
    return absl::InvalidArgumentError("nodes, gpus_per_node and nodes_per_rack must be at least 1");
  }
  if (window_days < 1) return absl::InvalidArgumentError("window_days must be at least 1");
  absl::StatusOr<std::vector<sim::TraceJob>> jobs = sim::ParsePhillyCsv(trace_csv, "trace");
  if (!jobs.ok()) return jobs.status();
  if (window_start.has_value()) {
    absl::StatusOr<int64_t> start = sim::ParseUtcTime(*window_start);
    if (!start.ok()) {
      return absl::InvalidArgumentError("window_start: " + std::string(start.status().message()));
    }
    *jobs = sim::SelectWindow(*jobs, *start, window_days);
  }
  absl::StatusOr<sim::ReplayOptions> options = sim::MakeReplayOptions(policy);
  if (!options.ok()) return options.status();
  if (policy_json.has_value()) {
    absl::StatusOr<Policy> engine_policy = io::ParsePolicy(*policy_json);
    if (!engine_policy.ok()) {
      return absl::InvalidArgumentError("policy: " + std::string(engine_policy.status().message()));
    }
    options->policy = std::move(*engine_policy);
  }
  options->pool = {
      .nodes = nodes, .gpus_per_node = gpus_per_node, .nodes_per_rack = nodes_per_rack};
  absl::StatusOr<sim::ReplayResult> result = sim::RunReplay(*options, *jobs);
  if (!result.ok()) return result.status();
  return sim::ReplayMetricsToJson(result->metrics);
}

py::dict SimulateReplay(const std::string& trace_csv, const std::string& policy,
                        const std::optional<std::string>& policy_json,
                        const std::optional<std::string>& window_start, int64_t window_days,
                        int32_t nodes, int32_t gpus_per_node, int32_t nodes_per_rack) {
  absl::StatusOr<std::string> metrics;
  {
    py::gil_scoped_release release;
    metrics = ReplayMetricsJson(trace_csv, policy, policy_json, window_start, window_days, nodes,
                                gpus_per_node, nodes_per_rack);
  }
  return py::module_::import("json").attr("loads")(Unwrap(std::move(metrics)));
}

}  // namespace
}  // namespace gpupool::bindings

PYBIND11_MODULE(gpupool, m) {
  namespace b = gpupool::bindings;
  m.doc() =
      "gpupool: deterministic scheduling for shared GPU pools.\n\n"
      "JSON in, JSON out: the documents are those of docs/snapshot-format.md,\n"
      "docs/policy-format.md and docs/decisions-format.md; each function returns what the\n"
      "`gpupool` command of the same name prints. Invalid input raises gpupool.Error.";
  m.attr("__version__") = gpupool::kVersion;
  py::register_exception<b::InputError>(m, "Error", PyExc_ValueError);

  m.def("schedule", &b::Schedule, py::arg("snapshot_json"), py::arg("policy_json") = py::none(),
        "schedule(snapshot_json: str, policy_json: str | None = None) -> str\n\n"
        "One scheduling cycle. Returns the decisions JSON, byte for byte what\n"
        "`gpupool schedule FILE [--policy POLICY]` prints (ending in a newline). policy_json\n"
        "None means the default policy. Raises gpupool.Error for an invalid snapshot or\n"
        "policy, with the CLI's message (\"snapshot: ...\" or \"policy: ...\").");
  m.def("validate", &b::Validate, py::arg("snapshot_json"),
        "validate(snapshot_json: str) -> str\n\n"
        "Checks a snapshot. Returns the summary `gpupool validate FILE` prints after\n"
        "\"FILE: \" (\"ok: 2 nodes (16 GPUs), ...\\n\"). Raises gpupool.Error if invalid.");
  m.def("explain", &b::Explain, py::arg("snapshot_json"), py::arg("job_id"),
        py::arg("policy_json") = py::none(),
        "explain(snapshot_json: str, job_id: str, policy_json: str | None = None) -> str\n\n"
        "Schedules the snapshot and explains one job, as `gpupool explain` does. Raises\n"
        "gpupool.Error for invalid input or an unknown job id.");
  m.def("apply", &b::Apply, py::arg("snapshot_json"), py::arg("decisions_json"),
        "apply(snapshot_json: str, decisions_json: str) -> str\n\n"
        "Carries the decisions (as schedule() returns them for this snapshot) out on the\n"
        "snapshot, as a host would, and returns the next snapshot's JSON, byte for byte what\n"
        "`gpupool apply SNAPSHOT DECISIONS` prints. Raises gpupool.Error for an invalid\n"
        "snapshot (\"snapshot: ...\") or decisions that cannot be read or do not fit it\n"
        "(\"decisions: ...\").");
  m.def("replay_policy_names", &gpupool::sim::ReplayPolicyNames,
        "replay_policy_names() -> list[str]\n\n"
        "The named policies simulate_replay() accepts (docs/replay.md says what each sets).");
  m.def("simulate_replay", &b::SimulateReplay, py::arg("trace_csv"), py::arg("policy") = "default",
        py::arg("policy_json") = py::none(), py::arg("window_start") = py::none(),
        py::arg("window_days") = 14, py::arg("nodes") = 64, py::arg("gpus_per_node") = 8,
        py::arg("nodes_per_rack") = 16,
        "simulate_replay(trace_csv: str, policy: str = 'default', policy_json: str | None = None,\n"
        "                window_start: str | None = None, window_days: int = 14, nodes: int = 64,\n"
        "                gpus_per_node: int = 8, nodes_per_rack: int = 16) -> dict\n\n"
        "Replays a job trace in time through the scheduler (docs/replay.md) and returns its\n"
        "metrics as a dict: jct_mean_s, jct_p50_s, jct_p99_s, queue_delay_mean_s,\n"
        "queue_delay_p99_s, makespan_s, utilization, preemptions,\n"
        "gpu_hours_lost_to_preemption, jain_fairness, max_wait_s, policy, jobs, cycles and\n"
        "queues (per virtual cluster). trace_csv is the text of a Philly-format CSV;\n"
        "policy one of replay_policy_names(); policy_json, when given, replaces that policy's\n"
        "engine policy (its queue mode, checkpoint and restore costs stay); window_start\n"
        "('YYYY-MM-DD') keeps the jobs submitted in [start, start + window_days). The pool is\n"
        "nodes x gpus_per_node GPUs, nodes_per_rack to a rack. Deterministic. Raises\n"
        "gpupool.Error for an invalid trace, policy or argument.");
}
