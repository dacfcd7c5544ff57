// ParsePolicy(): the strict reader of policy documents.
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gpupool/io/json.h"
#include "io/enum_names.h"
#include "io/json_reader.h"

namespace gpupool::io {
namespace {

using internal::FieldSpec;
using internal::JsonValue;
using internal::Path;

absl::Status ReadBudgets(JsonValue value, const Path& path, Budgets& out) {
  static constexpr FieldSpec kFields[] = {{"max_candidates"}, {"max_preemption_plans"}};
  return internal::ReadFields(value, path, kFields, [&](size_t field, JsonValue v, const Path& p) {
    if (field == 0) return internal::ReadInt64(v, p, out.max_candidates);
    return internal::ReadInt64(v, p, out.max_preemption_plans);
  });
}

absl::Status ReadPreemption(JsonValue value, const Path& path, PreemptionOptions& out) {
  static constexpr FieldSpec kFields[] = {{"enabled"}, {"checkpoint_grace_s"}};
  return internal::ReadFields(value, path, kFields, [&](size_t field, JsonValue v, const Path& p) {
    if (field == 0) return internal::ReadBool(v, p, out.enabled);
    return internal::ReadInt64(v, p, out.checkpoint_grace_s);
  });
}

absl::Status ReadPolicy(internal::JsonObject& object, const Path& path, Policy& out) {
  // "scorer" is listed so that it gets its own message instead of "unknown field".
  static constexpr FieldSpec kFields[] = {{"name"},       {"version"}, {"placement"}, {"job_order"},
                                          {"preemption"}, {"budgets"}, {"scorer"}};
  return internal::ReadObjectFields(
      object, path, kFields, [&](size_t field, JsonValue v, const Path& p) {
        switch (field) {
          case 0:
            return internal::ReadString(v, p, out.name);
          case 1:
            return internal::ReadInt32(v, p, out.version);
          case 2:
            return internal::ReadEnum(v, p, out.placement, internal::ParsePlacementStrategy,
                                      internal::PlacementStrategyNames);
          case 3:
            return internal::ReadEnum(v, p, out.job_order, internal::ParseJobOrder,
                                      internal::JobOrderNames);
          case 4:
            return ReadPreemption(v, p, out.preemption);
          case 5:
            return ReadBudgets(v, p, out.budgets);
          default:
            return internal::PathError(
                p,
                "a placement scorer is host code and cannot be set in a policy file (use "
                "\"placement\")");
        }
      });
}

}  // namespace

absl::StatusOr<Policy> ParsePolicy(std::string_view json) {
  return internal::ParseDocument<Policy>(json, ReadPolicy);
}

absl::StatusOr<Policy> ReadPolicyFile(const std::string& path) {
  return internal::ReadDocumentFile<Policy>(path, ReadPolicy);
}

}  // namespace gpupool::io
