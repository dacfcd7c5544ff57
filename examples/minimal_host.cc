// A minimal host: builds a snapshot in code, calls Schedule(), prints the decisions.
//
// Two DGX-style nodes (8 GPUs, two NVLink islands of 4) in one rack, one team queue, and three
// pending jobs: a 4-GPU job that must sit in one island, a quarter-GPU notebook, and a 2 x 8-GPU
// gang that must stay in one rack (it cannot start: the rack has 16 GPUs but the 4-GPU job
// takes some of them).
#include <cstdio>

#include "gpupool/gpupool.h"

namespace {

gpupool::Node MakeDgx(const char* id) {
  gpupool::Node node;
  node.id = id;
  node.gpu_model = "H100-80GB";
  node.cpu_milli = 128'000;
  node.memory_mib = 1'024'000;
  node.path = {{"rack", "r1"}};
  for (int32_t i = 0; i < 8; ++i) node.gpus.push_back({.index = i, .island = i / 4});
  return node;
}

gpupool::Job MakeJob(const char* id, int64_t gpu_milli, int32_t replicas, int64_t submit_time) {
  gpupool::Job job;
  job.id = id;
  job.queue = "team-a";
  job.submit_time = submit_time;
  gpupool::TaskGroup group;
  group.replicas = replicas;
  group.request = {.gpu_milli = gpu_milli, .cpu_milli = 8'000, .memory_mib = 64'000};
  job.groups.push_back(group);
  return job;
}

}  // namespace

int main() {
  gpupool::Snapshot snapshot;
  snapshot.now = 1'000;
  snapshot.topology.levels = {"rack"};
  snapshot.gpu_models.push_back({.name = "H100-80GB", .memory_mib = 81'920});
  snapshot.nodes = {MakeDgx("dgx-1"), MakeDgx("dgx-2")};
  snapshot.queues.push_back({.id = "team-a"});

  gpupool::Job training = MakeJob("train-4gpu", 4'000, 1, 10);
  training.groups[0].topology.replica_scope = gpupool::ReplicaScope::kIsland;
  gpupool::Job notebook = MakeJob("notebook", 250, 1, 20);
  gpupool::Job gang = MakeJob("gang-2x8", 8'000, 2, 30);
  gang.groups[0].topology.gang_level = "rack";
  snapshot.jobs = {training, notebook, gang};

  absl::StatusOr<gpupool::Decisions> decisions = gpupool::Schedule(snapshot, gpupool::Policy{});
  if (!decisions.ok()) {
    std::fprintf(stderr, "schedule failed: %s\n", decisions.status().ToString().c_str());
    return 1;
  }
  for (const gpupool::StartDecision& start : decisions->starts) {
    for (const gpupool::ReplicaPlacement& p : start.placements) {
      std::printf("start   %-12s %s[%d] on %s GPUs", start.job.c_str(), p.group.c_str(), p.replica,
                  p.node.c_str());
      for (int32_t gpu : p.gpus) std::printf(" %d", gpu);
      std::printf(" (%lld milli each)\n", static_cast<long long>(p.gpu_milli));
    }
  }
  for (const gpupool::PendingDecision& pending : decisions->pending) {
    std::printf("pending %-12s %s: %s\n", pending.job.c_str(),
                gpupool::PendingReasonName(pending.reason), pending.detail.c_str());
  }
  std::printf("fingerprint %s, %lld candidates evaluated\n", decisions->input_fingerprint.c_str(),
              static_cast<long long>(decisions->counters.candidates_evaluated));
  return 0;
}
