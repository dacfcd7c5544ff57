// A simulator experiment: scheduling policies compared on a job trace, with the library API.
//
//   replay_experiment [TRACE.csv]     (default: small_philly.csv, which
//                                      examples/traces/make_small_philly.py writes)
//
// Replays a trace in the Philly CSV format (docs/replay.md) through gpupool::Schedule() on a
// 32-GPU pool (4 nodes of 8 GPUs, 2 nodes per rack), once per named policy of the replay
// (fifo, las, las-free, default) and once for a variant a host defines in code: the default
// without preemption. Prints one row of metrics per policy. Deterministic: same trace, same table.
#include <cstdio>
#include <string>
#include <vector>

#include "gpupool/sim/philly.h"
#include "gpupool/sim/replay.h"
#include "gpupool/sim/trace_job.h"

namespace {

void PrintRow(const gpupool::sim::ReplayMetrics& m) {
  std::printf("%-22s %5lld %9.0f %9.0f %9.0f %7lld %8.1f %6.3f %6.3f\n", m.policy.c_str(),
              static_cast<long long>(m.jobs_completed), m.jct_mean_s, m.jct_p99_s,
              m.queue_delay_mean_s, static_cast<long long>(m.preemptions),
              m.gpu_hours_lost_to_preemption, m.utilization, m.jain_fairness);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "small_philly.csv";
  absl::StatusOr<std::vector<gpupool::sim::TraceJob>> jobs = gpupool::sim::ReadPhillyCsv(path);
  if (!jobs.ok()) {
    std::fprintf(stderr, "%s\n", std::string(jobs.status().message()).c_str());
    return 1;
  }
  const gpupool::sim::ReplayPool pool{.nodes = 4, .gpus_per_node = 8, .nodes_per_rack = 2};

  // The named policies, then the host's variant.
  std::vector<gpupool::sim::ReplayOptions> runs;
  for (const std::string& name : gpupool::sim::ReplayPolicyNames()) {
    absl::StatusOr<gpupool::sim::ReplayOptions> options = gpupool::sim::MakeReplayOptions(name);
    if (!options.ok()) return 1;
    runs.push_back(*options);
  }
  gpupool::sim::ReplayOptions variant = *gpupool::sim::MakeReplayOptions("default");
  variant.policy.name = "default-no-preemption";
  variant.policy.preemption.enabled = false;
  // No victims, so no cycles at their checkpoints, no job to keep from eviction and no victim to
  // limit (RunReplay refuses them without preemption).
  variant.wake_up_at_checkpoints_s = 0;
  variant.starved_min_run_s = 0;
  variant.starved_min_run_within_share = false;
  variant.max_victim_lost_within_share_s.reset();
  runs.push_back(variant);

  std::printf("%zu jobs of %s on %lld GPUs\n", jobs->size(), path.c_str(),
              static_cast<long long>(pool.TotalGpus()));
  std::printf("%-22s %5s %9s %9s %9s %7s %8s %6s %6s\n", "policy", "done", "jct_mean", "jct_p99",
              "wait_mean", "preempt", "lost_gpu_h", "util", "jain");
  for (gpupool::sim::ReplayOptions& options : runs) {
    options.pool = pool;
    absl::StatusOr<gpupool::sim::ReplayResult> result = gpupool::sim::RunReplay(options, *jobs);
    if (!result.ok()) {
      std::fprintf(stderr, "%s\n", result.status().ToString().c_str());
      return 1;
    }
    if (result->metrics.jobs_completed + result->metrics.jobs_unschedulable !=
        result->metrics.jobs) {
      std::fprintf(stderr, "%s: not every job completed\n", result->metrics.policy.c_str());
      return 1;
    }
    PrintRow(result->metrics);
  }
  return 0;
}
