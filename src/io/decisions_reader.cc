// ParseDecisions(): reads back what DecisionsToJson() writes, with the same strictness as the
// snapshot reader (hosts and tools compare or replay decision files). Each table pairs a key
// with the reader of its value.
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gpupool/io/json.h"
#include "io/enum_names.h"
#include "io/json_reader.h"

namespace gpupool::io {
namespace {

using internal::Field;
using internal::JsonValue;
using internal::Path;
using internal::ReadArrayOf;
using internal::ReadBool;
using internal::ReadFields;
using internal::ReadInt32;
using internal::ReadInt64;
using internal::ReadMember;
using internal::ReadString;
using internal::ReadStringArray;

constexpr auto ReadPlacements = ReadArrayOf<internal::ReadReplicaPlacement>;

absl::Status ReadStart(JsonValue value, const Path& path, StartDecision& out) {
  static constexpr Field<StartDecision> kFields[] = {
      {"job", ReadMember<&StartDecision::job, ReadString>, true},
      {"placements", ReadMember<&StartDecision::placements, ReadPlacements>},
      {"backfilled", ReadMember<&StartDecision::backfilled, ReadBool>},
  };
  return ReadFields(value, path, kFields, out);
}

absl::Status ReadPreempt(JsonValue value, const Path& path, PreemptDecision& out) {
  using D = PreemptDecision;
  static constexpr Field<D> kFields[] = {
      {"job", ReadMember<&D::job, ReadString>, true},
      {"for_job", ReadMember<&D::for_job, ReadString>},
      {"reason", ReadMember<&D::reason, ReadString>},
      {"lost_milli_gpu_seconds", ReadMember<&D::lost_milli_gpu_seconds, ReadInt64>},
  };
  return ReadFields(value, path, kFields, out);
}

absl::Status ReadMigrate(JsonValue value, const Path& path, MigrateDecision& out) {
  using D = MigrateDecision;
  static constexpr Field<D> kFields[] = {
      {"job", ReadMember<&D::job, ReadString>, true},
      {"from", ReadMember<&D::from, ReadPlacements>},
      {"to", ReadMember<&D::to, ReadPlacements>},
      {"for_job", ReadMember<&D::for_job, ReadString>},
      {"lost_milli_gpu_seconds", ReadMember<&D::lost_milli_gpu_seconds, ReadInt64>},
  };
  return ReadFields(value, path, kFields, out);
}

absl::Status ReadResize(JsonValue value, const Path& path, ResizeDecision& out) {
  using D = ResizeDecision;
  static constexpr Field<D> kFields[] = {
      {"job", ReadMember<&D::job, ReadString>, true},
      {"group", ReadMember<&D::group, ReadString>},
      {"from_replicas", ReadMember<&D::from_replicas, ReadInt32>},
      {"to_replicas", ReadMember<&D::to_replicas, ReadInt32>},
      {"for_job", ReadMember<&D::for_job, ReadString>},
      {"lost_milli_gpu_seconds", ReadMember<&D::lost_milli_gpu_seconds, ReadInt64>},
  };
  return ReadFields(value, path, kFields, out);
}

absl::Status ReadReserve(JsonValue value, const Path& path, ReserveDecision& out) {
  using D = ReserveDecision;
  static constexpr Field<D> kFields[] = {
      {"job", ReadMember<&D::job, ReadString>, true},
      {"nodes", ReadMember<&D::nodes, ReadStringArray>},
      {"expected_start", ReadMember<&D::expected_start, ReadInt64>},
  };
  return ReadFields(value, path, kFields, out);
}

absl::Status ReadPending(JsonValue value, const Path& path, PendingDecision& out) {
  using D = PendingDecision;
  static constexpr Field<D> kFields[] = {
      {"job", ReadMember<&D::job, ReadString>, true},
      {"reason",
       ReadMember<&D::reason,
                  internal::ReadEnumOf<internal::ParsePendingReason, internal::PendingReasonNames>>,
       true},
      {"detail", ReadMember<&D::detail, ReadString>},
      {"queue", ReadMember<&D::queue, ReadString>},
      {"gpu_model", ReadMember<&D::gpu_model, ReadString>},
      {"shortfall_milli", ReadMember<&D::shortfall_milli, ReadInt64>},
      {"would_preempt", ReadMember<&D::would_preempt, ReadStringArray>},
      {"counterfactual", ReadMember<&D::counterfactual, ReadString>},
  };
  return ReadFields(value, path, kFields, out);
}

absl::Status ReadQueueShare(JsonValue value, const Path& path, QueueShare& out) {
  using S = QueueShare;
  static constexpr Field<S> kFields[] = {
      {"queue", ReadMember<&S::queue, ReadString>, true},
      {"gpu_model", ReadMember<&S::gpu_model, ReadString>, true},
      {"entitlement_milli", ReadMember<&S::entitlement_milli, ReadInt64>},
      {"usage_milli", ReadMember<&S::usage_milli, ReadInt64>},
      {"demand_milli", ReadMember<&S::demand_milli, ReadInt64>},
      {"guaranteed_milli", ReadMember<&S::guaranteed_milli, ReadInt64>},
      {"over_budget", ReadMember<&S::over_budget, ReadBool>},
  };
  return ReadFields(value, path, kFields, out);
}

absl::Status ReadHeadroomReport(JsonValue value, const Path& path, HeadroomReport& out) {
  using H = HeadroomReport;
  static constexpr Field<H> kFields[] = {
      {"gpu_model", ReadMember<&H::gpu_model, ReadString>, true},
      {"shape", ReadMember<&H::shape, internal::ReadEnumOf<internal::ParseHeadroomShape,
                                                           internal::HeadroomShapeNames>>},
      {"min_priority", ReadMember<&H::min_priority, internal::ReadInt32>},
      {"required", ReadMember<&H::required, ReadInt64>},
      {"free_before_restore", ReadMember<&H::free_before_restore, ReadInt64>},
      {"free", ReadMember<&H::free, ReadInt64>},
      {"preempted", ReadMember<&H::preempted, internal::ReadStringArray>},
      {"shortfall", ReadMember<&H::shortfall, ReadInt64>},
      {"detail", ReadMember<&H::detail, ReadString>},
  };
  return ReadFields(value, path, kFields, out);
}

absl::Status ReadCounters(JsonValue value, const Path& path, Counters& out) {
  using C = Counters;
  static constexpr Field<C> kFields[] = {
      {"jobs_considered", ReadMember<&C::jobs_considered, ReadInt64>},
      {"jobs_started", ReadMember<&C::jobs_started, ReadInt64>},
      {"candidates_evaluated", ReadMember<&C::candidates_evaluated, ReadInt64>},
      {"transactions_rolled_back", ReadMember<&C::transactions_rolled_back, ReadInt64>},
      {"equivalence_hits", ReadMember<&C::equivalence_hits, ReadInt64>},
      {"preemption_plans", ReadMember<&C::preemption_plans, ReadInt64>},
      {"preemptions", ReadMember<&C::preemptions, ReadInt64>},
      {"resizes", ReadMember<&C::resizes, ReadInt64>},
      {"counterfactual_plans", ReadMember<&C::counterfactual_plans, ReadInt64>},
      {"migrations", ReadMember<&C::migrations, ReadInt64>},
      {"consolidation_plans", ReadMember<&C::consolidation_plans, ReadInt64>},
      {"passes", ReadMember<&C::passes, ReadInt64>},
      {"budget_exhausted", ReadMember<&C::budget_exhausted, ReadBool>},
  };
  return ReadFields(value, path, kFields, out);
}

absl::Status ReadNodeAction(JsonValue value, const Path& path, NodeActionDecision& out) {
  using D = NodeActionDecision;
  static constexpr Field<D> kFields[] = {
      {"node", ReadMember<&D::node, ReadString>, true},
      {"action",
       ReadMember<&D::action,
                  internal::ReadEnumOf<internal::ParseNodeAction, internal::NodeActionNames>>,
       true},
      {"reason", ReadMember<&D::reason, ReadString>},
      {"expected_empty_time", ReadMember<&D::expected_empty_time, ReadInt64>},
  };
  return ReadFields(value, path, kFields, out);
}

absl::Status ReadScaleAdd(JsonValue value, const Path& path, ScaleAdd& out) {
  static constexpr Field<ScaleAdd> kFields[] = {
      {"template", ReadMember<&ScaleAdd::template_name, ReadString>, true},
      {"count", ReadMember<&ScaleAdd::count, ReadInt32>, true},
  };
  return ReadFields(value, path, kFields, out);
}

absl::Status ReadScaleAdvice(JsonValue value, const Path& path, std::optional<ScaleAdvice>& out) {
  using A = ScaleAdvice;
  static constexpr Field<A> kFields[] = {
      {"add", ReadMember<&A::add, ReadArrayOf<ReadScaleAdd>>},
      {"release", ReadMember<&A::release, ReadStringArray>},
      {"covers", ReadMember<&A::covers, ReadStringArray>},
      {"cost_per_hour_micro", ReadMember<&A::cost_per_hour_micro, ReadInt64>},
      {"cheapest", ReadMember<&A::cheapest, ReadBool>},
      {"simulations", ReadMember<&A::simulations, ReadInt64>},
      {"budget_exhausted", ReadMember<&A::budget_exhausted, ReadBool>},
  };
  out.emplace();
  return ReadFields(value, path, kFields, *out);
}

absl::Status ReadDecisions(internal::JsonObject& object, const Path& path, Decisions& out) {
  using D = Decisions;
  static constexpr Field<D> kFields[] = {
      {"policy_name", ReadMember<&D::policy_name, ReadString>},
      {"policy_version", ReadMember<&D::policy_version, ReadInt32>},
      {"scorer", ReadMember<&D::scorer, ReadString>},
      {"input_fingerprint", ReadMember<&D::input_fingerprint, ReadString>},
      {"starts", ReadMember<&D::starts, ReadArrayOf<ReadStart>>},
      {"preemptions", ReadMember<&D::preemptions, ReadArrayOf<ReadPreempt>>},
      {"migrations", ReadMember<&D::migrations, ReadArrayOf<ReadMigrate>>},
      {"resizes", ReadMember<&D::resizes, ReadArrayOf<ReadResize>>},
      {"reservations", ReadMember<&D::reservations, ReadArrayOf<ReadReserve>>},
      {"pending", ReadMember<&D::pending, ReadArrayOf<ReadPending>>},
      {"queue_shares", ReadMember<&D::queue_shares, ReadArrayOf<ReadQueueShare>>},
      {"counters", ReadMember<&D::counters, ReadCounters>},
      {"node_actions", ReadMember<&D::node_actions, ReadArrayOf<ReadNodeAction>>},
      {"scale_advice", ReadMember<&D::scale_advice, ReadScaleAdvice>},
      {"headroom", ReadMember<&D::headroom, ReadArrayOf<ReadHeadroomReport>>},
  };
  return internal::ReadObjectFields(object, path, kFields, out);
}

}  // namespace

absl::StatusOr<Decisions> ParseDecisions(std::string_view json) {
  return internal::ParseDocument<Decisions>(json, ReadDecisions);
}

absl::StatusOr<Decisions> ReadDecisionsFile(const std::string& path) {
  return internal::ReadDocumentFile<Decisions>(path, ReadDecisions);
}

}  // namespace gpupool::io
