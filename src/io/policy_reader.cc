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
  static constexpr FieldSpec kFields[] = {
      {"max_candidates"}, {"max_preemption_plans"}, {"max_counterfactual_plans"}};
  return internal::ReadFields(value, path, kFields, [&](size_t field, JsonValue v, const Path& p) {
    switch (field) {
      case 0:
        return internal::ReadInt64(v, p, out.max_candidates);
      case 1:
        return internal::ReadInt64(v, p, out.max_preemption_plans);
      default:
        return internal::ReadInt64(v, p, out.max_counterfactual_plans);
    }
  });
}

absl::Status ReadPreemption(JsonValue value, const Path& path, PreemptionOptions& out) {
  static constexpr FieldSpec kFields[] = {{"enabled"},
                                          {"checkpoint_grace_s"},
                                          {"reclaim_across_queues"},
                                          {"victim_order"},
                                          {"max_victim_lost_s"},
                                          {"min_victim_run_s"},
                                          {"reclaim_lower_priority_only"},
                                          {"starving_outrank"}};
  return internal::ReadFields(value, path, kFields, [&](size_t field, JsonValue v, const Path& p) {
    switch (field) {
      case 0:
        return internal::ReadBool(v, p, out.enabled);
      case 1:
        return internal::ReadInt64(v, p, out.checkpoint_grace_s);
      case 2:
        return internal::ReadBool(v, p, out.reclaim_across_queues);
      case 3:
        return internal::ReadEnum(v, p, out.victim_order, internal::ParseVictimOrder,
                                  internal::VictimOrderNames);
      case 4:
        return internal::ReadInt64(v, p, out.max_victim_lost_s);
      case 5:
        return internal::ReadInt64(v, p, out.min_victim_run_s);
      case 6:
        return internal::ReadBool(v, p, out.reclaim_lower_priority_only);
      default:
        return internal::ReadBool(v, p, out.starving_outrank);
    }
  });
}

absl::Status ReadFairShare(JsonValue value, const Path& path, FairShareOptions& out) {
  static constexpr FieldSpec kFields[] = {{"usage_half_life_s"}};
  return internal::ReadFields(value, path, kFields, [&](size_t, JsonValue v, const Path& p) {
    return internal::ReadInt64(v, p, out.usage_half_life_s);
  });
}

absl::Status ReadPolicy(internal::JsonObject& object, const Path& path, Policy& out) {
  // "scorer" is listed so that it gets its own message instead of "unknown field".
  static constexpr FieldSpec kFields[] = {{"name"},
                                          {"version"},
                                          {"placement"},
                                          {"job_order"},
                                          {"las_thresholds_gpu_seconds"},
                                          {"starvation_bound_s"},
                                          {"queue_order"},
                                          {"fair_share"},
                                          {"preemption"},
                                          {"budgets"},
                                          {"scorer"}};
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
            return internal::ReadInt64Array(v, p, out.las_thresholds_gpu_seconds);
          case 5:
            return internal::ReadInt64(v, p, out.starvation_bound_s);
          case 6:
            return internal::ReadEnum(v, p, out.queue_order, internal::ParseQueueOrder,
                                      internal::QueueOrderNames);
          case 7:
            return ReadFairShare(v, p, out.fair_share);
          case 8:
            return ReadPreemption(v, p, out.preemption);
          case 9:
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
