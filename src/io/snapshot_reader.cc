// ParseSnapshot(): the strict reader of snapshot documents.
//
// One table per struct of the data model, pairing each key the struct may have with the reader
// of its value, in the order of the C++ fields. The tables are the format:
// docs/snapshot-format.md follows them.
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
using internal::ReadEnumOf;
using internal::ReadFields;
using internal::ReadInt32;
using internal::ReadInt64;
using internal::ReadLabels;
using internal::ReadMember;
using internal::ReadOptionalInt32;
using internal::ReadOptionalInt64;
using internal::ReadOptionalString;
using internal::ReadString;
using internal::ReadStringArray;

absl::Status ReadTopology(JsonValue value, const Path& path, Topology& out) {
  static constexpr Field<Topology> kFields[] = {
      {"levels", ReadMember<&Topology::levels, ReadStringArray>},
  };
  return ReadFields(value, path, kFields, out);
}

absl::Status ReadWorkloadSpeed(JsonValue value, const Path& path, WorkloadSpeed& out) {
  static constexpr Field<WorkloadSpeed> kFields[] = {
      {"workload_class", ReadMember<&WorkloadSpeed::workload_class, ReadString>, true},
      {"speed_milli", ReadMember<&WorkloadSpeed::speed_milli, ReadInt64>, true},
  };
  return ReadFields(value, path, kFields, out);
}

absl::Status ReadGpuModel(JsonValue value, const Path& path, GpuModel& out) {
  static constexpr Field<GpuModel> kFields[] = {
      {"name", ReadMember<&GpuModel::name, ReadString>, true},
      {"memory_mib", ReadMember<&GpuModel::memory_mib, ReadInt64>, true},
      {"speeds", ReadMember<&GpuModel::speeds, ReadArrayOf<ReadWorkloadSpeed>>},
  };
  return ReadFields(value, path, kFields, out);
}

absl::Status ReadGpu(JsonValue value, const Path& path, Gpu& out) {
  static constexpr Field<Gpu> kFields[] = {
      {"index", ReadMember<&Gpu::index, ReadInt32>, true},
      {"island", ReadMember<&Gpu::island, ReadInt32>},
      {"healthy", ReadMember<&Gpu::healthy, ReadBool>},
      {"xid_errors", ReadMember<&Gpu::xid_errors, ReadInt64>},
      {"ecc_errors", ReadMember<&Gpu::ecc_errors, ReadInt64>},
      {"errors_since", ReadMember<&Gpu::errors_since, ReadOptionalInt64>},
  };
  return ReadFields(value, path, kFields, out);
}

absl::Status ReadMaintenanceWindow(JsonValue value, const Path& path, MaintenanceWindow& out) {
  static constexpr Field<MaintenanceWindow> kFields[] = {
      {"start", ReadMember<&MaintenanceWindow::start, ReadInt64>, true},
      {"end", ReadMember<&MaintenanceWindow::end, ReadInt64>, true},
  };
  return ReadFields(value, path, kFields, out);
}

absl::Status ReadDiagnosticRun(JsonValue value, const Path& path, DiagnosticRun& out) {
  static constexpr Field<DiagnosticRun> kFields[] = {
      {"time", ReadMember<&DiagnosticRun::time, ReadInt64>, true},
      {"passed", ReadMember<&DiagnosticRun::passed, ReadBool>, true},
  };
  return ReadFields(value, path, kFields, out);
}

// "id" in a scale template's node gets its own message instead of "unknown field".
absl::Status RefuseNodeId(JsonValue, const Path& path, Node&) {
  return internal::PathError(path, "a template node has no id (the host names the nodes it adds)");
}

template <bool kWithId>
absl::Status ReadNodeFields(JsonValue value, const Path& path, Node& out) {
  static constexpr Field<Node> kFields[] = {
      kWithId ? Field<Node>{"id", ReadMember<&Node::id, ReadString>, true}
              : Field<Node>{"id", RefuseNodeId},
      {"gpu_model", ReadMember<&Node::gpu_model, ReadString>},
      {"gpus", ReadMember<&Node::gpus, ReadArrayOf<ReadGpu>>},
      {"cpu_milli", ReadMember<&Node::cpu_milli, ReadInt64>},
      {"memory_mib", ReadMember<&Node::memory_mib, ReadInt64>},
      {"path", ReadMember<&Node::path, ReadLabels>},
      {"labels", ReadMember<&Node::labels, ReadLabels>},
      {"state",
       ReadMember<&Node::state, ReadEnumOf<internal::ParseNodeState, internal::NodeStateNames>>},
      {"owner_queues", ReadMember<&Node::owner_queues, ReadStringArray>},
      {"maintenance", ReadMember<&Node::maintenance, ReadArrayOf<ReadMaintenanceWindow>>},
      {"last_diagnostic",
       ReadMember<&Node::last_diagnostic, internal::ReadOptionalOf<ReadDiagnosticRun>>},
      {"state_cause",
       ReadMember<&Node::state_cause,
                  ReadEnumOf<internal::ParseNodeStateCause, internal::NodeStateCauseNames>>},
      {"spot", ReadMember<&Node::spot, ReadBool>},
      {"reclaiming", ReadMember<&Node::reclaiming, ReadBool>},
      {"reclaim_deadline", ReadMember<&Node::reclaim_deadline, ReadOptionalInt64>},
  };
  return ReadFields(value, path, kFields, out);
}

absl::Status ReadNode(JsonValue value, const Path& path, Node& out) {
  return ReadNodeFields<true>(value, path, out);
}

absl::Status ReadQuota(JsonValue value, const Path& path, Quota& out) {
  static constexpr Field<Quota> kFields[] = {
      {"gpu_model", ReadMember<&Quota::gpu_model, ReadString>},
      {"guaranteed_milli", ReadMember<&Quota::guaranteed_milli, ReadInt64>},
      {"limit_milli", ReadMember<&Quota::limit_milli, ReadOptionalInt64>},
      {"over_quota_weight", ReadMember<&Quota::over_quota_weight, ReadInt64>},
  };
  return ReadFields(value, path, kFields, out);
}

absl::Status ReadQueue(JsonValue value, const Path& path, Queue& out) {
  static constexpr Field<Queue> kFields[] = {
      {"id", ReadMember<&Queue::id, ReadString>, true},
      {"parent", ReadMember<&Queue::parent, ReadString>},
      {"priority", ReadMember<&Queue::priority, ReadInt32>},
      {"quotas", ReadMember<&Queue::quotas, ReadArrayOf<ReadQuota>>},
      {"can_borrow", ReadMember<&Queue::can_borrow, ReadBool>},
      {"can_lend", ReadMember<&Queue::can_lend, ReadBool>},
      {"isolation", ReadMember<&Queue::isolation,
                               ReadEnumOf<internal::ParseIsolation, internal::IsolationNames>>},
      {"labels", ReadMember<&Queue::labels, ReadLabels>},
      {"budget_milli_gpu_seconds", ReadMember<&Queue::budget_milli_gpu_seconds, ReadOptionalInt64>},
      {"budget_used_milli_gpu_seconds",
       ReadMember<&Queue::budget_used_milli_gpu_seconds, ReadInt64>},
      {"decayed_usage_milli_gpu_seconds",
       ReadMember<&Queue::decayed_usage_milli_gpu_seconds, ReadInt64>},
  };
  return ReadFields(value, path, kFields, out);
}

absl::Status ReadRequest(JsonValue value, const Path& path, ResourceRequest& out) {
  using R = ResourceRequest;
  static constexpr Field<R> kFields[] = {
      {"gpu_milli", ReadMember<&R::gpu_milli, ReadInt64>},
      {"gpu_memory_mib", ReadMember<&R::gpu_memory_mib, ReadInt64>},
      {"cpu_milli", ReadMember<&R::cpu_milli, ReadInt64>},
      {"memory_mib", ReadMember<&R::memory_mib, ReadInt64>},
  };
  return ReadFields(value, path, kFields, out);
}

absl::Status ReadTopologyConstraint(JsonValue value, const Path& path, TopologyConstraint& out) {
  using T = TopologyConstraint;
  static constexpr Field<T> kFields[] = {
      {"replica_scope",
       ReadMember<&T::replica_scope,
                  ReadEnumOf<internal::ParseReplicaScope, internal::ReplicaScopeNames>>},
      {"replica_strictness",
       ReadMember<&T::replica_strictness,
                  ReadEnumOf<internal::ParseStrictness, internal::StrictnessNames>>},
      {"gang_level", ReadMember<&T::gang_level, ReadOptionalString>},
      {"gang_strictness",
       ReadMember<&T::gang_strictness,
                  ReadEnumOf<internal::ParseStrictness, internal::StrictnessNames>>},
      {"max_replicas_per_node", ReadMember<&T::max_replicas_per_node, ReadOptionalInt32>},
  };
  return ReadFields(value, path, kFields, out);
}

absl::Status ReadTaskGroup(JsonValue value, const Path& path, TaskGroup& out) {
  static constexpr Field<TaskGroup> kFields[] = {
      {"name", ReadMember<&TaskGroup::name, ReadString>},
      {"replicas", ReadMember<&TaskGroup::replicas, ReadInt32>},
      {"min_replicas", ReadMember<&TaskGroup::min_replicas, ReadOptionalInt32>},
      {"request", ReadMember<&TaskGroup::request, ReadRequest>},
      {"gpu_models", ReadMember<&TaskGroup::gpu_models, ReadStringArray>},
      {"topology", ReadMember<&TaskGroup::topology, ReadTopologyConstraint>},
  };
  return ReadFields(value, path, kFields, out);
}

absl::Status ReadCheckpointing(JsonValue value, const Path& path, Checkpointing& out) {
  using C = Checkpointing;
  static constexpr Field<C> kFields[] = {
      {"interval_s", ReadMember<&C::interval_s, ReadInt64>},
      {"last_checkpoint_time", ReadMember<&C::last_checkpoint_time, ReadOptionalInt64>},
      {"checkpoint_cost_s", ReadMember<&C::checkpoint_cost_s, ReadInt64>},
      {"restore_time_s", ReadMember<&C::restore_time_s, ReadInt64>},
  };
  return ReadFields(value, path, kFields, out);
}

absl::Status ReadJob(JsonValue value, const Path& path, Job& out) {
  static constexpr Field<Job> kFields[] = {
      {"id", ReadMember<&Job::id, ReadString>, true},
      {"queue", ReadMember<&Job::queue, ReadString>, true},
      {"priority", ReadMember<&Job::priority, ReadInt32>},
      {"submit_time", ReadMember<&Job::submit_time, ReadInt64>},
      {"groups", ReadMember<&Job::groups, ReadArrayOf<ReadTaskGroup>>, true},
      {"preemptible", ReadMember<&Job::preemptible, ReadBool>},
      {"checkpointing", ReadMember<&Job::checkpointing, ReadCheckpointing>},
      {"min_runtime_s", ReadMember<&Job::min_runtime_s, ReadInt64>},
      {"runtime_estimate_s", ReadMember<&Job::runtime_estimate_s, ReadOptionalInt64>},
      {"state",
       ReadMember<&Job::state, ReadEnumOf<internal::ParseJobState, internal::JobStateNames>>},
      {"start_time", ReadMember<&Job::start_time, ReadOptionalInt64>},
      {"placements", ReadMember<&Job::placements, ReadArrayOf<internal::ReadReplicaPlacement>>},
      {"attained_service_s", ReadMember<&Job::attained_service_s, ReadInt64>},
      {"pending_since", ReadMember<&Job::pending_since, ReadOptionalInt64>},
      {"backfilled", ReadMember<&Job::backfilled, ReadBool>},
      {"spot_tolerant", ReadMember<&Job::spot_tolerant, ReadBool>},
  };
  return ReadFields(value, path, kFields, out);
}

absl::Status ReadSnapshot(internal::JsonObject& object, const Path& path, Snapshot& out) {
  static constexpr Field<Snapshot> kFields[] = {
      {"now", ReadMember<&Snapshot::now, ReadInt64>},
      {"topology", ReadMember<&Snapshot::topology, ReadTopology>},
      {"gpu_models", ReadMember<&Snapshot::gpu_models, ReadArrayOf<ReadGpuModel>>},
      {"nodes", ReadMember<&Snapshot::nodes, ReadArrayOf<ReadNode>>},
      {"queues", ReadMember<&Snapshot::queues, ReadArrayOf<ReadQueue>>},
      {"jobs", ReadMember<&Snapshot::jobs, ReadArrayOf<ReadJob>>},
  };
  return internal::ReadObjectFields(object, path, kFields, out);
}

}  // namespace

absl::Status internal::ReadNodeWithoutId(JsonValue value, const Path& path, Node& out) {
  return ReadNodeFields<false>(value, path, out);
}

absl::StatusOr<Snapshot> ParseSnapshot(std::string_view json) {
  return internal::ParseDocument<Snapshot>(json, ReadSnapshot);
}

absl::StatusOr<Snapshot> ReadSnapshotFile(const std::string& path) {
  return internal::ReadDocumentFile<Snapshot>(path, ReadSnapshot);
}

}  // namespace gpupool::io
