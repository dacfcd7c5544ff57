// The discrete-event replay of E2 (docs/replay.md).
//
// The replay keeps each job's own state (work done, attained service, where it runs) and builds
// a fresh Snapshot from it at every event second, so that the engine sees exactly what a host
// would hand it; the pool part of the snapshot (nodes, queues) is built once and reused. Decisions
// are carried out with ApplyDecisions() semantics: preemptions first, then starts.
//
// Time is integer seconds. A running job's progress is a pure function of its start time, the
// work it resumed from and the restore time it pays, so nothing ticks between events: the only
// events are arrivals and completions.
#include "gpupool/sim/replay.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "gpupool/schedule.h"

namespace gpupool::sim {
namespace {

enum class State { kFuture, kPending, kRunning, kDone, kUnschedulable };

struct RunState {
  State state = State::kFuture;
  int32_t gpus = 0;
  int32_t vc = 0;  // index into the sorted virtual clusters
  // Work (seconds) done when the current run started, and the restore seconds the current run
  // (or the next one, while pending) pays before it progresses.
  int64_t work_base = 0;
  int64_t restore_due = 0;
  int64_t run_start = 0;
  // Seconds run before the current run (restores and lost work included): attained service.
  int64_t service_before = 0;
  int64_t pending_since = 0;
  int64_t completion = 0;
  std::vector<ReplicaPlacement> placements;
};

int64_t WorkAt(const RunState& j, int64_t now) {
  if (j.state != State::kRunning) return j.work_base;
  return j.work_base + std::max<int64_t>(0, now - j.run_start - j.restore_due);
}

int64_t ServiceAt(const RunState& j, int64_t now) {
  return j.service_before + (j.state == State::kRunning ? now - j.run_start : 0);
}

int32_t LasLevel(const std::vector<int64_t>& thresholds, int64_t gpu_seconds) {
  int32_t level = 0;
  for (int64_t t : thresholds) {
    if (gpu_seconds >= t) ++level;
  }
  return level;
}

// Fair-share entitlements of the virtual clusters for one instant, in milli-GPUs: guarantees
// bounded by demand first, then the rest water-filled with weight 1 among queues wanting more
// (leftover units below one per queue stay unassigned). Mirrors docs/fair-share.md for a flat
// tree, independently of the engine, so that every policy is measured against the same yardstick.
void Entitlements(const std::vector<int64_t>& guarantee, const std::vector<int64_t>& demand,
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

double Percentile(std::vector<int64_t> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  // Nearest rank.
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

Snapshot MakePoolSnapshot(const ReplayPool& pool) {
  Snapshot s;
  s.topology.levels = {"rack"};
  s.gpu_models.push_back(GpuModel{.name = "gpu", .memory_mib = 32768, .speeds = {}});
  for (int32_t n = 0; n < pool.nodes; ++n) {
    Node node;
    node.id = fmt::format("n{:03}", n);
    node.gpu_model = "gpu";
    for (int32_t g = 0; g < pool.gpus_per_node; ++g) {
      node.gpus.push_back(Gpu{.index = g, .island = 0, .healthy = true});
    }
    node.cpu_milli = 1'000'000;
    node.memory_mib = 1'000'000;
    node.path.push_back(TopologyLabel{"rack", fmt::format("r{:02}", n / pool.nodes_per_rack)});
    s.nodes.push_back(std::move(node));
  }
  return s;
}

absl::StatusOr<ReplayResult> RunReplay(const ReplayOptions& options,
                                       const std::vector<TraceJob>& jobs) {
  const ReplayPool& pool = options.pool;
  if (pool.nodes <= 0 || pool.gpus_per_node <= 0 || pool.nodes_per_rack <= 0) {
    return absl::InvalidArgumentError("pool: nodes, gpus_per_node and nodes_per_rack must be > 0");
  }
  if (options.series_bucket_s <= 0) {
    return absl::InvalidArgumentError("series_bucket_s: must be > 0");
  }
  const int64_t total_gpus = pool.TotalGpus();
  const int64_t max_gang_gpus = int64_t{pool.nodes_per_rack} * pool.gpus_per_node;
  const int32_t n = static_cast<int32_t>(jobs.size());

  // Virtual clusters in name order; their demand in GPU-seconds gives the guarantees.
  std::map<std::string, int32_t> vc_index;
  for (const TraceJob& j : jobs) vc_index.emplace(j.cluster, 0);
  std::vector<std::string> vc_names;
  for (auto& [name, index] : vc_index) {
    index = static_cast<int32_t>(vc_names.size());
    vc_names.push_back(name);
  }
  const size_t num_vc = vc_names.size();
  std::vector<int64_t> vc_demand(num_vc, 0);
  int64_t total_demand = 0;
  std::vector<int64_t> vc_jobs(num_vc, 0);
  for (int32_t i = 0; i < n; ++i) {
    const TraceJob& j = jobs[i];
    if (j.num_gpus <= 0) {
      return absl::InvalidArgumentError(fmt::format("jobs[{}].num_gpus: must be positive", i));
    }
    if (j.duration_s < 0) {
      return absl::InvalidArgumentError(fmt::format("jobs[{}].duration_s: negative", i));
    }
    const int64_t d = j.duration_s * j.num_gpus;
    vc_demand[vc_index[j.cluster]] += d;
    total_demand += d;
    ++vc_jobs[vc_index[j.cluster]];
  }
  std::vector<int64_t> guarantee(num_vc, 0);
  for (size_t q = 0; q < num_vc; ++q) {
    guarantee[q] =
        total_demand == 0
            ? 0
            : static_cast<int64_t>(vc_demand[q] * total_gpus * kMilliPerGpu / total_demand);
  }

  // The constant part of every snapshot.
  Snapshot snap = MakePoolSnapshot(pool);
  const bool single_queue = options.queue_mode == QueueMode::kSingleQueueLas;
  const bool las_priority = options.queue_mode != QueueMode::kPerCluster;
  if (single_queue) {
    snap.queues.push_back(
        Queue{.id = "all", .quotas = {Quota{.guaranteed_milli = total_gpus * kMilliPerGpu}}});
  } else {
    for (size_t q = 0; q < num_vc; ++q) {
      snap.queues.push_back(
          Queue{.id = vc_names[q], .quotas = {Quota{.guaranteed_milli = guarantee[q]}}});
    }
  }

  // Job templates: everything but the dynamic fields.
  std::vector<Job> templates(n);
  std::vector<RunState> st(n);
  for (int32_t i = 0; i < n; ++i) {
    const TraceJob& tj = jobs[i];
    RunState& s = st[i];
    s.gpus = tj.num_gpus;
    s.vc = vc_index[tj.cluster];
    Job& job = templates[i];
    job.id = fmt::format("j{:06}", i);
    job.queue = single_queue ? "all" : tj.cluster;
    job.submit_time = tj.submit_time;
    job.runtime_estimate_s = tj.duration_s;
    TaskGroup group;
    group.topology.replica_scope = ReplicaScope::kIsland;
    if (tj.num_gpus <= pool.gpus_per_node) {
      group.request.gpu_milli = int64_t{tj.num_gpus} * kMilliPerGpu;
    } else {
      // Whole nodes when the size allows it; otherwise the largest power-of-two part of a node
      // that divides it (12 GPUs: 3 x 4), all in one rack.
      int32_t per = pool.gpus_per_node;
      while (per > 1 && tj.num_gpus % per != 0) per /= 2;
      if (tj.num_gpus % per != 0) per = 1;
      group.replicas = tj.num_gpus / per;
      group.request.gpu_milli = int64_t{per} * kMilliPerGpu;
      group.topology.gang_level = "rack";
    }
    job.groups.push_back(std::move(group));
    if (tj.num_gpus > max_gang_gpus) s.state = State::kUnschedulable;
  }

  // Arrival order: submit time, then input index.
  std::vector<int32_t> arrivals;
  for (int32_t i = 0; i < n; ++i) {
    if (st[i].state != State::kUnschedulable) arrivals.push_back(i);
  }
  std::stable_sort(arrivals.begin(), arrivals.end(),
                   [&](int32_t a, int32_t b) { return jobs[a].submit_time < jobs[b].submit_time; });

  ReplayResult result;
  result.jobs.resize(n);
  ReplayMetrics& m = result.metrics;
  m.policy = options.policy.name;
  m.jobs = n;

  std::set<std::pair<int64_t, int32_t>> completions;
  std::set<int32_t> pending;  // job indices (id order)
  // The same jobs in FIFO order (submit time, then id), for the pruning below.
  std::set<std::pair<int64_t, int32_t>> pending_fifo;
  std::set<int32_t> running;
  int64_t free_gpus = total_gpus;
  size_t next_arrival = 0;
  int64_t max_wait = 0;
  long double busy_gpu_seconds = 0;
  long double lost_gpu_seconds = 0;
  std::vector<int64_t> usage_milli(num_vc, 0), demand_milli(num_vc, 0), ent(num_vc, 0);
  const int64_t interval = options.checkpoint_interval_s;
  const bool preemption_on = options.policy.preemption.enabled;
  int64_t first_submit = arrivals.empty() ? 0 : jobs[arrivals[0]].submit_time;
  int64_t last_completion = first_submit;
  int64_t prev_t = first_submit;

  // The per-queue integrals of GPUs held and entitled, in milli-GPU-seconds per time bucket
  // (their sums are the metrics' totals).
  const int64_t bucket_s = options.series_bucket_s;
  ReplaySeries& series = result.series;
  series.bucket_s = bucket_s;
  series.start = first_submit - ((first_submit % bucket_s) + bucket_s) % bucket_s;
  series.queues.resize(num_vc);
  for (size_t q = 0; q < num_vc; ++q) series.queues[q].queue = vc_names[q];
  auto integrate_queues = [&](int64_t from, int64_t to) {
    while (from < to) {
      const auto k = static_cast<size_t>((from - series.start) / bucket_s);
      const int64_t until = std::min(to, series.start + static_cast<int64_t>(k + 1) * bucket_s);
      for (size_t q = 0; q < num_vc; ++q) {
        QueueSeries& qs = series.queues[q];
        if (qs.received_milli_gpu_s.size() <= k) {
          qs.received_milli_gpu_s.resize(k + 1, 0);
          qs.entitled_milli_gpu_s.resize(k + 1, 0);
        }
        qs.received_milli_gpu_s[k] += (until - from) * usage_milli[q];
        qs.entitled_milli_gpu_s[k] += (until - from) * ent[q];
      }
      from = until;
    }
  };

  auto finish_wait = [&](int32_t i, int64_t now) {
    const int64_t waited = now - st[i].pending_since;
    result.jobs[i].pending_s += waited;
    max_wait = std::max(max_wait, waited);
  };

  int64_t last_cycle = std::numeric_limits<int64_t>::min();
  while (next_arrival < arrivals.size() || !completions.empty()) {
    int64_t t = std::numeric_limits<int64_t>::max();
    if (next_arrival < arrivals.size()) t = jobs[arrivals[next_arrival]].submit_time;
    if (!completions.empty()) t = std::min(t, completions.begin()->first);
    if (options.wake_up_every_s > 0 && !pending.empty() &&
        last_cycle != std::numeric_limits<int64_t>::min()) {
      t = std::min(t, std::max(prev_t + 1, last_cycle + options.wake_up_every_s));
    }

    // Integrate the constant state of [prev_t, t).
    if (t > prev_t) {
      const long double dt = static_cast<long double>(t - prev_t);
      busy_gpu_seconds += dt * static_cast<long double>(total_gpus - free_gpus);
      integrate_queues(prev_t, t);
      prev_t = t;
    }

    while (!completions.empty() && completions.begin()->first == t) {
      const int32_t i = completions.begin()->second;
      completions.erase(completions.begin());
      RunState& s = st[i];
      s.state = State::kDone;
      s.placements.clear();
      running.erase(i);
      free_gpus += s.gpus;
      usage_milli[s.vc] -= int64_t{s.gpus} * kMilliPerGpu;
      demand_milli[s.vc] -= int64_t{s.gpus} * kMilliPerGpu;
      result.jobs[i].completion = t;
      last_completion = std::max(last_completion, t);
    }
    while (next_arrival < arrivals.size() && jobs[arrivals[next_arrival]].submit_time == t) {
      const int32_t i = arrivals[next_arrival++];
      st[i].state = State::kPending;
      st[i].pending_since = t;
      pending.insert(i);
      pending_fifo.insert({jobs[i].submit_time, i});
      demand_milli[st[i].vc] += int64_t{st[i].gpus} * kMilliPerGpu;
    }

    // Without preemption nothing can start in a full pool, and a job needing more GPUs than are
    // free cannot start either; leaving such jobs out changes no decision of an order without
    // queue turns (they take no capacity and fail anyway), and saves most of the work.
    const bool prune = !preemption_on && options.policy.queue_order == QueueOrder::kNone;
    bool can_start = !pending.empty() && (free_gpus > 0 || preemption_on);
    if (can_start && prune) {
      can_start = std::any_of(pending.begin(), pending.end(),
                              [&](int32_t i) { return st[i].gpus <= free_gpus; });
    }
    if (can_start) {
      snap.now = t;
      snap.jobs.clear();
      if (prune) {
        // Without preemption or queue turns, running jobs matter to the engine only through the
        // GPUs they hold (no victims, no fair-share turns, no limits), so one stand-in per node
        // holding its busy GPUs gives the same decisions with an eighth of the jobs at most.
        std::map<std::string, std::vector<int32_t>> busy;
        for (int32_t i : running) {
          for (const ReplicaPlacement& p : st[i].placements) {
            std::vector<int32_t>& gpus = busy[p.node];
            gpus.insert(gpus.end(), p.gpus.begin(), p.gpus.end());
          }
        }
        for (auto& [node, gpus] : busy) {
          std::sort(gpus.begin(), gpus.end());
          Job job;
          job.id = "~" + node;
          job.queue = snap.queues.front().id;
          job.submit_time = t;
          TaskGroup group;
          group.request.gpu_milli = static_cast<int64_t>(gpus.size()) * kMilliPerGpu;
          job.groups.push_back(std::move(group));
          job.state = JobState::kRunning;
          job.start_time = t;
          job.placements.push_back(ReplicaPlacement{
              .group = "main", .replica = 0, .node = node, .gpus = gpus, .gpu_milli = 0});
          snap.jobs.push_back(std::move(job));
        }
      }
      for (int32_t i : running) {
        if (prune) break;
        const RunState& s = st[i];
        Job job = templates[i];
        const int64_t service = ServiceAt(s, t);
        if (las_priority) {
          job.priority = -LasLevel(options.las_thresholds_gpu_seconds, service * s.gpus);
        }
        job.state = JobState::kRunning;
        job.start_time = s.run_start;
        job.placements = s.placements;
        job.attained_service_s = service;
        job.checkpointing.interval_s = interval;
        job.checkpointing.restore_time_s = options.free_preemption ? 0 : options.restore_time_s;
        const int64_t work = WorkAt(s, t);
        if (options.free_preemption) {
          job.checkpointing.last_checkpoint_time = t;
        } else if (interval > 0) {
          const int64_t checkpoint = work / interval * interval;
          if (checkpoint > s.work_base) {
            job.checkpointing.last_checkpoint_time =
                s.run_start + s.restore_due + (checkpoint - s.work_base);
          } else if (s.work_base > 0) {
            job.checkpointing.last_checkpoint_time = s.run_start;
          }
        }
        snap.jobs.push_back(std::move(job));
      }
      // Pruned cycles (no preemption, no queue turns, all priorities 0) consider jobs in FIFO
      // order, and jobs of one size are identical to the engine: of the pending jobs of g GPUs
      // at most free / g can start, and if one of them fails all later ones fail too. So only
      // the first free / g of each size are sent; the rest would fail anyway.
      std::map<int32_t, int64_t> sent_by_size;
      std::vector<int32_t> to_send;
      if (prune) {
        for (const auto& [submit, i] : pending_fifo) {
          const int32_t g = st[i].gpus;
          if (g > free_gpus) continue;
          int64_t& sent = sent_by_size[g];
          if (sent >= free_gpus / g) continue;
          ++sent;
          to_send.push_back(i);
        }
      } else {
        to_send.assign(pending.begin(), pending.end());
      }
      for (int32_t i : to_send) {
        const RunState& s = st[i];
        Job job = templates[i];
        job.attained_service_s = s.service_before;
        job.pending_since = s.pending_since;
        if (las_priority) {
          job.priority = -LasLevel(options.las_thresholds_gpu_seconds, s.service_before * s.gpus);
        }
        job.checkpointing.interval_s = interval;
        job.checkpointing.restore_time_s = options.free_preemption ? 0 : options.restore_time_s;
        snap.jobs.push_back(std::move(job));
      }
      absl::StatusOr<Decisions> decisions = Schedule(snap, options.policy);
      if (!decisions.ok()) {
        return absl::InternalError(
            fmt::format("Schedule() at {}: {}", t, decisions.status().ToString()));
      }
      ++m.cycles;
      last_cycle = t;
      auto index_of = [&](const std::string& id) -> int32_t {
        return static_cast<int32_t>(std::stol(id.substr(1)));
      };
      for (const PreemptDecision& p : decisions->preemptions) {
        const int32_t i = index_of(p.job);
        RunState& s = st[i];
        if (s.state != State::kRunning) {
          return absl::InternalError(fmt::format("preempt {}: not running", p.job));
        }
        const int64_t work = WorkAt(s, t);
        const int64_t kept =
            options.free_preemption ? work : (interval > 0 ? work / interval * interval : 0);
        const int64_t restore = options.free_preemption ? 0 : options.restore_time_s;
        lost_gpu_seconds += static_cast<long double>(s.gpus) * (work - kept + restore);
        completions.erase({s.completion, i});
        s.service_before += t - s.run_start;
        s.work_base = kept;
        s.restore_due = restore;
        s.state = State::kPending;
        s.placements.clear();
        s.pending_since = t;
        running.erase(i);
        pending.insert(i);
        pending_fifo.insert({jobs[i].submit_time, i});
        free_gpus += s.gpus;
        usage_milli[s.vc] -= int64_t{s.gpus} * kMilliPerGpu;
        ++m.preemptions;
        ++result.jobs[i].preemptions;
      }
      for (const StartDecision& d : decisions->starts) {
        const int32_t i = index_of(d.job);
        RunState& s = st[i];
        if (s.state != State::kPending) {
          return absl::InternalError(fmt::format("start {}: not pending", d.job));
        }
        finish_wait(i, t);
        if (result.jobs[i].first_start < 0) result.jobs[i].first_start = t;
        s.state = State::kRunning;
        s.run_start = t;
        s.placements = d.placements;
        s.completion = t + s.restore_due + (jobs[i].duration_s - s.work_base);
        completions.insert({s.completion, i});
        pending.erase(i);
        pending_fifo.erase({jobs[i].submit_time, i});
        running.insert(i);
        free_gpus -= s.gpus;
        usage_milli[s.vc] += int64_t{s.gpus} * kMilliPerGpu;
      }
      if (free_gpus < 0) return absl::InternalError("GPUs over-committed");
    }
    Entitlements(guarantee, demand_milli, total_gpus * kMilliPerGpu, ent);
  }

  // Metrics.
  std::vector<int64_t> jct, delay;
  std::vector<std::vector<int64_t>> vc_jct(num_vc);
  for (int32_t i = 0; i < n; ++i) {
    if (st[i].state == State::kUnschedulable) {
      ++m.jobs_unschedulable;
      continue;
    }
    const int64_t c = result.jobs[i].completion - jobs[i].submit_time;
    result.jobs[i].jct_s = c;
    jct.push_back(c);
    delay.push_back(result.jobs[i].pending_s);
    vc_jct[st[i].vc].push_back(c);
  }
  m.jobs_completed = static_cast<int64_t>(jct.size());
  m.jct_mean_s = Mean(jct);
  m.jct_p50_s = Percentile(jct, 0.5);
  m.jct_p99_s = Percentile(jct, 0.99);
  m.queue_delay_mean_s = Mean(delay);
  m.queue_delay_p99_s = Percentile(delay, 0.99);
  m.makespan_s = last_completion - first_submit;
  m.utilization = m.makespan_s > 0
                      ? static_cast<double>(busy_gpu_seconds /
                                            (static_cast<long double>(total_gpus) * m.makespan_s))
                      : 0;
  m.gpu_hours_lost_to_preemption = static_cast<double>(lost_gpu_seconds / 3600);
  m.max_wait_s = max_wait;
  series.end = last_completion;
  const auto buckets = static_cast<size_t>(
      last_completion > series.start ? (last_completion - series.start + bucket_s - 1) / bucket_s
                                     : 0);
  std::vector<int64_t> received(num_vc, 0), entitled(num_vc, 0);
  for (size_t q = 0; q < num_vc; ++q) {
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
  for (size_t q = 0; q < num_vc; ++q) {
    QueueMetrics qm;
    qm.queue = vc_names[q];
    qm.jobs = vc_jobs[q];
    qm.demand_fraction =
        total_demand == 0 ? 0
                          : static_cast<double>(vc_demand[q]) / static_cast<double>(total_demand);
    qm.guaranteed_milli = guarantee[q];
    qm.received_gpu_seconds = static_cast<double>(received[q]) / kMilliPerGpu;
    qm.entitled_gpu_seconds = static_cast<double>(entitled[q]) / kMilliPerGpu;
    qm.jct_mean_s = Mean(vc_jct[q]);
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
  return result;
}

std::string ReplayMetricsToJson(const ReplayMetrics& m) {
  std::string out = "{\n";
  out += fmt::format("  \"policy\": \"{}\",\n", m.policy);
  out += fmt::format("  \"jobs\": {},\n", m.jobs);
  out += fmt::format("  \"jobs_completed\": {},\n", m.jobs_completed);
  out += fmt::format("  \"jobs_unschedulable\": {},\n", m.jobs_unschedulable);
  out += fmt::format("  \"jct_mean_s\": {:.3f},\n", m.jct_mean_s);
  out += fmt::format("  \"jct_p50_s\": {:.3f},\n", m.jct_p50_s);
  out += fmt::format("  \"jct_p99_s\": {:.3f},\n", m.jct_p99_s);
  out += fmt::format("  \"queue_delay_mean_s\": {:.3f},\n", m.queue_delay_mean_s);
  out += fmt::format("  \"queue_delay_p99_s\": {:.3f},\n", m.queue_delay_p99_s);
  out += fmt::format("  \"makespan_s\": {},\n", m.makespan_s);
  out += fmt::format("  \"utilization\": {:.6f},\n", m.utilization);
  out += fmt::format("  \"preemptions\": {},\n", m.preemptions);
  out +=
      fmt::format("  \"gpu_hours_lost_to_preemption\": {:.3f},\n", m.gpu_hours_lost_to_preemption);
  out += fmt::format("  \"jain_fairness\": {:.6f},\n", m.jain_fairness);
  out += fmt::format("  \"max_wait_s\": {},\n", m.max_wait_s);
  out += fmt::format("  \"cycles\": {},\n", m.cycles);
  out += "  \"queues\": [";
  for (size_t q = 0; q < m.queues.size(); ++q) {
    const QueueMetrics& qm = m.queues[q];
    out += fmt::format(
        "{}\n    {{\"queue\": \"{}\", \"jobs\": {}, \"demand_fraction\": {:.6f}, "
        "\"guaranteed_milli\": {}, \"received_gpu_seconds\": {:.1f}, "
        "\"entitled_gpu_seconds\": {:.1f}, \"share_ratio\": {:.6f}, \"jct_mean_s\": {:.3f}}}",
        q == 0 ? "" : ",", qm.queue, qm.jobs, qm.demand_fraction, qm.guaranteed_milli,
        qm.received_gpu_seconds, qm.entitled_gpu_seconds, qm.share_ratio, qm.jct_mean_s);
  }
  out += m.queues.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

}  // namespace gpupool::sim
