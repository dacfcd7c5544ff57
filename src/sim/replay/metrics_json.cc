// ReplayMetricsToJson (gpupool/sim/replay.h), through gpupool::io's JsonWriter: names are
// escaped, numbers have a fixed number of decimals, the layout is the writer's.
#include <string>

#include "fmt/format.h"
#include "gpupool/sim/replay.h"
#include "sim/json_number.h"

namespace gpupool::sim {

std::string ReplayMetricsToJson(const ReplayMetrics& m) {
  using internal::DoubleField;
  internal::JsonWriter w;
  w.BeginObject();
  w.StringField("policy", m.policy);
  w.IntField("jobs", m.jobs);
  w.IntField("jobs_completed", m.jobs_completed);
  w.IntField("jobs_unschedulable", m.jobs_unschedulable);
  DoubleField(w, "jct_mean_s", m.jct_mean_s, 3);
  DoubleField(w, "jct_p50_s", m.jct_p50_s, 3);
  DoubleField(w, "jct_p99_s", m.jct_p99_s, 3);
  DoubleField(w, "queue_delay_mean_s", m.queue_delay_mean_s, 3);
  DoubleField(w, "queue_delay_p99_s", m.queue_delay_p99_s, 3);
  w.IntField("makespan_s", m.makespan_s);
  DoubleField(w, "utilization", m.utilization, 6);
  w.IntField("preemptions", m.preemptions);
  DoubleField(w, "gpu_hours_lost_to_preemption", m.gpu_hours_lost_to_preemption, 3);
  DoubleField(w, "jain_fairness", m.jain_fairness, 6);
  w.IntField("max_wait_s", m.max_wait_s);
  w.IntField("cycles", m.cycles);
  if (m.failures_on) {
    // Only with failures on: without them the object is what it was before failures existed.
    const ReplayFailures& f = m.failure_model;
    w.Key("failures");
    w.BeginObject();
    w.Key("gpu_failures_per_1000_gpu_days");
    w.Fixed(f.gpu_per_million_gpu_days, 3);
    w.Key("node_failures_per_1000_node_days");
    w.Fixed(f.node_per_million_node_days, 3);
    w.IntField("repair_s", f.repair_s);
    w.Key("seed");
    w.Number(fmt::format("{}", f.seed));
    w.IntField("injected", static_cast<int64_t>(f.injected.size()));
    w.IntField("gpu_failures", m.gpu_failures);
    w.IntField("node_failures", m.node_failures);
    w.IntField("jobs_stopped", m.failure_stops);
    DoubleField(w, "gpu_hours_lost_to_failures", m.gpu_hours_lost_to_failures, 3);
    DoubleField(w, "gpu_hours_under_repair", m.gpu_hours_under_repair, 3);
    DoubleField(w, "node_hours_under_repair", m.node_hours_under_repair, 3);
    w.EndObject();
  }
  // Each only when on, for the same reason.
  if (m.maintenance_on) {
    const ReplayMaintenance& o = m.maintenance_model;
    w.Key("maintenance");
    w.BeginObject();
    w.IntField("every_s", o.every_s);
    w.IntField("duration_s", o.duration_s);
    w.IntField("notice_s", o.notice_s);
    w.IntField("injected", static_cast<int64_t>(o.windows.size()));
    w.IntField("windows", m.maintenance_windows);
    w.IntField("jobs_stopped", m.maintenance_stops);
    DoubleField(w, "gpu_hours_lost_to_maintenance", m.gpu_hours_lost_to_maintenance, 3);
    DoubleField(w, "node_hours_under_maintenance", m.node_hours_under_maintenance, 3);
    w.EndObject();
  }
  if (m.spot_on) {
    const ReplaySpot& o = m.spot_model;
    w.Key("spot");
    w.BeginObject();
    w.IntField("nodes", o.nodes);
    w.Key("reclaims_per_1000_node_days");
    w.Fixed(o.reclaims_per_million_node_days, 3);
    w.IntField("notice_s", o.notice_s);
    w.IntField("away_s", o.away_s);
    w.Key("seed");
    w.Number(fmt::format("{}", o.seed));
    w.IntField("injected", static_cast<int64_t>(o.injected.size()));
    w.IntField("reclaims", m.spot_reclaims);
    w.IntField("jobs_stopped", m.spot_stops);
    DoubleField(w, "gpu_hours_lost_to_spot", m.gpu_hours_lost_to_spot, 3);
    DoubleField(w, "node_hours_reclaimed", m.node_hours_reclaimed, 3);
    w.EndObject();
  }
  if (m.scaling_on) {
    const ReplayScaling& o = m.scaling_model;
    w.Key("scaling");
    w.BeginObject();
    w.IntField("max_nodes", o.max_nodes);
    w.Key("cost_per_hour");
    w.Fixed(o.cost_per_hour_micro, 6);
    w.IntField("provision_s", o.provision_s);
    w.IntField("advice_every_s", o.advice_every_s);
    w.IntField("max_simulations", o.max_simulations);
    w.IntField("advice_cycles", m.scale_advice_cycles);
    w.IntField("nodes_added", m.nodes_added);
    w.IntField("nodes_released", m.nodes_released);
    w.IntField("max_added_nodes", m.max_added_nodes);
    DoubleField(w, "added_node_hours", m.added_node_hours, 3);
    DoubleField(w, "scale_cost", m.scale_cost, 2);
    w.EndObject();
  }
  w.Key("queues");
  w.BeginArray();
  for (const QueueMetrics& q : m.queues) {
    w.BeginOneLineObject();
    w.StringField("queue", q.queue);
    w.IntField("jobs", q.jobs);
    DoubleField(w, "demand_fraction", q.demand_fraction, 6);
    w.IntField("guaranteed_milli", q.guaranteed_milli);
    DoubleField(w, "received_gpu_seconds", q.received_gpu_seconds, 1);
    DoubleField(w, "entitled_gpu_seconds", q.entitled_gpu_seconds, 1);
    DoubleField(w, "share_ratio", q.share_ratio, 6);
    DoubleField(w, "jct_mean_s", q.jct_mean_s, 3);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Finish();
}

}  // namespace gpupool::sim
