// ParseDecisions(): reads back what DecisionsToJson() writes, with the same strictness as the
// snapshot reader (hosts and tools compare or replay decision files).
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
using internal::ReadArray;
using internal::ReadFields;
using internal::ReadInt32;
using internal::ReadInt64;
using internal::ReadString;

absl::Status ReadPlacements(JsonValue value, const Path& path, std::vector<ReplicaPlacement>& out) {
  return ReadArray(value, path, out, internal::ReadReplicaPlacement);
}

absl::Status ReadStart(JsonValue value, const Path& path, StartDecision& out) {
  static constexpr FieldSpec kFields[] = {{"job", true}, {"placements"}};
  return ReadFields(value, path, kFields, [&](size_t field, JsonValue v, const Path& p) {
    if (field == 0) return ReadString(v, p, out.job);
    return ReadPlacements(v, p, out.placements);
  });
}

absl::Status ReadPreempt(JsonValue value, const Path& path, PreemptDecision& out) {
  static constexpr FieldSpec kFields[] = {
      {"job", true}, {"for_job"}, {"reason"}, {"lost_milli_gpu_seconds"}};
  return ReadFields(value, path, kFields, [&](size_t field, JsonValue v, const Path& p) {
    switch (field) {
      case 0:
        return ReadString(v, p, out.job);
      case 1:
        return ReadString(v, p, out.for_job);
      case 2:
        return ReadString(v, p, out.reason);
      default:
        return ReadInt64(v, p, out.lost_milli_gpu_seconds);
    }
  });
}

absl::Status ReadMigrate(JsonValue value, const Path& path, MigrateDecision& out) {
  static constexpr FieldSpec kFields[] = {{"job", true}, {"from"}, {"to"}};
  return ReadFields(value, path, kFields, [&](size_t field, JsonValue v, const Path& p) {
    switch (field) {
      case 0:
        return ReadString(v, p, out.job);
      case 1:
        return ReadPlacements(v, p, out.from);
      default:
        return ReadPlacements(v, p, out.to);
    }
  });
}

absl::Status ReadResize(JsonValue value, const Path& path, ResizeDecision& out) {
  static constexpr FieldSpec kFields[] = {{"job", true},   {"group"},   {"from_replicas"},
                                          {"to_replicas"}, {"for_job"}, {"lost_milli_gpu_seconds"}};
  return ReadFields(value, path, kFields, [&](size_t field, JsonValue v, const Path& p) {
    switch (field) {
      case 0:
        return ReadString(v, p, out.job);
      case 1:
        return ReadString(v, p, out.group);
      case 2:
        return ReadInt32(v, p, out.from_replicas);
      case 3:
        return ReadInt32(v, p, out.to_replicas);
      case 4:
        return ReadString(v, p, out.for_job);
      default:
        return ReadInt64(v, p, out.lost_milli_gpu_seconds);
    }
  });
}

absl::Status ReadReserve(JsonValue value, const Path& path, ReserveDecision& out) {
  static constexpr FieldSpec kFields[] = {{"job", true}, {"nodes"}, {"expected_start"}};
  return ReadFields(value, path, kFields, [&](size_t field, JsonValue v, const Path& p) {
    switch (field) {
      case 0:
        return ReadString(v, p, out.job);
      case 1:
        return internal::ReadStringArray(v, p, out.nodes);
      default:
        return ReadInt64(v, p, out.expected_start);
    }
  });
}

absl::Status ReadPending(JsonValue value, const Path& path, PendingDecision& out) {
  static constexpr FieldSpec kFields[] = {{"job", true},     {"reason", true},  {"detail"},
                                          {"queue"},         {"gpu_model"},     {"shortfall_milli"},
                                          {"would_preempt"}, {"counterfactual"}};
  return ReadFields(value, path, kFields, [&](size_t field, JsonValue v, const Path& p) {
    switch (field) {
      case 0:
        return ReadString(v, p, out.job);
      case 1:
        return internal::ReadEnum(v, p, out.reason, internal::ParsePendingReason,
                                  internal::PendingReasonNames);
      case 2:
        return ReadString(v, p, out.detail);
      case 3:
        return ReadString(v, p, out.queue);
      case 4:
        return ReadString(v, p, out.gpu_model);
      case 5:
        return ReadInt64(v, p, out.shortfall_milli);
      case 6:
        return internal::ReadStringArray(v, p, out.would_preempt);
      default:
        return ReadString(v, p, out.counterfactual);
    }
  });
}

absl::Status ReadQueueShare(JsonValue value, const Path& path, QueueShare& out) {
  static constexpr FieldSpec kFields[] = {{"queue", true},       {"gpu_model", true},
                                          {"entitlement_milli"}, {"usage_milli"},
                                          {"demand_milli"},      {"over_budget"},
                                          {"guaranteed_milli"}};
  return ReadFields(value, path, kFields, [&](size_t field, JsonValue v, const Path& p) {
    switch (field) {
      case 0:
        return ReadString(v, p, out.queue);
      case 1:
        return ReadString(v, p, out.gpu_model);
      case 2:
        return ReadInt64(v, p, out.entitlement_milli);
      case 3:
        return ReadInt64(v, p, out.usage_milli);
      case 4:
        return ReadInt64(v, p, out.demand_milli);
      case 5:
        return ReadBool(v, p, out.over_budget);
      default:
        return ReadInt64(v, p, out.guaranteed_milli);
    }
  });
}

absl::Status ReadCounters(JsonValue value, const Path& path, Counters& out) {
  static constexpr FieldSpec kFields[] = {{"jobs_considered"},      {"jobs_started"},
                                          {"candidates_evaluated"}, {"transactions_rolled_back"},
                                          {"equivalence_hits"},     {"preemption_plans"},
                                          {"preemptions"},          {"counterfactual_plans"},
                                          {"resizes"},              {"budget_exhausted"}};
  return ReadFields(value, path, kFields, [&](size_t field, JsonValue v, const Path& p) {
    switch (field) {
      case 0:
        return ReadInt64(v, p, out.jobs_considered);
      case 1:
        return ReadInt64(v, p, out.jobs_started);
      case 2:
        return ReadInt64(v, p, out.candidates_evaluated);
      case 3:
        return ReadInt64(v, p, out.transactions_rolled_back);
      case 4:
        return ReadInt64(v, p, out.equivalence_hits);
      case 5:
        return ReadInt64(v, p, out.preemption_plans);
      case 6:
        return ReadInt64(v, p, out.preemptions);
      case 7:
        return ReadInt64(v, p, out.counterfactual_plans);
      case 8:
        return ReadInt64(v, p, out.resizes);
      default:
        return internal::ReadBool(v, p, out.budget_exhausted);
    }
  });
}

absl::Status ReadDecisions(internal::JsonObject& object, const Path& path, Decisions& out) {
  static constexpr FieldSpec kFields[] = {
      {"policy_name"},  {"policy_version"}, {"scorer"},       {"input_fingerprint"},
      {"starts"},       {"preemptions"},    {"migrations"},   {"resizes"},
      {"reservations"}, {"pending"},        {"queue_shares"}, {"counters"},
  };
  return internal::ReadObjectFields(object, path, kFields,
                                    [&](size_t field, JsonValue v, const Path& p) {
                                      switch (field) {
                                        case 0:
                                          return ReadString(v, p, out.policy_name);
                                        case 1:
                                          return ReadInt32(v, p, out.policy_version);
                                        case 2:
                                          return ReadString(v, p, out.scorer);
                                        case 3:
                                          return ReadString(v, p, out.input_fingerprint);
                                        case 4:
                                          return ReadArray(v, p, out.starts, ReadStart);
                                        case 5:
                                          return ReadArray(v, p, out.preemptions, ReadPreempt);
                                        case 6:
                                          return ReadArray(v, p, out.migrations, ReadMigrate);
                                        case 7:
                                          return ReadArray(v, p, out.resizes, ReadResize);
                                        case 8:
                                          return ReadArray(v, p, out.reservations, ReadReserve);
                                        case 9:
                                          return ReadArray(v, p, out.pending, ReadPending);
                                        case 10:
                                          return ReadArray(v, p, out.queue_shares, ReadQueueShare);
                                        default:
                                          return ReadCounters(v, p, out.counters);
                                      }
                                    });
}

}  // namespace

absl::StatusOr<Decisions> ParseDecisions(std::string_view json) {
  return internal::ParseDocument<Decisions>(json, ReadDecisions);
}

}  // namespace gpupool::io
