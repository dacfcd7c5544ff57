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
