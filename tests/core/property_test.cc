// Seeded property test of the invariants of EVALUATION.md E4, over 1,000 random snapshots from
// GenerateRandomSnapshot(seed), each scheduled with one of the built-in strategies:
//   - Schedule() succeeds, and twice gives the same decisions;
//   - every pending job of the input gets exactly one outcome, and so does every running job a
//     rule stops (a Preempt without for_job); no other job gets any but a restart elsewhere;
//   - Start placements are well formed (known group, replica indices 0..n-1, GpuCount() GPUs of
//     the node, gpu_milli = MilliPerGpu()), and each started group runs between min_replicas and
//     replicas (gangs all or nothing);
//   - nothing lands on a node that is not ready, a GPU that is unhealthy, a node reserved to other
//     queues, a model the job does not accept, a GPU with too little memory, or across models;
//   - replica island scope and gang levels, when required, hold;
//   - isolation: a started job shares no GPU (exclusive-gpu) or node (exclusive-node) with
//     another tenant;
//   - no GPU, CPU or memory over-committed once the starts are applied (and the result validates);
//   - no queue pushed past a limit by new starts;
//   - shuffling every list of the input gives byte-identical decisions;
//   - applying the starts and scheduling again starts nothing (fixed point).
// Failures name the seed; only the first few failing seeds are reported in full.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "cycle.h"
#include "fmt/format.h"
#include "gpupool/apply.h"
#include "gpupool/explain.h"
#include "gpupool/schedule.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/generator.h"
#include "testing/seeds.h"

namespace gpupool {
namespace {

using ::gpupool::testing::AddRandomOperations;
using ::gpupool::testing::DecisionsToText;
using ::gpupool::testing::GenerateRandomSnapshot;
using ::gpupool::testing::MutateSnapshot;
using ::gpupool::testing::ShuffleSnapshot;

// 1,000 seeds in the regular suite; the long run sets GPUPOOL_PROPERTY_SEEDS (testing/seeds.h).
const uint64_t kSeeds = ::gpupool::testing::PropertySeeds(1000);
constexpr int kReportedSeeds = 5;

// Does job `job`'s reservation in `d` include a node `victim` runs on?
bool ReservesANodeOf(const Decisions& d, const std::string& job, const Job& victim) {
  for (const ReserveDecision& r : d.reservations) {
    if (r.job != job) continue;
    for (const ReplicaPlacement& p : victim.placements) {
      if (std::find(r.nodes.begin(), r.nodes.end(), p.node) != r.nodes.end()) return true;
    }
  }
  return false;
}

// preemption.take_back_from_gpus: `job` outranks `victim` of its priority when it needs at least
// that many GPUs (its gang at its minimum size), more than the victim holds, was submitted
// before it and has been pending take_back_after_s.
bool TakesBack(const Policy& policy, int64_t now, const Job& job, const Job& victim) {
  const int64_t from = policy.preemption.take_back_from_gpus;
  if (from <= 0 || victim.priority != job.priority || victim.submit_time <= job.submit_time) {
    return false;
  }
  if (now - job.pending_since.value_or(job.submit_time) < policy.preemption.take_back_after_s) {
    return false;
  }
  int64_t needs = 0, holds = 0;
  for (const TaskGroup& g : job.groups) needs += g.MinReplicas() * g.request.gpu_milli;
  for (const ReplicaPlacement& p : victim.placements) {
    for (const TaskGroup& g : victim.groups) {
      if (g.name == p.group) holds += g.request.gpu_milli;
    }
  }
  return needs >= from * kMilliPerGpu && holds < needs;
}

Policy PolicyForSeed(uint64_t seed) {
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
  // priority (take_back_from_gpus).
  if (seed % 2 == 1) {
    policy.preemption.enabled = true;
    policy.preemption.checkpoint_grace_s = static_cast<int64_t>(seed % 4) * 30;
    if ((seed / 2) % 3 == 0) policy.preemption.drain_blocked_jobs = 1 + (seed / 6) % 2;
    if ((seed / 2) % 4 == 1) {
      policy.preemption.take_back_from_gpus = 2;
      policy.preemption.take_back_after_s = (seed / 8) % 2 == 0 ? 0 : 600;
    }
  }
  return policy;
}

// The snapshot as a host leaves it after carrying out the preemptions: each victim is pending
// again, without placements, and pending since now, as ApplyDecisions() leaves it (the
// starvation guard counts its wait from there).
Snapshot WithVictimsEvicted(const Snapshot& snapshot, const Decisions& decisions) {
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

// Does a start of `d`, of another job, use a node `victim` runs on, or quota of a queue of its
// chain (a queue both jobs count against)?
bool OthersTakeItsRoom(const World& world, const Decisions& d, const Job& victim) {
  const std::vector<const Queue*> chain = world.Chain(victim.queue);
  for (const StartDecision& s : d.starts) {
    if (s.job == victim.id) continue;
    for (const ReplicaPlacement& a : s.placements) {
      for (const ReplicaPlacement& b : victim.placements) {
        if (a.node == b.node) return true;
      }
    }
    const Job* job = world.job(s.job);
    if (job == nullptr) continue;
    for (const Queue* q : world.Chain(job->queue)) {
      if (std::find(chain.begin(), chain.end(), q) != chain.end()) return true;
    }
  }
  return false;
}

// Usage per (queue, model or "*") of the running jobs of a snapshot, counted up the tree.
std::map<std::pair<std::string, std::string>, int64_t> QueueUsage(const Snapshot& s) {
  World world(s);
  std::map<std::pair<std::string, std::string>, int64_t> usage;
  for (const Job& job : s.jobs) {
    if (job.state != JobState::kRunning) continue;
    for (const ReplicaPlacement& p : job.placements) {
      const TaskGroup* g = world.group(job, p.group);
      const Node* n = world.node(p.node);
      if (g == nullptr || n == nullptr || g->request.gpu_milli == 0) continue;
      for (const Queue* q : world.Chain(job.queue)) {
        usage[{q->id, n->gpu_model}] += g->request.gpu_milli;
        usage[{q->id, kAnyGpuModel}] += g->request.gpu_milli;
      }
    }
  }
  return usage;
}

// Checks every invariant on one valid snapshot; appends a line per violation.
void CheckSnapshot(uint64_t seed, const Snapshot& snapshot, std::vector<std::string>& violations) {
  auto fail = [&](std::string what) {
    violations.push_back(fmt::format("seed {}: {}", seed, what));
  };
  const Policy policy = PolicyForSeed(seed);
  if (absl::Status valid = ValidateSnapshot(snapshot); !valid.ok()) {
    fail(fmt::format("invalid snapshot: {}", valid.ToString()));
    return;
  }
  absl::StatusOr<Decisions> result = Schedule(snapshot, policy);
  if (!result.ok()) {
    fail(fmt::format("Schedule failed: {}", result.status().ToString()));
    return;
  }
  const Decisions& d = *result;
  const World world(snapshot);
  // Settled, not cut at the cap of 8 passes (docs/engine.md, "Settling").
  if (d.counters.passes >= 8) fail(fmt::format("cut at {} passes", d.counters.passes));

  // Same input, same output.
  {
    absl::StatusOr<Decisions> again = Schedule(snapshot, policy);
    if (!again.ok() || DecisionsToText(*again) != DecisionsToText(d)) {
      fail("scheduling the same snapshot twice gave different decisions");
    }
  }

  // Exactly one outcome per pending job, none for others.
  {
    std::map<std::string, int> outcomes;
    for (const StartDecision& s : d.starts) ++outcomes[s.job];
    for (const PendingDecision& p : d.pending) ++outcomes[p.job];
    for (const Job& job : snapshot.jobs) {
      const int count = outcomes.count(job.id) ? outcomes[job.id] : 0;
      if (job.state == JobState::kPending && count != 1) {
        fail(fmt::format("pending job {} has {} outcomes", job.id, count));
      }
      // A running job gets no decision, except a victim that the cycle evicts and then
      // restarts elsewhere (stage 6b): one start; and a job a rule stops (a Preempt without
      // for_job) is pending again, so it gets exactly one outcome (docs/decisions-format.md,
      // "Complete").
      auto preempt = std::find_if(d.preemptions.begin(), d.preemptions.end(),
                                  [&job](const PreemptDecision& p) { return p.job == job.id; });
      const bool evicted = preempt != d.preemptions.end();
      const bool stopped = evicted && preempt->for_job.empty();
      const bool pended = std::any_of(d.pending.begin(), d.pending.end(),
                                      [&job](const PendingDecision& p) { return p.job == job.id; });
      if (job.state == JobState::kRunning && stopped && count != 1) {
        fail(fmt::format("running job {} stopped by a rule has {} outcomes", job.id, count));
      }
      if (job.state == JobState::kRunning && !stopped && (pended || count > (evicted ? 1 : 0))) {
        fail(fmt::format("running job {} got a start or pending decision", job.id));
      }
      outcomes.erase(job.id);
    }
    for (const auto& [id, count] : outcomes) fail(fmt::format("decision for unknown job {}", id));
  }

  // Preemptions: whole running gangs of the same queue and lower priority, preemptible, past their
  // minimum runtime, each for a job that starts; at most one decision per victim, sorted by id.
  std::set<std::string> victims;
  {
    std::set<std::string> started;
    for (const StartDecision& s : d.starts) started.insert(s.job);
    std::set<std::string> reserved;
    for (const ReserveDecision& r : d.reservations) reserved.insert(r.job);
    if (!policy.preemption.enabled && !d.preemptions.empty()) {
      fail("preemption decisions with preemption disabled");
    }
    for (size_t i = 0; i < d.preemptions.size(); ++i) {
      const PreemptDecision& p = d.preemptions[i];
      if (i > 0 && !(d.preemptions[i - 1].job < p.job)) {
        fail(fmt::format("preemptions not sorted by job id at {}", p.job));
      }
      if (!victims.insert(p.job).second) fail(fmt::format("{} preempted twice", p.job));
      const Job* victim = world.job(p.job);
      const Job* beneficiary = world.job(p.for_job);
      if (victim == nullptr || beneficiary == nullptr) {
        fail(fmt::format("preemption names unknown job {} or {}", p.job, p.for_job));
        continue;
      }
      if (victim->state != JobState::kRunning)
        fail(fmt::format("{} preempted, not running", p.job));
      if (!victim->preemptible) fail(fmt::format("{} preempted, not preemptible", p.job));
      if (victim->queue != beneficiary->queue ||
          (victim->priority >= beneficiary->priority &&
           !TakesBack(policy, snapshot.now, *beneficiary, *victim))) {
        fail(fmt::format("{} (queue {}, priority {}) preempted for {} (queue {}, priority {})",
                         p.job, victim->queue, victim->priority, p.for_job, beneficiary->queue,
                         beneficiary->priority));
      }
      if (victim->start_time.has_value() &&
          snapshot.now - *victim->start_time < victim->min_runtime_s) {
        fail(fmt::format("{} preempted before its minimum runtime", p.job));
      }
      // A drained job goes for a job that holds a reservation instead (stage 7), on a node the
      // drained job ran on; or, when the settling passes gave that reservation up, for the room
      // (or quota) of a job that starts (it is put back otherwise).
      const bool drained = p.reason.find("preemption.drain_blocked_jobs") != std::string::npos;
      if (drained && !ReservesANodeOf(d, p.for_job, *victim) &&
          !OthersTakeItsRoom(world, d, *victim)) {
        fail(
            fmt::format("{} drained for {}, which reserves none of its nodes, and no other job "
                        "takes its room or quota",
                        p.job, p.for_job));
      }
      if (!drained && !started.count(p.for_job)) {
        fail(fmt::format("{} preempted for {}, which does not start", p.job, p.for_job));
      }
      if (p.lost_milli_gpu_seconds < 0) fail(fmt::format("{}: negative lost work", p.job));
    }
    // Elastic shrinks: same rules, and the group keeps at least its minimum.
    for (const ResizeDecision& r : d.resizes) {
      const Job* victim = world.job(r.job);
      const Job* beneficiary = world.job(r.for_job);
      if (victim == nullptr || beneficiary == nullptr) {
        fail(fmt::format("resize names unknown job {} or {}", r.job, r.for_job));
        continue;
      }
      if (victims.count(r.job)) fail(fmt::format("{} both preempted and resized", r.job));
      const TaskGroup* g = world.group(*victim, r.group);
      if (g == nullptr || r.to_replicas < g->MinReplicas() || r.to_replicas >= r.from_replicas) {
        fail(fmt::format("{}: resize {} -> {} breaks the group's bounds", r.job, r.from_replicas,
                         r.to_replicas));
      }
      if (!victim->preemptible || victim->queue != beneficiary->queue ||
          victim->priority >= beneficiary->priority) {
        fail(fmt::format("{} shrunk for {} against the rules", r.job, r.for_job));
      }
      if (!started.count(r.for_job)) {
        fail(fmt::format("{} shrunk for {}, which does not start", r.job, r.for_job));
      }
    }
  }

  // Occupants per GPU and per node (running jobs that stay and new starts), to check sharing:
  // what the host holds once it has carried out the evictions and the elastic shrinks (a
  // replica removed by a Resize frees its GPUs for the starts of the same cycle).
  std::map<std::pair<std::string, int32_t>, std::set<std::string>> gpu_jobs;
  std::map<std::string, std::set<std::string>> node_jobs;
  const Snapshot staying = WithVictimsEvicted(snapshot, d);
  for (const Job& job : staying.jobs) {
    if (victims.count(job.id)) continue;
    for (const ReplicaPlacement& p : job.placements) {
      node_jobs[p.node].insert(job.id);
      for (int32_t g : p.gpus) gpu_jobs[{p.node, g}].insert(job.id);
    }
  }
  for (const StartDecision& s : d.starts) {
    for (const ReplicaPlacement& p : s.placements) {
      node_jobs[p.node].insert(s.job);
      for (int32_t g : p.gpus) gpu_jobs[{p.node, g}].insert(s.job);
    }
  }

  // Each start.
  for (const StartDecision& s : d.starts) {
    const Job* job = world.job(s.job);
    if (job == nullptr) continue;  // reported above
    std::map<std::string, std::set<int32_t>> replicas;
    std::set<std::string> models_used;
    for (const ReplicaPlacement& p : s.placements) {
      const TaskGroup* group = world.group(*job, p.group);
      const Node* node = world.node(p.node);
      if (group == nullptr || node == nullptr) {
        fail(
            fmt::format("{}: placement names unknown group {} or node {}", s.job, p.group, p.node));
        continue;
      }
      if (!replicas[p.group].insert(p.replica).second) {
        fail(fmt::format("{}: replica {}/{} placed twice", s.job, p.group, p.replica));
      }
      if (node->state != NodeState::kReady) {
        fail(fmt::format("{}: placed on node {} that is not ready", s.job, node->id));
      }
      if (!node->owner_queues.empty()) {
        bool allowed = false;
        for (const std::string& owner : node->owner_queues) {
          allowed = allowed || world.InSubtree(job->queue, owner);
        }
        if (!allowed) {
          fail(fmt::format("{}: placed on node {} reserved to other queues", s.job, node->id));
        }
      }
      const ResourceRequest& request = group->request;
      if (static_cast<int64_t>(p.gpus.size()) != request.GpuCount()) {
        fail(fmt::format("{}: {}/{} has {} GPUs, wants {}", s.job, p.group, p.replica,
                         p.gpus.size(), request.GpuCount()));
      }
      if (p.gpu_milli != request.MilliPerGpu()) {
        fail(fmt::format("{}: {}/{} gpu_milli {} != {}", s.job, p.group, p.replica, p.gpu_milli,
                         request.MilliPerGpu()));
      }
      std::set<int32_t> islands;
      std::set<int32_t> seen;
      for (int32_t index : p.gpus) {
        const Gpu* gpu = nullptr;
        for (const Gpu& g : node->gpus) {
          if (g.index == index) gpu = &g;
        }
        if (gpu == nullptr) {
          fail(fmt::format("{}: GPU {} is not on node {}", s.job, index, node->id));
          continue;
        }
        if (!seen.insert(index).second) fail(fmt::format("{}: GPU {} used twice", s.job, index));
        if (!gpu->healthy) {
          fail(fmt::format("{}: placed on unhealthy GPU {} of {}", s.job, index, node->id));
        }
        islands.insert(gpu->island);
      }
      if (!p.gpus.empty()) {
        models_used.insert(node->gpu_model);
        if (!group->gpu_models.empty() &&
            std::find(group->gpu_models.begin(), group->gpu_models.end(), node->gpu_model) ==
                group->gpu_models.end()) {
          fail(fmt::format("{}: placed on model {} it does not accept", s.job, node->gpu_model));
        }
        const GpuModel* model = world.model(node->gpu_model);
        if (model != nullptr && request.gpu_memory_mib > model->memory_mib) {
          fail(fmt::format("{}: needs {} MiB per GPU, {} has {}", s.job, request.gpu_memory_mib,
                           node->id, model->memory_mib));
        }
      }
      if (group->topology.replica_scope == ReplicaScope::kIsland &&
          group->topology.replica_strictness == Strictness::kRequired && islands.size() > 1) {
        fail(fmt::format("{}: replica {}/{} spans islands on {}", s.job, p.group, p.replica,
                         node->id));
      }
      // Isolation, seen from the jobs already on this node or GPU: a job of another tenant
      // must not have joined them.
      auto outside_tenant_of = [&](const std::string& other, Isolation mode) {
        if (other == s.job) return false;
        const Job* o = world.job(other);
        const Queue* root = o == nullptr ? nullptr : world.TenantRoot(o->queue);
        return root != nullptr && root->isolation == mode && !world.InSubtree(job->queue, root->id);
      };
      for (const std::string& other : node_jobs[node->id]) {
        if (outside_tenant_of(other, Isolation::kExclusiveNode)) {
          fail(
              fmt::format("{}: joined node {} of exclusive tenant job {}", s.job, node->id, other));
        }
      }
      for (int32_t index : p.gpus) {
        for (const std::string& other : gpu_jobs[{node->id, index}]) {
          if (outside_tenant_of(other, Isolation::kExclusiveGpu)) {
            fail(fmt::format("{}: joined GPU {}:{} of exclusive tenant job {}", s.job, node->id,
                             index, other));
          }
        }
      }
      // Isolation, seen from this job.
      if (const Queue* root = world.TenantRoot(job->queue); root != nullptr) {
        auto other_tenant = [&](const std::string& other) {
          const Job* o = world.job(other);
          return o != nullptr && !world.InSubtree(o->queue, root->id);
        };
        if (root->isolation == Isolation::kExclusiveNode) {
          for (const std::string& other : node_jobs[node->id]) {
            if (other_tenant(other)) {
              fail(fmt::format("{}: shares exclusive node {} with {}", s.job, node->id, other));
            }
          }
        } else {
          for (int32_t index : p.gpus) {
            for (const std::string& other : gpu_jobs[{node->id, index}]) {
              if (other_tenant(other)) {
                fail(fmt::format("{}: shares exclusive GPU {}:{} with {}", s.job, node->id, index,
                                 other));
              }
            }
          }
        }
      }
    }
    if (models_used.size() > 1) fail(fmt::format("{}: placed across GPU models", s.job));
    // Gangs all or nothing, replica indices dense.
    for (const TaskGroup& group : job->groups) {
      const std::set<int32_t>& got = replicas[group.name];
      const int64_t count = static_cast<int64_t>(got.size());
      if (count < group.MinReplicas() || count > group.replicas) {
        fail(fmt::format("{}: group {} started with {} replicas, needs [{}, {}]", s.job, group.name,
                         count, group.MinReplicas(), group.replicas));
      }
      if (!got.empty() && (*got.begin() != 0 || *got.rbegin() != count - 1)) {
        fail(fmt::format("{}: group {} replica indices not 0..{}", s.job, group.name, count - 1));
      }
    }
    // Required gang level: every replica in one domain.
    for (const TaskGroup& group : job->groups) {
      const TopologyConstraint& t = group.topology;
      if (!t.gang_level.has_value() || t.gang_strictness != Strictness::kRequired) continue;
      std::set<std::optional<std::string>> domains;
      for (const ReplicaPlacement& p : s.placements) {
        if (const Node* node = world.node(p.node)) {
          domains.insert(world.DomainKey(*node, *t.gang_level));
        }
      }
      if (domains.size() > 1 || (domains.size() == 1 && !domains.begin()->has_value())) {
        fail(fmt::format("{}: required gang level {} broken", s.job, *t.gang_level));
      }
    }
  }

  // Apply (evictions, then starts), then check capacity directly and through validation.
  Snapshot applied = WithVictimsEvicted(snapshot, d);
  if (absl::Status status = ApplyStarts(d, applied); !status.ok()) {
    fail(fmt::format("ApplyStarts failed: {}", status.ToString()));
    return;
  }
  {
    const World after(applied);
    std::map<std::pair<std::string, int32_t>, int64_t> milli;
    std::map<std::string, std::pair<int64_t, int64_t>> cpu_memory;
    for (const Job& job : applied.jobs) {
      for (const ReplicaPlacement& p : job.placements) {
        const TaskGroup* g = after.group(job, p.group);
        if (g == nullptr) continue;
        for (int32_t index : p.gpus) milli[{p.node, index}] += g->request.MilliPerGpu();
        cpu_memory[p.node].first += g->request.cpu_milli;
        cpu_memory[p.node].second += g->request.memory_mib;
      }
    }
    for (const auto& [gpu, used] : milli) {
      if (used > kMilliPerGpu) {
        fail(fmt::format("GPU {}:{} over-committed: {}", gpu.first, gpu.second, used));
      }
    }
    for (const auto& [id, used] : cpu_memory) {
      const Node* node = after.node(id);
      if (node != nullptr && (used.first > node->cpu_milli || used.second > node->memory_mib)) {
        fail(fmt::format("node {} over-committed: cpu {} of {}, memory {} of {}", id, used.first,
                         node->cpu_milli, used.second, node->memory_mib));
      }
    }
  }
  if (absl::Status valid = ValidateSnapshot(applied); !valid.ok()) {
    fail(fmt::format("snapshot after ApplyStarts is invalid: {}", valid.ToString()));
  }

  // Limits: new starts never take a queue past a limit (usage that was already above a limit
  // before the cycle may stay there, but must not grow).
  {
    const auto before = QueueUsage(snapshot);
    const auto after = QueueUsage(applied);
    for (const Queue& q : snapshot.queues) {
      for (const Quota& quota : q.quotas) {
        if (!quota.limit_milli.has_value()) continue;
        auto key = std::make_pair(q.id, quota.gpu_model);
        const int64_t was = before.count(key) ? before.at(key) : 0;
        const int64_t now = after.count(key) ? after.at(key) : 0;
        if (now > *quota.limit_milli && now > was) {
          fail(fmt::format("queue {} model {}: usage {} -> {} past limit {}", q.id, quota.gpu_model,
                           was, now, *quota.limit_milli));
        }
      }
    }
  }

  // Fixed point: once the starts are applied, the next cycle starts nothing (with preemption on,
  // the victims evicted first; PreemptionReachesAFixedPoint below also checks preemptions).
  {
    absl::StatusOr<Decisions> next = Schedule(applied, policy);
    if (!next.ok()) {
      fail(fmt::format("Schedule after ApplyStarts failed: {}", next.status().ToString()));
    } else if (!next->starts.empty()) {
      fail(fmt::format("Schedule after ApplyStarts started {} more, first {}", next->starts.size(),
                       next->starts.front().job));
    }
  }

  // Shuffled input, same decisions.
  {
    Snapshot shuffled = snapshot;
    ShuffleSnapshot(shuffled, seed * 7919 + 1);
    absl::StatusOr<Decisions> other = Schedule(shuffled, policy);
    if (!other.ok()) {
      fail(fmt::format("Schedule of the shuffled snapshot failed: {}", other.status().ToString()));
    } else if (const std::string a = DecisionsToText(d), b = DecisionsToText(*other); a != b) {
      fail(fmt::format("shuffled input changed the decisions:\n--- original\n{}--- shuffled\n{}", a,
                       b));
    }
  }
}

// Every invariant of CheckSnapshot() holds on the random snapshots of `seeds`.
void ExpectInvariants(std::initializer_list<uint64_t> seeds) {
  for (uint64_t seed : seeds) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    std::vector<std::string> violations;
    CheckSnapshot(seed, GenerateRandomSnapshot(seed), violations);
    for (const std::string& v : violations) ADD_FAILURE() << v;
  }
}

// The decisions of the random snapshot of `seed` under its policy, as text ("" on an error).
std::string ScheduledText(uint64_t seed) {
  absl::StatusOr<Decisions> d = Schedule(GenerateRandomSnapshot(seed), PolicyForSeed(seed));
  EXPECT_TRUE(d.ok()) << d.status();
  return d.ok() ? DecisionsToText(*d) : std::string();
}

TEST(PropertyTest, InvariantsHoldOnRandomSnapshots) {
  int failing_seeds = 0;
  int64_t starts = 0;
  std::string failing_list;
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    std::vector<std::string> violations;
    CheckSnapshot(seed, GenerateRandomSnapshot(seed), violations);
    if (!violations.empty()) {
      ++failing_seeds;
      failing_list += fmt::format(" {}", seed);
      if (failing_seeds <= kReportedSeeds) {
        std::string text;
        for (const std::string& v : violations) text += v + "\n";
        ADD_FAILURE() << text;
      }
    }
    absl::StatusOr<Decisions> d = Schedule(GenerateRandomSnapshot(seed), PolicyForSeed(seed));
    if (d.ok()) starts += static_cast<int64_t>(d->starts.size());
  }
  EXPECT_EQ(failing_seeds, 0) << "seeds with violations (the first " << kReportedSeeds
                              << " are reported above):" << failing_list;
  ::testing::Test::RecordProperty("seeds", static_cast<int>(kSeeds));
  std::printf("%llu seeds (one random cycle each), %lld starts, %d failing seeds\n",
              static_cast<unsigned long long>(kSeeds), static_cast<long long>(starts),
              failing_seeds);
  // The property is not vacuous: the snapshots do start work.
  EXPECT_GT(starts, static_cast<int64_t>(kSeeds));
}

// Snapshots a careless host might send (random edits of generated ones, see MutateSnapshot)
// that still validate: Schedule() succeeds on them and every invariant holds.
TEST(PropertyTest, InvariantsHoldOnMutatedValidSnapshots) {
  int failing_seeds = 0;
  int valid = 0;
  for (uint64_t seed = 0; seed < 1000; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    Snapshot snapshot = GenerateRandomSnapshot(seed);
    MutateSnapshot(snapshot, seed, 1 + static_cast<int>(seed % 3));
    if (!ValidateSnapshot(snapshot).ok()) continue;
    ++valid;
    std::vector<std::string> violations;
    CheckSnapshot(seed, snapshot, violations);
    if (!violations.empty() && ++failing_seeds <= kReportedSeeds) {
      std::string text;
      for (const std::string& v : violations) text += v + "\n";
      ADD_FAILURE() << text;
    }
  }
  EXPECT_EQ(failing_seeds, 0) << "seeds with violations (mutated snapshots)";
  EXPECT_GT(valid, 150) << "too few mutated snapshots stayed valid to test anything";
}

// Each invariant is checked separately on the seeds where it is most likely to break, so that a
// regression names the invariant in the test name too.
TEST(PropertyTest, ShuffleInvarianceOnRandomSnapshots) {
  int failing = 0;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    const Snapshot snapshot = GenerateRandomSnapshot(seed);
    absl::StatusOr<Decisions> a = Schedule(snapshot, Policy{});
    ASSERT_TRUE(a.ok()) << a.status();
    for (uint64_t shuffle = 1; shuffle <= 3; ++shuffle) {
      Snapshot shuffled = snapshot;
      ShuffleSnapshot(shuffled, seed * 1000 + shuffle);
      absl::StatusOr<Decisions> b = Schedule(shuffled, Policy{});
      ASSERT_TRUE(b.ok()) << b.status();
      if (DecisionsToText(*a) != DecisionsToText(*b)) {
        if (++failing <= 2) {
          EXPECT_EQ(DecisionsToText(*a), DecisionsToText(*b));
        }
        break;
      }
    }
  }
  EXPECT_EQ(failing, 0) << "seeds whose decisions depend on list order";
}

// DESIGN.md: applying the decisions (evictions and starts) and scheduling again yields no further
// Start or Preempt, with preemption on (every odd seed) too. A single pass of the stages did not
// get there on a few seeds, two ways, which the settling passes (src/engine/settle.cc) now
// resolve:
//   - victims were not re-queued within the cycle, so a lower-priority job started while a
//     higher-priority one of the same queue was evicted, and next cycle the victim preempted it
//     (seed 241, queue q0: j07 (priority 8) evicted for j19 (9), then j11 (6) started by
//     evicting j02 (1); next cycle j07 preempted j11);
//   - a job that failed before an eviction in the same cycle was not tried again, though the
//     evicted gang freed more than its beneficiary took (seed 795: j05 (q2, priority 9) needs
//     j09 (q2) evicted and room where j04 (q0) runs; it failed, then j02 (q0) evicted j04; next
//     cycle j05 preempted j09 and started).
TEST(PropertyTest, PreemptionReachesAFixedPoint) {
  int failing = 0;
  for (uint64_t seed = 1; seed < kSeeds; seed += 2) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    const Snapshot snapshot = GenerateRandomSnapshot(seed);
    const Policy policy = PolicyForSeed(seed);
    ASSERT_TRUE(policy.preemption.enabled);
    absl::StatusOr<Decisions> a = Schedule(snapshot, policy);
    ASSERT_TRUE(a.ok()) << a.status();
    // Settled, not cut at the cap of 8 passes (docs/engine.md, "Settling"); passes counts the
    // passes run, each once.
    EXPECT_LT(a->counters.passes, 8);
    int64_t run = 0;
    internal::RunCycle(snapshot, policy, [&run](const Snapshot&, const Decisions&) { ++run; });
    EXPECT_EQ(a->counters.passes, run);
    Snapshot applied = WithVictimsEvicted(snapshot, *a);
    ASSERT_TRUE(ApplyStarts(*a, applied).ok());
    absl::StatusOr<Decisions> b = Schedule(applied, policy);
    ASSERT_TRUE(b.ok()) << b.status();
    if ((!b->starts.empty() || !b->preemptions.empty()) && ++failing <= 3) {
      ADD_FAILURE() << "the next cycle starts or preempts more:\n" << DecisionsToText(*b);
    }
  }
  EXPECT_EQ(failing, 0) << "seeds without a fixed point";
}

// The policy of `seed` with the options that make a cycle settle in more passes turned on in
// varied mixes: preemption (as PolicyForSeed's odd seeds), reclaim across queues, a starvation
// bound (snapshots submit jobs up to 100,000 s before now) with or without draining, a headroom
// rule that restores on the snapshot's first GPU model, and backfill. The mix an outside test of
// the docs drew its cycles from (docs/engine.md, "Guarantees").
Policy SettlingPolicyForSeed(uint64_t seed, const Snapshot& snapshot) {
  Policy policy = PolicyForSeed(seed | 1);
  ::gpupool::testing::Rng rng(seed ^ 0x5e771e5ULL);
  policy.preemption.reclaim_across_queues = rng.Percent(50);
  policy.preemption.reclaim_lower_priority_only = rng.Percent(30);
  if (rng.Percent(60)) {
    policy.starvation_bound_s = rng.UniformInt(2, 8) * 10'000;
    policy.preemption.starving_drain = rng.Percent(60);
    policy.preemption.starving_outrank = !rng.Percent(20);
  }
  if (rng.Percent(40) && !snapshot.gpu_models.empty()) {
    policy.headroom = {HeadroomRule{snapshot.gpu_models.front().name, rng.UniformInt(1, 2),
                                    HeadroomShape::kGpus,
                                    static_cast<int32_t>(rng.UniformInt(6, 9)), true}};
  }
  policy.backfill.enabled = rng.Percent(30);
  return policy;
}

// The fixed point through ApplyDecisions() under SettlingPolicyForSeed(): applied, the next
// cycle at the same moment starts, preempts, moves and resizes nothing; the cycle ran fewer
// passes than the cap; every pending job gets exactly one Start or PendingDecision.
TEST(PropertyTest, SettlingOptionsReachAFixedPoint) {
  int failing = 0;
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    const Snapshot snapshot = GenerateRandomSnapshot(seed);
    const Policy policy = SettlingPolicyForSeed(seed, snapshot);
    absl::StatusOr<Decisions> a = Schedule(snapshot, policy);
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_LT(a->counters.passes, 8);
    std::map<std::string, int> outcomes;
    for (const StartDecision& s : a->starts) ++outcomes[s.job];
    for (const PendingDecision& p : a->pending) ++outcomes[p.job];
    for (const Job& job : snapshot.jobs) {
      if (job.state == JobState::kPending) {
        EXPECT_EQ(outcomes[job.id], 1) << job.id;
      }
    }
    Snapshot applied = snapshot;
    ASSERT_TRUE(ApplyDecisions(*a, applied).ok());
    absl::StatusOr<Decisions> b = Schedule(applied, policy);
    ASSERT_TRUE(b.ok()) << b.status();
    if ((!b->starts.empty() || !b->preemptions.empty() || !b->migrations.empty() ||
         !b->resizes.empty()) &&
        ++failing <= 3) {
      ADD_FAILURE() << fmt::format(
                           "reclaim_across_queues {}, starvation_bound_s {} (drain {}), "
                           "headroom rules {}, backfill {}; the next cycle acts:\n",
                           policy.preemption.reclaim_across_queues, policy.starvation_bound_s,
                           policy.preemption.starving_drain, policy.headroom.size(),
                           policy.backfill.enabled)
                    << DecisionsToText(*b);
    }
  }
  EXPECT_EQ(failing, 0) << "seeds without a fixed point";
}

// Seeds on which a cycle once went round until the cap of 8 passes (found with 10,000 seeds): a
// job drained for a reservation took back, in the next pass, the GPUs a lower-priority job had
// taken (1603), and a drained job re-placed in its own place was drained again (3067). The
// passes now leave a job they put back where it ran alone (docs/engine.md, "Settling").
TEST(PropertyTest, AJobPutBackWhereItRanEndsTheLoop) {
  for (uint64_t seed : {1603, 3067}) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    absl::StatusOr<Decisions> d = Schedule(GenerateRandomSnapshot(seed), PolicyForSeed(seed));
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_LT(d->counters.passes, 8);
  }
}

// Seeds on which a victim was drained for a job the cycle itself evicted (found with 10,000
// seeds): the final decisions named, for the drained job, the job that had evicted the reserving
// one, and left the reserving job's reservation out because it ran in the snapshot. The
// reservation of a job the cycle evicts is now reported, and a drain keeps its for_job
// (docs/engine.md, "Settling").
TEST(PropertyTest, AJobDrainedForACycleVictimNamesItsReservation) {
  for (uint64_t seed : {1585, 2167, 7111}) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    ExpectInvariants({seed});
    absl::StatusOr<Decisions> d = Schedule(GenerateRandomSnapshot(seed), PolicyForSeed(seed));
    ASSERT_TRUE(d.ok()) << d.status();
    int drained = 0;
    for (const PreemptDecision& p : d->preemptions) {
      if (p.reason.find("preemption.drain_blocked_jobs") == std::string::npos) continue;
      ++drained;
      const bool evicted_too =
          std::any_of(d->preemptions.begin(), d->preemptions.end(),
                      [&p](const PreemptDecision& q) { return q.job == p.for_job; });
      const bool reserved =
          std::any_of(d->reservations.begin(), d->reservations.end(),
                      [&p](const ReserveDecision& r) { return r.job == p.for_job; });
      EXPECT_TRUE(evicted_too) << p.job << " drained for " << p.for_job;
      EXPECT_TRUE(reserved) << p.job << " drained for " << p.for_job;
    }
    EXPECT_GT(drained, 0);
  }
  // explain says so for the evicted job (seed 1585: j13 evicts j02, the next pass drains j07
  // for j02).
  const Snapshot snapshot = GenerateRandomSnapshot(1585);
  absl::StatusOr<Decisions> d = Schedule(snapshot, PolicyForSeed(1585));
  ASSERT_TRUE(d.ok()) << d.status();
  absl::StatusOr<std::string> text = ExplainJob(snapshot, *d, "j02");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text,
            "job j02 (queue q0, priority 9, submitted at 1940782)\n"
            "running since 1968822:\n"
            "  main[0] on node n02, GPUs 0,1\n"
            "  main[1] on node n02, GPUs 2,3\n"
            "  worker[0] on node n01, GPU 2\n"
            "preempted now for job j13: job j13 (priority 10) of the same queue q0 outranks it "
            "(priority 9)\n"
            "  loses 20151000 milli-GPU-seconds (work since its last checkpoint, and its restore)\n"
            "  reserved: nodes n01, n02, expected start unknown (work there has no runtime "
            "estimate)\n");
}

// Seeds on which the next cycle started or drained one more (found with 10,000 seeds), two ways
// the settling now closes (docs/engine.md, "Settling"):
//   - a drain whose victim took its own GPUs back in the same pass (3589: j17, drained for j16,
//     re-placed on n01 GPU 0 where it ran) left a Preempt and a Start in place whenever no later
//     pass changed anything, and nothing when one did, so the next cycle drained it again. The
//     first pass's decisions are now composed as a later pass's are: no decision for j17;
//   - with drain_blocked_jobs, a first pass whose first blocked job could have no reservation
//     did not settle, though its starts changed which jobs are blocked first (4897: the next
//     cycle's first blocked job, j12, drained j09). A pass that starts jobs now settles.
TEST(PropertyTest, TheNextCycleFindsNothingMoreToDrain) {
  ExpectInvariants({3067, 3589, 4897, 5221, 5659, 6421, 6601, 8695, 9325});
  absl::StatusOr<Decisions> d = Schedule(GenerateRandomSnapshot(3589), PolicyForSeed(3589));
  ASSERT_TRUE(d.ok()) << d.status();
  for (const PreemptDecision& p : d->preemptions) EXPECT_NE(p.job, "j17");
  for (const StartDecision& s : d->starts) EXPECT_NE(s.job, "j17");
  ASSERT_EQ(d->reservations.size(), 1u);
  EXPECT_EQ(d->reservations[0].job, "j16");
  d = Schedule(GenerateRandomSnapshot(4897), PolicyForSeed(4897));
  ASSERT_TRUE(d.ok()) << d.status();
  const std::string text = DecisionsToText(*d);
  EXPECT_NE(text.find("start j09 main/0@n01[1]x250"), std::string::npos) << text;
  EXPECT_NE(text.find("preempt j09 for j12"), std::string::npos) << text;
}

// Seeds on which a job drained for a reservation stayed evicted though the settling passes gave
// that reservation up (found with 10,000 seeds, and with the stricter check of CheckSnapshot: the
// reservation must include a node the drained job ran on). The drain's room went to a
// reservation that outranks it (6955: j09 drained for j18; once it was pending, j01's reservation
// took n00 and j18 had none), or its job started elsewhere (7831: j10, started by stage 6b on
// n08), or its victims were re-placed and the reservation moved (817: j01 and j02 drained from
// n03 for j03, which then reserved n00). Such a job is now put back where it ran, and stays there
// if it is put back twice (docs/engine.md, "Settling"); a reservation that needs its GPUs after
// all drains it again (7831: for j03). It stays evicted when a start took its room or its queue's
// quota (10465, 15127, found with 20,000 seeds: putting it back took a queue past its
// limit_milli).
TEST(PropertyTest, AJobDrainedForAReservationThePassesGaveUpStaysWhereItRan) {
  ExpectInvariants({817, 931, 6955, 7831, 10465, 15127});
  std::string text = ScheduledText(6955);
  EXPECT_EQ(text.find("preempt"), std::string::npos) << text;
  EXPECT_NE(text.find("reserve j18 on n00,n09"), std::string::npos) << text;
  text = ScheduledText(817);
  EXPECT_EQ(text.find("preempt"), std::string::npos) << text;
  EXPECT_EQ(text.find("start j01"), std::string::npos) << text;
  EXPECT_EQ(text.find("start j02"), std::string::npos) << text;
  EXPECT_NE(text.find("reserve j03 on n00 at 1050751"), std::string::npos) << text;
  text = ScheduledText(7831);
  EXPECT_NE(text.find("preempt j01 for j03 reason=job j03 is among"), std::string::npos) << text;
  EXPECT_NE(text.find("reserve j03 on n04 at 1736461"), std::string::npos) << text;
}

// A later pass ranks a node by when the starts of the earlier passes may be drained, as the next
// cycle does for jobs the host started at this moment. In 7927 the later passes ranked n04, where
// j20 had just started, as freeing at an unknown time, so the reservations of j05 and j16 took
// each other's nodes pass by pass and the drained j01 was put back; the next cycle, seeing j20
// running since now, ranked n04 by when j20 may go and drained j01. An elastic group shrunk for
// a job whose start a later pass undid names the job at the end of the chain: 24531 shrank j14
// for j06, which had been evicted for j10 and which a later pass started again where it ran. A
// job evicted for another's start keeps that name only if the other starts, or holds a
// reservation it was drained for: 26905 evicted j06 for j00, whose start a later pass undid for
// j04 (on j06's GPU), and j00 only reserved in the end. The chain follows the eviction that
// undid a start, not a job's first: 743881 evicted j06 for j08, which a first pass had drained
// for j19 and a second started again; a third evicted j08 for j03, which took j06's GPU.
TEST(PropertyTest, LaterPassesRankAndNameAsTheNextCycleDoes) {
  ExpectInvariants({7927, 24531, 26905, 36613, 743881});
  std::string text = ScheduledText(7927);
  EXPECT_NE(text.find("preempt j01 for j05 reason=job j05 is among"), std::string::npos) << text;
  EXPECT_NE(text.find("start j01 main/0@n03[2]x1000"), std::string::npos) << text;
  EXPECT_NE(text.find("reserve j16 on n04 at 1855995"), std::string::npos) << text;
  absl::StatusOr<Decisions> d = Schedule(GenerateRandomSnapshot(24531), PolicyForSeed(24531));
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->resizes.size(), 1u);
  EXPECT_EQ(d->resizes[0].job, "j14");
  EXPECT_EQ(d->resizes[0].to_replicas, 1);
  EXPECT_EQ(d->resizes[0].for_job, "j10");
  text = ScheduledText(26905);
  EXPECT_NE(text.find("preempt j06 for j04"), std::string::npos) << text;
  text = ScheduledText(743881);
  EXPECT_NE(text.find("preempt j06 for j03"), std::string::npos) << text;
}

// A restored job (evicted, then started again where it ran) still yields to a job of its own
// queue that outranks it, as the next cycle would let it: evicted for its start, or drained for
// its reservation. In 2815 the first pass drained j09 (priority 3) for j10's reservation, a
// second started j10 elsewhere, evicting j15 (priority 8), and put j09 back on n00[0]; j15 then
// waited for n00 while j09 ran there, and the next cycle evicted j09 for j15. Now a later pass
// does, and the eviction it reports is that one. In 29155 the first pass drained j01 for j07's
// reservation and put it back on its own GPU; a second pass freed n02[3], and the next cycle
// drained j01 again and started it there. Now a later pass does.
TEST(PropertyTest, ARestoredJobYieldsToAJobOfItsQueueThatOutranksIt) {
  ExpectInvariants({2815, 29155});
  std::string text = ScheduledText(2815);
  EXPECT_NE(text.find("start j15 main/0@n00[0]x1000"), std::string::npos) << text;
  EXPECT_NE(text.find("preempt j09 for j15 reason=job j15 (priority 8) of the same queue q1 "
                      "outranks it (priority 3)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("reserve j15"), std::string::npos) << text;
  text = ScheduledText(29155);
  EXPECT_NE(text.find("start j01 main/0@n02[3]x500"), std::string::npos) << text;
  EXPECT_NE(text.find("preempt j01 for j07 reason=job j07 is among"), std::string::npos) << text;
}

// A job whose queue limit its own try meets keeps that reason when a preemption plan simulated
// for it evicts work of its queue and then finds no room, as the next cycle gives it. In a later
// pass such a plan may revoke the earlier passes' starts for free, where the next cycle has no
// victim: in 26407 j04 (queue q1 under q0) was told it lacked room, got a blocked job's
// reservation on n07 whose held capacity counted against q0's limit, and so kept j05 and j22
// off n07; the next cycle, finding j04 limited, started them. 16099 and 25429 are the same.
TEST(PropertyTest, AFailedPlanKeepsTheReasonOfTheJobsOwnTry) {
  ExpectInvariants({16099, 25429, 26407});
  const std::string text = ScheduledText(26407);
  EXPECT_NE(text.find("start j05 main/0@n07[5,6]x1000"), std::string::npos) << text;
  EXPECT_EQ(text.find("reserve j04"), std::string::npos) << text;
}

// A job evicted for nothing goes back only where isolation lets it: in 992989 j14 (queue q0) was
// drained for j00's reservation and started again on n03[0]; a later pass started j13 on n03[2],
// j14's GPU before the drain, and j00 held no reservation in the end. Putting j14 back on n03[2]
// would share it with j13, whose queue q1 keeps its GPUs to itself (found with 1,000,000 seeds). It
// now stays on n03[0].
TEST(PropertyTest, AJobPutBackKeepsTenantsApart) {
  ExpectInvariants({992989});
  const std::string text = ScheduledText(992989);
  EXPECT_NE(text.find("start j13 main/0@n03[2]x250"), std::string::npos) << text;
  EXPECT_NE(text.find("preempt j14 for j00"), std::string::npos) << text;
  EXPECT_NE(text.find("start j14 main/0@n03[0]x500"), std::string::npos) << text;
}

// A victim the first pass re-placed exactly where it ran is restored from the second pass on: it
// runs since its start in the snapshot, as the next cycle sees it, not as a start of this cycle
// (which no drain takes). In 22087 the first pass drained j03 (queue q0, priority 5) for j05's
// reservation (priority 10) and started it again on its own GPU, n00[1], where the same pass
// started j15 too; the second pass took j03 for a start of the cycle and left it, and the next
// cycle drained it again and started it on n07[3] (found with 30,000 seeds). Now the second
// pass does.
TEST(PropertyTest, AVictimPutBackInPlaceByTheFirstPassRunsAsItDid) {
  ExpectInvariants({22087});
  const std::string text = ScheduledText(22087);
  EXPECT_NE(text.find("start j03 main/0@n07[3]x500"), std::string::npos) << text;
  EXPECT_NE(text.find("preempt j03 for j05 reason=job j05 is among"), std::string::npos) << text;
  EXPECT_NE(text.find("start j15 main/0@n00[1]x250"), std::string::npos) << text;
}

// The spot rule of docs/operations.md, restated: spot_tolerant, or preemptible and checkpointing
// at least every spot.max_checkpoint_interval_s (any interval when 0).
bool MayUseSpotNode(const Job& job, const Policy& policy) {
  if (job.spot_tolerant) return true;
  const int64_t interval = job.checkpointing.interval_s;
  const int64_t most = policy.spot.max_checkpoint_interval_s;
  return job.preemptible && interval > 0 && (most == 0 || interval <= most);
}

// Units of `rule` free when the GPUs in `occupied` (node, index) are taken: healthy GPUs of the
// rule's model on ready nodes that are neither spot nor reclaiming (docs/operations.md).
int64_t FreeUnits(const Snapshot& snapshot, const HeadroomRule& rule,
                  const std::set<std::pair<std::string, int32_t>>& occupied) {
  int64_t free = 0;
  for (const Node& node : snapshot.nodes) {
    if (node.gpu_model != rule.gpu_model || node.gpus.empty() || node.state != NodeState::kReady ||
        node.spot || node.reclaiming) {
      continue;
    }
    std::map<int32_t, bool> island_whole;
    bool node_whole = true;
    for (const Gpu& gpu : node.gpus) {
      const bool whole = gpu.healthy && !occupied.count({node.id, gpu.index});
      if (rule.shape == HeadroomShape::kGpus) free += whole ? 1 : 0;
      node_whole = node_whole && whole;
      auto [it, inserted] = island_whole.emplace(gpu.island, whole);
      if (!inserted) it->second = it->second && whole;
    }
    if (rule.shape == HeadroomShape::kNodes) free += node_whole ? 1 : 0;
    if (rule.shape == HeadroomShape::kIslands) {
      for (const auto& [island, whole] : island_whole) free += whole ? 1 : 0;
    }
  }
  return free;
}

// Pool operations on random snapshots (AddRandomOperations: spot nodes, reclaims, spot-tolerant
// jobs, headroom rules). For every seed: no start on a reclaiming node; no replica on a spot
// node for a job that may not use one; every running job on a reclaiming node is stopped with a
// spot-reclaim Preempt; every Preempt without for_job is a spot reclaim or a headroom
// restoration of a preemptible job below the rule's priority; no low-priority start eats into
// headroom: when a job below a rule's min_priority starts on the rule's model, the units free at
// the end of the cycle plus the units urgent starts took are at least the rule's count (each
// low-priority start left the count free; only urgent starts take units after it); shuffled
// input gives the same bytes; and after applying the decisions the next cycle neither reclaims
// nor restores again.
TEST(PropertyTest, OperationsInvariantsOnRandomSnapshots) {
  int failing_seeds = 0;
  int64_t reclaims = 0, restorations = 0, headroom_pending = 0, spot_starts = 0;
  std::string failing_list;
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    Snapshot snapshot = GenerateRandomSnapshot(seed);
    Policy policy = PolicyForSeed(seed);
    AddRandomOperations(seed, snapshot, policy);
    std::vector<std::string> violations;
    auto fail = [&](std::string what) {
      violations.push_back(fmt::format("seed {}: {}", seed, what));
    };
    if (absl::Status valid = ValidateSnapshot(snapshot); !valid.ok()) {
      fail(fmt::format("invalid snapshot: {}", valid.ToString()));
    }
    absl::StatusOr<Decisions> result = Schedule(snapshot, policy);
    if (!result.ok()) fail(fmt::format("Schedule failed: {}", result.status().ToString()));
    if (violations.empty()) {
      const Decisions& d = *result;
      const World world(snapshot);
      Snapshot shuffled = snapshot;
      ShuffleSnapshot(shuffled, seed + 17);
      absl::StatusOr<Decisions> again = Schedule(shuffled, policy);
      if (!again.ok() || DecisionsToText(*again) != DecisionsToText(d)) {
        fail("shuffled input changed the decisions");
      }
      std::set<std::string> preempted;
      for (const PreemptDecision& p : d.preemptions) {
        preempted.insert(p.job);
        if (!p.for_job.empty()) continue;
        const Job* victim = world.job(p.job);
        if (victim == nullptr) {
          fail(fmt::format("preemption of unknown job {}", p.job));
        } else if (p.reason.rfind("spot reclaim:", 0) == 0) {
          ++reclaims;
        } else if (p.reason.rfind("headroom:", 0) == 0) {
          ++restorations;
          const bool below_a_rule = std::any_of(
              policy.headroom.begin(), policy.headroom.end(), [&](const HeadroomRule& r) {
                return r.restore && victim->priority < r.min_priority;
              });
          if (!victim->preemptible || !below_a_rule || !policy.preemption.enabled) {
            fail(fmt::format("{} evicted for headroom against the rules", p.job));
          }
        } else {
          fail(fmt::format("{} preempted for no job: {}", p.job, p.reason));
        }
      }
      for (const Job& job : snapshot.jobs) {
        if (job.state != JobState::kRunning) continue;
        for (const ReplicaPlacement& p : job.placements) {
          const Node* node = world.node(p.node);
          if (node != nullptr && node->reclaiming && !preempted.count(job.id)) {
            fail(fmt::format("{} runs on reclaimed node {} and is not stopped", job.id, p.node));
          }
        }
      }
      for (const StartDecision& s : d.starts) {
        const Job* job = world.job(s.job);
        for (const ReplicaPlacement& p : s.placements) {
          const Node* node = world.node(p.node);
          if (node == nullptr || job == nullptr) continue;
          if (node->reclaiming) fail(fmt::format("{} starts on reclaimed node {}", s.job, p.node));
          if (node->spot) {
            ++spot_starts;
            if (!MayUseSpotNode(*job, policy)) {
              fail(fmt::format("{} may not use spot node {}", s.job, p.node));
            }
          }
        }
      }
      for (const PendingDecision& p : d.pending) {
        headroom_pending += p.reason == PendingReason::kHeadroom ? 1 : 0;
      }
      // A job a rule stops is pending again: it gets exactly one Start or PendingDecision.
      for (const PreemptDecision& p : d.preemptions) {
        if (!p.for_job.empty()) continue;
        const auto count = std::count_if(d.starts.begin(), d.starts.end(),
                                         [&p](const StartDecision& s) { return s.job == p.job; }) +
                           std::count_if(d.pending.begin(), d.pending.end(),
                                         [&p](const PendingDecision& q) { return q.job == p.job; });
        if (count != 1) fail(fmt::format("{}, stopped by a rule, has {} outcomes", p.job, count));
      }
      // Headroom: GPUs held at the end of the cycle (what stays, and what starts).
      std::set<std::pair<std::string, int32_t>> occupied;
      const Snapshot staying = WithVictimsEvicted(snapshot, d);
      for (const Job& job : staying.jobs) {
        if (preempted.count(job.id)) continue;
        for (const ReplicaPlacement& p : job.placements) {
          for (int32_t g : p.gpus) occupied.insert({p.node, g});
        }
      }
      for (const StartDecision& s : d.starts) {
        for (const ReplicaPlacement& p : s.placements) {
          for (int32_t g : p.gpus) occupied.insert({p.node, g});
        }
      }
      for (const HeadroomRule& rule : policy.headroom) {
        bool low_started = false;
        std::set<std::string> urgent_units;
        for (const StartDecision& s : d.starts) {
          const Job* job = world.job(s.job);
          for (const ReplicaPlacement& p : s.placements) {
            const Node* node = world.node(p.node);
            if (job == nullptr || node == nullptr || p.gpus.empty() ||
                node->gpu_model != rule.gpu_model) {
              continue;
            }
            if (job->priority < rule.min_priority) {
              low_started = true;
              continue;
            }
            if (node->spot) continue;
            for (int32_t g : p.gpus) {
              int32_t island = 0;
              for (const Gpu& gpu : node->gpus) island = gpu.index == g ? gpu.island : island;
              urgent_units.insert(
                  rule.shape == HeadroomShape::kGpus    ? fmt::format("{}/{}", p.node, g)
                  : rule.shape == HeadroomShape::kNodes ? p.node
                                                        : fmt::format("{}/i{}", p.node, island));
            }
          }
        }
        const int64_t free_end = FreeUnits(snapshot, rule, occupied);
        if (low_started && free_end + static_cast<int64_t>(urgent_units.size()) < rule.count) {
          fail(
              fmt::format("a job below priority {} ate into the {} {} of {}: {} free at the end, "
                          "{} taken by urgent starts",
                          rule.min_priority, rule.count, HeadroomShapeName(rule.shape),
                          rule.gpu_model, free_end, urgent_units.size()));
        }
        const auto report =
            std::find_if(d.headroom.begin(), d.headroom.end(), [&](const HeadroomReport& r) {
              return r.gpu_model == rule.gpu_model && r.shape == rule.shape;
            });
        if (report == d.headroom.end() || report->free != free_end) {
          fail(fmt::format("headroom report for {} {} does not say the {} free at the end",
                           rule.gpu_model, HeadroomShapeName(rule.shape), free_end));
        }
      }
      // The next cycle neither reclaims nor restores again.
      Snapshot next = snapshot;
      if (absl::Status applied = ApplyDecisions(d, next); !applied.ok()) {
        fail(fmt::format("ApplyDecisions failed: {}", applied.ToString()));
      } else if (absl::StatusOr<Decisions> d2 = Schedule(next, policy); d2.ok()) {
        for (const PreemptDecision& p : d2->preemptions) {
          if (p.for_job.empty()) {
            fail(fmt::format("the next cycle stops {} again: {}", p.job, p.reason));
          }
        }
      } else {
        fail(fmt::format("the next cycle failed: {}", d2.status().ToString()));
      }
    }
    if (!violations.empty()) {
      ++failing_seeds;
      failing_list += fmt::format(" {}", seed);
      if (failing_seeds <= kReportedSeeds) {
        std::string text;
        for (const std::string& v : violations) text += v + "\n";
        ADD_FAILURE() << text;
      }
    }
  }
  EXPECT_EQ(failing_seeds, 0) << "seeds with violations:" << failing_list;
  std::printf(
      "%llu seeds: %lld spot reclaims, %lld headroom restorations, %lld pending for "
      "headroom, %lld replicas started on spot nodes\n",
      static_cast<unsigned long long>(kSeeds), static_cast<long long>(reclaims),
      static_cast<long long>(restorations), static_cast<long long>(headroom_pending),
      static_cast<long long>(spot_starts));
  // Not vacuous: every feature happens on some seeds.
  EXPECT_GT(reclaims, 0);
  EXPECT_GT(restorations, 0);
  EXPECT_GT(headroom_pending, 0);
  EXPECT_GT(spot_starts, 0);
}

TEST(PropertyTest, FixedPointOnRandomSnapshots) {
  int failing = 0;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    Snapshot snapshot = GenerateRandomSnapshot(seed);
    absl::StatusOr<Decisions> a = Schedule(snapshot, Policy{});
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(ApplyStarts(*a, snapshot).ok());
    absl::StatusOr<Decisions> b = Schedule(snapshot, Policy{});
    ASSERT_TRUE(b.ok()) << b.status();
    if (!b->starts.empty() && ++failing <= 2) {
      ADD_FAILURE() << "second cycle started more:\n" << DecisionsToText(*b);
    }
  }
  EXPECT_EQ(failing, 0);
}

}  // namespace
}  // namespace gpupool
