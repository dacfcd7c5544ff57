// SnapshotToJson(): every field in C++ field order, defaults included, unset optionals omitted,
// so that the reader gives back an equal snapshot.
#include "gpupool/io/json.h"
#include "io/enum_names.h"
#include "io/json_writer.h"

namespace gpupool::io {
namespace {

using internal::JsonWriter;

void WriteGpuModel(JsonWriter& w, const GpuModel& model) {
  w.BeginObject();
  w.StringField("name", model.name);
  w.IntField("memory_mib", model.memory_mib);
  w.Key("speeds");
  w.BeginArray();
  for (const WorkloadSpeed& speed : model.speeds) {
    w.BeginOneLineObject();
    w.StringField("workload_class", speed.workload_class);
    w.IntField("speed_milli", speed.speed_milli);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

void WriteNodeFields(JsonWriter& w, const Node& node, bool with_id) {
  w.BeginObject();
  if (with_id) w.StringField("id", node.id);
  w.StringField("gpu_model", node.gpu_model);
  w.Key("gpus");
  w.BeginArray();
  for (const Gpu& gpu : node.gpus) {
    w.BeginOneLineObject();
    w.IntField("index", gpu.index);
    w.IntField("island", gpu.island);
    w.BoolField("healthy", gpu.healthy);
    // The health facts only when set, so that snapshots without them read as before.
    if (gpu.xid_errors != 0) w.IntField("xid_errors", gpu.xid_errors);
    if (gpu.ecc_errors != 0) w.IntField("ecc_errors", gpu.ecc_errors);
    if (gpu.errors_since.has_value()) w.IntField("errors_since", *gpu.errors_since);
    w.EndObject();
  }
  w.EndArray();
  w.IntField("cpu_milli", node.cpu_milli);
  w.IntField("memory_mib", node.memory_mib);
  w.Key("path");
  internal::WriteLabels(w, node.path);
  w.Key("labels");
  internal::WriteLabels(w, node.labels);
  w.StringField("state", internal::NodeStateName(node.state));
  w.Key("owner_queues");
  w.StringArray(node.owner_queues);
  // Operations facts only when set (docs/operations.md).
  if (!node.maintenance.empty()) {
    w.Key("maintenance");
    w.BeginArray();
    for (const MaintenanceWindow& window : node.maintenance) {
      w.BeginOneLineObject();
      w.IntField("start", window.start);
      w.IntField("end", window.end);
      w.EndObject();
    }
    w.EndArray();
  }
  if (node.last_diagnostic.has_value()) {
    w.Key("last_diagnostic");
    w.BeginOneLineObject();
    w.IntField("time", node.last_diagnostic->time);
    w.BoolField("passed", node.last_diagnostic->passed);
    w.EndObject();
  }
  if (node.state_cause != NodeStateCause::kHost) {
    w.StringField("state_cause", internal::NodeStateCauseName(node.state_cause));
  }
  // Spot facts only when set, so that snapshots without spot nodes read as before.
  if (node.spot) w.BoolField("spot", true);
  if (node.reclaiming) w.BoolField("reclaiming", true);
  if (node.reclaim_deadline.has_value()) w.IntField("reclaim_deadline", *node.reclaim_deadline);
  w.EndObject();
}

void WriteQueue(JsonWriter& w, const Queue& queue) {
  w.BeginObject();
  w.StringField("id", queue.id);
  w.StringField("parent", queue.parent);
  w.IntField("priority", queue.priority);
  w.Key("quotas");
  w.BeginArray();
  for (const Quota& quota : queue.quotas) {
    w.BeginOneLineObject();
    w.StringField("gpu_model", quota.gpu_model);
    w.IntField("guaranteed_milli", quota.guaranteed_milli);
    if (quota.limit_milli.has_value()) w.IntField("limit_milli", *quota.limit_milli);
    w.IntField("over_quota_weight", quota.over_quota_weight);
    w.EndObject();
  }
  w.EndArray();
  w.BoolField("can_borrow", queue.can_borrow);
  w.BoolField("can_lend", queue.can_lend);
  w.StringField("isolation", internal::IsolationName(queue.isolation));
  if (!queue.labels.empty()) {
    w.Key("labels");
    internal::WriteLabels(w, queue.labels);
  }
  if (queue.budget_milli_gpu_seconds.has_value()) {
    w.IntField("budget_milli_gpu_seconds", *queue.budget_milli_gpu_seconds);
  }
  if (queue.budget_used_milli_gpu_seconds != 0) {
    w.IntField("budget_used_milli_gpu_seconds", queue.budget_used_milli_gpu_seconds);
  }
  w.IntField("decayed_usage_milli_gpu_seconds", queue.decayed_usage_milli_gpu_seconds);
  w.EndObject();
}

void WriteTaskGroup(JsonWriter& w, const TaskGroup& group) {
  w.BeginObject();
  w.StringField("name", group.name);
  w.IntField("replicas", group.replicas);
  if (group.min_replicas.has_value()) w.IntField("min_replicas", *group.min_replicas);
  w.Key("request");
  w.BeginOneLineObject();
  w.IntField("gpu_milli", group.request.gpu_milli);
  w.IntField("gpu_memory_mib", group.request.gpu_memory_mib);
  w.IntField("cpu_milli", group.request.cpu_milli);
  w.IntField("memory_mib", group.request.memory_mib);
  w.EndObject();
  w.Key("gpu_models");
  w.StringArray(group.gpu_models);
  w.Key("topology");
  w.BeginOneLineObject();
  const TopologyConstraint& topology = group.topology;
  w.StringField("replica_scope", internal::ReplicaScopeName(topology.replica_scope));
  w.StringField("replica_strictness", internal::StrictnessName(topology.replica_strictness));
  if (topology.gang_level.has_value()) w.StringField("gang_level", *topology.gang_level);
  w.StringField("gang_strictness", internal::StrictnessName(topology.gang_strictness));
  if (topology.max_replicas_per_node.has_value()) {
    w.IntField("max_replicas_per_node", *topology.max_replicas_per_node);
  }
  w.EndObject();
  w.EndObject();
}

void WriteJob(JsonWriter& w, const Job& job) {
  w.BeginObject();
  w.StringField("id", job.id);
  w.StringField("queue", job.queue);
  w.IntField("priority", job.priority);
  w.IntField("submit_time", job.submit_time);
  w.Key("groups");
  w.BeginArray();
  for (const TaskGroup& group : job.groups) WriteTaskGroup(w, group);
  w.EndArray();
  w.BoolField("preemptible", job.preemptible);
  w.Key("checkpointing");
  w.BeginOneLineObject();
  const Checkpointing& checkpointing = job.checkpointing;
  w.IntField("interval_s", checkpointing.interval_s);
  if (checkpointing.last_checkpoint_time.has_value()) {
    w.IntField("last_checkpoint_time", *checkpointing.last_checkpoint_time);
  }
  w.IntField("checkpoint_cost_s", checkpointing.checkpoint_cost_s);
  w.IntField("restore_time_s", checkpointing.restore_time_s);
  w.EndObject();
  w.IntField("min_runtime_s", job.min_runtime_s);
  if (job.runtime_estimate_s.has_value()) {
    w.IntField("runtime_estimate_s", *job.runtime_estimate_s);
  }
  w.StringField("state", internal::JobStateName(job.state));
  if (job.start_time.has_value()) w.IntField("start_time", *job.start_time);
  w.Key("placements");
  internal::WritePlacements(w, job.placements);
  w.IntField("attained_service_s", job.attained_service_s);
  if (job.pending_since.has_value()) w.IntField("pending_since", *job.pending_since);
  if (job.backfilled) w.BoolField("backfilled", true);
  if (job.spot_tolerant) w.BoolField("spot_tolerant", true);
  w.EndObject();
}

}  // namespace

void internal::WriteNode(JsonWriter& w, const Node& node, bool with_id) {
  WriteNodeFields(w, node, with_id);
}

std::string SnapshotToJson(const Snapshot& snapshot) {
  JsonWriter w;
  w.BeginObject();
  w.IntField("now", snapshot.now);
  w.Key("topology");
  w.BeginOneLineObject();
  w.Key("levels");
  w.StringArray(snapshot.topology.levels);
  w.EndObject();
  w.Key("gpu_models");
  w.BeginArray();
  for (const GpuModel& model : snapshot.gpu_models) WriteGpuModel(w, model);
  w.EndArray();
  w.Key("nodes");
  w.BeginArray();
  for (const Node& node : snapshot.nodes) WriteNodeFields(w, node, true);
  w.EndArray();
  w.Key("queues");
  w.BeginArray();
  for (const Queue& queue : snapshot.queues) WriteQueue(w, queue);
  w.EndArray();
  w.Key("jobs");
  w.BeginArray();
  for (const Job& job : snapshot.jobs) WriteJob(w, job);
  w.EndArray();
  w.EndObject();
  return w.Finish();
}

}  // namespace gpupool::io
