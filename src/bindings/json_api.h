// gpupool's commands as functions of JSON text: what the C API (c/) and the Python module
// (python/) both call. Internal: the public faces are include/gpupool/c_api.h and the Python
// module `gpupool`.
//
// Each function does what the `gpupool` command of the same name does with files (src/cli/), on
// text held in memory, and returns the same bytes the command writes to stdout. Errors are the
// command's messages with "snapshot: " or "policy: " in place of the file name, and the codes of
// the library (InvalidArgument, FailedPrecondition, NotFound for input errors). Thread-safe and
// deterministic; no exception of ours is thrown (std::bad_alloc may be).
#ifndef GPUPOOL_SRC_BINDINGS_JSON_API_H_
#define GPUPOOL_SRC_BINDINGS_JSON_API_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gpupool::bindings {

// The largest document accepted, in bytes: the JSON parser's limit (GPUPOOL_MAX_JSON_BYTES).
inline constexpr size_t kMaxJsonBytes = 0xFFFFFFFFu;

// OK when a document of `size` bytes is within kMaxJsonBytes; InvalidArgument naming the
// document ("snapshot" or "policy") otherwise. Takes the size alone, so that a caller can check
// it before it builds a view of the text.
absl::Status CheckDocumentSize(std::string_view name, size_t size);

// `gpupool schedule`: the decisions JSON (trailing newline included). `policy_json` unset means
// the default Policy.
absl::StatusOr<std::string> ScheduleJson(std::string_view snapshot_json,
                                         std::optional<std::string_view> policy_json);

// `gpupool validate`: the summary printed after "FILE: " ("ok: 1 node (8 GPUs), ...\n").
absl::StatusOr<std::string> ValidateJson(std::string_view snapshot_json);

// `gpupool explain`: the explanation of one job.
absl::StatusOr<std::string> ExplainJson(std::string_view snapshot_json,
                                        std::optional<std::string_view> policy_json,
                                        std::string_view job_id);

// `gpupool apply`: the snapshot after the decisions are carried out (ApplyDecisions), as
// canonical JSON. Errors name "snapshot" or "decisions".
absl::StatusOr<std::string> ApplyJson(std::string_view snapshot_json,
                                      std::string_view decisions_json);

}  // namespace gpupool::bindings

#endif  // GPUPOOL_SRC_BINDINGS_JSON_API_H_
