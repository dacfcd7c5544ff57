// GenerateMultiQueueScenario and GenerateMultiQueueJob: the small multi-queue preemption
// scenarios that preemption_cycles_test replays over many cycles.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "testing/generator.h"
#include "testing/generator_internal.h"

namespace gpupool::testing {

namespace {

using generator_internal::FirstFit;
using generator_internal::PickFrom;

// A guarantee drawn out of `remaining` milli-GPUs, in half GPUs; sometimes none.
int64_t DrawGuarantee(Rng& rng, int64_t remaining) {
  if (remaining < 500 || rng.Percent(30)) return 0;
  return 500 * rng.UniformInt(1, remaining / 500);
}

}  // namespace

Job GenerateMultiQueueJob(Rng& rng, const Snapshot& snapshot, std::string id) {
  // Leaf queues take most jobs; now and then an inner queue does (a job may name any queue).
  std::vector<std::string> leaves, all;
  for (const Queue& queue : snapshot.queues) {
    all.push_back(queue.id);
    const bool leaf = std::none_of(snapshot.queues.begin(), snapshot.queues.end(),
                                   [&queue](const Queue& q) { return q.parent == queue.id; });
    if (leaf) leaves.push_back(queue.id);
  }
  Job job;
  job.id = std::move(id);
  const std::vector<std::string>& queues = rng.Percent(90) ? leaves : all;
  job.queue = queues[rng.UniformInt(0, static_cast<int64_t>(queues.size()) - 1)];
  job.priority = static_cast<int32_t>(rng.UniformInt(0, 4));
  job.submit_time = snapshot.now;
  job.preemptible = rng.Percent(75);
  job.min_runtime_s = rng.Percent(30) ? 300 * rng.UniformInt(1, 4) : 0;
  if (rng.Percent(50)) job.runtime_estimate_s = rng.UniformInt(600, 86'400);
  if (rng.Percent(50)) {
    job.checkpointing.interval_s = rng.UniformInt(300, 3600);
    job.checkpointing.checkpoint_cost_s = rng.UniformInt(0, 120);
    job.checkpointing.restore_time_s = rng.UniformInt(0, 300);
  }
  std::vector<std::string> models;
  if (snapshot.gpu_models.size() > 1) {
    const int64_t draw = rng.UniformInt(0, 99);
    if (draw < 25) {
      models = {snapshot.gpu_models[rng.UniformInt(0, 1)].name};
    } else if (draw < 35) {
      models = {snapshot.gpu_models[0].name, snapshot.gpu_models[1].name};
      rng.Shuffle(models);
    }
  }
  static constexpr std::pair<int64_t, int64_t> kMilli[] = {
      {500, 20}, {1000, 45}, {2000, 25}, {4000, 10}};
  static constexpr std::pair<int32_t, int64_t> kReplicas[] = {{1, 55}, {2, 30}, {3, 15}};
  TaskGroup main;
  main.name = "main";
  main.replicas = PickFrom<int32_t>(rng, kReplicas);
  main.request.gpu_milli = PickFrom<int64_t>(rng, kMilli);
  main.request.cpu_milli = 1000 * rng.UniformInt(1, 4);
  main.request.memory_mib = 1024 * rng.UniformInt(1, 16);
  main.gpu_models = models;
  job.groups.push_back(std::move(main));
  if (rng.Percent(15)) {
    TaskGroup worker;
    worker.name = "worker";
    worker.replicas = static_cast<int32_t>(rng.UniformInt(1, 2));
    worker.request.gpu_milli = rng.Percent(50) ? 500 : 1000;
    worker.request.cpu_milli = 1000 * rng.UniformInt(1, 4);
    worker.request.memory_mib = 1024 * rng.UniformInt(1, 16);
    worker.gpu_models = models;
    job.groups.push_back(std::move(worker));
  }
  return job;
}

Snapshot GenerateMultiQueueScenario(uint64_t seed) {
  Rng rng(seed);
  Snapshot snapshot;
  snapshot.now = 1'000'000;

  // GPU models and nodes; every model has at least one node.
  const int model_count = rng.Percent(60) ? 1 : 2;
  static constexpr const char* kModels[] = {"A100-80GB", "H100-80GB"};
  for (int m = 0; m < model_count; ++m) snapshot.gpu_models.push_back({kModels[m], 81920, {}});
  const int node_count = static_cast<int>(rng.UniformInt(2, 6));
  std::vector<int64_t> capacity(model_count, 0);
  for (int n = 0; n < node_count; ++n) {
    Node node;
    node.id = fmt::format("n{}", n);
    const int m = n < model_count ? n : static_cast<int>(rng.UniformInt(0, model_count - 1));
    node.gpu_model = kModels[m];
    const int32_t gpus = static_cast<int32_t>(rng.UniformInt(2, 4));
    for (int32_t g = 0; g < gpus; ++g) node.gpus.push_back({g, 0, true});
    node.cpu_milli = gpus * 16'000;
    node.memory_mib = gpus * 131'072;
    capacity[m] += gpus * kMilliPerGpu;
    snapshot.nodes.push_back(std::move(node));
  }

  // The queue tree: flat, or children under one or two parents; at least two leaves.
  const int queue_count = static_cast<int>(rng.UniformInt(2, 5));
  const bool flat = rng.Percent(35);
  std::vector<int> roots;
  for (int q = 0; q < queue_count; ++q) {
    Queue queue;
    queue.id = fmt::format("q{}", q);
    if (q > 0 && !flat && (roots.size() == 2 || rng.Percent(70))) {
      queue.parent = snapshot.queues[roots[rng.UniformInt(0, roots.size() - 1)]].id;
    } else {
      roots.push_back(q);
    }
    queue.priority = static_cast<int32_t>(rng.UniformInt(0, 2));
    queue.can_borrow = rng.Percent(90);
    snapshot.queues.push_back(std::move(queue));
  }
  auto children_of = [&snapshot](const std::string& id) {
    std::vector<size_t> out;
    for (size_t c = 0; c < snapshot.queues.size(); ++c) {
      if (snapshot.queues[c].parent == id) out.push_back(c);
    }
    return out;
  };
  size_t leaf_count = 0;
  for (const Queue& queue : snapshot.queues) leaf_count += children_of(queue.id).empty() ? 1 : 0;
  if (leaf_count < 2) snapshot.queues.back().parent.clear();  // a second root, a leaf

  // Guarantees, per GPU model or as one "*" guarantee: the roots share at most the capacity, a
  // parent's children at most the parent's guarantee.
  const bool per_model = rng.Percent(50);
  std::vector<std::string> keys;
  std::vector<int64_t> key_capacity;
  if (per_model) {
    for (int m = 0; m < model_count; ++m) {
      keys.push_back(kModels[m]);
      key_capacity.push_back(capacity[m]);
    }
  } else {
    keys.push_back(kAnyGpuModel);
    int64_t total = 0;
    for (int64_t c : capacity) total += c;
    key_capacity.push_back(total);
  }
  std::vector<std::vector<int64_t>> guarantee(snapshot.queues.size(),
                                              std::vector<int64_t>(keys.size(), 0));
  for (size_t k = 0; k < keys.size(); ++k) {
    int64_t remaining = key_capacity[k] * rng.UniformInt(50, 100) / 100;
    std::vector<size_t> order;
    for (size_t q = 0; q < snapshot.queues.size(); ++q) {
      if (snapshot.queues[q].parent.empty()) order.push_back(q);
    }
    rng.Shuffle(order);
    for (size_t root : order) {
      guarantee[root][k] = DrawGuarantee(rng, remaining);
      remaining -= guarantee[root][k];
      int64_t left = guarantee[root][k];
      for (size_t child : children_of(snapshot.queues[root].id)) {
        guarantee[child][k] = DrawGuarantee(rng, left);
        left -= guarantee[child][k];
      }
    }
  }
  static constexpr std::pair<int64_t, int64_t> kWeights[] = {
      {0, 10}, {1, 40}, {2, 25}, {3, 15}, {4, 10}};
  for (size_t q = 0; q < snapshot.queues.size(); ++q) {
    Queue& queue = snapshot.queues[q];
    const int64_t weight = PickFrom<int64_t>(rng, kWeights);
    int64_t total = 0;
    for (size_t k = 0; k < keys.size(); ++k) {
      queue.quotas.push_back({keys[k], guarantee[q][k], std::nullopt, weight});
      total += guarantee[q][k];
    }
    if (rng.Percent(20)) {
      const int64_t limit = total + kMilliPerGpu * rng.UniformInt(1, 4);
      if (per_model) {
        queue.quotas.push_back({kAnyGpuModel, 0, limit, weight});
      } else {
        queue.quotas.front().limit_milli = limit;
      }
    }
  }

  // Jobs: about half of them running, placed first-fit.
  FirstFit first_fit(snapshot);
  const int job_count = static_cast<int>(rng.UniformInt(6, 16));
  for (int j = 0; j < job_count; ++j) {
    Job job = GenerateMultiQueueJob(rng, snapshot, fmt::format("j{:02d}", j));
    job.submit_time = snapshot.now - rng.UniformInt(0, 20'000);
    if (rng.Percent(50)) {
      std::vector<int32_t> counts;
      for (const TaskGroup& group : job.groups) counts.push_back(group.replicas);
      if (std::optional<std::vector<ReplicaPlacement>> placements = first_fit.Place(job, counts)) {
        job.state = JobState::kRunning;
        job.placements = std::move(*placements);
        job.start_time = snapshot.now - rng.UniformInt(0, 3000);
        job.submit_time = std::min(job.submit_time, *job.start_time);
        job.attained_service_s = snapshot.now - *job.start_time;
        if (job.checkpointing.interval_s > 0 && rng.Percent(70)) {
          job.checkpointing.last_checkpoint_time =
              *job.start_time + rng.UniformInt(0, snapshot.now - *job.start_time);
        }
      }
    }
    snapshot.jobs.push_back(std::move(job));
  }
  return snapshot;
}

}  // namespace gpupool::testing
