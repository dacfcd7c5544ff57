// Helpers shared by the seeded property tests over GenerateRandomSnapshot() (property_test.cc,
// settling_property_test.cc, pool_operations_property_test.cc): the number of seeds, the policy
// of a seed, the snapshot a host leaves after carrying out the preemptions, and lookups over one
// snapshot.
#ifndef GPUPOOL_TESTS_CORE_PROPERTY_HELPERS_H_
#define GPUPOOL_TESTS_CORE_PROPERTY_HELPERS_H_

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpupool/schedule.h"
#include "testing/seeds.h"

namespace gpupool::property_testing {

// 1,000 seeds in the regular suite; the long run sets GPUPOOL_PROPERTY_SEEDS (testing/seeds.h).
inline const uint64_t kSeeds = ::gpupool::testing::PropertySeeds(1000);
inline constexpr int kReportedSeeds = 5;

inline Policy PolicyForSeed(uint64_t seed) {
  Policy policy;
  switch (seed % 3) {
    case 0:  // half of these seeds best-fit, half expected-waste
      policy.placement =
          (seed / 3) % 2 == 0 ? PlacementStrategy::kBestFit : PlacementStrategy::kExpectedWaste;
      break;
    case 1:
      policy.placement = PlacementStrategy::kFirstFit;
      break;
    default:
      policy.placement = PlacementStrategy::kSpread;
      break;
  }
  // Every other seed plans preemption, with a checkpoint grace on some; on a third of those
  // the first one or two blocked jobs drain their reservations (drain_blocked_jobs), and on a
  // quarter (overlapping) jobs of 2 GPUs or more take back from smaller, later jobs of their
  // priority (take_back_from_gpus); on a ninth (overlapping) a victim expected to need no more
  // work than the job evicting it stays (victim_remaining_percent), whatever the priority gap
  // or up to a gap of 5.
  if (seed % 2 == 1) {
    policy.preemption.enabled = true;
    policy.preemption.checkpoint_grace_s = static_cast<int64_t>(seed % 4) * 30;
    if ((seed / 2) % 3 == 0) policy.preemption.drain_blocked_jobs = 1 + (seed / 6) % 2;
    if ((seed / 2) % 4 == 1) {
      policy.preemption.take_back_from_gpus = 2;
      policy.preemption.take_back_after_s = (seed / 8) % 2 == 0 ? 0 : 600;
    }
    if ((seed / 2) % 9 == 4) {
      policy.preemption.victim_remaining_percent = 100;
      policy.preemption.victim_remaining_max_gap = (seed / 18) % 2 == 0 ? 0 : 5;
    }
  }
  return policy;
}

// The snapshot as a host leaves it after carrying out the preemptions: each victim is pending
// again, without placements, and pending since now, as ApplyDecisions() leaves it (the
// starvation guard counts its wait from there).
inline Snapshot WithVictimsEvicted(const Snapshot& snapshot, const Decisions& decisions) {
  Snapshot out = snapshot;
  for (const PreemptDecision& p : decisions.preemptions) {
    for (Job& job : out.jobs) {
      if (job.id != p.job) continue;
      job.state = JobState::kPending;
      job.placements.clear();
      job.start_time.reset();
      job.pending_since = std::max(snapshot.now, job.submit_time);
    }
  }
  // A shrunk elastic group keeps its to_replicas replicas with the lowest indices.
  for (const ResizeDecision& r : decisions.resizes) {
    for (Job& job : out.jobs) {
      if (job.id != r.job) continue;
      std::vector<int32_t> replicas;
      for (const ReplicaPlacement& p : job.placements) {
        if (p.group == r.group) replicas.push_back(p.replica);
      }
      std::sort(replicas.begin(), replicas.end());
      const int32_t last_kept = r.to_replicas > 0 ? replicas[r.to_replicas - 1] : -1;
      std::erase_if(job.placements, [&](const ReplicaPlacement& p) {
        return p.group == r.group && p.replica > last_kept;
      });
    }
  }
  return out;
}

// Lookups over one snapshot.
class World {
 public:
  explicit World(const Snapshot& s) : snapshot_(s) {
    for (const GpuModel& m : s.gpu_models) models_[m.name] = &m;
    for (const Node& n : s.nodes) nodes_[n.id] = &n;
    for (const Queue& q : s.queues) queues_[q.id] = &q;
    for (const Job& j : s.jobs) jobs_[j.id] = &j;
  }

  const Node* node(const std::string& id) const { return Find(nodes_, id); }
  const Job* job(const std::string& id) const { return Find(jobs_, id); }
  const Queue* queue(const std::string& id) const { return Find(queues_, id); }
  const GpuModel* model(const std::string& name) const { return Find(models_, name); }

  // The queue and its ancestors, nearest first.
  std::vector<const Queue*> Chain(const std::string& queue_id) const {
    std::vector<const Queue*> chain;
    for (const Queue* q = queue(queue_id); q != nullptr && chain.size() <= queues_.size();
         q = q->parent.empty() ? nullptr : queue(q->parent)) {
      chain.push_back(q);
    }
    return chain;
  }

  // The nearest queue of the chain that sets an isolation mode, or nullptr.
  const Queue* TenantRoot(const std::string& queue_id) const {
    for (const Queue* q : Chain(queue_id)) {
      if (q->isolation != Isolation::kNone) return q;
    }
    return nullptr;
  }

  bool InSubtree(const std::string& queue_id, const std::string& root) const {
    for (const Queue* q : Chain(queue_id)) {
      if (q->id == root) return true;
    }
    return false;
  }

  const TaskGroup* group(const Job& job, const std::string& name) const {
    for (const TaskGroup& g : job.groups) {
      if (g.name == name) return &g;
    }
    return nullptr;
  }

  const std::string* PathValue(const Node& node, const std::string& level) const {
    for (const TopologyLabel& l : node.path) {
      if (l.level == level) return &l.value;
    }
    return nullptr;
  }

  // The domain key of a node at `level`: its values at that level and every level above (a
  // level above that the node omits counts as an empty value), or nullopt when the node omits
  // `level` itself and so belongs to no domain there.
  std::optional<std::string> DomainKey(const Node& node, const std::string& level) const {
    if (level == "node") return node.id;
    std::string key;
    for (const std::string& l : snapshot_.topology.levels) {
      const std::string* v = PathValue(node, l);
      if (l == level) {
        if (v == nullptr) return std::nullopt;
        return key + *v;
      }
      key += (v == nullptr ? std::string() : *v) + "/";
    }
    return std::nullopt;
  }

 private:
  template <typename T>
  static const T* Find(const std::map<std::string, const T*>& map, const std::string& key) {
    auto it = map.find(key);
    return it == map.end() ? nullptr : it->second;
  }

  const Snapshot& snapshot_;
  std::map<std::string, const GpuModel*> models_;
  std::map<std::string, const Node*> nodes_;
  std::map<std::string, const Queue*> queues_;
  std::map<std::string, const Job*> jobs_;
};

}  // namespace gpupool::property_testing

#endif  // GPUPOOL_TESTS_CORE_PROPERTY_HELPERS_H_
