// The replay's measurements (metrics.h).
#include "sim/replay/metrics.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "gpupool/resources.h"

namespace gpupool::sim::internal {
namespace {

// Nearest rank.
double Percentile(std::vector<int64_t> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(p * static_cast<double>(v.size()) + 0.999999999);
  rank = std::clamp<size_t>(rank, 1, v.size());
  return static_cast<double>(v[rank - 1]);
}

double Mean(const std::vector<int64_t>& v) {
  if (v.empty()) return 0;
  long double sum = 0;
  for (int64_t x : v) sum += x;
  return static_cast<double>(sum / v.size());
}

}  // namespace

void WaterFill(const std::vector<int64_t>& guarantee, const std::vector<int64_t>& demand,
               int64_t capacity, std::vector<int64_t>& out) {
  const size_t n = guarantee.size();
  out.assign(n, 0);
  int64_t left = capacity;
  for (size_t q = 0; q < n; ++q) {
    out[q] = std::min(guarantee[q], demand[q]);
    left -= out[q];
  }
  while (left > 0) {
    int64_t wanting = 0;
    for (size_t q = 0; q < n; ++q) wanting += out[q] < demand[q] ? 1 : 0;
    if (wanting == 0) break;
    const int64_t each = left / wanting;
    if (each == 0) break;
    for (size_t q = 0; q < n; ++q) {
      if (out[q] >= demand[q]) continue;
      const int64_t give = std::min(each, demand[q] - out[q]);
      out[q] += give;
      left -= give;
    }
  }
}

MetricsRecorder::MetricsRecorder(const ReplayOptions& options, const Tenants& tenants,
                                 int32_t num_jobs, int64_t start)
    : tenants_(tenants),
      total_gpus_(options.pool.TotalGpus()),
      start_(start),
      now_(start),
      last_completion_(start),
      gpus_per_node_(options.pool.gpus_per_node),
      scaling_cost_per_hour_micro_(options.scaling.cost_per_hour_micro),
      entitled_milli_(tenants.size(), 0),
      share_history_(tenants.size(), start, options.fair_share_history_hours) {
  result_.jobs.resize(num_jobs);
  result_.metrics.policy = options.policy.name;
  result_.metrics.jobs = num_jobs;
  result_.metrics.failures_on = options.failures.enabled();
  if (result_.metrics.failures_on) result_.metrics.failure_model = options.failures;
  result_.metrics.maintenance_on = options.maintenance.enabled();
  if (result_.metrics.maintenance_on) result_.metrics.maintenance_model = options.maintenance;
  result_.metrics.spot_on = options.spot.enabled();
  if (result_.metrics.spot_on) result_.metrics.spot_model = options.spot;
  result_.metrics.scaling_on = options.scaling.enabled();
  if (result_.metrics.scaling_on) result_.metrics.scaling_model = options.scaling;
  // Buckets start at the first arrival rounded down to a multiple of the bucket width.
  ReplaySeries& series = result_.series;
  const int64_t bucket_s = options.series_bucket_s;
  series.bucket_s = bucket_s;
  series.start = start - ((start % bucket_s) + bucket_s) % bucket_s;
  series.queues.resize(tenants.size());
  for (size_t q = 0; q < tenants.size(); ++q) series.queues[q].queue = tenants.names[q];
}

void MetricsRecorder::AdvanceTo(int64_t t, const RunState& state, const PoolHealth& health) {
  if (t <= now_) return;
  const long double dt = static_cast<long double>(t - now_);
  busy_gpu_seconds_ += dt * static_cast<long double>(state.busy_gpus());
  // GPUs under repair: out of service, but not on a node taken by the spot provider or not in
  // the pool.
  repair_gpu_seconds_ +=
      (t - now_) * (state.out_of_service_gpus() -
                    (health.absent_nodes() + health.nodes_taken()) * gpus_per_node_);
  down_node_seconds_ += (t - now_) * state.nodes_down();
  maintenance_node_seconds_ += (t - now_) * health.nodes_in_maintenance();
  taken_node_seconds_ += (t - now_) * health.nodes_taken();
  added_node_seconds_ += (t - now_) * health.added_in_pool();
  added_gpu_seconds_ += (t - now_) * health.added_in_pool() * gpus_per_node_;
  result_.metrics.max_added_nodes =
      std::max(result_.metrics.max_added_nodes, static_cast<int32_t>(health.added_in_pool()));
  IntegrateTenants(now_, t, state.usage_milli());
  now_ = t;
}

void MetricsRecorder::IntegrateTenants(int64_t from, int64_t to,
                                       const std::vector<int64_t>& usage_milli) {
  share_history_.Add(from, to, usage_milli, entitled_milli_);
  ReplaySeries& series = result_.series;
  while (from < to) {
    const auto k = static_cast<size_t>((from - series.start) / series.bucket_s);
    const int64_t until =
        std::min(to, series.start + static_cast<int64_t>(k + 1) * series.bucket_s);
    for (size_t q = 0; q < series.queues.size(); ++q) {
      QueueSeries& qs = series.queues[q];
      if (qs.received_milli_gpu_s.size() <= k) {
        qs.received_milli_gpu_s.resize(k + 1, 0);
        qs.entitled_milli_gpu_s.resize(k + 1, 0);
      }
      qs.received_milli_gpu_s[k] += (until - from) * usage_milli[q];
      qs.entitled_milli_gpu_s[k] += (until - from) * entitled_milli_[q];
    }
    from = until;
  }
}

void MetricsRecorder::UpdateEntitlements(const RunState& state) {
  WaterFill(tenants_.guarantee_milli, state.demand_milli(), total_gpus_ * kMilliPerGpu,
            entitled_milli_);
}

void MetricsRecorder::Started(int32_t i, int64_t t, int64_t pending_since) {
  JobOutcome& job = result_.jobs[i];
  const int64_t waited = t - pending_since;
  job.pending_s += waited;
  max_wait_s_ = std::max(max_wait_s_, waited);
  if (job.first_start < 0) job.first_start = t;
}

void MetricsRecorder::Preempted(int32_t i, int32_t gpus, int64_t lost_s) {
  lost_gpu_seconds_ += static_cast<long double>(gpus) * lost_s;
  ++result_.metrics.preemptions;
  ++result_.jobs[i].preemptions;
}

void MetricsRecorder::FailureStopped(int32_t i, int32_t gpus, int64_t lost_s) {
  failure_lost_gpu_seconds_ += int64_t{gpus} * lost_s;
  ++result_.metrics.failure_stops;
  ++result_.jobs[i].failures;
}

void MetricsRecorder::MaintenanceStopped(int32_t i, int32_t gpus, int64_t lost_s) {
  maintenance_lost_gpu_seconds_ += int64_t{gpus} * lost_s;
  ++result_.metrics.maintenance_stops;
  ++result_.jobs[i].preemptions;
}

void MetricsRecorder::SpotStopped(int32_t i, int32_t gpus, int64_t lost_s) {
  spot_lost_gpu_seconds_ += int64_t{gpus} * lost_s;
  ++result_.metrics.spot_stops;
  ++result_.jobs[i].preemptions;
}

void MetricsRecorder::Completed(int32_t i, int64_t t) {
  result_.jobs[i].completion = t;
  last_completion_ = std::max(last_completion_, t);
}

ReplayResult MetricsRecorder::Finish(const RunState& state) && {
  ReplayMetrics& m = result_.metrics;
  const size_t num_tenants = tenants_.size();
  std::vector<int64_t> jct, delay;
  std::vector<std::vector<int64_t>> tenant_jct(num_tenants);
  for (int32_t i = 0; i < state.size(); ++i) {
    const JobRun& run = state.job(i);
    if (run.phase == Phase::kUnschedulable) {
      ++m.jobs_unschedulable;
      continue;
    }
    JobOutcome& job = result_.jobs[i];
    job.jct_s = job.completion - run.submit_time;
    jct.push_back(job.jct_s);
    delay.push_back(job.pending_s);
    tenant_jct[run.tenant].push_back(job.jct_s);
  }
  m.jobs_completed = static_cast<int64_t>(jct.size());
  m.jct_mean_s = Mean(jct);
  m.jct_p50_s = Percentile(jct, 0.5);
  m.jct_p99_s = Percentile(jct, 0.99);
  m.queue_delay_mean_s = Mean(delay);
  m.queue_delay_p99_s = Percentile(delay, 0.99);
  m.makespan_s = last_completion_ - start_;
  // Capacity: the pool's own GPUs over the makespan, plus the added nodes' GPUs while in the pool.
  m.utilization = m.makespan_s > 0
                      ? static_cast<double>(busy_gpu_seconds_ /
                                            (static_cast<long double>(total_gpus_) * m.makespan_s +
                                             static_cast<long double>(added_gpu_seconds_)))
                      : 0;
  m.gpu_hours_lost_to_preemption = static_cast<double>(lost_gpu_seconds_ / 3600);
  m.max_wait_s = max_wait_s_;
  m.gpu_hours_lost_to_failures = static_cast<double>(failure_lost_gpu_seconds_) / 3600;
  m.gpu_hours_under_repair = static_cast<double>(repair_gpu_seconds_) / 3600;
  m.node_hours_under_repair = static_cast<double>(down_node_seconds_) / 3600;
  m.gpu_hours_lost_to_maintenance = static_cast<double>(maintenance_lost_gpu_seconds_) / 3600;
  m.node_hours_under_maintenance = static_cast<double>(maintenance_node_seconds_) / 3600;
  m.gpu_hours_lost_to_spot = static_cast<double>(spot_lost_gpu_seconds_) / 3600;
  m.node_hours_reclaimed = static_cast<double>(taken_node_seconds_) / 3600;
  m.added_node_hours = static_cast<double>(added_node_seconds_) / 3600;
  m.scale_cost = static_cast<double>(added_node_seconds_) / 3600 *
                 (static_cast<double>(scaling_cost_per_hour_micro_) / 1e6);

  // Every tenant's series gets the same number of buckets, up to the last completion.
  ReplaySeries& series = result_.series;
  series.end = last_completion_;
  const auto buckets = static_cast<size_t>(
      last_completion_ > series.start
          ? (last_completion_ - series.start + series.bucket_s - 1) / series.bucket_s
          : 0);
  std::vector<int64_t> received(num_tenants, 0), entitled(num_tenants, 0);
  for (size_t q = 0; q < num_tenants; ++q) {
    QueueSeries& qs = series.queues[q];
    qs.received_milli_gpu_s.resize(buckets, 0);
    qs.entitled_milli_gpu_s.resize(buckets, 0);
    for (size_t k = 0; k < buckets; ++k) {
      received[q] += qs.received_milli_gpu_s[k];
      entitled[q] += qs.entitled_milli_gpu_s[k];
    }
  }

  long double sum = 0, sum_sq = 0;
  int64_t with_demand = 0;
  for (size_t q = 0; q < num_tenants; ++q) {
    QueueMetrics qm;
    qm.queue = tenants_.names[q];
    qm.jobs = tenants_.jobs[q];
    qm.demand_fraction = tenants_.total_demand_gpu_s == 0
                             ? 0
                             : static_cast<double>(tenants_.demand_gpu_s[q]) /
                                   static_cast<double>(tenants_.total_demand_gpu_s);
    qm.guaranteed_milli = tenants_.guarantee_milli[q];
    qm.received_gpu_seconds = static_cast<double>(received[q]) / kMilliPerGpu;
    qm.entitled_gpu_seconds = static_cast<double>(entitled[q]) / kMilliPerGpu;
    qm.jct_mean_s = Mean(tenant_jct[q]);
    if (entitled[q] > 0) {
      const long double r =
          static_cast<long double>(received[q]) / static_cast<long double>(entitled[q]);
      qm.share_ratio = static_cast<double>(r);
      sum += r;
      sum_sq += r * r;
      ++with_demand;
    }
    m.queues.push_back(std::move(qm));
  }
  m.jain_fairness = sum_sq > 0 ? static_cast<double>(sum * sum / (with_demand * sum_sq)) : 0;
  return std::move(result_);
}

}  // namespace gpupool::sim::internal
