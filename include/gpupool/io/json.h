// The JSON format of snapshots, policies and decisions (target gpupool::io).
//
// The format is documented field by field in docs/snapshot-format.md, docs/policy-format.md and
// docs/decisions-format.md. In short:
//
//   - JSON field names are the C++ field names (snake_case); enums are lowercase strings
//     ("ready", "exclusive-gpu", "best-fit", ...). Quantities are JSON integers in the units of
//     resources.h (milli-GPUs, MiB, milli-cores, seconds).
//   - Fields with a default may be omitted; a std::optional field omitted (or null) is unset.
//   - A node's `path` and `labels` are JSON objects ({"rack": "r1"}), in the order written.
//
// Reading is strict, so that typos do not pass silently: unknown object keys, duplicate keys,
// wrong types, integers that do not fit their field, unknown enum names and missing required
// fields are all refused with absl::InvalidArgumentError and a message that starts with the JSON
// path of the offending value, for example
//
//   jobs[3].groups[0].replicas: expected an integer
//   nodes[7].state: unknown value "readyy" (expected ready, cordoned, draining, down)
//   jobs[2].gpu_mili: unknown field
//   jobs[2]: missing required field "queue"
//
// Malformed JSON (truncated, bad UTF-8, nesting deeper than 1024 levels) gives
// "invalid JSON: ..." with the parser's reason; too-deep nesting wins over any other error. An
// integer that does not fit its field, however many digits it has, gives "integer out of range".
// The readers never crash and never throw, whatever the input. They check the shape of the document
// only: whether the snapshot makes sense (unique ids, known references, quantities in range) is
// ValidateSnapshot()'s job (schedule.h).
//
// Writing is canonical: the same value always gives the same bytes on every machine. Keys in a
// fixed order (the order of the C++ fields), lists in the order given, integers only, 2-space
// indentation, arrays of numbers or strings on one line, a trailing newline. Every field is
// written, defaults included, except std::optional fields that are unset. Writing then reading
// gives back an equal value.
//
// All functions are thread-safe (they share no state) and run in time linear in the input.
#ifndef GPUPOOL_IO_JSON_H_
#define GPUPOOL_IO_JSON_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "gpupool/decisions.h"
#include "gpupool/drain_plan.h"
#include "gpupool/policy.h"
#include "gpupool/snapshot.h"

namespace gpupool::io {

// Parses a snapshot document: an object with the optional keys `now`, `topology`, `gpu_models`,
// `nodes`, `queues` and `jobs`. Returns InvalidArgument (message starting with the JSON path) when
// the document is not valid JSON or does not have the shape of a snapshot. Does not run
// ValidateSnapshot(). Parses well over 100 MB/s.
absl::StatusOr<Snapshot> ParseSnapshot(std::string_view json);

// Reads and parses the snapshot file at `path`. Errors are those of ParseSnapshot() with the file
// name in front ("pool.json: nodes[2].id: expected a string"), and NotFound (with the file name)
// when the file cannot be read.
absl::StatusOr<Snapshot> ReadSnapshotFile(const std::string& path);

// Parses a policy document: an object with the optional keys `name`, `version`, `placement`,
// `job_order` and `budgets`; omitted keys keep the defaults of Policy. The placement scorer is a
// host-code object and cannot be set from JSON: a `scorer` key is refused. InvalidArgument on any
// error, as for ParseSnapshot().
absl::StatusOr<Policy> ParsePolicy(std::string_view json);

// Reads and parses the policy file at `path`; errors as for ReadSnapshotFile().
absl::StatusOr<Policy> ReadPolicyFile(const std::string& path);

// Parses a decisions document as written by DecisionsToJson(). InvalidArgument on any error.
absl::StatusOr<Decisions> ParseDecisions(std::string_view json);

// Reads and parses the decisions file at `path`; errors as for ReadSnapshotFile().
absl::StatusOr<Decisions> ReadDecisionsFile(const std::string& path);

// Canonical JSON of a snapshot. ParseSnapshot() of the result gives back an equal snapshot.
std::string SnapshotToJson(const Snapshot& snapshot);

// Canonical JSON of a policy. A host-supplied `scorer` is not written (it is code, not data).
std::string PolicyToJson(const Policy& policy);

// Canonical JSON of decisions, lists in the order given (Schedule() sorts them by job id).
// Byte-for-byte stable: the golden tests compare it exactly.
std::string DecisionsToJson(const Decisions& decisions);

// Canonical JSON of a drain plan (drain_plan.h), as `gpupool drain --json` prints it
// (docs/cli.md).
std::string DrainPlanToJson(const DrainPlan& plan);

}  // namespace gpupool::io

#endif  // GPUPOOL_IO_JSON_H_
