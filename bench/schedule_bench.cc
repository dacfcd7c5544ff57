// EVALUATION.md E3: the time of one full Schedule() call on the generated scenarios.
//
//   build/bench/bench/schedule_bench            # everything below
//   build/bench/bench/schedule_bench --no_s2    # without S2 (2.5 s per call at full size)
//   build/bench/bench/schedule_bench --benchmark_filter='S1/scale%:100/'
//   build/bench/bench/schedule_bench --placement=best-fit --queue_order=none  # older defaults
//
// S1 at scale 0.1/0.25/0.5/1.0; S1 with only its jobs scaled (5,000 nodes, 5,000 to 25,000
// jobs) and with only its nodes scaled (5,000 jobs, 1,250 to 5,000 nodes); S2 at 0.1 and 1.0.
// Each snapshot is generated once, outside the timed loop; only Schedule() is timed (including
// the destruction of its result, which a host pays too). S3 (preemption storm) and S3reclaim
// (the same with reclaim_across_queues) at 0.1/0.25/1.0 run with S2, and S2scale (S2 at 0.1 with
// scale advice over one template per GPU model) too. Each benchmark runs 5
// repetitions and reports their median (and mean and spread). items_per_second is pending jobs per
// second. ValidateSnapshot on the same snapshot is measured alongside as an in-process baseline:
// the ratio Schedule / Validate is less sensitive to the noise of a shared machine than either
// time.
#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "benchmark/benchmark.h"
#include "gpupool/schedule.h"
#include "testing/generator.h"

namespace gpupool {
namespace {

constexpr uint64_t kSeed = 42;

// The policy every benchmark starts from: Policy{}, or what --placement / --queue_order set.
Policy& BasePolicy() {
  static Policy* policy = new Policy();
  return *policy;
}

// The scenarios measured. kS1Jobs and kS1Nodes vary one dimension of S1 at a time, to check the
// E3 goal "about linear in pending jobs, at most logarithmic in nodes".
enum Scenario : int {
  kS1 = 1,       // S1 at the given scale (nodes and jobs together)
  kS2 = 2,       // S2 at the given scale
  kS1Jobs = 3,   // S1's 5,000 nodes, the given share of its 50,000 jobs
  kS1Nodes = 4,  // S1's 5,000 jobs (scale 0.1), the given share of its 5,000 nodes
  kS3 = 5,       // S3 storm: S2's pool full of preemptible priority-0 work, 2,000 priority-10 gangs
  kS3Reclaim = 6,      // S3 with preemption.reclaim_across_queues on (same snapshot)
  kS2Backfill = 7,     // S2 with policy.backfill on (same snapshot)
  kS2Consolidate = 8,  // S2 with consolidation on, every running job checkpointing
  kS2Scale = 9,        // S2 with scale advice: one template per GPU model (same snapshot)
  kS2Unlent = 10,      // S2 with every tenth queue that has a guarantee not lending it
};

bool IsS3(int scenario) { return scenario == kS3 || scenario == kS3Reclaim; }

// Snapshots by (scenario, scale in percent), generated on first use and kept for the process.
const Snapshot& CachedScenario(int scenario, int64_t scale_percent) {
  static auto* cache = new std::map<std::pair<int, int64_t>, Snapshot>();
  if (scenario == kS3Reclaim) scenario = kS3;  // the same snapshot, another policy
  if (scenario == kS2Backfill) scenario = kS2;
  if (scenario == kS2Consolidate) {
    // S2, with every running job checkpointing (every 30 min, last at a pseudo-random time in the
    // last interval, restore 60 s) and expected to run 10 h in all, so that its jobs may move.
    auto [it, inserted] = cache->try_emplace({scenario, scale_percent});
    if (inserted) {
      it->second = CachedScenario(kS2, scale_percent);
      int64_t k = 0;
      for (Job& job : it->second.jobs) {
        if (job.state != JobState::kRunning) continue;
        job.checkpointing.interval_s = 1800;
        job.checkpointing.last_checkpoint_time =
            std::max(job.start_time.value_or(0), it->second.now - (k++ * 7919) % 1800);
        job.checkpointing.restore_time_s = 60;
        if (!job.runtime_estimate_s) job.runtime_estimate_s = 36000;
      }
    }
    return it->second;
  }
  if (scenario == kS2Unlent) {
    // S2, with every tenth queue holding a guarantee (in queue order) not lending it: the holds
    // bind every start of the other queues, and the racks S2 reserves for one org make them
    // count by node (docs/fair-share.md, "Which nodes count").
    auto [it, inserted] = cache->try_emplace({scenario, scale_percent});
    if (inserted) {
      it->second = CachedScenario(kS2, scale_percent);
      int64_t k = 0;
      for (Queue& queue : it->second.queues) {
        const bool guaranteed = std::any_of(queue.quotas.begin(), queue.quotas.end(),
                                            [](const Quota& q) { return q.guaranteed_milli > 0; });
        if (guaranteed && k++ % 10 == 0) queue.can_lend = false;
      }
    }
    return it->second;
  }
  if (scenario == kS2Scale) scenario = kS2;
  auto [it, inserted] = cache->try_emplace({scenario, scale_percent});
  if (inserted) {
    const double scale = static_cast<double>(scale_percent) / 100.0;
    testing::ScenarioOptions options;
    switch (scenario) {
      case kS1:
        options = testing::ScenarioS1Options(kSeed, scale);
        break;
      case kS2:
        options = testing::ScenarioS2Options(kSeed, scale);
        break;
      case kS3:
        // E3 S3: the S2 pool, every GPU busy with preemptible low-priority work, and 2,000
        // high-priority multi-node gangs (scaled) arriving at once.
        options = testing::ScenarioS2Options(kSeed, scale);
        options.busy_percent = 100;
        options.pending_jobs = static_cast<int64_t>(2000 * scale);
        options.gang_percent = 100;
        options.faults = false;
        break;
      case kS1Jobs:
        options = testing::ScenarioS1Options(kSeed, 1.0);
        options.pending_jobs = testing::ScenarioS1Options(kSeed, scale).pending_jobs;
        break;
      default:
        options = testing::ScenarioS1Options(kSeed, 0.1);
        options.nodes = testing::ScenarioS1Options(kSeed, scale).nodes;
        break;
    }
    it->second = testing::GenerateScenario(options);
    if (scenario == kS3) {
      for (Job& job : it->second.jobs) {
        const bool running = job.state == JobState::kRunning;
        job.priority = running ? 0 : 10;
        if (running) {
          job.preemptible = true;
          job.min_runtime_s = 0;
        }
      }
    }
  }
  return it->second;
}

// Peak resident memory of the process so far, in MiB (Linux reports ru_maxrss in KiB). It
// includes the cached snapshots, so it only bounds the memory of one Schedule() call.
double PeakRssMib() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

void SetShapeCounters(benchmark::State& state, const Snapshot& snapshot) {
  int64_t pending = 0;
  for (const Job& job : snapshot.jobs) pending += job.state == JobState::kPending;
  state.counters["nodes"] = static_cast<double>(snapshot.nodes.size());
  state.counters["pending"] = static_cast<double>(pending);
  state.counters["running"] = static_cast<double>(snapshot.jobs.size() - pending);
  state.SetItemsProcessed(state.iterations() * pending);
}

void BM_Schedule(benchmark::State& state, int scenario) {
  const Snapshot& snapshot = CachedScenario(scenario, state.range(0));
  Policy policy = BasePolicy();
  // S3: within each queue, by priority; S3reclaim: also across queues, from queues above their
  // entitlement.
  if (IsS3(scenario)) policy.preemption.enabled = true;
  if (scenario == kS3Reclaim) policy.preemption.reclaim_across_queues = true;
  // S2backfill: EASY backfill (one reservation, no margin) over S2's runtime estimates.
  if (scenario == kS2Backfill) policy.backfill.enabled = true;
  if (scenario == kS2Consolidate) policy.consolidation.enabled = true;
  // S2scale: a template per GPU model, the first ready node of that model (in id order) as it
  // is, at most 16 of each, priced 1 to 3 units an hour by model.
  if (scenario == kS2Scale) {
    policy.scale.emplace();
    std::map<std::string, const Node*> first;
    for (const Node& node : snapshot.nodes) {
      if (node.gpu_model.empty() || node.state != NodeState::kReady) continue;
      auto [it, inserted] = first.try_emplace(node.gpu_model, &node);
      if (!inserted && node.id < it->second->id) it->second = &node;
    }
    int64_t price = 1'000'000;
    for (const auto& [model, node] : first) {
      NodeTemplate t{model + "-node", *node, 16, price};
      t.node.id.clear();
      for (Gpu& gpu : t.node.gpus) gpu.healthy = true;
      policy.scale->templates.push_back(std::move(t));
      price += 1'000'000;
    }
  }
  Counters counters;
  ScaleAdvice advice;
  for (auto _ : state) {
    absl::StatusOr<Decisions> decisions = Schedule(snapshot, policy);
    if (!decisions.ok()) {
      state.SkipWithError(std::string(decisions.status().message()).c_str());
      return;
    }
    counters = decisions->counters;
    if (decisions->scale_advice) advice = *decisions->scale_advice;
    benchmark::DoNotOptimize(decisions);
  }
  SetShapeCounters(state, snapshot);
  state.counters["starts"] = static_cast<double>(counters.jobs_started);
  state.counters["candidates"] = static_cast<double>(counters.candidates_evaluated);
  state.counters["rollbacks"] = static_cast<double>(counters.transactions_rolled_back);
  state.counters["equiv_hits"] = static_cast<double>(counters.equivalence_hits);
  if (IsS3(scenario)) {
    state.counters["preemptions"] = static_cast<double>(counters.preemptions);
    state.counters["plans"] = static_cast<double>(counters.preemption_plans);
  }
  if (scenario == kS2Consolidate) {
    state.counters["migrations"] = static_cast<double>(counters.migrations);
    state.counters["plans"] = static_cast<double>(counters.consolidation_plans);
  }
  if (scenario == kS2Scale) {
    int64_t added = 0;
    for (const ScaleAdd& add : advice.add) added += add.count;
    state.counters["simulations"] = static_cast<double>(advice.simulations);
    state.counters["added"] = static_cast<double>(added);
    state.counters["released"] = static_cast<double>(advice.release.size());
  }
  state.counters["peak_rss_mib"] = PeakRssMib();
}

void BM_Validate(benchmark::State& state, int scenario) {
  const Snapshot& snapshot = CachedScenario(scenario, state.range(0));
  for (auto _ : state) {
    absl::Status status = ValidateSnapshot(snapshot);
    if (!status.ok()) {
      state.SkipWithError(std::string(status.message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(status);
  }
  SetShapeCounters(state, snapshot);
}

void Register(const char* name, void (*fn)(benchmark::State&, int), int scenario,
              const std::vector<int64_t>& scales) {
  benchmark::internal::Benchmark* b = benchmark::RegisterBenchmark(name, fn, scenario);
  for (int64_t scale : scales) b->Arg(scale);
  b->ArgName("scale%")->Unit(benchmark::kMillisecond)->Repetitions(5)->ReportAggregatesOnly(true);
}

}  // namespace
}  // namespace gpupool

int main(int argc, char** argv) {
  // Our own flag, removed before Google Benchmark sees the rest.
  bool with_s2 = true;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--no_s2") {
      with_s2 = false;
    } else if (arg == "--placement=best-fit") {
      gpupool::BasePolicy().placement = gpupool::PlacementStrategy::kBestFit;
    } else if (arg == "--placement=expected-waste") {
      gpupool::BasePolicy().placement = gpupool::PlacementStrategy::kExpectedWaste;
    } else if (arg == "--queue_order=none") {
      gpupool::BasePolicy().queue_order = gpupool::QueueOrder::kNone;
    } else if (arg == "--queue_order=fair-share") {
      gpupool::BasePolicy().queue_order = gpupool::QueueOrder::kFairShare;
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  using gpupool::BM_Schedule;
  using gpupool::BM_Validate;
  gpupool::Register("Schedule/S1", BM_Schedule, gpupool::kS1, {10, 25, 50, 100});
  gpupool::Register("Validate/S1", BM_Validate, gpupool::kS1, {10, 100});
  gpupool::Register("Schedule/S1_jobs_only", BM_Schedule, gpupool::kS1Jobs, {10, 25, 50});
  gpupool::Register("Schedule/S1_nodes_only", BM_Schedule, gpupool::kS1Nodes, {25, 50, 100});
  if (with_s2) {
    gpupool::Register("Schedule/S2", BM_Schedule, gpupool::kS2, {10, 100});
    gpupool::Register("Schedule/S2backfill", BM_Schedule, gpupool::kS2Backfill, {10, 100});
    gpupool::Register("Schedule/S2consolidate", BM_Schedule, gpupool::kS2Consolidate, {10});
    gpupool::Register("Schedule/S3", BM_Schedule, gpupool::kS3, {10, 25, 100});
    gpupool::Register("Schedule/S3reclaim", BM_Schedule, gpupool::kS3Reclaim, {10, 25, 100});
    gpupool::Register("Validate/S2", BM_Validate, gpupool::kS2, {10, 100});
    gpupool::Register("Schedule/S2scale", BM_Schedule, gpupool::kS2Scale, {10});
    gpupool::Register("Schedule/S2unlent", BM_Schedule, gpupool::kS2Unlent, {10, 100});
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
