// The inflation protocol (gpupool/sim/inflation.h): the arrival sequence and the run over seeds,
// each seed's placements also told to its ledger (inflation_ledger.h).
#include "gpupool/sim/inflation.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gpupool/sim/placer.h"
#include "gpupool/sim/pod_events.h"
#include "gpupool/sim/rng.h"
#include "sim/inflation/inflation_ledger.h"
#include "sim/inflation/internal.h"

namespace gpupool::sim {

std::vector<int32_t> InflateWorkload(const Workload& workload, int64_t cluster_gpu_milli,
                                     double ratio, uint64_t seed) {
  Rng rng(seed);
  const int32_t n = static_cast<int32_t>(workload.pods.size());
  std::vector<int32_t> list(n);
  int64_t total = 0;
  for (int32_t i = 0; i < n; ++i) {
    list[i] = i;
    total += workload.pods[i].request.gpu_milli;
  }
  const double target = ratio * static_cast<double>(cluster_gpu_milli);
  if (n > 0 && static_cast<double>(total) < target) {
    while (true) {
      const int32_t pick = static_cast<int32_t>(rng.Uniform(static_cast<uint64_t>(n)));
      const int64_t gpu = workload.pods[pick].request.gpu_milli;
      if (static_cast<double>(total + gpu) > target) break;
      total += gpu;
      list.push_back(pick);
    }
  } else {
    while (!list.empty() && static_cast<double>(total) > target) {
      const size_t pick = rng.Uniform(list.size());
      total -= workload.pods[list[pick]].request.gpu_milli;
      list.erase(list.begin() + static_cast<std::ptrdiff_t>(pick));
    }
  }
  // Fisher-Yates, from the back.
  for (size_t i = list.size(); i > 1; --i) {
    const size_t j = rng.Uniform(i);
    std::swap(list[i - 1], list[j]);
  }
  return list;
}

namespace {

Stat MakeStat(const std::vector<double>& values) {
  Stat s;
  if (values.empty()) return s;
  double sum = 0;
  s.min = values[0];
  s.max = values[0];
  for (double v : values) {
    sum += v;
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
  }
  s.mean = sum / static_cast<double>(values.size());
  double sq = 0;
  for (double v : values) sq += (v - s.mean) * (v - s.mean);
  s.stddev = std::sqrt(sq / static_cast<double>(values.size()));
  return s;
}

}  // namespace

absl::StatusOr<PolicyResult> RunInflation(const Cluster& cluster, const Workload& workload,
                                          std::string_view policy_name,
                                          const InflationOptions& options) {
  const int64_t capacity = cluster.TotalGpuMilli();
  if (capacity <= 0) return absl::InvalidArgumentError("the cluster has no GPUs");
  if (!(options.ratio > 0 && options.ratio <= 100)) {
    return absl::InvalidArgumentError("inflation ratio must be in (0, 100]");
  }
  const int64_t measure_total = internal::MeasureTable(workload).TotalCount();
  const int32_t last_percent = static_cast<int32_t>(std::floor(options.ratio * 100 + 1e-9));
  PolicyResult result;
  result.policy = std::string(policy_name);
  int done = 0;
  for (uint64_t seed : options.seeds) {
    absl::StatusOr<SimPolicy> policy = MakeSimPolicy(policy_name, workload, seed);
    if (!policy.ok()) return policy.status();
    const std::vector<int32_t> arrivals =
        options.arrivals.has_value() ? *options.arrivals
                                     : InflateWorkload(workload, capacity, options.ratio, seed);
    std::unique_ptr<PodPlacer> placer =
        options.use_schedule ? MakeSchedulePlacer(cluster, workload, *policy)
                             : MakeIncrementalPlacer(cluster, workload, *policy, seed);
    SeedResult sr;
    sr.seed = seed;
    sr.pods = static_cast<int64_t>(arrivals.size());
    int64_t arrived = 0;
    int32_t next_percent = 0;
    auto point = [&](int32_t percent) {
      CurvePoint p;
      p.arrived_percent = percent;
      p.arrived_gpu_milli = arrived;
      p.used_gpu_milli = capacity - placer->IdleGpuMilli();
      p.alloc_ratio = static_cast<double>(p.used_gpu_milli) / static_cast<double>(capacity);
      const int64_t idle = placer->IdleGpuMilli();
      p.frag_ratio = idle > 0 && measure_total > 0
                         ? static_cast<double>(placer->WeightedFragmentation()) /
                               (static_cast<double>(measure_total) * static_cast<double>(idle))
                         : 0.0;
      sr.curve.push_back(p);
    };
    // Before a pod whose request would take the arrived load past the next percent, record the
    // points it skips over: the state after the last arrival at or below each of them.
    auto record_up_to = [&](int64_t next_arrived) {
      while (next_percent <= last_percent &&
             next_arrived * 100 > int64_t{next_percent} * capacity) {
        point(next_percent);
        ++next_percent;
      }
    };
    std::vector<int64_t> times(arrivals.size());
    for (size_t i = 0; i < times.size(); ++i) times[i] = static_cast<int64_t>(i);
    absl::StatusOr<internal::InflationLedgerRecorder> ledger =
        internal::InflationLedgerRecorder::Create(cluster, workload);
    if (!ledger.ok()) return ledger.status();
    absl::Status ledger_status;
    PodEventObserver observer;
    int32_t index = 0;
    observer.on_arrival = [&](const PodEvent& event, const PodPlacement& p) {
      if (ledger_status.ok()) ledger_status = ledger->Placed(event.time, arrivals[event.pod], p);
      if (p.node >= 0) {
        ++sr.placed;
      } else {
        ++sr.failed;
      }
      if (options.keep_placements) sr.placements.push_back(p.node);
      ++index;
      if (index < static_cast<int32_t>(arrivals.size())) {
        record_up_to(arrived + workload.pods[arrivals[index]].request.gpu_milli);
        arrived += workload.pods[arrivals[index]].request.gpu_milli;
      }
    };
    if (!arrivals.empty()) {
      record_up_to(workload.pods[arrivals[0]].request.gpu_milli);
      arrived = workload.pods[arrivals[0]].request.gpu_milli;
    }
    // Workload pods of the protocol never depart.
    Workload no_departures;
    const Workload* replay_workload = &workload;
    bool any_duration = false;
    for (const SimPod& p : workload.pods) any_duration |= p.duration_s.has_value();
    if (any_duration) {
      no_departures = workload;
      for (SimPod& p : no_departures.pods) p.duration_s.reset();
      replay_workload = &no_departures;
    }
    absl::StatusOr<std::vector<PodPlacement>> placements =
        RunPodEvents(*replay_workload, arrivals, times, *placer, observer);
    if (!placements.ok()) return placements.status();
    if (!ledger_status.ok()) return ledger_status;
    absl::StatusOr<InflationLedger> seed_ledger =
        ledger->Finish(static_cast<int64_t>(arrivals.size()));
    if (!seed_ledger.ok()) return seed_ledger.status();
    sr.ledger = *std::move(seed_ledger);
    internal::AddInflationLedger(result.ledger, sr.ledger);
    while (next_percent <= last_percent) {
      point(next_percent);
      ++next_percent;
    }
    auto at = [&](int32_t percent) {
      const int32_t i = std::min<int32_t>(percent, static_cast<int32_t>(sr.curve.size()) - 1);
      return sr.curve[i];
    };
    sr.alloc_ratio_at_100 = at(100).alloc_ratio;
    sr.alloc_ratio_at_130 = at(130).alloc_ratio;
    sr.unallocated_gpus_at_130 =
        (1.0 - sr.alloc_ratio_at_130) * static_cast<double>(capacity) / kMilliPerGpu;
    sr.frag_ratio_at_90 = at(90).frag_ratio;
    result.per_seed.push_back(std::move(sr));
    ++done;
    if (options.progress) options.progress(done, static_cast<int>(options.seeds.size()));
  }
  std::vector<double> a100, a130, un, fr;
  for (const SeedResult& s : result.per_seed) {
    a100.push_back(s.alloc_ratio_at_100);
    a130.push_back(s.alloc_ratio_at_130);
    un.push_back(s.unallocated_gpus_at_130);
    fr.push_back(s.frag_ratio_at_90);
  }
  result.alloc_ratio_at_100 = MakeStat(a100);
  result.alloc_ratio_at_130 = MakeStat(a130);
  result.unallocated_gpus_at_130 = MakeStat(un);
  result.frag_ratio_at_90 = MakeStat(fr);
  return result;
}

}  // namespace gpupool::sim
