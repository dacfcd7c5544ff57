// ParseSnapshot(): the strict reader of snapshot documents.
//
// One function per struct of the data model, each listing the keys the struct may have in the
// order of its C++ fields. The field tables are the format: docs/snapshot-format.md follows them.
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
using internal::ReadBool;
using internal::ReadEnum;
using internal::ReadFields;
using internal::ReadInt32;
using internal::ReadInt64;
using internal::ReadString;
using internal::ReadStringArray;

absl::Status ReadTopology(JsonValue value, const Path& path, Topology& out) {
  static constexpr FieldSpec kFields[] = {{"levels"}};
  return ReadFields(value, path, kFields, [&](size_t, JsonValue v, const Path& p) {
    return ReadStringArray(v, p, out.levels);
  });
}

absl::Status ReadWorkloadSpeed(JsonValue value, const Path& path, WorkloadSpeed& out) {
  static constexpr FieldSpec kFields[] = {{"workload_class", true}, {"speed_milli", true}};
  return ReadFields(value, path, kFields, [&](size_t field, JsonValue v, const Path& p) {
    if (field == 0) return ReadString(v, p, out.workload_class);
    return ReadInt64(v, p, out.speed_milli);
  });
}

absl::Status ReadGpuModel(JsonValue value, const Path& path, GpuModel& out) {
  static constexpr FieldSpec kFields[] = {{"name", true}, {"memory_mib", true}, {"speeds"}};
  return ReadFields(value, path, kFields, [&](size_t field, JsonValue v, const Path& p) {
    switch (field) {
      case 0:
        return ReadString(v, p, out.name);
      case 1:
        return ReadInt64(v, p, out.memory_mib);
      default:
        return ReadArray(v, p, out.speeds, ReadWorkloadSpeed);
    }
  });
}

absl::Status ReadGpu(JsonValue value, const Path& path, Gpu& out) {
  static constexpr FieldSpec kFields[] = {{"index", true}, {"island"}, {"healthy"}};
  return ReadFields(value, path, kFields, [&](size_t field, JsonValue v, const Path& p) {
    switch (field) {
      case 0:
        return ReadInt32(v, p, out.index);
      case 1:
        return ReadInt32(v, p, out.island);
      default:
        return ReadBool(v, p, out.healthy);
    }
  });
}

absl::Status ReadNode(JsonValue value, const Path& path, Node& out) {
  static constexpr FieldSpec kFields[] = {
      {"id", true}, {"gpu_model"}, {"gpus"},  {"cpu_milli"},    {"memory_mib"},
      {"path"},     {"labels"},    {"state"}, {"owner_queues"},
  };
  return ReadFields(value, path, kFields, [&](size_t field, JsonValue v, const Path& p) {
    switch (field) {
      case 0:
        return ReadString(v, p, out.id);
      case 1:
        return ReadString(v, p, out.gpu_model);
      case 2:
        return ReadArray(v, p, out.gpus, ReadGpu);
      case 3:
        return ReadInt64(v, p, out.cpu_milli);
      case 4:
        return ReadInt64(v, p, out.memory_mib);
      case 5:
        return internal::ReadLabels(v, p, out.path);
      case 6:
        return internal::ReadLabels(v, p, out.labels);
      case 7:
        return ReadEnum(v, p, out.state, internal::ParseNodeState, internal::NodeStateNames);
      default:
        return ReadStringArray(v, p, out.owner_queues);
    }
  });
}

absl::Status ReadQuota(JsonValue value, const Path& path, Quota& out) {
  static constexpr FieldSpec kFields[] = {
      {"gpu_model"}, {"guaranteed_milli"}, {"limit_milli"}, {"over_quota_weight"}};
  return ReadFields(value, path, kFields, [&](size_t field, JsonValue v, const Path& p) {
    switch (field) {
      case 0:
        return ReadString(v, p, out.gpu_model);
      case 1:
        return ReadInt64(v, p, out.guaranteed_milli);
      case 2:
        return internal::ReadOptionalInt64(v, p, out.limit_milli);
      default:
        return ReadInt64(v, p, out.over_quota_weight);
    }
  });
}

absl::Status ReadQueue(JsonValue value, const Path& path, Queue& out) {
  static constexpr FieldSpec kFields[] = {
      {"id", true},
      {"parent"},
      {"priority"},
      {"quotas"},
      {"can_borrow"},
      {"can_lend"},
      {"isolation"},
      {"budget_milli_gpu_seconds"},
      {"budget_used_milli_gpu_seconds"},
      {"decayed_usage_milli_gpu_seconds"},
  };
  return ReadFields(value, path, kFields, [&](size_t field, JsonValue v, const Path& p) {
    switch (field) {
      case 0:
        return ReadString(v, p, out.id);
      case 1:
        return ReadString(v, p, out.parent);
      case 2:
        return ReadInt32(v, p, out.priority);
      case 3:
        return ReadArray(v, p, out.quotas, ReadQuota);
      case 4:
        return ReadBool(v, p, out.can_borrow);
      case 5:
        return ReadBool(v, p, out.can_lend);
      case 6:
        return ReadEnum(v, p, out.isolation, internal::ParseIsolation, internal::IsolationNames);
      case 7:
        return internal::ReadOptionalInt64(v, p, out.budget_milli_gpu_seconds);
      case 8:
        return ReadInt64(v, p, out.budget_used_milli_gpu_seconds);
      default:
        return ReadInt64(v, p, out.decayed_usage_milli_gpu_seconds);
    }
  });
}

absl::Status ReadRequest(JsonValue value, const Path& path, ResourceRequest& out) {
  static constexpr FieldSpec kFields[] = {
      {"gpu_milli"}, {"gpu_memory_mib"}, {"cpu_milli"}, {"memory_mib"}};
  return ReadFields(value, path, kFields, [&](size_t field, JsonValue v, const Path& p) {
    switch (field) {
      case 0:
        return ReadInt64(v, p, out.gpu_milli);
      case 1:
        return ReadInt64(v, p, out.gpu_memory_mib);
      case 2:
        return ReadInt64(v, p, out.cpu_milli);
      default:
        return ReadInt64(v, p, out.memory_mib);
    }
  });
}

absl::Status ReadTopologyConstraint(JsonValue value, const Path& path, TopologyConstraint& out) {
  static constexpr FieldSpec kFields[] = {
      {"replica_scope"}, {"replica_strictness"}, {"gang_level"}, {"gang_strictness"}};
  return ReadFields(value, path, kFields, [&](size_t field, JsonValue v, const Path& p) {
    switch (field) {
      case 0:
        return ReadEnum(v, p, out.replica_scope, internal::ParseReplicaScope,
                        internal::ReplicaScopeNames);
      case 1:
        return ReadEnum(v, p, out.replica_strictness, internal::ParseStrictness,
                        internal::StrictnessNames);
      case 2:
        return internal::ReadOptionalString(v, p, out.gang_level);
      default:
        return ReadEnum(v, p, out.gang_strictness, internal::ParseStrictness,
                        internal::StrictnessNames);
    }
  });
}

absl::Status ReadTaskGroup(JsonValue value, const Path& path, TaskGroup& out) {
  static constexpr FieldSpec kFields[] = {{"name"},    {"replicas"},   {"min_replicas"},
                                          {"request"}, {"gpu_models"}, {"topology"}};
  return ReadFields(value, path, kFields, [&](size_t field, JsonValue v, const Path& p) {
    switch (field) {
      case 0:
        return ReadString(v, p, out.name);
      case 1:
        return ReadInt32(v, p, out.replicas);
      case 2:
        return internal::ReadOptionalInt32(v, p, out.min_replicas);
      case 3:
        return ReadRequest(v, p, out.request);
      case 4:
        return ReadStringArray(v, p, out.gpu_models);
      default:
        return ReadTopologyConstraint(v, p, out.topology);
    }
  });
}

absl::Status ReadCheckpointing(JsonValue value, const Path& path, Checkpointing& out) {
  static constexpr FieldSpec kFields[] = {
      {"interval_s"}, {"last_checkpoint_time"}, {"checkpoint_cost_s"}, {"restore_time_s"}};
  return ReadFields(value, path, kFields, [&](size_t field, JsonValue v, const Path& p) {
    switch (field) {
      case 0:
        return ReadInt64(v, p, out.interval_s);
      case 1:
        return internal::ReadOptionalInt64(v, p, out.last_checkpoint_time);
      case 2:
        return ReadInt64(v, p, out.checkpoint_cost_s);
      default:
        return ReadInt64(v, p, out.restore_time_s);
    }
  });
}

absl::Status ReadJob(JsonValue value, const Path& path, Job& out) {
  static constexpr FieldSpec kFields[] = {
      {"id", true},           {"queue", true},   {"priority"},      {"submit_time"},
      {"groups", true},       {"preemptible"},   {"checkpointing"}, {"min_runtime_s"},
      {"runtime_estimate_s"}, {"state"},         {"start_time"},    {"placements"},
      {"attained_service_s"}, {"pending_since"},
  };
  return ReadFields(value, path, kFields, [&](size_t field, JsonValue v, const Path& p) {
    switch (field) {
      case 0:
        return ReadString(v, p, out.id);
      case 1:
        return ReadString(v, p, out.queue);
      case 2:
        return ReadInt32(v, p, out.priority);
      case 3:
        return ReadInt64(v, p, out.submit_time);
      case 4:
        return ReadArray(v, p, out.groups, ReadTaskGroup);
      case 5:
        return ReadBool(v, p, out.preemptible);
      case 6:
        return ReadCheckpointing(v, p, out.checkpointing);
      case 7:
        return ReadInt64(v, p, out.min_runtime_s);
      case 8:
        return internal::ReadOptionalInt64(v, p, out.runtime_estimate_s);
      case 9:
        return ReadEnum(v, p, out.state, internal::ParseJobState, internal::JobStateNames);
      case 10:
        return internal::ReadOptionalInt64(v, p, out.start_time);
      case 11:
        return ReadArray(v, p, out.placements, internal::ReadReplicaPlacement);
      case 12:
        return ReadInt64(v, p, out.attained_service_s);
      default:
        return internal::ReadOptionalInt64(v, p, out.pending_since);
    }
  });
}

absl::Status ReadSnapshot(internal::JsonObject& object, const Path& path, Snapshot& out) {
  static constexpr FieldSpec kFields[] = {{"now"},   {"topology"}, {"gpu_models"},
                                          {"nodes"}, {"queues"},   {"jobs"}};
  return internal::ReadObjectFields(object, path, kFields,
                                    [&](size_t field, JsonValue v, const Path& p) {
                                      switch (field) {
                                        case 0:
                                          return ReadInt64(v, p, out.now);
                                        case 1:
                                          return ReadTopology(v, p, out.topology);
                                        case 2:
                                          return ReadArray(v, p, out.gpu_models, ReadGpuModel);
                                        case 3:
                                          return ReadArray(v, p, out.nodes, ReadNode);
                                        case 4:
                                          return ReadArray(v, p, out.queues, ReadQueue);
                                        default:
                                          return ReadArray(v, p, out.jobs, ReadJob);
                                      }
                                    });
}

}  // namespace

absl::StatusOr<Snapshot> ParseSnapshot(std::string_view json) {
  return internal::ParseDocument<Snapshot>(json, ReadSnapshot);
}

absl::StatusOr<Snapshot> ReadSnapshotFile(const std::string& path) {
  return internal::ReadDocumentFile<Snapshot>(path, ReadSnapshot);
}

}  // namespace gpupool::io
